"""Adadelta, Adagrad and LBFGS against torch.optim, step for step from the same weights."""
from __future__ import annotations

import ember
import ember.optim as optim
import numpy as np
import pytest
from nn_helpers import device_params, rng, to_numpy


def problem(name: str):
    """A small logistic-regression problem: weights (w, b), data (x, y)."""
    r = rng(name)
    return (r.standard_normal((4, 3)), r.standard_normal(4), r.standard_normal((16, 3)),
            (r.random(16) > 0.5).astype(np.float64))


def setup(lib, arrays, device=None):
    w, b, x, y = arrays
    kw = {} if device is None else {"device": device}
    params = [lib.tensor(w, requires_grad=True, **kw), lib.tensor(b, requires_grad=True, **kw)]
    data = (lib.tensor(x, **kw), lib.tensor(y, **kw))
    return params, data


def loss_of(lib, params, data):
    w, b = params
    x, y = data
    logits = (x @ w.T + b).sum(1) * 0.5
    return (lib.nn.functional.softplus(logits) - y * logits).mean() + (w * w).sum() * 0.01


def closure_for(lib, opt, params, data):
    def closure():
        opt.zero_grad()
        loss = loss_of(lib, params, data)
        loss.backward()
        return loss
    return closure


def run(lib, name, kwargs, arrays, steps, device=None, state=None):
    """Parameters and losses after each step; optionally starting from a state dict."""
    params, data = setup(lib, arrays, device)
    opt = getattr(lib.optim, name)(params, **kwargs)
    if state is not None:
        opt.load_state_dict(state)
    history = []
    for _ in range(steps):
        loss = opt.step(closure_for(lib, opt, params, data))
        history.append((float(loss.detach()), [np.array(to_numpy(p.to("cpu") if device else p))
                                      for p in params]))
    return history, opt, params


def assert_same(got, want, rtol):
    for i, ((gl, gp), (wl, wp)) in enumerate(zip(got, want)):
        np.testing.assert_allclose(gl, wl, rtol=rtol, err_msg=f"loss at step {i}")
        for a, b in zip(gp, wp):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14,
                                       err_msg=f"params at step {i}")


CASES = [
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.3, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.05, eps=1e-8)),
    ("LBFGS", dict(lr=0.8, max_iter=6)),
    ("LBFGS", dict(lr=1, max_iter=8, history_size=3, line_search_fn="strong_wolfe")),
    ("LBFGS", dict(lr=0.5, max_iter=4, max_eval=5, tolerance_change=1e-3)),
]


@pytest.mark.parametrize("name,kwargs", CASES,
                         ids=[f"{n}-" + ",".join(f"{k}={v}" for k, v in c.items())
                              for n, c in CASES])
def test_steps_match_torch(torch, name, kwargs):
    arrays = problem(name + str(kwargs))
    want, t_opt, _ = run(torch, name, kwargs, arrays, 3)
    got, e_opt, _ = run(ember, name, kwargs, arrays, 3)
    assert_same(got, want, 1e-9 if name == "LBFGS" else 1e-12)
    t_state, e_state = t_opt.state_dict(), e_opt.state_dict()
    assert e_state["param_groups"][0].keys() <= t_state["param_groups"][0].keys()
    assert {k: sorted(v) for k, v in e_state["state"].items()} == {
        k: sorted(v) for k, v in t_state["state"].items()}
    if name == "LBFGS":
        for key in ("func_evals", "n_iter"):
            assert e_state["state"][0][key] == t_state["state"][0][key], key


def _to_ember(value):
    if hasattr(value, "detach"):
        return ember.tensor(value.detach().numpy())
    if isinstance(value, list):
        return [_to_ember(v) for v in value]
    return value


@pytest.mark.parametrize("name,kwargs", [CASES[1], CASES[3], CASES[6]],
                         ids=["Adadelta", "Adagrad", "LBFGS"])
def test_state_dict_round_trips(torch, name, kwargs):
    """Two steps, then a state dict into a fresh optimizer (from ember and from torch):
    the next two steps are those of the uninterrupted run."""
    arrays = problem("state" + name)
    want, _, _ = run(ember, name, kwargs, arrays, 4)
    first, e_opt, e_params = run(ember, name, kwargs, arrays, 2)
    arrays_after = (to_numpy(e_params[0]), to_numpy(e_params[1])) + arrays[2:]
    saved = e_opt.state_dict()
    second, _, _ = run(ember, name, kwargs, arrays_after, 2, state=saved)
    assert_same(first + second, want, 1e-12)
    # torch's own state dict (0-d tensor steps and all) loads into ember too
    _, t_opt, _ = run(torch, name, kwargs, arrays, 2)
    t_state = t_opt.state_dict()
    converted = {"param_groups": t_state["param_groups"],
                 "state": {k: {n: _to_ember(v) for n, v in s.items()}
                           for k, s in t_state["state"].items()}}
    from_torch, _, _ = run(ember, name, kwargs, arrays_after, 2, state=converted)
    assert_same(from_torch, want[2:], 1e-8)


def test_errors():
    p = [ember.zeros(2, requires_grad=True)]
    with pytest.raises(ember.EmberError, match="rho"):
        optim.Adadelta(p, rho=1.5)
    with pytest.raises(ember.EmberError, match="strong_wolfe"):
        optim.LBFGS(p, line_search_fn="backtracking")
    with pytest.raises(ember.EmberError, match="parameter groups"):
        optim.LBFGS([{"params": p}, {"params": [ember.zeros(1, requires_grad=True)]}])
    with pytest.raises(ember.EmberError, match="closure"):
        optim.LBFGS(p).step(None)


@pytest.mark.parametrize("device", device_params())
def test_on_device(device):
    for name, kwargs in (CASES[1], CASES[6]):
        arrays = problem("device" + name)
        want, _, _ = run(ember, name, kwargs, arrays, 2)
        got, _, _ = run(ember, name, kwargs, arrays, 2, device=device)
        for (gl, gp), (wl, wp) in zip(got, want):
            np.testing.assert_allclose(gl, wl, rtol=1e-6)
            for a, b in zip(gp, wp):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
