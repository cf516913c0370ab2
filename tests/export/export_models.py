"""The model families every exporter test runs: MLP, CNN, embedding + LSTM/GRU, a transformer
block; each with example inputs, its dynamic dimensions and inputs at other sizes."""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import ember
import ember.nn as nn
import numpy as np
from ember.testing import devices_under_test

DEVICES = ["cpu"] + [d for d, why in devices_under_test() if why is None and
                     d.startswith("opencl")][:1]


def rng(name: str):
    return np.random.default_rng(zlib.crc32(name.encode()))


class Language(nn.Module):
    """Embedding -> 2-layer LSTM or GRU -> linear, as the word language model."""

    def __init__(self, cell):
        super().__init__()
        self.embed = nn.Embedding(20, 6)
        self.rnn = cell(6, 8, num_layers=2, batch_first=True)
        self.head = nn.Linear(8, 20)

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


class Block(nn.Module):
    """A transformer encoder block (gelu, layer norm, a causal mask), pooled over time."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1,
                                                activation="gelu", batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x, mask):
        h = self.layer(self.embed(x), src_mask=mask)
        return self.head(h.mean(1)), h


def causal(n: int):
    return ember.tensor(np.triu(np.full((n, n), -np.inf, np.float32), 1))


@dataclass
class Family:
    name: str
    model: object
    args: tuple                 # example inputs (cpu)
    dynamic: dict               # ember.export's dynamic_shapes
    axes: dict                  # torch.onnx's dynamic_axes
    other: tuple                # inputs at other sizes of the dynamic dimensions

    def on(self, device):
        self.model.to(device)
        return (tuple(a.to(device) for a in self.args),
                tuple(a.to(device) for a in self.other))


def _floats(name, *shape):
    return ember.tensor(rng(name).standard_normal(shape).astype(np.float32))


def _tokens(name, *shape):
    return ember.tensor(rng(name).integers(0, 20, shape))


def families() -> list[Family]:
    ember.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                        nn.Linear(32, 4))
    cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, stride=2), nn.ReLU(),
                        nn.Flatten(), nn.Linear(6 * 1 * 1, 5))
    cnn[1].running_mean.copy_(ember.tensor(rng("bn").standard_normal(4).astype(np.float32)))
    cnn[1].running_var.copy_(ember.tensor(rng("bv").uniform(0.5, 2, 4).astype(np.float32)))
    batch = {0: "batch"}
    out = [
        Family("mlp", mlp, (_floats("mlp", 3, 12),), {"input": batch}, {"input": batch},
               (_floats("mlp2", 7, 12),)),
        Family("cnn", cnn.eval(), (_floats("cnn", 2, 1, 8, 8),), {"input": batch},
               {"input": batch}, (_floats("cnn2", 5, 1, 8, 8),)),
    ]
    for cell in (nn.LSTM, nn.GRU):
        name = cell.__name__.lower()
        out.append(Family(name, Language(cell).eval(), (_tokens(name, 2, 5),),
                          {"tokens": batch}, {"tokens": batch}, (_tokens(name + "2", 4, 5),)))
    seq = {"x": {0: "batch", 1: "seq"}, "mask": {0: "seq", 1: "seq"}}
    out.append(Family("transformer", Block().eval(), (_floats("tf", 2, 3, 6), causal(3)),
                      seq, seq, (_floats("tf2", 4, 6, 6), causal(6))))
    return out


def eager(model, args):
    with ember.no_grad():
        result = model(*args)
    return [t.numpy() for t in (result if isinstance(result, tuple) else (result,))]
