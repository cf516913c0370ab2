"""ember.compile on the CPU (backends/cpu/graphs.py): the replay's rewrites (a cross-entropy
and its gradient in one pass, relu and its gradient written into a fresh input nobody else
reads) give the eager step's results bit for bit, and apply only where they may."""
from __future__ import annotations

import zlib

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from ember.backends.cpu import graphs
from ember.backends.cpu import loss as cpu_loss


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


class _Shared(nn.Module):
    """relu's input read again after it (x + relu(x)): relu may not write into it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 5)

    def forward(self, x):
        h = self.a(x)
        return self.b(h + nn.functional.relu(h))


def _train(make, loss_kw, compiled, steps=8):
    ember.manual_seed(3)
    model = make()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y, **loss_kw)
        loss.sum().backward()
        opt.step()
        return loss.detach()
    run = ember.compile(step) if compiled else step
    rng = _rng(repr(loss_kw))
    losses = []
    for _ in range(steps):
        x = ember.tensor(rng.standard_normal((7, 6)), dtype=ember.float32)
        y = rng.integers(0, 5, 7)
        y[0] = -1 if loss_kw.get("ignore_index") == -1 else y[0]
        losses.append(run(x, ember.tensor(y)).numpy().copy())
    return losses, [p.detach().numpy().copy() for p in model.parameters()], run


def _mlp():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 5))


@pytest.mark.parametrize("make", [_mlp, _Shared], ids=["mlp", "relu-input-shared"])
@pytest.mark.parametrize("loss_kw", [
    {}, {"reduction": "sum"}, {"reduction": "none"},
    {"weight": "w", "ignore_index": -1}, {"label_smoothing": 0.0, "reduction": "mean"}],
    ids=["mean", "sum", "none", "weighted-ignored", "mean-explicit"])
def test_compiled_steps_with_the_rewrites_equal_eager(make, loss_kw):
    if loss_kw.get("weight") == "w":
        loss_kw = dict(loss_kw, weight=ember.tensor([1.0, 0.5, 2.0, 1.0, 0.25]))
    eager_losses, eager_params, _ = _train(make, loss_kw, False)
    losses, params, run = _train(make, loss_kw, True)
    assert run.stats.replays >= 4 and run.stats.eager_calls == 0, run.stats
    for a, b in zip(eager_losses + eager_params, losses + params):
        np.testing.assert_array_equal(a, b)


def _replay_functions(run):
    (entry,) = run._entries.values()
    g = entry.replay.__globals__
    return {getattr(fn, "func", fn) for name, fn in g.items() if name.startswith("f")}


def test_the_rewrites_apply_where_they_may():
    _, _, run = _train(_mlp, {}, True)
    fns = _replay_functions(run)
    assert graphs._relu_into_input in fns and graphs._relu_backward_into_grad in fns
    assert any(getattr(f, "__self__", None).__class__ is graphs._CrossEntropyPair for f in fns)
    assert any(type(f) is graphs._Once for f in fns)          # the backward's seed, made once
    # relu's input is read again (h + relu(h)): relu keeps its own output array
    _, _, run = _train(_Shared, {}, True)
    assert graphs._relu_into_input not in _replay_functions(run)


def test_relu_backward_into_the_gradient_is_the_kernel_bit_for_bit():
    from ember.backends.cpu import _relu_backward
    rng = _rng("relu_backward")
    for dtype in (np.float32, np.float64):
        out = np.maximum(rng.standard_normal((6, 7)), 0).astype(dtype)
        g = rng.standard_normal((6, 7)).astype(dtype)
        g.flat[::5], g.flat[1::7], g.flat[2::9] = -0.0, np.inf, np.nan
        out.flat[3::8] = np.nan
        want = _relu_backward(g, out)
        got = graphs._relu_backward_into_grad(g.copy(), out)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_the_pair_backward_computes_itself_from_other_arrays():
    rng = _rng("pair")
    x = rng.standard_normal((9, 4)).astype(np.float32)
    other = rng.standard_normal((9, 4)).astype(np.float32)
    t = rng.integers(0, 4, 9)
    g = np.asarray(np.float32(1.0))
    kw = dict(ignore_index=-100, reduction="mean")
    want = cpu_loss.cross_entropy_backward(g, x, t, **kw)
    pair = graphs._CrossEntropyPair()
    loss = pair.forward(x, t, **kw)
    assert loss.tobytes() == cpu_loss.cross_entropy(x, t, **kw).tobytes()
    assert pair.backward(g, x, t, **kw).tobytes() == want.tobytes()
    pair.forward(other, t, **kw)             # (another call's logits in between)
    assert pair.backward(g, x, t, **kw).tobytes() == want.tobytes()
    assert pair.backward(g, x, t, **kw).tobytes() == want.tobytes()   # nothing kept
