"""ember.compile on OpenCL replays a graph from its recorded launches (backends/opencl/
graphs.py): the same results, to the bit, as ember's generic replay of the same graph, and
never an answer that depends on what the recording happened to see.

Also here: the index checks a graph keeps (one per index, none for indices in range by
construction), which decide how often a replay waits for the device.
"""
from __future__ import annotations

import zlib

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
import numpy as np
import pytest
from ember.testing import devices_under_test
from test_compile import _Block  # the transformer block with dropout

OPENCL = [d for d, why in devices_under_test() if why is None and d.startswith("opencl")][:1]
needs_opencl = pytest.mark.skipif(not OPENCL, reason="no OpenCL device under test")


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _replay_of(compiled):
    (entry,) = compiled._entries.values()
    return entry.replay


def _train(make, data, steps, monkeypatch, recorded: bool, opt="adam"):
    monkeypatch.setenv("EMBER_OPENCL_GRAPHS", "1" if recorded else "0")
    device = OPENCL[0]
    # the fusion's memory of tree shapes met (a shape met once runs op by op, a reduction
    # over a pending tree may then round differently): both runs start from none
    ember.device(device).backend.runtime(0).fused_seen.clear()
    ember.device(device).backend.runtime(0).fused_credit.clear()
    ember.manual_seed(3)
    model = make().to(device)
    model.train()
    params = list(model.parameters())
    optimizer = optim.Adam(params, lr=3e-3, capturable=True) if opt == "adam" else \
        optim.SGD(params, lr=0.05, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()
    compiled = ember.compile(step)
    rng = _rng("replay")
    ember.manual_seed(5)                   # dropout: the same draws for both runs
    losses = []
    for _ in range(steps):
        x = ember.tensor(data(rng), dtype=ember.float32, device=device)
        y = ember.tensor(rng.integers(0, 4, x.shape[0]), device=device)
        losses.append(compiled(x, y).numpy().copy())
    state = [t.detach().numpy().copy() for t in model.state_dict().values()]
    return losses, state, compiled


def _cnn():
    from ember.tools.demo import build_model
    return nn.Sequential(build_model(), nn.Linear(10, 4))


@needs_opencl
@pytest.mark.parametrize("name", ["cnn", "transformer"])
def test_recorded_launches_replay_like_the_generic_replay(name, monkeypatch):
    """The demo CNN (index checks on the targets) and a transformer block with dropout
    (random draws made again at every replay): equal to the bit."""
    make, data, opt = {
        "cnn": (_cnn, lambda r: r.random((8, 1, 8, 8)), "adam"),
        "transformer": (_Block, lambda r: r.standard_normal((4, 5, 6)), "sgd"),
    }[name]
    generic = _train(make, data, 9, monkeypatch, recorded=False, opt=opt)
    recorded = _train(make, data, 9, monkeypatch, recorded=True, opt=opt)
    replay = _replay_of(recorded[2])
    assert replay.why_not is None and replay.replays >= 4 and replay.fallbacks == 0, \
        (replay.why_not, replay.replays, replay.fallbacks)
    for a, b in zip((*generic[0], *generic[1]), (*recorded[0], *recorded[1])):
        np.testing.assert_array_equal(a, b)
    if name == "transformer":               # dropout masks differ from step to step
        assert len({float(v) for v in recorded[0]}) == len(recorded[0])


def _compiled(fn, *args):
    compiled = ember.compile(fn)
    for _ in range(5):          # captures, a generic replay, the recording, a replay
        compiled(*args)
    return compiled


@needs_opencl
def test_results_of_earlier_calls_are_never_overwritten():
    device = OPENCL[0]
    compiled = _compiled(lambda x: (x * 2 + 1).exp().sum(0), ember.ones(4, 3, device=device))
    a, b = (ember.tensor(np.full((4, 3), v, np.float32), device=device) for v in (0.5, -1))
    first = compiled(a)
    second = compiled(b)
    np.testing.assert_allclose(first.numpy(), np.full(3, 4 * np.exp(2.0)), rtol=1e-6)
    np.testing.assert_allclose(second.numpy(), np.full(3, 4 * np.exp(-1.0)), rtol=1e-6)
    assert _replay_of(compiled).replays >= 2


@needs_opencl
def test_inputs_in_another_layout_or_sharing_memory_take_the_generic_replay():
    device = OPENCL[0]
    rng = _rng("layouts")

    def fn(x, y):
        return x * 3 - y, (x + y).sum()
    base = ember.tensor(rng.standard_normal((5, 4)), dtype=ember.float32, device=device)
    compiled = _compiled(fn, base[:4].clone(), base[1:].clone())
    replay = _replay_of(compiled)
    before = replay.fallbacks
    for x, y in [(base[1:], base[:4]),              # offsets the recording did not see
                 (base[1:].clone(), base[1:].clone()),
                 (base[:4], base[:4])]:             # both inputs in one memory
        got = compiled(x, y)
        want = fn(x, y)
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        np.testing.assert_allclose(got[1].item(), want[1].item(), rtol=1e-6)
    assert replay.fallbacks == before + 2 and replay.replays >= 1


@needs_opencl
def test_pending_arrays_of_the_caller_are_computed_before_a_replay_writes():
    device = OPENCL[0]
    w = ember.ones(6, device=device)

    def fn(x):
        w.mul_(x)
        return w.sum()
    compiled = _compiled(fn, ember.full((6,), 1.0, device=device))
    pending = w * 10 + 1                      # deferred: reads w as it is now
    compiled(ember.full((6,), 2.0, device=device))
    np.testing.assert_array_equal(pending.numpy(), np.full(6, 11.0, np.float32))
    np.testing.assert_array_equal(w.numpy(), np.full(6, 2.0, np.float32))


@needs_opencl
def test_a_bad_index_at_replay_raises_before_any_weight_moves():
    device = OPENCL[0]
    ember.manual_seed(0)
    model = nn.Linear(3, 4).to(device)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    x = ember.ones(2, 3, device=device)
    compiled = _compiled(step, x, ember.tensor([0, 3], device=device))
    weight = model.weight.detach().numpy().copy()
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(x, ember.tensor([0, 4], device=device))
    np.testing.assert_array_equal(model.weight.detach().numpy(), weight)
    assert _replay_of(compiled).program is not None


# --- index checks in graphs (every device) -------------------------------------------------

def _check_names(fn, *args):
    compiled = _compiled(fn, *args)
    (entry,) = compiled._entries.values()
    return [n.name for n in entry.trace.graph.nodes if n.kind == "check"]


def test_an_index_is_checked_once_per_graph_and_argmax_indices_not_at_all():
    ember.manual_seed(0)
    model = nn.Linear(3, 4)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.nll_loss(F.log_softmax(model(x), 1), y)     # gather of the targets
        loss.backward()                       # its scatter reuses the forward's index
        opt.step()
        return loss.detach()
    assert _check_names(step, ember.ones(2, 3), ember.tensor([0, 3])) == ["gather_bounds"]

    # cross_entropy is one declared op on the CPU: its kernel checks the targets itself,
    # at every replay, before anything is written
    def ce_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    assert _check_names(ce_step, ember.ones(2, 3), ember.tensor([0, 3])) == []
    compiled = _compiled(ce_step, ember.ones(2, 3), ember.tensor([0, 3]))
    weight = model.weight.detach().numpy().copy()
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(ember.ones(2, 3), ember.tensor([0, 4]))
    np.testing.assert_array_equal(model.weight.detach().numpy(), weight)

    def pool(x):
        out, idx = F.max_pool2d(x, 2, return_indices=True)   # argmax, then gather
        return out.sum(), idx
    assert _check_names(pool, ember.ones(1, 2, 4, 4)) == []
