"""ExportedProgram: a Spec with its weights, runnable on any device without the model's code.

A call binds the dynamic dimensions from the inputs' shapes (and checks every static size,
dtype and range), evaluates the sizes baked into the graph for them, and runs the graph as
ember.compile replays one (graph/replay.py): each node calls the device's kernel of that
name, or the op's decomposition where the device has none.  One replay is built per
device and set of sizes, and cached.  Before it is built the graph is checked: every op
declared, every value made before use, every output's shape and dtype what the op's rules
give, no value larger than MAX_VALUE_BYTES.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..device import as_device
from ..errors import (
    DeviceMismatchError,
    EmberError,
    EmberTypeError,
    KernelNotFoundError,
    ShapeError,
)
from ..tensor import Tensor, wrap
from .format import ExportFormatError, describe, invalid, read, save
from .symbolic import Expr
from .symbolic import evaluate as evaluate_expr
from .trace import ExportError, NodeSpec, Ref, Spec

MAX_VALUE_BYTES = 1 << 32          # 4 GiB: no value of a program may claim more
_CACHE_LIMIT = 16                  # replays kept per program (sizes x devices)


class ExportVerificationError(EmberError, AssertionError):
    """A program's outputs disagree with the outputs stored with it.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class ExportedProgram:
    """What ember.export returns and ember.export.load reads: call it like the model.

    PyTorch
    -------
    ``torch.export.ExportedProgram``
    """

    def __init__(self, spec: Spec, weights: dict, examples: tuple | None = None):
        self.spec = spec
        self._weights = dict(weights)             # name -> Tensor, all on one device
        self.examples = examples                  # (input tensors, output tensors), on cpu
        devices = {t._device for t in self._weights.values()}
        if len(devices) > 1:
            raise DeviceMismatchError(f"export: the weights live on {len(devices)} devices "
                                      f"({', '.join(sorted(map(str, devices)))}); an exported "
                                      "program runs on one: move the model to one device")
        self.device = devices.pop() if devices else (
            examples[0][0]._device if examples and examples[0] else as_device("cpu"))
        self._replays: dict = {}

    # -- what it holds ---------------------------------------------------------------------
    @property
    def state_dict(self) -> dict:
        """Parameters, buffers and constants by name."""
        return dict(self._weights)

    @property
    def dynamic_dims(self) -> dict:
        return dict(self.spec.dims)

    @property
    def example_inputs(self) -> tuple:
        return tuple(self.examples[0]) if self.examples else ()

    @property
    def graph(self):
        """The graph at the example inputs' sizes, on this program's device (an ember.graph
        Graph: .print(), .verify())."""
        return self._graph(self._example_sizes())

    def module(self) -> ExportedProgram:
        """A callable that runs the program (torch's ExportedProgram.module())."""
        return self

    def format(self) -> str:
        """The program as text: symbolic shapes, weights by name, every node."""
        return describe(self.spec)

    __str__ = format

    def __repr__(self) -> str:
        dims = ", ".join(map(repr, self.spec.dims.values())) or "static shapes"
        return (f"<ExportedProgram: {len(self.spec.nodes)} nodes, "
                f"{len(self.spec.arg_inputs())} inputs, {len(self._weights)} weights, "
                f"{dims}, on {self.device}>")

    # -- moving, saving ----------------------------------------------------------------------
    def to(self, device) -> ExportedProgram:
        """The same program with its weights on `device`."""
        device = as_device(device)
        if device is self.device:
            return self
        weights = {name: t.to(device) for name, t in self._weights.items()}
        return ExportedProgram(self.spec, weights, self.examples)

    def save(self, path) -> None:
        """Write the program to one file (format.py: a zip, no pickle)."""
        save(self, path)

    # -- running ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        tensors = self._tensor_inputs(args, kwargs)
        sizes = self._bind(tensors)
        replay, graph = self._replay(sizes)
        natives = [t._data for t in tensors] + [
            self._weights[i.name]._data for i in self.spec.inputs if i.kind != "input"]
        outs, _ = replay(natives)
        made = {id(v): native for v, native in zip(graph.output_values(), outs)}
        by_ref = {}
        for ref, v in _refs(self.spec.outputs, graph.outputs):
            by_ref[ref.index] = v
        return _rebuild(self.spec.outputs, by_ref, made, tensors, self._weights, self.spec)

    def verify(self, rtol: float | None = None, atol: float | None = None,
               device=None) -> dict:
        """Run the stored example inputs (on this program's device, or `device`) and compare
        with the stored outputs; raise ExportVerificationError where they differ.  Returns
        {"outputs": n, "max_abs_diff": d}."""
        if not self.examples:
            raise ExportError("export: this program holds no example inputs to verify with")
        program = self if device is None else self.to(device)
        inputs, expected = self.examples
        args, kwargs = _fill(self.spec.in_tree, [x.to(program.device) for x in inputs])
        try:
            got = [t for t in _leaves(program(*args, **kwargs)) if type(t) is Tensor]
        except EmberError:
            raise
        except Exception as exc:  # noqa: BLE001  (a kernel fed what the file's graph says)
            # the file's nodes passed the loader's checks but do not fit together (an input
            # swapped for another of a different size, ...): a corrupted or hostile file
            raise ExportVerificationError(
                f"export.verify: the program fails on its stored example inputs "
                f"({type(exc).__name__}: {exc}); the file's graph is inconsistent") from None
        if len(got) != len(expected):
            raise ExportVerificationError(f"export.verify: the program made {len(got)} tensor "
                                          f"outputs; {len(expected)} are stored")
        worst = 0.0
        for k, (g, want) in enumerate(zip(got, expected)):
            if tuple(g.shape) != tuple(want.shape) or g.dtype is not want.dtype:
                raise ExportVerificationError(
                    f"export.verify: output {k} is {g.dtype.name}{list(g.shape)}; the stored "
                    f"one is {want.dtype.name}{list(want.shape)}")
            a, b = g.numpy(), want.numpy()
            r, t = _tolerance(want.dtype, rtol, atol)
            bad, diff = mismatch(a, b, r, t)
            worst = max(worst, diff)
            if bad.any():
                at = tuple(int(i) for i in np.argwhere(bad)[0])
                raise ExportVerificationError(
                    f"export.verify: output {k} differs from the stored output on "
                    f"{program.device} at {at}: {a[at]!r} != {b[at]!r} ({int(bad.sum())} of "
                    f"{bad.size} elements outside rtol={r}, atol={t})")
        return {"outputs": len(got), "max_abs_diff": worst, "device": str(program.device)}

    # -- inside -----------------------------------------------------------------------------
    def _tensor_inputs(self, args, kwargs) -> list:
        tree_args, tree_kwargs = self.spec.in_tree
        if len(args) != len(tree_args) or set(kwargs) != set(tree_kwargs):
            raise EmberTypeError(f"exported program: expected {len(tree_args)} positional "
                                 f"argument(s){_kw(tree_kwargs)}, got {len(args)}"
                                 f"{_kw(kwargs)}")
        tensors: list = []
        _match((tuple(args), dict(kwargs)), (tuple(tree_args), dict(tree_kwargs)), tensors,
               self.spec, "input")
        return tensors

    def _bind(self, tensors) -> dict:
        sizes: dict = {}
        inputs = self.spec.arg_inputs()
        for spec, t in zip(inputs, tensors):
            if t._dtype is not spec.dtype:
                raise EmberTypeError(f"exported program: input {spec.name!r} must be "
                                     f"{spec.dtype.name}, got {t._dtype.name}")
            if t._device is not self.device:
                raise DeviceMismatchError(f"exported program: input {spec.name!r} is on "
                                          f"{t._device} and the program on {self.device}; "
                                          f"move it (x.to('{self.device}')) or the program "
                                          f"(program.to('{t._device}'))")
            shape = tuple(t._data.shape)
            if len(shape) != len(spec.shape):
                raise ShapeError(f"exported program: input {spec.name!r} must have "
                                 f"{len(spec.shape)} dimensions ({_text(spec.shape)}), got "
                                 f"shape {shape}")
            for axis, (want, n) in enumerate(zip(spec.shape, shape)):
                name = want.plain if isinstance(want, Expr) else None
                if name is not None and sizes.setdefault(name, n) != n:
                    raise ShapeError(f"exported program: dimension {name!r} is {sizes[name]} "
                                     f"elsewhere but {n} at axis {axis} of input "
                                     f"{spec.name!r}")
        for name, n in sizes.items():
            dim = self.spec.dims[name]
            if not dim.min <= n <= dim.max:
                raise ShapeError(f"exported program: dimension {name!r} must lie in "
                                 f"[{dim.min}, {dim.max}], got {n}")
        for spec, t in zip(inputs, tensors):
            want = tuple(evaluate_expr(s, sizes) for s in spec.shape)
            if want != tuple(t._data.shape):
                raise ShapeError(f"exported program: input {spec.name!r} must have shape "
                                 f"{_text(spec.shape)} = {want} here, got "
                                 f"{tuple(t._data.shape)}")
        return sizes

    def _example_sizes(self) -> dict:
        if self.examples:
            return self._bind([x.to(self.device) for x in self.examples[0]])
        if self.spec.dims:
            raise ExportError("export: a program with dynamic dimensions and no example "
                              "inputs has no sizes to show its graph at")
        return {}

    def _replay(self, sizes: dict):
        key = (self.device, tuple(sorted(sizes.items())))
        hit = self._replays.get(key)
        if hit is None:
            from ..graph.replay import generate
            graph = self._graph(sizes)
            if len(self._replays) >= _CACHE_LIMIT:
                self._replays.pop(next(iter(self._replays)))
            hit = self._replays[key] = (generate(graph), graph)
        return hit

    def _graph(self, sizes: dict):
        return instantiate(self.spec, sizes, self.device)


