"""Conformance rows of pixel_shuffle and pixel_unshuffle."""
from __future__ import annotations

from ._table import F, Input, Rows

ROWS = Rows("pixelshuffle")
case = ROWS.case


def _pixel_shuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(
        n, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4).reshape(
        n, c * r * r, h // r, w // r)


case("pixel_shuffle", lambda E, x: (F(E).pixel_shuffle(x, 2), F(E).pixel_unshuffle(x, 2)),
     lambda np, x: (_pixel_shuffle(x, 2), _pixel_unshuffle(x, 2)), Input((2, 8, 2, 4)),
     ops=("pixel_shuffle", "pixel_unshuffle"))

case("channel_shuffle", lambda E, x: F(E).channel_shuffle(x, 2),
     lambda np, x: x.reshape(2, 2, 3, 5).transpose(0, 2, 1, 3).reshape(2, 6, 5),
     Input((2, 6, 5)))
