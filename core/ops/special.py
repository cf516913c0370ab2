"""Special functions as declared kernels, each with its own gradient rule: lgamma, digamma,
erfinv, erfcx, log_ndtr, atan2 (with IEEE signed-zero quadrants) and the Hurwitz zeta
function.

A backend may run any of them as one kernel; without one, the decomposition below runs (ops
only, so every backend has it) and is not itself differentiated: the op's rule is (Op.opaque:
the series and polynomials would give gradients that are wrong at branch points and costly).
"""
from __future__ import annotations

import math

from .. import dtypes as D
from ..dispatch import run
from ..errors import UnsupportedError
from ..tensor import Tensor
from . import elementwise as E
from ._op import declare, rule_float, shape_broadcast, shape_first
from .index import getitem, setitem


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
    safe = E.where(big, ax, 1.0)
    z = E.where(big, -1.0 / safe, E.where(mid, (ax - 1.0) / (ax + 1.0), ax))
    base = E.where(big, math.pi / 2, E.where(mid, math.pi / 4, ax * 0.0))
    zz = z * z
    p = zz * 0.0 + _ATAN_P[0]
    for c in _ATAN_P[1:]:
        p = p * zz + c
    q = zz + _ATAN_Q[0]
    for c in _ATAN_Q[1:]:
        q = q * zz + c
    r = base + (z * (zz * p / q) + z)
    r = E.where(ax == math.inf, math.pi / 2, r)
    return E.where(_signbit(x), -r, r)


def _atan2_forward(y: Tensor, x: Tensor) -> Tensor:
    xneg = _signbit(x)
    yneg = _signbit(y)
    ysign = E.where(yneg, -1.0, 1.0).to(y._dtype)
    ratio = y / E.where(x == 0, 1.0, x)
    t = _atan(ratio)
    general = E.where(xneg, t + ysign * math.pi, t)
    # x = +-0: the y axis, or the origin where the signs of both zeros pick the answer
    at_zero = E.where(y == 0, E.where(xneg, ysign * math.pi, y), ysign * (math.pi / 2))
    both_inf = (x.abs() == math.inf).logical_and(y.abs() == math.inf)
    corner = ysign * E.where(xneg, 3 * math.pi / 4, ysign * 0.0 + math.pi / 4)
    out = E.where(x == 0, at_zero, general)
    out = E.where(both_inf, corner, out)
    return E.where(y.isnan().logical_or(x.isnan()), math.nan, out)


atan2_op = declare(
    "atan2", "composite", rule_float, sig="y, x", promote=(0, 1), shape=shape_broadcast,
    doc="the angle of the point (x, y) in (-pi, pi], IEEE signed-zero quadrants",
    decompose=_atan2_forward, opaque=True,
    vjp=lambda g, out, y, x: (g * x / (x * x + y * y), g * (-y) / (x * x + y * y)))


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
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * E.log(t) - t + E.log(a)


def _abs_sinpi(x: Tensor) -> Tensor:
    # reduce first: sin(pi * x) of a large x loses every digit to the rounding of pi * x
    return E.sin(math.pi * (x - E.round(x))).abs()


_EULER = 0.57721566490153286061


def _lgamma_forward(x: Tensor) -> Tensor:
    small = x < 0.5
    pos = _lgamma_pos(E.where(small, 1.0 - x, x).clamp(0.5, None))
    reflected = math.log(math.pi) - E.log(_abs_sinpi(x)) - pos
    out = E.where(small, reflected, pos)
    # |x| < 1e-8: -log|x| - euler x (to x**2); the reflection's sin(pi x) is subnormal for
    # the smallest x, and lgamma(1e-45) came out 103.33 for 103.28
    a = x.abs()
    tiny = -E.log(E.where(a < 1e-8, a, 1.0)) - _EULER * x
    out = E.where(a < 1e-8, tiny, out)
    # exact zeros at 1 and 2 (Lanczos leaves 5e-7 in float32), inf at the poles: 0 and the
    # negative integers (every float past 2**52 is one: nan came of inf - inf there)
    out = E.where((x == 1.0).logical_or(x == 2.0), 0.0, out)
    pole = (x <= 0).logical_and(x == E.round(x))
    return E.where(pole.logical_or(a == math.inf), math.inf, out)


def _series_shift(x: Tensor, term, upto: float = 10.0, steps: int = 10):
    # recurrence up to x >= upto (x >= 0.5 here, so `steps` shifts suffice); 0 at x = inf
    # (inf * 0 made trigamma(inf), digamma's gradient there, nan for torch's 0)
    acc = E.where(x == math.inf, 0.0, x * 0.0)
    for _ in range(steps):
        low = x < upto
        acc = acc + E.where(low, term(E.where(low, x, 1.0)), 0.0)
        x = E.where(low, x + 1.0, x)
    return x, acc