def load(path) -> ExportedProgram:
    """The program in the file at `path` (format.read), its graph checked at the example
    sizes before anything runs; a broken or hostile file raises ExportFormatError."""
    name, spec, weights, examples = read(path)
    program = ExportedProgram(spec, weights, examples)
    try:
        if examples is not None:
            instantiate(spec, program._example_sizes(), program.device)
        elif not spec.dims:
            instantiate(spec, {}, program.device)
    except ExportFormatError:
        raise
    except EmberError as exc:
        raise invalid(name, str(exc)) from None
    return program


def mismatch(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> tuple:
    """(where got and want differ beyond |got - want| <= atol + rtol * |want|, NaN matching
    NaN; the largest finite absolute difference)."""
    if want.dtype.kind not in "fc":
        return got != want, 0.0
    a, b = got.astype(np.float64), want.astype(np.float64)
    diff = np.abs(a - b)
    bad = ~(diff <= atol + rtol * np.abs(b)) & ~((a == b) | (np.isnan(a) & np.isnan(b)))
    finite = diff[np.isfinite(diff)]
    return bad, float(finite.max()) if finite.size else 0.0


def _kw(kwargs) -> str:
    return f" and keyword argument(s) {sorted(kwargs)}" if kwargs else ""


def _text(shape) -> str:
    return "(" + ", ".join(map(repr, shape)) + ")"


def _tolerance(dtype, rtol, atol):
    default = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float64": (1e-7, 1e-9)}
    r, t = default.get(dtype.name, (1e-4, 1e-5))
    return (r if rtol is None else rtol), (t if atol is None else atol)


def _match(value, tree, tensors: list, spec: Spec, where: str) -> None:
    """Walk the call's arguments along the exported input structure."""
    if isinstance(tree, Ref):
        if type(value) is not Tensor:
            raise EmberTypeError(f"exported program: {where} must be a tensor, got "
                                 f"{type(value).__name__}")
        tensors.append(value)
        return
    if isinstance(tree, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(tree):
            raise EmberTypeError(f"exported program: {where} must be a sequence of "
                                 f"{len(tree)}, got {type(value).__name__}")
        for j, (v, t) in enumerate(zip(value, tree)):
            _match(v, t, tensors, spec, f"{where}[{j}]")
        return
    if isinstance(tree, dict):
        if not isinstance(value, dict) or set(value) != set(tree):
            raise EmberTypeError(f"exported program: {where} must be a dict with keys "
                                 f"{sorted(tree)}")
        for key in tree:
            _match(value[key], tree[key], tensors, spec, f"{where}[{key!r}]")
        return
    if value != tree or type(value) is not type(tree):
        raise EmberTypeError(f"exported program: {where} was {tree!r} at export and is baked "
                             f"into the graph; got {value!r} (export again for other values)")


def _fill(tree, tensors):
    it = iter(tensors)

    def walk(t):
        if isinstance(t, Ref):
            return next(it)
        if isinstance(t, tuple):
            return tuple(walk(x) for x in t)
        if isinstance(t, list):
            return [walk(x) for x in t]
        if isinstance(t, dict):
            return {k: walk(v) for k, v in t.items()}
        return t
    args, kwargs = tree
    return walk(args), walk(kwargs)


def _leaves(structure) -> list:
    from ..graph.ir import flatten
    return flatten(structure)


def _refs(spec_structure, graph_structure):
    from ..graph.ir import flatten
    return [(r, v) for r, v in zip(flatten(spec_structure), flatten(graph_structure))
            if isinstance(r, Ref)]


def _rebuild(structure, by_ref, made, tensors, weights, spec):
    if isinstance(structure, tuple):
        return tuple(_rebuild(s, by_ref, made, tensors, weights, spec) for s in structure)
    if isinstance(structure, list):
        return [_rebuild(s, by_ref, made, tensors, weights, spec) for s in structure]
    if isinstance(structure, dict):
        return {k: _rebuild(v, by_ref, made, tensors, weights, spec)
                for k, v in structure.items()}
    if not isinstance(structure, Ref):
        return structure
    if structure.index < len(spec.inputs):          # an input returned as it is
        i = spec.inputs[structure.index]
        return tensors[structure.index] if i.kind == "input" else weights[i.name]
    v = by_ref[structure.index]
    return wrap(made[id(v)], v.device, v.dtype)


# --- a Spec at given sizes, as a Graph of the device's kernels ---------------------------

def instantiate(spec: Spec, sizes: dict, device):
    """The ember.graph Graph that runs `spec` on `device` at dimension sizes `sizes`, checked
    (Graph.verify, dtype rules, MAX_VALUE_BYTES)."""
    from ..graph.ir import Const, Graph, GraphError, Input, Node, Value
    from ..ops._op import REGISTRY
    graph = Graph()
    values: list = []
    for k, i in enumerate(spec.inputs):
        v = Value(k, _sizes(spec.inputs[k].shape, sizes, f"input {i.name!r}"), i.dtype, device,
                  name="" if i.kind == "input" else "")
        values.append(v)
        graph.inputs.append(Input("arg" if i.kind == "input" else "live", v, index=k,
                                  label=i.name))
    for k, node in enumerate(spec.nodes):
        args = []
        for a in node.args:
            if isinstance(a, Ref):
                if not 0 <= a.index < len(values):
                    raise ExportError(f"export: node {k} ({node.op}) reads v{a.index}, which "
                                      "is not made before it")
                args.append(values[a.index])
            else:
                args.append(Const(evaluate_expr(a, sizes)))
        attrs = {key: evaluate_expr(v, sizes) for key, v in node.attrs.items()}
        if node.kind == "check":
            graph.nodes.append(Node("check", node.op, args, {}, None, fn=_bounds(node, device,
                                                                                 attrs),
                                    device=device))
            continue
        op = REGISTRY.get(node.op)
        if op is None:
            raise ExportError(f"export: node {k} calls {node.op!r}, which this ember does not "
                              "declare")
        out = None
        if node.shape is not None:
            out = Value(len(values), _sizes(node.shape, sizes, f"node {k} ({node.op})"),
                        node.dtype, device)
            values.append(out)
        n = Node("kernel", node.op, args, attrs, out, op=op, device=device,
                 inplace=node.inplace)
        if out is not None:
            out.producer = n
        n.fn = _kernel(op, device, args, node, k)
        graph.nodes.append(n)
    graph.outputs = _graph_outputs(spec.outputs, values, Const)
    try:
        graph.verify()
    except GraphError as exc:
        raise ExportError(f"export: the graph is malformed: {exc}") from None
    _check_rules(graph)
    return graph


def _sizes(shape, sizes, where) -> tuple:
    out = tuple(evaluate_expr(s, sizes) for s in shape)
    for n in out:
        if not isinstance(n, int) or n < 0:
            raise ExportError(f"export: {where} has a size {n!r} at these dimensions; sizes "
                              "are non-negative integers")
    return out


def _graph_outputs(structure, values, Const):
    if isinstance(structure, tuple):
        return tuple(_graph_outputs(s, values, Const) for s in structure)
    if isinstance(structure, list):
        return [_graph_outputs(s, values, Const) for s in structure]
    if isinstance(structure, dict):
        return {k: _graph_outputs(v, values, Const) for k, v in structure.items()}
    if isinstance(structure, Ref):
        if not 0 <= structure.index < len(values):
            raise ExportError(f"export: an output names v{structure.index}, which no node "
                              "makes")
        return values[structure.index]
    return Const(structure)


def _kernel(op, device, args, node: NodeSpec, k: int):
    kernel = device.kernels.get(op.name)
    if kernel is not None:
        return kernel
    if op.decompose is None:
        raise KernelNotFoundError(f"export: node {k} needs kernel {op.name!r}, which "
                                  f"{device} does not implement (and it has no "
                                  "decomposition)")
    dtypes = [a.dtype if hasattr(a, "producer") else None for a in args]

    def decomposed(*natives, **attrs):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            ins = [wrap(n, device, d) if d is not None else n for n, d in zip(natives, dtypes)]
            return op.decompose(*ins, **attrs)._data
    return decomposed


def _bounds(node: NodeSpec, device, attrs):
    from ..ops.index import _bounds_check
    size = attrs.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ExportError(f"export: check {node.op} needs a non-negative integer size, got "
                          f"{size!r}")
    return _bounds_check(node.op.removesuffix("_bounds"), device, size)


class _Standin:
    """What dtype and shape rules read of a tensor, for a Value."""

    def __init__(self, value):
        self._data = _Shape(value.shape)
        self._dtype = value.dtype
        self._device = value.device
        self.ndim = len(value.shape)
        self.shape = value.shape


class _Shape:
    def __init__(self, shape):
        self.shape = tuple(shape)


def _check_rules(graph) -> None:
    """Each kernel node's recorded dtype is what its op's dtype rule gives; sizes of ops
    without a shape rule are computed here; no value claims more than MAX_VALUE_BYTES."""
    for k, n in enumerate(graph.nodes):
        for a in n.args:
            if hasattr(a, "producer") and a.producer is None:
                _bytes(a, k, n)
        if n.kind != "kernel" or n.out is None:
            continue
        _bytes(n.out, k, n)
        ins = [_Standin(a) if hasattr(a, "producer") else a.value for a in n.args]
        try:
            _, want = n.op.dtype(ins, n.attrs)
        except Exception as exc:  # noqa: BLE001  (bad attrs or inputs in a file)
            raise ExportError(f"export: node {k} ({n.name}): its dtype rule fails on these "
                              f"inputs ({type(exc).__name__}: {exc})") from None
        if want is not n.out.dtype:
            if want is D.float32 and n.out.dtype is D.bfloat16:
                # a backend that computes bfloat16 in float32 (upcast_bfloat16) rounds after
                n.fn = _rounding(n.fn, n.device.kernels["cast"])
            else:
                raise ExportError(f"export: node {k} ({n.name}) records dtype "
                                  f"{n.out.dtype.name}; its op's rule gives {want.name}")
        rule = _SHAPES.get(n.name)
        if rule is not None:
            try:
                want_shape = tuple(rule(*[i.shape if isinstance(i, _Standin) else i
                                          for i in ins], **n.attrs))
            except Exception as exc:  # noqa: BLE001
                raise ExportError(f"export: node {k} ({n.name}): bad attributes for its "
                                  f"inputs ({type(exc).__name__}: {exc})") from None
            if want_shape != tuple(n.out.shape):
                raise ExportError(f"export: node {k} ({n.name}) records shape "
                                  f"{n.out.shape}; its inputs and attributes give "
                                  f"{want_shape}")


def _bytes(v, k, n) -> None:
    size = math.prod(v.shape) * v.dtype.itemsize
    if size > MAX_VALUE_BYTES:       # read at each check: a caller may lower it
        raise ExportError(f"export: node {k} ({n.name}) works on {v!r} of shape {v.shape} "
                          f"({size} bytes), more than the {MAX_VALUE_BYTES} bytes a value of "
                          "an exported program may have (a corrupted or hostile file?)")


def _rounding(kernel, cast):
    def k(*args, **kwargs):
        return cast(kernel(*args, **kwargs), dtype=D.bfloat16)
    return k


def _pooled(h, w, kernel_size, dilation, padding, stride, extra=(0, 0)):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw), (eh, ew) = (kernel_size, dilation, padding,
                                                        stride, extra)
    if min(kh, kw, dh, dw, sh, sw) < 1 or min(ph, pw, eh, ew) < 0:
        raise ValueError("kernel_size, dilation and stride must be positive, padding and "
                         "extra non-negative")
    oh = (h + 2 * ph + eh - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw + ew - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise ValueError(f"the window does not fit the {h}x{w} input")
    return oh, ow


def _unfold_shape(x, *, kernel_size, dilation, padding, stride):
    n, c, h, w = x
    oh, ow = _pooled(h, w, kernel_size, dilation, padding, stride)
    return n, c * kernel_size[0] * kernel_size[1], oh * ow


def _fold_shape(cols, *, output_size, kernel_size, dilation, padding, stride):
    n, ckk, length = cols
    h, w = output_size
    oh, ow = _pooled(h, w, kernel_size, dilation, padding, stride)
    kk = kernel_size[0] * kernel_size[1]
    if ckk % kk or length != oh * ow:
        raise ValueError("the columns do not match output_size")
    return n, ckk // kk, h, w


def _pool_shape(x, *, kernel_size, stride, padding, dilation, extra):
    n, c, h, w = x
    return (n, c) + _pooled(h, w, kernel_size, dilation, padding, stride, extra)


def _conv2d_shape(x, weight, bias=None, *, stride, padding, dilation, groups):
    (n, c, h, w), (o, cg, kh, kw) = x, weight
    if bias is not None and tuple(bias) != (o,):
        raise ValueError(f"the bias {bias} does not fit the weight {weight}")
    if groups < 1 or c != cg * groups or o % groups:
        raise ValueError(f"{c} input channels do not fit the weight {weight} in {groups} "
                         "groups")
    oh, ow = _pooled(h, w, (kh, kw), dilation, padding, stride)
    # the im2col columns a backend's kernel may build (unfold's output before conv2d was
    # one op): bounded as a recorded value is
    if c * kh * kw * n * oh * ow * 4 > MAX_VALUE_BYTES:         # at float32
        raise ValueError("its im2col columns would exceed the exported program's value limit")
    return n, o, oh, ow


def _conv2d_input_grad_shape(g, weight, *, input_size, stride, padding, dilation, groups):
    """conv_transpose2d's op: g (N, O, OH, OW) must be what a convolution of input_size
    by the weight gives."""
    (n, o, oh, ow), (wo, cg, kh, kw), (h, w) = g, weight, input_size
    if groups < 1 or o != wo or o % groups:
        raise ValueError(f"{o} channels do not fit the weight {weight} in {groups} groups")
    if (oh, ow) != _pooled(h, w, (kh, kw), dilation, padding, stride):
        raise ValueError(f"input_size {(h, w)} does not give the {oh}x{ow} gradient")
    # the columns the decomposition folds (N, C*kh*kw, OH*OW): bounded as conv2d's
    if cg * groups * kh * kw * n * oh * ow * 4 > MAX_VALUE_BYTES:        # at float32
        raise ValueError("its im2col columns would exceed the exported program's value limit")
    return n, cg * groups, h, w


def _arange_shape(*, start, stop, step, dtype):
    if step == 0 or not all(math.isfinite(v) for v in (start, stop, step)):
        raise ValueError("arange needs a finite, non-zero step and finite bounds")
    return (max(0, math.ceil((stop - start) / step)),)


# the ops whose declarations have no shape rule (ops/_op.py), and conv2d and
# conv2d_input_grad (whose rules trust their inputs' channels and sizes): computed before
# a file's graph may allocate anything
_SHAPES = {"unfold": _unfold_shape, "fold": _fold_shape, "max_pool2d": _pool_shape,
           "arange": _arange_shape, "conv2d": _conv2d_shape,
           "conv2d_input_grad": _conv2d_input_grad_shape}
