"""Reductions over any set of axes: sum, prod, max, min, argmax, argmin, any, all.

Kernel signatures: k(x, *, axes: tuple, keepdims: bool) for sum/prod/max/min/any/all
(axes sorted, non-negative, never empty unless x is 0-d); k(x, *, axis: int | None,
keepdims: bool) for argmax/argmin (None: over the flattened tensor).
"""
from __future__ import annotations

import builtins
import math

from .. import dtypes as D
from ..dispatch import direct, run
from ..errors import EmberValueError
from ..signatures import numpy_names
from ..tensor import Tensor
from . import _out
from ._op import declare, rule_first, rule_fixed
from ._util import norm_dim, norm_dims
from ._util import prod as _product
from .movement import pad, permute, reshape

# float32 and float64: the fast paths' dtypes (nothing for run() to check or cast), and
# the ones var's op takes
REAL_FLOATS = (D.float32, D.float64)

__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "prod", "sum"]


def _keep_shape(x, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(x._data.shape))


def _spread(g, x, axes, keepdims):
    """A reduced gradient broadcast back over the reduced axes."""
    if not keepdims:
        g = g.reshape(_keep_shape(x, axes))
    return g.expand(x._data.shape)


def _sum_rule(op):
    def rule(inputs, attrs):
        d = inputs[0]._dtype
        if d.category < D.FLOAT:
            return D.int64, D.int64      # PyTorch sums bool and ints in int64
        return None, d
    return rule


def _prod_vjp(g, out, x, *, axes, keepdims):
    """d prod / d x_j is the product of the other elements: computed as exclusive products
    from the left and from the right (log-step scans of multiplications), never by division,
    so zeros anywhere are exact and the rule differentiates again (second derivatives with
    zeros too)."""
    if x._data.size == 0:               # nothing to differentiate: an empty gradient
        return (x * 0,)
    g = _spread(g, x, axes, keepdims)
    return (g * _others_product(x, axes),)


def _others_product(x, axes):
    """For each element, the product of the other elements over `axes`."""
    shape = x._data.shape
    rest = [d for d in range(x.ndim) if d not in axes]
    order = tuple(rest) + tuple(axes)
    moved = permute(x, order) if order != tuple(range(x.ndim)) else x
    n = 1
    for d in axes:
        n *= shape[d]
    lead = tuple(shape[d] for d in rest)
    flat = reshape(moved, lead + (n,))
    left = _exclusive(flat, n, pad, reverse=False)
    right = _exclusive(flat, n, pad, reverse=True)
    both = reshape(left * right, tuple(moved._data.shape))
    inverse = [0] * x.ndim
    for i, d in enumerate(order):
        inverse[d] = i
    return permute(both, tuple(inverse)) if order != tuple(range(x.ndim)) else both


def _exclusive(flat, n, pad, *, reverse):
    """prod of flat[..., :j] (or of flat[..., j+1:], reverse) for every j, by doubling."""
    # shift by one, filling with 1: the product of nothing
    y = pad(flat[..., :n - 1], (1, 0), value=1.0) if not reverse else \
        pad(flat[..., 1:], (0, 1), value=1.0)
    step = 1
    while step < n:
        shifted = pad(y[..., :n - step], (step, 0), value=1.0) if not reverse else \
            pad(y[..., step:], (0, step), value=1.0)
        y = y * shifted
        step *= 2
    return y


def _extreme_vjp(g, out, x, *, axes, keepdims):
    # ties share the gradient evenly, as PyTorch's amax/amin
    mask = (x == _spread(out, x, axes, keepdims)).to(g._dtype)
    count = mask.sum(dim=axes, keepdim=True)
    return (_spread(g, x, axes, keepdims) * mask / count,)


def _reduced_shape(inputs, attrs):
    axes, keep = attrs["axes"], attrs["keepdims"]
    shape = inputs[0]._data.shape
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keep or i not in axes)


def _arg_shape(inputs, attrs):
    axis, keep = attrs["axis"], attrs["keepdims"]
    if axis is None:
        return ()
    shape = inputs[0]._data.shape
    return tuple(1 if i == axis else n for i, n in enumerate(shape) if keep or i != axis)


_AXES = "x, *, axes: tuple[int], keepdims: bool"
_AXIS = "x, *, axis: int|None, keepdims: bool"


def _r(name, rule, doc, sig=_AXES, shape=_reduced_shape, **kw):
    return declare(name, "reduce", rule, sig=sig, shape=shape, doc=doc, **kw)


sum_op = _r("sum", _sum_rule, "the sum over axes (sorted, distinct; empty only for 0-d x, "
            "which is then returned as a copy); ints and bool arrive as int64",
            vjp=lambda g, out, x, *, axes, keepdims: (_spread(g, x, axes, keepdims),), uses=())
