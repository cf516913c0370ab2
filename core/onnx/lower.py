"""Lowering an exported program (ember.export's Spec) to an ONNX graph, op by op.

Each ember op has one lowering function below (the table LOWER); sizes that follow a
dynamic dimension are computed in the graph from the inputs' shapes (Shape -> Gather ->
Mul/Add), so one ONNX model serves every batch size and sequence length.  Index checks are
left out (ONNX has no way to raise); everything else is lowered or refused with an error
naming the op and, where ONNX has it at a later opset, that opset.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..errors import EmberError
from ..export.symbolic import Expr
from ..export.trace import Ref, Spec

INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
MIN_OPSET, MAX_OPSET = 14, 21


class OnnxExportError(EmberError, RuntimeError):
    """A program that cannot be written as an ONNX model (an op without a lowering...).

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


def onnx_dtype(dtype: D.DType) -> int:
    from onnx import TensorProto as T
    return {"bool": T.BOOL, "uint8": T.UINT8, "int8": T.INT8, "int16": T.INT16,
            "int32": T.INT32, "int64": T.INT64, "float16": T.FLOAT16, "bfloat16": T.BFLOAT16,
            "float32": T.FLOAT, "float64": T.DOUBLE}[dtype.name]


class Lowering:
    """Builds the ONNX nodes, initializers and value names for one Spec."""

    def __init__(self, spec: Spec, opset: int, weights: dict):
        import onnx.helper
        self.helper = onnx.helper
        self.spec = spec
        self.opset = opset
        self.weights = weights
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}          # value index -> ONNX name
        self.dtypes: dict = {}         # value index -> ember dtype
        self.shapes: dict = {}         # value index -> shape (ints and Exprs)
        self.dim_sources: dict = {}    # dim name -> (input ONNX name, axis)
        self._dims: dict = {}          # dim name -> ONNX name of its 1-D int64 size
        self._count = 0

    # -- names -------------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def emit(self, op_type: str, inputs: list, hint: str | None = None, **attrs) -> str:
        out = self.fresh(hint or op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, inputs, [out],
                                                name=f"{op_type}_{self._count}", **attrs))
        return out

    def const(self, array, hint: str = "const") -> str:
        from onnx import numpy_helper
        array = np.asarray(array)
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def scalar(self, value, dtype: D.DType) -> str:
        """A 0-d tensor of `dtype` for a Python number or an Expr."""
        if isinstance(value, Expr):
            return self.expr_scalar(value, dtype)
        if dtype is D.bfloat16:
            import ml_dtypes
            return self.const(np.array(value, dtype=ml_dtypes.bfloat16))
        return self.const(np.array(value, dtype=dtype.np))

    # -- sizes in dynamic dimensions ---------------------------------------------------------
    def dim(self, name: str) -> str:
        """1-D int64 [size of dimension `name`], read from an input's shape."""
        if name not in self._dims:
            source, axis = self.dim_sources[name]
            shape = self.emit("Shape", [source], "shape")
            self._dims[name] = self.emit("Gather", [shape, self.const(np.array([axis],
                                                                               np.int64))],
                                         f"dim_{name}", axis=0)
        return self._dims[name]

    def expr_1d(self, e: Expr) -> str:
        """1-D int64 [e] for an integer Expr."""
        out = None
        for name, power in e.powers.items():
            if power != 1:
                raise OnnxExportError(f"onnx: the size {e!r} divides by a dimension, which an "
                                      "integer shape cannot")
            d = self.dim(name)
            out = d if out is None else self.emit("Mul", [out, d])
        if e.coef != 1:
            out = self.emit("Mul", [out, self.const(np.array([e.coef], np.int64))])
        if e.offset:
            out = self.emit("Add", [out, self.const(np.array([e.offset], np.int64))])
        return out

    def expr_scalar(self, e: Expr, dtype: D.DType) -> str:
        to = onnx_dtype(dtype)
        top = [n for n, p in e.powers.items() if p > 0]
        bottom = [n for n, p in e.powers.items() if p < 0]

        def product(names):
            out = None
            for n in names:
                out = self.dim(n) if out is None else self.emit("Mul", [out, self.dim(n)])
            return self.emit("Cast", [out], to=to)
        value = product(top) if top else self.const(np.array([1], dtype.np))
        if bottom:
            value = self.emit("Div", [value, product(bottom)])
        if e.coef != 1:
            value = self.emit("Mul", [value, self.const(np.array([e.coef], dtype.np))])
        if e.offset:
            value = self.emit("Add", [value, self.const(np.array([e.offset], dtype.np))])
        return self.emit("Squeeze", [value, self.const(np.array([0], np.int64))])

    def ints(self, values) -> str:
        """A 1-D int64 tensor of ints and Exprs (shapes, slice bounds)."""
        values = list(values)
        if not any(isinstance(v, Expr) for v in values):
            return self.const(np.array(values, np.int64).reshape(-1), "ints")
        pieces, run = [], []
        for v in values:
            if isinstance(v, Expr):
                if run:
                    pieces.append(self.const(np.array(run, np.int64)))
                    run = []
                pieces.append(self.expr_1d(v))
            else:
                run.append(v)
        if run:
            pieces.append(self.const(np.array(run, np.int64)))
        return pieces[0] if len(pieces) == 1 else self.emit("Concat", pieces, "shape", axis=0)

    # -- the program -------------------------------------------------------------------------
    def run(self, input_names: list) -> list:
        spec = self.spec
        args = spec.arg_inputs()
        for k, i in enumerate(spec.inputs):
            self.dtypes[k], self.shapes[k] = i.dtype, i.shape
            if i.kind == "input":
                self.names[k] = input_names[k]
                for axis, n in enumerate(i.shape):
                    if isinstance(n, Expr) and n.plain and n.plain not in self.dim_sources:
                        self.dim_sources[n.plain] = (input_names[k], axis)
            else:
                from onnx import numpy_helper
                self.names[k] = i.name
                array = self.weights[i.name]
                self.initializers.append(numpy_helper.from_array(array, i.name))
        missing = {d for i in args for n in i.shape if isinstance(n, Expr)
                   for d in n.dims} - set(self.dim_sources)
        if missing:
            raise OnnxExportError(f"onnx: dimensions {sorted(missing)} are never an input's "
                                  "size on their own")
        made = len(spec.inputs)
        for k, node in enumerate(spec.nodes):
            if node.kind == "check":
                continue
            lower = LOWER.get(node.op)
            if lower is None:
                raise OnnxExportError(_missing(node.op, self.opset))
            if node.inplace:
                raise OnnxExportError(f"onnx: node {k} ({node.op}) writes into its input in "
                                      "place; ONNX graphs are functional: write the model's "
                                      "forward out of place (y = x + 1, not x.add_(1))")
            ins = [self.names[a.index] if isinstance(a, Ref) else a for a in node.args]
            try:
                out = lower(self, node, ins, node.attrs)
            except OnnxExportError as exc:
                raise OnnxExportError(f"onnx: node {k} ({node.op}): {exc}") from None
            self.names[made], self.dtypes[made], self.shapes[made] = out, node.dtype, node.shape
            made += 1
        return [self.names[r.index] for r in _tensor_leaves(spec.outputs)]

    def arg_dtype(self, node) -> D.DType:
        """The dtype of the node's first array argument (what scalars are compared in)."""
        for a in node.args:
            if isinstance(a, Ref):
                return self.dtypes[a.index]
        return node.dtype

    def operand(self, x, dtype: D.DType) -> str:
        return x if isinstance(x, str) else self.scalar(x, dtype)


