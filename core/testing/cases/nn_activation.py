"""Conformance rows of the activations of torch.nn (their nn.functional forms), one_hot and
normalize, with NumPy references.
"""
from __future__ import annotations

import math

import numpy as np

from ._references import _erf, _lse, _softmax, _softplus
from ._table import ALL_FLOATS, FLOATS, F, Input, Rows

ROWS = Rows("activation")
case = ROWS.case


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_ACTIVATIONS = [
    ("gelu", lambda E, x: F(E).gelu(x), lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    ("gelu:tanh", lambda E, x: F(E).gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("silu", lambda E, x: F(E).silu(x), lambda x: x * _sigmoid(x)),
    ("softplus", lambda E, x: F(E).softplus(x * 10, beta=0.5, threshold=5.0),
     lambda x: _softplus(x * 10, 0.5, 5.0)),
    ("elu", lambda E, x: F(E).elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    ("leaky_relu", lambda E, x: F(E).leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    ("relu6", lambda E, x: F(E).relu6(x * 4), lambda x: np.clip(x * 4, 0, 6)),
    ("hardtanh", lambda E, x: F(E).hardtanh(x, -0.5, 0.8), lambda x: np.clip(x, -0.5, 0.8)),
    ("mish", lambda E, x: F(E).mish(x), lambda x: x * np.tanh(_softplus(x))),
    ("logsigmoid", lambda E, x: F(E).logsigmoid(x * 30), lambda x: -_softplus(-x * 30)),
    ("softmin", lambda E, x: F(E).softmin(x, 1), lambda x: _softmax(-x, 1)),
    ("normalize", lambda E, x: (F(E).normalize(x), F(E).normalize(x, p=1.0, dim=-1)),
     lambda x: (x / np.maximum(np.sqrt((x * x).sum(1, keepdims=True)), 1e-12),
                x / np.maximum(np.abs(x).sum(-1, keepdims=True), 1e-12))),
    ("sigmoid:functional", lambda E, x: (F(E).sigmoid(x), F(E).tanh(x), F(E).relu(x)),
     lambda x: (_sigmoid(x), np.tanh(x), np.maximum(x, 0))),
    ("log_softmax:functional", lambda E, x: (F(E).log_softmax(x, 1), F(E).softmax(x, 0),
                                             F(E).logsumexp(x, 2)),
     lambda x: (np.log(_softmax(x, 1)), _softmax(x, 0), _lse(x, 2))),
]
_COVERS = {"sigmoid:functional": ("sigmoid", "tanh", "relu"),
           "log_softmax:functional": ("log_softmax", "softmax", "logsumexp")}
for _name, _fn, _ref in _ACTIVATIONS:
    case(_name, _fn, _ref, Input((2, 3, 4)), dtypes=ALL_FLOATS if _name in ("gelu", "silu")
         else FLOATS, ops=_COVERS.get(_name, (_name.split(":")[0],)))
case("gelu:special", lambda E, x: (F(E).gelu(x), F(E).silu(x), F(E).softplus(x)),
     lambda np, x: (x * 0.5 * (1 + _erf(x / math.sqrt(2))), x * _sigmoid(x), _softplus(x)),
     Input((8,), "f", (math.nan, math.inf, -math.inf, 0.0, -0.0, 50.0, -50.0, 1.0)),
     grad=False, layouts=False, ops=("gelu", "silu", "softplus"))
case("one_hot", lambda E, i: (F(E).one_hot(i, 5), F(E).one_hot(i)),
     lambda np, i: (np.eye(5, dtype=np.int64)[i], np.eye(i.max() + 1, dtype=np.int64)[i]),
     Input((2, 3), "ix5"), dtypes=("int64",), grad=False, out_dtype="int64")


_ALPHA, _SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

case("glu", lambda E, x: (F(E).glu(x), F(E).glu(x, 1)),
     lambda np, x: (x[..., :2] / (1 + np.exp(-x[..., 2:])),
                    x[:, :3] / (1 + np.exp(-x[:, 3:]))), Input((2, 6, 4)))
# scaled so the inputs reach the kinks' far sides (no input sits on a kink)
case("hardswish", lambda E, x: F(E).hardswish(x * 4),
     lambda np, x: x * 4 * np.clip(x * 4 + 3, 0, 6) / 6, Input((2, 3, 4)))
case("hardsigmoid", lambda E, x: F(E).hardsigmoid(x * 4),
     lambda np, x: np.clip(x * 4 + 3, 0, 6) / 6, Input((2, 3, 4)))
case("selu", lambda E, x: F(E).selu(x),
     lambda np, x: _SCALE * np.where(x > 0, x, _ALPHA * np.expm1(x)), Input((2, 3, 4)))
case("celu", lambda E, x: (F(E).celu(x), F(E).celu(x, alpha=0.5)),
     lambda np, x: (np.where(x > 0, x, np.expm1(x)), np.where(x > 0, x, 0.5 * np.expm1(x / 0.5))),
     Input((2, 3, 4)))
case("softsign", lambda E, x: F(E).softsign(x * 3), lambda np, x: x * 3 / (1 + np.abs(x * 3)),
     Input((2, 3, 4)))
case("tanhshrink", lambda E, x: F(E).tanhshrink(x), lambda np, x: x - np.tanh(x),
     Input((2, 3, 4)))
case("hardshrink", lambda E, x: (F(E).hardshrink(x), F(E).hardshrink(x, 1.2)),
     lambda np, x: (np.where(np.abs(x) > 0.5, x, 0), np.where(np.abs(x) > 1.2, x, 0)),
     Input((2, 3, 4)))
case("softshrink", lambda E, x: (F(E).softshrink(x), F(E).softshrink(x, 1.2)),
     lambda np, x: (np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
                    np.where(x > 1.2, x - 1.2, np.where(x < -1.2, x + 1.2, 0))),
     Input((2, 3, 4)))
case("threshold", lambda E, x: F(E).threshold(x, 0.3, -2.0),
     lambda np, x: np.where(x > 0.3, x, -2.0), Input((2, 3, 4)))
case("prelu", lambda E, x, w, a: (F(E).prelu(x, w), F(E).prelu(x, a)),
     lambda np, x, w, a: (np.where(x >= 0, x, w.reshape(1, 3, 1) * x), np.where(x >= 0, x, a * x)),
     Input((2, 3, 4)), Input((3,)), Input((1,)))


def _gumbel_noise(shape):
    # the draws ember makes after manual_seed(0): one exponential per element
    return -np.log(np.random.default_rng(0).exponential(1.0, shape))


def _seeded_gumbel(E, x, **kw):
    """gumbel_softmax under seed 0, the caller's random stream left as it was."""
    state = E.get_rng_state()
    E.manual_seed(0)
    try:
        return F(E).gumbel_softmax(x, **kw)
    finally:
        E.set_rng_state(state)


case("gumbel_softmax", lambda E, x: _seeded_gumbel(E, x, tau=0.7),
     lambda np, x: _softmax((x + _gumbel_noise(x.shape)) / 0.7, -1), Input((3, 5)))
# the hard sample's gradient is the soft one's (straight-through), which finite differences
# of its one-hot forward cannot see: the forward only here
case("gumbel_softmax:hard", lambda E, x: _seeded_gumbel(E, x, hard=True, dim=0),
     lambda np, x: np.eye(x.shape[0])[(x + _gumbel_noise(x.shape)).argmax(0)].T,
     Input((4, 3)), grad=False, ops=("gumbel_softmax",))
# the in-place forms write into their input: each runs on a fresh non-leaf copy (x * 1)
case("relu_", lambda E, x: (F(E).relu_(x * 1), F(E).elu_(x * 1, 0.7),
                            F(E).leaky_relu_(x * 1, 0.1), F(E).hardtanh_(x * 1, -0.5, 0.8),
                            F(E).selu_(x * 1), F(E).celu_(x * 1, 0.5),
                            F(E).threshold_(x * 1, 0.3, -2.0)),
     lambda np, x: (np.maximum(x, 0), np.where(x > 0, x, 0.7 * np.expm1(x)),
                    np.where(x > 0, x, 0.1 * x), np.clip(x, -0.5, 0.8),
                    _SCALE * np.where(x > 0, x, _ALPHA * np.expm1(x)),
                    np.where(x > 0, x, 0.5 * np.expm1(x / 0.5)), np.where(x > 0.3, x, -2.0)),
     Input((2, 3, 4)), ops=("relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_",
                            "threshold_"))
# rrelu outside training is deterministic: leaky_relu with the mean slope (lower + upper) / 2
case("rrelu", lambda E, x: (F(E).rrelu(x), F(E).rrelu(x, 0.1, 0.3),
                            F(E).rrelu_(x * 1, 0.2, 0.6)),
     lambda np, x: (np.where(x >= 0, x, (1 / 8 + 1 / 3) / 2 * x), np.where(x >= 0, x, 0.2 * x),
                    np.where(x >= 0, x, 0.4 * x)),
     Input((2, 3, 4)), ops=("rrelu", "rrelu_"))
