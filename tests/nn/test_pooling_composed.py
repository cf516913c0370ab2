"""The 3-d pools, LP pools, adaptive max pooling in 1-d and unpooling (nn.pooling.composed)
against PyTorch on the CPU and opencl:0: values, shapes, indices and input gradients for a
random upstream gradient; the Modules' reprs; bad arguments are ember errors."""
from __future__ import annotations

import ember
import ember.nn as nn
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl

RNG = np.random.default_rng(0)
X5 = RNG.standard_normal((2, 3, 7, 8, 9)).astype(np.float32)
X3 = RNG.standard_normal((2, 3, 11)).astype(np.float32)
X4 = (np.abs(RNG.standard_normal((2, 3, 8, 9))) + 0.1).astype(np.float32)
POS5 = np.abs(X5) + 0.1

CASES = {
    "max_pool3d": (X5, lambda F, x: F.max_pool3d(x, 3, 2, 1)),
    "max_pool3d_dilated_ceil": (X5, lambda F, x: F.max_pool3d(x, (2, 3, 2), (2, 1, 3),
                                                              (1, 1, 0), (1, 2, 1), True)),
    "max_pool3d_unbatched": (X5[0], lambda F, x: F.max_pool3d(x, 2)),
    "max_pool3d_indices": (X5, lambda F, x: F.max_pool3d(x, 2, 2, return_indices=True)[0]),
    "avg_pool3d": (X5, lambda F, x: F.avg_pool3d(x, 3, 2, 1)),
    "avg_pool3d_exclude_pad_ceil": (X5, lambda F, x: F.avg_pool3d(x, 3, 2, 1, True, False)),
    "avg_pool3d_divisor": (X5, lambda F, x: F.avg_pool3d(x, (2, 3, 3), 2, (1, 1, 0),
                                                         divisor_override=5)),
    "adaptive_avg_pool3d": (X5, lambda F, x: F.adaptive_avg_pool3d(x, (3, 5, None))),
    "adaptive_max_pool3d": (X5, lambda F, x: F.adaptive_max_pool3d(x, (4, 3, 5))),
    "adaptive_max_pool1d": (X3, lambda F, x: F.adaptive_max_pool1d(x, 4)),
    "lp_pool1d": (X3, lambda F, x: F.lp_pool1d(x, 2.0, 3, 2)),
    "lp_pool2d": (X4, lambda F, x: F.lp_pool2d(x, 3.0, (2, 3), ceil_mode=True)),
    "lp_pool3d": (POS5, lambda F, x: F.lp_pool3d(x, 2.0, 2)),
    "max_unpool1d": (X3, lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 3, 2, return_indices=True),
                                                     3, 2, output_size=(12,))),
    "max_unpool2d": (X4, lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, 2, return_indices=True),
                                                     2, 2, output_size=(8, 9))),
    "max_unpool3d": (X5, lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, 2, return_indices=True),
                                                     2, 2, output_size=(7, 8, 9))),
}
INDICES = {
    "max_pool3d": (X5, lambda F, x: F.max_pool3d(x, (2, 3, 2), 2, (1, 1, 0),
                                                 return_indices=True)[1]),
    "adaptive_max_pool3d": (X5, lambda F, x: F.adaptive_max_pool3d(x, (4, 3, 5), True)[1]),
    "adaptive_max_pool1d": (X3, lambda F, x: F.adaptive_max_pool1d(x, 4, True)[1]),
}


@pytest.mark.parametrize("device", cpu_and_opencl())
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_torch(torch, device, name):
    x, fn = CASES[name]
    te = ember.tensor(x, device=device, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    oe, ot = fn(ember.nn.functional, te), fn(torch.nn.functional, tt)
    assert tuple(oe.shape) == tuple(ot.shape)
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-5, atol=1e-5)
    up = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
    (oe * ember.tensor(up, device=device)).sum().backward()
    (ot * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(te.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(INDICES))
def test_indices_match_torch(torch, name):
    x, fn = INDICES[name]
    np.testing.assert_array_equal(fn(ember.nn.functional, ember.tensor(x)).numpy(),
                                  fn(torch.nn.functional, torch.tensor(x)).numpy())


MODULES = [("MaxPool3d", (3,), dict(stride=2, padding=1)), ("AvgPool3d", (2,), {}),
           ("AdaptiveAvgPool3d", ((2, 3, 4),), {}), ("AdaptiveMaxPool3d", (2,), {}),
           ("AdaptiveMaxPool1d", (3,), {}), ("LPPool1d", (2, 3), {}),
           ("LPPool2d", (2, 2), dict(stride=1)), ("LPPool3d", (1, 2), {}),
           ("MaxUnpool1d", (2,), {}), ("MaxUnpool2d", (2,), dict(stride=1)),
           ("MaxUnpool3d", (2,), {}), ("Fold", ((4, 5), 2), {}), ("Unfold", (2,), {}),
           ("ChannelShuffle", (3,), {}), ("AlphaDropout", (0.2,), {}),
           ("FeatureAlphaDropout", (), {}), ("RReLU", (), {})]


@pytest.mark.parametrize("name,args,kwargs", MODULES, ids=[m[0] for m in MODULES])
def test_module_reprs_and_forward_match_torch(torch, name, args, kwargs):
    e, t = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    if name in ("MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"):
        return
    e.eval(), t.eval()
    x = {"AdaptiveMaxPool1d": X3, "LPPool1d": X3, "LPPool2d": X4, "Fold": RNG.standard_normal(
        (2, 12, 12)).astype(np.float32), "Unfold": X4, "ChannelShuffle": X4,
        "AlphaDropout": X4, "FeatureAlphaDropout": X4, "RReLU": X4}.get(name, POS5)
    np.testing.assert_allclose(e(ember.tensor(x)).numpy(), t(torch.tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_bad_arguments_are_ember_errors():
    F = ember.nn.functional
    with pytest.raises(ember.EmberError, match="max_pool3d: expected a 4-D"):
        F.max_pool3d(ember.ones(2, 3, 4), 2)
    with pytest.raises(ember.EmberError, match="kernel_size must be an int or 3 ints"):
        F.avg_pool3d(ember.ones(1, 1, 4, 4, 4), (2, 2))
    with pytest.raises(ember.EmberError, match="divisor must be not zero"):
        F.avg_pool3d(ember.ones(1, 1, 4, 4, 4), 2, divisor_override=0)
    out, idx = F.max_pool2d(ember.tensor(X4), 2, 2, return_indices=True)
    with pytest.raises(ember.EmberError, match="invalid max index"):
        F.max_unpool2d(out, idx, 2, 2)                   # 8x8 cannot hold 8x9's indices
    with pytest.raises(ember.EmberError, match="invalid output_size"):
        F.max_unpool2d(out, idx, 2, 2, output_size=(20, 20))
    with pytest.raises(ember.EmberError, match="indices of the input's shape"):
        F.max_unpool2d(out, idx[:, :1], 2, 2)
