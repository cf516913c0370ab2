"""The suite's own set-up (tests/conftest.py): its caches are its own."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pocl_and_ember_caches_are_the_suites_own_folders():
    """PoCL's and ember's caches point into the suite's folder (kept between runs, so a
    second run is warm), never into ~/.cache, and a child process sees the same."""
    want = Path(os.environ.get("EMBER_TEST_CACHE_DIR") or ROOT / ".ember-test-cache").resolve()
    user = (Path.home() / ".cache").resolve()
    for var in ("POCL_CACHE_DIR", "EMBER_CACHE_DIR"):
        path = Path(os.environ[var]).resolve()
        assert path.is_dir(), var
        assert want in path.parents, (var, path)
        assert user not in path.parents and path != user, (var, path)
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ['POCL_CACHE_DIR'])"],
                           capture_output=True, text=True, timeout=60, check=True)
    assert child.stdout.strip() == os.environ["POCL_CACHE_DIR"]
