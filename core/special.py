"""ember.special: the functions of torch.special that ember has, under torch's names."""
from __future__ import annotations

import math

from . import dispatch as _dispatch
from . import dtypes as _D
from . import functional as _F
from . import ops as _ops
from .errors import EmberTypeError
from .functional import _util
from .functional import bessel as _bessel
from .ops import special as _special_ops
from .ops._out import write_out
from .tensor import Tensor

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "log1p",
           "expm1", "exp2", "xlogy", "xlog1py", "sinc", "entr", "logsumexp", "log_softmax",
           "softmax", "ndtr", "ndtri", "round", "i0", "i0e", "i1", "i1e",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "modified_bessel_i0",
           "modified_bessel_i1", "spherical_bessel_j0", "erfcx", "log_ndtr", "zeta",
           "polygamma", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "airy_ai", "gammainc", "gammaincc"]

erf = _ops.erf
erfc = _F.erfc
erfinv = _F.erfinv
gammaln = _F.lgamma
digamma = _F.digamma
psi = _F.digamma
log1p = _ops.log1p
expm1 = _ops.expm1
exp2 = _F.exp2
xlogy = _F.xlogy
xlog1py = _F.xlog1py
sinc = _F.sinc
logsumexp = _F.logsumexp
round = _ops.round  # noqa: A001  (torch.special.round)
i0 = _F.i0
polygamma = _F.polygamma
gammainc = _F.igamma
gammaincc = _F.igammac


def i0e(input: Tensor) -> Tensor:
    """exp(-|x|) i0(x): the exponentially scaled modified Bessel function, order 0.

    PyTorch
    -------
    ``torch.special.i0e``
    """
    return _F.special.bessel_i(input, 0, True)


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 1.

    PyTorch
    -------
    ``torch.special.i1``
    """
    return _F.special.bessel_i(input, 1, False)


def i1e(input: Tensor) -> Tensor:
    """exp(-|x|) i1(x).

    PyTorch
    -------
    ``torch.special.i1e``
    """
    return _F.special.bessel_i(input, 1, True)


def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function sum over k >= 0 of (k + other)^-input (Cephes', as
    torch's); either argument may be a Python number; differentiable in other only.

    PyTorch
    -------
    ``torch.special.zeta``
    """
    return _F.special.zeta(input, other, out=out)


def modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (i0's Cephes series).

    PyTorch
    -------
    ``torch.special.modified_bessel_i0``
    """
    return i0(input)


def modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 1 (i1's Cephes series).

    PyTorch
    -------
    ``torch.special.modified_bessel_i1``
    """
    return i1(input)


def bessel_j0(input: Tensor, *, out=None) -> Tensor:
    """J0(input), the Bessel function of the first kind, order 0.

    PyTorch
    -------
    ``torch.special.bessel_j0``
    """
    return _no_out("bessel_j0", out, _bessel.bessel_j("bessel_j0", input, 0))


def bessel_j1(input: Tensor, *, out=None) -> Tensor:
    """J1(input), the Bessel function of the first kind, order 1.

    PyTorch
    -------
    ``torch.special.bessel_j1``
    """
    return _no_out("bessel_j1", out, _bessel.bessel_j("bessel_j1", input, 1))


def bessel_y0(input: Tensor, *, out=None) -> Tensor:
    """Y0(input), the Bessel function of the second kind, order 0 (-inf at 0, nan
    below).

    PyTorch
    -------
    ``torch.special.bessel_y0``
    """
    return _no_out("bessel_y0", out, _bessel.bessel_y("bessel_y0", input, 0))


def bessel_y1(input: Tensor, *, out=None) -> Tensor:
    """Y1(input), the Bessel function of the second kind, order 1 (-inf at 0, nan
    below).

    PyTorch
    -------
    ``torch.special.bessel_y1``
    """
    return _no_out("bessel_y1", out, _bessel.bessel_y("bessel_y1", input, 1))


def modified_bessel_k0(input: Tensor, *, out=None) -> Tensor:
    """K0(input), the modified Bessel function of the second kind, order 0 (inf
    at 0, nan below).

    PyTorch
    -------
    ``torch.special.modified_bessel_k0``
    """
    return _no_out("modified_bessel_k0", out,
                   _bessel.bessel_k("modified_bessel_k0", input, 0, False))


def modified_bessel_k1(input: Tensor, *, out=None) -> Tensor:
    """K1(input), the modified Bessel function of the second kind, order 1 (inf
    at 0, nan below).

    PyTorch
    -------
    ``torch.special.modified_bessel_k1``
    """
    return _no_out("modified_bessel_k1", out,
                   _bessel.bessel_k("modified_bessel_k1", input, 1, False))


def scaled_modified_bessel_k0(x: Tensor, *, out=None) -> Tensor:
    """exp(x) K0(x), without K0's underflow.

    PyTorch
    -------
    ``torch.special.scaled_modified_bessel_k0``
    """
    return _no_out("scaled_modified_bessel_k0", out,
                   _bessel.bessel_k("scaled_modified_bessel_k0", x, 0, True))


def scaled_modified_bessel_k1(x: Tensor, *, out=None) -> Tensor:
    """exp(x) K1(x), without K1's underflow.

    PyTorch
    -------
    ``torch.special.scaled_modified_bessel_k1``
    """
    return _no_out("scaled_modified_bessel_k1", out,
                   _bessel.bessel_k("scaled_modified_bessel_k1", x, 1, True))


def airy_ai(x: Tensor, *, out=None) -> Tensor:
    """Ai(x), the Airy function of the first kind (nan at +-inf).

    PyTorch
    -------
    ``torch.special.airy_ai``
    """
    return _no_out("airy_ai", out, _bessel.airy_ai(x))


def spherical_bessel_j0(x: Tensor) -> Tensor:
    """sin(x) / x, the spherical Bessel function of the first kind, order 0: its Taylor
    series below |x| = 0.5 (as torch's), 0 at +-inf.

    PyTorch
    -------
    ``torch.special.spherical_bessel_j0``
    """
    x = _util._float(x)
    x2 = x * x
    series = 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (
        1.0 - x2 / 72.0 * (1.0 - x2 / 110.0 * (1.0 - x2 / 156.0)))))
    small = x.abs() < 0.5
    safe = _ops.where(small, 1.0, x)
    return _ops.where(small, series, _ops.where(_ops.isinf(x), 0.0, _ops.sin(safe) / safe))


