"""Binds ops and composites onto Tensor as methods and operators (PyTorch's names).

Elementwise methods, operators and in-place forms come from the op declarations (UNARY,
BINARY, each Op's `operator` and `inplace`): a new elementwise primitive needs no line here.
"""
from __future__ import annotations

from . import dispatch, ops
from . import dtypes as D
from . import functional as F
from .backend import optional
from .device import Device, as_device
from .errors import EmberTypeError, EmberValueError
from .ops import index as _index
from .ops._util import as_shape
from .tensor import Tensor, wrap

_binary, _rbinary, _unary = dispatch.binary, dispatch.rbinary, dispatch.unary
_B, _U = ops.BINARY, ops.UNARY
_OPS = ops.OPS


def _bin(op):
    def method(self, other):
        return _binary(op, self, other)

    def reflected(self, other):
        return _rbinary(op, other, self)
    method.__name__ = op.name
    return method, reflected


_REFLECTED = ("add", "sub", "mul", "truediv", "pow", "mod", "floordiv")
for _op in _OPS.values():
    if _op.kind == "binary" and _op.operator is not None:
        _m, _r = _bin(_op)
        setattr(Tensor, f"__{_op.operator}__", _m)
        if _op.operator in _REFLECTED:
            setattr(Tensor, f"__r{_op.operator}__", _r)


def _and(self, other):
    return _require_bool("&", self, other) or _B["logical_and"](self, other)


def _or(self, other):
    return _require_bool("|", self, other) or _B["logical_or"](self, other)


def _xor(self, other):
    return _require_bool("^", self, other) or _B["logical_xor"](self, other)


def _require_bool(sym, a, b):
    for x in (a, b):
        d = x._dtype if type(x) is Tensor else D.scalar_dtype(x)
        if d is not D.bool_:
            raise EmberTypeError(f"`{sym}` on tensors is supported for bool tensors only, got "
                                 f"{d.name}; compare first (e.g. (x > 0) {sym} (y > 0))")
    return None


