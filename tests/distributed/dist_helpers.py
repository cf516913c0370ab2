"""Helpers of the distributed tests: run the jobs of jobs.py on N local processes, bounded in
time and cleaned up on failure."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

JOBS = str(Path(__file__).with_name("jobs.py"))


def _env(extra: dict | None) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("EMBER_DISTRIBUTED_DEBUG", None)
    env.update(extra or {})
    return env


def run_job(cmd: list[str], timeout: float = 90, env: dict | None = None):
    """Run cmd in its own session; on timeout kill the whole session and fail."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(env), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not end within {timeout} s\n{out}\n{err}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)     # nothing of the job outlives the test
        except (ProcessLookupError, PermissionError):
            pass
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def mpiexec() -> str:
    from ember.tools.run import find_mpiexec
    found = find_mpiexec()
    if found is None:
        pytest.fail("no mpiexec: the distributed tests need the ember-mpi plugin "
                    "(pip install ./plugins/ember-mpi, which brings MPICH)")
    return found


def job(n: int, *args: str, timeout: float = 90, env: dict | None = None):
    """`mpiexec -n N python jobs.py ARGS`."""
    return run_job([mpiexec(), "-n", str(n), sys.executable, JOBS, *args], timeout, env)


def ember_run(n: int, *args: str, timeout: float = 90, env: dict | None = None):
    """`ember run -n N ARGS` (through the CLI module, as the console script does)."""
    return run_job([sys.executable, "-m", "ember.tools.cli", "run", "-n", str(n), *args],
                   timeout, env)
