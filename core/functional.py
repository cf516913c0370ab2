"""Composites written only with ops: mean, var, softmax, logsumexp, clamp, activations, ...

They get gradients and every backend for free.  The few a backend may accelerate (linear,
softmax; relu in ops.elementwise, max_pool2d in nn.functional) are declared kernels: an Op of
kind "composite" with a decomposition, run through dispatch.run like any op.
"""
from __future__ import annotations

import builtins
import math

from . import dispatch, ops
from . import dtypes as D
from .errors import DtypeNotSupportedError, EmberValueError
from .ops._util import norm_dim, norm_dims
from .ops.nn import linear_op, softmax_op
from .tensor import Tensor


def _need_float(name, x):
    if x._dtype.category != D.FLOAT:
        raise DtypeNotSupportedError(
            f"{name}(): could not infer output dtype. Input dtype must be floating point, "
            f"got {x._dtype.name}; call .float() first")


def _every(dim):
    """dim=() (or []) means every dim, as in sum (PyTorch's rule, docs/semantics.md)."""
    return None if isinstance(dim, (list, tuple)) and not dim else dim


def _count(x, dim):
    dim = _every(dim)
    n = 1
    for d in norm_dims(dim, x.ndim, "mean"):
        n *= x._data.shape[d]
    return n


def mean(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    _need_float("mean", x)
    return ops.sum(x, dim, keepdim) / _count(x, dim)


def var(x: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    _need_float("var", x)
    if unbiased is not None:
        correction = 1 if unbiased else 0
    centered = x - mean(x, dim, keepdim=True)
    n = _count(x, dim)
    return ops.sum(centered * centered, dim, keepdim) / builtins.max(n - correction, 0)


def std(x: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    return var(x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased).sqrt()


def var_mean(x, dim=None, *, correction=1, keepdim=False):
    return var(x, dim, correction=correction, keepdim=keepdim), mean(x, dim, keepdim)


def logsumexp(x: Tensor, dim, keepdim: bool = False) -> Tensor:
    _need_float("logsumexp", x)
    dim = _every(dim)
    # the shift is a constant: detach keeps inf - inf out of the gradient
    m = ops.amax(x, dim, keepdim=True).detach()
    m = ops.where(ops.isfinite(m), m, 0.0)
    out = ops.log(ops.sum(ops.exp(x - m), dim, keepdim=True)) + m
    return out if keepdim else out.squeeze(norm_dims(dim, x.ndim, "logsumexp"))


def softmax(x: Tensor, dim: int = -1, dtype=None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    _need_float("softmax", x)
    # a 0-d tensor takes dim 0 or -1, as in PyTorch: its softmax is 1
    return dispatch.run(softmax_op, x, axis=norm_dim(dim, x.ndim, "softmax"))


def log_softmax(x: Tensor, dim: int = -1, dtype=None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    _need_float("log_softmax", x)
    shifted = x - ops.amax(x, dim, keepdim=True).detach()
    return shifted - ops.log(ops.sum(ops.exp(shifted), dim, keepdim=True))


def clamp(x: Tensor, min=None, max=None) -> Tensor:
    if min is None and max is None:
        raise EmberValueError("clamp: at least one of min and max must be given")
    if min is not None:
        x = ops.where(x < min, min, x) if not isinstance(min, Tensor) else ops.maximum(x, min)
    if max is not None:
        x = ops.where(x > max, max, x) if not isinstance(max, Tensor) else ops.minimum(x, max)
    return x


def relu(x: Tensor) -> Tensor:
    from .ops.elementwise import relu as _relu
    return _relu(x)


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return ops.where(x > 0, x, x * negative_slope)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
        return x * 0.5 * (ops.tanh(inner) + 1.0)
    if approximate != "none":
        raise EmberValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return x * 0.5 * (ops.erf(x * (1.0 / math.sqrt(2.0))) + 1.0)


def silu(x: Tensor) -> Tensor:
    return x * ops.sigmoid(x)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    bx = x * beta
    return ops.where(bx > threshold, x, ops.log1p(ops.exp(ops.minimum(bx, threshold))) / beta)


def square(x: Tensor) -> Tensor:
    return x * x


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias (torch.nn.functional.linear)."""
    if bias is None:
        return dispatch.run(linear_op, x, weight)
    return dispatch.run(linear_op, x, weight, bias)


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    """x with value where mask is true; the result keeps x's dtype (a float value into an
    integer tensor is truncated, one that does not fit raises: ops.creation.check_fits)."""
    if type(value) is Tensor:
        value = value.to(x._dtype)
    elif x._dtype.category != D.FLOAT:
        from .ops.creation import check_fits
        check_fits(value, x._dtype, "masked_fill")
        value = bool(value) if x._dtype is D.bool_ else int(value)
    return ops.where(mask, value, x)


def max(x: Tensor, dim=None, keepdim: bool = False):
    """max() over all elements, or (values, indices) along dim, as torch.max."""
    if isinstance(dim, Tensor):
        return ops.maximum(x, dim)
    if dim is None:
        return ops.amax(x)
    return _values_indices(x, dim, keepdim, ops.argmax)


def min(x: Tensor, dim=None, keepdim: bool = False):
    if isinstance(dim, Tensor):
        return ops.minimum(x, dim)
    if dim is None:
        return ops.amin(x)
    return _values_indices(x, dim, keepdim, ops.argmin)


class MaxMin(tuple):
    """(values, indices), like torch.return_types.max."""

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _values_indices(x, dim, keepdim, arg):
    # values come through gather, so the gradient goes to the chosen index (PyTorch)
    idx = arg(x, dim, keepdim=True)
    values = ops.gather(x, dim, idx)
    if not keepdim:
        d = norm_dims(dim, x.ndim, "max")
        values, idx = values.squeeze(d), idx.squeeze(d)
    return MaxMin((values, idx))
