"""Threads: modes are per thread, so models trained in threads at once train as alone.

The scenarios of the reliability probe (issue 20, item 7): two threads training their own
models at once, backward in one thread while another runs forward without grad,
overlapping no_grad blocks, device and fallback contexts.  Each runs hundreds of steps
with the threads interleaving freely, and checks every result.
"""
from __future__ import annotations

import threading
import zlib

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
from ember import dispatch


def _run_threads(*targets, timeout=120):
    errors = []

    def wrap(fn):
        def body():
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001  (reported below)
                errors.append(exc)
        return body
    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def _train(seed, steps, out):
    rng = np.random.default_rng(zlib.crc32(f"threads{seed}".encode()))
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
    with ember.no_grad():
        for p in model.parameters():
            p.copy_(ember.tensor(rng.standard_normal(tuple(p.shape)) * 0.3,
                                 dtype=ember.float32))
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        x = ember.tensor(rng.standard_normal((4, 8)), dtype=ember.float32)
        y = ember.tensor(rng.integers(0, 2, 4))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out.extend(losses)


def test_two_threads_train_their_own_models_at_once():
    alone = [[], []]
    _train(1, 300, alone[0])
    _train(2, 300, alone[1])
    together = [[], []]
    _run_threads(lambda: _train(1, 300, together[0]), lambda: _train(2, 300, together[1]))
    assert together == alone


def test_backward_in_one_thread_while_another_runs_forward_without_grad():
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    x = ember.randn(5, 6)
    want = model(x).detach().numpy().copy()
    wrong = []

    def trainer():
        w = ember.randn(6, 3, requires_grad=True)
        for _ in range(400):
            loss = (x @ w).square().mean()
            loss.backward()
            if w.grad is None or loss.grad_fn is None:
                wrong.append("backward lost its graph")
            w.grad = None

    def inferrer():
        for _ in range(400):
            with ember.no_grad():
                out = model(x)
            if out.requires_grad or out.grad_fn is not None:
                wrong.append("no_grad recorded a graph")
            if not np.array_equal(out.numpy(), want):
                wrong.append("inference changed")
    _run_threads(trainer, inferrer)
    assert wrong == []


def test_overlapping_no_grad_blocks():
    barrier = threading.Barrier(2)
    seen = []

    def body(name):
        for _ in range(100):
            with ember.no_grad():
                barrier.wait(10)
                seen.append((name, "in", ember.is_grad_enabled()))
                barrier.wait(10)
            seen.append((name, "out", ember.is_grad_enabled()))
            barrier.wait(10)
    _run_threads(lambda: body("a"), lambda: body("b"))
    assert all(flag is False for _, where, flag in seen if where == "in")
    assert all(flag is True for _, where, flag in seen if where == "out")
    assert ember.is_grad_enabled()


def test_device_and_fallback_contexts_in_two_threads():
    barrier = threading.Barrier(2)
    wrong = []

    def body(policy, device):
        for _ in range(100):
            with ember.fallback(policy), ember.device(device):
                barrier.wait(10)
                if dispatch.get_fallback() != policy:
                    wrong.append(("fallback", policy, dispatch.get_fallback()))
                if ember.get_default_device() != ember.device(device):
                    wrong.append(("device", device, str(ember.get_default_device())))
                barrier.wait(10)
            if dispatch.get_fallback() != "error" or ember.get_default_device() != "cpu":
                wrong.append("not restored")
    devices = ["cpu"] + [str(d) for d in ember.devices() if d.type == "opencl"][:1]
    _run_threads(lambda: body("warn", devices[0]), lambda: body("allow", devices[-1]))
    assert wrong == []


def test_a_thread_that_ends_with_grad_off_leaves_nothing_behind():
    """set_grad_enabled(False) as a plain call, never undone: the thread's mode goes with
    the thread (a later thread may get the same ident)."""
    def body():
        ember.set_grad_enabled(False)
        assert not ember.is_grad_enabled()
    _run_threads(body, body)
    import gc
    gc.collect()
    assert dispatch._grad_off == set() and ember.is_grad_enabled()
