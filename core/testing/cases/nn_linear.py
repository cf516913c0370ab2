"""Conformance rows of nn's linear layers: linear and bilinear."""
from __future__ import annotations

from ._table import ALL_FLOATS, F, Input, Rows

ROWS = Rows("linear")
case = ROWS.case

case("linear", lambda E, x, w, b: (F(E).linear(x, w, b), F(E).linear(x, w)),
     lambda np, x, w, b: (x @ w.T + b, x @ w.T), Input((2, 3, 4)), Input((5, 4)), Input((5,)),
     dtypes=ALL_FLOATS)
case("linear:vector", lambda E, x, w: F(E).linear(x, w), lambda np, x, w: w @ x, Input((4,)),
     Input((3, 4)), ops=("linear",))


case("bilinear",
     lambda E, a, b, w, bias: (F(E).bilinear(a, b, w, bias), F(E).bilinear(a, b, w)),
     lambda np, a, b, w, bias: (np.einsum("ni,oij,nj->no", a, w, b) + bias,
                                np.einsum("ni,oij,nj->no", a, w, b)),
     Input((3, 2)), Input((3, 4)), Input((5, 2, 4)), Input((5,)))
