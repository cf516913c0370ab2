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
from ..graph.capture import GraphBreak
from ..nn.module import Module
from ..tensor import Tensor
from . import reader
from .reader import OnnxImportError

MAX_HOST_CONSTANT = 64              # integer initializers up to this size stay on the host


class OnnxModule(Module):
    """An imported ONNX model: call it with one tensor per graph input.

    The model is checked whole when it is built (reader.plan): a malformed model is an
    OnnxImportError here, naming the initializer, node or output, not an error from deep
    inside a later call."""

    def __init__(self, proto, base_dir=None):
        super().__init__()
        plan = reader.plan(proto, reader.Source(base_dir), SIGNATURES)
        self.opset = plan.opset
        self.input_names = plan.inputs
        self.output_names = plan.outputs
        self._host: dict = {}
        self._buffer_of: dict = {}
        for name, array in plan.initializers.items():
            if array.dtype.kind in "iub" and array.size <= MAX_HOST_CONSTANT:
                self._host[name] = array
                continue
            try:
                D.from_numpy_dtype(array.dtype)
            except EmberError:
                raise OnnxImportError(
                    f"onnx.load: initializer {reader.quote(name)} is {array.dtype} with "
                    f"{array.size} elements; ember keeps integer initializers of at most "
                    f"{MAX_HOST_CONSTANT} elements on the host and has no {array.dtype} "
                    "tensors: store it as int32 or int64") from None
            key = f"w{len(self._buffer_of)}"
            self._buffer_of[name] = key
            self.register_buffer(key, _tensor(np.ascontiguousarray(array), None))
        self._nodes = plan.nodes

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
        for op_type, ins, outs, attrs, label in self._nodes:
            try:            # every input exists: reader.plan ordered the nodes
                results = OPS[op_type](ctx, [env[i] for i in ins], attrs)
            except GraphBreak:
                raise
            except Exception as exc:  # noqa: BLE001  (named with the node, cause chained)
                raise _failed(label, exc) from exc
            if not isinstance(results, (tuple, list)):
                results = (results,)
            if len(results) < len(outs):
                raise OnnxImportError(f"onnx model: {label} has {len(outs)} outputs; the op "
                                      f"made {len(results)} from these inputs: drop the "
                                      "extra outputs from the node")
            for out, value in zip(outs, results):
                if out:
                    env[out] = value
        results = [_as_tensor(env[n], device) for n in self.output_names]
        return results[0] if len(results) == 1 else tuple(results)

    def extra_repr(self) -> str:
        return (f"{len(self._nodes)} nodes, opset {self.opset}, inputs "
                f"{self.input_names}, outputs {self.output_names}")


def _failed(label: str, exc: Exception) -> OnnxImportError:
    """The error a node raised while running, as an OnnxImportError naming the node."""
    text = str(exc)
    if len(text) > 400:
        text = text[:400] + "..."
    if isinstance(exc, OnnxImportError):          # the op refuses what the node asks
        text = text[len("onnx model: "):] if text.startswith("onnx model: ") else text
        return OnnxImportError(
            f"onnx model: {label}: {text}; ember cannot run this node as the model writes "
            "it: export the model without it, or run the model with onnxruntime")
    return OnnxImportError(
        f"onnx model: {label} fails on its inputs: {type(exc).__name__}: {text}; the "
        "model's attributes or constants do not fit the inputs it was given: check the "
        "inputs' shapes and dtypes against the model's graph inputs, or export the model "
        "again")


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


def _axis(axis: int, ndim: int, what: str) -> int:
    """axis in 0..ndim-1, or an OnnxImportError where it is outside -ndim..ndim-1 (ONNX's
    range: a wrapped-around axis would be a silent wrong answer)."""
    if not -ndim <= axis < ndim:
        raise OnnxImportError(f"onnx model: {what} axis {axis} is out of range for a "
                              f"{ndim}-d input; expected {-ndim} to {ndim - 1}")
    return axis % ndim


def _axes_in(axes, ndim: int, what: str) -> list:
    out = [_axis(a, ndim, what) for a in axes]
    if len(set(out)) != len(out):
        raise OnnxImportError(f"onnx model: {what} axes {list(axes)} repeat an axis")
    return out


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


def _variadic(pairwise):
    """Max / Min of one or more inputs, folded pairwise."""
    def op(ctx, args, attrs):
        out = args[0]
        for other in args[1:]:
            out = pairwise(ctx, [out, other], attrs)
        return out
    return op


