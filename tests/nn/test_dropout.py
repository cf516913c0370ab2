"""Dropout layers and their functional forms (nn.dropout): statistics, whole-channel masks,
PyTorch's handling of other input shapes, seeding."""
from __future__ import annotations

import zlib

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import to_numpy


def test_dropout_statistics_and_eval():
    ember.manual_seed(3)
    drop = nn.Dropout(0.25)
    x = ember.ones(200, 200, requires_grad=True)
    y = drop(x)
    kept = to_numpy(y) != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(to_numpy(y)[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad) != 0, kept)
    drop.eval()
    assert drop(x) is x
    ember.manual_seed(3)
    again = nn.Dropout(0.25)(ember.ones(200, 200))
    np.testing.assert_array_equal(to_numpy(again), to_numpy(y))   # seeded: reproducible
    channels = to_numpy(nn.Dropout2d(0.5)(ember.ones(4, 50, 3, 3)))
    assert np.all(channels.reshape(4, 50, 9).std(-1) == 0)        # whole channels


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


def test_a_replaced_f_dropout_reaches_the_layers(monkeypatch):
    # the programs harness replays torch's dropout masks by replacing F.dropout; the layers
    # (and scaled_dot_product_attention's dropout) must call through it, as torch's do
    calls = []

    def dropout(input, p=0.5, training=True, inplace=False):
        calls.append(p)
        return input
    monkeypatch.setattr(F, "dropout", dropout)
    x = ember.ones(2, 3, 4)
    nn.Dropout(0.3)(x)
    nn.MultiheadAttention(4, 2, dropout=0.2)(x, x, x)
    F.scaled_dot_product_attention(x, x, x, dropout_p=0.1)
    nn.LSTM(4, 3, num_layers=2, dropout=0.4)(x)
    assert calls == [0.3, 0.2, 0.1, 0.4]
