"""PyTorch's special and order-statistic functions as ember composites (atan2, lgamma, ...)."""
from __future__ import annotations

import itertools
import math
from typing import NamedTuple

from . import dtypes as D
from . import ops
from .autograd.function import Function
from .errors import EmberTypeError, EmberValueError, ShapeError
from .ops._util import broadcast_shapes, norm_dim
from .tensor import Tensor

__all__ = ["atan2", "arctan2", "lgamma", "digamma", "erfinv", "sinc", "xlog1py",
           "histc", "combinations", "quantile", "nanquantile", "mode"]


def _tensor(name, x, like=None):
    if type(x) is Tensor:
        return x
    if isinstance(x, (int, float, bool)) and like is not None:
        return ops.full((), x, dtype=like._dtype if like._dtype.category == D.FLOAT
                        else D.get_default_dtype(), device=like._device)
    raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")


def _float(x: Tensor) -> Tensor:
    return x if x._dtype.category == D.FLOAT else x.to(D.get_default_dtype())


def _signbit(x: Tensor) -> Tensor:
    # -0.0 counts as negative: 1/-0 is -inf
    return (x < 0).logical_or((x == 0).logical_and((1.0 / x) < 0))


# --- atan2 -----------------------------------------------------------------------------

# Cephes atan: range reduction to |z| <= tan(pi/8), then a rational approximation
_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1,
           -7.500855792314704667340e1, -1.228866684490136173410e2,
           -6.485021904942025371773e1)
_ATAN_Q = (2.485846490142306297962e1, 1.650270098316988542046e2,
           4.328810604912902668951e2, 4.853903996359136964868e2,
           1.945506571482613964425e2)


def _atan(x: Tensor) -> Tensor:
    ax = x.abs()
    big = ax > 2.41421356237309504880
    mid = (ax > 0.66).logical_and(~big)
    safe = ops.where(big, ax, 1.0)
    z = ops.where(big, -1.0 / safe, ops.where(mid, (ax - 1.0) / (ax + 1.0), ax))
    base = ops.where(big, math.pi / 2, ops.where(mid, math.pi / 4, ax * 0.0))
    zz = z * z
    p = zz * 0.0 + _ATAN_P[0]
    for c in _ATAN_P[1:]:
        p = p * zz + c
    q = zz + _ATAN_Q[0]
    for c in _ATAN_Q[1:]:
        q = q * zz + c
    r = base + (z * (zz * p / q) + z)
    r = ops.where(ax == math.inf, math.pi / 2, r)
    return ops.where(_signbit(x), -r, r)


def _atan2_forward(y: Tensor, x: Tensor) -> Tensor:
    xneg = _signbit(x)
    yneg = _signbit(y)
    ysign = ops.where(yneg, -1.0, 1.0).to(y._dtype)
    ratio = y / ops.where(x == 0, 1.0, x)
    t = _atan(ratio)
    general = ops.where(xneg, t + ysign * math.pi, t)
    # x = +-0: the y axis, or the origin where the signs of both zeros pick the answer
    at_zero = ops.where(y == 0, ops.where(xneg, ysign * math.pi, y), ysign * (math.pi / 2))
    both_inf = (x.abs() == math.inf).logical_and(y.abs() == math.inf)
    corner = ysign * ops.where(xneg, 3 * math.pi / 4, ysign * 0.0 + math.pi / 4)
    out = ops.where(x == 0, at_zero, general)
    out = ops.where(both_inf, corner, out)
    return ops.where(y.isnan().logical_or(x.isnan()), math.nan, out)


class _Atan2(Function):
    @staticmethod
    def forward(ctx, y, x):
        ctx.save_for_backward(y, x)
        return _atan2_forward(y, x)

    @staticmethod
    def backward(ctx, grad):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        return grad * x / r2, grad * (-y) / r2


