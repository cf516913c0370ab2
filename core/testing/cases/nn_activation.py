"""Conformance rows of the nn.functional names from nn/layers_extra.py, with NumPy references."""
from __future__ import annotations

import numpy as np

from .elementwise import Input, _softmax, case, section
from .nn_conv import _adaptive, _adaptive_avg, _avg_pool, _max_pool


def F(E):
    return E.nn.functional


_ALPHA, _SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

section("activation")
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

section("normalization")


def _rms(x, dims, eps):
    return x / np.sqrt((x * x).mean(dims, keepdims=True) + eps)


case("rms_norm", lambda E, x, w: (F(E).rms_norm(x, (3, 4), w, eps=1e-5),
                                  F(E).rms_norm(x, (4,), eps=0.1)),
     lambda np, x, w: (_rms(x, (1, 2), 1e-5) * w, _rms(x, (2,), 0.1)),
     Input((2, 3, 4)), Input((3, 4)))

section("pooling")
case("max_pool1d", lambda E, x: (F(E).max_pool1d(x, 3), F(E).max_pool1d(x, 3, 2, 1, 2)),
     lambda np, x: (_max_pool(x[:, :, None], (1, 3))[:, :, 0],
                    _max_pool(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 2))[:, :, 0]),
     Input((2, 3, 10)))
case("avg_pool1d", lambda E, x: (F(E).avg_pool1d(x, 3), F(E).avg_pool1d(x, 3, 2, 1, True, False)),
     lambda np, x: (_avg_pool(x[:, :, None], (1, 3))[:, :, 0],
                    _avg_pool(x[:, :, None], (1, 3), (1, 2), (0, 1), True, False)[:, :, 0]),
     Input((2, 3, 10)))
case("adaptive_avg_pool1d", lambda E, x: F(E).adaptive_avg_pool1d(x, 4),
     lambda np, x: _adaptive_avg(x[:, :, None], (1, 4))[:, :, 0], Input((2, 3, 10)))


def _adaptive_max(x, size):
    return _adaptive(x, size, np.max)


case("adaptive_max_pool2d", lambda E, x: (F(E).adaptive_max_pool2d(x, (2, 3)),
                                          F(E).adaptive_max_pool2d(x, (3, None)),
                                          F(E).adaptive_max_pool2d(x[:, :, :4, :6], 2)),
     lambda np, x: (_adaptive_max(x, (2, 3)), _adaptive_max(x, (3, x.shape[3])),
                    _adaptive_max(x[:, :, :4, :6], (2, 2))), Input((2, 3, 5, 7)))
