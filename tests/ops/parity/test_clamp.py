"""clamp against PyTorch on every device: the one-op form (a float32/float64 tensor and
finite numbers: one kernel on the CPU, the where() form elsewhere) and the general one
(integer tensors, tensor bounds): values with the sign of zero, nan, lo > hi, the result
dtype, and the gradient from a random upstream gradient (0 at nan and outside the bounds,
as torch's clamp_backward)."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [-0.0, 0.0, float("nan"), -1.0, 2.0, 0.5, 1.0, 3.0, -7.5, 0.25]
BOUNDS = [(0, 1), (0, None), (None, 1), (2, 1), (0.5, 0.5), (-0.0, 1), (None, -0.0),
          (-1e30, 1e30), (0.25, 2.0)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_clamp_to_numbers_as_torch(device, dtype, lo, hi):
    g = np.random.default_rng(7).standard_normal(len(X))
    e = ember.tensor(np.array(X), device=device).to(dtype).requires_grad_()
    t = torch.tensor(X, dtype=getattr(torch, dtype), requires_grad=True)
    ye, yt = ember.clamp(e, lo, hi), torch.clamp(t, lo, hi)
    assert ye.dtype.name == dtype
    got, want = ye.detach().cpu().numpy(), yt.detach().numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    ye.backward(ember.tensor(g, device=device).to(dtype))
    yt.backward(torch.tensor(g, dtype=getattr(torch, dtype)))
    np.testing.assert_array_equal(e.grad.cpu().numpy(), t.grad.numpy())


def test_clamp_general_forms_as_torch(device):
    ints = [1, 5, -3, 0, 2]
    for lo, hi in ((0, 2), (0.5, None), (None, -1)):
        got = ember.clamp(ember.tensor(ints, device=device), lo, hi)
        want = torch.clamp(torch.tensor(ints), lo, hi)
        assert got.dtype.name == str(want.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    x = np.array([1.5, 5.0, -2.0])
    got = ember.tensor(x, device=device).clamp(ember.tensor(0.0, device=device),
                                                ember.tensor([1.0, 6.0, 0.5], device=device))
    want = torch.tensor(x).clamp(torch.tensor(0.0), torch.tensor([1.0, 6.0, 0.5]))
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    with pytest.raises(ember.EmberError, match="at least one"):
        ember.clamp(ember.tensor(x, device=device))


def test_clamp_exports_to_onnx_with_nan_kept():
    ort = pytest.importorskip("onnxruntime")
    import os
    import tempfile

    import ember.onnx

    class Clamped(ember.nn.Module):
        def forward(self, x):
            return x.clamp(0.0, 1.0) + x.clamp(min=-0.5)

    x = np.array([[-1.0, 0.5, float("nan"), 2.0]], np.float32)
    path = os.path.join(tempfile.mkdtemp(), "clamp.onnx")
    ember.onnx.export(Clamped(), (ember.tensor(x),), path)
    session = ort.InferenceSession(path)
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    np.testing.assert_array_equal(got, Clamped()(ember.tensor(x)).numpy())
