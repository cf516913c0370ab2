"""The public API does not change by accident: every public name of ember.*, ember.nn.*,
nn.functional, linalg, special, optim and Tensor, with its signature, against a snapshot.

A name the snapshot holds may not disappear or change its signature; new names may come
(ember grows toward torch's surface).  A deliberate change or removal regenerates the
snapshot, `EMBER_PUBLIC_API=write python -m pytest tests/unit/test_public_api.py`, in the
commit that makes it.
"""
from __future__ import annotations

import inspect
import json
import os
import re
import types
from pathlib import Path

import ember

SNAPSHOT = Path(__file__).parent / "data" / "public_api.json"
# the namespaces a PyTorch program reaches (import ember as torch): torch.X, torch.nn.X, ...
NAMESPACES = ("ember", "ember.nn", "ember.nn.functional", "ember.nn.init", "ember.linalg",
              "ember.special", "ember.optim", "ember.autograd", "ember.utils.data")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _signature(obj) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "-"
    # an annotation reads 'Tensor' or Tensor as its module has `from __future__ import
    # annotations` or not: the same API either way
    return _ADDRESS.sub("", text).replace("'", "")


def _describe(obj) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, property):
        return "property"
    if inspect.isclass(obj):
        return "class" + _signature(obj)
    if callable(obj):
        return "function" + _signature(obj)
    return "value:" + type(obj).__name__


def _public(namespace) -> dict:
    names = set(getattr(namespace, "__all__", ())) | {
        n for n in dir(namespace) if not n.startswith("_")}
    if inspect.isclass(namespace):     # operators and protocols: x + y, x[i], x.__dlpack__()
        names |= {n for n in vars(namespace) if n.startswith("__") and n.endswith("__")
                  and n not in ("__dict__", "__doc__", "__module__", "__slots__",
                                "__weakref__", "__annotations__", "__firstlineno__",
                                "__static_attributes__")}
    out = {}
    for name in sorted(names):
        obj = inspect.getattr_static(namespace, name) if inspect.isclass(namespace) \
            else getattr(namespace, name)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        kind = _describe(obj)
        if kind in ("module", "value:_Feature"):
            continue     # submodules are layout, not API; `annotations` is a leak, not API
        out[name] = kind
    return out


def surface() -> dict:
    import importlib
    out = {ns: _public(importlib.import_module(ns)) for ns in NAMESPACES}
    out["ember.Tensor"] = _public(ember.Tensor)
    out["ember.__all__"] = sorted(set(ember.__all__))
    return out


def test_public_api_is_the_snapshot():
    now = surface()
    if os.environ.get("EMBER_PUBLIC_API") == "write":
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    want = json.loads(SNAPSHOT.read_text())
    problems = []
    for ns in sorted(set(want) | set(now)):
        a, b = want.get(ns, {}), now.get(ns, {})
        if isinstance(a, list):
            a, b = dict.fromkeys(a, ""), dict.fromkeys(b, "")
        for name in sorted(a):
            if a[name] != b.get(name):
                problems.append(f"{ns}.{name}: snapshot {a[name]!r}, now {b.get(name)!r}")
    assert problems == [], "\n".join(problems)
