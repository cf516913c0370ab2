"""PyTorch's tensor functions on ember, against PyTorch itself: forward values and
gradients (with a random upstream gradient), on the CPU and on opencl:0."""
from __future__ import annotations

import math
import zlib

import ember
import numpy as np
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
# movement
case("roll", lambda T, a: (T.roll(a, 1), T.roll(a, -2, 1), a.roll((1, 2), (0, 2))),
     ("f", (3, 4, 5)))
case("narrow_select_unbind", lambda T, a: (a.narrow(1, 1, 2), T.narrow(a, -1, 0, 3),
                                           a.select(0, -1), *a.unbind(1)), ("f", (3, 4, 5)))
case("repeat", lambda T, a: (a.repeat(2, 3), a.repeat(2, 1, 1), T.tile(a, (2,))),
     ("f", (3, 4)))
case("repeat_interleave", lambda T, a, r: (
    T.repeat_interleave(a, 2), a.repeat_interleave(3, dim=1),
    T.repeat_interleave(a, r, dim=0), T.repeat_interleave(r)), ("f", (3, 2)), ("i", (3,), 3))
case("broadcast", lambda T, a: (T.broadcast_to(a, (2, 3, 4)), a.broadcast_to((3, 4)),
                                *T.broadcast_tensors(a, a[:1])), ("f", (3, 1)))
case("unflatten_flatten", lambda T, a: (a.unflatten(1, (2, -1)), T.unflatten(a, 0, (1, 3)),
                                        T.flatten(a, 1)), ("f", (3, 6)))
case("cross", lambda T, a, b: (T.cross(a, b, dim=1), T.linalg.cross(a, b)), ("f", (4, 3)),
     ("f", (4, 3)))
case("unfold_windows", lambda T, a: (a.unfold(1, 3, 2), a.unfold(0, 2, 1)), ("f", (4, 7)))
# sorting and scans
case("sort", lambda T, a: (*T.sort(a), *a.sort(0, descending=True), T.argsort(a, 1)),
     ("t", (4, 6)))
case("sort:nan", lambda T, a: (*T.sort(a), *T.sort(a, descending=True)),
     ("v", (2, 4), (1.0, math.nan, -1.0, math.nan, math.inf, 0.5, math.nan, -math.inf)))
case("topk", lambda T, a: (*T.topk(a, 3), *a.topk(2, 0, largest=False)), ("f", (5, 6)))
case("median_kthvalue", lambda T, a: (T.median(a), *a.median(1), *T.kthvalue(a, 2, 0)),
     ("f", (5, 4)))
case("cumsum_cumprod", lambda T, a: (T.cumsum(a, 1), a.cumsum(0), T.cumprod(a, 1),
                                     a.cumprod(-1)), ("f", (3, 5)))
case("cumprod:zeros", lambda T, a: T.cumprod(a, 1),
     ("v", (3, 4), (1.5, 0.0, 2.0, 3.0, 0.0, 0.0, 2.0, -1.0, 2.0, -0.5, 3.0, 0.0)))
case("cumsum:long_lines", lambda T, a: (T.cumsum(a, 1), T.cumsum(a.mT, 1)),
     ("f", (3, 300)), atol=1e-4)
case("logcumsumexp", lambda T, a: T.logcumsumexp(a, 1), ("f", (3, 5)))
# norms and comparisons
case("norm", lambda T, a: (a.norm(), T.norm(a, 2, 1), a.norm(1, 0, keepdim=True),
                           a.norm(float("inf"), 1), T.norm(a, p="fro"), a.norm(3, 1),
                           a.norm(dim=(0, 1))), ("f", (3, 4)))
case("norm:zero_vector", lambda T, a: (a * 0).norm(2, 1), ("f", (3, 4)))
case("linalg_norm", lambda T, a: (T.linalg.norm(a), T.linalg.norm(a, dim=1),
                                  T.linalg.norm(a, "fro"), T.linalg.norm(a, float("inf")),
                                  T.linalg.norm(a, 1), T.linalg.vector_norm(a, 1, (0, 1)),
                                  T.linalg.matrix_norm(a)), ("f", (3, 4)))
