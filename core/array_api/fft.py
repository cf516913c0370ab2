"""The array API standard's `fft` extension (2023.12) over ember tensors: ember.fft's
transforms (core/fft/) with the standard's signatures (keyword-only n, axis, s, axes, norm)
and dtype rules: fft, ifft, fftn, ifftn and irfft, irfftn, hfft take complex input; rfft,
rfftn, ihfft take real floating input; every result keeps the input's precision.  On every
device, with gradients, as ember.fft.
"""
from __future__ import annotations

from .. import dtypes as D
from .. import fft as _fft
from ..device import as_device
from ..errors import DtypeNotSupportedError, EmberTypeError, EmberValueError
from ..tensor import Tensor
from ._dtypes import as_dtype

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _need(name: str, x, kind: str) -> Tensor:
    if type(x) is not Tensor:
        raise EmberTypeError(
            f"ember.array_api.fft.{name}: expected an ember Tensor (an array of this "
            f"namespace), got {type(x).__name__}; convert it with ember.array_api.asarray")
    want = D.COMPLEX if kind == "complex floating" else D.FLOAT
    if x._dtype.category != want or x._dtype in (D.float16, D.bfloat16):
        raise DtypeNotSupportedError(
            f"ember.array_api.fft.{name}: expected an input of {kind} dtype, got "
            f"{x._dtype.name}; convert it with ember.array_api.astype(x, ...) first")
    return x


def _norm(name: str, norm: str) -> str:
    if norm not in _NORMS:
        raise EmberValueError(f"ember.array_api.fft.{name}: norm must be one of {_NORMS}, "
                              f"got {norm!r}")
    return norm


def _n(name, n):
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise EmberValueError(f"ember.array_api.fft.{name}: n must be a positive int or None, "
                              f"got {n!r}")
    return n


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The 1-D DFT of complex x along axis (the standard's fft)."""
    _need("fft", x, "complex floating")
    return _fft.fft(x, _n("fft", n), axis, _norm("fft", norm))


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The 1-D inverse DFT of complex x along axis."""
    _need("ifft", x, "complex floating")
    return _fft.ifft(x, _n("ifft", n), axis, _norm("ifft", norm))


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The N-D DFT of complex x over axes (sizes s)."""
    _need("fftn", x, "complex floating")
    return _fft.fftn(x, s, axes, _norm("fftn", norm))


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The N-D inverse DFT of complex x over axes (sizes s)."""
    _need("ifftn", x, "complex floating")
    return _fft.ifftn(x, s, axes, _norm("ifftn", norm))


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-sided DFT of real floating x along axis."""
    _need("rfft", x, "real floating")
    return _fft.rfft(x, _n("rfft", n), axis, _norm("rfft", norm))


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: real, n (default 2 (m - 1)) long along axis."""
    _need("irfft", x, "complex floating")
    return _fft.irfft(x, _n("irfft", n), axis, _norm("irfft", norm))


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The N-D DFT of real floating x, one-sided along the last axis transformed."""
    _need("rfftn", x, "real floating")
    return _fft.rfftn(x, s, axes, _norm("rfftn", norm))


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn: real."""
    _need("irfftn", x, "complex floating")
    return _fft.irfftn(x, s, axes, _norm("irfftn", norm))


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The DFT of a Hermitian signal given by its first half: real."""
    _need("hfft", x, "complex floating")
    return _fft.hfft(x, _n("hfft", n), axis, _norm("hfft", norm))


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: the one-sided inverse DFT of real floating x."""
    _need("ihfft", x, "real floating")
    return _fft.ihfft(x, _n("ihfft", n), axis, _norm("ihfft", norm))


def _spacing(name, n, d):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise EmberValueError(f"ember.array_api.fft.{name}: n must be a positive int, got "
                              f"{n!r}")
    return n, float(d)


def _freq_dtype(name, dtype):
    # dtype is the 2025.12 revision's addition (array-api-tests passes it): a real floating
    # dtype, the default real floating dtype when None.
    if dtype is None:
        return None
    dt = as_dtype(dtype)
    if dt.category != D.FLOAT:
        raise DtypeNotSupportedError(
            f"ember.array_api.fft.{name}: dtype must be a real floating dtype, got "
            f"{dt.name}; pass float32 or float64 (or leave it None for the default)")
    return dt


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The n sample frequencies of an n-point DFT, in dtype (default: the default real
    floating dtype)."""
    n, d = _spacing("fftfreq", n, d)
    return _fft.fftfreq(n, d, dtype=_freq_dtype("fftfreq", dtype),
                        device=None if device is None else as_device(device))


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The n//2 + 1 non-negative sample frequencies of an n-point rfft, in dtype."""
    n, d = _spacing("rfftfreq", n, d)
    return _fft.rfftfreq(n, d, dtype=_freq_dtype("rfftfreq", dtype),
                         device=None if device is None else as_device(device))


def _axes(x, axes):
    return None if axes is None else ([axes] if isinstance(axes, int) else list(axes))


def fftshift(x, /, *, axes=None):
    """x with the zero frequency moved to the middle of each axis (all by default)."""
    if type(x) is not Tensor:
        raise EmberTypeError(f"ember.array_api.fft.fftshift: expected an ember Tensor, got "
                             f"{type(x).__name__}")
    return _fft.fftshift(x, _axes(x, axes))


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift."""
    if type(x) is not Tensor:
        raise EmberTypeError(f"ember.array_api.fft.ifftshift: expected an ember Tensor, got "
                             f"{type(x).__name__}")
    return _fft.ifftshift(x, _axes(x, axes))
