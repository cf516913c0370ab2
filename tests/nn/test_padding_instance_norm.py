"""Padding layers (F.pad's reflect/replicate/circular modes) and instance norm against
PyTorch: forward, gradients with a random upstream gradient, state_dict keys, on cpu and
opencl:0 (fast_neural_style's layers)."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.testing import devices_under_test
from nn_helpers import check_layer, rng

DEVICES = ["cpu"] + [d for d, why in devices_under_test() if why is None and
                     d.startswith("opencl")][:1]


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


@pytest.mark.parametrize("device", DEVICES)
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


@pytest.mark.parametrize("name,shape,kw", [
    ("InstanceNorm1d", (3, 4, 7), {}), ("InstanceNorm2d", (2, 3, 4, 5), {"affine": True}),
    ("InstanceNorm2d", (3, 4, 5), {}), ("InstanceNorm3d", (2, 2, 3, 3, 4), {"affine": True}),
    ("InstanceNorm2d", (2, 3, 4, 5), {"track_running_stats": True, "momentum": 0.3}),
])
def test_instance_norm_matches_torch(torch, name, shape, kw):
    r = rng(name + str(kw))
    channels = shape[1] if len(shape) > {"InstanceNorm1d": 2, "InstanceNorm2d": 3,
                                          "InstanceNorm3d": 4}[name] else shape[0]
    tmod = getattr(torch.nn, name)(channels, **kw).double()
    emod = getattr(ember.nn, name)(channels, **kw)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    for _ in range(2):                                 # running statistics move each step
        check_layer(torch, tmod, emod, r.standard_normal(shape), rtol=1e-6, atol=1e-8)
    if kw.get("track_running_stats"):
        for k, v in tmod.state_dict().items():
            np.testing.assert_allclose(emod.state_dict()[k].numpy(), v.numpy(), rtol=1e-6)
        tmod.eval()
        emod.eval()
        check_layer(torch, tmod, emod, r.standard_normal(shape), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", DEVICES)
def test_instance_norm_on_every_device(device):
    x = ember.randn(2, 3, 4, 4, device=device, requires_grad=True)
    layer = ember.nn.InstanceNorm2d(3, affine=True).to(device)
    out = layer(x)
    flat = out.detach().numpy().reshape(2, 3, -1)
    np.testing.assert_allclose(flat.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(flat.var(-1), 1, rtol=1e-3)
    out.sum().backward()
    assert x.grad.shape == x.shape and layer.weight.grad is not None