case("isclose_allclose", lambda T, a: (T.isclose(a, a + 1e-7), T.isclose(a, a * 1.1),
                                       a.isclose(a + 1, atol=2.0)), ("f", (3, 4)), grad=False)
# indexing
case("scatter", lambda T, a, i, s, j: (T.scatter(a, 1, i, s), a.scatter(1, i, 2.5),
                                       T.scatter(a, 0, j, s[:1, :3])),
     ("f", (3, 4)), ("perm", (3, 4)), ("f", (3, 4)), ("perm", (1, 3)))
case("index_fill", lambda T, a, i: (a.index_fill(1, i, -1.0), T.index_fill(a, 0, i[:1], 2.0)),
     ("f", (3, 4)), ("i", (2,), 3))
case("masked_fill_select", lambda T, a, m: (a.masked_fill(m, 0.5), T.masked_select(a, m),
                                            a.masked_fill(m, T.tensor(-1.0))),
     ("f", (3, 4)), ("b", (3, 4)))
case("gather", lambda T, a, i, j: (a.gather(1, i), T.gather(a, 0, j)),
     ("f", (3, 4)), ("perm", (3, 4)), ("i", (2, 4), 3))
case("nan_to_num", lambda T, a: T.nan_to_num(a, nan=1.0, posinf=5.0, neginf=-5.0),
     ("v", (4,), (math.nan, math.inf, -math.inf, 2.0)))
case("amax_amin_logsumexp", lambda T, a: (a.amax(1), T.amin(a, 0), T.logsumexp(a, 1),
                                          *a.max(1)), ("f", (3, 4)))


# elementwise composites, more of torch's functions
case("math", lambda T, a, p: (T.log2(p), p.log10(), T.exp2(a), T.sinh(a), a.cosh(), T.trunc(a * 3),
                              (a * 3).frac(), T.fmod(a * 3, 1.5), T.logaddexp(a, p),
                              T.hypot(a, p), T.erfc(a), T.logit(p * 0.9), T.xlogy(p, p + 1),
                              T.deg2rad(a), T.fmax(a, p), T.fmin(a, p)),
     ("f", (3, 4)), ("p", (3, 4)))
case("products", lambda T, a, b, c: (T.tensordot(a, b), T.tensordot(a, b, ([1], [0])),
                                     T.kron(a[0], c), T.cdist(c, a[0, 0].unsqueeze(0)),
                                     T.cdist(c, c, p=1), T.inner(c, c)),
     ("f", (2, 3, 4)), ("f", (3, 4, 2)), ("f", (3, 4)))
case("take_along_dim_dist", lambda T, a, i: (T.take_along_dim(a, i, 1), T.dist(a, a * 0.5),
                                             a.dist(a + 1, 1)), ("f", (3, 4)), ("perm", (3, 4)))
case("search_count", lambda T, s, v, i: (T.searchsorted(s, v), T.bucketize(v, s, right=True),
                                         T.bincount(i), T.bincount(i, minlength=9)),
     ("v", (5,), (-1.0, 0.0, 0.5, 2.0, 3.0)), ("f", (3, 4)), ("i", (7,), 6), grad=False)
case("unique", lambda T, a: (*T.unique(a, return_inverse=True, return_counts=True),
                             a.unique()), ("i", (3, 5), 4), grad=False)
case("sparse_coo", lambda T, i, v, m: (
    T.sparse_coo_tensor(i, v, (3, 4), check_invariants=True).to_dense(),
    T.spmm(T.sparse_coo_tensor(i, v, (3, 4), check_invariants=True), m)),
     ("i", (2, 6), 3), ("f", (6,)), ("f", (4, 2)))
