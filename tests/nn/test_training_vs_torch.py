"""The same MLP and CNN trained for 20 steps in ember and in PyTorch: losses must agree."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from nn_helpers import copy_weights, rng, to_ember, to_numpy, train_side_by_side

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


def test_super_resolution_net_trains_like_torch(torch):
    """The super_resolution example's network in miniature: convolutions into
    PixelShuffle, orthogonal init, MSE, a few Adam steps from the same weights."""
    r = rng("super resolution")

    def net(mod):
        return mod.Sequential(mod.Conv2d(1, 8, 5, 1, 2), mod.ReLU(), mod.Conv2d(8, 4, 3, 1, 1),
                              mod.PixelShuffle(2))

    t_net, e_net = net(torch.nn).double(), net(nn).double()
    torch.nn.init.orthogonal_(t_net[0].weight, torch.nn.init.calculate_gain("relu"))
    copy_weights(t_net, e_net)
    x, y = r.standard_normal((2, 1, 6, 6)), r.standard_normal((2, 1, 12, 12))

    def loss_fn(lib, model, batch):
        return lib.nn.functional.mse_loss(model(lib.tensor(x)), lib.tensor(y))
    losses = train_side_by_side(torch, (t_net, e_net), "Adam", range(3), loss_fn, lr=0.01)
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-10)


@pytest.mark.filterwarnings("ignore:dropout2d")
def test_mnist_rnn_net_trains_like_torch(torch):
    """mnist_rnn's Net in miniature: LSTM(batch_first) -> last step -> BatchNorm1d ->
    Dropout2d on 2-D features -> Linear -> log_softmax, trained with Adadelta."""
    r = rng("mnist rnn")

    def build(mod):
        class Net(mod.Module):
            def __init__(self):
                super().__init__()
                self.rnn = mod.LSTM(input_size=6, hidden_size=8, batch_first=True)
                self.batchnorm = mod.BatchNorm1d(8)
                self.dropout1 = mod.Dropout2d(0.0)
                self.fc = mod.Linear(8, 3)

            def forward(self, input):
                output, _ = self.rnn(input.reshape(-1, 6, 6))
                output = self.dropout1(self.batchnorm(output[:, -1, :]))
                return mod.functional.log_softmax(self.fc(output), dim=1)
        return Net().double()

    t_net, e_net = build(torch.nn), build(nn)
    copy_weights(t_net, e_net)
    x, y = r.standard_normal((3, 5, 1, 6, 6)), r.integers(0, 3, (3, 5))

    def loss_fn(lib, model, batch):
        data, target = batch
        return lib.nn.functional.nll_loss(model(lib.tensor(data)), lib.tensor(target))
    losses = train_side_by_side(torch, (t_net, e_net), "Adadelta", list(zip(x, y)), loss_fn,
                                lr=0.5)
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-10)
    for k, v in t_net.state_dict().items():
        np.testing.assert_allclose(to_numpy(e_net.state_dict()[k]), v.numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=k)