def erfcx(input: Tensor) -> Tensor:
    """exp(x^2) erfc(x), the scaled complementary error function, without erfc's
    underflow: a continued fraction from 2 up, erfcx(x) = 2 exp(x^2) - erfcx(-x) below 0
    (inf past its overflow, as torch's); float32 computes in float64 where it can.

    PyTorch
    -------
    ``torch.special.erfcx``
    """
    return _dispatch.run(_special_ops.erfcx_op, _util._float(input))


def log_ndtr(input: Tensor) -> Tensor:
    """log of the standard normal CDF, accurate in both tails: log(erfcx(-x / sqrt 2) / 2)
    - x^2 / 2 below -1 (as torch's), log1p(-erfc(x / sqrt 2) / 2) above; float32
    computes in float64 where it can.

    PyTorch
    -------
    ``torch.special.log_ndtr``
    """
    return _dispatch.run(_special_ops.log_ndtr_op, _util._float(input))


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid.

    PyTorch
    -------
    ``torch.special.expit``
    """
    return _ops.sigmoid(input)


def logit(input: Tensor, eps=None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given.

    PyTorch
    -------
    ``torch.special.logit``
    """
    return _F.logit(input, eps)


def entr(input: Tensor) -> Tensor:
    """-x log x elementwise: 0 at 0, -inf below 0.

    PyTorch
    -------
    ``torch.special.entr``
    """
    x = _util._float(input)
    pos = x > 0
    out = -x * _ops.log(_ops.where(pos, x, 1.0))
    out = _ops.where(x == 0, 0.0, out)
    out = _ops.where(x < 0, -math.inf, out)
    return _ops.where(x.isnan(), x, out)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """log(softmax(input, dim)).

    PyTorch
    -------
    ``torch.special.log_softmax``
    """
    return _F.log_softmax(input if dtype is None else input.to(dtype), dim)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """exp(input) normalised along dim.

    PyTorch
    -------
    ``torch.special.softmax``
    """
    return _F.softmax(input if dtype is None else input.to(dtype), dim)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF.

    PyTorch
    -------
    ``torch.special.ndtr``
    """
    x = _util._float(input)
    return 0.5 * (1.0 + _ops.erf(x * (1.0 / math.sqrt(2.0))))


# Wichura's AS241 (Applied Statistics 37, 1988): rational approximations in three ranges,
# 1e-16 relative; the coefficients as CPython's statistics module prints them
_AS241_CENTRAL = ((2.5090809287301226727e+3, 3.3430575583588128105e+4,
                   6.7265770927008700853e+4, 4.5921953931549871457e+4,
                   1.3731693765509461125e+4, 1.9715909503065514427e+3,
                   1.3314166789178437745e+2, 3.3871328727963666080e+0),
                  (5.2264952788528545610e+3, 2.8729085735721942674e+4,
                   3.9307895800092710610e+4, 2.1213794301586595867e+4,
                   5.3941960214247511077e+3, 6.8718700749205790830e+2,
                   4.2313330701600911252e+1, 1.0))
_AS241_MID = ((7.74545014278341407640e-4, 2.27238449892691845833e-2,
               2.41780725177450611770e-1, 1.27045825245236838258e+0,
               3.64784832476320460504e+0, 5.76949722146069140550e+0,
               4.63033784615654529590e+0, 1.42343711074968357734e+0),
              (1.05075007164441684324e-9, 5.47593808499534494600e-4,
               1.51986665636164571966e-2, 1.48103976427480074590e-1,
               6.89767334985100004550e-1, 1.67638483018380384940e+0,
               2.05319162663775882187e+0, 1.0))
_AS241_TAIL = ((2.01033439929228813265e-7, 2.71155556874348757815e-5,
                1.24266094738807843860e-3, 2.65321895265761230930e-2,
                2.96560571828504891230e-1, 1.78482653991729133580e+0,
                5.46378491116411436990e+0, 6.65790464350110377720e+0),
               (2.04426310338993978564e-15, 1.42151175831644588870e-7,
                1.84631831751005468180e-5, 7.86869131145613259100e-4,
                1.48753612908506148525e-2, 1.36929880922735805310e-1,
                5.99832206555887937690e-1, 1.0))


def _rational(r: Tensor, coefficients) -> Tensor:
    num, den = (r * 0.0 + c[0] for c in coefficients)
    for a, b in zip(*(c[1:] for c in coefficients)):
        num, den = num * r + a, den * r + b
    return num / den


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ndtr (Wichura's AS241): -inf at 0, inf at 1, nan outside [0, 1].
    sqrt(2) erfinv(2p - 1) would round 2p - 1 to -1 for p below 6e-8 (float32), giving
    -inf for ndtri(1e-30) = -11.46.

    PyTorch
    -------
    ``torch.special.ndtri``
    """
    p = _util._float(input)
    q = p - 0.5
    central = q.abs() <= 0.425
    r = 0.180625 - q * q
    mid = q * _rational(_ops.where(central, r, 0.0), _AS241_CENTRAL)
    # the tails from the smaller of p and 1 - p, kept inside (0, 1) where another branch
    # or an edge answers (log(0) would make nan of the unused branch's gradient)
    tail = _ops.where(q <= 0, p, 1.0 - p)
    tail = _ops.where(central.logical_or(tail <= 0).logical_or(tail.isnan()), 0.5, tail)
    t = _ops.sqrt(-_ops.log(tail))
    far = _ops.where(t <= 5.0, _rational(t - 1.6, _AS241_MID), _rational(t - 5.0, _AS241_TAIL))
    out = _ops.where(central, mid, _ops.where(q < 0, -far, far))
    out = _ops.where(p == 0, -math.inf, _ops.where(p == 1, math.inf, out))
    return _ops.where((p < 0).logical_or(p > 1).logical_or(p.isnan()), math.nan, out)




