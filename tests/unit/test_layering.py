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


# --- core/: one-way layers (LAYOUT.md §2), function-local imports included -----------------

CORE = ROOT / "core"
# a module may import only its own layer or a lower one; a path names a module, or every
# module of a package ("nn/"); the longest match decides
CORE_LAYERS = {
    # ops/_util is shape arithmetic over errors alone: it sits with the ops that use it most
    0: ["errors", "dtypes", "hookspecs", "backend", "signatures", "_torch_gaps", "_nn_names",
        "_version", "_doc", "ops/_util"],
    1: ["device", "plugins", "tensor", "_format"],
    2: ["dispatch", "amp_policy", "_kernel_check", "autograd/node", "autograd/grad_mode",
        "graph/ir", "graph/capture"],
    3: ["ops/"],
    4: ["autograd/"],
    5: ["functional/", "linalg/", "fft/", "special", "signal/", "masked"],
    6: ["methods/", "legacy", "settings", "sparse", "random"],
    7: ["nn/", "optim/", "amp", "func/", "distributions/", "utils/", "distributed/",
        "multiprocessing"],
    8: ["graph/", "io/", "io", "export/", "onnx/", "array_api/", "accel", "hub", "jit", "version",
        "torch_alias", "testing/", "_torch_zip", "_safetensors", "data/", "utils/model_zoo",
        "profiler/", "distributed/checkpoint/"],
    9: ["__init__", "__main__"],  # the facade imports anything; nothing in core imports it
}
# the few deliberate upward imports: each is a lazy entry point into a consumer that a
# lower layer must offer before the consumer is imported (a protocol or the facade's lazy
# attributes), taken inside the one function that needs it
ALLOWED_UP = {
    ("methods/interop", "utils/dlpack"): "Tensor.__dlpack__ / __dlpack_device__",
    ("methods/interop", "array_api/__init__"): "Tensor.__array_namespace__",
    ("autograd/functional", "func/vmap"): "jacobian(vectorize=True) is torch's 'use vmap'",
}
# testing/ runs the public API as a user does (ember.tensor, ember.nn.functional.glu)
FACADE_USERS = ("testing/",)


def _module_name(path: Path) -> str:
    rel = path.relative_to(CORE).with_suffix("")
    return "/".join(rel.parts)


def _layer(module: str) -> int:
    best, layer = -1, None
    for level, paths in CORE_LAYERS.items():
        for p in paths:
            hit = (module.startswith(p) if p.endswith("/") else
                   module == p or module == p + "/__init__")
            if hit and len(p) > best:
                best, layer = len(p), level
    assert layer is not None, f"core/{module}.py is on no layer: add it to CORE_LAYERS"
    return layer


def _resolve(importer: str, node: ast.AST) -> list:
    """core modules (as 'pkg/mod') an import statement of `importer` names."""
    def module_of(parts):
        path = CORE.joinpath(*parts)
        if path.with_suffix(".py").is_file():
            return "/".join(parts)
        if (path / "__init__.py").is_file():
            return "/".join(parts + ["__init__"])
        return None

    out = []
    if isinstance(node, ast.Import):
        for a in node.names:
            parts = a.name.split(".")
            if parts[0] == "ember":
                found = module_of(parts[1:]) if len(parts) > 1 else "__init__"
                out += [found] if found else []
        return out
    if node.level == 0:
        if not (node.module or "").startswith("ember"):
            return out
        base = node.module.split(".")[1:]
    else:
        here = importer.split("/")[:-1]
        base = here[:len(here) - (node.level - 1)] + (node.module.split(".")
                                                       if node.module else [])
    target = module_of(base) if base else "__init__"
    for a in node.names:               # `from pkg import sub` imports the submodule
        sub = module_of(base + [a.name]) if base is not None else None
        if sub:
            out.append(sub)
        elif target:
            out.append(target)
    return out


def _core_edges():
    edges = set()
    for path in CORE.rglob("*.py"):
        importer = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(importer, node):
                    if target != importer:
                        edges.add((importer, target))
    return edges


def test_core_imports_point_down_the_layers():
    upward = sorted(f"core/{a}.py (layer {_layer(a)}) -> core/{b}.py (layer {_layer(b)})"
                    for a, b in _core_edges()
                    if _layer(b) > _layer(a) and (a, b) not in ALLOWED_UP
                    and not (b == "__init__" and a.startswith(FACADE_USERS)))
    assert upward == [], "\n".join(upward)


def test_core_has_no_import_circle():
    edges = _core_edges()
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    # Tarjan's strongly connected components, iteratively
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    part = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        part.append(w)
                        if w == v:
                            break
                    if len(part) > 1:
                        circles.append(sorted(part))
    assert circles == [], "\n".join(" <-> ".join(c) for c in circles)
