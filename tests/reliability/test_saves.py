"""Saves under kill -9, a full disk and umasks (issue 20): no litter, no loss, right modes."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import zlib

import ember
import pytest
from ember.errors import CheckpointError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="kills forked writers")


def _leftovers(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


_KILLER = textwrap.dedent("""
    import os, random, signal, sys, time
    import numpy as np
    import ember
    target, seed, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    weights = ember.tensor(np.arange(1 << 20, dtype=np.float32))      # 4 MB per save
    ember.save({"step": -1, "w": weights}, target)
    rng = random.Random(seed)
    landed = 0                 # kills that left a temporary file (the next save removes it)
    for _ in range(rounds):
        pid = os.fork()        # this process has no other thread: forking is safe
        if pid == 0:           # the writer: saves until killed
            try:
                for step in range(10**6):
                    ember.save({"step": step, "w": weights}, target)
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.01, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        landed += any(n.endswith(".tmp") for n in os.listdir(os.path.dirname(target)))
        back = ember.load(target)                # never half-written
        assert back["w"].shape == (1 << 20,) and back["step"] >= -1
    print(landed)
""")


def test_kill_9_during_saves_leaves_a_loadable_file_and_no_litter(tmp_path):
    target = tmp_path / "ckpt"
    out = subprocess.run([sys.executable, "-c", _KILLER, str(target),
                          str(zlib.crc32(b"kill during save")), "12"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 0                           # some kills landed mid-write
    ember.save({"step": "after"}, target)                # removes the dead writers' files
    assert _leftovers(tmp_path) == []
    assert ember.load(target)["step"] == "after"


def test_a_live_writers_temporary_file_is_kept(tmp_path):
    target = tmp_path / "ckpt"
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as alive:
        try:
            mine = tmp_path / f".ckpt.{alive.pid}-0123abcd.tmp"     # as if mid-save
            dead = tmp_path / ".ckpt.999999999-0123abcd.tmp"
            other = tmp_path / ".other.999999999-0123abcd.tmp"        # another target's
            for p in (mine, dead, other):
                p.write_bytes(b"partial")
            ember.save({"x": 1}, target)
            assert _leftovers(tmp_path) == sorted([mine.name, other.name])
        finally:
            alive.kill()


def test_modes_follow_the_umask_or_the_replaced_file(tmp_path):
    old = os.umask(0o027)
    try:
        ember.save({"x": 1}, tmp_path / "new")
        assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o640
        (tmp_path / "kept").write_bytes(b"")
        os.chmod(tmp_path / "kept", 0o604)
        ember.save({"x": 1}, tmp_path / "kept")
        assert stat.S_IMODE(os.stat(tmp_path / "kept").st_mode) == 0o604
    finally:
        os.umask(old)


_FULL_DISK = textwrap.dedent("""
    import os, resource, signal, sys
    import ember
    from ember.errors import CheckpointError
    target = sys.argv[1]
    ember.save({"epoch": 1}, target)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    try:
        ember.save({"epoch": 2, "w": ember.zeros(100000)}, target)
    except CheckpointError as exc:
        print(exc)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE semantics")
def test_a_full_disk_is_a_checkpoint_error_with_the_size(tmp_path):
    target = tmp_path / "ckpt"
    out = subprocess.run([sys.executable, "-c", _FULL_DISK, str(target)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"could not write {target}: File too large" in out.stdout
    assert "the checkpoint needs 400" in out.stdout and "bytes are free" in out.stdout
    assert ember.load(target) == {"epoch": 1} and _leftovers(tmp_path) == []


def test_a_full_device_behind_a_file_object():
    with open("/dev/full", "wb", buffering=0) as f:
        with pytest.raises(CheckpointError, match="could not write /dev/full: No space left"):
            ember.save(ember.zeros(1000), f)
