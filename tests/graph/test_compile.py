"""ember.compile: a captured step replays bit for bit like eager; guards, breaks, the IR.

The oracle models (an MLP, the demo CNN, a transformer block with dropout, an LSTM) train
for 50 steps eagerly and compiled from the same weights: losses, weights and optimizer
state must be equal to the bit on the CPU, and on opencl:0 within float32 rounding.
"""
from __future__ import annotations

import threading
import zlib

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from ember.graph import GraphBreak, GraphError, capture
from ember.testing import devices_under_test

DEVICES = ["cpu"] + [d for d, why in devices_under_test() if why is None and
                     d.startswith("opencl")][:1]
STEPS = {"cpu": 50}             # OpenCL: 20, for the suite's time (each step builds kernels)


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _mlp():
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 4))


def _cnn():
    from ember.tools.demo import build_model
    return build_model()


class _Block(nn.Module):
    """A transformer encoder block with dropout (random draws replay as eager draws)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1,
                                                batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.layer(self.embed(x)).mean(1))


class _Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 12, num_layers=2, batch_first=True)
        self.head = nn.Linear(12, 4)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


MODELS = {
    "mlp": (_mlp, lambda r: r.standard_normal((8, 12)), "sgd"),
    "cnn": (_cnn, lambda r: r.random((8, 1, 8, 8)), "adam"),
    "transformer": (_Block, lambda r: r.standard_normal((4, 5, 6)), "adamw"),
    "lstm": (_Recurrent, lambda r: r.standard_normal((4, 5, 6)), "sgd"),
}


def _optimizer(kind, params):
    if kind == "sgd":
        return optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)
    if kind == "adam":
        return optim.Adam(params, lr=3e-3, capturable=True)
    return optim.AdamW(params, lr=3e-3, capturable=True)


def _train(name, device, compiled):
    make, data, opt_kind = MODELS[name]
    ember.manual_seed(7)
    model = make().to(device)
    model.train()
    opt = _optimizer(opt_kind, model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    run = ember.compile(step) if compiled else step
    rng = _rng(name)
    ember.manual_seed(11)                 # dropout draws: the same stream for both runs
    losses = []
    for _ in range(STEPS.get(device, 20)):
        x = ember.tensor(data(rng), dtype=ember.float32, device=device)
        y = ember.tensor(rng.integers(0, 4, x.shape[0]), device=device)
        losses.append(run(x, y).numpy().copy())
    state = [t.detach().numpy().copy() for t in model.state_dict().values()]
    opt_state = [t.numpy().copy() for s in opt.state.values() for t in s.values()
                 if isinstance(t, ember.Tensor)]
    return np.array(losses), state, opt_state, run


# The transformer's compiled training on OpenCL (~18 s of CPU, most of it its fused
# programs' builds) is under --full; by default the replay on opencl:0 is checked with the
# MLP, the CNN and the LSTM, the transformer's replay on the CPU, and its ops on opencl:0
# by the conformance rows.
@pytest.mark.parametrize("name,device", [
    pytest.param(name, device, marks=[pytest.mark.full] if (name, device) == (
        "transformer", DEVICES[-1]) and device != "cpu" else [])
    for name in sorted(MODELS) for device in DEVICES])
def test_compiled_training_equals_eager(name, device):
    eager = _train(name, device, False)
    compiled = _train(name, device, True)
    stats = compiled[3].stats
    assert stats.replays >= STEPS.get(device, 20) - 4 and stats.eager_calls == 0, stats
    if device == "cpu":
        for a, b in zip((eager[0], *eager[1], *eager[2]),
                        (compiled[0], *compiled[1], *compiled[2])):
            np.testing.assert_array_equal(a, b)
        return
    # OpenCL: a replay may meet a reduction over a pending elementwise tree where eager met
    # a stored result (or the reverse), another kernel with another float32 summation
    # order; Adam's normalised steps turn those last bits on near-zero gradients into
    # steps of about lr
    np.testing.assert_allclose(eager[0], compiled[0], rtol=1e-4, atol=1e-5)
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=5e-3 if name != "mlp" else 1e-5)


def test_the_graph_prints_verifies_and_names_parameters():
    model = _mlp()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = ember.randn(8, 12), ember.randint(0, 4, (8,))

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    step(x, y)                                    # the momentum buffers exist from now on
    trace = capture(step, (x, y))
    graph = trace.graph
    graph.verify()
    text = graph.format()
    assert text.startswith("graph(v0: float32[8,12] cpu, v1: int64[8] cpu):")
    for needle in ("live 0.weight", "0.weight.momentum_buffer", "0.weight.grad <- ",
                   "= linear(", "relu_backward(", "add_(", "# writes"):
        assert needle in text, needle
    assert trace.replayable
    bad = graph.nodes[3]
    graph.nodes[2], graph.nodes[3] = graph.nodes[3], graph.nodes[2]
    if any(a is graph.nodes[3].out for a in bad.args):
        with pytest.raises(GraphError, match="before it is made"):
            graph.verify()


def test_graph_breaks_run_eagerly_and_fullgraph_names_the_line():
    w = ember.randn(3, requires_grad=True)
    seen = []

    def logs(x):
        y = (x * w).sum()
        seen.append(y.item())            # data reaches Python: a graph break
        return y.detach() * 2
    compiled = ember.compile(logs)
    x = ember.randn(3)
    for _ in range(4):
        assert compiled(x).item() == pytest.approx(2 * seen[-1])
    assert len(seen) == 4                # every call ran the Python: eager
    assert compiled.stats.replays == 0
    reason = next(iter(compiled.stats.reasons.values()))
    assert "graph break" in reason and "the output of sum" in reason and "test_compile" in reason
    report = ember.compile.explain(logs, x)
    assert report.breaks and "seen.append(y.item())" in str(report)
    with pytest.raises(GraphBreak, match=r"output of sum.*test_compile.py:\d+"):
        ember.compile(logs, fullgraph=True)(x)


def test_guards_retrace_on_what_the_graph_assumed():
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss.detach()
    compiled = ember.compile(step)
    x = ember.randn(5, 4)
    for _ in range(5):
        compiled(x)
    # the first call binds gradients that did not exist; the next two record the same
    # program (zero_grad drops them, backward binds new ones): trusted, then replayed
    assert compiled.stats.captures == 3 and compiled.stats.replays == 2
    compiled(ember.randn(7, 4))                          # a new shape: a new signature
    assert compiled.stats.captures == 4
    model.eval()                                         # dropout off: a module flag
    compiled(x)
    assert compiled.stats.captures == 5
    opt.param_groups[0]["lr"] = 0.01                     # a hyperparameter
    compiled(x)
    assert compiled.stats.captures == 6
    double = ember.compile(lambda t: (t * 2).sum())
    for _ in range(3):
        double(x)
    with ember.no_grad():                                # grad mode: part of the signature
        double(x)
    assert double.stats.captures == 3 and double.stats.replays == 1


def test_replays_agree_with_eager_when_lr_and_modes_change():
    results = []
    for compiled in (False, True):
        ember.manual_seed(3)
        model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 2))
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)

        def step(x, model=model, opt=opt):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss.detach()
        run = ember.compile(step) if compiled else step
        rng = _rng("modes")
        ember.manual_seed(4)
        out = []
        for i in range(24):
            if i == 10:
                opt.param_groups[0]["lr"] = 0.02
            model.train(i % 7 != 6)
            out.append(run(ember.tensor(rng.standard_normal((3, 4)),
                                        dtype=ember.float32)).item())
        results.append(out)
    assert results[0] == results[1]


def test_unstable_programs_stay_eager_with_the_reason():
    model = nn.Linear(3, 1)
    opt = optim.Adam(model.parameters(), lr=0.1)          # a Python step count

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    compiled = ember.compile(step)
    for _ in range(6):
        compiled(ember.ones(2, 3))
    assert compiled.stats.replays == 0
    assert "capturable=True" in next(iter(compiled.stats.reasons.values()))


@pytest.mark.parametrize("device", DEVICES)
def test_a_compiled_module_trains_through_eager_autograd(device):
    """ember.compile(model) in training: the forward replays and its output carries one
    autograd node whose backward is the captured backward graph."""
    results = []
    for compiled in (False, True):
        ember.manual_seed(5)
        model = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.2), nn.GELU(),
                              nn.BatchNorm1d(16), nn.Linear(16, 3)).to(device)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        net = ember.compile(model) if compiled else model
        rng = _rng("module")
        ember.manual_seed(6)
        losses = []
        for _ in range(12):
            x = ember.tensor(rng.standard_normal((8, 6)), dtype=ember.float32,
                             device=device, requires_grad=True)
            y = ember.tensor(rng.integers(0, 3, 8), device=device)
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            losses.append((loss.item(), x.grad.numpy().copy()))
        state = [t.detach().numpy().copy() for t in model.state_dict().values()]
        results.append((losses, state))
        if compiled:
            assert net.stats.replays >= 9 and not net.stats.reasons, net.stats
    (eager_losses, eager_state), (comp_losses, comp_state) = results
    tol = dict(rtol=0, atol=0) if device == "cpu" else dict(rtol=1e-5, atol=1e-6)
    for (a, ga), (b, gb) in zip(eager_losses, comp_losses):
        np.testing.assert_allclose(a, b, **tol)
        np.testing.assert_allclose(ga, gb, **tol)
    for a, b in zip(eager_state, comp_state):
        np.testing.assert_allclose(a, b, **tol)
    with ember.no_grad():
        model(ember.randn(2, 6, device=device))          # inference replays too


def test_double_backward_through_a_compiled_forward_is_a_clear_error():
    model = nn.Linear(3, 1)
    net = ember.compile(model)
    x = ember.randn(4, 3, requires_grad=True)
    for _ in range(3):
        out = net(x).sum()
    with pytest.raises(ember.AutogradError, match="double backward"):
        ember.autograd.grad(out, x, create_graph=True)


def test_outputs_inputs_and_python_side_effects():
    w = ember.ones(3)
    calls = []

    def fn(x, scale):
        calls.append(1)                      # runs only while the function is traced
        w.add_(x * scale)
        return {"sum": (w * 2).sum(), "w": w, "pair": (x, 3)}
    compiled = ember.compile(fn)
    x = ember.tensor([1.0, 2.0, 3.0])
    for _ in range(5):
        out = compiled(x, 0.5)
    assert out["w"] is w and out["pair"][0] is x and out["pair"][1] == 3
    np.testing.assert_array_equal(w.numpy(), 1 + 5 * 0.5 * x.numpy())
    assert out["sum"].item() == pytest.approx(2 * w.numpy().sum())
    assert len(calls) == 2                   # two captures, then replays
    compiled(x, 1.0)                         # a new Python argument value: a new signature
    assert len(calls) == 3


def test_capture_is_per_thread():
    started, release = threading.Event(), threading.Event()
    other_ops = []

    def busy():
        started.wait(10)
        a = ember.ones(4)
        other_ops.append((a + 1).sum().item())
        release.set()

    def fn(x):
        started.set()
        release.wait(10)                    # the other thread runs ops meanwhile
        return (x * 3).sum()
    t = threading.Thread(target=busy)
    t.start()
    trace = capture(fn, (ember.ones(2),))
    t.join(10)
    assert other_ops == [8.0]
    assert [n.name for n in trace.graph.nodes] == ["mul", "sum"]


# --- a random-program differential test: eager against compiled --------------------------

_UNARY = ("exp", "tanh", "sigmoid", "relu", "abs", "neg", "sin")
_BINARY = ("add", "sub", "mul", "maximum")


def _random_program(seed):
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(int(rng.integers(4, 12))):
        kind = rng.choice(["unary", "binary", "reduce", "view_write", "inplace", "matmul"])
        steps.append((kind, int(rng.integers(0, 1 << 30))))

    def program(a, b, state):
        vals = [a, b]
        for kind, s in steps:
            r = np.random.default_rng(s)
            x = vals[int(r.integers(len(vals)))]
            if kind == "unary":
                vals.append(getattr(x, _UNARY[int(r.integers(len(_UNARY)))])())
            elif kind == "binary":
                y = vals[int(r.integers(len(vals)))]
                vals.append(getattr(ember, _BINARY[int(r.integers(len(_BINARY)))])(x, y))
            elif kind == "reduce":
                vals.append(x.sum(dim=int(r.integers(2)), keepdim=True) * x)
            elif kind == "view_write":
                c = x.clone()
                c[::2, ::-1] = c[::2, ::-1] * 0.5 + 1
                vals.append(c)
            elif kind == "inplace":
                state.mul_(0.9).add_(x.tanh())          # an effect on a live tensor
                vals.append(x + state)
            else:
                vals.append(x @ vals[int(r.integers(len(vals)))].T @ x * 0.1)
        return vals[-1].sum(dim=0), vals[-2]
    return program


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_compile_to_the_same_results(seed):
    results = []
    for compiled in (False, True):
        program = _random_program(seed)
        state = ember.zeros(4, 4)
        run = ember.compile(program) if compiled else program
        rng = _rng(f"program{seed}")
        outs = []
        for _ in range(5):
            a = ember.tensor(rng.standard_normal((4, 4)), dtype=ember.float32)
            b = ember.tensor(rng.standard_normal((4, 4)), dtype=ember.float32)
            outs += [t.numpy().copy() for t in run(a, b, state)]
        outs.append(state.numpy().copy())
        if compiled:
            assert run.stats.replays == 3, run.stats
        results.append(outs)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_demo_trains_compiled():
    from ember.tools.demo import Config, train
    config = Config(epochs=2, seed=0, batch_size=64, lr=3e-3)
    eager = train(config, "cpu")
    compiled = train(config, "cpu", compiled=True)
    assert abs(compiled.test_accuracy - eager.test_accuracy) <= 0.02
    assert compiled.test_accuracy > 0.6


def test_work_outside_kernels_gives_the_graph_up():
    from ember.graph.capture import cannot_replay

    def fn(x):
        cannot_replay("a collective ran outside the kernels")
        return x * 2
    compiled = ember.compile(fn)
    for _ in range(3):
        compiled(ember.ones(2))
    assert compiled.stats.replays == 0
    assert "collective" in next(iter(compiled.stats.reasons.values()))
