"""Conformance rows of embedding and embedding_bag (torch.nn.modules.sparse)."""
from __future__ import annotations

import numpy as np

from ._table import F, Input, Rows

ROWS = Rows("sparse")
case = ROWS.case

case("embedding", lambda E, i, w: F(E).embedding(i, w), lambda np, i, w: w[i],
     Input((2, 3), "ix4"), Input((4, 3)))
# padding_idx stops the gradient of that row on purpose: forward only
case("embedding:padding_idx", lambda E, i, w: F(E).embedding(i, w, padding_idx=1),
     lambda np, i, w: w[i], Input((2, 3), "ix4"), Input((4, 3)), grad=False,
     ops=("embedding",))


def _bags(i, w, offsets, mode, psw=None, padding_idx=None, last=False):
    """embedding_bag directly: each bag's rows of w (scaled by psw), padding_idx's left out,
    reduced by mode; an empty bag gives zeros."""
    if i.ndim == 2:
        bounds = [(r * i.shape[1], (r + 1) * i.shape[1]) for r in range(i.shape[0])]
        i, psw = i.reshape(-1), None if psw is None else psw.reshape(-1)
    else:
        ends = list(offsets[1:]) + ([] if last else [len(i)])
        bounds = list(zip(offsets[:len(ends)], ends))
    out = np.zeros((len(bounds), w.shape[1]))
    for b, (lo, hi) in enumerate(bounds):
        keep = [k for k in range(lo, hi) if i[k] != padding_idx]
        if not keep:
            continue
        rows = w[i[keep]] * (1.0 if psw is None else psw[keep][:, None])
        out[b] = {"sum": rows.sum, "mean": rows.mean, "max": rows.max}[mode](0)
    return out


case("embedding_bag", lambda E, i, w, s: (
    F(E).embedding_bag(i, w), F(E).embedding_bag(i, w, mode="sum"),
    F(E).embedding_bag(i, w, mode="max"),
    F(E).embedding_bag(i, w, mode="sum", per_sample_weights=s)),
     lambda np, i, w, s: (_bags(i, w, None, "mean"), _bags(i, w, None, "sum"),
                          _bags(i, w, None, "max"), _bags(i, w, None, "sum", s)),
     Input((2, 3), "ix5"), Input((5, 3)), Input((2, 3)))
# 1-D input cut at offsets: an empty bag (zeros), padding_idx left out, include_last_offset
_OFFSETS = Input((4,), "ix7", (0, 2, 2, 5))
case("embedding_bag:offsets", lambda E, i, w, o: (
    F(E).embedding_bag(i, w, o), F(E).embedding_bag(i, w, o, mode="max", padding_idx=1),
    F(E).embedding_bag(i, w, o, mode="sum", include_last_offset=True)),
     lambda np, i, w, o: (_bags(i, w, o, "mean"), _bags(i, w, o, "max", padding_idx=1),
                          _bags(i, w, o, "sum", last=True)),
     Input((7,), "ix5", (1, 3, 0, 1, 4, 2, 1)), Input((5, 3)), _OFFSETS, ops=("embedding_bag",))