# --- orthogonal polynomials of integer degree n (torch.special's, with its rules) ----------
# Each is its three-term recurrence run to the largest n present (n is truncated to an
# integer; n < 0 gives 0), with torch's special cases: the closed forms at x = +-1, and for
# the Chebyshev kinds the trigonometric form inside (-1, 1) for large n.  No gradient (torch's
# have none either).

def _degree_pair(name, x, n):
    if type(x) is not Tensor and type(n) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor for x or n, got two numbers; wrap "
                             "one with ember.tensor(...)")
    like = x if type(x) is Tensor else n
    x = x if type(x) is Tensor else _ops.full((), x, device=like._device)
    n = n if type(n) is Tensor else _ops.full((), n, device=like._device)
    dtype = _D.promote_types(x._dtype, n._dtype)
    if dtype.category != _D.FLOAT:
        dtype = _D.get_default_dtype()
    x, nf = x.detach().to(dtype), n.detach().to(dtype)
    nf = _ops.where(nf.isfinite(), nf, 0.0)
    k = _F.trunc(nf)
    shape = tuple(_F.broadcast_shapes(x.shape, k.shape))
    return _ops.expand(x, shape), _ops.expand(k, shape)


def _recurrence(x, k, p0, p1, step):
    """P_n(x) for each element's n = k (>= 2 where the loop's answer is used)."""
    top = int(k.max().item()) if k.numel() else 0
    p, q = p0, p1
    for j in range(2, top + 1):
        r = step(j, p, q)
        more = k >= j
        p, q = _ops.where(more, q, p), _ops.where(more, r, q)
    out = _ops.where(k == 0, p0, _ops.where(k == 1, p1, q))
    return _ops.where(k < 0, 0.0, out)


