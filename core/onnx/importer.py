"""ember.onnx.load: an ONNX graph as an ember Module that runs its nodes with ember ops.

Every ONNX op below is a few ember ops, so an imported model runs on every ember device,
differentiates, compiles (ember.compile) and exports again (ember.export).  Size
arithmetic (Shape -> Gather -> Concat -> Reshape, as exporters write for dynamic axes)
stays on the host in NumPy, so it never reads a device and never breaks a graph capture.
Float initializers become the module's buffers (moved by .to(device)); small integer ones
stay host constants.  The subset covers what ember.onnx.export writes and the common ops
of torch's exporter (Conv, BatchNormalization, Flatten, Gemm, LayerNormalization...); any
other op is an OnnxImportError naming it.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import EmberError
from ..functional import relu
from ..functional.elementwise import round as round_half_even
from ..nn.module import Module
from ..tensor import Tensor

MAX_HOST_CONSTANT = 64              # integer initializers up to this size stay on the host


class OnnxImportError(EmberError, ValueError):
    """An ONNX model that ember cannot run (an op it does not import, a bad attribute)."""


class OnnxModule(Module):
    """An imported ONNX model: call it with one tensor per graph input."""

    def __init__(self, proto):
        super().__init__()
        from onnx import numpy_helper
        graph = proto.graph
        self.opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
                          0)
        if self.opset < 11:
            raise OnnxImportError(f"onnx.load: the model uses opset {self.opset}; ember "
                                  "imports opset 11 and later")
        init = {t.name for t in graph.initializer}
        self.input_names = [i.name for i in graph.input if i.name not in init]
        self.output_names = [o.name for o in graph.output]
        self._host: dict = {}
        self._buffer_of: dict = {}
        for t in graph.initializer:
            array = numpy_helper.to_array(t)
            if array.dtype.kind in "iub" and array.size <= MAX_HOST_CONSTANT:
                self._host[t.name] = array
            else:
                key = f"w{len(self._buffer_of)}"
                self._buffer_of[t.name] = key
                self.register_buffer(key, _tensor(np.ascontiguousarray(array), None))
        self._nodes = []
        for node in graph.node:
            if node.domain not in ("", "ai.onnx"):
                raise OnnxImportError(f"onnx.load: node {node.name!r} is in domain "
                                      f"{node.domain!r}; ember imports the default domain")
            if node.op_type not in OPS:
                raise OnnxImportError(f"onnx.load: ONNX op {node.op_type!r} (node "
                                      f"{node.name!r}) has no ember import; ember imports "
                                      f"{', '.join(sorted(OPS))}")
            attrs = {a.name: _attribute(a) for a in node.attribute}
            self._nodes.append((node.op_type, list(node.input), list(node.output), attrs,
                                node.name))

    def forward(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise OnnxImportError(f"onnx model: expected {len(self.input_names)} inputs "
                                  f"({', '.join(self.input_names)}), got {len(inputs)}")
        device = inputs[0].device if inputs else next(
            (b.device for b in self.buffers()), None)
        env: dict = dict(self._host)
        for name, key in self._buffer_of.items():
            env[name] = getattr(self, key)
        env.update(zip(self.input_names, inputs))
        env[""] = None
        ctx = _Context(device, self.opset)
        for op_type, ins, outs, attrs, name in self._nodes:
            try:
                args = [env[i] for i in ins]
            except KeyError as exc:
                raise OnnxImportError(f"onnx model: node {name!r} ({op_type}) reads "
                                      f"{exc.args[0]!r}, which nothing makes before it") \
                    from None
            results = OPS[op_type](ctx, args, attrs)
            if not isinstance(results, (tuple, list)):
                results = (results,)
            for out, value in zip(outs, results):
                env[out] = value
        results = [_as_tensor(env[n], device) for n in self.output_names]
        return results[0] if len(results) == 1 else tuple(results)

    def extra_repr(self) -> str:
        return (f"{len(self._nodes)} nodes, opset {self.opset}, inputs "
                f"{self.input_names}, outputs {self.output_names}")


class _Context:
    def __init__(self, device, opset):
        self.device, self.opset = device, opset

    def tensor(self, x):
        return _as_tensor(x, self.device)


def _tensor(array: np.ndarray, device):
    from ..ops.creation import tensor
    return tensor(array, device=device)


def _as_tensor(x, device):
    if type(x) is Tensor or x is None:
        return x
    return _tensor(np.ascontiguousarray(np.asarray(x)), device)


def _attribute(a):
    from onnx import helper
    value = helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "dims"):             # a TensorProto (Constant, ConstantOfShape)
        from onnx import numpy_helper
        return numpy_helper.to_array(value)
    if isinstance(value, list):
        return [v.decode() if isinstance(v, bytes) else v for v in value]
    return value


def _host(x) -> bool:
    return isinstance(x, np.ndarray)


def _ints(x, what: str) -> list:
    if type(x) is Tensor:
        raise OnnxImportError(f"onnx model: {what} is computed on the device from data; ember "
                              "needs it known from shapes and constants")
    return [int(v) for v in np.asarray(x).reshape(-1)]


_DTYPES = {1: D.float32, 2: D.uint8, 3: D.int8, 5: D.int16, 6: D.int32, 7: D.int64,
           9: D.bool_, 10: D.float16, 11: D.float64, 16: D.bfloat16}


def _dtype(code: int) -> D.DType:
    dtype = _DTYPES.get(code)
    if dtype is None:
        raise OnnxImportError(f"onnx model: tensor type {code} has no ember dtype")
    return dtype


# --- ops ------------------------------------------------------------------------------------

def _elementwise(fn, host=None):
    """An op on tensors (ember) or, when every input is a host array, on NumPy arrays."""
    def op(ctx, args, attrs):
        if host is not None and all(_host(a) for a in args):
            return np.asarray(host(*args))
        return fn(*[ctx.tensor(a) if _host(a) else a for a in args])
    return op


def _em(name):
    # ember.<name> is ember.ops.<name> for every name looked up here (relu and round, where
    # the top-level function is a composite, are passed as functions)
    return getattr(ops, name)


def _unary(name, host=None):
    return _elementwise(lambda x: _em(name)(x), host)


def _binary(name, host=None):
    return _elementwise(lambda x, y: _em(name)(_cast_like(x, y), _cast_like(y, x)), host)


def _cast_like(x, other):
    # ONNX binary ops take one dtype; a host constant made by NumPy may be wider
    if type(x) is Tensor and type(other) is Tensor and x.ndim == 0 and x.dtype != other.dtype:
        return x.to(other.dtype)
    return x


def _mod(ctx, args, attrs):
    x, y = args
    fmod = attrs.get("fmod", 0)
    if all(_host(a) for a in args):
        return np.fmod(x, y) if fmod else np.mod(x, y)
    x, y = ctx.tensor(x), ctx.tensor(y)
    r = _em("remainder")(x, y)                  # Python's %: the sign of the divisor
    if fmod:                                    # C's fmod: the sign of the dividend
        r = _em("where")((r != 0) & ((r < 0) != (x < 0)), r - y, r)
    return r


def _cast(ctx, args, attrs):
    dtype = _dtype(attrs["to"])
    x = args[0]
    if _host(x):
        return x.astype(dtype.np)
    return x.to(dtype)


def _shape(ctx, args, attrs):
    shape = np.array(list(args[0].shape), np.int64)
    start, end = attrs.get("start", 0), attrs.get("end", None)
    return shape[start:end]


def _gather(ctx, args, attrs):
    x, index = args
    axis = attrs.get("axis", 0)
    if _host(x) and _host(index):
        return np.take(x, index, axis=axis)
    x = ctx.tensor(x)
    index = np.asarray(index) if _host(index) else index
    if _host(index):
        n = x.shape[axis]
        index = np.where(index < 0, index + n, index)
        flat = _tensor(np.ascontiguousarray(index.reshape(-1).astype(np.int64)), x.device)
    else:
        n = x.shape[axis]
        index = _em("where")(index < 0, index + n, index)
        flat = index.reshape(-1)
    out = _em("index_select")(x, axis % x.ndim, flat)
    shape = list(x.shape[:axis % x.ndim]) + list(index.shape) + list(x.shape[axis % x.ndim + 1:])
    return out.reshape(shape)


def _gather_elements(ctx, args, attrs):
    x, index = (ctx.tensor(a) for a in args)
    return _em("gather")(x, attrs.get("axis", 0), index)


def _scatter_elements(ctx, args, attrs):
    x, index, src = (ctx.tensor(a) for a in args)
    reduction = attrs.get("reduction", "none")
    if reduction != "add":
        raise OnnxImportError(f"onnx model: ScatterElements with reduction={reduction!r}; "
                              "ember imports reduction='add'")
    return x.scatter_add(attrs.get("axis", 0), index, src)


def _reshape(ctx, args, attrs):
    x, shape = args
    shape = _ints(shape, "Reshape's shape")
    if not attrs.get("allowzero", 0):
        shape = [x.shape[k] if n == 0 else n for k, n in enumerate(shape)]
    if _host(x):
        return x.reshape(shape)
    return x.reshape(shape)


def _transpose(ctx, args, attrs):
    x = args[0]
    perm = attrs.get("perm") or list(reversed(range(len(x.shape))))
    return np.transpose(x, perm) if _host(x) else x.permute(*perm)


def _expand(ctx, args, attrs):
    x, shape = args
    shape = _ints(shape, "Expand's shape")
    x_shape = list(x.shape)
    ndim = max(len(shape), len(x_shape))
    shape = [1] * (ndim - len(shape)) + shape
    x_shape = [1] * (ndim - len(x_shape)) + x_shape
    target = [max(a, b) if 1 in (a, b) else a for a, b in zip(x_shape, shape)]
    if _host(x):
        return np.broadcast_to(x.reshape(x_shape), target).copy()
    return x.reshape(x_shape).expand(*target)


def _slice(ctx, args, attrs):
    x = args[0]
    starts = _ints(args[1], "Slice's starts")
    ends = _ints(args[2], "Slice's ends")
    ndim = len(x.shape)
    axes = _ints(args[3], "Slice's axes") if len(args) > 3 and args[3] is not None else \
        list(range(len(starts)))
    steps = _ints(args[4], "Slice's steps") if len(args) > 4 and args[4] is not None else \
        [1] * len(starts)
    index = [slice(None)] * ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        n = x.shape[a]
        # clamp as ONNX does (huge bounds stand for "to the end")
        start, stop, step = slice(s, e, st).indices(n)
        if st < 0 and e < -n:
            stop = None
        index[a % ndim] = slice(start, stop, step)
    index = tuple(index)
    if _host(x):
        return x[index]
    if any(s.step is not None and s.step < 0 for s in index):
        flips = [a for a, s in enumerate(index) if s.step is not None and s.step < 0]
        forward = []
        for a, s in enumerate(index):
            if a in flips:
                n = x.shape[a]
                start, stop, step = s.indices(n)
                count = len(range(start, stop, step))
                last = start + step * (count - 1) if count else 0
                forward.append(slice(last, start + 1, -step) if count else slice(0, 0))
            else:
                forward.append(s)
        return x[tuple(forward)].flip(flips)
    return x[index]


def _pad(ctx, args, attrs):
    x = ctx.tensor(args[0])
    pads = _ints(args[1], "Pad's pads") if len(args) > 1 else attrs["pads"]
    mode = attrs.get("mode", "constant")
    if mode != "constant":
        raise OnnxImportError(f"onnx model: Pad mode {mode!r}; ember imports 'constant'")
    value = 0.0
    if len(args) > 2 and args[2] is not None:
        value = float(np.asarray(args[2]).reshape(-1)[0]) if _host(args[2]) else \
            float(args[2].item())
    n = len(x.shape)
    torch_pads = []
    for axis in reversed(range(n)):             # F.pad: last axis first
        torch_pads += [pads[axis], pads[axis + n]]
    from ..nn import functional as F
    return F.pad(x, tuple(torch_pads), value=value)


def _concat(ctx, args, attrs):
    axis = attrs["axis"]
    args = [a for a in args if a is not None]
    if all(_host(a) for a in args):
        return np.concatenate(args, axis=axis)
    return _em("cat")([ctx.tensor(a) for a in args], axis)


def _axes(args, attrs, ctx):
    if len(args) > 1 and args[1] is not None:
        return _ints(args[1], "axes")
    return list(attrs.get("axes", []))


def _unsqueeze(ctx, args, attrs):
    x = args[0]
    axes = _axes(args, attrs, ctx)
    ndim = len(x.shape) + len(axes)
    shape = list(x.shape)
    for a in sorted(a % ndim for a in axes):
        shape.insert(a, 1)
    return x.reshape(shape)


def _squeeze(ctx, args, attrs):
    x = args[0]
    axes = _axes(args, attrs, ctx)
    ndim = len(x.shape)
    axes = {a % ndim for a in axes} if axes else {a for a, n in enumerate(x.shape) if n == 1}
    shape = [n for a, n in enumerate(x.shape) if a not in axes]
    return x.reshape(shape)


def _reduce(name):
    def op(ctx, args, attrs):
        x = ctx.tensor(args[0])
        if len(args) > 1 and args[1] is not None:
            axes = _ints(args[1], "axes")
        else:
            axes = list(attrs.get("axes", []))
        keep = bool(attrs.get("keepdims", 1))
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return x
            axes = list(range(x.ndim))
        axes = tuple(a % x.ndim for a in axes)
        return getattr(x, name)(axes, keepdim=keep) if name != "sum" else \
            x.sum(axes, keepdim=keep)
    return op


def _arg(name):
    def op(ctx, args, attrs):
        x = ctx.tensor(args[0])
        if attrs.get("select_last_index", 0):
            raise OnnxImportError(f"onnx model: {name} with select_last_index=1")
        return getattr(x, name)(attrs.get("axis", 0), keepdim=bool(attrs.get("keepdims", 1)))
    return op


def _softmax(ctx, args, attrs):
    x = ctx.tensor(args[0])
    axis = attrs.get("axis", -1)
    if ctx.opset < 13:                         # coerced to 2-D before opset 13
        shape = x.shape
        rows = math.prod(shape[:axis % x.ndim])
        return x.reshape(rows, -1).softmax(1).reshape(shape)
    return x.softmax(axis)


def _gemm(ctx, args, attrs):
    a, b = (ctx.tensor(x) for x in args[:2])
    if attrs.get("transA", 0):
        a = a.permute(1, 0)
    if attrs.get("transB", 0):
        b = b.permute(1, 0)
    y = a @ b
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    if alpha != 1.0:
        y = y * alpha
    if len(args) > 2 and args[2] is not None:
        c = ctx.tensor(args[2])
        y = y + (c * beta if beta != 1.0 else c)
    return y


def _matmul(ctx, args, attrs):
    a, b = (ctx.tensor(x) for x in args)
    return a @ b


def _where(ctx, args, attrs):
    if all(_host(a) for a in args):
        return np.where(*args)
    cond, x, y = (ctx.tensor(a) for a in args)
    return _em("where")(cond, _cast_like(x, y), _cast_like(y, x))


def _max_pool(ctx, args, attrs):
    from ..nn import functional as F
    x = ctx.tensor(args[0])
    kernel = attrs["kernel_shape"]
    if len(kernel) != 2:
        raise OnnxImportError(f"onnx model: MaxPool over {len(kernel)} dimensions; ember "
                              "imports 2-D pooling")
    pads = attrs.get("pads", [0, 0, 0, 0])
    strides = attrs.get("strides", [1, 1])
    dilations = attrs.get("dilations", [1, 1])
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise OnnxImportError("onnx model: MaxPool with auto_pad SAME_*")
    ceil = bool(attrs.get("ceil_mode", 0))
    if pads[0] != pads[2] or pads[1] != pads[3]:
        # far-edge padding (what ember writes for ceil_mode): pad with -inf first
        x = F.pad(x, (pads[1], pads[3], pads[0], pads[2]), value=-math.inf)
        pads = [0, 0, 0, 0]
    return F.max_pool2d(x, tuple(kernel), tuple(strides), (pads[0], pads[1]),
                        tuple(dilations), ceil_mode=ceil)


def _average_pool(ctx, args, attrs):
    from ..nn import functional as F
    x = ctx.tensor(args[0])
    pads = attrs.get("pads", [0, 0, 0, 0])
    if pads[0] != pads[2] or pads[1] != pads[3]:
        raise OnnxImportError("onnx model: AveragePool with uneven padding")
    return F.avg_pool2d(x, tuple(attrs["kernel_shape"]), tuple(attrs.get("strides", [1, 1])),
                        (pads[0], pads[1]), ceil_mode=bool(attrs.get("ceil_mode", 0)),
                        count_include_pad=bool(attrs.get("count_include_pad", 0)))


def _global_average_pool(ctx, args, attrs):
    x = ctx.tensor(args[0])
    return x.mean(tuple(range(2, x.ndim)), keepdim=True)


def _conv(ctx, args, attrs):
    from ..nn import functional as F
    x, w = ctx.tensor(args[0]), ctx.tensor(args[1])
    b = ctx.tensor(args[2]) if len(args) > 2 else None
    if w.ndim != 4:
        raise OnnxImportError(f"onnx model: Conv over {w.ndim - 2} dimensions; ember imports "
                              "2-D convolution")
    pads = attrs.get("pads", [0, 0, 0, 0])
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID") or pads[0] != pads[2] or \
            pads[1] != pads[3]:
        raise OnnxImportError("onnx model: Conv with uneven or automatic padding")
    return F.conv2d(x, w, b, tuple(attrs.get("strides", [1, 1])), (pads[0], pads[1]),
                    tuple(attrs.get("dilations", [1, 1])), attrs.get("group", 1))


def _batch_norm(ctx, args, attrs):
    from ..nn import functional as F
    x, scale, bias, mean, var = (ctx.tensor(a) for a in args[:5])
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, attrs.get("epsilon", 1e-5))


def _layer_norm(ctx, args, attrs):
    from ..nn import functional as F
    x = ctx.tensor(args[0])
    axis = attrs.get("axis", -1) % x.ndim
    scale = ctx.tensor(args[1])
    bias = ctx.tensor(args[2]) if len(args) > 2 and args[2] is not None else None
    return F.layer_norm(x, tuple(x.shape[axis:]), scale, bias, attrs.get("epsilon", 1e-5))


def _flatten(ctx, args, attrs):
    x = args[0]
    axis = attrs.get("axis", 1) % max(len(x.shape), 1)
    return x.reshape(math.prod(x.shape[:axis]), -1)


def _gelu(ctx, args, attrs):
    from ..nn import functional as F
    return F.gelu(ctx.tensor(args[0]), approximate=attrs.get("approximate", "none"))


def _constant(ctx, args, attrs):
    if "value" in attrs:
        return attrs["value"]
    for key, dtype in (("value_float", np.float32), ("value_int", np.int64),
                       ("value_floats", np.float32), ("value_ints", np.int64)):
        if key in attrs:
            return np.array(attrs[key], dtype)
    raise OnnxImportError(f"onnx model: a Constant with {sorted(attrs)}")


def _constant_of_shape(ctx, args, attrs):
    shape = _ints(args[0], "ConstantOfShape's shape")
    value = attrs.get("value", np.zeros(1, np.float32))
    dtype = D.from_numpy_dtype(value.dtype)
    return _em("full")(tuple(shape), value.reshape(-1)[0].item(), dtype=dtype,
                       device=ctx.device)


def _range(ctx, args, attrs):
    start, limit, delta = (np.asarray(a).reshape(()) if _host(a) else a for a in args)
    if not all(_host(a) for a in (start, limit, delta)):
        raise OnnxImportError("onnx model: Range with bounds computed on the device")
    dtype = D.from_numpy_dtype(start.dtype)
    return _em("arange")(start.item(), limit.item(), delta.item(), dtype=dtype,
                         device=ctx.device)


def _identity(ctx, args, attrs):
    return args[0]


def _split(ctx, args, attrs):
    x = ctx.tensor(args[0])
    axis = attrs.get("axis", 0) % x.ndim
    sizes = _ints(args[1], "Split's sizes") if len(args) > 1 and args[1] is not None else \
        attrs.get("split")
    if sizes is None:
        count = attrs.get("num_outputs")
        if count is None:
            raise OnnxImportError("onnx model: Split without sizes or num_outputs")
        sizes = [-(-x.shape[axis] // count)] * count
        sizes[-1] = x.shape[axis] - sum(sizes[:-1])
    return _em("split")(x, list(sizes), axis)


OPS = {
    "Identity": _identity, "Dropout": _identity,
    "Neg": _unary("neg", np.negative), "Abs": _unary("abs", np.abs), "Exp": _unary("exp"),
    "Log": _unary("log"), "Sqrt": _unary("sqrt"), "Sin": _unary("sin"), "Cos": _unary("cos"),
    "Tanh": _unary("tanh"), "Sigmoid": _unary("sigmoid"), "Erf": _unary("erf"),
    "Reciprocal": _unary("reciprocal"), "Not": _unary("logical_not", np.logical_not),
    "IsNaN": _unary("isnan"), "IsInf": _unary("isinf"), "Sign": _unary("sign", np.sign),
    "Floor": _unary("floor"), "Ceil": _unary("ceil"), "Round": _elementwise(round_half_even),
    "Relu": _elementwise(relu),
    "Add": _binary("add", np.add), "Sub": _binary("sub", np.subtract),
    "Mul": _binary("mul", np.multiply), "Div": _binary("div", lambda x, y: (
        x // y if x.dtype.kind in "iu" else x / y)),
    "Pow": _binary("pow"), "Max": _binary("maximum", np.maximum),
    "Min": _binary("minimum", np.minimum), "Mod": _mod,
    "Equal": _binary("eq", np.equal), "Less": _binary("lt", np.less),
    "LessOrEqual": _binary("le", np.less_equal), "Greater": _binary("gt", np.greater),
    "GreaterOrEqual": _binary("ge", np.greater_equal),
    "And": _binary("logical_and", np.logical_and), "Or": _binary("logical_or", np.logical_or),
    "Xor": _binary("logical_xor", np.logical_xor),
    "Where": _where, "Cast": _cast, "Shape": _shape, "Gather": _gather,
    "GatherElements": _gather_elements, "ScatterElements": _scatter_elements,
    "Reshape": _reshape, "Transpose": _transpose, "Expand": _expand, "Slice": _slice,
    "Pad": _pad, "Concat": _concat, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
    "ReduceSum": _reduce("sum"), "ReduceProd": _reduce("prod"), "ReduceMax": _reduce("amax"),
    "ReduceMin": _reduce("amin"), "ReduceMean": _reduce("mean"),
    "ArgMax": _arg("argmax"), "ArgMin": _arg("argmin"),
    "Softmax": _softmax, "Gemm": _gemm, "MatMul": _matmul, "MaxPool": _max_pool,
    "AveragePool": _average_pool, "GlobalAveragePool": _global_average_pool, "Conv": _conv,
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm,
    "Flatten": _flatten, "Gelu": _gelu, "Constant": _constant,
    "ConstantOfShape": _constant_of_shape, "Range": _range, "Split": _split,
}
