"""torch.* reductions: mean, var, std, max/min with indices, logsumexp, quantiles, mode,
histograms, counts, running extremes, distances.
"""
from __future__ import annotations

import builtins
import math
from typing import NamedTuple

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..dispatch import is_grad_enabled, run
from ..errors import (
    EmberIndexError,
    EmberTypeError,
    EmberValueError,
    ShapeError,
)
from ..ops._out import write_out
from ..ops._util import as_shape, norm_dim, norm_dims
from ..ops.index import mark_in_range
from ..ops.reduce import REAL_FLOATS, var_op
from ..signatures import numpy_names
from ..tensor import Tensor
from ._util import _need, _need_float, _tensor
from .elementwise import _isclose

__all__ = ["mean", "var", "std", "var_mean", "logsumexp", "max", "min", "allclose", "equal",
           "count_nonzero", "std_mean", "dist", "cdist", "bincount", "cummax", "cummin", "aminmax",
           "histc", "quantile", "nanquantile", "mode", "nansum", "nanmean", "nanmedian", "cov",
           "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "renorm"]


def _every(dim):
    """dim=() (or []) means every dim, as in sum (PyTorch's rule, docs/semantics.md)."""
    return None if isinstance(dim, (list, tuple)) and not dim else dim


def _count(x, dim):
    dim = _every(dim)
    n = 1
    for d in norm_dims(dim, x.ndim, "mean"):
        n *= x._data.shape[d]
    return n


@numpy_names
def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean over ``dim`` (all dims by default) of a floating tensor.

    Examples
    --------
    >>> import ember
    >>> ember.mean(ember.tensor([1.0, 2.0, 3.0])).item()
    2.0

    PyTorch
    -------
    ``torch.mean``
    """
    if dtype is not None:
        input = input.to(dtype)
    _need_float("mean", input)
    return ops.sum(input, dim, keepdim) / _count(input, dim)


@numpy_names
def var(input: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    """The variance over ``dim`` with ``correction`` (1: Bessel's, unbiased; 0: the
    population variance).

    PyTorch
    -------
    ``torch.var``
    """
    _need_float("var", input)
    if isinstance(dim, bool):               # torch's legacy var(x, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None:
        correction = 1 if unbiased else 0
    elif correction is None:                # torch: None is the default, 1
        correction = 1
    if input._dtype in REAL_FLOATS:           # one op (ops/reduce.py's var)
        return run(var_op, input, axes=norm_dims(_every(dim), input.ndim, "var"),
                   keepdims=bool(keepdim), correction=float(correction))
    centered = input - mean(input, dim, keepdim=True)
    n = _count(input, dim)
    if input._dtype.category == D.COMPLEX:        # |x - mean|^2: a real variance, as torch
        square = centered.real * centered.real + centered.imag * centered.imag
    else:
        square = centered * centered
    return ops.sum(square, dim, keepdim) / builtins.max(n - correction, 0)


@numpy_names
def std(input: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    """The standard deviation over ``dim`` with ``correction`` (see :func:`var`).

    PyTorch
    -------
    ``torch.std``
    """
    return var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased).sqrt()


@numpy_names
def var_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(var, mean)`` over ``dim``, as :func:`var` and :func:`mean`.

    PyTorch
    -------
    ``torch.var_mean``
    """
    if isinstance(dim, bool):               # torch's legacy var_mean(x, unbiased)
        dim, unbiased = None, dim
    return (var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased),
            mean(input, dim, keepdim))


