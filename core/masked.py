"""ember.masked: torch.masked's reductions and normalizations over plain tensors with a
boolean `mask` (broadcast to the input): masked-out elements are replaced by the operation's
identity (0 for sum, 1 for prod, -inf for amax and the softmaxes, +inf for amin and softmin)
and the plain operation runs, as torch.masked does for strided tensors."""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as D
from . import functional as F
from . import ops
from .errors import EmberIndexError, EmberValueError
from .linalg.norms import vector_norm
from .ops._util import norm_dim, norm_dims
from .tensor import Tensor

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "logsumexp", "softmax", "log_softmax", "softmin", "median", "norm", "var", "std",
           "logaddexp", "normalize"]


def _mask(input: Tensor, mask):
    """torch's canonical input mask: bool, broadcast to input's shape."""
    if mask is None:
        return None
    if mask.ndim > input.ndim:
        raise EmberIndexError("masked: expected a broadcastable mask (got mask "
                              "dimensionality higher than of the input)")
    return ops.expand(mask.to(D.bool_), tuple(input.shape))


def _identity(op: str, input: Tensor):
    dtype = input._dtype
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    floating = dtype.category >= D.FLOAT
    if op in ("amax", "argmax", "logsumexp", "logaddexp"):
        if floating:
            return -math.inf
        return False if dtype is D.bool_ else _int_bound(dtype, low=True)
    if op in ("amin", "argmin"):
        if floating:
            return math.inf
        return True if dtype is D.bool_ else _int_bound(dtype, low=False)
    raise EmberValueError(f"masked: no identity for {op}")


def _int_bound(dtype, low: bool) -> int:
    info = np.iinfo(dtype.np)
    return int(info.min if low else info.max)


def _combine(op, input, mask):
    m = _mask(input, mask)
    return input if m is None else ops.where(m, input, _identity(op, input))


def _dims(dim, ndim, name):
    if dim is None:
        return tuple(range(ndim))
    return tuple(sorted(norm_dims(dim, ndim, name))) if ndim else ()


def sum(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The sum of the unmasked elements over dim (every dim by default)."""
    if dtype is None:
        dtype = input._dtype if input._dtype.category >= D.FLOAT else D.int64
    return ops.sum(_combine("sum", input, mask), _dims(dim, input.ndim, "masked.sum") or None,
                   keepdim, dtype=dtype)


def prod(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The product of the unmasked elements over dim (every dim by default)."""
    if dtype is None:
        dtype = input._dtype if input._dtype.category >= D.FLOAT else D.int64
    x = _combine("prod", input, mask).to(dtype)
    for d in reversed(_dims(dim, input.ndim, "masked.prod")):
        x = ops.prod(x, d, keepdim=keepdim)
    return x


def cumsum(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Running sum along dim, masked-out elements counted as 0."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return ops.cumsum(_combine("cumsum", input, mask).to(dtype),
                      norm_dim(dim, builtins_max(input.ndim, 1), "masked.cumsum"))


def cumprod(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Running product along dim, masked-out elements counted as 1."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return ops.cumprod(_combine("cumprod", input, mask).to(dtype),
                       norm_dim(dim, builtins_max(input.ndim, 1), "masked.cumprod"))


def builtins_max(a, b):
    return a if a > b else b


def amax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The largest unmasked element over dim (-inf where every element is masked)."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return ops.amax(_combine("amax", input, mask), _dims(dim, input.ndim, "masked.amax"),
                    keepdim).to(dtype)


def amin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The smallest unmasked element over dim (inf where every element is masked)."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return ops.amin(_combine("amin", input, mask), _dims(dim, input.ndim, "masked.amin"),
                    keepdim).to(dtype)


def argmax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
           mask=None) -> Tensor:
    """The index of the largest unmasked element (masked ones count as -inf)."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return ops.argmax(_combine("argmax", input, mask), dim, keepdim=keepdim).to(dtype)


def argmin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
           mask=None) -> Tensor:
    """The index of the smallest unmasked element (masked ones count as inf)."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return ops.argmin(_combine("argmin", input, mask), dim, keepdim=keepdim).to(dtype)


def mean(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The mean of the unmasked elements (nan where there are none)."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    if dtype.category < D.FLOAT:
        raise EmberValueError(f"mean(): Could not infer output dtype. Input dtype must be "
                              f"either a floating point or complex dtype. Got: {dtype.name}")
    m = _mask(input, mask)
    dims = _dims(dim, input.ndim, "masked.mean") or None
    if m is None:
        m = ops.ones(tuple(input.shape), dtype=D.bool_, device=input._device)
    count = ops.sum(m.to(D.int64), dims, keepdim)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=m)
    return total / count


def logsumexp(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
              mask=None) -> Tensor:
    """log(sum(exp(x))) over the unmasked elements (-inf where there are none)."""
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return F.logsumexp(_combine("logsumexp", input, mask),
                       _dims(dim, input.ndim, "masked.logsumexp"), keepdim).to(dtype)


