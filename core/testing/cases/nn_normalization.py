"""Conformance rows of normalization: batch, layer, group, instance, RMS and local response
norm.
"""
from __future__ import annotations

import numpy as np

from ._table import ALL_FLOATS, F, Input, Rows

ROWS = Rows("normalization")
case = ROWS.case


def _norm(x, axes, eps=1e-5):
    m = x.mean(axes, keepdims=True)
    v = ((x - m) ** 2).mean(axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


case("batch_norm", lambda E, x, w, b: F(E).batch_norm(x, None, None, w, b, training=True),
     lambda np, x, w, b: _norm(x, (0, 2, 3)) * w.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1),
     Input((3, 2, 2, 3)), Input((2,)), Input((2,)), atol=1e-4, rtol=1e-4)
case("batch_norm:eval", lambda E, x, m, v, w, b: F(E).batch_norm(x, m, v, w, b),
     lambda np, x, m, v, w, b: (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5) * w[:, None]
     + b[:, None], Input((4, 3, 5)), Input((3,)), Input((3,), "p"), Input((3,)), Input((3,)),
     ops=("batch_norm",))
case("batch_norm:1d", lambda E, x: F(E).batch_norm(x, None, None, training=True, eps=1e-3),
     lambda np, x: _norm(x, (0,), 1e-3), Input((5, 3)), ops=("batch_norm",), atol=1e-4)
case("layer_norm", lambda E, x, w, b: (F(E).layer_norm(x, (4,), w, b),
                                       F(E).layer_norm(x, (3, 4), eps=1e-3)),
     lambda np, x, w, b: (_norm(x, (2,)) * w + b, _norm(x, (1, 2), 1e-3)), Input((2, 3, 4)),
     Input((4,)), Input((4,)), dtypes=ALL_FLOATS, atol=1e-4, rtol=1e-4)
case("group_norm", lambda E, x, w, b: F(E).group_norm(x, 2, w, b),
     lambda np, x, w, b: _norm(x.reshape(2, 2, -1), (2,)).reshape(x.shape)
     * w.reshape(1, -1, 1) + b.reshape(1, -1, 1),
     Input((2, 4, 3)), Input((4,)), Input((4,)), atol=1e-4, rtol=1e-4)
case("instance_norm", lambda E, x, w, b: F(E).instance_norm(x, weight=w, bias=b),
     lambda np, x, w, b: _norm(x, (2, 3)) * w.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1),
     Input((2, 3, 3, 4)), Input((3,)), Input((3,)), atol=1e-4, rtol=1e-4)


def _rms(x, dims, eps):
    return x / np.sqrt((x * x).mean(dims, keepdims=True) + eps)


case("rms_norm", lambda E, x, w: (F(E).rms_norm(x, (3, 4), w, eps=1e-5),
                                  F(E).rms_norm(x, (4,), eps=0.1)),
     lambda np, x, w: (_rms(x, (1, 2), 1e-5) * w, _rms(x, (2,), 0.1)),
     Input((2, 3, 4)), Input((3, 4)))


def _lrn(np, x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    sq = np.pad(x * x, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 2))
    window = sum(sq[:, j:j + c] for j in range(size)) / size
    return x / (k + alpha * window) ** beta


case("local_response_norm",
     lambda E, x, y: (F(E).local_response_norm(x, 3, alpha=0.5, beta=0.75, k=2.0),
                      F(E).local_response_norm(y, 2, alpha=0.3)),
     lambda np, x, y: (_lrn(np, x, 3, 0.5, 0.75, 2.0), _lrn(np, y, 2, 0.3)),
     Input((2, 5, 3)), Input((1, 4, 2, 3)))
