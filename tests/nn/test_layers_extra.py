"""PixelShuffle, Upsample/interpolate, Dropout1d/2d/3d, share_memory against PyTorch."""
from __future__ import annotations

import zlib

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import check_layer, copy_weights, device_params, rng, to_numpy, train_side_by_side


@pytest.mark.parametrize("shape,factor", [((2, 8, 3, 2), 2), ((2, 1, 9, 2, 3), 3),
                                          ((4, 2, 2), 2)])
def test_pixel_shuffle_matches_torch(torch, shape, factor):
    r = rng(f"shuffle{shape}")
    t, e = torch.nn.PixelShuffle(factor), nn.PixelShuffle(factor)
    assert repr(e) == repr(t)
    check_layer(torch, t, e, r.standard_normal(shape))
    big = tuple(shape[:-3]) + (shape[-3] // factor ** 2, shape[-2] * factor,
                               shape[-1] * factor)
    tu, eu = torch.nn.PixelUnshuffle(factor), nn.PixelUnshuffle(factor)
    assert repr(eu) == repr(tu)
    check_layer(torch, tu, eu, r.standard_normal(big))
    x = ember.tensor(r.standard_normal(shape))
    np.testing.assert_array_equal(to_numpy(F.pixel_unshuffle(F.pixel_shuffle(x, factor),
                                                             factor)), to_numpy(x))


def test_pixel_shuffle_errors():
    with pytest.raises(ember.ShapeError, match="divisible by the square"):
        F.pixel_shuffle(ember.zeros(1, 6, 2, 2), 2)
    with pytest.raises(ember.ShapeError, match="at least 3 dimensions"):
        nn.PixelShuffle(2)(ember.zeros(4, 4))
    with pytest.raises(ember.ShapeError, match="divisible by downscale_factor"):
        F.pixel_unshuffle(ember.zeros(1, 1, 3, 4), 2)
    with pytest.raises(ember.EmberError, match="positive int"):
        F.pixel_shuffle(ember.zeros(1, 4, 2, 2), 0)


UPSAMPLE = [
    ((2, 3, 5, 7), dict(scale_factor=2)),
    ((2, 3, 5, 7), dict(size=(8, 3))),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=(1.5, 0.6), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(3, 11), mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear")),
    ((1, 2, 4, 3, 2), dict(scale_factor=(2, 1, 3))),
]


@pytest.mark.parametrize("shape,kwargs", UPSAMPLE,
                         ids=[",".join(f"{k}={v}" for k, v in c.items()) for _, c in UPSAMPLE])
def test_upsample_matches_torch(torch, shape, kwargs):
    t, e = torch.nn.Upsample(**kwargs), nn.Upsample(**kwargs)
    assert repr(e) == repr(t)
    check_layer(torch, t, e, rng(f"upsample{kwargs}").standard_normal(shape))


def test_upsampling_modules_and_errors(torch):
    x = rng("upsampling").standard_normal((1, 2, 3, 4))
    for name in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
        check_layer(torch, getattr(torch.nn, name)(scale_factor=2),
                    getattr(nn, name)(scale_factor=2), x)
    with pytest.raises(ember.EmberError, match="'bicubic' is not in ember yet"):
        F.interpolate(ember.zeros(1, 1, 2, 2), scale_factor=2, mode="bicubic")
    with pytest.raises(ember.EmberError, match="exactly one of size and scale_factor"):
        F.interpolate(ember.zeros(1, 1, 2, 2))
    with pytest.raises(ember.EmberError, match="not meaningful with an explicit size"):
        F.interpolate(ember.zeros(1, 1, 2, 2), size=3, recompute_scale_factor=True)
    with pytest.raises(ember.ShapeError, match="needs 4-D input"):
        F.interpolate(ember.zeros(1, 1, 2), scale_factor=2, mode="bilinear")


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


def _kept_pattern(out, x, p):
    """The (sample, channel)-wise keep pattern of a channel dropout output."""
    out, x = to_numpy(out), to_numpy(x)
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / (1 - p), rtol=1e-6)
    return kept


