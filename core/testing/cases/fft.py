"""Conformance rows of ember.fft's primitives (fft_c2c, fft_r2c, fft_c2r) against numpy.fft:
complex inputs are made with complex(x, y) of real ones and complex results compared
through their real and imaginary parts, so gradcheck differentiates real outputs of real
inputs (through complex intermediates: PyTorch's conjugate Wirtinger gradients)."""
from __future__ import annotations

from ._table import Input, Rows

ROWS = Rows("fft")
case = ROWS.case
NEEDS = ("complex64",)        # every row has complex intermediates


def _parts(y):
    return y.real, y.imag


case("fft", lambda E, x, y: _parts(E.fft.fft(E.complex(x, y), dim=1)),
     lambda np, x, y: _parts(np.fft.fft(x + 1j * y, axis=1)), Input((4, 6)), Input((4, 6)),
     ops=("fft_c2c",), needs=NEEDS, atol=1e-4, rtol=1e-4)
case("fft:nd_ortho",
     lambda E, x, y: _parts(E.fft.ifftn(E.complex(x, y), s=(5, 4), norm="ortho")),
     lambda np, x, y: _parts(np.fft.ifftn(x + 1j * y, s=(5, 4), axes=(0, 1), norm="ortho")),
     Input((3, 6)), Input((3, 6)), ops=("fft_c2c",), needs=NEEDS, atol=1e-4, rtol=1e-4)
case("fft:bluestein", lambda E, x, y: _parts(E.fft.fft(E.complex(x, y))),
     lambda np, x, y: _parts(np.fft.fft(x + 1j * y)), Input((2, 11)), Input((2, 11)),
     ops=("fft_c2c",), needs=NEEDS, atol=1e-4, rtol=1e-4)
case("rfft", lambda E, x: _parts(E.fft.rfft2(x)), lambda np, x: _parts(np.fft.rfft2(x)),
     Input((4, 6)), ops=("fft_r2c",), needs=NEEDS, atol=1e-4, rtol=1e-4)
case("rfft:twosided", lambda E, x: _parts(E.fft.fft(x, n=7, norm="forward")),
     lambda np, x: _parts(np.fft.fft(x, n=7, norm="forward")), Input((3, 5)),
     ops=("fft_r2c",), needs=NEEDS, atol=1e-4, rtol=1e-4)
case("irfft", lambda E, x, y: E.fft.irfft(E.complex(x, y), n=9, dim=1),
     lambda np, x, y: np.fft.irfft(x + 1j * y, n=9, axis=1), Input((4, 5)), Input((4, 5)),
     ops=("fft_c2r",), needs=NEEDS, atol=1e-4, rtol=1e-4)
case("irfft:nd", lambda E, x, y: E.fft.irfftn(E.complex(x, y), s=(3, 6)),
     lambda np, x, y: np.fft.irfftn(x + 1j * y, s=(3, 6), axes=(0, 1)), Input((3, 4)),
     Input((3, 4)), ops=("fft_c2r", "fft_c2c"), needs=NEEDS, atol=1e-4,
     rtol=1e-4)