def _is_inf(ctx, args, attrs):
    x = ctx.tensor(args[0])
    negative, positive = attrs.get("detect_negative", 1), attrs.get("detect_positive", 1)
    out = _em("isinf")(x)
    if not negative:
        out = out & (x > 0)
    if not positive:
        out = out & (x < 0)
    return out


def _dropout(ctx, args, attrs):
    training = args[2] if len(args) > 2 else None
    if training is not None and (bool(np.asarray(training).reshape(-1)[0]) if _host(training)
                                 else bool(training.item())):
        raise OnnxImportError("onnx model: Dropout with training_mode true (ember imports "
                              "models for inference, exported in eval mode)")
    return args[0]


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
    axis = _axis(attrs.get("axis", 0), len(x.shape), "Gather's")
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
    return _em("gather")(x, _axis(attrs.get("axis", 0), x.ndim, "GatherElements'"), index)


def _scatter_elements(ctx, args, attrs):
    x, index, src = (ctx.tensor(a) for a in args)
    reduction = attrs.get("reduction", "none")
    if reduction != "add":
        raise OnnxImportError(f"onnx model: ScatterElements with reduction={reduction!r}; "
                              "ember imports reduction='add'")
    return x.scatter_add(_axis(attrs.get("axis", 0), x.ndim, "ScatterElements'"), index,
                         src)


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
    if sorted(perm) != list(range(len(x.shape))):
        raise OnnxImportError(f"onnx model: Transpose's perm {perm} for a {len(x.shape)}-d "
                              "input; expected a permutation of its axes")
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
    axes = _axes_in(axes, ndim, "Slice's")
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise OnnxImportError(f"onnx model: Slice has {len(starts)} starts, {len(ends)} ends, "
                              f"{len(axes)} axes and {len(steps)} steps; expected one each "
                              "per sliced axis")
    if 0 in steps:
        raise OnnxImportError("onnx model: Slice with a step of 0; expected nonzero steps")
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
    pads = _ints(args[1], "Pad's pads")
    mode = attrs.get("mode", "constant")
    if mode != "constant":
        raise OnnxImportError(f"onnx model: Pad mode {mode!r}; ember imports 'constant'")
    value = 0.0
    if len(args) > 2 and args[2] is not None:
        value = float(np.asarray(args[2]).reshape(-1)[0]) if _host(args[2]) else \
            float(args[2].item())
    n = len(x.shape)
    axes = _ints(args[3], "Pad's axes") if len(args) > 3 and args[3] is not None else \
        list(range(n))
    if len(pads) != 2 * len(axes) or any(not -n <= a < n for a in axes):
        raise OnnxImportError(f"onnx model: Pad has {len(pads)} pads for axes {axes} of a "
                              f"{n}-d input; expected 2 per axis (begins, then ends)")
    full = [0] * (2 * n)
    for k, a in enumerate(axes):
        full[a % n], full[a % n + n] = pads[k], pads[k + len(axes)]
    torch_pads = []
    for axis in reversed(range(n)):             # F.pad: last axis first
        torch_pads += [full[axis], full[axis + n]]
    from ..nn import functional as F
    return F.pad(x, tuple(torch_pads), value=value)


def _concat(ctx, args, attrs):
    args = [a for a in args if a is not None]
    axis = _axis(attrs["axis"], len(args[0].shape), "Concat's")
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
    for a in sorted(_axes_in(axes, ndim, "Unsqueeze's")):
        shape.insert(a, 1)
    return x.reshape(shape)


def _squeeze(ctx, args, attrs):
    x = args[0]
    axes = _axes(args, attrs, ctx)
    ndim = len(x.shape)
    axes = set(_axes_in(axes, ndim, "Squeeze's")) if axes else \
        {a for a, n in enumerate(x.shape) if n == 1}
    if any(x.shape[a] != 1 for a in axes):
        raise OnnxImportError(f"onnx model: Squeeze of axes {sorted(axes)} of shape "
                              f"{list(x.shape)}; expected axes of size 1")
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
        axes = tuple(_axes_in(axes, x.ndim, f"{_ONNX_NAME[name]}'s"))
        return getattr(x, name)(axes, keepdim=keep) if name != "sum" else \
            x.sum(axes, keepdim=keep)
    return op


