"""Tensor.to_sparse(): a real COO sparse tensor, against torch's sparse_coo layout."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.sparse import SparseTensor

torch = pytest.importorskip("torch")
# torch warns that its sparse invariant checks are off, on every sparse tensor it builds
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

DENSE = np.array([[0.0, 2.0, 0.0, -1.5],
                  [3.0, 0.0, 0.0, 0.0],
                  [0.0, 0.0, np.nan, 4.0]], dtype=np.float32)


def _pair():
    return ember.tensor(DENSE).to_sparse(), torch.tensor(DENSE).to_sparse()


def test_to_sparse_is_torchs_coo_layout():
    s, t = _pair()
    assert type(s) is SparseTensor and s.is_sparse and not ember.tensor(DENSE).is_sparse
    assert str(t.layout) == s.layout == "torch.sparse_coo"
    assert s.is_coalesced() and t.is_coalesced()
    assert (s._nnz(), s.sparse_dim(), s.dense_dim(), tuple(s.shape), s.dim()) == \
        (t._nnz(), t.sparse_dim(), t.dense_dim(), tuple(t.shape), t.dim())
    np.testing.assert_array_equal(s.indices().numpy(), t.indices().numpy())
    np.testing.assert_array_equal(s.values().numpy(), t.values().numpy())    # nan kept
    np.testing.assert_array_equal(s.to_dense().numpy(), t.to_dense().numpy())
    assert s.to(ember.float64).dtype is ember.float64
    assert s.to_dense(ember.float64).dtype is ember.float64
    assert "layout=torch.sparse_coo" in repr(s) and "nnz=5" in repr(s)
    # the gradient reaches the stored values only: torch's masked_grad=True, and False (the
    # full dense gradient) is refused by name
    np.testing.assert_array_equal(s.to_dense(masked_grad=True).numpy(), t.to_dense().numpy())
    with pytest.raises(ember.errors.NotInEmberError, match="masked_grad=False"):
        s.to_dense(masked_grad=False)


def test_products_from_either_side_match_torch():
    s, t = ember.tensor(np.nan_to_num(DENSE)).to_sparse(), \
        torch.tensor(np.nan_to_num(DENSE)).to_sparse()
    r = np.random.default_rng(0)
    right, left, vec = (r.standard_normal(shape).astype(np.float32)
                        for shape in ((4, 5), (6, 3), (4,)))
    R, L, V = ember.tensor(right), ember.tensor(left), ember.tensor(vec)
    tR, tL, tV = torch.tensor(right), torch.tensor(left), torch.tensor(vec)
    pairs = [(s @ R, torch.sparse.mm(t, tR)), (ember.mm(s, R), torch.mm(t, tR)),
             (ember.spmm(s, R), torch.spmm(t, tR)), (ember.matmul(s, R), t @ tR),
             (ember.sparse.mm(s, R), torch.sparse.mm(t, tR)), (s @ V, t @ tV),
             (L @ s, tL @ t), (ember.mm(L, s), torch.mm(tL, t)), (s.t() @ L.mT, t.t() @ tL.T)]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_gradients_reach_the_dense_operand_and_the_stored_entries():
    # the entries present get gradients, as torch.sparse.mm gives them (torch's mm/@
    # would also give the absent ones one)
    r = np.random.default_rng(1)
    base, right = np.nan_to_num(DENSE), r.standard_normal((4, 5)).astype(np.float32)
    seen = []
    for lib, product in ((ember, lambda a, b: a @ b), (torch, torch.sparse.mm)):
        x = lib.tensor(base, requires_grad=True)
        w = lib.tensor(right, requires_grad=True)
        out = product(x.to_sparse(), w)
        (out * out).sum().backward()
        seen.append((x.grad.numpy(), w.grad.numpy()))
    for got, want in zip(*seen):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_coalesce_sums_repeated_indices_as_torch():
    idx, vals = [[1, 0, 1, 2], [0, 2, 0, 1]], [1.0, 2.0, 3.0, 4.0]
    s = SparseTensor(ember.tensor(idx), ember.tensor(vals), (3, 3))
    t = torch.sparse_coo_tensor(idx, vals, (3, 3))
    with pytest.raises(ember.EmberError, match="uncoalesced tensor, please call .coalesce"):
        s.indices()
    with pytest.raises(RuntimeError, match="uncoalesced tensor, please call .coalesce"):
        t.indices()
    sc, tc = s.coalesce(), t.coalesce()
    np.testing.assert_array_equal(sc.indices().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(sc.values().numpy(), tc.values().numpy())
    np.testing.assert_array_equal(s.to_dense().numpy(), t.to_dense().numpy())


def test_layouts_ember_lacks_are_refused_by_name():
    x = ember.tensor(DENSE)
    with pytest.raises(ember.errors.NotInEmberError, match="COO layout only"):
        x.to_sparse(layout="torch.sparse_csr")
    with pytest.raises(ember.errors.NotInEmberError, match="no hybrid or blocked"):
        x.to_sparse(1)
    with pytest.raises(ember.EmberError, match="expected a 2-D sparse matrix"):
        ember.ones(3, 4).to_sparse() @ ember.ones(3, 2)


def test_a_dense_tensor_stays_what_it_is():
    # to_dense of a strided tensor is the tensor (in dtype when one is given), as torch's
    x = ember.tensor(DENSE)
    assert x.to_dense() is x and x.to_dense(ember.float64).dtype is ember.float64
    assert torch.ones(2).to_dense(torch.float64).dtype is torch.float64
    assert x.coalesce() is x and not x.is_sparse