def _tensor_leaves(structure) -> list:
    from ..graph.ir import flatten
    return [leaf for leaf in flatten(structure) if isinstance(leaf, Ref)]


def _missing(op: str, opset: int) -> str:
    later = LATER.get(op)
    if later is not None:
        onnx_op, version = later
        return (f"onnx: ember op {op!r} lowers to ONNX {onnx_op}, which needs opset {version}; "
                f"export with opset_version={version} or later (this export: {opset})")
    return (f"onnx: ember op {op!r} has no ONNX lowering (ember.onnx lowers "
            f"{len(LOWER)} ops: {', '.join(sorted(LOWER))})")


# --- the lowerings --------------------------------------------------------------------------

def _unary(onnx_op):
    def lower(L, node, ins, attrs):
        return L.emit(onnx_op, ins)
    return lower


def _unary_float(onnx_op):
    """Ops that are the identity on integers and bools in ember (floor, ceil, round, sign)."""
    def lower(L, node, ins, attrs):
        if node.dtype.category != D.FLOAT and not (onnx_op == "Sign" and
                                                   node.dtype is not D.bool_):
            return L.emit("Identity", ins)
        return L.emit(onnx_op, ins)
    return lower


def _composed(*steps):
    """x -> steps applied in turn; a step is (onnx op, constant second operand or None)."""
    def lower(L, node, ins, attrs):
        x = ins[0]
        for onnx_op, other in steps:
            x = L.emit(onnx_op, [x] if other is None else [x, L.scalar(other, node.dtype)])
        return x
    return lower


