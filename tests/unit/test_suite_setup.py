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


# --- the harness's scheduling and markers, run on a small suite of its own --------------
MINI = '''
import os
import pytest

@pytest.fixture(scope="module")
def costly():
    return os.environ.get("PYTEST_XDIST_WORKER", "main")

@pytest.mark.parametrize("i", range(6))
def test_shared(costly, i):
    here = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["MINI_OUT"], f"shared{i}"), "w") as f:
        f.write(costly + " " + here)

@pytest.mark.parametrize("i", range(4))
def test_free(i):
    pass

@pytest.mark.full
def test_end_to_end():
    pass

@pytest.mark.sampled(every=1)
@pytest.mark.parametrize("i", range(3))
def test_every_one(i):
    pass
'''


def _mini_suite(tmp_path, *args):
    """tests/conftest.py beside a small test file, run by pytest with the project's options
    (`-n`, `--dist loadgroup`) in a child process."""
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "test_mini.py").write_text(MINI)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: x\n    sampled: x\n"
                                         "    full: x\n")
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    env = {**os.environ, "MINI_OUT": str(out), "EMBER_TEST_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("EMBER_TEST_FULL", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-rN", *args], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env)
    return done, out


def test_tests_sharing_a_costly_module_fixture_run_on_one_worker(tmp_path):
    """The xdist group the harness gives them holds under pytest-xdist's loadgroup (pytest
    9.2 stopped reading the node id xdist 3.8 rewrites: the group was split over the
    workers, and each built the fixture again)."""
    done, out = _mini_suite(tmp_path, "-n", "2", "--dist", "loadgroup")
    assert done.returncode == 0, done.stdout + done.stderr
    seen = {f.read_text() for f in out.iterdir()}
    assert len(list(out.iterdir())) == 6
    assert len(seen) == 1, seen                    # one worker ran them all, one fixture
    built_on, ran_on = seen.pop().split()
    assert built_on == ran_on and ran_on.startswith("gw")


def test_a_test_marked_full_runs_only_with_full(tmp_path):
    # sampled(every=1) keeps all three (the default 1-in-4 would drop two of them)
    done, _ = _mini_suite(tmp_path, "-n", "0")
    assert done.returncode == 0 and "13 passed, 1 deselected" in done.stdout, done.stdout
    done, _ = _mini_suite(tmp_path, "-n", "0", "--full")
    assert done.returncode == 0 and "14 passed" in done.stdout, done.stdout