def atan2(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The angle of the point (other, input), in (-pi, pi], with IEEE signed-zero rules."""
    if out is not None:
        from ._torch_gaps import gap
        raise gap("atan2(out=)", "write the result with out.copy_(...)")
    y = _tensor("atan2", input, other if type(other) is Tensor else None)
    x = _tensor("atan2", other, y)
    y, x = _float(y), _float(x)
    dtype = D.promote_types(y._dtype, x._dtype)
    y, x = y.to(dtype), x.to(dtype)
    shape = broadcast_shapes("atan2", y._data.shape, x._data.shape)
    return _Atan2.apply(ops.expand(y, shape), ops.expand(x, shape))


arctan2 = atan2


# --- gamma family ----------------------------------------------------------------------

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_pos(x: Tensor) -> Tensor:
    # Lanczos (g=7, n=9) for x >= 0.5
    z = x - 1.0
    a = z * 0.0 + _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], start=1):
        a = a + c / (z + float(i))
    t = z + (_LANCZOS_G + 0.5)
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * ops.log(t) - t + ops.log(a)


def _abs_sinpi(x: Tensor) -> Tensor:
    # reduce first: sin(pi * x) of a large x loses every digit to the rounding of pi * x
    return ops.sin(math.pi * (x - ops.round(x))).abs()


def _lgamma_forward(x: Tensor) -> Tensor:
    small = x < 0.5
    pos = _lgamma_pos(ops.where(small, 1.0 - x, x).clamp(0.5, None))
    reflected = math.log(math.pi) - ops.log(_abs_sinpi(x)) - pos
    out = ops.where(small, reflected, pos)
    return ops.where(x.abs() == math.inf, math.inf, out)


def _series_shift(x: Tensor, term, upto: float = 10.0, steps: int = 10):
    # recurrence up to x >= upto (x >= 0.5 here, so `steps` shifts suffice)
    acc = x * 0.0
    for _ in range(steps):
        low = x < upto
        acc = acc + ops.where(low, term(ops.where(low, x, 1.0)), 0.0)
        x = ops.where(low, x + 1.0, x)
    return x, acc


_DIGAMMA_B = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_pos(x: Tensor) -> Tensor:
    x, acc = _series_shift(x, lambda v: 1.0 / v)
    inv2 = 1.0 / (x * x)
    s = inv2 * 0.0
    for c in reversed(_DIGAMMA_B):
        s = (s + c) * inv2
    return ops.log(x) - 0.5 / x - s - acc


def _digamma_forward(x: Tensor) -> Tensor:
    small = x < 0.5
    pos = _digamma_pos(ops.where(small, 1.0 - x, x).clamp(0.5, None))
    frac = x - ops.round(x)
    reflected = pos - math.pi / ops.tan(math.pi * frac)
    out = ops.where(small, reflected, pos)
    # torch: nan at negative integers and -inf; -+inf at +-0; +inf at +inf
    out = ops.where((x < 0).logical_and(frac == 0), math.nan, out)
    out = ops.where(x == 0, ops.where(_signbit(x), math.inf, -math.inf), out)
    out = ops.where(x == math.inf, math.inf, out)
    return ops.where(x == -math.inf, math.nan, out)


_TRIGAMMA_B = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def trigamma(x: Tensor) -> Tensor:
    """psi'(x), by recurrence, the asymptotic series and reflection."""
    small = x < 0.5
    v = ops.where(small, 1.0 - x, x).clamp(0.5, None)
    v, acc = _series_shift(v, lambda u: 1.0 / (u * u))
    inv = 1.0 / v
    inv2 = inv * inv
    s = inv2 * 0.0
    for c in reversed(_TRIGAMMA_B):
        s = (s + c) * inv2
    pos = acc + inv + 0.5 * inv2 + s * inv
    sinpi = _abs_sinpi(x)
    reflected = (math.pi * math.pi) / (sinpi * sinpi) - pos
    return ops.where(small, reflected, pos)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _lgamma_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * digamma(x)


class _Digamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _digamma_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * trigamma(x)


def lgamma(input: Tensor) -> Tensor:
    """log |Gamma(input)|."""
    return _Lgamma.apply(_float(_tensor("lgamma", input)))


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, psi(input)."""
    return _Digamma.apply(_float(_tensor("digamma", input)))


# --- erfinv ----------------------------------------------------------------------------

_GILES_LO = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
             0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_HI = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
             0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfc_tail(x: Tensor) -> Tensor:
    # erfc for x >= 2 by its continued fraction: 1 - erf(x) would keep no digits there
    t = x * 0.0
    for k in range(50, 0, -1):
        t = (k / 2) / (x + t)
    return ops.exp(-x * x) / (math.sqrt(math.pi) * (x + t))


def _erfinv_forward(y: Tensor) -> Tensor:
    a = ops.where(y.abs() < 1, y.abs(), 0.0)
    w = -ops.log((1.0 - a) * (1.0 + a))
    lo = w < 5.0
    wl = w - 2.5
    wh = ops.sqrt(ops.where(lo, 5.0, w)) - 3.0
    pl = wl * 0.0 + _GILES_LO[0]
    for c in _GILES_LO[1:]:
        pl = pl * wl + c
    ph = wh * 0.0 + _GILES_HI[0]
    for c in _GILES_HI[1:]:
        ph = ph * wh + c
    x = ops.where(lo, pl, ph) * a
    # beyond float32's reach (w > 16) Giles' fit fails: start from erfc's asymptotic form
    # 1 - a = exp(-x^2) / (x sqrt(pi)) * (1 - 1 / (2 x^2)), solved by fixed-point steps
    far = w > 16.0
    nlt = ops.where(far, w + ops.log1p(a), 16.0)
    g = ops.sqrt(nlt)
    for _ in range(3):
        g = ops.sqrt(nlt - ops.log(g * math.sqrt(math.pi)) + ops.log1p(-0.5 / (g * g)))
    x = ops.where(far, g, x)
    # Giles' guess is good to float32; Halley steps on erf(x) = a bring it to float64,
    # with the residual taken from erfc in the tail, where erf(x) rounds to 1
    steps = 3 if y._dtype == D.float64 else 1
    for _ in range(steps):
        tail = x >= 2.0
        r = ops.where(tail, (1.0 - a) - _erfc_tail(ops.where(tail, x, 2.0)), ops.erf(x) - a)
        d = (2.0 / math.sqrt(math.pi)) * ops.exp(-x * x)
        f = r / d
        x = x - f / (1.0 + x * f)
    x = ops.where(_signbit(y), -x, x)
    x = ops.where(y.abs() == 1, ops.where(y > 0, math.inf, -math.inf), x)
    x = ops.where(y.abs() > 1, math.nan, x)
    return ops.where(y.isnan(), y, x)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx, y):
        out = _erfinv_forward(y)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (math.sqrt(math.pi) / 2) * ops.exp(out * out)


def erfinv(input: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1); +-inf at +-1 and nan outside."""
    return _Erfinv.apply(_float(_tensor("erfinv", input)))


# --- small elementwise -----------------------------------------------------------------

def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0."""
    x = _float(_tensor("sinc", input))
    zero = x == 0
    px = math.pi * ops.where(zero, 1.0, x)
    return ops.where(zero, 1.0, ops.sin(px) / px)


def xlog1py(input, other) -> Tensor:
    """input * log1p(other), 0 where input is 0 (and other is not nan)."""
    if type(input) is not Tensor:
        input = _tensor("xlog1py", input, _tensor("xlog1py", other))
    other = _tensor("xlog1py", other, input)
    out = input * ops.log1p(other)
    return ops.where((input == 0).logical_and(~other.isnan()), 0.0, out)


# --- counting and order statistics ------------------------------------------------------

def histc(input: Tensor, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002
    """A histogram of input in `bins` equal bins over [min, max] (the data's range when
    both are 0); elements outside are ignored, max falls in the last bin."""
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


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The r-length combinations of a 1-D tensor's elements, one per row (as itertools)."""
    x = _tensor("combinations", input)
    if x.ndim != 1:
        raise ShapeError(f"combinations(): expected a 1-D tensor, got shape {tuple(x.shape)}")
    if not isinstance(r, int) or r < 0:
        raise EmberValueError(f"combinations(): r must be a non-negative int, got {r!r}")
    n = x.shape[0]
    make = itertools.combinations_with_replacement if with_replacement \
        else itertools.combinations
    rows = list(make(range(n), r))
    if r == 0 or not rows:
        return ops.empty((0,) if r == 0 else (0, r), dtype=x._dtype, device=x._device)
    idx = ops.tensor([i for row in rows for i in row], dtype=D.int64, device=x._device)
    return x[idx].reshape(len(rows), r)


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
        qv = q.detach().to(x._dtype).to(x._device).reshape(-1)
        qs = [float(v) for v in qv.tolist()]
    else:
        qs = [float(q)]
        qv = ops.tensor(qs, dtype=x._dtype, device=x._device)
    if any(not (0.0 <= v <= 1.0) for v in qs):
        raise EmberValueError(f"{name}(): q values must be in the range [0, 1], got {qs}")
    if dim is None:
        src, out_shape = x.reshape(-1), (1,) * x.ndim if keepdim else ()
        axis_src = src
    else:
        d = norm_dim(dim, max(x.ndim, 1), name)
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


def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles of input (over dim, or all elements); nan if a slice has nan."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile ignoring nan values (nan where a slice is all nan)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


class mode_result(NamedTuple):  # noqa: N801  (torch.return_types.mode)
    values: Tensor
    indices: Tensor


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> mode_result:
    """The most frequent value of each slice along dim (the smallest among equally
    frequent ones) and the index of its last occurrence, as torch on CPU."""
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


# --- scatter_reduce's prod, amax, amin ---------------------------------------------------

def scatter_extreme_or_prod(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                            include_self: bool = True) -> Tensor:
    """scatter_reduce for 'prod', 'amax', 'amin': the sources of each target are combined
    by a segmented scan (sorted by target, log2(n) doubling steps, exact for integers),
    and each segment's last value, its full reduction, is written."""
    from .dispatch import run
    from .functional_extra import _flat_positions, _src_at_index
    from .ops.index import _check_index_dtype, index_put_op
    _check_index_dtype("scatter_reduce", index)
    if type(src) is not Tensor:
        raise EmberTypeError(f"scatter_reduce(): expected src to be a Tensor, got "
                             f"{type(src).__name__}")
    if input.ndim == 0:
        return scatter_extreme_or_prod(input.reshape(1), 0, index.reshape(1),
                                       src.reshape(1), reduce, include_self).reshape(())
    axis = norm_dim(dim, input.ndim, "scatter_reduce")
    vals = _src_at_index(src, index, input._dtype, "scatter_reduce()")
    lin = _flat_positions(input, index, axis, "scatter_reduce").reshape(-1).to(D.int64)
    flat = input.reshape(-1)
    n = lin.shape[0]
    if n == 0:
        return input.clone()
    combine = {"prod": ops.mul, "amax": ops.maximum, "amin": ops.minimum}[reduce]
    order = ops.argsort(lin * n + ops.arange(n, device=input._device))
    targets, v = lin[order], vals[order]
    step = 1
    while step < n:
        same = ops.cat([ops.zeros(step, dtype=D.bool_, device=input._device),
                        targets[step:] == targets[:-step]])
        v = ops.where(same, combine(v, ops.cat([v[:step], v[:-step]])), v)
        step *= 2
    # each segment's last entry holds its full reduction: write only those (unique targets)
    last = ops.cat([targets[1:] != targets[:-1],
                    ops.ones(1, dtype=D.bool_, device=input._device)])
    targets, v = targets[last], v[last]
    written = run(index_put_op, flat, targets, v)
    touched = run(index_put_op, ops.zeros(flat.shape[0], dtype=D.bool_, device=input._device),
                  targets, True)
    if include_self:
        written = combine(flat, written)
    return ops.where(touched, written, flat).reshape(input._data.shape)
