"""Suite-wide setup: nothing the tests run writes into the user's own cache directory."""
from __future__ import annotations

import os
import shutil
import tempfile

_CACHE = None


def pytest_configure(config):
    global _CACHE
    if "EMBER_CACHE_DIR" not in os.environ:     # the OpenCL tuning cache (tuning.py)
        _CACHE = tempfile.mkdtemp(prefix="ember-test-cache-")
        os.environ["EMBER_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config):
    if _CACHE is not None:
        os.environ.pop("EMBER_CACHE_DIR", None)
        shutil.rmtree(_CACHE, ignore_errors=True)