@pytest.mark.parametrize("name,shape,channel_axes", [
    ("Dropout1d", (8, 16, 5), 2), ("Dropout1d", (16, 5), 1),
    ("Dropout2d", (8, 16, 3, 3), 2),     # 3-D input: (N, C, L) with a warning, below
    ("Dropout3d", (4, 8, 2, 2, 2), 2), ("Dropout3d", (8, 2, 2, 2), 1)])
def test_channel_dropout_zeroes_whole_channels(name, shape, channel_axes):
    ember.manual_seed(zlib.crc32(name.encode()))
    layer = getattr(nn, name)(0.5)
    x = ember.rand(*shape) + 0.5                    # no zeros of its own
    kept = _kept_pattern(layer(x), x, 0.5)
    per_channel = kept.reshape(kept.shape[:channel_axes] + (-1,))
    assert (per_channel.all(-1) | ~per_channel.any(-1)).all(), "partly dropped channel"
    assert 0.2 < per_channel.all(-1).mean() < 0.8
    layer.eval()
    assert layer(x) is x


def test_dropout2d_on_3d_and_2d_inputs_warns_and_acts_as_torch(torch):
    """mnist_rnn applies Dropout2d to (N, C) features; PyTorch warns and drops elements.
    On (N, C, L) it warns and drops whole (sample, channel) rows."""
    ember.manual_seed(1)
    x = ember.rand(6, 10, 4) + 0.5
    with pytest.warns(ember.errors.EmberWarning, match="3D input to dropout2d"):
        kept = _kept_pattern(nn.Dropout2d(0.5)(x), x, 0.5)
    assert (kept.all(-1) | ~kept.any(-1)).all()
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        torch.nn.Dropout2d(0.5)(torch.rand(6, 10, 4))
    x2 = ember.rand(64, 32) + 0.5
    with pytest.warns(ember.errors.EmberWarning, match="2-D input to dropout2d"):
        kept = _kept_pattern(nn.Dropout2d(0.5)(x2), x2, 0.5)
    assert 0.3 < kept.mean() < 0.7 and not (kept.all(1) | ~kept.any(1)).all()
    with pytest.warns(UserWarning, match="2-D input to dropout2d"):
        torch.nn.Dropout2d(0.5)(torch.rand(64, 32))
    with pytest.raises(ember.ShapeError, match="Expected 2D or 3D input"):
        nn.Dropout1d()(ember.zeros(1, 2, 3, 4))
    with pytest.raises(ember.EmberError, match="between 0 and 1"):
        F.dropout3d(ember.zeros(1, 2, 2, 2, 2), p=2.0)


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


def test_share_memory_returns_the_module():
    model = nn.Sequential(nn.Linear(2, 2))
    weight = model[0].weight
    assert model.share_memory() is model and model[0].weight is weight


@pytest.mark.parametrize("device", device_params())
def test_on_device(device):
    r = rng("extra layers device")
    x = r.standard_normal((2, 8, 3, 3)).astype(np.float32)
    cpu = F.pixel_shuffle(ember.tensor(x), 2)
    dev_in = ember.tensor(x, device=device, requires_grad=True)
    dev = F.pixel_shuffle(dev_in, 2)
    np.testing.assert_array_equal(to_numpy(dev.to("cpu")), to_numpy(cpu))
    dev.sum().backward()
    np.testing.assert_array_equal(to_numpy(dev_in.grad.to("cpu")), np.ones_like(x))
    up = F.interpolate(dev_in, scale_factor=2, mode="bilinear")
    want = F.interpolate(ember.tensor(x), scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(to_numpy(up.detach().to("cpu")), to_numpy(want), rtol=1e-5,
                               atol=1e-6)
    ember.manual_seed(2)
    a = F.dropout2d(ember.tensor(x) + 5.0, 0.5)
    ember.manual_seed(2)
    b = F.dropout2d(ember.tensor(x, device=device) + 5.0, 0.5)   # the same host stream
    np.testing.assert_allclose(to_numpy(b.to("cpu")), to_numpy(a), rtol=1e-6)
