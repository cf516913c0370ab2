"""Products against PyTorch on cpu and opencl:0 (mm, bmm, mv, dot, outer, addmm, baddbmm,
einsum, tensordot, kron, cdist, inner, cross, spmm) and triangles and diagonals: forward
values and gradients with a random upstream gradient."""
from __future__ import annotations

import pytest
from parity_helpers import Rows, check_parity

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

# products
case("mm", lambda T, a, b: T.mm(a, b), ("f", (3, 4)), ("f", (4, 5)))
case("bmm", lambda T, a, b: T.bmm(a, b), ("f", (2, 3, 4)), ("f", (2, 4, 5)))
case("mv", lambda T, a, b: T.mv(a, b), ("f", (3, 4)), ("f", (4,)))
case("dot_outer", lambda T, a, b: (T.dot(a, b), T.outer(a, b), a.outer(b)),
     ("f", (4,)), ("f", (4,)))
case("addmm", lambda T, c, a, b: (T.addmm(c, a, b), T.addmm(c, a, b, beta=0.5, alpha=2.0),
                                  c.addmm(a, b)), ("f", (3, 5)), ("f", (3, 4)), ("f", (4, 5)))
case("baddbmm", lambda T, c, a, b: T.baddbmm(c, a, b, alpha=0.5), ("f", (2, 3, 5)),
     ("f", (2, 3, 4)), ("f", (2, 4, 5)))
case("einsum:matmul", lambda T, a, b: (T.einsum("ij,jk->ik", a, b), T.einsum("ij,jk", a, b)),
     ("f", (3, 4)), ("f", (4, 5)))
case("einsum:batched", lambda T, a, b: T.einsum("bhqd,bhkd->bhqk", a, b),
     ("f", (2, 3, 4, 5)), ("f", (2, 3, 6, 5)))
case("einsum:ellipsis", lambda T, a, b: (T.einsum("...ij,...jk->...ik", a, b),
                                         T.einsum("...i,...i", a[..., 0, :], b[..., 0])),
     ("f", (2, 3, 4)), ("f", (1, 4, 4)))
case("einsum:diagonal_trace", lambda T, a: (T.einsum("ii->i", a), T.einsum("ii", a),
                                            T.einsum("ij->ji", a), T.einsum("ij->", a)),
     ("f", (4, 4)))
case("einsum:three", lambda T, a, b, c: T.einsum("i,ij,j->", a, b, c), ("f", (3,)),
     ("f", (3, 4)), ("f", (4,)))
case("einsum:outer_list", lambda T, a, b: T.einsum("i,j->ij", [a, b]), ("f", (3,)),
     ("f", (4,)))
# triangles, diagonals
case("tril_triu", lambda T, a: (T.tril(a), T.triu(a, 1), a.tril(-1), T.triu(a, -2)),
     ("f", (2, 4, 5)))
case("diag", lambda T, a, v: (T.diag(a), T.diag(a, 1), T.diag(v), T.diag(v, -2),
                              a.diagonal(), T.diagonal(a, -1), T.trace(a)),
     ("f", (4, 5)), ("f", (3,)))
case("diagonal:dims", lambda T, a: (T.diagonal(a, 0, 0, 2), T.diagonal(a, 1, -1, 0)),
     ("f", (3, 2, 4)))
case("diag_embed", lambda T, a: (T.diag_embed(a), T.diag_embed(a, 1), T.diag_embed(a, -1, 0, 2)),
     ("f", (2, 3)))
case("cross", lambda T, a, b: (T.cross(a, b, dim=1), T.linalg.cross(a, b)), ("f", (4, 3)),
     ("f", (4, 3)))
case("products", lambda T, a, b, c: (T.tensordot(a, b), T.tensordot(a, b, ([1], [0])),
                                     T.kron(a[0], c), T.cdist(c, a[0, 0].unsqueeze(0)),
                                     T.cdist(c, c, p=1), T.inner(c, c)),
     ("f", (2, 3, 4)), ("f", (3, 4, 2)), ("f", (3, 4)))
case("sparse_coo", lambda T, i, v, m: (
    T.sparse_coo_tensor(i, v, (3, 4), check_invariants=True).to_dense(),
    T.spmm(T.sparse_coo_tensor(i, v, (3, 4), check_invariants=True), m)),
     ("i", (2, 6), 3), ("f", (6,)), ("f", (4, 2)))


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")
