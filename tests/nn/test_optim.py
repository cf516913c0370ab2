"""Optimizers against torch.optim step by step per flag; state dicts, clipping, errors."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl, rng, to_numpy

SHAPES = [(3, 4), (5,)]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(alpha=0.9, centered=True)),
    ("RMSprop", dict(momentum=0.9)),
    ("RMSprop", dict(momentum=0.5, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr_decay=0.1)),
    ("Adagrad", dict(weight_decay=0.1, initial_accumulator_value=0.5, maximize=True)),
]


def _pair(torch, name, kwargs, groups=False):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in SHAPES]
    tp = [torch.tensor(v, requires_grad=True) for v in values]
    ep = [nn.Parameter(ember.tensor(v)) for v in values]
    if groups:
        t_arg = [{"params": tp[:1]}, {"params": tp[1:], "lr": 0.003}]
        e_arg = [{"params": ep[:1]}, {"params": ep[1:], "lr": 0.003}]
    else:
        t_arg, e_arg = tp, ep
    return (tp, getattr(torch.optim, name)(t_arg, **kwargs),
            ep, getattr(optim, name)(e_arg, **kwargs))


def _steps(torch, tp, topt, ep, eopt, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        for t, e in zip(tp, ep):
            g = rng.standard_normal(tuple(t.shape))
            t.grad = torch.tensor(g)
            e.grad = ember.tensor(g)
        topt.step()
        eopt.step()
        for t, e in zip(tp, ep):
            np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_steps_match_torch(torch, name, kwargs):
    tp, topt, ep, eopt = _pair(torch, name, kwargs)
    _steps(torch, tp, topt, ep, eopt, 6, seed=1)


@pytest.mark.parametrize("name,kwargs", [CASES[2], CASES[7], CASES[15], CASES[18]],
                         ids=["SGD", "Adam", "RMSprop", "Adagrad"])
def test_param_groups_and_state_dict_resume(torch, name, kwargs):
    tp, topt, ep, eopt = _pair(torch, name, kwargs, groups=True)
    _steps(torch, tp, topt, ep, eopt, 3, seed=2)
    state = eopt.state_dict()
    _check_plain(state)
    assert [g["params"] for g in state["param_groups"]] == [[0], [1]]
    assert set(state["state"]) <= {0, 1}
    # a fresh optimizer on the same parameters resumes exactly where the first left off
    resumed = getattr(optim, name)([{"params": ep[:1]}, {"params": ep[1:]}], **kwargs)
    resumed.load_state_dict(state)
    assert resumed.param_groups[1]["lr"] == 0.003
    _steps(torch, tp, topt, ep, resumed, 3, seed=3)


def test_state_dict_keys_as_strings_and_copies():
    p = nn.Parameter(ember.ones(2))
    opt = optim.Adam([p])
    p.grad = ember.ones(2)
    opt.step()
    state = opt.state_dict()
    stringly = {"state": {str(k): v for k, v in state["state"].items()},
                "param_groups": state["param_groups"]}
    other = optim.Adam([p])
    other.load_state_dict(stringly)
    assert other.state[p]["step"] == 1
    assert other.state[p]["exp_avg"] is not state["state"][0]["exp_avg"]
    np.testing.assert_array_equal(to_numpy(other.state[p]["exp_avg"]),
                                  to_numpy(state["state"][0]["exp_avg"]))


def _check_plain(value):
    """ember.save stores tensors, numbers, strings, lists and dicts: nothing else."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, (str, int)), k
            _check_plain(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_plain(v)
    else:
        assert value is None or isinstance(value, (ember.Tensor, int, float, str, bool)), value


def test_zero_grad_and_skips_parameters_without_grad():
    a, b = nn.Parameter(ember.ones(2)), nn.Parameter(ember.ones(2))
    opt = optim.SGD([a, b], lr=1.0, momentum=0.9)
    a.grad = ember.ones(2)
    opt.step()
    np.testing.assert_array_equal(to_numpy(a), 0.0)
    np.testing.assert_array_equal(to_numpy(b), 1.0)
    assert b not in opt.state
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(to_numpy(a.grad), 0.0)
    opt.zero_grad()
    assert a.grad is None


def test_step_with_closure():
    w = nn.Parameter(ember.tensor([3.0]))
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    for _ in range(3):
        loss = opt.step(closure)
    assert float(loss.item()) == pytest.approx(3.0 * 0.5 ** 2 * 3.0 * 0.5 ** 2)
    assert float(w.item()) == pytest.approx(3.0 * 0.5 ** 3)


def test_optimizer_errors():
    p = nn.Parameter(ember.ones(1))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="invalid learning rate"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="invalid beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="more than once"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="but got a Tensor"):
        optim.SGD(p, lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="2 parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]})
    with pytest.raises(ValueError, match="does not match this model"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]})
    for err in (ValueError, TypeError):
        assert issubclass(err, Exception)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_clip_grad_norm(torch, norm_type):
    rng = np.random.default_rng(4)
    grads = [rng.standard_normal(s) * 3 for s in SHAPES]
    tp = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in SHAPES]
    ep = [nn.Parameter(ember.zeros(s, dtype=ember.float64)) for s in SHAPES]
    for t, e, g in zip(tp, ep, grads):
        t.grad, e.grad = torch.tensor(g), ember.tensor(g)
    t_norm = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type=norm_type)
    e_norm = nn.utils.clip_grad_norm_(ep, 1.5, norm_type=norm_type)
    np.testing.assert_allclose(float(e_norm.item()), float(t_norm), rtol=1e-10)
    for t, e in zip(tp, ep):
        np.testing.assert_allclose(to_numpy(e.grad), to_numpy(t.grad), rtol=1e-10)
    small = nn.Parameter(ember.zeros(2, dtype=ember.float64))
    small.grad = ember.tensor([0.1, 0.1], dtype=ember.float64)
    nn.utils.clip_grad_norm_([small], 10.0)
    np.testing.assert_allclose(to_numpy(small.grad), [0.1, 0.1])        # under the limit
    with pytest.raises(ValueError, match="non-finite"):
        small.grad = ember.tensor([float("nan"), 1.0], dtype=ember.float64)
        nn.utils.clip_grad_norm_(small, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vector_conversion(torch):
    p = nn.Parameter(ember.zeros(4))
    p.grad = ember.tensor([-3.0, -0.5, 0.5, 3.0])
    nn.utils.clip_grad_value_([p], 1.0)
    np.testing.assert_array_equal(to_numpy(p.grad), [-1.0, -0.5, 0.5, 1.0])
    m = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert tuple(vec.shape) == (8,)
    nn.utils.vector_to_parameters(ember.arange(8.0), m.parameters())
    np.testing.assert_array_equal(to_numpy(m.bias), [6.0, 7.0])
    with pytest.raises(ValueError, match="1-D vector of 8"):
        nn.utils.vector_to_parameters(ember.zeros(3), m.parameters())


# -- the Adam family: Adamax, NAdam, RAdam, on the CPU and opencl:0 ----------------------
DEVICES = cpu_and_opencl()


OPTIMIZERS = [
    ("Adamax", {}), ("Adamax", dict(weight_decay=0.1, maximize=True)),
    ("NAdam", {}), ("NAdam", dict(weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, betas=(0.8, 0.9))),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
]


def _loss(lib, w, b, x, y):
    return ((lib.tanh(x @ w + b) - y) ** 2).mean()


def _run(torch, name, kwargs, device, steps=20):
    r = rng(f"optim{name}{kwargs}")
    arrays = [r.standard_normal(s) for s in [(3, 4), (4,), (5, 3), (5, 4)]]
    tw, tb = (torch.tensor(a, requires_grad=True) for a in arrays[:2])
    ew, eb = (ember.tensor(a, device=device, requires_grad=True) for a in arrays[:2])
    tx, ty = (torch.tensor(a) for a in arrays[2:])
    ex, ey = (ember.tensor(a, device=device) for a in arrays[2:])
    topt = getattr(torch.optim, name)([tw, tb], lr=0.05, **kwargs)
    eopt = getattr(ember.optim, name)([ew, eb], lr=0.05, **kwargs)
    for i in range(steps):
        for opt, loss in ((topt, _loss(torch, tw, tb, tx, ty)),
                          (eopt, _loss(ember, ew, eb, ex, ey))):
            opt.zero_grad()
            loss.backward()
            opt.step()
        np.testing.assert_allclose(to_numpy(ew), to_numpy(tw), rtol=1e-5, atol=1e-8,
                                   err_msg=f"{name} step {i}")
    return topt, eopt, (tw, tb), (ew, eb)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=lambda v: str(v))
