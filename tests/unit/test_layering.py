"""Imports point one way (ARCHITECTURE.md): read from the source, every import, lazy ones too.

- core/ never imports a backend module by name (backends arrive through the plugin host);
- inside the OpenCL backend the layers are codegen -> devices -> runtime -> launch ->
  fusion -> copies -> the kernel families (elementwise, reduce, linalg, ...: the modules with a
  table()), and a lower layer never imports a higher one (the runtime calls up through
  callbacks that fusion.py and copies.py install).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPENCL = ROOT / "backends" / "opencl"
LAYERS = ["codegen", "devices", "runtime", "launch", "fusion", "copies"]


def _imports(path: Path) -> set:
    """Module names imported anywhere in a file (relative ones as '.name')."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            if node.level and not node.module:
                names.update("." + a.name for a in node.names)
    return names


def test_core_never_imports_a_backend_by_name():
    offenders = {}
    for path in (ROOT / "core").rglob("*.py"):
        bad = {n for n in _imports(path)
               if n.startswith(("ember.backends.", "cupy", "pyopencl")) or
               ("backends" in n.split(".") and n.startswith("."))}
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert offenders == {}


def test_opencl_layers_import_downwards_only():
    for k, layer in enumerate(LAYERS):
        # above: the later layers, and every kernel family (a module with a table());
        # helpers that stand aside (compat, tuning, caches) may be imported by anyone
        above = {"." + name for name in LAYERS[k + 1:]} | {
            "." + p.stem for p in OPENCL.glob("*.py") if "\ndef table(" in p.read_text()}
        found = _imports(OPENCL / f"{layer}.py") & above
        assert found == set(), f"opencl/{layer}.py imports {sorted(found)} from above it"
