"""Adafactor against torch.optim.Adafactor, step for step from the same weights: factored
second moments for matrices and higher tensors (the last two dims), a full one for vectors,
every option; the state dict's keys; bad arguments."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import device_params

torch = pytest.importorskip("torch")

SHAPES = [(5, 4), (3,), (2, 3, 4)]
OPTIONS = [{}, {"lr": 0.05, "weight_decay": 0.1}, {"maximize": True, "d": 2.0,
                                                    "eps": (1e-30, 1e-3)},
           {"beta2_decay": -0.5, "eps": (None, 1e-2)}]


@pytest.mark.parametrize("device", ["cpu", *device_params()])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_adafactor_steps_as_torch(device, options):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    ep = [ember.nn.Parameter(ember.tensor(a, device=device)) for a in init]
    topt = torch.optim.Adafactor(tp, **options)
    eopt = ember.optim.Adafactor(ep, **options)
    for _ in range(6):
        grads = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
        for p, g in zip(tp, grads):
            p.grad = torch.tensor(g)
        for p, g in zip(ep, grads):
            p.grad = ember.tensor(g, device=device)
        topt.step()
        eopt.step()
    for a, b in zip(tp, ep):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    for i in range(len(SHAPES)):
        assert sorted(eopt.state_dict()["state"][i]) == sorted(topt.state_dict()["state"][i])


def test_adafactor_refuses_what_torch_refuses():
    p = [ember.nn.Parameter(ember.zeros(2))]
    for bad in ({"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)}, {"d": 0.5},
                {"weight_decay": -0.1}):
        with pytest.raises(ValueError):
            ember.optim.Adafactor(p, **bad)
    with pytest.raises(AttributeError, match="foreach"):
        ember.optim.Adafactor(p, foreach=True)