def _isfinite(L, node, ins, attrs):
    bad = L.emit("Or", [L.emit("IsNaN", ins), L.emit("IsInf", ins)])
    return L.emit("Not", [bad])


def _binary(onnx_op, compare=False):
    def lower(L, node, ins, attrs):
        dtype = L.arg_dtype(node) if compare else node.dtype
        return L.emit(onnx_op, [L.operand(x, dtype) for x in ins])
    return lower


def _ne(L, node, ins, attrs):
    return L.emit("Not", [_binary("Equal", True)(L, node, ins, attrs)])


def _floor_divide(L, node, ins, attrs):
    x, y = (L.operand(v, node.dtype) for v in ins)
    if node.dtype.category == D.FLOAT:
        return L.emit("Floor", [L.emit("Div", [x, y])])
    q = L.emit("Div", [x, y])                 # integers: truncates toward zero
    zero = L.scalar(0, node.dtype)
    inexact = L.emit("Not", [L.emit("Equal", [L.emit("Mod", [x, y], fmod=0), zero])])
    signs = L.emit("Xor", [L.emit("Less", [x, zero]), L.emit("Less", [y, zero])])
    fix = L.emit("Cast", [L.emit("And", [inexact, signs])], to=onnx_dtype(node.dtype))
    return L.emit("Sub", [q, fix])


def _remainder(L, node, ins, attrs):
    x, y = (L.operand(v, node.dtype) for v in ins)
    if node.dtype.category != D.FLOAT:
        return L.emit("Mod", [x, y], fmod=0)   # the sign of the divisor, as Python's %
    r = L.emit("Mod", [x, y], fmod=1)
    zero = L.scalar(0, node.dtype)
    wrong = L.emit("And", [L.emit("Not", [L.emit("Equal", [r, zero])]),
                           L.emit("Xor", [L.emit("Less", [r, zero]),
                                          L.emit("Less", [y, zero])])])
    return L.emit("Where", [wrong, L.emit("Add", [r, y]), r])


def _where(L, node, ins, attrs):
    cond, x, y = ins
    return L.emit("Where", [cond, L.operand(x, node.dtype), L.operand(y, node.dtype)])


def _cast(L, node, ins, attrs):
    return L.emit("Cast", ins, to=onnx_dtype(attrs["dtype"]))


def _relu(L, node, ins, attrs):
    return L.emit("Relu", ins)


def _softmax(L, node, ins, attrs):
    return L.emit("Softmax", ins, axis=attrs["axis"])


def _clamp(L, node, ins, attrs):
    """The where() form (ops/elementwise.py's decomposition): nan stays nan, as in ember."""
    x = ins[0]
    for bound, cmp in ((attrs["lo"], "Less"), (attrs["hi"], "Greater")):
        if bound is not None:
            b = L.scalar(bound, node.dtype)
            x = L.emit("Where", [L.emit(cmp, [x, b]), b, x])
    return x


def _log_softmax(L, node, ins, attrs):
    return L.emit("LogSoftmax", ins, axis=attrs["axis"])


def _linear(L, node, ins, attrs):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 and ins[2] is not None else None
    if len(L.shapes[node.args[0].index]) == 2:
        return L.emit("Gemm", [x, w] + ([b] if b else []), transB=1)
    y = L.emit("MatMul", [x, L.emit("Transpose", [w], perm=[1, 0])])
    return L.emit("Add", [y, b]) if b else y


def _cols(L, x, start: int, stop: int) -> str:
    return L.emit("Slice", [x, L.ints([start]), L.ints([stop]), L.ints([1])])


def _lstm_cell(L, node, ins, attrs):
    """ops/rnn.py's lstm_cell: (N, 7H) = h, c, tanh(c), i, f, g, o."""
    gates, c = ins
    return _lstm_cell_nodes(L, gates, c, int(L.shapes[node.args[1].index][-1]))


def _lstm_sequence(L, node, ins, attrs):
    """ops/rnn.py's lstm_sequence: its steps unrolled (lstm_cell's nodes per step), the
    rows of every step's (B, 7H) concatenated in step order."""
    gi, h, c, w_hh_t = ins
    n = int(L.shapes[node.args[2].index][-1])
    steps = int(attrs["steps"])
    cells = [None] * steps
    for t in (range(steps - 1, -1, -1) if attrs["reverse"] else range(steps)):
        rows_t = _step_rows(L, gi, t, steps, 4 * n)
        gates = L.emit("Add", [rows_t, L.emit("MatMul", [h, w_hh_t])])
        cells[t] = _lstm_cell_nodes(L, gates, c, n)
        h, c = _cols(L, cells[t], 0, n), _cols(L, cells[t], n, 2 * n)
    return cells[0] if steps == 1 else L.emit("Concat", cells, axis=0)


