"""From a function and example inputs to a Spec: the program ember.export stores and runs.

The forward is captured whole (graph/capture.py, fullgraph: a graph break is an error
naming the op and the line) under no_grad, in the module's current mode, as torch.export
does.  The captured graph becomes plain data: inputs (the function's tensors, then the
parameters, buffers and constant tensors it read, by name), kernel and check nodes over
value indices, outputs.  Device transfers disappear (a program runs on one device), host
constants become named constant inputs, random draws are refused (an exported program is
deterministic: export the model in eval mode).

Dynamic dimensions: the function is captured again with each declared dimension alone at
another size, and once more with all of them at third sizes; every size baked into the
graph (shapes, attributes, scalar arguments) that moved is fitted as an Expr of the
dimensions (symbolic.py) and the fit is checked against the last capture.  A graph whose
structure changes with a size (a Python loop over time steps, as an RNN's) cannot have
that dimension dynamic: an error says so.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import dtypes as D
from ..errors import EmberError, EmberTypeError, EmberValueError
from ..tensor import Tensor
from .symbolic import Dim, fit, has_expr
from .symbolic import evaluate as evaluate_expr


class ExportError(EmberError, RuntimeError):
    """A function or module that cannot be exported, with the reason and the fix.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


@dataclass(frozen=True)
class Ref:
    """A value of the program: inputs first, then node outputs, in order."""

    index: int

    def __repr__(self) -> str:
        return f"v{self.index}"


@dataclass
class InputSpec:
    name: str
    kind: str                 # "input" | "parameter" | "buffer" | "constant"
    shape: tuple              # ints and Exprs
    dtype: D.DType


@dataclass
class NodeSpec:
    kind: str                 # "kernel" | "check"
    op: str                   # the kernel's name (check: "take_bounds", ...)
    args: list                # Refs and Python constants
    attrs: dict
    shape: tuple | None       # the output's (None: writes into args[0], or checks)
    dtype: D.DType | None
    inplace: bool = False


@dataclass
class Spec:
    dims: dict                          # name -> Dim
    inputs: list                        # [InputSpec]
    nodes: list                         # [NodeSpec]
    outputs: object                     # structure of Refs and constants
    in_tree: object                     # (args, kwargs) with Refs for tensor inputs
    constants: dict = field(default_factory=dict)   # name -> host array (made in forward)

    def node_value(self, k: int) -> int | None:
        """The value index node k makes (None for in-place and check nodes)."""
        index = len(self.inputs)
        for node in self.nodes[:k]:
            index += node.shape is not None
        return index if self.nodes[k].shape is not None else None

    def arg_inputs(self) -> list:
        return [i for i in self.inputs if i.kind == "input"]


# --- capture ---------------------------------------------------------------------------

def build(fn, args: tuple, kwargs: dict, dynamic_shapes, names: list) -> tuple:
    """(Spec, weights {name: tensor}) for fn(*args, **kwargs)."""
    leaves, dims = _dynamic(args, kwargs, dynamic_shapes, names)
    base, weights = _capture(fn, args, kwargs, names)
    base.in_tree = _in_tree(args, kwargs)
    if not dims:
        return base, weights
    sizes = {}
    for (k, axis), dim in dims.items():
        n = leaves[k]._data.shape[axis]
        if sizes.setdefault(dim.name, n) != n:
            raise ExportError(f"export: dynamic dimension {dim.name!r} has size {n} at axis "
                              f"{axis} of input {names[k]!r} but {sizes[dim.name]} elsewhere; "
                              "the example inputs must agree")
        if n < 2:
            raise ExportError(f"export: dynamic dimension {dim.name!r} has size {n} in the "
                              "example inputs; give examples with a size of at least 2 (sizes "
                              "0 and 1 broadcast, so the graph could not follow other sizes)")
        if not dim.min <= n <= dim.max:
            raise ExportError(f"export: dynamic dimension {dim.name!r} has size {n} in the "
                              f"example inputs, outside its range [{dim.min}, {dim.max}]")
    by_name = {d.name: d for d in dims.values()}
    changed = {d: _other_size(by_name[d], (sizes[d],)) for d in sizes}
    last = {d: _other_size(by_name[d], (sizes[d], changed[d])) for d in sizes}
    variants = {}
    for d in sizes:
        variants[d], _ = _capture(fn, *_resized(args, kwargs, leaves, dims, {d: changed[d]}),
                                  names, dim=d)
    check, _ = _capture(fn, *_resized(args, kwargs, leaves, dims, last), names, dim=None)
    spec = _symbolic(base, variants, check, sizes, changed, last)
    spec.dims = by_name
    return spec, weights