_DIGAMMA_B = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_pos(x: Tensor) -> Tensor:
    x, acc = _series_shift(x, lambda v: 1.0 / v)
    inv2 = 1.0 / (x * x)
    s = inv2 * 0.0
    for c in reversed(_DIGAMMA_B):
        s = (s + c) * inv2
    return E.log(x) - 0.5 / x - s - acc


def _digamma_forward(x: Tensor) -> Tensor:
    small = x < 0.5
    pos = _digamma_pos(E.where(small, 1.0 - x, x).clamp(0.5, None))
    frac = x - E.round(x)
    reflected = pos - math.pi / E.tan(math.pi * frac)
    out = E.where(small, reflected, pos)
    # torch: nan at negative integers and -inf; -+inf at +-0; +inf at +inf
    out = E.where((x < 0).logical_and(frac == 0), math.nan, out)
    out = E.where(x == 0, E.where(_signbit(x), math.inf, -math.inf), out)
    out = E.where(x == math.inf, math.inf, out)
    return E.where(x == -math.inf, math.nan, out)


_TRIGAMMA_B = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def trigamma(x: Tensor) -> Tensor:
    """psi'(x), by recurrence, the asymptotic series and reflection."""
    small = x < 0.5
    v = E.where(small, 1.0 - x, x).clamp(0.5, None)
    v, acc = _series_shift(v, lambda u: 1.0 / (u * u))
    inv = 1.0 / v
    inv2 = inv * inv
    s = inv2 * 0.0
    for c in reversed(_TRIGAMMA_B):
        s = (s + c) * inv2
    pos = acc + inv + 0.5 * inv2 + s * inv
    sinpi = _abs_sinpi(x)
    reflected = (math.pi * math.pi) / (sinpi * sinpi) - pos
    return E.where(small, reflected, pos)


_GILES_LO = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
             0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)


_GILES_HI = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
             0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfc_tail(x: Tensor) -> Tensor:
    # erfc for x >= 2 by its continued fraction: 1 - erf(x) would keep no digits there
    t = x * 0.0
    for k in range(50, 0, -1):
        t = (k / 2) / (x + t)
    return E.exp(-x * x) / (math.sqrt(math.pi) * (x + t))


def _erfinv_forward(y: Tensor) -> Tensor:
    a = E.where(y.abs() < 1, y.abs(), 0.0)
    w = -E.log((1.0 - a) * (1.0 + a))
    lo = w < 5.0
    wl = w - 2.5
    wh = E.sqrt(E.where(lo, 5.0, w)) - 3.0
    pl = wl * 0.0 + _GILES_LO[0]
    for c in _GILES_LO[1:]:
        pl = pl * wl + c
    ph = wh * 0.0 + _GILES_HI[0]
    for c in _GILES_HI[1:]:
        ph = ph * wh + c
    x = E.where(lo, pl, ph) * a
    # beyond float32's reach (w > 16) Giles' fit fails: start from erfc's asymptotic form
    # 1 - a = exp(-x^2) / (x sqrt(pi)) * (1 - 1 / (2 x^2)), solved by fixed-point steps
    far = w > 16.0
    nlt = E.where(far, w + E.log1p(a), 16.0)
    g = E.sqrt(nlt)
    for _ in range(3):
        g = E.sqrt(nlt - E.log(g * math.sqrt(math.pi)) + E.log1p(-0.5 / (g * g)))
    x = E.where(far, g, x)
    # Giles' guess is good to float32; Halley steps on erf(x) = a bring it to float64,
    # with the residual taken from erfc in the tail, where erf(x) rounds to 1
    steps = 3 if y._dtype == D.float64 else 1
    for _ in range(steps):
        tail = x >= 2.0
        r = E.where(tail, (1.0 - a) - _erfc_tail(E.where(tail, x, 2.0)), E.erf(x) - a)
        d = (2.0 / math.sqrt(math.pi)) * E.exp(-x * x)
        f = r / d
        x = x - f / (1.0 + x * f)
    x = E.where(_signbit(y), -x, x)
    x = E.where(y.abs() == 1, E.where(y > 0, math.inf, -math.inf), x)
    x = E.where(y.abs() > 1, math.nan, x)
    return E.where(y.isnan(), y, x)


def digamma(x: Tensor) -> Tensor:
    """psi(x) through its declaration (lgamma's gradient)."""
    return run(digamma_op, x)


