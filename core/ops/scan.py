"""Scans along one axis: cumsum and cumprod (primitives), and logcumsumexp on cumsum.

Kernels: cumsum(x, *, axis: int) and cumprod(x, *, axis: int) -> x's shape; integer and
bool inputs arrive as int64 (PyTorch's result dtype), floats keep theirs.
"""
from __future__ import annotations

from ..dispatch import run
from ..errors import EmberTypeError
from ..signatures import numpy_names
from ..tensor import Tensor
from ._op import declare, shape_first
from ._util import norm_dim
from .elementwise import where
from .reduce import _sum_rule as _scan_rule  # as sum: bool and ints scan in int64

__all__ = ["cumsum", "cumprod", "logcumsumexp"]


def _reverse_cumsum(g: Tensor, axis: int) -> Tensor:
    return run(cumsum_op, g.flip(axis), axis=axis).flip(axis)


def _cumprod_vjp(g, out, x, *, axis):
    # d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k.  Before the first zero of a
    # line that is out_j / x_k; at the first zero it is the product with that zero taken
    # out; after it every product holds the zero: 0.  (PyTorch's rule, written with ops.)
    zero = x == 0
    zeros_so_far = run(cumsum_op, zero, axis=axis)
    before = zeros_so_far == 0
    first = zero.logical_and(zeros_so_far == 1)
    safe = where(zero, 1.0, x)
    grad_before = _reverse_cumsum(g * out, axis) / safe
    without_zero = run(cumprod_op, where(first, 1.0, x), axis=axis)
    at_zero = (g * without_zero * (zeros_so_far >= 1)).sum(axis, keepdim=True)
    return (where(before, grad_before, where(first, at_zero, 0.0)),)


cumsum_op = declare("cumsum", "reduce", _scan_rule, sig="x, *, axis: int", shape=shape_first,
                    doc="running sums along axis (ints and bool arrive as int64)",
                    vjp=lambda g, out, x, *, axis: (_reverse_cumsum(g, axis),), uses=())
cumprod_op = declare("cumprod", "reduce", _scan_rule, sig="x, *, axis: int", shape=shape_first,
                     doc="running products along axis (ints and bool arrive as int64)",
                     vjp=_cumprod_vjp, save_out=True)


def _scan(op, input: Tensor, dim, dtype):
    if type(input) is not Tensor:
        raise EmberTypeError(f"{op.name}(): expected a Tensor, got {type(input).__name__}")
    if dtype is not None:
        input = input.to(dtype)
    if input.ndim == 0:
        out = run(op, input.reshape(1), axis=0).reshape(())
    else:
        out = run(op, input, axis=norm_dim(dim, input.ndim, op.name))
    # an integer dtype asked for is the result's (torch); without one integers scan in int64
    return out.to(input._dtype) if dtype is not None and out._dtype is not input._dtype \
        else out


@numpy_names
def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running sums along dim.

    PyTorch
    -------
    ``torch.cumsum``
    """
    return _scan(cumsum_op, input, dim, dtype)


@numpy_names
def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running products along dim.

    PyTorch
    -------
    ``torch.cumprod``
    """
    return _scan(cumprod_op, input, dim, dtype)


@numpy_names
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along dim, shifted by the line's max so it cannot overflow.

    PyTorch
    -------
    ``torch.logcumsumexp``
    """
    axis = norm_dim(dim, input.ndim, "logcumsumexp") if input.ndim else 0
    m = input.amax(axis, keepdim=True).detach() if input.ndim else input.detach()
    m = where(m.isfinite(), m, 0.0)
    return cumsum((input - m).exp(), axis).log() + m