def _step_rows(L, x, t: int, steps: int, width: int) -> str:
    """Step t's rows of a (steps * B, width) input, B possibly a dynamic dimension (the
    batch of an export with dynamic axes): x as (steps, B, width), its slice t."""
    x3 = L.emit("Reshape", [x, L.ints([steps, -1, width])])
    return L.emit("Reshape", [L.emit("Slice", [x3, L.ints([t]), L.ints([t + 1]), L.ints([0])]),
                              L.ints([-1, width])])


def _lstm_cell_nodes(L, gates, c, n):
    i, f, g, o = (L.emit("Tanh" if k == 2 else "Sigmoid", [_cols(L, gates, k * n, (k + 1) * n)])
                  for k in range(4))
    c2 = L.emit("Add", [L.emit("Mul", [f, c]), L.emit("Mul", [i, g])])
    tc = L.emit("Tanh", [c2])
    return L.emit("Concat", [L.emit("Mul", [o, tc]), c2, tc, i, f, g, o], axis=1)


def _gru_cell(L, node, ins, attrs):
    """ops/rnn.py's gru_cell: the new h from gi, gh (r, z, n) and h."""
    gi, gh, h = ins
    return _gru_cell_nodes(L, gi, gh, h, int(L.shapes[node.args[2].index][-1]))[0]


def _gru_sequence(L, node, ins, attrs):
    """ops/rnn.py's gru_sequence: its steps unrolled, per step (B, 5H) = h, r, z, n and
    W_hn h_prev + b_hn, the rows of every step concatenated in step order."""
    gi, h, w_hh_t, b_hh = ins
    n = int(L.shapes[node.args[1].index][-1])
    steps = int(attrs["steps"])
    ys = [None] * steps
    for t in (range(steps - 1, -1, -1) if attrs["reverse"] else range(steps)):
        gi_t = _step_rows(L, gi, t, steps, 3 * n)
        gh = L.emit("Add", [L.emit("MatMul", [h, w_hh_t]), b_hh])
        h, r, z, new = _gru_cell_nodes(L, gi_t, gh, h, n)
        ys[t] = L.emit("Concat", [h, r, z, new, _cols(L, gh, 2 * n, 3 * n)], axis=1)
    return ys[0] if steps == 1 else L.emit("Concat", ys, axis=0)


def _gru_cell_nodes(L, gi, gh, h, n):
    rz = L.emit("Sigmoid", [L.emit("Add", [_cols(L, gi, 0, 2 * n), _cols(L, gh, 0, 2 * n)])])
    r, z = _cols(L, rz, 0, n), _cols(L, rz, n, 2 * n)
    new = L.emit("Tanh", [L.emit("Add", [_cols(L, gi, 2 * n, 3 * n),
                                         L.emit("Mul", [r, _cols(L, gh, 2 * n, 3 * n)])])])
    return L.emit("Add", [new, L.emit("Mul", [z, L.emit("Sub", [h, new])])]), r, z, new


def _atan2(L, node, ins, attrs):
    """ops/special.py's atan2 with IEEE quadrants: the sign of a zero read as 1 / zero."""
    y, x = ins
    dtype = node.dtype
    one, zero, pi = (L.scalar(v, dtype) for v in (1.0, 0.0, math.pi))

    def negative(v):          # v < 0, or v is -0.0 (1 / -0.0 is -inf)
        return L.emit("Or", [L.emit("Less", [v, zero]),
                             L.emit("Less", [L.emit("Div", [one, v]), zero])])
    yneg, xneg = negative(y), negative(x)
    sign = L.emit("Where", [yneg, L.scalar(-1.0, dtype), one])
    base = L.emit("Atan", [L.emit("Div", [y, x])])
    out = L.emit("Where", [xneg, L.emit("Add", [base, L.emit("Mul", [sign, pi])]), base])
    zeros = L.emit("And", [L.emit("Equal", [x, zero]), L.emit("Equal", [y, zero])])
    # at the origin: +-pi for x = -0.0, else y's zero (made from its sign: onnxruntime's
    # Where returned +0.0 for a -0.0 branch)
    at_zero = L.emit("Where", [xneg, pi, zero])
    out = L.emit("Where", [zeros, L.emit("Mul", [sign, at_zero]), out])
    inf = L.scalar(math.inf, dtype)
    infs = L.emit("And", [L.emit("Equal", [L.emit("Abs", [x]), inf]),
                          L.emit("Equal", [L.emit("Abs", [y]), inf])])
    corner = L.emit("Mul", [sign, L.emit("Where", [xneg, L.scalar(3 * math.pi / 4, dtype),
                                                   L.scalar(math.pi / 4, dtype)])])
    return L.emit("Where", [infs, corner, out])


