"""The 2-norm (linalg.vector_norm ord 2, Tensor.norm()) is one declared op: on every device
its values and gradients (from a random upstream gradient; 0 at a zero vector, as torch's;
second derivatives too) are torch's, and the CPU's kernel gives its decomposition's values
bit for bit."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.ops._util import norm_dims
from ember.ops.reduce import _l2_decompose

torch = pytest.importorskip("torch")

CASES = [((), None), ((5,), None), ((4, 6), None), ((4, 6), 1), ((4, 6), (0,)),
         ((3, 4, 5), (0, 2)), ((0, 3), 1), ((4, 6), -1), ((2, 3, 4), (-1, 0))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", CASES)
def test_l2_norm_as_torch(device, dtype, shape, dim):
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape).astype(dtype)
    if x.size:
        x.reshape(-1)[:2] = 0                   # a zero row where a row is 2 long
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 0}
    for keepdim in (False, True):
        e = ember.tensor(x, device=device, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        ye = ember.linalg.vector_norm(e, 2, dim, keepdim)
        yt = torch.linalg.vector_norm(t, 2, dim, keepdim)
        assert ye.shape == tuple(yt.shape) and ye.dtype.name == dtype
        np.testing.assert_allclose(ye.detach().cpu().numpy(), yt.detach().numpy(), **tol)
        if device == "cpu":
            axes = norm_dims(dim, len(shape), "test")
            want = _l2_decompose(e.detach(), axes=axes, keepdims=keepdim)
            np.testing.assert_array_equal(ye.detach().numpy(), want.numpy())
        g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
        (ge,) = ember.autograd.grad(ye, e, ember.tensor(g, device=device), create_graph=True)
        (gt,) = torch.autograd.grad(yt, t, torch.tensor(g), create_graph=True)
        np.testing.assert_allclose(ge.detach().cpu().numpy(), gt.detach().numpy(), **tol)
        if x.size and np.all(yt.detach().numpy() != 0):   # (torch: nan at a zero norm)
            (gge,) = ember.autograd.grad((ge * ge).sum(), e)
            (ggt,) = torch.autograd.grad((gt * gt).sum(), t)
            np.testing.assert_allclose(gge.cpu().numpy(), ggt.numpy(), rtol=1e-4, atol=1e-5)


def test_zero_vector_has_zero_gradient(device):
    z = ember.zeros(3, device=device, requires_grad=True)
    z.norm().backward()
    np.testing.assert_array_equal(z.grad.cpu().numpy(), np.zeros(3))
