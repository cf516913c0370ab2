"""The same MLP and CNN trained for 20 steps in ember and in PyTorch: losses must agree."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from nn_helpers import copy_weights, to_ember, to_numpy

STEPS = 20


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(20, 32), lib.nn.ReLU(), lib.nn.Linear(32, 32),
                             lib.nn.Tanh(), lib.nn.Linear(32, 5))


def _cnn(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 6, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                             lib.nn.Linear(6 * 4 * 4, 10))


def _data(kind, rng):
    if kind == "mlp":
        return rng.standard_normal((64, 20)), rng.integers(0, 5, 64)
    return rng.standard_normal((32, 1, 8, 8)), rng.integers(0, 10, 32)


OPTIMIZERS = {
    "sgd_momentum": (lambda mod, ps: mod.SGD(ps, lr=0.05, momentum=0.9)),
    "sgd_nesterov_wd": (lambda mod, ps: mod.SGD(ps, lr=0.05, momentum=0.9, nesterov=True,
                                                weight_decay=1e-3)),
    "adam": (lambda mod, ps: mod.Adam(ps, lr=1e-2)),
    "adamw_amsgrad": (lambda mod, ps: mod.AdamW(ps, lr=1e-2, amsgrad=True)),
}


def _train(lib, model, opt, x, y, loss_fn):
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return np.array(losses)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_matches_torch(torch, kind, opt_name, dtype):
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    build = _mlp if kind == "mlp" else _cnn
    tmodel = build(torch).to(getattr(torch, dtype))
    emodel = build(ember).to(getattr(ember, dtype))
    copy_weights(tmodel, emodel)
    xs, ys = _data(kind, rng)
    tx, ty = torch.tensor(xs, dtype=getattr(torch, dtype)), torch.tensor(ys)
    ex, ey = to_ember(tx), to_ember(ty)
    make = OPTIMIZERS[opt_name]
    t_losses = _train(torch, tmodel, make(torch.optim, tmodel.parameters()), tx, ty,
                      torch.nn.CrossEntropyLoss())
    e_losses = _train(ember, emodel, make(optim, emodel.parameters()), ex, ey,
                      nn.CrossEntropyLoss())
    assert t_losses[-1] < t_losses[0]           # the run actually trains
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-4)
    for (name, p), (_, q) in zip(emodel.named_parameters(), tmodel.named_parameters()):
        np.testing.assert_allclose(to_numpy(p), to_numpy(q), rtol=1e-3, atol=1e-4,
                                   err_msg=name)
