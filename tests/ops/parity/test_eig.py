"""linalg.eig and linalg.eigvals against PyTorch on cpu and opencl:0: what torch's OpInfo
samples miss (real matrices with complex eigenvalues, double precision, complex input,
gradients of both factors, the errors)."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")

L, TL = ember.linalg, torch.linalg


@pytest.mark.parametrize("kind", ["real", "rotation", "complex"])
def test_eig_matches_torch(device, kind):
    rng = seeded(f"eig_{kind}")
    a = rng.standard_normal((2, 4, 4))
    if kind == "rotation":          # real input, complex conjugate eigenvalue pairs
        a = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    if kind == "complex":
        a = a + 1j * rng.standard_normal(a.shape)
    w, v = L.eig(ember.tensor(a, device=device))
    tw, tv = TL.eig(torch.tensor(a))
    assert w.dtype == ember.complex128 and v.dtype == ember.complex128
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-10, atol=1e-12)
    # each eigenvector is unit-norm with its largest component real (geev); which of two
    # equal-sized components that is, and its sign, differ between LAPACK builds (NumPy's,
    # torch's MKL), so the columns are compared up to a phase
    phase = (v.numpy().conj() * tv.numpy()).sum(-2, keepdims=True)
    np.testing.assert_allclose(np.abs(phase), 1.0, rtol=1e-8)
    np.testing.assert_allclose(v.numpy() * phase, tv.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(L.eigvals(ember.tensor(a, device=device)).numpy(),
                               tw.numpy(), rtol=1e-10, atol=1e-12)
    assert L.eig(ember.tensor(a, device=device))._fields == ("eigenvalues", "eigenvectors")


def test_eig_float32_is_complex64(device):
    a = seeded("eig32").standard_normal((3, 3)).astype(np.float32)
    w, v = L.eig(ember.tensor(a, device=device))
    assert w.dtype == ember.complex64 and v.dtype == ember.complex64


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_gradients_match_torch(device, kind):
    rng = seeded(f"eig_grad_{kind}")
    a = rng.standard_normal((2, 4, 4))
    if kind == "complex":
        a = a + 1j * rng.standard_normal(a.shape)
    up_w = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    up_v = rng.standard_normal((2, 4, 4))

    def loss(lib, x, w_up, v_up):
        w, v = lib.linalg.eig(x)
        # |V| is independent of each eigenvector's phase (torch refuses a loss that is not)
        return (w * w_up).real.sum() + (v.abs() * v_up).sum() + \
            (lib.linalg.eigvals(x) * w_up).imag.sum()

    e = ember.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    (ge,) = ember.autograd.grad(loss(ember, e, ember.tensor(up_w, device=device),
                                     ember.tensor(up_v, device=device)), e)
    (gt,) = torch.autograd.grad(loss(torch, t, torch.tensor(up_w), torch.tensor(up_v)), t)
    assert ge.dtype == e.dtype
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)


def test_errors(device):
    with pytest.raises(ember.EmberError, match="square"):
        L.eig(ember.ones(2, 3, device=device))
    with pytest.raises(ember.EmberError, match="floating point"):
        L.eigvals(ember.ones(2, 2, dtype=ember.int64, device=device))
    with pytest.raises(ember.EmberError, match="inf or nan"):
        L.eig(ember.tensor([[1.0, float("nan")], [0.0, 1.0]], device=device))
