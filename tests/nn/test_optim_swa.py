"""Rprop, ASGD and torch.optim.swa_utils (AveragedModel with SWA and EMA averaging,
SWALR's schedule, update_bn) against torch.optim step by step; the flags ember does not
honour are refused."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from nn_helpers import copy_weights, to_numpy

SHAPES = [(3, 4), (5,)]
CASES = [
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=2, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_steps_and_state_match_torch(torch, name, kwargs):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in SHAPES]
    tp = [torch.tensor(v, requires_grad=True) for v in values]
    ep = [nn.Parameter(ember.tensor(v)) for v in values]
    topt, eopt = getattr(torch.optim, name)(tp, **kwargs), getattr(optim, name)(ep, **kwargs)
    for step in range(8):
        for t, e in zip(tp, ep):
            # gradients that keep and flip their signs (Rprop's two cases)
            g = rng.standard_normal(tuple(t.shape)) * (1 if step % 3 else -1)
            t.grad, e.grad = torch.tensor(g), ember.tensor(g)
        topt.step()
        eopt.step()
        for t, e in zip(tp, ep):
            np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-10, atol=1e-12)
    for t, e in zip(tp, ep):
        ts, es = topt.state[t], eopt.state[e]
        assert set(es) == set(ts)
        for key in ts:
            np.testing.assert_allclose(np.asarray(to_numpy(es[key]) if hasattr(es[key], "numpy")
                                                  else es[key], dtype=float),
                                       to_numpy(ts[key]), rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_flags_ember_does_not_honour_are_refused(name):
    p = [nn.Parameter(ember.ones(2))]
    for flag in ("foreach", "capturable", "differentiable"):
        with pytest.raises(ember.errors.NotInEmberError, match=flag):
            getattr(optim, name)(p, **{flag: True})
    opt = getattr(optim, name)(p, foreach=False)        # the defaults are fine
    opt.param_groups[0]["differentiable"] = True         # e.g. from a loaded state dict
    p[0].grad = ember.ones(2)
    with pytest.raises(ember.errors.NotInEmberError, match="differentiable"):
        opt.step()
    with pytest.raises(ember.EmberError):
        getattr(optim, name)(p, lr=-1)


def _mlp(lib):
    m = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.ReLU(),
                          lib.nn.Linear(6, 2))
    return m.double() if lib.__name__ == "torch" else m.to(dtype=ember.float64)


@pytest.mark.parametrize("how", ["swa", "ema", "ema_buffers", "avg_fn"])
def test_averaged_model_matches_torch(torch, how):
    tm, em = _mlp(torch), _mlp(ember)
    copy_weights(tm, em)
    libs = {"torch": (torch, tm), "ember": (ember, em)}
    avg = {}
    for key, (lib, model) in libs.items():
        su = lib.optim.swa_utils
        kwargs = {"swa": {}, "ema": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
                  "ema_buffers": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8),
                                      use_buffers=True),
                  "avg_fn": dict(avg_fn=su.get_ema_avg_fn(0.7))}[how]
        avg[key] = su.AveragedModel(model, **kwargs)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.standard_normal((8, 4))
        for key, (lib, model) in libs.items():
            opt = lib.optim.SGD(model.parameters(), lr=0.1)
            opt.zero_grad()
            model(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
            avg[key].update_parameters(model)
    ts, es = avg["torch"].state_dict(), avg["ember"].state_dict()
    assert list(es) == list(ts)
    for k in ts:
        np.testing.assert_allclose(to_numpy(es[k]), to_numpy(ts[k]), rtol=1e-10, atol=1e-12,
                                   err_msg=k)
    x = rng.standard_normal((3, 4))
    avg["torch"].eval(), avg["ember"].eval()
    np.testing.assert_allclose(to_numpy(avg["ember"](ember.tensor(x))),
                               to_numpy(avg["torch"](torch.tensor(x))), rtol=1e-10)


def test_update_bn_matches_torch(torch):
    tm, em = _mlp(torch), _mlp(ember)
    copy_weights(tm, em)
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((5, 4)) for _ in range(3)]
    tm.eval(), em.eval()
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], tm)
    optim.swa_utils.update_bn([(ember.tensor(b), 0) for b in batches], em)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(to_numpy(em.state_dict()[k]), to_numpy(v), rtol=1e-10,
                                   atol=1e-12, err_msg=k)
    assert not em.training and em[1].momentum == tm[1].momentum == 0.1


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=0.5, anneal_epochs=3,
                                                                  anneal_strategy="linear"),
                                    dict(swa_lr=[0.01, 0.2], anneal_epochs=0)])
def test_swalr_schedule_matches_torch(torch, kwargs):
    lrs = {}
    for lib in (torch, ember):
        a, b = lib.nn.Linear(2, 2), lib.nn.Linear(2, 1)
        opt = lib.optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "lr": 0.3}],
                            lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
        seen = []
        for _ in range(14):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        lrs[lib.__name__] = seen
    np.testing.assert_allclose(lrs["ember"], lrs["torch"], rtol=1e-12)
    with pytest.raises(ember.EmberError, match="anneal_strategy"):
        optim.swa_utils.SWALR(optim.SGD(nn.Linear(2, 2).parameters(), lr=1.0), 0.1,
                              anneal_strategy="step")
