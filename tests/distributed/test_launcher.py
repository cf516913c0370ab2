"""`ember run`: torchrun's variables for every rank, Ctrl-C stops the whole job, and
`ember demo --nproc 2` trains data-parallel."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

from dist_helpers import JOBS, _env, ember_run


def test_ember_run_sets_torchrun_variables():
    done = ember_run(2, JOBS, "env", timeout=60)
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):
        assert (f"rank {rank} of 2: RANK={rank} WORLD_SIZE=2 LOCAL_RANK={rank}"
                in done.stdout)


def test_ember_run_without_a_script():
    done = ember_run(2, "no-such-script.py", timeout=30)
    assert done.returncode == 2 and "no script at no-such-script.py" in done.stderr


def test_interrupt_stops_every_rank():
    cmd = [sys.executable, "-m", "ember.tools.cli", "run", "-n", "2", JOBS, "sleep"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(None), start_new_session=True)
    try:
        seen: list[str] = []
        reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")),
                                  daemon=True)
        reader.start()
        pids: list[int] = []
        deadline = time.monotonic() + 60
        while len(pids) < 2 and time.monotonic() < deadline and proc.poll() is None:
            pids = [int(p) for p in re.findall(r"sleeping (\d+)", "".join(seen))]
            time.sleep(0.05)
        assert len(pids) == 2, f"the ranks did not start: {''.join(seen)}"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        err = proc.stderr.read()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.stdout.close()
        proc.stderr.close()
    assert code == 130, err
    assert "ember run: interrupted; the job was stopped" in err
    for pid in pids:
        # a rank is gone once it no longer runs: up to 10 s on a loaded machine, and a
        # zombie (dead, not yet reaped by the container's init) counts as gone
        deadline = time.monotonic() + 10
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _running(pid):
            raise AssertionError(f"rank process {pid} outlived the interrupted job")


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:                    # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_demo_on_two_processes(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ember.tools.cli", "demo", "--nproc", "2",
                           "--epochs", "1", "--checkpoint", str(tmp_path / "demo.ckpt")],
                          capture_output=True, text=True, env=_env(None), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "data-parallel on 2 processes" in done.stdout
    assert "final test accuracy" in done.stdout
    assert (tmp_path / "demo.ckpt").exists()
