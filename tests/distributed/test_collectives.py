"""Every collective on cpu and opencl:0 tensors, on 2 and 4 processes, against NumPy."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from dist_helpers import JOBS, job, run_job


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_matches_numpy(n):
    done = job(n, "collectives", "cpu", "opencl:0")
    assert done.returncode == 0, done.stderr
    checked = dict(re.findall(r"rank (\d+) checked (\d+)", done.stdout))
    assert sorted(checked) == [str(r) for r in range(n)], done.stdout
    assert all(int(count) > 50 for count in checked.values()), checked


def test_one_process_without_a_launcher():
    done = run_job([sys.executable, JOBS, "single"], timeout=60)
    assert done.returncode == 0, done.stderr
    assert "single ok" in done.stdout


def test_import_starts_no_mpi():
    code = ("import sys, ember.distributed, ember.nn.parallel, ember.utils.data; "
            "print('mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_the_plugin_provides_mpi():
    from ember.distributed.group import comm_backends
    backends = comm_backends()
    assert "mpi" in backends and backends["mpi"].probe().available
