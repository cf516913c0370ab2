"""Tensor methods for the tensor functions of functional_extra, linalg, sorting, scans and
sampling, their in-place forms, and the type/device questions PyTorch programs ask.

Bound once at import (core/__init__.py imports this next to _methods); the elementwise
methods come from the declarations in _methods, not from here.
"""
from __future__ import annotations

from . import functional as FX
from . import ops
from ._legacy import tensor_type
from ._methods import _inplace
from ._torch_gaps import install_tensor_gaps
from .errors import EmberValueError, ShapeError
from .functional.linalg import norm as torch_norm
from .functional.movement import repeat
from .ops import sampling
from .ops._util import norm_dim
from .tensor import Tensor

# elementwise functions written with the primitives (methods and in-place forms too)
MATH = ("log2", "log10", "exp2", "sinh", "cosh", "trunc", "fix", "frac", "fmod", "logaddexp",
        "hypot", "erfc", "logit", "xlogy", "deg2rad", "rad2deg", "sgn", "positive", "float_power")

for _name in ("mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
              "baddbmm", "addbmm", "tril", "triu", "diag", "diagonal", "diag_embed", "trace",
              "roll", "narrow", "select", "unbind", "unflatten", "broadcast_to",
              "repeat_interleave", "tile", "cross", "isclose", "allclose", "equal", "scatter",
              "scatter_reduce", "index_fill", "masked_select", "count_nonzero", "nan_to_num",
              "clamp_min", "clamp_max", "swapaxes", "swapdims", "ravel", "rot90",
              *MATH):
    setattr(Tensor, _name, getattr(FX, _name))
for _name in ("sort", "argsort", "topk", "kthvalue", "median", "msort", "cumsum", "cumprod",
              "logcumsumexp", "unique"):
    setattr(Tensor, _name, getattr(ops, _name))
for _name in ("multinomial", "bernoulli", "uniform_", "normal_", "bernoulli_",
              "exponential_", "log_normal_", "geometric_", "cauchy_", "random_"):
    setattr(Tensor, _name, getattr(sampling, _name))
Tensor.repeat = lambda self, *sizes: repeat(self, *sizes)
# ember has no sparse layout (core/sparse.py): these are the tensor itself
Tensor.to_sparse = Tensor.to_dense = Tensor.coalesce = lambda self, *args, **kwargs: self
Tensor.is_coalesced = lambda self: True
Tensor.norm = torch_norm
for _name in ("inverse", "det", "logdet", "slogdet", "cholesky", "matrix_power", "svd",
              "pinverse", "qr"):
    setattr(Tensor, _name, getattr(FX, _name))
Tensor.type = tensor_type
Tensor.new_empty = lambda self, *size, dtype=None, device=None, requires_grad=False: ops.zeros(
    *size, dtype=dtype or self._dtype, device=device or self._device,
    requires_grad=requires_grad)


