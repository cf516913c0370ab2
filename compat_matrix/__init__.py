"""The compatibility matrix: dated facts and rules with their sources, shipped as TOML files."""
from __future__ import annotations

import copy
import datetime
import functools
import json
from importlib import resources

MATRIX_SCHEMA = "matrix.schema.json"
REPORT_SCHEMA = "doctor-report.schema.json"
KINDS = ("rule", "plugin", "plugin_api", "error")


def _tomllib():
    try:
        import tomllib
    except ModuleNotFoundError:         # Python 3.10: the same parser, from PyPI
        import tomli as tomllib
    return tomllib


def _plain(value):
    """TOML dates become ISO strings, so files and plugin data have one JSON-able shape."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def _cache_path(entries) -> str | None:
    """Where the parsed files are kept as JSON, named by the files' sizes and times (a
    changed file is parsed again): reading TOML is most of `ember compat explain`'s time,
    JSON a tenth of it.  In ember's cache folder ($EMBER_CACHE_DIR, else
    $XDG_CACHE_HOME/ember, else ~/.cache/ember, as the OpenCL caches); None when there is
    none (EMBER_CACHE_DIR=off, or EMBER_NO_CACHE set)."""
    import hashlib
    import os
    configured = os.environ.get("EMBER_CACHE_DIR", "").strip()
    if os.environ.get("EMBER_NO_CACHE") or configured.lower() == "off":
        return None
    stamp = hashlib.sha1()
    for entry in entries:
        st = os.stat(entry)
        stamp.update(f"{entry}:{st.st_size}:{st.st_mtime_ns};".encode())
    root = configured or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "ember")
    return os.path.join(root, f"compat-matrix-{stamp.hexdigest()[:20]}.json")


@functools.cache
def _files() -> tuple:
    return _read_files()


def _read_files() -> tuple:
    """((file name, its data), ...) of the shipped TOML files, from the JSON cache when it
    is there and readable, otherwise parsed (and the cache written)."""
    import os
    entries = sorted((e for e in resources.files(__name__).iterdir()
                      if e.name.endswith(".toml")), key=lambda e: e.name)
    try:
        cache = _cache_path(entries)
    except (OSError, TypeError):        # not plain files (a zip import): no cache
        cache = None
    if cache:
        try:
            with open(cache, encoding="utf-8") as fh:
                return tuple((name, data) for name, data in json.load(fh))
        except (OSError, ValueError):
            pass
    tomllib = _tomllib()
    found = tuple((e.name, _plain(tomllib.loads(e.read_text(encoding="utf-8"))))
                  for e in entries)
    if cache:
        try:
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            tmp = f"{cache}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(found, fh)
            os.replace(tmp, cache)
            for old in os.listdir(os.path.dirname(cache)):      # earlier files' caches
                if old.startswith("compat-matrix-") and old != os.path.basename(cache):
                    os.remove(os.path.join(os.path.dirname(cache), old))
        except OSError:
            pass
    return found


def files() -> dict[str, dict]:
    """Every matrix file shipped with ember, by file name, as plain data."""
    return {name: copy.deepcopy(data) for name, data in _files()}


def merge(*parts: dict) -> dict:
    """One matrix from several files (or plugins' ember_compat data): each kind's lists joined."""
    merged: dict[str, list] = {kind: [] for kind in KINDS}
    for part in parts:
        part = _plain(part)
        for kind in KINDS:
            merged[kind].extend(part.get(kind, ()))
    return merged


def load() -> dict:
    """The built-in matrix: every file merged."""
    return merge(*files().values())


def schema(name: str = MATRIX_SCHEMA) -> dict:
    """One of the JSON schemas shipped here (the matrix files, or `ember doctor --json`)."""
    return json.loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))
