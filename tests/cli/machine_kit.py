"""Throw-away machines for the doctor's fix tests: venvs whose packages are hard links to
this environment's installed files (pip can uninstall them without touching the
originals), third-party plugin distributions written as pip leaves them, and a local
wheelhouse so that the fix commands the doctor prints run offline with pip as printed."""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
SOURCE_PARTS = ("pyproject.toml", "README.md", "core", "backends", "tools", "compat_matrix", "cli",
                "plugins")
IGNORED = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "*.pyc")
PLUGINS = ("ember-opencl", "ember-cuda12", "ember-cuda13")


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def with_dependencies(names) -> dict:
    """{key: Distribution} of `names` and what they require, from this environment."""
    found: dict = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if _key(name) in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[_key(name)] = dist
        for raw in dist.requires or ():
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def link_distribution(dist, site: Path, skip=()) -> None:
    """Hard-link the files of an installed distribution into another site-packages, its
    compiled bytecode too (same interpreter, same source mtimes: valid there), so that each
    machine's first `python` does not compile NumPy, pyopencl, ... again (seconds per
    machine; Python replaces a stale .pyc by a new file, never writing through a link)."""
    root = Path(dist.locate_file(""))
    rels = set()
    for entry in dist.files or ():
        rel = str(entry)
        if rel.startswith("..") or any(rel.startswith(s) for s in skip):
            continue
        rels.add(rel)
        if rel.endswith(".py"):
            # bytecode Python wrote here on import, which RECORD does not list when pip
            # installed with --no-compile (the README's test command)
            rels.add(os.path.relpath(importlib.util.cache_from_source(str(root / rel)), root))
    for rel in rels:
        src, dst = root / rel, site / rel
        if not src.is_file() or dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)


def write_distribution(site: Path, name: str, version: str, files: dict, requires=(),
                       entry_points: str = "") -> None:
    """A distribution as pip leaves it: its files and a dist-info with a RECORD (so that
    `pip uninstall` removes it)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    contents = {f"{info.name}/METADATA": meta, f"{info.name}/INSTALLER": "pip\n",
                **{k: textwrap.dedent(v) for k, v in files.items()}}
    if entry_points:
        contents[f"{info.name}/entry_points.txt"] = textwrap.dedent(entry_points)
    for rel, text in contents.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in [*contents,
                                                                   f"{info.name}/RECORD"]))


def build_wheel(wheelhouse: Path, name: str, version: str, files: dict, requires=()) -> Path:
    """A pure-Python wheel of the given files."""
    dist = f"{name.replace('-', '_')}-{version}"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    contents = {**{k: textwrap.dedent(v) for k, v in files.items()},
                f"{dist}.dist-info/METADATA": meta,
                f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: ember-tests\n"
                                           "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    path = wheelhouse / f"{dist}-py3-none-any.whl"
    _zip(path, {k: v.encode() for k, v in contents.items()}, f"{dist}.dist-info/RECORD")
    return path


def repack(dist_name: str, wheelhouse: Path) -> Path:
    """A wheel of an installed distribution, from the files its RECORD lists (the
    wheelhouse of the offline fixes: pip installs it as if from the index)."""
    dist = metadata.distribution(dist_name)
    root = Path(dist.locate_file(""))
    info = next(f for f in dist.files if str(f).endswith(".dist-info/METADATA")).parent
    from packaging import tags
    supported = {str(t) for t in tags.sys_tags()}
    found = re.findall(r"^Tag: (\S+)", (root / info / "WHEEL").read_text(), re.M)
    tag = next((t for t in found if t in supported), found[0])
    path = wheelhouse / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}.whl"
    if path.exists():
        return path
    data = {}
    for entry in dist.files:
        rel = str(entry)
        if (rel.startswith("..") or "__pycache__" in rel or rel.endswith(".pyc")
                or rel.split("/")[-1] in ("RECORD", "INSTALLER", "REQUESTED",
                                          "direct_url.json")):
            continue
        if (root / rel).is_file():
            data[rel] = root / rel
    _zip(path, data, f"{info}/RECORD")
    return path


def _zip(path: Path, entries: dict, record: str) -> None:
    lines = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for rel, content in entries.items():
            blob = content.read_bytes() if isinstance(content, Path) else content
            digest = hashlib.sha256(blob).digest()
            b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            lines.append(f"{rel},sha256={b64},{len(blob)}")
            zf.writestr(rel, blob)
        lines.append(f"{record},,")
        zf.writestr(record, "\n".join(lines) + "\n")


class Machine:
    """A venv made for one scenario; `run` and `doctor` execute in it."""

    def __init__(self, path: Path, env: dict):
        self.path, self.env = path, env
        self.python = path / "bin" / "python"
        self.site = Path(subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True, timeout=60).stdout.strip())

    def link(self, dists, skip=()) -> None:
        for dist in dists:
            link_distribution(dist, self.site, skip)

    def shell(self, command: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(command, shell=True, capture_output=True, text=True, env=self.env,
                              timeout=timeout, cwd=self.path, check=False)

    def doctor(self, *args: str, timeout: float = 120) -> tuple[int, dict, float]:
        import time
        start = time.perf_counter()
        done = subprocess.run([str(self.python), "-m", "ember.tools.cli", "doctor", "--json",
                               *args], capture_output=True, text=True, env=self.env,
                              timeout=timeout, cwd=self.path, check=False)
        seconds = time.perf_counter() - start
        try:
            report = json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"doctor --json wrote no JSON:\n{done.stdout}\n"
                                 f"{done.stderr}") from None
        assert report["exit_code"] == done.returncode, done.stderr
        return done.returncode, report, seconds


# Where caches live is not part of a machine's set-up: the suite's own folders
# (tests/conftest.py), so a machine neither writes ~/.cache/pocl or ~/.cache/ember nor
# compiles again the OpenCL programs the previous machine compiled
KEPT = ("POCL_CACHE_DIR", "EMBER_CACHE_DIR")


def clean_env(wheelhouse: Path, bin_dir: Path) -> dict:
    """This environment's variables less what would leak into a machine, plus pip set up
    to install offline from the wheelhouse, without build isolation."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("EMBER_", "PIP_", "PYTHON", "OCL_", "POCL_", "CUDA_", "VIRTUAL_"))
           or k in KEPT}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PIP_CONFIG_FILE=os.devnull,
               PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse), PIP_NO_BUILD_ISOLATION="0",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_NO_WARN_SCRIPT_LOCATION="1")
    return env


def make_venv(path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)


def copy_source(dest: Path) -> Path:
    """The parts of this source tree a pip install of ember and its plugins reads."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in SOURCE_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=IGNORED)
        elif src.exists():
            shutil.copy2(src, dest / part)
    return dest


def scripts_dir() -> str:
    return sysconfig.get_path("scripts")