def _normalized(fn, op, input, dim, dtype, mask):
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    x = _combine(op, input, mask)
    return fn(x, norm_dim(dim, builtins_max(input.ndim, 1), "masked.softmax"), dtype=dtype)


def softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """softmax along dim with masked-out elements as -inf (0 there; nan where a whole
    slice is masked)."""
    return _normalized(F.softmax, "amax", input, dim, dtype, mask)


def log_softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    return _normalized(F.log_softmax, "amax", input, dim, dtype, mask)


def softmin(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """softmin along dim with masked-out elements as +inf."""
    return _normalized(_softmin, "amin", input, dim, dtype, mask)


def _softmin(x, dim, dtype=None):
    return F.softmax(-x, dim, dtype=dtype)



def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype=None,
           mask=None) -> Tensor:
    """The (lower) median of the unmasked elements along dim (nan where all are masked;
    an integer input refuses a fully masked slice, having no nan to give).

    PyTorch
    -------
    ``torch.masked.median``
    """
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    axis = norm_dim(dim, builtins_max(input.ndim, 1), "masked.median")
    floating = input._dtype.category >= D.FLOAT
    x = input if floating else input.to(D.float32)
    m = _mask(x, mask)
    if m is not None:
        x = ops.where(m, x, math.nan)
    out = F.nanmedian(x, axis, keepdim).values
    if floating:
        return out
    if bool(out.isnan().any()):
        raise EmberValueError("masked.median: an integer input cannot have a fully masked "
                              "slice (its median would be nan); use a floating input")
    return out.to(dtype)


def norm(input: Tensor, ord=2.0, dim=None, *, keepdim: bool = False, dtype=None,
         mask=None) -> Tensor:
    """The ord vector norm of the unmasked elements over dim (masked ones count as 0, or
    as inf for ord=-inf).

    PyTorch
    -------
    ``torch.masked.norm``
    """
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    m = _mask(input, mask)
    x = input if m is None else ops.where(m, input, math.inf if ord == -math.inf else 0)
    return vector_norm(x, ord, _dims(dim, input.ndim, "masked.norm") or None, keepdim,
                       dtype=dtype)


def _std_var(name, input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise EmberValueError(f"{name}: pass either unbiased or correction, not both")
    shift = 1.0 if unbiased is None else float(bool(unbiased))
    if correction is not None:
        shift = float(correction)
    if dtype is None:
        dtype = input._dtype if input._dtype.category >= D.FLOAT else D.float32
    dtype = D.get_dtype(dtype)
    compute = dtype if dtype.category >= D.FLOAT else D.float32
    m = _mask(input, mask)
    if m is None:
        m = ops.ones(tuple(input.shape), dtype=D.bool_, device=input._device)
    dims = _dims(dim, input.ndim, name) or None
    count = ops.sum(m.to(D.int64), dims, True)
    mean_ = sum(input, dim, keepdim=True, dtype=dtype, mask=m) / count
    x = input - mean_
    total = sum(x * x.conj() if x.is_complex() else x * x, dim, keepdim=keepdim,
                dtype=compute, mask=m)
    if not keepdim:
        count = count.reshape(total.shape)
    if shift != 0:
        count = ops.maximum(count.to(compute.to_real()) - shift, 0.0)
    out = (total / count).to(dtype)
    return ops.sqrt(out) if take_sqrt else out


def var(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim: bool = False,
        dtype=None, mask=None) -> Tensor:
    """The variance of the unmasked elements over dim, divided by their count less
    correction (1 by default; unbiased=False is 0): nan where all are masked.

    PyTorch
    -------
    ``torch.masked.var``
    """
    return _std_var("masked.var", input, dim, unbiased, correction, keepdim, dtype, mask,
                    False)


def std(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim: bool = False,
        dtype=None, mask=None) -> Tensor:
    """The standard deviation of the unmasked elements over dim (masked.var's root).

    PyTorch
    -------
    ``torch.masked.std``
    """
    return _std_var("masked.std", input, dim, unbiased, correction, keepdim, dtype, mask,
                    True)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask=None,
              other_mask=None) -> Tensor:
    """log(exp(input) + exp(other)) with each side's masked-out elements as -inf.

    PyTorch
    -------
    ``torch.masked.logaddexp``
    """
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    return F.logaddexp(_combine("logaddexp", input, input_mask),
                       _combine("logaddexp", other, other_mask)).to(dtype)


def normalize(input: Tensor, ord, dim: int, *, eps: float = 1e-12, dtype=None,
              mask=None) -> Tensor:
    """input divided by its masked ord norm along dim (at least eps); masked-out elements
    become 0.

    PyTorch
    -------
    ``torch.masked.normalize``
    """
    dtype = input._dtype if dtype is None else D.get_dtype(dtype)
    size = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _combine("sum", input, mask) / ops.maximum(size, eps)
