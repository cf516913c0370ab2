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


@functools.cache
def _files() -> tuple:
    tomllib = _tomllib()
    found = []
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            found.append((entry.name, _plain(tomllib.loads(entry.read_text(encoding="utf-8")))))
    return tuple(found)


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
