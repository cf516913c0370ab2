"""Conformance rows of sorting (argsort, sort, topk) and scans (cumsum, cumprod)."""
from __future__ import annotations

from ._table import Input, M, Rows, S

ROWS = Rows("sorting")
case = ROWS.case

case("cumsum", lambda E, x: (E.cumsum(x, 1), E.cumsum(x, -1), E.cumprod(x, 0)),
     lambda np, x: (np.cumsum(x, 1), np.cumsum(x, -1), np.cumprod(x, 0)), Input(M),
     ops=("cumsum", "cumprod"))
case("cumsum:int", lambda E, x: (E.cumsum(x, 0), E.cumprod(x, 1)),
     lambda np, x: (np.cumsum(x, 0), np.cumprod(x, 1)), Input(S, "i"),
     dtypes=("int64", "int32"), grad=False, out_dtype="int64", ops=("cumsum", "cumprod"))
case("argsort", lambda E, x: (E.argsort(x), E.argsort(x, 0, descending=True)),
     lambda np, x: (np.argsort(x, -1, kind="stable"), np.argsort(-x, 0, kind="stable")),
     Input(M, "i"), dtypes=("int64", "float32"), grad=False, out_dtype="int64")
case("argsort:sort_topk", lambda E, x: (*E.sort(x, 1), *E.topk(x, 2, -1)),
     lambda np, x: (np.sort(x, 1), np.argsort(x, 1, kind="stable"),
                    -np.sort(-x, -1)[..., :2], np.argsort(-x, -1, kind="stable")[..., :2]),
     Input(M), out_dtype=("same", "int64", "same", "int64"), ops=("argsort", "sort", "topk"))
case("unique", lambda E, x: E.unique(x), lambda np, x: np.unique(x),
     Input((10,), "f", values=(3.0, -1.0, 2.0, 3.0, -1.0, 0.0, 7.5, 2.0, 3.0, -4.0)),
     dtypes=("float32", "int64"), grad=False, ops=("unique",))
case("topk", lambda E, x: (*E.topk(x, 3, 1), *E.topk(x, 2, 0, largest=False)),
     lambda np, x: (-np.sort(-x, 1, kind="stable")[:, :3],
                    np.argsort(-x, 1, kind="stable")[:, :3],
                    np.sort(x, 0, kind="stable")[:2], np.argsort(x, 0, kind="stable")[:2]),
     Input((4, 9)), dtypes=("int64", "float32"), grad=False,
     out_dtype=("same", "int64", "same", "int64"), ops=("topk",))