case("logspace_concat", lambda T, a: (T.logspace(0, 2, 5), T.concat([a, a], 1),
                                      *T.std_mean(a, 1)), ("f", (2, 3)))


case("inplace_forms", lambda T, a, i: (
    a.clone().fill_diagonal_(2.0), a.clone().scatter_(1, i, 2.5),
    a.clone().index_fill_(1, i[0, :2], -1.0), a.clone().tril_(), a.clone().clamp_(-0.5, 0.5),
    a.clone().masked_fill_(a > 0, 0.0), a.clone().exp2_(),
    *T.where(a > 0)), ("f", (3, 4)), ("perm", (3, 4)))


@pytest.mark.parametrize("row", ROWS)
def test_parity(row, device):
    check_parity(row, device)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_distribution(device, replacement):
    """Draws follow the weights (a chi-square bound), rows stay independent, and without
    replacement no category repeats in a row."""
    ember.manual_seed(zlib.crc32(b"multinomial"))
    weights = ember.tensor([[1.0, 2.0, 0.0, 5.0], [0.0, 1.0, 1.0, 0.0]], device=device)
    n = 4000 if replacement else 2
    draws = ember.multinomial(weights, n, replacement=replacement).numpy()
    assert draws.shape == (2, n) and draws.dtype == np.int64
    if not replacement:
        assert all(len(set(row)) == n for row in draws)
        assert set(draws[1]) == {1, 2}          # the only categories with weight
        return
    for row, w in zip(draws, weights.numpy()):
        counts = np.bincount(row, minlength=4)
        expected = n * w / w.sum()
        assert (counts[w == 0] == 0).all()
        keep = w > 0
        chi2 = (((counts - expected)[keep]) ** 2 / expected[keep]).sum()
        assert chi2 < 20.0, (counts, expected)     # 3 degrees of freedom: p < 0.001


def test_multinomial_refuses_bad_distributions(device):
    with pytest.raises(ValueError, match="invalid multinomial distribution"):
        ember.multinomial(ember.tensor([0.0, 0.0], device=device), 1)
    with pytest.raises(ValueError, match="without replacement"):
        ember.multinomial(ember.tensor([1.0, 1.0], device=device), 3)


def test_sort_is_stable_on_long_lines(device):
    """Merge passes past one work-group's worth of elements, many ties."""
    rng = np.random.default_rng(zlib.crc32(b"stable"))
    a = rng.integers(0, 7, (3, 1500)).astype(np.float32)
    want = torch.sort(torch.tensor(a), dim=1, descending=True, stable=True)
    got = ember.sort(ember.tensor(a, device=device), 1, descending=True)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


def test_random_like_and_fills(device):
    x = ember.zeros(200, 3, device=device)
    ember.manual_seed(1)
    a = ember.randn_like(x)
    ember.manual_seed(1)
    b = ember.randn(200, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # one host stream, every device
    assert ember.rand_like(x).device == x.device and ember.randint_like(x, 5).max() < 5
    assert ember.randint(10, (4,)).shape == (4,) and ember.randint(3, 10, (2, 2)).min() >= 3
    y = ember.empty(500, device=device).uniform_(-2, 2)
    assert -2 <= y.min().item() and y.max().item() < 2
    assert abs(ember.empty(2000, device=device).normal_(3.0, 0.5).mean().item() - 3.0) < 0.1
    assert set(ember.zeros(100, device=device).bernoulli_(0.5).unique().tolist()) <= {0.0, 1.0}


def test_repeat_returns_new_memory():
    """x.repeat(...) then an in-place op (fast_neural_style's normalize_batch): a copy, as
    torch's, never a stride-0 view that in-place ops refuse."""
    x = ember.ones(1, 3, 2, 2)
    y = x.repeat(2, 1, 1, 1)
    y.div_(2.0)
    assert y.numpy().tolist() == (ember.ones(2, 3, 2, 2) / 2).numpy().tolist()
    assert x.numpy().min() == 1.0
