"""Padding layers (F.pad's constant, reflect, replicate and circular modes; nn.padding)
against PyTorch: forward, gradients with a random upstream gradient, on cpu and opencl:0."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import check_layer, cpu_and_opencl, rng


@pytest.mark.parametrize("name,args,shape", [
    ("ReflectionPad1d", (2,), (2, 3, 5)), ("ReflectionPad2d", ((1, 2, 3, 1),), (1, 2, 5, 6)),
    ("ReflectionPad3d", (1,), (1, 1, 3, 3, 4)), ("ReplicationPad1d", ((3, 1),), (2, 3, 4)),
    ("ReplicationPad2d", (2,), (1, 2, 3, 4)), ("ReplicationPad3d", (1,), (1, 1, 2, 3, 3)),
    ("CircularPad1d", (2,), (2, 3, 5)), ("CircularPad2d", ((1, 0, 2, 1),), (1, 2, 3, 4)),
    ("ZeroPad2d", ((1, 2, 0, 1),), (1, 2, 3, 4)), ("ConstantPad1d", (2, 3.5), (2, 3, 4)),
    ("ConstantPad2d", ((1, 1, 2, 0), -1.0), (3, 4, 5)),
])
def test_padding_layers_match_torch(torch, name, args, shape):
    r = rng(name)
    check_layer(torch, getattr(torch.nn, name)(*args), getattr(ember.nn, name)(*args),
                r.standard_normal(shape))
    assert repr(getattr(ember.nn, name)(*args)).startswith(name)


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_pad_modes_on_every_device(torch, device):
    r = rng("pad" + device)
    for mode in ("reflect", "replicate", "circular"):
        a = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
        t = torch.tensor(a, requires_grad=True)
        out_t = torch.nn.functional.pad(t, (2, 1, 1, 3), mode=mode)
        g = r.standard_normal(tuple(out_t.shape)).astype(np.float32)
        out_t.backward(torch.tensor(g))
        e = ember.tensor(a, device=device, requires_grad=True)
        out_e = ember.nn.functional.pad(e, (2, 1, 1, 3), mode=mode)
        out_e.backward(ember.tensor(g, device=device))
        np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ember.EmberError, match="reflect padding .* smaller than"):
        ember.nn.functional.pad(ember.ones(1, 1, 3, device=device), (3, 0), mode="reflect")
    with pytest.raises(ember.EmberError, match="mode 'wrap'"):
        ember.nn.functional.pad(ember.ones(1, 1, 3, device=device), (1, 1), mode="wrap")