_ONNX_NAME = {"sum": "ReduceSum", "prod": "ReduceProd", "amax": "ReduceMax",
              "amin": "ReduceMin", "mean": "ReduceMean", "argmax": "ArgMax", "argmin": "ArgMin"}


def _arg(name):
    def op(ctx, args, attrs):
        x = ctx.tensor(args[0])
        if attrs.get("select_last_index", 0):
            raise OnnxImportError(f"onnx model: {name} with select_last_index=1")
        return getattr(x, name)(_axis(attrs.get("axis", 0), x.ndim, f"{_ONNX_NAME[name]}'s"),
                                keepdim=bool(attrs.get("keepdims", 1)))
    return op


def _softmax(ctx, args, attrs):
    x = ctx.tensor(args[0])
    axis = _axis(attrs.get("axis", -1), x.ndim, "Softmax's")
    if ctx.opset < 13:                         # coerced to 2-D before opset 13
        shape = x.shape
        rows = math.prod(shape[:axis])
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
    kernel = attrs["kernel_shape"]
    if len(kernel) != 2:
        raise OnnxImportError(f"onnx model: AveragePool over {len(kernel)} dimensions; ember "
                              "imports 2-D pooling")
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise OnnxImportError("onnx model: AveragePool with auto_pad SAME_*; ember imports "
                              "explicit pads")
    if any(d != 1 for d in attrs.get("dilations", [1, 1])):
        raise OnnxImportError("onnx model: AveragePool with dilations; ember imports "
                              "dilations 1")
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
    if list(attrs.get("kernel_shape", w.shape[2:])) != list(w.shape[2:]):
        raise OnnxImportError(f"onnx model: Conv's kernel_shape {attrs['kernel_shape']} "
                              f"disagrees with its weight's shape {list(w.shape)}")
    return F.conv2d(x, w, b, tuple(attrs.get("strides", [1, 1])), (pads[0], pads[1]),
                    tuple(attrs.get("dilations", [1, 1])), attrs.get("group", 1))


def _batch_norm(ctx, args, attrs):
    from ..nn import functional as F
    if attrs.get("training_mode", 0):
        raise OnnxImportError("onnx model: BatchNormalization with training_mode=1 (ember "
                              "imports models for inference, exported in eval mode)")
    x, scale, bias, mean, var = (ctx.tensor(a) for a in args[:5])
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, attrs.get("epsilon", 1e-5))


def _layer_norm(ctx, args, attrs):
    from ..nn import functional as F
    x = ctx.tensor(args[0])
    axis = _axis(attrs.get("axis", -1), x.ndim, "LayerNormalization's")
    scale = ctx.tensor(args[1])
    bias = ctx.tensor(args[2]) if len(args) > 2 and args[2] is not None else None
    return F.layer_norm(x, tuple(x.shape[axis:]), scale, bias, attrs.get("epsilon", 1e-5))


def _flatten(ctx, args, attrs):
    x = args[0]
    ndim = len(x.shape)
    axis = attrs.get("axis", 1)
    if not -ndim <= axis <= ndim:                  # Flatten's axis may be ndim itself
        raise OnnxImportError(f"onnx model: Flatten's axis {axis} is out of range for a "
                              f"{ndim}-d input; expected {-ndim} to {ndim}")
    axis = axis + ndim if axis < 0 else axis
    return x.reshape(math.prod(x.shape[:axis]), -1)


def _gelu(ctx, args, attrs):
    from ..nn import functional as F
    return F.gelu(ctx.tensor(args[0]), approximate=attrs.get("approximate", "none"))


