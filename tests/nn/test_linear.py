"""Linear, Bilinear, Identity, Flatten, Unflatten (nn.linear) against PyTorch."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import check_layer, copy_state, cpu_and_opencl, randn_stream, rng, to_numpy, twin

DEVICES = cpu_and_opencl()
randn = randn_stream(0)


@pytest.mark.parametrize("bias", [True, False])
def test_linear(torch, bias):
    t, e = twin(torch, "Linear", 7, 5, bias=bias)
    check_layer(torch, t, e, randn(4, 3, 7))
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]


def test_flatten_identity_unflatten(torch):
    for name, args in [("Flatten", ()), ("Identity", ()), ("Unflatten", (1, (2, 6)))]:
        t, e = twin(torch, name, *args)
        check_layer(torch, t, e, randn(2, 12, 3) if name != "Flatten" else randn(2, 3, 4))
        assert repr(e) == repr(t)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(torch, device, bias):
    tmod = torch.nn.Bilinear(3, 4, 2, bias=bias).double()
    emod = ember.nn.Bilinear(3, 4, 2, bias=bias, dtype=ember.float64)
    assert repr(emod) == repr(tmod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert tuple(emod.weight.shape) == (2, 3, 4)
    bound = 1 / np.sqrt(3)              # torch's init: U(-1/sqrt(in1), 1/sqrt(in1))
    assert np.abs(to_numpy(emod.weight)).max() <= bound
    emod.to(device)
    copy_state(tmod, emod, device)
    r = rng(f"bilinear{bias}")
    a, b = r.standard_normal((2, 5, 3)), r.standard_normal((2, 5, 4))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    ea, eb = (ember.tensor(v, device=device, requires_grad=True) for v in (a, b))
    tout, eout = tmod(ta, tb), emod(ea, eb)
    np.testing.assert_allclose(to_numpy(eout), to_numpy(tout), rtol=1e-10, atol=1e-12)
    up = r.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(up))
    eout.backward(ember.tensor(up, device=device))
    for e, t in [(ea, ta), (eb, tb), *zip(emod.parameters(), tmod.parameters())]:
        np.testing.assert_allclose(to_numpy(e.grad), to_numpy(t.grad), rtol=1e-10,
                                   atol=1e-12)
    with pytest.raises(ember.ShapeError, match="bilinear: expected inputs"):
        emod(ember.zeros(5, 3, dtype=ember.float64, device=device),
             ember.zeros(5, 3, dtype=ember.float64, device=device))