def _odd(k):
    return _F.fmod(k, 2.0) != 0


def _chebyshev(name, x, n, kind, shifted):
    x, k = _degree_pair(name, x, n)
    if shifted:
        x = x + x - 1.0
    one = x * 0.0 + 1.0
    p1 = {"t": x, "u": x + x, "v": x + x - 1.0, "w": x + x + 1.0}[kind]
    out = _recurrence(x, k, one, p1, lambda j, p, q: (x + x) * q - p)
    inside = x.abs() < 1.0
    theta = _ops.acos(_ops.where(inside, x, 0.0))
    odd = _odd(k)
    if kind == "t":
        far = _ops.cos(k * theta)
        top, bottom = one, _ops.where(odd, -1.0, 1.0)        # T_n(1) = 1, T_n(-1) = (-1)^n
        big = k > 6
    elif kind == "u":
        s = _ops.sin(theta)
        far = _ops.where(s != 0, _ops.sin((k + 1) * theta) / _ops.where(s != 0, s, 1.0),
                         (k + 1) * _ops.cos((k + 1) * theta) / x)
        top, bottom = k + 1, _ops.where(odd, -(k + 1), k + 1)
        big = k > 8
    elif kind == "v":
        far = _ops.cos((k + 0.5) * theta) / _ops.cos(theta / 2.0)
        top, bottom = one, _ops.where(odd, -(k + k + 1), k + k + 1)
        big = k > 8
    else:
        far = _ops.sin((k + 0.5) * theta) / _ops.sin(theta / 2.0)
        top, bottom = k + k + 1, _ops.where(odd, -1.0, 1.0)
        big = k > 8
    out = _ops.where(big.logical_and(inside), far, out)
    out = _ops.where(x == 1.0, top, _ops.where(x == -1.0, bottom, out))
    return _ops.where(k < 0, 0.0, out)


def chebyshev_polynomial_t(x, n, *, out=None) -> Tensor:
    """T_n(x), the Chebyshev polynomial of the first kind.

    PyTorch
    -------
    ``torch.special.chebyshev_polynomial_t``
    """
    return _no_out("chebyshev_polynomial_t", out, _chebyshev("chebyshev_polynomial_t", x,
                                                             n, "t", False))


def chebyshev_polynomial_u(x, n, *, out=None) -> Tensor:
    """U_n(x), the Chebyshev polynomial of the second kind.

    PyTorch
    -------
    ``torch.special.chebyshev_polynomial_u``
    """
    return _no_out("chebyshev_polynomial_u", out, _chebyshev("chebyshev_polynomial_u", x,
                                                             n, "u", False))


def chebyshev_polynomial_v(x, n, *, out=None) -> Tensor:
    """V_n(x), the Chebyshev polynomial of the third kind.

    PyTorch
    -------
    ``torch.special.chebyshev_polynomial_v``
    """
    return _no_out("chebyshev_polynomial_v", out, _chebyshev("chebyshev_polynomial_v", x,
                                                             n, "v", False))


def chebyshev_polynomial_w(x, n, *, out=None) -> Tensor:
    """W_n(x), the Chebyshev polynomial of the fourth kind.

    PyTorch
    -------
    ``torch.special.chebyshev_polynomial_w``
    """
    return _no_out("chebyshev_polynomial_w", out, _chebyshev("chebyshev_polynomial_w", x,
                                                             n, "w", False))


def shifted_chebyshev_polynomial_t(x, n, *, out=None) -> Tensor:
    """T*_n(x) = T_n(2 x - 1).

    PyTorch
    -------
    ``torch.special.shifted_chebyshev_polynomial_t``
    """
    return _no_out("shifted_chebyshev_polynomial_t", out, _chebyshev(
        "shifted_chebyshev_polynomial_t", x, n, "t", True))