def fill_diagonal(x: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """x with fill_value on its main diagonal (every dim of one size, or a matrix; `wrap`
    continues the diagonal of a tall matrix every n + 1 rows, as PyTorch)."""
    from .dispatch import run
    from .ops.index import index_put_op
    if x.ndim < 2:
        raise ShapeError(f"fill_diagonal_: expected a tensor of at least 2 dims, got "
                         f"{tuple(x.shape)}")
    shape = x._data.shape
    if x.ndim > 2 and len(set(shape)) != 1:
        raise ShapeError(f"fill_diagonal_: all dimensions of input must be of equal length, "
                         f"got {tuple(shape)}")
    numel = x.numel()
    if x.ndim == 2:
        rows, cols = shape
        step = cols + 1
        end = numel if wrap and rows > cols else min(rows, cols) * cols
    else:
        step = sum(shape[0] ** k for k in range(x.ndim))
        end = numel
    index = ops.arange(0, end, step, device=x._device)
    return run(index_put_op, x.reshape(-1), index, fill_value).reshape(shape)


def unfold_windows(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: every window of `size` elements `step` apart along dimension, as a
    new last dim (the windows' count replaces the dim)."""
    axis = norm_dim(dimension, x.ndim, "unfold") if x.ndim else 0
    n = x._data.shape[axis] if x.ndim else 1
    if size < 0 or size > n or step <= 0:
        raise EmberValueError(f"unfold: size {size} and step {step} do not fit dimension "
                              f"{dimension} of size {n}; expected 0 <= size <= {n}, step > 0")
    count = (n - size) // step + 1
    index = (ops.arange(count, device=x._device).reshape(count, 1) * step
             + ops.arange(size, device=x._device).reshape(1, size))
    windows = ops.index_select(x, axis, index.reshape(-1))
    shape = x._data.shape
    windows = windows.reshape(shape[:axis] + (count, size) + shape[axis + 1:])
    return windows.movedim(axis + 1, -1)


_inplace_of = {**{name: getattr(FX, name) for name in MATH}, "tril": FX.tril,
               "triu": FX.triu, "scatter": FX.scatter, "index_fill": FX.index_fill,
               "clamp_min": FX.clamp_min, "clamp_max": FX.clamp_max, "nan_to_num": FX.nan_to_num,
               "scatter_add": ops.scatter_add, "index_add": Tensor.index_add,
               "fill_diagonal": fill_diagonal, "cumsum": ops.cumsum, "cumprod": ops.cumprod,
               "scatter_reduce": FX.scatter_reduce}
for _name, _fn in _inplace_of.items():
    if _fn.__name__ != _name:                  # _inplace names the method after fn
        _fn = (lambda f: lambda *a, **k: f(*a, **k))(_fn)
        _fn.__name__ = _name
    setattr(Tensor, _name + "_", _inplace(_fn))
Tensor.unfold = unfold_windows
# in-place forms whose result dtype (bool) is cast back to the tensor's own, as PyTorch's
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not",
              "addmm", "baddbmm", "addmv"):
    setattr(Tensor, _name + "_", _inplace(getattr(Tensor, _name)))
Tensor.fmax, Tensor.fmin = FX.fmax, FX.fmin
Tensor.take_along_dim = FX.take_along_dim
Tensor.bincount = FX.bincount
Tensor.dist = FX.dist
Tensor.kron = FX.kron


def _reshaping(name: str, fn):
    """squeeze_, unsqueeze_, t_, transpose_: x takes the new shape itself.  Outside autograd
    only: under a recorded graph the op's saved input would change shape too."""
    def method(self, *args):
        from . import dispatch
        if dispatch.is_grad_enabled() and self.requires_grad:
            from .errors import AutogradError
            raise AutogradError(f"{name}: changing the shape in place of a tensor that "
                                "requires grad is not supported; use the out-of-place "
                                f"{name[:-1]}()")
        self._data = fn(self, *args)._data
        return self
    method.__name__ = name
    return method


for _name in ("squeeze", "unsqueeze", "t", "transpose"):
    setattr(Tensor, _name + "_", _reshaping(_name + "_", getattr(Tensor, _name)))


def sum_to_size(self, *size) -> Tensor:
    """self summed over the dims where size has 1 (or lacks a leading dim)."""
    from .ops._util import as_shape
    size = as_shape(size, "sum_to_size")
    lead = self.ndim - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size)
                                      if n == 1 and self._data.shape[lead + i] != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size)


Tensor.sum_to_size = sum_to_size


# -- what device and kind of tensor this is ------------------------------------------------

Tensor.is_cpu = property(lambda self: self._device.type == "cpu")
Tensor.is_mps = property(lambda self: False)          # ember has no MPS backend
Tensor.is_xpu = property(lambda self: False)          # nor an XPU one
Tensor.is_sparse = property(lambda self: False)       # every ember tensor is dense
Tensor.is_quantized = property(lambda self: False)
Tensor.is_meta = property(lambda self: False)
Tensor.is_complex = lambda self: False
Tensor.itemsize = property(lambda self: self._dtype.itemsize)
Tensor.nbytes = property(lambda self: self._dtype.itemsize * self.numel())
Tensor.ndimension = lambda self: self.ndim
Tensor.get_device = lambda self: -1 if self._device.type == "cpu" else (self._device.index
                                                                         or 0)
# ember moves data through the host itself: there is no pinned memory to ask for; the
# tensor is already where pinning would put it
Tensor.pin_memory = lambda self, device=None: self
Tensor.is_pinned = lambda self, device=None: False



# -- the other spellings torch's argument parser accepts: axis= for dim=, keepdims= for
# keepdim= (x.sum(axis=1, keepdims=True)), and size= for a factory's shape
def numpy_names(fn):
    def f(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    return _wrapped(f, fn)


def size_keyword(fn):
    def f(*args, **kwargs):
        if "size" in kwargs:
            args = (kwargs.pop("size"),) + args
        return fn(*args, **kwargs)
    return _wrapped(f, fn)


def _wrapped(f, fn):
    f.__name__, f.__qualname__, f.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    f.__wrapped__ = fn
    return f


def _reductions() -> dict:
    from . import functional as F
    out = {name: getattr(ops, name) for name in (
        "sum", "prod", "amax", "amin", "any", "all", "argmax", "argmin", "cumsum", "cumprod",
        "median", "sort", "argsort", "flip", "squeeze")}
    out.update({name: getattr(F, name) for name in (
        "mean", "std", "var", "logsumexp", "max", "min", "softmax", "log_softmax")})
    out.update(count_nonzero=FX.count_nonzero, norm=torch_norm)
    return {name: numpy_names(fn) for name, fn in out.items()}


_REDUCTIONS = _reductions()
for _name, _fn in _REDUCTIONS.items():
    setattr(Tensor, _name, _fn)
# what core/__init__.py puts in ember.* in place of the plain functions
TORCH_SPELLINGS = {**_REDUCTIONS, **{name: size_keyword(getattr(ops, name)) for name in (
    "zeros", "ones", "empty", "rand", "randn")}}


# last: every commonly used Tensor name still missing raises the ember-gap error
install_tensor_gaps(Tensor)