def _other_size(dim: Dim, avoid: tuple) -> int:
    base = avoid[0]
    for n in (base + 1, base + 2, base + 3, base - 1, base - 2):
        if n >= 2 and dim.min <= n <= dim.max and n not in avoid:
            return n
    raise ExportError(f"export: dynamic dimension {dim.name!r} in [{dim.min}, {dim.max}] "
                      f"leaves no other size near {base} to capture at; widen its range or "
                      "leave it static")


def _capture(fn, args, kwargs, names, dim: str | None = "") -> tuple:
    from ..autograd.grad_mode import no_grad
    from ..graph.capture import GraphBreak, capture
    at = "" if dim == "" else (f" (captured again at another size of {dim!r})" if dim
                                 else " (captured again at other sizes of every dimension)")
    try:
        with no_grad():
            trace = capture(fn, args, kwargs, fullgraph=True)
    except GraphBreak as exc:
        raise ExportError(f"export: {exc}{at}; an exported program is one whole graph") \
            from None
    if trace.unsupported:
        raise ExportError(f"export: the function cannot be captured{at}: "
                          f"{trace.unsupported[0]}")
    return _to_spec(trace.graph, names)


def _to_spec(graph, names: list) -> tuple:
    """The captured Graph as a Spec (concrete sizes) and the live tensors it reads."""
    from ..nn.parameter import Parameter
    inputs, ref, weights, constants = [], {}, {}, {}
    for i in graph.inputs:
        if i.kind == "grad":
            raise ExportError("export: the forward reads a tensor's .grad; an exported program "
                              "computes outputs from inputs and weights only")
        if i.kind == "arg":
            name, kind = names[i.index], "input"
        else:
            name = graph.names.get(id(i.tensor))
            kind = "parameter" if isinstance(i.tensor, Parameter) else "buffer"
            if name is None:
                name, kind = f"constant{len(constants) + len(weights)}", "constant"
            weights[name] = i.tensor
        ref[id(i.value)] = Ref(len(inputs))
        inputs.append(InputSpec(name, kind, tuple(i.value.shape), i.value.dtype))
    for n in graph.nodes:             # host constants are inputs too, after the graph's
        if n.kind != "host":
            continue
        if n.meta.get("random"):
            raise ExportError(f"export: the forward draws random numbers ({n.name}); an "
                              "exported program is deterministic: call model.eval() before "
                              "exporting (dropout draws in training mode)")
        name = f"constant{len(constants) + len(weights)}"
        constants[name] = _host_array(n)
        ref[id(n.out)] = Ref(len(inputs))
        inputs.append(InputSpec(name, "constant", tuple(n.out.shape), n.out.dtype))
    nodes, made = [], len(inputs)
    for n in graph.nodes:
        if n.kind == "host":
            continue
        args = [ref[id(a)] if hasattr(a, "producer") else _python(a.value) for a in n.args]
        if n.kind == "transfer":
            ref[id(n.out)] = args[0]
            continue
        if n.kind == "check":
            nodes.append(NodeSpec("check", n.name, args, {"size": n.attrs["size"]}, None, None))
            continue
        if n.op.name == "nonzero":
            raise ExportError("export: nonzero's output shape depends on the data; an "
                              "exported graph has shapes that follow the inputs' sizes only")
        if n.inplace:
            target = args[0]
            if isinstance(target, Ref) and target.index < len(inputs):
                what = inputs[target.index]
                raise ExportError(f"export: {n.name} writes into {what.kind} {what.name!r} "
                                  "(a module in training mode updating its statistics?); an "
                                  "exported program has no side effects: call model.eval() "
                                  "before exporting")
            nodes.append(NodeSpec("kernel", n.name, args, dict(n.attrs), None, None, True))
            continue
        nodes.append(NodeSpec("kernel", n.name, args, dict(n.attrs), tuple(n.out.shape),
                              n.out.dtype))
        ref[id(n.out)] = Ref(made)
        made += 1
    spec = Spec({}, inputs, nodes, _structure(graph.outputs, ref), None, constants)
    return spec, weights


