"""Conformance rows of nn's padding modes (reflect, replicate, circular)."""
from __future__ import annotations

from ._table import F, Input, Rows

# the report has always grouped this row under normalization
ROWS = Rows("padding")
case = ROWS.case

# reflect / replicate / circular padding: an index_select per padded dim
case("pad:modes", lambda E, x: tuple(F(E).pad(x, (2, 1, 1, 2), mode=m)
                                     for m in ("reflect", "replicate", "circular")),
     lambda np, x: tuple(np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode=m)
                         for m in ("reflect", "edge", "wrap")),
     Input((1, 2, 4, 5)), ops=("pad",))
