"""Conformance rows of scaled_dot_product_attention and multi_head_attention_forward."""
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


def _mha(q, k, v, w, b, ow, ob, heads):
    """Reference: MultiheadAttention's forward over (L, N, E) inputs, head by head."""
    e = q.shape[-1]
    qp, kp, vp = (x @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
                  for i, x in enumerate((q, k, v)))
    hd = e // heads
    outs, weights = [], []
    for h in range(heads):
        part = slice(h * hd, (h + 1) * hd)
        s = np.einsum("lne,sne->nls", qp[..., part], kp[..., part]) / math.sqrt(hd)
        p = _softmax(s, -1)
        weights.append(p)
        outs.append(np.einsum("nls,sne->lne", p, vp[..., part]))
    return np.concatenate(outs, -1) @ ow.T + ob, sum(weights) / heads


case("multi_head_attention_forward", lambda E, q, k, v, w, b, ow, ob: (
    F(E).multi_head_attention_forward(q, k, v, 4, 2, w, b, None, None, False, 0.0, ow, ob)),
     lambda np, q, k, v, w, b, ow, ob: _mha(q, k, v, w, b, ow, ob, 2),
     Input((3, 2, 4)), Input((5, 2, 4)), Input((5, 2, 4)), Input((12, 4)), Input((12,)),
     Input((4, 4)), Input((4,)), atol=1e-4, rtol=1e-4)
