"""torch.svd_lowrank and torch.pca_lowrank against PyTorch on cpu and opencl:0.

The algorithms are randomized and ember's generator is not torch's, so the two are compared
where the answer does not depend on the random basis, as torch's OpInfo samples do: for a
matrix of rank <= q (or q = min(m, n)), (U V^H, S) is the matrix's own SVD; its gradients
then agree too.  Otherwise the factors are checked for what they promise."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")


def _low_rank(name, batch, m, n, k, dtype="float64"):
    rng = seeded(name)
    left, right = rng.standard_normal((*batch, m, k)), rng.standard_normal((*batch, k, n))
    if dtype.startswith("complex"):
        left = left + 1j * rng.standard_normal((*batch, m, k))
        right = right + 1j * rng.standard_normal((*batch, k, n))
    return (left @ right).astype(dtype)


def _processed(lib, usv):
    U, S, V = usv
    return (U @ V.mH).numpy() if lib is ember else (U @ V.mH).detach().numpy(), \
        S.detach().numpy()


@pytest.mark.parametrize("shape,k,dtype", [((6, 4), 2, "float64"), ((4, 6), 2, "float64"),
                                           ((2, 5, 5), 3, "float64"),
                                           ((5, 3), 2, "complex128"), ((7, 5), 3, "float32")])
def test_svd_lowrank_of_a_low_rank_matrix(device, shape, k, dtype):
    *batch, m, n = shape
    a = _low_rank(f"svd_lowrank{shape}", batch, m, n, k, dtype)
    tol = dict(rtol=1e-3, atol=1e-4) if dtype == "float32" else dict(rtol=1e-8, atol=1e-9)
    ember.manual_seed(0)
    got = ember.svd_lowrank(ember.tensor(a, device=device), q=k)
    want = torch.svd_lowrank(torch.tensor(a), q=k)
    assert [tuple(x.shape) for x in got] == [tuple(x.shape) for x in want]
    assert got[1].dtype == ember.tensor(want[1].numpy()).dtype
    for x, y in zip(_processed(ember, got), _processed(torch, want)):
        np.testing.assert_allclose(x, y, **tol)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 3)])
def test_svd_lowrank_with_a_mean_and_pca(device, shape):
    *batch, m, n = shape
    rng = seeded(f"lowrank_mean{shape}")
    a, mean = rng.standard_normal(shape), rng.standard_normal((*batch, 1, n))
    q = min(m, n)                  # the whole spectrum: no dependence on the random basis
    ea, em = ember.tensor(a, device=device), ember.tensor(mean, device=device)
    ta, tm = torch.tensor(a), torch.tensor(mean)
    cases = [(lambda: ember.svd_lowrank(ea, q=q, M=em), lambda: torch.svd_lowrank(ta, q=q, M=tm)),
             # centered rows sum to 0: rank m - 1 at most (a zero singular value's vectors
             # are anyone's)
             (lambda: ember.pca_lowrank(ea, q=min(m - 1, n)),
              lambda: torch.pca_lowrank(ta, q=min(m - 1, n))),
             (lambda: ember.pca_lowrank(ea, q=q, center=False, niter=0),
              lambda: torch.pca_lowrank(ta, q=q, center=False, niter=0))]
    for e, t in cases:
        for x, y in zip(_processed(ember, e()), _processed(torch, t())):
            np.testing.assert_allclose(x, y, rtol=1e-8, atol=1e-9)


def test_factors_of_a_full_rank_matrix(device):
    """q below the rank: U and V orthonormal, U diag(S) V^H within the (q+1)-th singular
    value of A (a good sketch on a matrix with a fast-falling spectrum), S nonnegative."""
    rng = seeded("lowrank_full")
    u, _ = np.linalg.qr(rng.standard_normal((30, 8)))
    v, _ = np.linalg.qr(rng.standard_normal((20, 8)))
    s = 2.0 ** -np.arange(8)
    a = (u * s) @ v.T
    ember.manual_seed(1)
    U, S, V = ember.svd_lowrank(ember.tensor(a, device=device), q=4, niter=2)
    U, S, V = U.numpy(), S.numpy(), V.numpy()
    np.testing.assert_allclose(U.T @ U, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(V.T @ V, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(S, s[:4], rtol=1e-3)
    assert np.linalg.norm((U * S) @ V.T - a, 2) < 2 * s[4]
    ember.manual_seed(1)
    again = ember.svd_lowrank(ember.tensor(a, device=device), q=4, niter=2)[1].numpy()
    np.testing.assert_array_equal(again, S)             # seeded: repeatable


def test_gradients(device):
    rng = seeded("lowrank_grad")
    a = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    up = rng.standard_normal((5, 4)), rng.standard_normal(2)

    def loss(lib, x, **on):
        U, S, V = lib.svd_lowrank(x, q=2)
        return ((U @ V.mH) * lib.tensor(up[0], **on)).sum() + \
            (S * lib.tensor(up[1], **on)).sum()
    e = ember.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    ember.manual_seed(0)
    (ge,) = ember.autograd.grad(loss(ember, e, device=device), e)
    (gt,) = torch.autograd.grad(loss(torch, t), t)
    # the gradient off the rank-2 matrices depends on the random basis: compare on them
    # (project both onto the tangent space of rank-2 matrices at a)
    U, _, Vh = np.linalg.svd(a)
    pu, pv = U[:, :2] @ U[:, :2].T, Vh[:2].T @ Vh[:2]

    def tangent(g):
        return pu @ g + g @ pv - pu @ g @ pv
    np.testing.assert_allclose(tangent(ge.numpy()), tangent(gt.numpy()), rtol=1e-7, atol=1e-9)

    def seeded_fn(x):
        ember.manual_seed(3)
        U, S, V = ember.svd_lowrank(x, q=3)
        return U @ V.mH, S
    full = ember.tensor(rng.standard_normal((4, 3)), device=device, requires_grad=True)
    assert ember.autograd.gradcheck(seeded_fn, (full,))


def test_errors(device):
    x = ember.ones(3, 4, device=device)
    with pytest.raises(ember.EmberError, match=r"q\(=5\) must be"):
        ember.pca_lowrank(x, q=5)
    with pytest.raises(ember.EmberError, match=r"niter\(=-1\)"):
        ember.pca_lowrank(x, niter=-1)
