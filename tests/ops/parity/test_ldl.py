"""linalg.ldl_factor(_ex) and linalg.ldl_solve against PyTorch on cpu and opencl:0: 1x1 and
2x2 pivot blocks in one batch, complex symmetric and hermitian matrices, a singular one
(info), broadcast batches, the errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")

L, TL = ember.linalg, torch.linalg


@pytest.mark.parametrize("kind", ["real", "symmetric", "hermitian"])
def test_factor_and_solve_match_lapack(device, kind):
    rng = seeded(f"ldl_{kind}")
    a = rng.standard_normal((6, 5, 5))
    if kind != "real":
        a = a + 1j * rng.standard_normal(a.shape)
    hermitian = kind == "hermitian"
    a = a + (np.swapaxes(a, -1, -2).conj() if hermitian else np.swapaxes(a, -1, -2))
    a[0] = np.eye(5)[::-1] * 2             # 2x2 blocks: a zero diagonal
    e = L.ldl_factor_ex(ember.tensor(a, device=device), hermitian=hermitian)
    t = TL.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    assert (e.pivots.numpy() < 0).any() and (e.pivots.numpy() > 0).any()
    b = rng.standard_normal((2, 1, 5, 3)).astype(a.dtype)      # broadcast against (6,)
    got = L.ldl_solve(e.LD, e.pivots, ember.tensor(b, device=device), hermitian=hermitian)
    # torch 2.13 crashes (segfault) broadcasting LD against B: given expanded by hand
    want = TL.ldl_solve(t.LD.expand(2, 6, 5, 5).contiguous(),
                        t.pivots.expand(2, 6, 5).contiguous(),
                        torch.tensor(b).expand(2, 6, 5, 3).contiguous(), hermitian=hermitian)
    assert tuple(got.shape) == tuple(want.shape) == (2, 6, 5, 3)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-11)


def test_singular_info_and_errors(device):
    a = np.zeros((2, 3, 3))
    a[1] = np.diag([1.0, 0.0, 2.0])
    e = L.ldl_factor_ex(ember.tensor(a, device=device))
    t = TL.ldl_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    with pytest.raises(ember.EmberError, match="ldl_factor_ex"):
        L.ldl_factor(ember.tensor(a, device=device))
    with pytest.raises(ember.EmberError, match="check_errors=False"):
        L.ldl_factor_ex(ember.tensor(a, device=device), check_errors=True)
    with pytest.raises(ember.EmberError, match="square"):
        L.ldl_factor(ember.ones(2, 3, device=device))
    ld, piv = L.ldl_factor(ember.eye(3, device=device))
    with pytest.raises(ember.EmberError, match="int32"):
        L.ldl_solve(ld, piv.long(), ember.ones(3, 1, device=device))
    with pytest.raises(ember.EmberError, match=r"\(\*, 3, k\)"):
        L.ldl_solve(ld, piv, ember.ones(3, device=device))
    with pytest.raises(ember.EmberError, match="one dtype"):
        L.ldl_solve(ld, piv, ember.ones(3, 1, dtype=ember.float64, device=device))


@pytest.mark.parametrize("shape,kind", [((70, 70), "real"), ((3, 12, 12), "hermitian"),
                                        ((12, 12), "symmetric")])
def test_larger_matrices(device, shape, kind):
    """Past LAPACK's block size (sytrf's lasyf), and array_api's unblocked sytf2 itself."""
    from ember.backends import array_api
    rng = seeded(f"ldl_large{shape}{kind}")
    a = rng.standard_normal(shape)
    if kind != "real":
        a = a + 1j * rng.standard_normal(shape)
    hermitian = kind == "hermitian"
    a = a + (np.swapaxes(a, -1, -2).conj() if hermitian else np.swapaxes(a, -1, -2))
    t = TL.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    e = L.ldl_factor_ex(ember.tensor(a, device=device), hermitian=hermitian)
    n = shape[-1]
    packed = array_api._ldl(np, a, hermitian)
    for ld, pivots in ((e.LD.numpy(), e.pivots.numpy()),
                       (packed[..., :n, :n], packed[..., n, :n].real.astype(np.int32))):
        np.testing.assert_array_equal(pivots, t.pivots.numpy())
        np.testing.assert_allclose(ld, t.LD.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    b = rng.standard_normal((*shape[:-1], 2)).astype(a.dtype)
    got = L.ldl_solve(e.LD, e.pivots, ember.tensor(b, device=device), hermitian=hermitian)
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(a, b), rtol=1e-8, atol=1e-10)
