"""Conformance rows of ember.fft's primitives (fft_c2c, fft_r2c, fft_c2r) against numpy.fft:
the complex results are compared through their real and imaginary parts, so gradcheck
differentiates real outputs of real inputs (the complex intermediates' gradients are
PyTorch's conjugate Wirtinger ones)."""
from __future__ import annotations

from ._table import Input, Rows

ROWS = Rows("fft")
case = ROWS.case


def _parts(y):
    return y.real, y.imag


case("fft", lambda E, x: _parts(E.fft.fft(x * (1 + 0.5j), dim=1)),
     lambda np, x: _parts(np.fft.fft(x * (1 + 0.5j), axis=1)), Input((4, 6)),
     ops=("fft_c2c",), atol=1e-4, rtol=1e-4)
case("fft:nd_ortho", lambda E, x: _parts(E.fft.ifftn(x * (1 - 2j), s=(5, 4), norm="ortho")),
     lambda np, x: _parts(np.fft.ifftn(x * (1 - 2j), s=(5, 4), norm="ortho")),
     Input((3, 6)), ops=("fft_c2c",), atol=1e-4, rtol=1e-4)
case("rfft", lambda E, x: _parts(E.fft.rfft2(x)), lambda np, x: _parts(np.fft.rfft2(x)),
     Input((4, 6)), ops=("fft_r2c",), atol=1e-4, rtol=1e-4)
case("rfft:twosided", lambda E, x: _parts(E.fft.fft(x, n=7, norm="forward")),
     lambda np, x: _parts(np.fft.fft(x, n=7, norm="forward")), Input((3, 5)),
     ops=("fft_r2c",), atol=1e-4, rtol=1e-4)
case("irfft", lambda E, x: E.fft.irfft(x * (1 - 0.25j), n=9, dim=1),
     lambda np, x: np.fft.irfft(x * (1 - 0.25j), n=9, axis=1), Input((4, 5)),
     ops=("fft_c2r",), atol=1e-4, rtol=1e-4)
case("irfft:nd", lambda E, x: E.fft.irfftn(x * (0.5 + 1j), s=(3, 6)),
     lambda np, x: np.fft.irfftn(x * (0.5 + 1j), s=(3, 6)), Input((3, 4)),
     ops=("fft_c2r", "fft_c2c"), atol=1e-4, rtol=1e-4)