def _bitwise(onnx_op, logical):
    def lower(L, node, ins, attrs):
        if node.dtype is D.bool_:
            return L.emit(logical, ins)
        if L.opset < 18:
            raise OnnxExportError(f"onnx: ember op {node.op!r} on integers lowers to ONNX "
                                  f"{onnx_op}, which needs opset 18; export with "
                                  f"opset_version=18 or later (this export: {L.opset})")
        return L.emit(onnx_op, ins)
    return lower


_UNSIGNED = {"uint8": np.uint8, "int8": np.uint8, "int16": np.uint16, "int32": np.uint32,
             "int64": np.uint64}


def _shift(direction):
    """ops/bitwise.py's shifts: ONNX BitShift works on unsigned integers (bits kept through
    the casts); a signed right shift is ~(~x >> s) for negative x; a count past the width
    or negative shifts everything out."""
    def lower(L, node, ins, attrs):
        from onnx import helper
        x, count = ins
        dtype = node.dtype
        width = 8 * dtype.itemsize
        unsigned = helper.np_dtype_to_tensor_dtype(np.dtype(_UNSIGNED[dtype.name]))
        signed = helper.np_dtype_to_tensor_dtype(dtype.np)
        zero = L.scalar(0, dtype)
        out_of_range = L.emit("Or", [L.emit("Less", [count, zero]),
                                     L.emit("GreaterOrEqual", [count, L.scalar(width, dtype)])])
        safe = L.emit("Cast", [L.emit("Where", [out_of_range, zero, count])], to=unsigned)
        neg = None
        if direction == "RIGHT" and dtype.is_signed:
            neg = L.emit("Less", [x, zero])
            x = L.emit("Where", [neg, L.emit("Sub", [L.scalar(-1, dtype), x]), x])
        shifted = L.emit("BitShift", [L.emit("Cast", [x], to=unsigned), safe],
                         direction=direction)
        out = L.emit("Cast", [shifted], to=signed)
        fill = zero
        if neg is not None:
            out = L.emit("Where", [neg, L.emit("Sub", [L.scalar(-1, dtype), out]), out])
            fill = L.emit("Where", [neg, L.scalar(-1, dtype), zero])
        return L.emit("Where", [out_of_range, fill, out])
    return lower


def _topk(L, node, ins, attrs):
    values, index = L.fresh("topk_values"), L.fresh("topk_index")
    L.nodes.append(L.helper.make_node(
        "TopK", [ins[0], L.ints([attrs["k"]])], [values, index], name=f"TopK_{L._count}",
        axis=attrs["axis"], largest=int(attrs["largest"]), sorted=1))
    return index


def _unique(L, node, ins, attrs):
    return L.emit("Unique", ins, sorted=1)


def _take(L, node, ins, attrs):
    return L.emit("Gather", ins, axis=attrs["axis"])


def _gather(L, node, ins, attrs):
    return L.emit("GatherElements", ins, axis=attrs["axis"])


def _scatter_add(L, node, ins, attrs):
    if L.opset < 16:
        raise OnnxExportError(_missing("scatter_add", L.opset))
    x, index, src = ins
    return L.emit("ScatterElements", [x, index, L.operand(src, node.dtype)],
                  axis=attrs["axis"], reduction="add")


def _reshape(L, node, ins, attrs):
    return L.emit("Reshape", [ins[0], L.ints(attrs["shape"])], allowzero=1)


def _permute(L, node, ins, attrs):
    return L.emit("Transpose", ins, perm=list(attrs["dims"]))


def _expand(L, node, ins, attrs):
    return L.emit("Expand", [ins[0], L.ints(attrs["shape"])])


def _slice(L, node, ins, attrs):
    starts, ends, axes, steps = [], [], [], []
    for axis, s in enumerate(attrs["index"]):
        if not isinstance(s, slice):
            raise OnnxExportError(f"a slice index of {s!r}")
        step = 1 if s.step is None else s.step
        if s.start is None and s.stop is None and step == 1:
            continue
        # None bounds: ONNX clamps out-of-range ones to the ends, as Python's slices do
        starts.append((0 if step > 0 else INT64_MAX) if s.start is None else s.start)
        ends.append((INT64_MAX if step > 0 else INT64_MIN) if s.stop is None else s.stop)
        axes.append(axis)
        steps.append(step)
    if not axes:
        return L.emit("Identity", ins)
    return L.emit("Slice", [ins[0], L.ints(starts), L.ints(ends), L.ints(axes),
                            L.ints(steps)])