@numpy_names
def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed stably.

    PyTorch
    -------
    ``torch.logsumexp``, ``torch.special.logsumexp``
    """
    if _amp and amp_policy.on("logsumexp"):      # autocast (amp_policy.py)
        return amp_policy.call("logsumexp", logsumexp, input, dim, keepdim)
    if input._dtype.category < D.FLOAT:                # torch: integers and bool in the default
        input = input.to(D.get_default_dtype())           # float dtype
    dim = _every(dim)
    # the shift is a constant: detach keeps inf - inf out of the gradient (a complex
    # tensor is shifted by its largest real part, as torch)
    m = ops.amax(input.real if input._dtype.category == D.COMPLEX else input, dim,
                 keepdim=True).detach()
    m = ops.where(ops.isfinite(m), m, 0.0)
    out = ops.log(ops.sum(ops.exp(input - m), dim, keepdim=True)) + m
    return out if keepdim else out.squeeze(norm_dims(dim, input.ndim, "logsumexp"))


@numpy_names
def max(input: Tensor, dim=None, keepdim: bool = False, *, other=None):
    """max() over all elements, or (values, indices) along dim, as torch.max.

    PyTorch
    -------
    ``torch.max``
    """
    _need("max", input)
    if other is not None:           # torch.max(input, other=y): the elementwise form
        if dim is not None:
            raise EmberTypeError("max(): pass dim or other=, not both")
        dim = other
    if isinstance(dim, Tensor):
        return ops.maximum(input, dim)
    if dim is None:
        return ops.amax(input)
    return _values_indices(input, dim, keepdim, ops.argmax)


@numpy_names
def min(input: Tensor, dim=None, keepdim: bool = False, *, other=None):
    """The minimum: of all elements; with ``dim``, ``(values, indices)`` along it; with a
    tensor as second argument, the elementwise minimum.

    PyTorch
    -------
    ``torch.min``
    """
    _need("min", input)
    if other is not None:           # torch.min(input, other=y): the elementwise form
        if dim is not None:
            raise EmberTypeError("min(): pass dim or other=, not both")
        dim = other
    if isinstance(dim, Tensor):
        return ops.minimum(input, dim)
    if dim is None:
        return ops.amin(input)
    return _values_indices(input, dim, keepdim, ops.argmin)


class MaxMin(tuple):
    """(values, indices), like torch.return_types.max."""

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _values_indices(x, dim, keepdim, arg):
    if not (x.requires_grad and is_grad_enabled()):
        # no gradient to route: the values by one reduction, the same as the gather's
        red = ops.amax if arg is ops.argmax else ops.amin
        return MaxMin((red(x, dim, keepdim=keepdim), arg(x, dim, keepdim=keepdim)))
    # values come through gather, so the gradient goes to the chosen index (PyTorch); the
    # index is in range by construction, so gather skips its bounds check (two reductions)
    idx = arg(x, dim, keepdim=True)
    d = norm_dim(dim, builtins.max(x.ndim, 1), "max")
    mark_in_range(idx, x._data.shape[d] if x._data.shape else 1)
    values = ops.gather(x, dim, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return MaxMin((values, idx))


def allclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every ``|input - other| <= atol + rtol * |other|`` (nan equal to nan with
    ``equal_nan``).

    Returns
    -------
    bool

    PyTorch
    -------
    ``torch.allclose``
    """
    return bool(_isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have one shape and equal elements.

    PyTorch
    -------
    ``torch.equal``
    """
    if input._data.shape != other._data.shape:
        return False
    return bool((input == other).all().item())


@numpy_names
def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """The number of nonzero elements over ``dim`` (all by default), int64.

    PyTorch
    -------
    ``torch.count_nonzero``
    """
    return (input != 0).sum(dim)


@numpy_names
def std_mean(input: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None):
    """``(std, mean)`` over ``dim``, as :func:`std` and :func:`mean`.

    PyTorch
    -------
    ``torch.std_mean``
    """
    if isinstance(dim, bool):               # torch's legacy std_mean(x, unbiased)
        dim, unbiased = None, dim
    return (std(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased),
            mean(input, dim, keepdim))


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other``.

    PyTorch
    -------
    ``torch.dist``
    """
    if _amp and amp_policy.on("dist"):      # autocast (amp_policy.py)
        return amp_policy.call("dist", dist, input, other, p)
    from ..linalg.norms import vector_norm
    return vector_norm(input - other, p)


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """Pairwise p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M).

    PyTorch
    -------
    ``torch.cdist``
    """
    if _amp and amp_policy.on("cdist"):      # autocast (amp_policy.py)
        return amp_policy.call("cdist", cdist, x1, x2, p, compute_mode)
    from ..linalg.norms import vector_norm
    if compute_mode not in _CDIST_MODES:
        raise EmberValueError(f"cdist: {compute_mode} is not a valid value for compute_mode; "
                              f"expected one of {', '.join(map(repr, _CDIST_MODES[1:]))}")
    # torch's rule: the matrix-product form for p=2 past 25 rows (or when asked), else the
    # differences themselves (exact for near points, where the product form cancels)
    if p == 2 and compute_mode != "donot_use_mm_for_euclid_dist" and (
            compute_mode == "use_mm_for_euclid_dist" or x1._data.shape[-2] > 25 or
            x2._data.shape[-2] > 25):
        # |a - b|^2 = |a|^2 - 2 a.b + |b|^2, clamped at 0 against rounding
        sq = (x1 * x1).sum(-1, keepdim=True) - 2 * ops.matmul(x1, x2.mT) + \
            (x2 * x2).sum(-1).unsqueeze(-2)
        zero = sq <= 0
        return ops.where(zero, 0.0, ops.where(zero, 1.0, sq).sqrt())
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


def bincount(input: Tensor, weights=None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs (weighted: the sum of its weights).

    PyTorch
    -------
    ``torch.bincount``
    """
    if input.ndim != 1 or input._dtype.category != D.INT:
        raise ShapeError(f"bincount: expected a 1-D integer tensor, got {tuple(input.shape)} "
                         f"{input._dtype.name}")
    n = builtins.max(int(input.max().item()) + 1 if input.numel() else 0, minlength)
    if input.numel() and int(input.min().item()) < 0:
        raise EmberValueError("bincount: the input must be non-negative")
    if weights is not None and weights._dtype.category != D.FLOAT:
        # torch: integer or bool weights count in float64 (float weights keep their dtype)
        weights = weights.to(D.float64)
    src = weights if weights is not None else ops.ones(input._data.shape, dtype=D.int64,
                                                       device=input._device)
    base = ops.zeros(n, dtype=src._dtype, device=input._device)
    return ops.index_add(base, 0, input, src)


class _Fields(tuple):
    """A two-field result like torch.return_types (indexable, unpackable, named)."""

    __slots__ = ()
    _names = ("values", "indices")

    def __getattr__(self, name):
        if name in self._names:
            return self[self._names.index(name)]
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self._names, self))
        return f"ember.return_types.{type(self).__name__}({fields})"


def _result_type(name, names=("values", "indices")):
    return type(name, (_Fields,), {"__slots__": (), "_names": names})


cummax_result = _result_type("cummax")

cummin_result = _result_type("cummin")

aminmax_result = _result_type("aminmax", ("min", "max"))


def _cumulative_extreme(name, input: Tensor, dim: int, larger: bool, result):
    _need(name, input)
    axis = norm_dim(dim, input.ndim, name) if input.ndim else 0
    x = input.detach().reshape(1) if input.ndim == 0 else input.detach()
    length = x._data.shape[axis]
    floating = x._dtype.category == D.FLOAT
    index_shape = [1] * x.ndim
    index_shape[axis] = length
    index = ops.arange(length, dtype=D.int64, device=x._device).reshape(index_shape)
    index = index.expand(*x.shape).contiguous()
    values = x
    step = 1
    # a log-step scan: after the pass with `step`, position i holds the extreme of the last
    # 2 * step elements up to i; a later element wins ties (PyTorch's >=), and nan wins
    while step < length:
        earlier, current = values.narrow(axis, 0, length - step), values.narrow(
            axis, step, length - step)
        beats = earlier > current if larger else earlier < current
        if floating:
            beats = beats.logical_or(earlier.isnan().logical_and(current.isnan().logical_not()))
        kept = [values.narrow(axis, 0, step)]
        values = ops.cat(kept + [ops.where(beats, earlier, current)], axis)
        index = ops.cat([index.narrow(axis, 0, step),
                         ops.where(beats, index.narrow(axis, 0, length - step),
                                   index.narrow(axis, step, length - step))], axis)
        step *= 2
    if input.ndim == 0:
        index = index.reshape(())
        return result((input.clone(), index))
    # gather from the input itself so the gradient reaches the selected elements
    return result((ops.gather(input, axis, index), index))


@numpy_names
def cummax(input: Tensor, dim: int):
    """(values, indices): the running maximum along dim and where it was found.

    PyTorch
    -------
    ``torch.cummax``
    """
    return _cumulative_extreme("cummax", input, dim, True, cummax_result)


@numpy_names
def cummin(input: Tensor, dim: int):
    """(values, indices): the running minimum along dim and where it was found.

    PyTorch
    -------
    ``torch.cummin``
    """
    return _cumulative_extreme("cummin", input, dim, False, cummin_result)


@numpy_names
def aminmax(input: Tensor, *, dim=None, keepdim: bool = False, out=None):
    """(min, max) over dim (every element by default); ties share the gradient as amin and
    amax do.

    PyTorch
    -------
    ``torch.aminmax``
    """
    _need("aminmax", input)
    if out is not None:
        return write_out("aminmax", aminmax(input, dim=dim, keepdim=keepdim), out, (input,))
    if dim is None:
        return aminmax_result((ops.amin(input).reshape(()) if not keepdim else
                               ops.amin(input, tuple(range(input.ndim)), keepdim=True),
                               ops.amax(input).reshape(()) if not keepdim else
                               ops.amax(input, tuple(range(input.ndim)), keepdim=True)))
    return aminmax_result((ops.amin(input, dim, keepdim=keepdim),
                           ops.amax(input, dim, keepdim=keepdim)))


def histc(input: Tensor, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002
    """A histogram of input in `bins` equal bins over [min, max] (the data's range when
    both are 0); elements outside are ignored, max falls in the last bin.

    PyTorch
    -------
    ``torch.histc``
    """
    x = _tensor("histc", input)
    if x._dtype.category != D.FLOAT:
        raise EmberTypeError(f"histc(): expected a floating-point tensor, got {x._dtype}")
    if not isinstance(bins, int) or bins <= 0:
        raise EmberValueError(f"histc(): bins must be a positive int, got {bins!r}")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise EmberValueError(f"histc(): max must be at least min, got min={lo}, max={hi}")
    flat = x.detach().reshape(-1)
    if lo == hi and flat.numel():
        lo, hi = float(flat.amin().item()), float(flat.amax().item())
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise EmberValueError(f"histc(): range of [{lo}, {hi}] is not finite")
    inside = (flat >= lo).logical_and(flat <= hi)
    pos = ((ops.where(inside, flat, lo) - lo) * (bins / (hi - lo))).floor().to(D.int64)
    pos = pos.clamp(0, bins - 1)
    counts = ops.zeros(bins, dtype=x._dtype, device=x._device)
    return ops.scatter_add(counts, 0, pos, inside.to(x._dtype))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    x = _tensor(name, input)
    if x._dtype not in (D.float32, D.float64):
        raise EmberTypeError(f"{name}(): expected a float32 or float64 input, got {x._dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise EmberValueError(f"{name}(): interpolation must be one of {_INTERPOLATIONS}, "
                              f"got {interpolation!r}")
    scalar_q = type(q) is not Tensor or q.ndim == 0
    if type(q) is Tensor:
        if q.ndim > 1:
            raise ShapeError(f"{name}(): q must be a scalar or 1-D tensor, got shape "
                             f"{tuple(q.shape)}")
        # q stays in the graph: torch's linear interpolation differentiates w.r.t. q
        # (d/dq = (upper - lower) * (count - 1))
        qv = q.to(x._dtype).to(x._device).reshape(-1)
        qs = [float(v) for v in qv.detach().tolist()]
    else:
        qs = [float(q)]
        qv = ops.tensor(qs, dtype=x._dtype, device=x._device)
    if any(not (0.0 <= v <= 1.0) for v in qs):
        raise EmberValueError(f"{name}(): q values must be in the range [0, 1], got {qs}")
    if dim is None:
        src, out_shape = x.reshape(-1), (1,) * x.ndim if keepdim else ()
        axis_src = src
    else:
        d = norm_dim(dim, builtins.max(x.ndim, 1), name)
        src0 = x.reshape(1) if x.ndim == 0 else x
        axis_src = ops.movedim(src0, d, -1)
        shp = list(src0.shape)
        if keepdim:
            shp[d] = 1
        else:
            shp.pop(d)
        out_shape = tuple(shp) if x.ndim else ()
    n = axis_src.shape[-1]
    if n == 0:
        raise EmberValueError(f"{name}(): input tensor must be non-empty")
    srt = ops.sort(axis_src, dim=-1)[0]          # nan sorts last
    nanmask = axis_src.isnan()
    if ignore_nan:
        count = (~nanmask).sum(-1, keepdim=True).to(x._dtype)
    else:
        count = ops.full(srt.shape[:-1] + (1,), float(n), dtype=x._dtype, device=x._device)
    lead = tuple(srt.shape[:-1])
    k = len(qs)
    qb = qv.reshape((k,) + (1,) * len(lead) + (1,))
    rank = qb * (count - 1.0).clamp(0.0, None)          # (k, *lead, 1)
    if interpolation == "lower":
        rank = rank.floor()
    elif interpolation == "higher":
        rank = rank.ceil()
    elif interpolation == "nearest":
        rank = ops.round(rank)
    lo = rank.floor()
    hi = rank.ceil()
    srt_k = ops.expand(srt.unsqueeze(0), (k,) + tuple(srt.shape))
    vlo = ops.gather(srt_k, -1, lo.to(D.int64))
    vhi = ops.gather(srt_k, -1, hi.to(D.int64))
    if interpolation == "midpoint":
        val = ops.where(lo == hi, vlo, (vlo + vhi) * 0.5)
    else:
        w = rank - lo
        val = vlo + (vhi - vlo) * w
        val = ops.where(w == 0, vlo, val)
    bad = (count == 0) if ignore_nan else nanmask.any(-1, keepdim=True)
    val = ops.where(ops.expand(bad.unsqueeze(0), val.shape), math.nan, val)
    val = val.reshape((k,) + out_shape)
    return val.reshape(out_shape) if scalar_q else val


@numpy_names
def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles of input (over dim, or all elements); nan if a slice has nan.

    PyTorch
    -------
    ``torch.quantile``
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@numpy_names
def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile ignoring nan values (nan where a slice is all nan).

    PyTorch
    -------
    ``torch.nanquantile``
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


class mode_result(NamedTuple):  # noqa: N801  (torch.return_types.mode)
    values: Tensor
    indices: Tensor


@numpy_names
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> mode_result:
    """The most frequent value of each slice along dim (the smallest among equally
    frequent ones) and the index of its last occurrence, as torch on CPU.

    PyTorch
    -------
    ``torch.mode``
    """
    x = _tensor("mode", input)
    if x.ndim == 0:
        return mode_result(x.clone(), ops.zeros((), dtype=D.int64, device=x._device))
    d = norm_dim(dim, x.ndim, "mode")
    n = x.shape[d]
    if n == 0:
        raise EmberValueError(f"mode(): expected a non-empty dim {d}, got shape "
                              f"{tuple(x.shape)}")
    v = ops.movedim(x.detach(), d, -1)
    counts = (v.unsqueeze(-1) == v.unsqueeze(-2)).sum(-1)
    top = counts.amax(-1, keepdim=True)
    big = math.inf if x._dtype.category == D.FLOAT else None
    if big is None:
        big = D.iinfo(x._dtype).max
    best = ops.where(counts == top, v, big).amin(-1, keepdim=True)
    pos = ops.arange(n, device=x._device)
    idx = ops.where(v == best, pos, -1).amax(-1, keepdim=True)
    values = ops.gather(ops.movedim(x, d, -1), -1, idx)
    values, idx = ops.movedim(values, -1, d), ops.movedim(idx, -1, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return mode_result(values, idx)


def sum_to_size(self, *size) -> Tensor:
    """self summed over the dims where size has 1 (or lacks a leading dim)."""
    size = as_shape(size, "sum_to_size")
    lead = self.ndim - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size)
                                      if n == 1 and self._data.shape[lead + i] != 1)
    if not dims and self.ndim == 0:
        return self.sum()          # torch sums a 0-d tensor to () (a bool one to int64)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size)


# --- reductions that skip nan -------------------------------------------------------------

@numpy_names
def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """sum with nan counted as zero.

    PyTorch
    -------
    ``torch.nansum``
    """
    _need("nansum", input)
    if input._dtype.category == D.COMPLEX:
        raise EmberTypeError("nansum: not defined on complex tensors (torch refuses it too: "
                             "nansum does not support complex inputs); sum the parts")
    if input._dtype.category == D.FLOAT:
        input = ops.where(input.isnan(), 0.0, input)
    return ops.sum(input, dim, keepdim, dtype=dtype)


@numpy_names
def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """mean of the elements that are not nan (nan where there are none).

    PyTorch
    -------
    ``torch.nanmean``
    """
    _need("nanmean", input)
    if dtype is not None:
        input = input.to(dtype)
    _need_float("nanmean", input)
    keep = ~input.isnan()
    return nansum(input, dim, keepdim) / ops.sum(keep.to(input._dtype), _every(dim), keepdim)


@numpy_names
def nanmedian(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median of the elements that are not nan (nan where all are): of every
    element, or (values, indices) along dim.

    PyTorch
    -------
    ``torch.nanmedian``
    """
    _need("nanmedian", input)
    if dim is None:
        if input.numel() == 0:
            raise EmberValueError("nanmedian(): expected a non-empty tensor")
        return nanmedian(input.reshape(-1), 0)[0]
    if input.ndim == 0:
        norm_dim(dim, 1, "nanmedian")
        return ops.sorting.ValuesIndices((input.clone(), ops.zeros((), dtype=D.int64,
                                                                    device=input._device)))
    axis = norm_dim(dim, input.ndim, "nanmedian")
    if input._data.shape[axis] == 0:
        raise EmberIndexError(f"nanmedian(): expected a non-empty dimension {dim}")
    order = ops.argsort(input, axis)          # nan sorts last
    valid = ops.sum((~input.isnan()).to(D.int64), axis, keepdim=True)
    position = ops.where(valid > 0, ops.floor_divide(valid - 1, 2), 0)
    index = order.gather(axis, position)
    values = input.gather(axis, index)
    if not keepdim:
        values, index = values.squeeze(axis), index.squeeze(axis)
    return ops.sorting.ValuesIndices((values, index))


# --- covariance ---------------------------------------------------------------------------

def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """Covariance of the variables in input's rows (observations in columns), with integer
    frequency weights and observation weights, as numpy.cov and torch.cov.

    PyTorch
    -------
    ``torch.cov``
    """
    _need("cov", input)
    if input.ndim > 2:
        raise ShapeError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    x = x if x._dtype.category >= D.FLOAT else x.to(D.get_default_dtype())
    n = x._data.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        _need("cov", wt)
        if wt.ndim > 1 or wt.numel() != n:
            raise ShapeError(f"cov(): expected {name} to have one dimension and {n} "
                             f"elements, got shape {tuple(wt.shape)}")
        if name == "fweights" and wt._dtype.category == D.FLOAT:
            raise EmberTypeError("cov(): expected fweights to have an integral dtype, got "
                                 f"{wt._dtype.name}")
        if name == "aweights" and wt._dtype.category != D.FLOAT:
            raise EmberTypeError("cov(): expected aweights to have a floating point dtype, "
                                 f"got {wt._dtype.name}")
        if bool((wt < 0).any()):
            raise EmberValueError(f"cov(): {name} cannot be negative")
        wt = wt.to(x._dtype)
        w = wt if w is None else w * wt
    if w is None:
        wsum = float(n)
        avg = ops.sum(x, 1, keepdim=True) / n if n else ops.sum(x, 1, keepdim=True) * math.nan
        norm = wsum - correction
    else:
        wsum = ops.sum(w)
        avg = ops.sum(x * w, 1, keepdim=True) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * ops.sum(w * aweights.to(x._dtype)) / wsum
    xm = x - avg
    xw = xm if w is None else xm * w
    c = ops.matmul(xw, xm.transpose(0, 1).conj() if xm.is_complex() else xm.transpose(0, 1))
    if type(norm) is Tensor:
        norm = ops.where(norm < 0, 0.0, norm)
    else:
        norm = builtins.max(norm, 0.0)
    c = c / norm
    return c.squeeze() if input.ndim < 2 or x._data.shape[0] == 1 else c


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of input's rows, clipped to [-1, 1].

    PyTorch
    -------
    ``torch.corrcoef``
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = ops.sqrt(c.diagonal())
    c = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return c.clamp(-1.0, 1.0)


# --- integrals by the trapezoidal rule ----------------------------------------------------

def _spacing(name, y, x, dx, axis):
    n = y._data.shape[axis]
    if x is None:
        return 1.0 if dx is None else dx
    _need(name, x)
    if x.ndim == 1:
        if x._data.shape[0] != n:
            raise ShapeError(f"{name}(): there must be one `x` value for each sample point, "
                             f"got {x._data.shape[0]} for {n} points")
        d = x[1:] - x[:-1]
        shape = [1] * y.ndim
        shape[axis] = n - 1
        return d.reshape(shape)
    xa = norm_dim(axis - y.ndim, x.ndim, name)
    return x.narrow(xa, 1, x._data.shape[xa] - 1) - x.narrow(xa, 0, x._data.shape[xa] - 1)


def _trapezoid(name, y, x, dx, dim, cumulative):
    _need(name, y)
    axis = norm_dim(dim, y.ndim, name)
    n = y._data.shape[axis]
    if not cumulative and n == 0:
        return ops.sum(y, axis)
    d = _spacing(name, y, x, dx, axis)
    left = y.narrow(axis, 0, builtins.max(n - 1, 0))
    right = y.narrow(axis, 1, builtins.max(n - 1, 0)) if n else left
    area = (left + right) * d / 2.0
    return ops.cumsum(area, axis) if cumulative else ops.sum(area, axis)


@numpy_names
def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal-rule integral of y along dim (spacing x, or dx, default 1).

    PyTorch
    -------
    ``torch.trapezoid``
    """
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        x, dx = None, x
    return _trapezoid("trapezoid", y, x, dx, dim, False)


@numpy_names
def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim`` (trapezoid()'s older name).

    PyTorch
    -------
    ``torch.trapz``
    """
    return trapezoid(y, x, dx=dx, dim=dim)


@numpy_names
def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal-rule integral of y along dim (one element fewer).

    PyTorch
    -------
    ``torch.cumulative_trapezoid``
    """
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        x, dx = None, x
    return _trapezoid("cumulative_trapezoid", y, x, dx, dim, True)


@numpy_names
def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm.

    PyTorch
    -------
    ``torch.renorm``
    """
    _need("renorm", input)
    _need_float("renorm", input)
    if p <= 0:
        raise EmberValueError(f"renorm(): non-positive norm not supported, got p={p}")
    if maxnorm < 0:
        raise EmberValueError(f"renorm(): expected maxnorm to be >= 0, got {maxnorm}")
    if input.ndim <= 1:
        raise ShapeError(f"renorm(): input needs at least 2 dimensions, got {input.ndim}")
    axis = norm_dim(dim, input.ndim, "renorm")
    others = tuple(d for d in range(input.ndim) if d != axis)
    norm = input.norm(p, others, keepdim=True)
    factor = ops.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor
