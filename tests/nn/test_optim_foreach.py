"""SGD/Adam/AdamW's multi-tensor path (foreach, torch's flag): bit-identical to the
per-parameter loop, matching torch.optim, taken without ember dispatches; fused refused."""
from __future__ import annotations

import ember
import ember.dispatch as dispatch
import ember.optim as optim
import numpy as np
import pytest
from ember.errors import NotInEmberError
from nn_helpers import to_numpy

SHAPES = [(6, 4), (5,), (3, 2, 2), ()]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6, maximize=True)),
    ("Adam", dict(lr=0.01, capturable=True, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.01, capturable=True)),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in CASES]


def _params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    # one non-contiguous parameter: a transposed view's layout
    values[0] = np.asfortranarray(values[0])
    return [ember.nn.Parameter(ember.tensor(v)) for v in values]


def _grads(rng, params, dtype):
    return [rng.standard_normal(tuple(p.shape)).astype(dtype) for p in params]


def _state_arrays(opt, params):
    out = []
    for p in params:
        for key, value in sorted(opt.state[p].items()):
            out.append((key, to_numpy(value) if isinstance(value, ember.Tensor) else value))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_foreach_bit_identical_to_loop(name, kwargs, dtype):
    pa, pb = _params(dtype), _params(dtype)
    fast = getattr(optim, name)(pa, foreach=True, **kwargs)
    slow = getattr(optim, name)(pb, foreach=False, **kwargs)
    rng = np.random.default_rng(1)
    for step in range(5):
        grads = _grads(rng, pa, dtype)
        for p, q, g in zip(pa, pb, grads):
            p.grad, q.grad = ember.tensor(g), ember.tensor(g.copy())
        if step == 2:                 # a parameter without a gradient is skipped by both
            pa[1].grad = pb[1].grad = None
        fast.step()
        slow.step()
        for p, q in zip(pa, pb):
            assert p.dtype == q.dtype
            np.testing.assert_array_equal(to_numpy(p), to_numpy(q))
        for (ka, va), (kb, vb) in zip(_state_arrays(fast, pa), _state_arrays(slow, pb),
                                      strict=True):
            assert ka == kb
            np.testing.assert_array_equal(va, vb, err_msg=ka)


@pytest.mark.parametrize("name,kwargs", [CASES[3], CASES[6], CASES[10]],
                         ids=["SGD", "Adam", "AdamW"])
def test_foreach_matches_torch(torch, name, kwargs):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in SHAPES]
    tp = [torch.tensor(v, requires_grad=True) for v in values]
    ep = [ember.nn.Parameter(ember.tensor(v)) for v in values]
    topt = getattr(torch.optim, name)(tp, foreach=True, **kwargs)
    eopt = getattr(optim, name)(ep, foreach=True, **kwargs)
    for _ in range(6):
        for t, e in zip(tp, ep):
            g = rng.standard_normal(tuple(t.shape))
            t.grad, e.grad = torch.tensor(g), ember.tensor(g)
        topt.step()
        eopt.step()
        for t, e in zip(tp, ep):
            np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", [CASES[2], CASES[6]], ids=["SGD", "Adam"])
def test_foreach_step_runs_no_ember_kernels(name, kwargs):
    # the multi-tensor path is NumPy over all parameters: no dispatch per term and parameter
    params = _params(np.float32)
    calls = {True: 0, False: 0}
    for foreach in (True, False):
        opt = getattr(optim, name)(params, foreach=foreach, **kwargs)
        for p in params:
            p.grad = ember.ones_like(p)
        opt.step()                                   # creates the state

        def hook(*args, foreach=foreach):
            calls[foreach] += 1
        dispatch.add_hook("test_foreach", hook)
        try:
            opt.step()
        finally:
            dispatch.remove_hook("test_foreach")
    assert calls[True] == 0
    assert calls[False] >= 3 * len(params)


def test_foreach_bumps_versions():
    p = ember.nn.Parameter(ember.ones(3))
    opt = optim.SGD([p], lr=0.1, momentum=0.9, foreach=True)
    p.grad = ember.ones(3)
    before = p._version
    opt.step()
    opt.step()
    assert p._version == before + 2
    assert opt.state[p]["momentum_buffer"]._version >= 1


def test_foreach_default_mixes_paths_and_true_refuses_what_it_cannot_take():
    a = ember.nn.Parameter(ember.ones(3))
    h = ember.nn.Parameter(ember.ones(3, dtype=ember.float16))
    b = ember.nn.Parameter(ember.ones(3))
    h2 = ember.nn.Parameter(ember.ones(3, dtype=ember.float16))
    both = [optim.Adam([a, h], lr=0.1), optim.Adam([b, h2], lr=0.1, foreach=False)]
    for _ in range(3):
        for p in (a, h, b, h2):
            p.grad = ember.full_like(p, 0.5)
        for opt in both:
            opt.step()
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    np.testing.assert_array_equal(to_numpy(h), to_numpy(h2))
    opt = optim.SGD([a, h], lr=0.1, foreach=True)
    with pytest.raises(NotInEmberError, match=r"SGD\(foreach=True\).*float16.*"
                                                    "foreach=None"):
        opt.step()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_fused_refused_and_flag_values_checked(name):
    w = ember.nn.Parameter(ember.ones(2))
    with pytest.raises(NotInEmberError, match=rf"{name}\(fused=True\).*foreach=True"):
        getattr(optim, name)([w], lr=0.1, fused=True)
    with pytest.raises(ember.EmberError, match=f"{name}: foreach must be"):
        getattr(optim, name)([w], lr=0.1, foreach="yes")
    opt = getattr(optim, name)([w], lr=0.1, fused=False)
    assert opt.param_groups[0]["fused"] is False and opt.param_groups[0]["foreach"] is None
    # a state dict that carries torch's fused=True is refused at the step, not ignored
    state = opt.state_dict()
    state["param_groups"][0]["fused"] = True
    opt.load_state_dict(state)
    w.grad = ember.ones(2)
    with pytest.raises(NotInEmberError, match="fused=True"):
        opt.step()


def test_compiled_step_matches_eager_foreach():
    # a captured step runs the loop (ember ops the capture records); its replay must stay
    # bit-identical to the eager multi-tensor step
    ember.manual_seed(0)
    models = [ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.ReLU(),
                                  ember.nn.Linear(8, 3)) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    x = ember.tensor(np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32))
    y = ember.tensor(np.array([0, 1, 2, 1, 0]))

    def make(model):
        opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        loss_fn = ember.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        return step
    eager, compiled = make(models[0]), ember.compile(make(models[1]))
    for _ in range(4):
        eager()
        compiled()
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_array_equal(to_numpy(p), to_numpy(q))


def test_read_only_parameter_gets_the_loops_ember_error():
    # foreach=None leaves a parameter it cannot write in place to the loop, whose error
    # names the op (not a bare NumPy "output array is read-only")
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    p = ember.nn.Parameter(ember.from_numpy(a))          # shares the read-only array
    p.grad = ember.ones(3)
    with pytest.raises(ember.EmberError, match="add_ failed on cpu.*read-only"):
        optim.SGD([p], lr=0.1).step()