prod_op = _r("prod", _sum_rule, "the product over axes; ints and bool arrive as int64",
             vjp=_prod_vjp, save_out=True)
max_op = _r("max", rule_first, "the maximum over axes (nan if any is nan)", vjp=_extreme_vjp,
            save_out=True)
min_op = _r("min", rule_first, "the minimum over axes (nan if any is nan)", vjp=_extreme_vjp,
            save_out=True)
any_op = _r("any", rule_fixed(D.bool_), "whether any element over axes is nonzero")
all_op = _r("all", rule_fixed(D.bool_), "whether every element over axes is nonzero")
argmax_op = _r("argmax", rule_fixed(D.int64), "the int64 index of the first maximum along "
               "axis (None: of the flattened x; nan counts as the maximum)", sig=_AXIS,
               shape=_arg_shape)
argmin_op = _r("argmin", rule_fixed(D.int64), "the int64 index of the first minimum along "
               "axis (None: of the flattened x; nan counts as the minimum)", sig=_AXIS,
               shape=_arg_shape)


def _l2_decompose(x, *, axes, keepdims):
    # sqrt(sum(x * x)) whose gradient at a zero vector is 0 (the vjp below says how; a plain
    # sqrt there would give 0 * inf = nan)
    from .elementwise import UNARY, where
    s = run(sum_op, x * x, axes=axes, keepdims=keepdims)
    zero = s == 0
    return where(zero, 0.0, UNARY["sqrt"](where(zero, 1.0, s)))


def _l2_vjp(g, out, x, *, axes, keepdims):
    # torch's norm_backward: x * g / norm, 0 where the norm is 0
    from .elementwise import where
    return (_spread(where(out == 0, 0.0, g / out), x, axes, keepdims) * x,)


# the 2-norm over axes of a real floating x (linalg.vector_norm's ord 2, Tensor.norm()):
# one kernel where a backend has it (the CPU's: the decomposition's NumPy calls without
# the ember ops between them), else the 6 ops of its decomposition
l2_norm_op = declare("l2_norm", "composite", rule_first, sig=_AXES, shape=_reduced_shape,
                     decompose=_l2_decompose, vjp=_l2_vjp, save_out=True, opaque=True,
                     public=False, doc="sqrt(sum(x * x)) over axes (sorted, distinct; empty "
                     "only for 0-d x); real floating x")


def _centered(x, axes):
    """(n, x - mean): the count over axes and x less its mean there (a sum over n)."""
    n = _product(x._data.shape[a] for a in axes)
    return n, x - run(sum_op, x, axes=axes, keepdims=True) / n


def _var_decompose(x, *, axes, keepdims, correction):
    n, centered = _centered(x, axes)
    return run(sum_op, centered * centered, axes=axes, keepdims=keepdims) / \
        builtins.max(n - correction, 0)


def _var_vjp(g, out, x, *, axes, keepdims, correction):
    # torch's var_backward: 2 (x - mean) / (n - correction) times the spread gradient
    n, centered = _centered(x, axes)
    g = _spread(g, x, axes, keepdims)
    if len(axes) == x.ndim and n - correction <= 0:
        # torch's var over every dim with no degrees of freedom: nan where x is its mean
        # (inf * 0), else inf
        from .elementwise import where
        return (g * where(centered == 0, math.nan, math.inf),)
    factor = 2.0 / (n - correction) if n != correction else math.inf   # (no max(): torch's)
    return (g * centered * factor,)


# the variance over axes of a real floating x (Tensor.var/std of REAL_FLOATS): one kernel
# where a backend has it (the CPU's: the decomposition's NumPy calls, bit for bit), else its
# 6 ops
var_op = declare("var", "composite", rule_first, sig=_AXES + ", correction: float",
                 shape=_reduced_shape, decompose=_var_decompose, vjp=_var_vjp, opaque=True,
                 public=False, doc="sum((x - mean)^2) / max(n - correction, 0) over axes "
                 "(sorted, distinct; empty only for 0-d x); real floating x")


_ALL_AXES = [tuple(range(n)) for n in range(8)]


def _every_axis(n: int) -> tuple:
    return _ALL_AXES[n] if n < 8 else tuple(range(n))


_SAME_DTYPE = (sum_op, prod_op, max_op, min_op)