def _flip(L, node, ins, attrs):
    axes = list(attrs["axes"])
    if not axes:
        return L.emit("Identity", ins)
    n = len(axes)
    return L.emit("Slice", [ins[0], L.ints([-1] * n), L.ints([INT64_MIN] * n),
                            L.ints(axes), L.ints([-1] * n)])


def _pad(L, node, ins, attrs):
    pads = attrs["pads"]
    flat = [lo for lo, _ in pads] + [hi for _, hi in pads]
    value = L.scalar(attrs["value"], node.dtype)
    return L.emit("Pad", [ins[0], L.ints(flat), value], mode="constant")


def _concatenate(L, node, ins, attrs):
    return L.emit("Concat", ins, axis=attrs["axis"])


def _identity(L, node, ins, attrs):
    return L.emit("Identity", ins)


def _matmul(L, node, ins, attrs):
    return L.emit("MatMul", ins)


def _unfold(L, node, ins, attrs):
    """im2col with slices: one strided window offset per kernel tap, stacked on a new axis
    (ember's channel order: c * kh * kw + i * kw + j)."""
    x = ins[0]
    n, c, h, w = L.shapes[node.args[0].index]
    if isinstance(h, Expr) or isinstance(w, Expr) or isinstance(c, Expr):
        raise OnnxExportError("unfold over dynamic channels or spatial sizes")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (attrs["kernel_size"], attrs["dilation"],
                                              attrs["padding"], attrs["stride"])
    if ph or pw:
        x = L.emit("Pad", [x, L.ints([0, 0, ph, pw, 0, 0, ph, pw]),
                           L.scalar(0, node.dtype)], mode="constant")
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    axis2 = L.const(np.array([2], np.int64))
    taps = []
    for i in range(kh):
        for j in range(kw):
            tap = L.emit("Slice", [x, L.ints([i * dh, j * dw]),
                                   L.ints([i * dh + sh * (oh - 1) + 1,
                                           j * dw + sw * (ow - 1) + 1]),
                                   L.ints([2, 3]), L.ints([sh, sw])])
            taps.append(L.emit("Unsqueeze", [tap, axis2]))
    cols = taps[0] if len(taps) == 1 else L.emit("Concat", taps, axis=2)
    return L.emit("Reshape", [cols, L.ints(node.shape)], allowzero=1)


def _fold(L, node, ins, attrs):
    if L.opset < 18:
        raise OnnxExportError(_missing("fold", L.opset))
    (ph, pw) = attrs["padding"]
    return L.emit("Col2Im", [ins[0], L.ints(attrs["output_size"]),
                             L.ints(attrs["kernel_size"])],
                  dilations=list(attrs["dilation"]), pads=[ph, pw, ph, pw],
                  strides=list(attrs["stride"]))


def _max_pool2d(L, node, ins, attrs):
    (ph, pw), (eh, ew) = attrs["padding"], attrs["extra"]
    return L.emit("MaxPool", ins, kernel_shape=list(attrs["kernel_size"]),
                  strides=list(attrs["stride"]), pads=[ph, pw, ph + eh, pw + ew],
                  dilations=list(attrs["dilation"]))


def _conv2d(L, node, ins, attrs):
    """ops/nn.py's conv2d (x, weight[, bias]): ONNX Conv."""
    (ph, pw), w = attrs["padding"], L.shapes[node.args[1].index]
    return L.emit("Conv", ins, kernel_shape=[int(w[2]), int(w[3])],
                  strides=list(attrs["stride"]), pads=[ph, pw, ph, pw],
                  dilations=list(attrs["dilation"]), group=int(attrs["groups"]))


def _conv2d_input_grad(L, node, ins, attrs):
    """ops/nn.py's conv2d_input_grad (g, weight; conv_transpose2d's op): ONNX
    ConvTranspose, output_padding making up input_size."""
    g, w = L.shapes[node.args[0].index], L.shapes[node.args[1].index]
    if isinstance(g[2], Expr) or isinstance(g[3], Expr):
        raise OnnxExportError("conv2d_input_grad over dynamic spatial sizes")
    k, d, p, s = (int(w[2]), int(w[3])), attrs["dilation"], attrs["padding"], attrs["stride"]
    extra = [int(attrs["input_size"][i]) - ((int(g[2 + i]) - 1) * s[i] - 2 * p[i] +
                                            d[i] * (k[i] - 1) + 1) for i in (0, 1)]
    return L.emit("ConvTranspose", ins, kernel_shape=list(k), strides=list(s),
                  pads=[p[0], p[1], p[0], p[1]], dilations=list(d),
                  group=int(attrs["groups"]), output_padding=extra)