def _host_array(node) -> np.ndarray:
    native = node.fn()
    device = node.device
    return np.asarray(native if device.type == "cpu" else device.backend.to_host(native))


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def _structure(s, ref):
    if isinstance(s, tuple):
        return tuple(_structure(x, ref) for x in s)
    if isinstance(s, list):
        return [_structure(x, ref) for x in s]
    if isinstance(s, dict):
        return {k: _structure(v, ref) for k, v in s.items()}
    if hasattr(s, "producer"):
        return ref[id(s)]
    return s.value


# --- inputs and their dynamic dimensions -------------------------------------------------

def input_names(fn, args: tuple, kwargs: dict) -> list:
    """A name for every leaf of (args, kwargs): the parameter's name, with _0, _1... inside
    nested tuples and lists."""
    target = getattr(fn, "forward", fn)
    try:
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    out = []

    def walk(value, name):
        if isinstance(value, (tuple, list)):
            for j, v in enumerate(value):
                walk(v, f"{name}_{j}")
        elif isinstance(value, dict):
            for key, v in value.items():
                walk(v, f"{name}_{key}")
        else:
            out.append(name)
    for k, a in enumerate(args):
        walk(a, params[k] if k < len(params) else f"arg{k}")
    for key, v in kwargs.items():
        walk(v, key)
    seen: dict = {}
    for k, name in enumerate(out):           # names must be unique
        if name in seen:
            out[k] = f"{name}_{k}"
        seen[out[k]] = k
    return out


def _dynamic(args, kwargs, dynamic_shapes, names) -> tuple:
    """(the leaves of (args, kwargs), {(leaf, axis): Dim})."""
    from ..graph.ir import flatten
    leaves = flatten(list(args) + list(kwargs.values()))
    if dynamic_shapes is None:
        return leaves, {}
    target_args = list(args) + list(kwargs.values())
    if isinstance(dynamic_shapes, dict):
        spec_names = _arg_names(names, args, kwargs)
        unknown = set(dynamic_shapes) - set(spec_names)
        if unknown:
            raise EmberValueError(f"export: dynamic_shapes names {sorted(unknown)}, which are "
                                  f"not arguments; the arguments are {spec_names}")
        per_arg = [dynamic_shapes.get(n) for n in spec_names]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(target_args):
            raise EmberValueError(f"export: dynamic_shapes has {len(dynamic_shapes)} entries "
                                  f"for {len(target_args)} arguments; give one per argument "
                                  "(None for a static one)")
        per_arg = list(dynamic_shapes)
    else:
        raise EmberTypeError(f"export: dynamic_shapes must be a dict by argument name or a "
                             f"tuple by position, got {type(dynamic_shapes).__name__}")
    dims: dict = {}
    counter = [0]

    def walk(value, spec):
        if isinstance(value, (tuple, list)) and not isinstance(spec, dict):
            items = spec if spec is not None else [None] * len(value)
            if len(items) != len(value):
                raise EmberValueError("export: dynamic_shapes does not follow the structure "
                                      "of the inputs")
            for v, s in zip(value, items):
                walk(v, s)
            return
        if isinstance(value, dict):
            for key, v in value.items():
                walk(v, None if spec is None else spec.get(key))
            return
        k = counter[0]
        counter[0] += 1
        if spec is None:
            return
        if type(value) is not Tensor:
            raise EmberValueError(f"export: dynamic_shapes gives dimensions for {names[k]!r}, "
                                  "which is not a tensor")
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for axis, dim in items:
            if dim is None:
                continue
            if isinstance(dim, str):
                dim = Dim(dim)
            if not isinstance(dim, Dim):
                raise EmberTypeError(f"export: dynamic_shapes[{names[k]!r}][{axis}] must be "
                                     f"an ember.export.Dim or a name, got {dim!r}")
            ndim = len(value._data.shape)
            if not isinstance(axis, int) or not -ndim <= axis < ndim:
                raise EmberValueError(f"export: dynamic_shapes[{names[k]!r}] names axis "
                                      f"{axis!r}; the tensor has {ndim} dimensions")
            dims[(k, axis % ndim)] = dim
    for value, spec in zip(target_args, per_arg):
        walk(value, spec)
    by_name: dict = {}
    for dim in dims.values():
        if by_name.setdefault(dim.name, dim) != dim:
            raise EmberValueError(f"export: two different Dims are named {dim.name!r}")
    return leaves, dims


