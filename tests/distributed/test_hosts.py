"""Two "hosts" on this machine: two network namespaces joined by a veth pair, each with its
own hostname, and MPICH's launcher across them from a host file (docs/fsdp.md,
"More than one host").  FSDP trains bit for bit like one process with its traffic over
the veth (UCX's TCP transport: its shared-memory transports would bypass the network).

MPICH starts its proxy on another host with ssh by default; here `-launcher rsh
-launcher-exec` names a script that enters the host's namespace instead (no ssh).  It needs
the privilege to make namespaces (CAP_SYS_ADMIN, CAP_NET_ADMIN): where `ip netns add` is
refused, the test is skipped with the reason."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dist_helpers import mpiexec, run_job

JOBS = str(Path(__file__).with_name("fsdp_jobs.py"))

LAUNCHER = """#!/bin/sh
# MPICH's rsh launcher runs: launcher HOST 'COMMAND'; HOST is the address of a namespace
host="$1"; shift
case "$host" in
{cases}
  *) echo "launcher: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c "hostname $name; $*"
"""


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


def _tx_bytes(ns: str, dev: str) -> int:
    out = _ip("-n", ns, "-s", "link", "show", dev).stdout.splitlines()
    for i, line in enumerate(out):
        if line.strip().startswith("TX:"):
            return int(out[i + 1].split()[0])
    raise AssertionError(f"no TX counters for {dev} in {ns}: {out}")


@pytest.fixture
def hosts(tmp_path):
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        pytest.skip("needs iproute2's `ip` and util-linux's `unshare`")
    tag = f"{os.getpid() % 100000}{random.randrange(100)}"
    net = f"10.{random.randrange(64, 128)}.{random.randrange(256)}"
    names = [(f"emb{tag}a", f"eva{tag}", f"{net}.1", "hosta"),
             (f"emb{tag}b", f"evb{tag}", f"{net}.2", "hostb")]
    made = _ip("netns", "add", names[0][0])
    if made.returncode:
        pytest.skip(f"`ip netns add` is refused here ({made.stderr.strip()}): making "
                    "network namespaces needs CAP_SYS_ADMIN")
    try:
        steps = [("netns", "add", names[1][0]),
                 ("link", "add", names[0][1], "type", "veth", "peer", "name", names[1][1])]
        for ns, dev, addr, _ in names:
            steps += [("link", "set", dev, "netns", ns),
                      ("-n", ns, "addr", "add", f"{addr}/24", "dev", dev),
                      ("-n", ns, "link", "set", "lo", "up"),
                      ("-n", ns, "link", "set", dev, "up")]
        for step in steps:
            done = _ip(*step)
            if done.returncode:
                pytest.skip(f"`ip {' '.join(step)}` failed: {done.stderr.strip()}")
        cases = "\n".join(f"  {addr}) ns={ns}; name={host} ;;" for ns, _, addr, host in names)
        launcher = tmp_path / "launcher.sh"
        launcher.write_text(LAUNCHER.format(cases=cases))
        launcher.chmod(0o755)
        hostfile = tmp_path / "hosts"
        hostfile.write_text("".join(f"{addr}:1\n" for _, _, addr, _ in names))
        yield names, str(launcher), str(hostfile)
    finally:
        for ns, *_ in names:
            _ip("netns", "delete", ns)


def test_fsdp_across_two_network_namespaces(hosts):
    names, launcher, hostfile = hosts
    (ns_a, dev_a, _, host_a), (_, _, _, host_b) = names
    before = _tx_bytes(ns_a, dev_a)
    inner = (f"hostname {host_a}; UCX_TLS=tcp,self exec {mpiexec()} -f {hostfile} "
             f"-launcher rsh -launcher-exec {launcher} -n 2 {sys.executable} {JOBS} "
             "equivalence exact")
    done = run_job(["ip", "netns", "exec", ns_a, "unshare", "--uts", "sh", "-c", inner],
                   timeout=120)
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout
    assert f"rank 0 on {host_a}" in done.stdout and f"rank 1 on {host_b}" in done.stdout
    assert done.stdout.count("(bit for bit): equal; max loss difference 0") == 2
    sent = _tx_bytes(ns_a, dev_a) - before
    assert sent > 100_000, f"only {sent} bytes crossed the veth: the ranks did not talk " \
                           "over the network"