def _reduce(onnx_op, axes_input_from):
    def lower(L, node, ins, attrs):
        axes = list(attrs["axes"])
        if not axes:
            return L.emit("Identity", ins)
        keep = int(attrs["keepdims"])
        if L.opset >= axes_input_from:
            return L.emit(onnx_op, [ins[0], L.ints(axes)], keepdims=keep)
        return L.emit(onnx_op, ins, axes=axes, keepdims=keep)
    return lower


def _l2_norm(L, node, ins, attrs):
    if not attrs["axes"]:                     # a 0-d x: its absolute value
        return L.emit("Abs", ins)
    return _reduce("ReduceL2", 18)(L, node, ins, attrs)


def _var(L, node, ins, attrs):
    """ops/reduce.py's var: the centered squares summed over max(count - correction, 0),
    the count read from x's shape in the graph (dynamic sizes too)."""
    x, axes, dtype = ins[0], list(attrs["axes"]), node.dtype
    if not axes:                              # a 0-d x: (x - x)^2 / max(1 - correction, 0)
        d = L.emit("Sub", [x, x])
        count = L.scalar(1.0, dtype)
    else:
        mean = _reduce("ReduceMean", 18)(L, node, [x], {"axes": axes, "keepdims": True})
        d = L.emit("Sub", [x, mean])
        sizes = L.emit("Gather", [L.emit("Shape", [x]), L.ints(axes)])
        count = L.emit("Cast", [L.emit("ReduceProd", [sizes], keepdims=0)],
                       to=onnx_dtype(dtype))
    total = _reduce("ReduceSum", 13)(L, node, [L.emit("Mul", [d, d])], attrs) if axes else \
        L.emit("Mul", [d, d])
    dof = L.emit("Max", [L.emit("Sub", [count, L.scalar(attrs["correction"], dtype)]),
                         L.scalar(0.0, dtype)])
    return L.emit("Div", [total, dof])


def _logical_reduce(onnx_op):
    def lower(L, node, ins, attrs):
        from onnx import TensorProto
        if not attrs["axes"]:
            return L.emit("Cast", ins, to=TensorProto.BOOL)
        as_int = L.emit("Cast", [L.emit("Cast", ins, to=TensorProto.BOOL)],
                        to=TensorProto.INT32)
        reduced = _reduce(onnx_op, 18)(L, node, [as_int], attrs)
        return L.emit("Cast", [reduced], to=TensorProto.BOOL)
    return lower


def _arg(onnx_op):
    def lower(L, node, ins, attrs):
        x, axis, keep = ins[0], attrs["axis"], int(attrs["keepdims"])
        if axis is None:
            x = L.emit("Reshape", [x, L.ints([-1])])
            axis, keep = 0, 0
        return L.emit(onnx_op, [x], axis=axis, keepdims=keep)
    return lower


def _full(L, node, ins, attrs):
    from onnx import numpy_helper
    dtype = attrs["dtype"]
    value = numpy_helper.from_array(np.array([attrs["value"]], dtype=_np(dtype)), "value")
    return L.emit("ConstantOfShape", [L.ints(attrs["shape"])], value=value)


def _arange(L, node, ins, attrs):
    dtype = attrs["dtype"]
    return L.emit("Range", [L.scalar(attrs[k], dtype) for k in ("start", "stop", "step")])


def _np(dtype):
    if dtype is D.bfloat16:
        import ml_dtypes
        return ml_dtypes.bfloat16
    return dtype.np


