"""Conformance rows of embedding (torch.nn.modules.sparse)."""
from __future__ import annotations

from ._table import F, Input, Rows

ROWS = Rows("sparse")
case = ROWS.case

case("embedding", lambda E, i, w: F(E).embedding(i, w), lambda np, i, w: w[i],
     Input((2, 3), "ix4"), Input((4, 3)))
# padding_idx stops the gradient of that row on purpose: forward only
case("embedding:padding_idx", lambda E, i, w: F(E).embedding(i, w, padding_idx=1),
     lambda np, i, w: w[i], Input((2, 3), "ix4"), Input((4, 3)), grad=False,
     ops=("embedding",))