def _reduce(op, x: Tensor, dim, keepdim: bool):
    shape = x._data.shape
    n = len(shape)
    if n and (dim is None or type(dim) is int) and x._dtype in REAL_FLOATS and \
            op in _SAME_DTYPE and 0 not in shape:
        # the common case (a float32/float64 tensor, all dims or one): the op's result
        # dtype is the input's, nothing to check; straight to the kernel
        axes = _every_axis(n) if dim is None else (dim % n,) if -n <= dim < n else None
        if axes is not None:
            return direct(op, x._device, x._dtype, (x,), {"axes": axes,
                                                          "keepdims": bool(keepdim)})
    if isinstance(dim, (list, tuple)) and not dim:
        dim = None                     # PyTorch: an empty dim list reduces everything
    axes = norm_dims(dim, x.ndim, op.name)
    shape = x._data.shape
    if op in (max_op, min_op) and x.numel() == 0 and (
            not axes or 0 in [shape[a] for a in axes]):
        raise EmberValueError(
            f"{op.name}(): expected a non-empty tensor (or a dim whose size is not 0), got "
            f"shape {tuple(x.shape)}; there is no identity for {op.name}")
    return run(op, x, axes=axes, keepdims=bool(keepdim))




@numpy_names
def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum of the elements over ``dim`` (an int, a tuple, or all dims by default).

    Parameters
    ----------
    x : Tensor
    dim : int or tuple of int, optional
    keepdim : bool
        Keep the reduced dims with size 1.
    dtype : dtype, optional
        Convert ``input`` first.

    Returns
    -------
    Tensor
        Integers and bool sum in int64.

    Examples
    --------
    >>> import ember
    >>> ember.sum(ember.tensor([[1, 2], [3, 4]]), dim=0).tolist()
    [4, 6]

    PyTorch
    -------
    ``torch.sum``
    """
    if dtype is not None:
        input = input.to(dtype)
        if input._dtype.category <= D.INT:   # an integer dtype asked for is the result's (torch)
            out = _reduce(sum_op, input, dim, keepdim)
            return out if out._dtype is input._dtype else out.to(input._dtype)
    if dim is None and input._dtype.category == D.FLOAT:   # the common case
        n = len(input._data.shape)
        if n:
            return direct(sum_op, input._device, input._dtype, (input,),
                          {"axes": _every_axis(n), "keepdims": bool(keepdim)})
    return _reduce(sum_op, input, dim, keepdim)


@numpy_names
def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The product of the elements over ``dim`` (all by default); integers and bool multiply
    in int64.

    PyTorch
    -------
    ``torch.prod``
    """
    if dtype is not None:
        input = input.to(dtype)
        out = _reduce(prod_op, input, dim, keepdim)
        return out if out._dtype is input._dtype else out.to(input._dtype)    # as sum(dtype=)
    return _reduce(prod_op, input, dim, keepdim)


@numpy_names
def amax(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """The maximum over ``dim`` (all dims by default); nan if any element is nan.

    PyTorch
    -------
    ``torch.amax``
    """
    result = _reduce(max_op, input, dim, keepdim)
    return result if out is None else _out.write_out("amax", result, out, (input,))


@numpy_names
def amin(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """The minimum over ``dim`` (all dims by default); nan if any element is nan.

    PyTorch
    -------
    ``torch.amin``
    """
    result = _reduce(min_op, input, dim, keepdim)
    return result if out is None else _out.write_out("amin", result, out, (input,))


@numpy_names
def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether any element is nonzero, over all of ``input`` or along ``dim``.

    PyTorch
    -------
    ``torch.any``
    """
    return _reduce(any_op, input, dim, keepdim)


@numpy_names
def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether every element is nonzero, over all of ``input`` or along ``dim``.

    PyTorch
    -------
    ``torch.all``
    """
    return _reduce(all_op, input, dim, keepdim)


def _arg(op, x, dim, keepdim):
    if x.numel() == 0:
        raise EmberValueError(f"{op.name}(): expected a non-empty tensor, got shape "
                              f"{tuple(x.shape)}")
    axis = None if dim is None else norm_dim(dim, x.ndim, op.name)
    if axis is not None and x.ndim == 0:
        axis = None
    attrs = {"axis": axis, "keepdims": bool(keepdim) and axis is not None}
    if x._dtype in REAL_FLOATS:          # real floats: nothing for run() to check or cast
        out = direct(op, x._device, D.int64, (x,), attrs)
    else:
        out = run(op, x, **attrs)
    if dim is None and keepdim and x.ndim:    # torch: every dim kept, of size 1
        return reshape(out, (1,) * x.ndim)
    return out


@numpy_names
def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The int64 index of the first maximum along ``dim`` (of the flattened ``input`` when
    ``dim`` is None); nan counts as the maximum.

    PyTorch
    -------
    ``torch.argmax``
    """
    return _arg(argmax_op, input, dim, keepdim)


@numpy_names
def argmin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The int64 index of the first minimum along ``dim`` (of the flattened ``input`` when
    ``dim`` is None); nan counts as the minimum.

    PyTorch
    -------
    ``torch.argmin``
    """
    return _arg(argmin_op, input, dim, keepdim)