def shifted_chebyshev_polynomial_u(x, n, *, out=None) -> Tensor:
    """U*_n(x) = U_n(2 x - 1).

    PyTorch
    -------
    ``torch.special.shifted_chebyshev_polynomial_u``
    """
    return _no_out("shifted_chebyshev_polynomial_u", out, _chebyshev(
        "shifted_chebyshev_polynomial_u", x, n, "u", True))


def shifted_chebyshev_polynomial_v(x, n, *, out=None) -> Tensor:
    """V*_n(x) = V_n(2 x - 1).

    PyTorch
    -------
    ``torch.special.shifted_chebyshev_polynomial_v``
    """
    return _no_out("shifted_chebyshev_polynomial_v", out, _chebyshev(
        "shifted_chebyshev_polynomial_v", x, n, "v", True))


def shifted_chebyshev_polynomial_w(x, n, *, out=None) -> Tensor:
    """W*_n(x) = W_n(2 x - 1).

    PyTorch
    -------
    ``torch.special.shifted_chebyshev_polynomial_w``
    """
    return _no_out("shifted_chebyshev_polynomial_w", out, _chebyshev(
        "shifted_chebyshev_polynomial_w", x, n, "w", True))


def _hermite(name, input, n, physicists):
    x, k = _degree_pair(name, input, n)
    one = x * 0.0 + 1.0
    scale = 2.0 if physicists else 1.0
    xs = x * scale
    device = x._device
    if x._dtype is _D.float32 and (device.type == "cpu" or "float64" in
                                   device.backend.capabilities(device.index).dtypes):
        # torch's float32 step is one fused multiply-add, fma(x, q, -(k p)): x q exact in
        # float64, one rounding to float32 (He_n(x) at n near 40 came out 1e-5 off torch's)
        wide = xs.to(_D.float64)

        def step(j, p, q):
            kp = (scale * (j - 1)) * p
            return (wide * q.to(_D.float64) - kp.to(_D.float64)).to(_D.float32)
    else:
        def step(j, p, q):
            return xs * q - (scale * (j - 1)) * p
    out = _recurrence(x, k, one, xs, step)
    limit = 128.0 if x._dtype is not _D.float64 else 512.0
    return _ops.where(k > limit, math.nan, out)


def hermite_polynomial_h(x, n, *, out=None) -> Tensor:
    """H_n(x), the physicists' Hermite polynomial (nan past n = 128 in float32).

    PyTorch
    -------
    ``torch.special.hermite_polynomial_h``
    """
    return _no_out("hermite_polynomial_h", out,
                   _hermite("hermite_polynomial_h", x, n, True))


def hermite_polynomial_he(x, n, *, out=None) -> Tensor:
    """He_n(x), the probabilists' Hermite polynomial.

    PyTorch
    -------
    ``torch.special.hermite_polynomial_he``
    """
    return _no_out("hermite_polynomial_he", out,
                   _hermite("hermite_polynomial_he", x, n, False))


def laguerre_polynomial_l(x, n, *, out=None) -> Tensor:
    """L_n(x), the Laguerre polynomial (1 at 0).

    PyTorch
    -------
    ``torch.special.laguerre_polynomial_l``
    """
    x, k = _degree_pair("laguerre_polynomial_l", x, n)
    one = x * 0.0 + 1.0
    res = _recurrence(x, k, one, 1.0 - x,
                      lambda j, p, q: ((2 * (j - 1) + 1.0 - x) * q - (j - 1) * p) / j)
    res = _ops.where((x == 0).logical_and(k >= 0), 1.0, res)
    return _no_out("laguerre_polynomial_l", out, res)


def legendre_polynomial_p(x, n, *, out=None) -> Tensor:
    """P_n(x), the Legendre polynomial.

    PyTorch
    -------
    ``torch.special.legendre_polynomial_p``
    """
    x, k = _degree_pair("legendre_polynomial_p", x, n)
    one = x * 0.0 + 1.0
    res = _recurrence(x, k, one, x,
                      lambda j, p, q: ((2 * (j - 1) + 1) * x * q - (j - 1) * p) / j)
    edge = _ops.where((x > 0).logical_or(~_odd(k)), 1.0, -1.0)
    res = _ops.where((x.abs() == 1.0).logical_and(k >= 0), edge, res)
    return _no_out("legendre_polynomial_p", out, res)


def _no_out(name, out, result):
    return result if out is None else write_out(name, result, out)