lgamma_op = declare("lgamma", "composite", rule_float, sig="x", shape=shape_first,
                    doc="log |Gamma(x)|", decompose=_lgamma_forward, opaque=True,
                    vjp=lambda g, out, x: (g * digamma(x),))
digamma_op = declare("digamma", "composite", rule_float, sig="x", shape=shape_first,
                     doc="psi(x), the logarithmic derivative of Gamma",
                     decompose=_digamma_forward, opaque=True,
                     vjp=lambda g, out, x: (g * trigamma(x),))
erfinv_op = declare("erfinv", "composite", rule_float, sig="x", shape=shape_first,
                    doc="the inverse of erf on (-1, 1); +-inf at +-1, nan outside",
                    decompose=_erfinv_forward, opaque=True, save_out=True, uses=(),
                    vjp=lambda g, out, x: (g * (math.sqrt(math.pi) / 2) * E.exp(out * out),))


# --- the scaled complementary error function and the log of the normal CDF
def _in_double(x: Tensor, fn, *others: Tensor) -> Tensor:
    """fn(x, *others) in float64 where x is float32 (or float16, bfloat16) on a device that
    has float64 (1 - erf keeps too few float32 digits near 2), rounded back once."""
    device = x._device
    if x._dtype in _NARROW and (device.type == "cpu" or "float64" in
                                device.backend.capabilities(device.index).dtypes):
        return fn(x.to(D.float64), *(o.to(D.float64) for o in others)).to(x._dtype)
    return fn(x, *others)


_NARROW = (D.float32, D.float16, D.bfloat16)


def _erfc_parts(z: Tensor):
    """(erfc(z), erfcx(z)): 1 - erf(z) below 2, above it erfcx by its continued fraction
    1 / (sqrt(pi) (z + 1/2 / (z + 1 / (z + 3/2 / ...)))) (50 terms)."""
    near = z < 2.0
    zn = E.where(near, z, 0.0)
    zf = E.where(near, 2.0, z)
    t = 0.0                         # (zf * 0 would be nan at inf)
    for k in range(50, 0, -1):
        t = (k / 2) / (zf + t)
    tail = 1.0 / (math.sqrt(math.pi) * (zf + t))
    direct = 1.0 - E.erf(zn)
    return (E.where(near, direct, E.exp(-zf * zf) * tail),
            E.where(near, direct * E.exp(zn * zn), tail))


def _erfcx_forward(x: Tensor) -> Tensor:
    def scaled(x):
        neg = x < 0
        _, positive = _erfc_parts(E.where(neg, -x, x))
        xn = E.where(neg, x, 0.0)
        return E.where(neg, 2.0 * E.exp(xn * xn) - positive, positive)
    return _in_double(x, scaled)


def _log_ndtr_forward(x: Tensor) -> Tensor:
    def log_cdf(x):
        low = x < -1.0
        xl = E.where(low, x, -1.0)
        _, scaled = _erfc_parts(-xl * (1.0 / math.sqrt(2.0)))
        left = E.log(scaled * 0.5) - xl * xl * 0.5
        upper, _ = _erfc_parts(E.where(low, 0.0, x) * (1.0 / math.sqrt(2.0)))
        return E.where(low, left, E.log1p(-0.5 * upper))
    return _in_double(x, log_cdf)


def _log_ndtr_slope(x: Tensor, out: Tensor) -> Tensor:
    """pdf / cdf: exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi), which cancels to nothing in the
    left tail; there sqrt(2 / pi) / erfcx(-x / sqrt 2), the same without the cancellation."""
    low = x < -1.0
    xl = E.where(low, x, -1.0)
    left = math.sqrt(2.0 / math.pi) / run(erfcx_op, -xl * (1.0 / math.sqrt(2.0)))
    xh = E.where(low, 0.0, x)
    slope = E.where(low, left, E.exp(-xh * xh * 0.5 - out) / math.sqrt(2.0 * math.pi))
    # where log_ndtr itself overflows to -inf, torch's exp(-x^2 / 2 - out) is nan
    return E.where(out == -math.inf, math.nan, slope)


erfcx_op = declare("erfcx", "composite", rule_float, sig="x", shape=shape_first,
                   doc="exp(x^2) erfc(x), without erfc's underflow", decompose=_erfcx_forward,
                   opaque=True, save_out=True,
                   vjp=lambda g, out, x: (g * (2.0 * x * out - 2.0 / math.sqrt(math.pi)),))
log_ndtr_op = declare("log_ndtr", "composite", rule_float, sig="x", shape=shape_first,
                      doc="log of the standard normal CDF, accurate in both tails",
                      decompose=_log_ndtr_forward, opaque=True, save_out=True,
                      vjp=lambda g, out, x: (g * _log_ndtr_slope(x, out),))


