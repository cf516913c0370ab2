"""var and std of float32/float64 tensors are one declared op (var): on every device the
values and gradients (from a random upstream gradient; torch's rule also where no degrees
of freedom are left) are torch's, second derivatives too, and the CPU's kernel gives its
decomposition's values bit for bit."""
from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ops._util import norm_dims
from ember.ops.reduce import _var_decompose

torch = pytest.importorskip("torch")

CASES = [((), None), ((5,), None), ((4, 6), None), ((4, 6), 1), ((4, 6), 0),
         ((3, 4, 5), (0, 2)), ((1, 3), 0), ((4, 6), -1), ((2,), None)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", CASES)
def test_var_as_torch(device, dtype, shape, dim):
    rng = np.random.default_rng(10)
    x = rng.standard_normal(shape).astype(dtype)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-14}
    for correction in (0, 1, 2, 0.5):
        for keepdim in (False, True):
            e = ember.tensor(x, device=device, requires_grad=True)
            t = torch.tensor(x, requires_grad=True)
            kw = {"correction": correction, "keepdim": keepdim}
            ye = e.var(**kw) if dim is None else e.var(dim, **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")             # torch: no degrees of freedom
                yt = t.var(**kw) if dim is None else t.var(dim, **kw)
            assert ye.shape == tuple(yt.shape) and ye.dtype.name == dtype
            np.testing.assert_allclose(ye.detach().cpu().numpy(), yt.detach().numpy(),
                                       equal_nan=True, **tol)
            if device == "cpu":
                want = _var_decompose(e.detach(), axes=norm_dims(dim, len(shape), "test"),
                                      keepdims=keepdim, correction=float(correction))
                np.testing.assert_array_equal(ye.detach().numpy(), want.numpy())
            g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
            (ge,) = ember.autograd.grad(ye, e, ember.tensor(g, device=device))
            (gt,) = torch.autograd.grad(yt, t, torch.tensor(g))
            np.testing.assert_allclose(ge.cpu().numpy(), gt.numpy(), equal_nan=True, **tol)


def test_std_second_derivatives_as_torch(device):
    x = np.random.default_rng(11).standard_normal((4, 5))
    e = ember.tensor(x, device=device, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    (ge,) = ember.autograd.grad(e.std(1).sum(), e, create_graph=True)
    (gt,) = torch.autograd.grad(t.std(1).sum(), t, create_graph=True)
    (gge,) = ember.autograd.grad((ge * ge).sum(), e)
    (ggt,) = torch.autograd.grad((gt * gt).sum(), t)
    np.testing.assert_allclose(gge.cpu().numpy(), ggt.numpy(), rtol=1e-8, atol=1e-10)


def test_var_exports_to_onnx_with_dynamic_sizes():
    ort = pytest.importorskip("onnxruntime")
    import os
    import tempfile

    import ember.onnx

    class Spread(ember.nn.Module):
        def forward(self, x):
            return x.var(1, keepdim=True) + x.std() + x.var(0, correction=0)[:1]

    x = np.random.default_rng(12).standard_normal((3, 4)).astype(np.float32)
    path = os.path.join(tempfile.mkdtemp(), "var.onnx")
    ember.onnx.export(Spread(), (ember.tensor(x),), path, input_names=["x"],
                      dynamic_axes={"x": {0: "batch"}})
    session = ort.InferenceSession(path)
    for rows in (3, 6):
        x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
        np.testing.assert_allclose(session.run(None, {"x": x})[0],
                                   Spread()(ember.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
