"""ember.signal.windows: torch.signal.windows' window functions, from linspace, cos and exp
as torch defines them (sym=True: symmetric, for filter design; sym=False: periodic, for
spectral analysis)."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..errors import EmberTypeError, EmberValueError
from ..functional.special import i0

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise EmberValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout).rsplit(".", 1)[-1] != "strided":
        raise EmberValueError(f"{name} is implemented for strided tensors only, got: "
                              f"{layout}")
    dtype = D.get_default_dtype() if dtype is None else D.get_dtype(dtype)
    if dtype not in (D.float32, D.float64):
        raise EmberValueError(f"{name} expects float32 or float64 dtypes, got: {dtype.name}")
    return dtype


def _done(out, requires_grad):
    return out.requires_grad_(True) if requires_grad else out


def _trivial(M, dtype, device, requires_grad):
    """The window of 0 or 1 points (None for longer ones)."""
    if M == 0:
        return _done(ops.empty(0, dtype=dtype, device=device), requires_grad)
    if M == 1:
        return _done(ops.ones(1, dtype=dtype, device=device), requires_grad)
    return None


def exponential(M: int, *, center=None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=None, device=None, requires_grad: bool = False):
    """exp(-|n - center| / tau) (the Poisson window)."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise EmberValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise EmberValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(0, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = ops.linspace(-center / tau, (-center + (M - 1)) / tau, M, dtype=dtype, device=device)
    return _done(ops.exp(-k.abs()), requires_grad)


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False):
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(0, dtype, device, requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = ops.linspace(0.5 * constant, (0.5 + (M - 1)) * constant, M, dtype=dtype,
                     device=device)
    return _done(ops.sin(k), requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None,
             device=None, requires_grad: bool = False):
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise EmberValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(0, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = ops.linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                     device=device)
    return _done(ops.exp(-(k * k)), requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None,
           device=None, requires_grad: bool = False):
    """i0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / i0(beta)."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise EmberValueError(f"beta must be non-negative, got: {beta} instead.")
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    b = ops.full((), float(beta), dtype=dtype, device=device)
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = min(float(b.item()), -beta + (M - 1) * constant)
    k = ops.linspace(-beta, end, M, dtype=dtype, device=device)
    return _done(i0(ops.sqrt(b * b - k * k)) / i0(b), requires_grad)


def general_cosine(M: int, *, a, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1)) (M instead of M - 1 when periodic)."""
    dtype = _checks("general_cosine", M, dtype, layout)
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    if not isinstance(a, (list, tuple)):
        raise EmberTypeError("Coefficients must be a list/tuple")
    if not a:
        raise EmberValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = ops.linspace(0, (M - 1) * constant, M, dtype=dtype, device=device)
    out = None
    for i, w in enumerate(a):
        term = ops.cos(k * float(i)) * float((-1) ** i * w)
        out = term if out is None else out + term
    return _done(out, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None,
                    layout=None, device=None, requires_grad: bool = False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False):
    """The Hamming window: general_hamming with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
         requires_grad: bool = False):
    """The Hann window: general_hamming with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False):
    """The minimum 4-term Blackman-Harris window (Nuttall's coefficients)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """1 - |2n / (M - 1) - 1| (the triangular window reaching 0 at the ends)."""
    dtype = _checks("bartlett", M, dtype, layout)
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    constant = 2 / (M if not sym else M - 1)
    k = ops.linspace(-1, -1 + (M - 1) * constant, M, dtype=dtype, device=device)
    return _done(1 - k.abs(), requires_grad)