Tensor.__and__ = Tensor.__rand__ = _and
Tensor.__or__ = Tensor.__ror__ = _or
Tensor.__xor__ = Tensor.__rxor__ = _xor
Tensor.__neg__ = lambda self: _unary(_OPS["neg"], self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: _unary(_OPS["abs"], self)
Tensor.__invert__ = lambda self: (_unary(_OPS["logical_not"], self) if self._dtype is D.bool_
                                  else _raise(EmberTypeError(
                                      "`~` is supported for bool tensors only")))
Tensor.__matmul__ = lambda self, other: ops.matmul(self, other)
Tensor.__rmatmul__ = lambda self, other: ops.matmul(other, self)
Tensor.__getitem__ = _index.getitem


def _raise(exc):
    raise exc


def _setitem(self, key, value):
    if dispatch.is_grad_enabled() and self.requires_grad and self.grad_fn is None:
        _index.raise_leaf_inplace()
    _index.setitem(self, key, value)


Tensor.__setitem__ = _setitem

# plain methods: every elementwise primitive, by its name
for _name, _fn in (*_U.items(), *_B.items()):
    setattr(Tensor, _name, _fn)
Tensor.subtract, Tensor.multiply, Tensor.divide, Tensor.true_divide = (
    Tensor.sub, Tensor.mul, Tensor.div, Tensor.div)
Tensor.negative, Tensor.absolute = Tensor.neg, Tensor.abs

for _name in ("sum", "prod", "amax", "amin", "any", "all", "argmax", "argmin", "permute",
              "expand", "flatten", "squeeze", "unsqueeze", "transpose", "flip", "contiguous",
              "index_select", "nonzero", "argwhere", "movedim"):
    setattr(Tensor, _name, getattr(ops, _name))
for _name in ("mean", "var", "std", "logsumexp", "softmax", "log_softmax", "clamp", "relu",
              "max", "min", "masked_fill", "square"):
    setattr(Tensor, _name, getattr(F, _name))
Tensor.clip = Tensor.clamp
Tensor.split = lambda self, size, dim=0: ops.split(self, size, dim)
Tensor.chunk = lambda self, chunks, dim=0: ops.chunk(self, chunks, dim)
Tensor.reshape = lambda self, *shape: ops.reshape(self, *shape)
Tensor.matmul = lambda self, other: ops.matmul(self, other)
Tensor.where = lambda self, condition, other: ops.where(condition, self, other)
Tensor.take = lambda self, index: ops.take(self, index)
Tensor.gather = lambda self, dim, index: ops.gather(self, dim, index)
Tensor.scatter_add = lambda self, dim, index, src: ops.scatter_add(self, dim, index, src)
Tensor.index_add = lambda self, dim, index, source, *, alpha=1: ops.index_add(
    self, dim, index, source, alpha=alpha)


def view(self, *shape):
    if len(shape) == 1 and (isinstance(shape[0], (str, D.DType)) or shape[0] in (float, int)):
        raise EmberTypeError("view(dtype) is not supported; use .to(dtype)")
    return ops.reshape(self, *shape)


Tensor.view = view
Tensor.view_as = lambda self, other: ops.reshape(self, other.shape)
Tensor.reshape_as = Tensor.view_as
Tensor.expand_as = lambda self, other: ops.expand(self, other.shape)
Tensor.T = property(lambda self: self if self.ndim < 2 else ops.permute(
    self, tuple(reversed(range(self.ndim)))))
Tensor.mT = property(lambda self: ops.transpose(self, -2, -1))
Tensor.t = lambda self: self if self.ndim < 2 else ops.transpose(self, 0, 1)


# -- conversion ---------------------------------------------------------------------------

def to(self, *args, dtype=None, device=None, copy: bool = False, non_blocking=False):
    """to(device), to(dtype), to(device, dtype), to(other_tensor)."""
    for a in args:
        if type(a) is Tensor:
            device, dtype = a._device, a._dtype
        elif isinstance(a, (D.DType, type)) or (isinstance(a, str) and _is_dtype_name(a)):
            dtype = a
        elif isinstance(a, (str, Device)):
            device = a
        elif a is not None:
            raise EmberTypeError(f"to(): expected a device, a dtype or a tensor, got {a!r}")
    out = self
    if device is not None:
        dev = as_device(device)
        if dev is not out._device:
            out = _transfer(out, dev)
    if dtype is not None:
        out = ops.cast(out, dtype)
    if copy and out is self:
        out = ops.contiguous(self)
    return out


def _is_dtype_name(s: str) -> bool:
    try:
        D.get_dtype(s)
        return True
    except EmberValueError:
        return False


def _transfer(x: Tensor, dev) -> Tensor:
    src = x._device
    if dev.type != "cpu":
        dispatch._check_dtype("to", dev, x._dtype)
    move = _mover(src, dev)
    tracer = None
    if Tensor._capture is not None:
        from .graph.capture import current
        tracer = current()
    native = move(x._data) if tracer is None else tracer.transfer(x, dev, move)
    out = wrap(native, dev, x._dtype)
    if dispatch.is_grad_enabled() and x.requires_grad:
        dispatch.record(_TRANSFER, out, (x,), {"source": src})
    return out


def _mover(src, dev):
    """native on src -> a copy on dev: a backend that can copy directly between its own
    devices does (CuPy peer copy); otherwise through the host."""
    direct = optional(src.backend, "copy_to") if src.type == dev.type else None
    if direct is not None:
        return lambda native: direct(native, dev.index)
    to_host = src.backend.to_host

    def move(native):
        host = to_host(native)
        if dev.type == "cpu":
            import numpy as np
            return np.array(host, copy=True) if src.type == "cpu" else host
        return dev.backend.from_host(host, dev.index)
    return move


class _Transfer:
    """A device copy as a graph node: the gradient goes back to the source device."""

    name = "to_device"
    save_out = False
    uses = ()

    @staticmethod
    def vjp(g, out, x, *, source):
        return (g.to(source),)


_TRANSFER = _Transfer()

Tensor.to = to
Tensor.cpu = lambda self: to(self, "cpu")
Tensor.cuda = lambda self, device=None: to(self, f"cuda:{device}" if device is not None
                                          else "cuda")
for _dname, _dt in [("float", D.float32), ("double", D.float64), ("half", D.float16),
                    ("bfloat16", D.bfloat16), ("int", D.int32), ("long", D.int64),
                    ("bool", D.bool_), ("short", D.int16), ("byte", D.uint8),
                    ("char", D.int8)]:
    setattr(Tensor, _dname, (lambda dt: lambda self: ops.cast(self, dt))(_dt))
Tensor.type_as = lambda self, other: ops.cast(self, other._dtype)


def clone(self) -> Tensor:
    return ops.contiguous(self)


def detach(self) -> Tensor:
    return wrap(self._data, self._device, self._dtype)


def detach_(self) -> Tensor:
    self.grad_fn = None
    self.requires_grad = False
    return self


def requires_grad_(self, requires_grad: bool = True) -> Tensor:
    if requires_grad and self._dtype.category != D.FLOAT:
        raise EmberTypeError(f"only Tensors of floating point dtype can require gradients, "
                             f"got {self._dtype.name}")
    if not requires_grad and self.grad_fn is not None:
        raise EmberValueError("requires_grad_(False) on a non-leaf tensor; use .detach()")
    self.requires_grad = bool(requires_grad)
    return self


Tensor.clone = clone
Tensor.detach = detach
Tensor.detach_ = detach_
Tensor.requires_grad_ = requires_grad_
Tensor.new_zeros = lambda self, *size, dtype=None, device=None: ops.zeros(
    *size, dtype=dtype or self._dtype, device=device or self._device)
Tensor.new_ones = lambda self, *size, dtype=None, device=None: ops.ones(
    *size, dtype=dtype or self._dtype, device=device or self._device)
Tensor.new_full = lambda self, size, value, dtype=None, device=None: ops.full(
    size, value, dtype=dtype or self._dtype, device=device or self._device)
Tensor.new_tensor = lambda self, data, dtype=None, device=None: ops.tensor(
    data, dtype=dtype or self._dtype, device=device or self._device)


# -- in-place ops: compute out of place, write back, take over the history -----------------

def _inplace(fn):
    def method(self, *args, **kwargs):
        recording = dispatch.is_grad_enabled() and (self.requires_grad or any(
            type(a) is Tensor and a.requires_grad for a in args))
        if recording:
            if self.grad_fn is None and self.requires_grad:
                _index.raise_leaf_inplace()
            # compute from a copy so the op's saved input is not the tensor we overwrite
            result = fn(ops.contiguous(self), *args, **kwargs)
        else:
            result = fn(self, *args, **kwargs)
        if result._dtype is not self._dtype:
            if not D.can_cast(result._dtype, self._dtype):
                raise EmberTypeError(
                    f"{fn.__name__}_: result type {result._dtype.name} can't be cast to the "
                    f"desired output type {self._dtype.name}; use the out-of-place op")
            result = ops.cast(result, self._dtype)
        if result._data.shape != self._data.shape:
            raise EmberValueError(
                f"{fn.__name__}_: output with shape {list(self.shape)} doesn't match the "
                f"broadcast shape {list(result.shape)}")
        if recording:
            _index._rebase(self, result)
        else:
            _index._assign(self, result)
            _index._bump(self)
        return self
    method.__name__ = fn.__name__ + "_"
    return method


for _op in _OPS.values():
    if _op.inplace:
        setattr(Tensor, _op.name + "_", _inplace(getattr(Tensor, _op.name)))
for _name in ("clamp", "relu", "masked_fill"):
    setattr(Tensor, _name + "_", _inplace(getattr(Tensor, _name)))
Tensor.clip_ = Tensor.clamp_


def _add_scaled(self, other, alpha=1):
    return self + other * alpha if alpha != 1 else self + other


def _sub_scaled(self, other, alpha=1):
    return self - other * alpha if alpha != 1 else self - other


_add_scaled.__name__, _sub_scaled.__name__ = "add", "sub"
Tensor.add = _add_scaled
Tensor.sub = _sub_scaled


def _direct_inplace(op, generic, floats_only: bool = False):
    """x.add_(y) etc. through a backend's own in-place kernel (one pass, no temporary; op
    is its declaration) when no graph is recorded and no cast is needed; otherwise the
    generic out-of-place path.  Optimizer steps live here."""
    def method(self, other, alpha=1):
        if not (dispatch.is_grad_enabled() and (self.requires_grad or (
                type(other) is Tensor and other.requires_grad))):
            cat = self._dtype.category
            if self._dtype is not D.bfloat16 and (cat == D.FLOAT or not floats_only):
                to = type(other)
                if to is Tensor and other._dtype is self._dtype and \
                        other._device is self._device:
                    value = other if alpha == 1 else other * alpha
                elif (to is float and cat == D.FLOAT) or (to is int and cat != D.BOOL):
                    value = other * alpha
                else:
                    value = None
                if value is not None and (type(value) is not Tensor or _fits(
                        value._data.shape, self._data.shape)) and _writable(self):
                    if dispatch.inplace(op, self, value):
                        _index._bump(self)
                        return self
        return generic(self, other, alpha) if alpha != 1 else generic(self, other)
    method.__name__ = op.name
    return method


def _fits(shape, target) -> bool:
    """Whether `shape` broadcasts to `target` without growing it."""
    if len(shape) > len(target):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


def _writable(x: Tensor) -> bool:
    """In-place kernels write x's own memory: only where a write through x reaches every
    tensor that shares it (see _index.writes_through)."""
    return _index.writes_through(x)


_K = ops.KERNELS
Tensor.add_ = _direct_inplace(_K["add_"], _inplace(_add_scaled))
Tensor.sub_ = _direct_inplace(_K["sub_"], _inplace(_sub_scaled))
Tensor.mul_ = _direct_inplace(_K["mul_"], Tensor.mul_)
Tensor.div_ = _direct_inplace(_K["div_"], Tensor.div_, floats_only=True)
Tensor.__iadd__ = _direct_inplace(_K["add_"], _inplace(Tensor.__add__))
Tensor.__isub__ = _direct_inplace(_K["sub_"], _inplace(Tensor.__sub__))
Tensor.__imul__ = _direct_inplace(_K["mul_"], _inplace(Tensor.__mul__))
Tensor.__itruediv__ = _direct_inplace(_K["div_"], _inplace(Tensor.__truediv__),
                                      floats_only=True)
Tensor.__ipow__ = _inplace(Tensor.__pow__)
Tensor.__imod__ = _inplace(Tensor.__mod__)
Tensor.__ifloordiv__ = _inplace(Tensor.__floordiv__)


def _addcmul(self, a, b, value=1):
    return self + a * b * value


def _addcdiv(self, a, b, value=1):
    return self + a / b * value


def _lerp(self, end, weight):
    return self + (end - self) * weight


_addcmul.__name__, _addcdiv.__name__, _lerp.__name__ = "addcmul", "addcdiv", "lerp"
Tensor.addcmul, Tensor.addcdiv, Tensor.lerp = _addcmul, _addcdiv, _lerp
Tensor.addcmul_, Tensor.addcdiv_, Tensor.lerp_ = (_inplace(_addcmul), _inplace(_addcdiv),
                                                  _inplace(_lerp))


def _fill(self, value):
    return ops.full_like(self, value.item() if type(value) is Tensor else value)


def _zero(self):
    return ops.zeros_like(self)


_fill.__name__, _zero.__name__ = "fill", "zero"
Tensor.fill_ = _inplace(_fill)
Tensor.zero_ = _inplace(_zero)


def copy_(self, src):
    """Copy src's values into self (broadcast, cast), keeping self's dtype and device."""
    src = src.to(self._device) if src._device is not self._device else src
    if src._data.shape != self._data.shape:
        src = ops.expand(src, as_shape(self.shape, "copy_"))
    if dispatch.is_grad_enabled() and (self.requires_grad or src.requires_grad):
        if self.grad_fn is None and self.requires_grad:
            _index.raise_leaf_inplace()
        _index._rebase(self, ops.contiguous(ops.cast(src, self._dtype)))
    else:
        _index._assign(self, ops.cast(src, self._dtype))
        _index._bump(self)
    return self


Tensor.copy_ = copy_


# -- autograd entry points ---------------------------------------------------------------

def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
             inputs=None):
    from .autograd import backward as _backward
    _backward([self], None if gradient is None else [gradient], retain_graph=retain_graph,
              create_graph=create_graph, inputs=inputs)


def retain_grad(self) -> None:
    from .autograd.engine import retain
    if self.grad_fn is None:
        if not self.requires_grad:
            raise EmberValueError("can't retain_grad on Tensor that has requires_grad=False")
        return
    retain(self)


def register_hook(self, hook):
    """Call hook(grad) when this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise EmberValueError("cannot register a hook on a tensor that doesn't require "
                              "gradient")
    if self.grad_fn is not None:
        self.grad_fn.register_hook(hook)
        hooks = self.grad_fn.pre_hooks
    else:
        hooks = self._get_meta("hooks")
        if hooks is None:
            hooks = []
            self._set_meta("hooks", hooks)
        hooks.append(hook)
    return _HookHandle(hooks, hook)


class _HookHandle:
    def __init__(self, hooks, hook):
        self.hooks, self.hook = hooks, hook

    def remove(self):
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)


Tensor.backward = backward
Tensor.retain_grad = retain_grad
Tensor.register_hook = register_hook
Tensor.retains_grad = property(lambda self: self.grad_fn is not None and
                               self.grad_fn.retained is not None)
