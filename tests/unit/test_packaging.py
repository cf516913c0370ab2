"""The folder tree is the package: every package folder is listed in pyproject, and a
regular wheel carries the code, the data set and the compat matrix."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:                      # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
MAPPING = {"core": "ember", "backends": "ember.backends", "tools": "ember.tools",
           "compat_matrix": "ember.compat_matrix", "cli": "ember_cli"}


def _config():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed():
    listed = set(_config()["packages"])
    found = set()
    for folder, package in MAPPING.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found - listed == set(), "package folders missing from pyproject"
    assert listed - found == set(), "pyproject lists packages with no folder"


def test_package_dirs_map_the_tree():
    dirs = _config()["package-dir"]
    assert {v: k for k, v in dirs.items()} == MAPPING


@pytest.mark.slow
def test_wheel_contains_code_and_data(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path), str(ROOT)], check=True,
                   capture_output=True)
    wheel = next(tmp_path.glob("ember-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("ember/__init__.py", "ember/dispatch.py", "ember/backends/array_api.py",
                     "ember/backends/cpu/__init__.py", "ember/tools/cli.py",
                     "ember/data/digits.npz", "ember/data/README.md",
                     "ember/testing/cases/__init__.py", "ember_cli/__init__.py",
                     "ember/compat_matrix/codes/cuda_runtime.json",
                     # type checkers read ember's hints only with the PEP 561 marker
                     "ember/py.typed", "ember/_tensor_methods.pyi",
                     "ember/__main__.py"):
        assert required in names, required
    assert any(n.startswith("ember/compat_matrix/") and n.endswith(".toml") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[ember.plugins]" in text and "cpu = ember.backends.cpu" in text
    # the console script enters through ember_cli: `ember compat explain` without the
    # tensor library (cli/__init__.py)
    assert "ember = ember_cli:console" in text
    # the metadata's version is core/_version.py's (pyproject: dynamic version)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    from ember._version import __version__
    assert f"Version: {__version__}\n" in zipfile.ZipFile(wheel).read(metadata).decode()
    # installed, the marker is beside the package's modules, where type checkers look
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--target", str(target), str(wheel)], check=True, capture_output=True)
    assert (target / "ember" / "py.typed").is_file()
    assert (target / "ember" / "__init__.py").is_file()