def _constant(ctx, args, attrs):
    if len(attrs) != 1:
        raise OnnxImportError(f"onnx model: a Constant with attributes {sorted(attrs)}; "
                              "expected exactly one value attribute")
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
    axis = _axis(attrs.get("axis", 0), x.ndim, "Split's")
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
    "Identity": _identity, "Dropout": _dropout,
    "Neg": _unary("neg", np.negative), "Abs": _unary("abs", np.abs), "Exp": _unary("exp"),
    "Log": _unary("log"), "Sqrt": _unary("sqrt"), "Sin": _unary("sin"), "Cos": _unary("cos"),
    "Tanh": _unary("tanh"), "Sigmoid": _unary("sigmoid"), "Erf": _unary("erf"),
    "Reciprocal": _unary("reciprocal"), "Not": _unary("logical_not", np.logical_not),
    "IsNaN": _unary("isnan"), "IsInf": _is_inf, "Sign": _unary("sign", np.sign),
    "Floor": _unary("floor"), "Ceil": _unary("ceil"), "Round": _elementwise(round_half_even),
    "Relu": _elementwise(relu),
    "Add": _binary("add", np.add), "Sub": _binary("sub", np.subtract),
    "Mul": _binary("mul", np.multiply), "Div": _binary("div", lambda x, y: (
        x // y if x.dtype.kind in "iu" else x / y)),
    "Pow": _binary("pow"), "Max": _variadic(_binary("maximum", np.maximum)),
    "Min": _variadic(_binary("minimum", np.minimum)), "Mod": _mod,
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

# What the importer reads of each op: (fewest inputs, most inputs or None for any number,
# most outputs or None, "attribute:type" words with type f float, i int, s string, t tensor,
# F floats, I ints and a "!" on a required one).  reader.plan refuses a node outside its
# op's signature (an attribute ember would otherwise run without, a training output).
_UNARY = (1, 1, 1, "")
_BINARY = (2, 2, 1, "")
_REDUCE = (1, 2, 1, "axes:I keepdims:i noop_with_empty_axes:i")
SIGNATURES = {
    **{op: _UNARY for op in ("Neg", "Abs", "Exp", "Log", "Sqrt", "Sin", "Cos", "Tanh",
                             "Sigmoid", "Erf", "Reciprocal", "Not", "IsNaN", "Sign", "Floor",
                             "Ceil", "Round", "Relu", "Identity", "GlobalAveragePool")},
    **{op: _BINARY for op in ("Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less",
                              "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor",
                              "Expand", "MatMul")},
    **{op: _REDUCE for op in ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin",
                              "ReduceMean")},
    "IsInf": (1, 1, 1, "detect_negative:i detect_positive:i"),
    "Dropout": (1, 3, 1, "seed:i ratio:f"),
    "Max": (1, None, 1, ""), "Min": (1, None, 1, ""),
    "Mod": (2, 2, 1, "fmod:i"),
    "Where": (3, 3, 1, ""),
    "Cast": (1, 1, 1, "to:i! saturate:i"),
    "Shape": (1, 1, 1, "start:i end:i"),
    "Gather": (2, 2, 1, "axis:i"),
    "GatherElements": (2, 2, 1, "axis:i"),
    "ScatterElements": (3, 3, 1, "axis:i reduction:s"),
    "Reshape": (2, 2, 1, "allowzero:i"),
    "Transpose": (1, 1, 1, "perm:I"),
    "Slice": (3, 5, 1, ""),
    "Pad": (2, 4, 1, "mode:s"),
    "Concat": (1, None, 1, "axis:i!"),
    "Unsqueeze": (1, 2, 1, "axes:I"), "Squeeze": (1, 2, 1, "axes:I"),
    "ArgMax": (1, 1, 1, "axis:i keepdims:i select_last_index:i"),
    "ArgMin": (1, 1, 1, "axis:i keepdims:i select_last_index:i"),
    "Softmax": (1, 1, 1, "axis:i"),
    "Gemm": (2, 3, 1, "alpha:f beta:f transA:i transB:i"),
    "MaxPool": (1, 1, 1, "auto_pad:s ceil_mode:i dilations:I kernel_shape:I! pads:I "
                         "storage_order:i strides:I"),
    "AveragePool": (1, 1, 1, "auto_pad:s ceil_mode:i count_include_pad:i dilations:I "
                             "kernel_shape:I! pads:I strides:I"),
    "Conv": (2, 3, 1, "auto_pad:s dilations:I group:i kernel_shape:I pads:I strides:I"),
    "BatchNormalization": (5, 5, 1, "epsilon:f momentum:f training_mode:i"),
    "LayerNormalization": (2, 3, 1, "axis:i epsilon:f stash_type:i"),
    "Flatten": (1, 1, 1, "axis:i"),
    "Gelu": (1, 1, 1, "approximate:s"),
    "Constant": (0, 0, 1, "value:t value_float:f value_floats:F value_int:i value_ints:I"),
    "ConstantOfShape": (1, 1, 1, "value:t"),
    "Range": (3, 3, 1, ""),
    "Split": (1, 2, None, "axis:i split:I num_outputs:i"),
}
