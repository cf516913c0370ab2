"""Conformance rows of scaled_dot_product_attention."""
from __future__ import annotations

import math

import numpy as np

from ._references import _softmax
from ._table import F, Input, Rows

ROWS = Rows("attention")
case = ROWS.case


def _attention(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return _softmax(s, -1) @ v


case("scaled_dot_product_attention", lambda E, q, k, v: (
    F(E).scaled_dot_product_attention(q, k, v),
    F(E).scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)),
     lambda np, q, k, v: (_attention(q, k, v), _attention(q, k, v, causal=True, scale=0.3)),
     Input((2, 3, 4)), Input((2, 3, 4)), Input((2, 3, 5)), atol=1e-4)
case("scaled_dot_product_attention:masks", lambda E, q, k, v, m, f: (
    F(E).scaled_dot_product_attention(q, k, v, attn_mask=m | (E.arange(4, device=q.device) == 0)),
    F(E).scaled_dot_product_attention(q, k, v, attn_mask=f)),
     lambda np, q, k, v, m, f: (_attention(q, k, v, m | (np.arange(4) == 0)),
                                _attention(q, k, v, f)),
     Input((2, 3, 2)), Input((2, 4, 2)), Input((2, 4, 3)), Input((3, 4), "b"), Input((3, 4)),
     ops=("scaled_dot_product_attention",), atol=1e-4)
