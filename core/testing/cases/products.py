"""Conformance rows of the products (mm, bmm, addmm, mv, einsum, cross) and of triangles and
diagonals (tril, triu, diagonal, diag, trace, diag_embed).
"""
from __future__ import annotations

from ._table import FLOATS, Input, M, Rows

ROWS = Rows("products")
case = ROWS.case

# --- PyTorch's tensor functions: products, triangles, diagonals ---------------------------
case("mm", lambda E, x, y, b: (E.mm(x, y), E.bmm(b, b.mT), E.addmm(x @ y, x, y, alpha=0.5),
                               E.mv(x, y[:, 0])),
     lambda np, x, y, b: (x @ y, b @ b.swapaxes(-1, -2), x @ y * 1.5, x @ y[:, 0]),
     Input((3, 4)), Input((4, 2)), Input((2, 3, 4)), ops=("mm", "bmm", "addmm", "mv"))
case("einsum", lambda E, x, y: (E.einsum("bij,bjk->bik", x, y), E.einsum("bij->j", x),
                                E.einsum("...ij,...kj", x, x), E.einsum("bii->b", x @ y)),
     lambda np, x, y: (np.einsum("bij,bjk->bik", x, y), np.einsum("bij->j", x),
                       np.einsum("...ij,...kj", x, x), np.einsum("bii->b", x @ y)),
     Input((2, 3, 4)), Input((2, 4, 3)), ops=("einsum", "matmul"))
case("tril", lambda E, x: (E.tril(x), E.triu(x, 1), x.tril(-2)),
     lambda np, x: (np.tril(x), np.triu(x, 1), np.tril(x, -2)), Input(M),
     dtypes=FLOATS + ("int64", "bool"), ops=("tril", "triu"))
case("diagonal", lambda E, x: (E.diagonal(x, 1), E.diag(x[0, :, 0]), E.trace(x[0]),
                               E.diag_embed(x[0])),
     lambda np, x: (np.diagonal(x, 1), np.diag(x[0, :, 0]), np.trace(x[0]),
                    np.stack([np.diag(r) for r in x[0]])), Input(M),
     ops=("diagonal", "diag", "trace", "diag_embed"))
case("cross", lambda E, x, y: E.cross(x, y, dim=1), lambda np, x, y: np.cross(x, y, axis=1),
     Input((2, 3)), Input((2, 3)), ops=("cross",))

case("addr", lambda E, m, a, b: E.addr(m, a, b, beta=0.5, alpha=2.0),
     lambda np, m, a, b: 0.5 * m + 2.0 * np.outer(a, b), Input((3, 4)), Input((3,)),
     Input((4,)))