# --- the Hurwitz zeta function (Cephes' zeta.c as ATen's Math.h has it) ------------------

_MACHEP = 1.11022302462515654042e-16
# the Euler-Maclaurin correction's coefficients (2k)! / B_2k
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta_cephes(x: Tensor, q: Tensor) -> Tensor:
    """Cephes' loop for q > 0: terms until q + k passes 9, then Euler-Maclaurin's tail,
    each element stopping where its next term no longer changes the sum (masks for
    Cephes' early returns)."""
    s = E.pow(q, -x)
    a, b = q, s * 0.0
    done = s != s * 1.0          # (all False but nan: a nan sum stays nan either way)
    for i in range(1, 11):       # q > 0: a passes 9 within 10 steps
        if i <= 9:               # (a and b of a finished element are never read again)
            step = ~done
            a = a + 1.0
            b = E.pow(a, -x)
        else:
            step = (~done).logical_and(a <= 9.0)
            a = E.where(step, a + 1.0, a)
            b = E.where(step, E.pow(a, -x), b)
        s = E.where(step, s + b, s)
        done = done.logical_or(step.logical_and(b.abs() < _MACHEP * s))
    w = a
    s = E.where(done, s, s + b * w / (x - 1.0) - 0.5 * b)
    fac, k = x * 0.0 + 1.0, 0.0
    for coeff in _ZETA_A:
        fac = fac * (x + k)
        b = b / w
        t = fac * b / coeff
        s = E.where(done, s, s + t)
        done = done.logical_or((t / s).abs() < _MACHEP)
        k += 1.0
        fac = fac * (x + k)
        b = b / w
        k += 1.0
    return s


def _zeta_forward(x: Tensor, q: Tensor) -> Tensor:
    def zeta(x, q):
        # q < 0 (x an integer): Cephes sums every term up from q, ceil(-q) + 9 of them (a
        # loop of 1e6 steps at q = -1e6); the negative ones are (-1)^x (zeta(x, 1 - p) -
        # zeta(x, 1 - q)) with p = q + ceil(-q) in (0, 1), and zeta(x, p) -+ zeta(x, 1 - p)
        # first, where odd x cancels them (exactly at p = 1/2): zeta(x, 1 - q) remains
        negative = (q < 0).logical_and(q != E.floor(q))
        p = E.where(negative, q - E.floor(q), q)
        out = _zeta_cephes(x, E.where(p <= 0, 1.0, p))        # (keeping a nan q)
        if bool(negative.any()):        # (a host read: two more sums, on those elements)
            shape = out._data.shape
            mask = negative.reshape(-1)
            xn, qn, pn, near = (getitem(t.reshape(-1), mask) for t in (x, q, p, out))
            mirror = _zeta_cephes(xn, 1.0 - pn)
            tail = _zeta_cephes(xn, 1.0 - qn)
            # past x ~ 1e16 Cephes' tail is 0 * inf (its terms underflow, its factors
            # overflow): nan where torch's one sum had returned at its first inf term
            tail = E.where(tail.isnan(), 0.0, tail)
            odd = E.remainder(xn, 2.0) == 1.0
            turned = E.where(odd, (near - mirror) + tail, (near + mirror) - tail)
            # x = inf: the term of q + k in (-1, 0) is inf (inf - inf above)
            turned = E.where(xn == math.inf, math.inf, turned)
            out = out.reshape(-1)
            setitem(out, mask, turned)
            out = out.reshape(shape)
        out = E.where(x != E.floor(x), E.where(negative, math.nan, out), out)
        out = E.where((q <= 0).logical_and(q == E.floor(q)), math.inf, out)
        out = E.where(x < 1.0, math.nan, out)
        return E.where(x == 1.0, math.inf, out)
    return _in_double(x, zeta, q)


class _NoDerivative:
    """A gradient torch does not implement: computing it raises, as torch's does."""

    def __init__(self, what: str):
        self.what = what

    def __call__(self):
        raise UnsupportedError(f"the derivative for '{self.what}' is not implemented (as in "
                               "torch); detach() that argument")


def zeta(x: Tensor, q: Tensor) -> Tensor:
    """The Hurwitz zeta function through its declaration (its q-gradient)."""
    return run(zeta_op, x, q)


zeta_op = declare("zeta", "composite", rule_float, sig="x, q", promote=(0, 1),
                  shape=shape_broadcast, doc="the Hurwitz zeta function sum_k (k + q)^-x",
                  decompose=_zeta_forward, opaque=True, uses=(0, 1),
                  vjp=lambda g, out, x, q: (_NoDerivative("zeta"),
                                            lambda: g * -x * zeta(x + 1.0, q)))
