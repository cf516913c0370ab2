"""Conformance rows of interpolate and upsample (nearest, nearest-exact, linear, bilinear)."""
from __future__ import annotations

import numpy as np

from ._table import F, Input, Rows

ROWS = Rows("upsampling")
case = ROWS.case


def _nearest(n_in, n_out, exact):
    scale = n_in / n_out
    src = np.floor((np.arange(n_out) + (0.5 if exact else 0.0)) * scale).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _linear_taps(n_in, n_out, align_corners):
    if align_corners:
        src = np.arange(n_out) * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    return low, np.minimum(low + 1, n_in - 1), src - low


def _resize(x, size, mode, align_corners=False):
    """PyTorch's interpolate, one spatial dim at a time (separable)."""
    for axis, n_out in zip(range(2, x.ndim), size):
        n_in = x.shape[axis]
        if mode.startswith("nearest"):
            x = np.take(x, _nearest(n_in, n_out, mode == "nearest-exact"), axis=axis)
        else:
            low, high, w = _linear_taps(n_in, n_out, align_corners)
            shape = [1] * x.ndim
            shape[axis] = n_out
            w = w.reshape(shape)
            x = np.take(x, low, axis=axis) * (1 - w) + np.take(x, high, axis=axis) * w
    return x


case("interpolate", lambda E, x: (F(E).interpolate(x, size=(5, 3)),
                                  F(E).interpolate(x, size=(7, 2), mode="nearest-exact"),
                                  F(E).interpolate(x, size=(5, 7), mode="bilinear"),
                                  F(E).interpolate(x, size=(3, 5), mode="bilinear",
                                                   align_corners=True)),
     lambda np, x: (_resize(x, (5, 3), "nearest"), _resize(x, (7, 2), "nearest-exact"),
                    _resize(x, (5, 7), "bilinear"), _resize(x, (3, 5), "bilinear", True)),
     Input((2, 3, 4, 4)), ops=("interpolate", "upsample"), atol=1e-5)
case("interpolate:linear", lambda E, x: (F(E).interpolate(x, size=7, mode="linear"),
                                         F(E).upsample(x, size=6)),
     lambda np, x: (_resize(x, (7,), "linear"), _resize(x, (6,), "nearest")),
     Input((2, 3, 4)), ops=("interpolate", "upsample"))
# torch's deprecated spellings: upsample_bilinear is bilinear with align_corners=True
case("upsample_bilinear", lambda E, x: (F(E).upsample_bilinear(x, size=(5, 7)),
                                        F(E).upsample_nearest(x, scale_factor=2)),
     lambda np, x: (_resize(x, (5, 7), "bilinear", True), _resize(x, (8, 8), "nearest")),
     Input((2, 3, 4, 4)), ops=("upsample_bilinear", "upsample_nearest"), atol=1e-5)