def map_leaves(value, fn):
    """value (tuples, lists, dicts of leaves) with each leaf replaced by fn(leaf)."""
    if isinstance(value, tuple):
        return tuple(map_leaves(v, fn) for v in value)
    if isinstance(value, list):
        return [map_leaves(v, fn) for v in value]
    if isinstance(value, dict):
        return {key: map_leaves(v, fn) for key, v in value.items()}
    return fn(value)


def _in_tree(args, kwargs):
    """(args, kwargs) with each tensor replaced by the Ref of its input."""
    counter = [0]

    def leaf(value):
        if type(value) is Tensor:
            counter[0] += 1
            return Ref(counter[0] - 1)
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise EmberTypeError(f"export: an input of type {type(value).__name__}; inputs may be "
                             "tensors, numbers, strings, None, and tuples, lists and dicts "
                             "of them")
    return map_leaves((tuple(args), dict(kwargs)), leaf)


def _arg_names(names, args, kwargs) -> list:
    """The top-level argument names (the leaf names of non-nested arguments)."""
    from ..graph.ir import flatten
    out, k = [], 0
    for a in list(args) + list(kwargs.values()):
        count = len(flatten(a))
        out.append(names[k] if count == 1 else names[k].rsplit("_", 1)[0])
        k += count
    return out


def _resized(args, kwargs, leaves, dims, sizes: dict) -> tuple:
    """(args, kwargs) with the inputs' dynamic axes at `sizes` (values repeat cyclically, so
    indices stay valid)."""
    new = {}
    for (k, axis), dim in dims.items():
        if dim.name in sizes:
            new.setdefault(k, {})[axis] = sizes[dim.name]
    replaced = {}
    for k, axes in new.items():
        t = leaves[k]
        array = t.numpy()
        for axis, n in axes.items():
            array = np.take(array, np.arange(n) % array.shape[axis], axis=axis)
        from ..ops.creation import tensor as make
        replaced[k] = make(np.ascontiguousarray(array), dtype=t.dtype, device=t.device)
    counter = [0]

    def leaf(value):
        counter[0] += 1
        return replaced.get(counter[0] - 1, value)
    return map_leaves((tuple(args), dict(kwargs)), leaf)


# --- fitting sizes to dimensions ---------------------------------------------------------

class _Misfit(Exception):
    pass


def _symbolic(base: Spec, variants: dict, check: Spec, sizes, changed, last) -> Spec:
    for d, v in variants.items():
        _same_structure(base, v, f"at another size of {d!r}", d)
    _same_structure(base, check, "at other sizes of every dynamic dimension", None)

    def merge(where, get):
        b = get(base)
        out = _merge(b, {d: get(v) for d, v in variants.items()}, sizes, changed, where)
        if has_expr(out) or out != b:
            want = get(check)
            got = evaluate_expr(out, last)
            if not _agrees(got, want):
                raise ExportError(f"export: {where} depends on the dynamic dimensions in a "
                                  f"way export cannot express (fitted {out!r}, which gives "
                                  f"{got!r} where the function gave {want!r}); make it "
                                  "static, or compute it from tensor shapes differently")
        return out

    inputs = [replace(i, shape=tuple(merge(f"input {i.name!r}, axis {a}",
                                           lambda s, k=k, a=a: s.inputs[k].shape[a])
                                     for a in range(len(i.shape))))
              for k, i in enumerate(base.inputs)]
    for name, array in base.constants.items():
        for v in [*variants.values(), check]:
            other = v.constants[name]
            if other.shape != array.shape or not np.array_equal(other, array, equal_nan=True):
                raise ExportError(f"export: a constant tensor made in the forward "
                                  f"({name}, shape {array.shape}) changes with the dynamic "
                                  "dimensions; make it with ember ops (ember.arange, "
                                  "ember.ones) instead of from Python data")
    nodes = []
    for k, n in enumerate(base.nodes):
        where = f"node {k} ({n.op})"
        args = [a if isinstance(a, Ref) else
                merge(f"{where}, argument {j}", lambda s, k=k, j=j: s.nodes[k].args[j])
                for j, a in enumerate(n.args)]
        attrs = {key: merge(f"{where}, attribute {key!r}",
                            lambda s, k=k, key=key: s.nodes[k].attrs[key])
                 for key in n.attrs}
        shape = None if n.shape is None else tuple(
            merge(f"{where}, output axis {a}", lambda s, k=k, a=a: s.nodes[k].shape[a])
            for a in range(len(n.shape)))
        nodes.append(replace(n, args=args, attrs=attrs, shape=shape))
    outputs = merge("an output", lambda s: _consts_only(s.outputs))
    del outputs          # non-tensor outputs must not move: merge raised if they did
    return Spec({}, inputs, nodes, base.outputs, base.in_tree, base.constants)


