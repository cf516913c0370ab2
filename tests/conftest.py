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
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

CACHE_ROOT = Path(os.environ.get("EMBER_TEST_CACHE_DIR") or
                  Path(__file__).resolve().parents[1] / ".ember-test-cache")
CACHES = {"POCL_CACHE_DIR": CACHE_ROOT / "pocl", "EMBER_CACHE_DIR": CACHE_ROOT / "ember"}

for _var, _path in CACHES.items():
    _path.mkdir(parents=True, exist_ok=True)
    os.environ[_var] = str(_path)

# Bytecode: with PYTHONDONTWRITEBYTECODE set (some shells and containers set it), no .pyc is
# kept for ember's own sources nor for pytest's rewritten test modules, and every xdist
# worker compiles and rewrites all of them again on every run (~6 s of CPU per worker).
# The suite keeps them (`__pycache__/`, gitignored), here and in the subprocesses the tests
# start; installed packages already have theirs.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


# --- running in parallel (pytest-xdist, `-n auto --dist loadgroup` in pyproject.toml) ----------
# Tests run one by one on any worker, except where a module-scoped (or class-, package-)
# fixture builds something costly once for its module (a venv, an exported model, a
# wheelhouse): those tests share one worker (an xdist_group per module), or the fixture
# would be built once per worker.  Cheap module-scoped fixtures are named here.
CHEAP_WIDE_FIXTURES = {
    "device",                   # tests/interop: a device name, nothing built
    "strict_device",            # tests/unit/test_array_api_strict.py: a backend object registered
}


def _shares_a_costly_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs[-1].scope in ("module", "class", "package")
               for name, defs in info.name2fixturedefs.items()
               if defs and name not in CHEAP_WIDE_FIXTURES)



class _GroupSuffix:
    """pytest-xdist's loadgroup sends a test to its group's worker by the suffix `@<group>`
    its node id gets on the worker; xdist (3.8) writes it into `item._nodeid`, which pytest
    9.2 no longer reads (node ids live in `item._id`): without this, every group was split
    over the workers and each built its module's costly fixture again.  Runs after xdist's
    own hook (trylast) and only where that one did not take."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if not getattr(config.option, "loadgroup", False):
            return
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            if not names:
                continue
            wanted = f"{_plain_id(item)}@{'_'.join(names)}"
            if item.nodeid != wanted:
                _rename(item, wanted)


def pytest_configure(config):
    config.pluginmanager.register(_GroupSuffix(), "ember-xdist-group-suffix")


def _plain_id(item) -> str:
    nodeid = item.nodeid
    last = nodeid.rsplit("::", 1)[-1]
    return nodeid[:len(nodeid) - len(last)] + last.split("@", 1)[0]


def _rename(item, nodeid: str) -> None:
    if hasattr(item, "_id"):                    # pytest >= 9.2
        from _pytest.nodeid import NodeId
        item._id = NodeId.parse(nodeid)
    else:
        item._nodeid = nodeid
    assert item.nodeid == nodeid, (item.nodeid, nodeid)


# --- costly device cases: a stable sample, the full set with --full -------------------------
# A test marked `sampled` runs when zlib.crc32 of its node id falls in 1 of SAMPLE_EVERY
# (`sampled(every=n)`: 1 of n; the same tests on every machine and run); the others carry
# the marker `full` and run only with `--full` (EMBER_TEST_FULL=1), or when `-m` names
# `full`.  A test marked `full` in its file (a costly end-to-end path whose parts default
# tests cover: the marker's place says which) runs under the same condition.
SAMPLE_EVERY = 4


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="run every costly device case, not only the stable sample of the "
                          "tests marked `sampled` (also EMBER_TEST_FULL=1)")


def _full(config) -> bool:
    return (config.getoption("--full") or os.environ.get("EMBER_TEST_FULL", "") == "1"
            or "full" in (config.getoption("markexpr") or ""))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    full = _full(config)
    kept, dropped = [], []
    for item in items:
        if _shares_a_costly_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        sampled = item.get_closest_marker("sampled")
        if sampled is not None and \
                zlib.crc32(item.nodeid.encode()) % sampled.kwargs.get("every", SAMPLE_EVERY):
            item.add_marker(pytest.mark.full)
        if item.get_closest_marker("full") is not None and not full:
            dropped.append(item)
            continue
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # long tests first, so that the workers finish together: a test of several seconds
    # scheduled last keeps one worker busy while the other idles (the order is the same on
    # every worker, as xdist requires: a stable sort of the collection order)
    items[:] = sorted(kept, key=lambda item: not _long(item))


# Files late in the collection order whose tests take seconds each (subprocesses, venvs,
# a whole conformance run): started first.  Tests in an xdist group (a costly module
# fixture) and tests marked `slow` are started first too.
LATE_AND_LONG = ("tests/plugins/test_torch_backend.py", "tests/plugins/test_cupy_plugins.py",
                 "tests/plugins/test_third_party.py", "tests/interop/test_consumers.py",
                 "tests/reliability/test_caches.py")


def _long(item) -> bool:
    return (item.get_closest_marker("xdist_group") is not None
            or item.get_closest_marker("slow") is not None
            or item.nodeid.startswith(LATE_AND_LONG))


# --- PoCL's one-time builds --------------------------------------------------------------
WARM_PROBE = ("from ember import plugins\n"
              "backend = plugins.find_backend('opencl')\n"
              "print(backend is not None and plugins._probe(backend).available)\n")


@pytest.fixture(scope="session")
def warm_opencl_probe():
    """The OpenCL backend's probe, run once in a child process before the tests that time
    it: with an empty PoCL cache (a new machine) its first run builds PoCL's own kernels,
    seconds on a busy machine, past the doctor's 5 s probe deadline; the tests that use
    this are about diagnoses and fixes, not about a cold driver.  The child fills the
    suite's PoCL cache (CACHES), which every later probe, here or in a child, reads."""
    subprocess.run([sys.executable, "-c", WARM_PROBE], capture_output=True, text=True,
                   timeout=300, check=False)


# --- every test starts from its own fixed seed ---------------------------------------------
@pytest.fixture(autouse=True)
def _fixed_seed(request):
    """ember's, NumPy's and Python's global generators are seeded from the test's node id
    before it runs: a test that draws random data sees the same numbers on every run, on
    any worker, in any order, so a tolerance it misses fails every time and not one run in
    a hundred (CI run 47: an unseeded randn near zero missed rtol=1e-6 by one ulp)."""
    import random

    import ember
    import numpy as np

    seed = zlib.crc32(_plain_id(request.node).encode())
    random.seed(seed)
    np.random.seed(seed)
    ember.manual_seed(seed)
