"""Suite-wide setup: nothing the tests run writes into the user's own cache directories.

PoCL's kernel cache (POCL_CACHE_DIR) and ember's (EMBER_CACHE_DIR: OpenCL tuning, program
binaries) point at a folder the suite owns, `<repo>/.ember-test-cache/` (gitignored), kept
between runs: a second run finds its OpenCL programs built (warm), a fresh clone builds
them (cold), and ~/.cache is never read or written.  EMBER_TEST_CACHE_DIR names another
folder (CI or a cold measurement: an empty one).  Both are set when this file is imported,
before anything makes an OpenCL context (PoCL reads POCL_CACHE_DIR once, at its start);
subprocesses and pytest-xdist workers inherit them.
"""
from __future__ import annotations

import os
from pathlib import Path

CACHE_ROOT = Path(os.environ.get("EMBER_TEST_CACHE_DIR") or
                  Path(__file__).resolve().parents[1] / ".ember-test-cache")
CACHES = {"POCL_CACHE_DIR": CACHE_ROOT / "pocl", "EMBER_CACHE_DIR": CACHE_ROOT / "ember"}

for _var, _path in CACHES.items():
    _path.mkdir(parents=True, exist_ok=True)
    os.environ[_var] = str(_path)