def _consts_only(structure):
    if isinstance(structure, (tuple, list)):
        return tuple(_consts_only(s) for s in structure)
    if isinstance(structure, dict):
        return tuple((k, _consts_only(v)) for k, v in structure.items())
    return None if isinstance(structure, Ref) else structure


def _same_structure(a: Spec, b: Spec, when: str, dim) -> None:
    def fail(what):
        name = f"dimension {dim!r}" if dim else "the dynamic dimensions"
        raise ExportError(f"export: the graph changes {when} ({what}): its structure depends "
                          f"on {name} (a Python loop over it, such as an RNN's over time "
                          f"steps, or a branch on a size); make {name} static")
    if len(a.nodes) != len(b.nodes):
        fail(f"{len(a.nodes)} nodes, then {len(b.nodes)}")
    if [(i.name, i.kind, i.dtype) for i in a.inputs] != \
            [(i.name, i.kind, i.dtype) for i in b.inputs]:
        fail("different inputs")
    for k, (x, y) in enumerate(zip(a.nodes, b.nodes)):
        if (x.kind, x.op, x.dtype, x.inplace, sorted(x.attrs), len(x.args)) != \
                (y.kind, y.op, y.dtype, y.inplace, sorted(y.attrs), len(y.args)) or \
                (x.shape is None) != (y.shape is None) or \
                (x.shape is not None and len(x.shape) != len(y.shape)):
            fail(f"node {k} is {x.op}, then {y.op}")
        for p, q in zip(x.args, y.args):
            if isinstance(p, Ref) != isinstance(q, Ref) or (isinstance(p, Ref) and p != q):
                fail(f"node {k} ({x.op}) reads other values")
    if _shape_of(a.outputs) != _shape_of(b.outputs):
        fail("different outputs")


def _shape_of(structure):
    if isinstance(structure, (tuple, list)):
        return (type(structure).__name__, tuple(_shape_of(s) for s in structure))
    if isinstance(structure, dict):
        return ("dict", tuple((k, _shape_of(v)) for k, v in structure.items()))
    return structure if isinstance(structure, Ref) else "const"


def _merge(base, variants: dict, sizes, changed, where):
    if isinstance(base, (tuple, list)):
        for v in variants.values():
            if type(v) is not type(base) or len(v) != len(base):
                raise ExportError(f"export: {where} changes form with the dynamic dimensions")
        items = [_merge(b, {d: v[j] for d, v in variants.items()}, sizes, changed,
                        f"{where}[{j}]") for j, b in enumerate(base)]
        return type(base)(items)
    if isinstance(base, slice):
        parts = [_merge(getattr(base, p), {d: getattr(v, p) for d, v in variants.items()},
                        sizes, changed, f"{where}.{p}") for p in ("start", "stop", "step")]
        return slice(*parts)
    if isinstance(base, (bool, str, D.DType)) or base is None:
        if any(v != base for v in variants.values()):
            raise ExportError(f"export: {where} changes with the dynamic dimensions "
                              f"({base!r}, then {list(variants.values())!r})")
        return base
    if isinstance(base, float) and all(math.isclose(v, base, rel_tol=1e-12, abs_tol=0)
                                       for v in variants.values()):
        return base
    out = fit(base, variants, sizes, changed)
    if out is None:
        raise ExportError(f"export: {where} depends on the dynamic dimensions in a way export "
                          f"cannot express ({base!r} at sizes {sizes}, then "
                          f"{list(variants.values())!r}); make it static")
    return out


def _agrees(got, want) -> bool:
    if isinstance(got, (tuple, list)):
        return isinstance(want, (tuple, list)) and len(got) == len(want) and all(
            _agrees(g, w) for g, w in zip(got, want))
    if isinstance(got, slice):
        return isinstance(want, slice) and _agrees((got.start, got.stop, got.step),
                                                   (want.start, want.stop, want.step))
    if isinstance(got, float) and isinstance(want, (int, float)) and not isinstance(want, bool):
        return math.isclose(got, want, rel_tol=1e-9)
    return got == want and type(got) is type(want)
