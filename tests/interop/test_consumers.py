"""scikit-learn (array_api_dispatch) and SciPy (SCIPY_ARRAY_API=1) on ember tensors match
their NumPy results, on cpu and opencl:0 (the checks themselves are in consumers.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("consumers.py")


def test_sklearn_and_scipy_match_numpy(device):
    # a child process: SciPy fixes SCIPY_ARRAY_API when it is first imported
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    done = subprocess.run([sys.executable, "-W", "error", str(SCRIPT), device], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok:"), done.stdout
