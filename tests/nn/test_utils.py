"""nn.utils.weight_norm and spectral_norm against PyTorch, on the CPU and opencl:0."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import copy_state, cpu_and_opencl, forward_backward, rng, to_numpy

DEVICES = cpu_and_opencl()


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch, device, dim):
    torch.manual_seed(0)
    tmod = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    emod = ember.nn.utils.weight_norm(ember.nn.Linear(4, 3, dtype=ember.float64), dim=dim)
    emod.to(device)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert tuple(emod.weight_g.shape) == tuple(tmod.weight_g.shape)
    copy_state(tmod, emod, device)
    x = rng(f"wn{dim}").standard_normal((5, 4))
    forward_backward(torch, tmod, emod, x, device, f"weight_norm{dim}")
    torch.nn.utils.remove_weight_norm(tmod)
    ember.nn.utils.remove_weight_norm(emod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    np.testing.assert_allclose(to_numpy(emod.weight), to_numpy(tmod.weight), rtol=1e-12)
    with pytest.raises(ember.EmberError, match="weight_norm of 'weight' not found"):
        ember.nn.utils.remove_weight_norm(emod)


@pytest.mark.parametrize("device", DEVICES)
def test_spectral_norm_matches_torch(torch, device):
    torch.manual_seed(1)
    tmod = torch.nn.utils.spectral_norm(torch.nn.Conv2d(2, 3, 2).double(),
                                        n_power_iterations=2)
    emod = ember.nn.utils.spectral_norm(ember.nn.Conv2d(2, 3, 2, dtype=ember.float64),
                                        n_power_iterations=2)
    emod.to(device)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert [k for k, _ in emod.named_buffers()] == ["weight_u", "weight_v"]
    copy_state(tmod, emod, device)
    x = rng("sn").standard_normal((2, 2, 4, 4))
    for step in range(2):               # training: the power iteration updates u and v
        forward_backward(torch, tmod, emod, x, device, f"spectral_norm{step}")
        np.testing.assert_allclose(to_numpy(emod.weight_u), to_numpy(tmod.weight_u),
                                   rtol=1e-9, atol=1e-12)
        tmod.zero_grad()
        emod.zero_grad()
    tmod.eval()
    emod.eval()
    u = to_numpy(emod.weight_u).copy()
    forward_backward(torch, tmod, emod, x, device, "spectral_norm eval")
    np.testing.assert_array_equal(to_numpy(emod.weight_u), u)      # eval: no iteration
    torch.nn.utils.remove_spectral_norm(tmod)
    ember.nn.utils.remove_spectral_norm(emod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    np.testing.assert_allclose(to_numpy(emod.weight), to_numpy(tmod.weight), rtol=1e-9)
