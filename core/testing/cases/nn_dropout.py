"""Conformance rows of dropout in eval mode (an identity), in every dimension."""
from __future__ import annotations

from ._table import F, Input, Rows

ROWS = Rows("dropout")
case = ROWS.case

case("dropout:eval", lambda E, x: (F(E).dropout(x, 0.4, training=False),
                                   F(E).dropout(x, 0.0), F(E).dropout2d(x[None], 0.3, False)),
     lambda np, x: (x, x, x[None]), Input((2, 3, 4)), ops=("dropout", "dropout2d"))
case("dropout:eval_nd", lambda E, x: (F(E).dropout1d(x[0], 0.3, False),
                                      F(E).dropout3d(x[None], 0.3, False)),
     lambda np, x: (x[0], x[None]), Input((2, 3, 4, 2)), ops=("dropout1d", "dropout3d"))
case("alpha_dropout:eval", lambda E, x: (F(E).alpha_dropout(x, 0.4),
                                         F(E).feature_alpha_dropout(x, 0.3, training=False)),
     lambda np, x: (x, x), Input((2, 3, 4)), ops=("alpha_dropout", "feature_alpha_dropout"))
