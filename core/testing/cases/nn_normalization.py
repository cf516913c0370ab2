"""Conformance rows of the nn.functional names from nn/train_extra.py, with NumPy references."""
from __future__ import annotations

from .elementwise import Input, case, section


def F(E):
    return E.nn.functional


def _lrn(np, x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    sq = np.pad(x * x, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 2))
    window = sum(sq[:, j:j + c] for j in range(size)) / size
    return x / (k + alpha * window) ** beta


section("normalization")
case("local_response_norm",
     lambda E, x, y: (F(E).local_response_norm(x, 3, alpha=0.5, beta=0.75, k=2.0),
                      F(E).local_response_norm(y, 2, alpha=0.3)),
     lambda np, x, y: (_lrn(np, x, 3, 0.5, 0.75, 2.0), _lrn(np, y, 2, 0.3)),
     Input((2, 5, 3)), Input((1, 4, 2, 3)))

section("linear")
case("bilinear",
     lambda E, a, b, w, bias: (F(E).bilinear(a, b, w, bias), F(E).bilinear(a, b, w)),
     lambda np, a, b, w, bias: (np.einsum("ni,oij,nj->no", a, w, b) + bias,
                                np.einsum("ni,oij,nj->no", a, w, b)),
     Input((3, 2)), Input((3, 4)), Input((5, 2, 4)), Input((5,)))