def test_adam_family_trajectory_matches_torch(torch, name, kwargs, device):
    topt, eopt, _, _ = _run(torch, name, kwargs, device)
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert set(esd["state"][0]) == set(tsd["state"][0])
    assert set(esd["param_groups"][0]) == set(tsd["param_groups"][0])


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam"])
def test_adam_family_loads_torch_state_dict(torch, name):
    topt, eopt, tparams, eparams = _run(torch, name, {}, "cpu", steps=5)
    # a fresh ember optimizer, resumed from torch's state: the next steps follow torch's
    fresh = getattr(ember.optim, name)(list(eparams), lr=0.05)
    sd = topt.state_dict()
    fresh.load_state_dict({"state": {k: {n: ember.tensor(v.numpy()) if hasattr(v, "numpy")
                                         else v for n, v in s.items()}
                                     for k, s in sd["state"].items()},
                           "param_groups": sd["param_groups"]})
    r = rng(f"optim{name}{ {} }")
    arrays = [r.standard_normal(s) for s in [(3, 4), (4,), (5, 3), (5, 4)]]
    tx, ty = (torch.tensor(a) for a in arrays[2:])
    ex, ey = (ember.tensor(a) for a in arrays[2:])
    for _ in range(5):
        for opt, loss in ((topt, _loss(torch, *tparams, tx, ty)),
                          (fresh, _loss(ember, *eparams, ex, ey))):
            opt.zero_grad()
            loss.backward()
            opt.step()
    np.testing.assert_allclose(to_numpy(eparams[0]), to_numpy(tparams[0]), rtol=1e-5)


def test_adam_family_errors():
    w = ember.zeros(2, requires_grad=True)
    with pytest.raises(ember.EmberError, match="NAdam: invalid momentum_decay"):
        ember.optim.NAdam([w], momentum_decay=-1)
    with pytest.raises(ember.EmberError, match="RAdam: invalid learning rate"):
        ember.optim.RAdam([w], lr=-1)


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam"])
def test_adam_family_capturable_follows_plain(name):
    # capturable keeps the step (and NAdam's mu_product) as float32 device tensors, as torch
    a = rng(f"capturable{name}").standard_normal(5)
    ws = [ember.tensor(a, requires_grad=True) for _ in range(2)]
    opts = [getattr(ember.optim, name)([w], lr=0.05, capturable=c)
            for w, c in zip(ws, [True, False])]
    for _ in range(10):
        for opt, w in zip(opts, ws):
            opt.zero_grad()
            (w ** 3).sum().backward()
            opt.step()
    assert type(opts[0].state[ws[0]]["step"]) is ember.Tensor
    np.testing.assert_allclose(to_numpy(ws[0]), to_numpy(ws[1]), rtol=1e-4, atol=1e-4)