LOWER = {
    "neg": _unary("Neg"), "abs": _unary("Abs"), "exp": _unary("Exp"), "log": _unary("Log"),
    "sqrt": _unary("Sqrt"), "sin": _unary("Sin"), "cos": _unary("Cos"),
    "tanh": _unary("Tanh"), "sigmoid": _unary("Sigmoid"), "erf": _unary("Erf"),
    "reciprocal": _unary("Reciprocal"), "logical_not": _unary("Not"),
    "isnan": _unary("IsNaN"), "isinf": _unary("IsInf"), "isfinite": _isfinite,
    "sign": _unary_float("Sign"), "floor": _unary_float("Floor"),
    "ceil": _unary_float("Ceil"), "round": _unary_float("Round"),
    "log1p": _composed(("Add", 1), ("Log", None)),
    "expm1": _composed(("Exp", None), ("Sub", 1)),
    "rsqrt": _composed(("Sqrt", None), ("Reciprocal", None)),
    "relu": _relu, "softmax": _softmax, "log_softmax": _log_softmax, "linear": _linear,
    "clamp": _clamp,
    "lstm_cell": _lstm_cell,
    "lstm_sequence": _lstm_sequence, "gru_sequence": _gru_sequence,
    "gru_cell": _gru_cell, "atan2": _atan2, "bitwise_and": _bitwise("BitwiseAnd", "And"),
    "bitwise_or": _bitwise("BitwiseOr", "Or"), "bitwise_xor": _bitwise("BitwiseXor", "Xor"),
    "bitwise_not": _bitwise("BitwiseNot", "Not"), "bitwise_left_shift": _shift("LEFT"),
    "bitwise_right_shift": _shift("RIGHT"), "topk": _topk, "unique": _unique,
    "add": _binary("Add"), "sub": _binary("Sub"), "mul": _binary("Mul"),
    "div": _binary("Div"), "pow": _binary("Pow"), "maximum": _binary("Max"),
    "minimum": _binary("Min"), "remainder": _remainder, "floor_divide": _floor_divide,
    "eq": _binary("Equal", True), "ne": _ne, "lt": _binary("Less", True),
    "le": _binary("LessOrEqual", True), "gt": _binary("Greater", True),
    "ge": _binary("GreaterOrEqual", True), "logical_and": _binary("And", True),
    "logical_or": _binary("Or", True), "logical_xor": _binary("Xor", True),
    "where": _where, "cast": _cast, "take": _take, "gather": _gather,
    "scatter_add": _scatter_add, "matmul": _matmul, "reshape": _reshape,
    "permute": _permute, "expand": _expand, "slice": _slice, "flip": _flip, "pad": _pad,
    "concatenate": _concatenate, "contiguous": _identity, "unfold": _unfold, "fold": _fold,
    "max_pool2d": _max_pool2d, "conv2d": _conv2d, "conv2d_input_grad": _conv2d_input_grad,
    "sum": _reduce("ReduceSum", 13), "prod": _reduce("ReduceProd", 18), "l2_norm": _l2_norm,
    "var": _var,
    "max": _reduce("ReduceMax", 18), "min": _reduce("ReduceMin", 18),
    "any": _logical_reduce("ReduceMax"), "all": _logical_reduce("ReduceMin"),
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"), "full": _full, "arange": _arange,
}

# ops whose ONNX counterpart arrives at a later opset than some exports ask for
LATER = {"fold": ("Col2Im", 18), "scatter_add": ("ScatterElements(reduction='add')", 16)}


def to_model(spec: Spec, weights: dict, *, opset: int, input_names: list,
             output_names: list, output_axes: dict):
    """The ONNX ModelProto for `spec` (weights: name -> host array), checked by
    onnx.checker."""
    import onnx
    from onnx import helper
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise OnnxExportError(f"onnx: opset_version={opset}; ember.onnx writes opsets "
                              f"{MIN_OPSET} to {MAX_OPSET}")
    L = Lowering(spec, opset, weights)
    outs = L.run(input_names)
    if len(output_names) < len(outs):
        output_names = list(output_names) + [
            f"output_{k}" if len(outs) > 1 else "output" for k in range(len(output_names),
                                                                        len(outs))]
    inputs = [helper.make_tensor_value_info(name, onnx_dtype(i.dtype), _dims(i.shape))
              for name, i in zip(input_names, spec.arg_inputs())]
    outputs = []
    refs = _tensor_leaves(spec.outputs)
    for k, (ref, src) in enumerate(zip(refs, outs)):
        name = output_names[k]
        L.nodes.append(helper.make_node("Identity", [src], [name], name=f"output_{k}"))
        shape = _dims(L.shapes[ref.index])
        for axis, label in output_axes.get(name, {}).items():
            if 0 <= axis < len(shape):
                shape[axis] = label
        outputs.append(helper.make_tensor_value_info(name, onnx_dtype(L.dtypes[ref.index]),
                                                     shape))
    graph = helper.make_graph(L.nodes, "ember", inputs, outputs, L.initializers)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="ember",
                              ir_version=helper.find_min_ir_version_for(opsets))
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as exc:
        raise OnnxExportError(f"onnx: the lowered model fails onnx.checker: {exc}") from None
    return model


def _dims(shape) -> list:
    out = []
    for n in shape:
        if isinstance(n, Expr):
            out.append(n.plain or repr(n).replace(" ", ""))
        else:
            out.append(int(n))
    return out
