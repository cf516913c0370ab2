"""Learning-rate schedulers against torch.optim.lr_scheduler, state_dict resume, errors."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from ember.optim import lr_scheduler

EPOCHS = 30

CASES = [
    ("StepLR", dict(step_size=4, gamma=0.5), "SGD"),
    ("MultiStepLR", dict(milestones=[3, 7, 7, 12], gamma=0.3), "SGD"),
    ("ExponentialLR", dict(gamma=0.9), "SGD"),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001), "SGD"),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1 + e)), "SGD"),
    ("LinearLR", dict(start_factor=0.25, total_iters=6), "SGD"),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=10), "SGD"),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS), "SGD"),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], total_steps=EPOCHS, anneal_strategy="linear",
                        three_phase=True), "Adam"),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95 if e % 2 else 1.0), "SGD"),
    ("ConstantLR", dict(factor=0.25, total_iters=4), "SGD"),
    ("PolynomialLR", dict(total_iters=12, power=2.0), "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5), "SGD"),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=4, mode="triangular2"),
     "Adam"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range",
                      gamma=0.97), "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2,
                      scale_fn=lambda x: 0.5 ** x, scale_mode="iterations",
                      cycle_momentum=False), "SGD"),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, eta_min=0.001), "SGD"),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2), "Adam"),
]


def _optimizers(torch, opt_name):
    kwargs = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.1)
    tp = [torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)]
    ep = [nn.Parameter(ember.zeros(2)), nn.Parameter(ember.zeros(1))]
    topt = getattr(torch.optim, opt_name)([{"params": tp[:1]}, {"params": tp[1:], "lr": 0.05}],
                                          **kwargs)
    eopt = getattr(optim, opt_name)([{"params": ep[:1]}, {"params": ep[1:], "lr": 0.05}],
                                    **kwargs)
    return topt, eopt


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


@pytest.mark.parametrize("name,kwargs,opt_name", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_lr_sequence_matches_torch(torch, name, kwargs, opt_name):
    topt, eopt = _optimizers(torch, opt_name)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    esched = getattr(lr_scheduler, name)(eopt, **kwargs)
    for _ in range(EPOCHS - 1 if name == "OneCycleLR" else EPOCHS):
        np.testing.assert_allclose(esched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12)
        np.testing.assert_allclose(_momenta(eopt), _momenta(topt), rtol=1e-12)
        topt.step()
        eopt.step()
        tsched.step()
        esched.step()
    np.testing.assert_allclose(esched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12)


def test_reduce_on_plateau_matches_torch(torch):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.7] * 2
    for kwargs in (dict(patience=2, factor=0.5), dict(mode="max", patience=1, cooldown=2,
                                                      threshold_mode="abs", min_lr=0.02)):
        topt, eopt = _optimizers(torch, "SGD")
        tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
        esched = lr_scheduler.ReduceLROnPlateau(eopt, **kwargs)
        for m in metrics:
            topt.step()
            eopt.step()
            tsched.step(m)
            esched.step(ember.tensor(m))
            np.testing.assert_allclose(esched.get_last_lr(), tsched.get_last_lr(),
                                       rtol=1e-12)
        assert esched.num_bad_epochs == tsched.num_bad_epochs


@pytest.mark.parametrize("name,kwargs", [("MultiStepLR", dict(milestones=[2, 5])),
                                         ("CosineAnnealingLR", dict(T_max=6)),
                                         ("OneCycleLR", dict(max_lr=1.0, total_steps=20))])
def test_state_dict_resume(name, kwargs):
    def run(steps, opt, sched):
        for _ in range(steps):
            opt.step()
            sched.step()
        return sched.get_last_lr()

    p = nn.Parameter(ember.zeros(1))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    run(4, opt, sched)
    state, opt_state = sched.state_dict(), opt.state_dict()
    assert "optimizer" not in state
    expected = run(5, opt, sched)
    opt2 = optim.SGD([p], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt_state)
    sched2 = getattr(lr_scheduler, name)(opt2, **kwargs)
    sched2.load_state_dict(state)
    opt2.load_state_dict(opt_state)          # the constructor reset the lr; restore it
    assert run(5, opt2, sched2) == expected


def test_step_with_epoch_uses_the_closed_form(torch):
    _, eopt = _optimizers(torch, "SGD")
    sched = lr_scheduler.StepLR(eopt, step_size=3, gamma=0.5)
    sched.step(7)
    assert sched.get_last_lr() == pytest.approx([0.1 * 0.25, 0.05 * 0.25])


def test_scheduler_errors():
    p = nn.Parameter(ember.zeros(1))
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR("opt", 3)
    with pytest.raises(ValueError, match="initial_lr"):
        lr_scheduler.StepLR(opt, 3, last_epoch=5)
    with pytest.raises(ValueError, match="total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="factor should be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(opt, factor=2.0)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="tried to step 3 times"):
        sched.step()
    with pytest.raises(ValueError, match="expected 1 lr_lambdas"):
        lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 2.0])


def _composite(lib, opt, kind):
    S = lib.optim.lr_scheduler
    if kind == "sequential":
        return S.SequentialLR(opt, [S.LinearLR(opt, 0.1, total_iters=4),
                                    S.ConstantLR(opt, 0.5, total_iters=3),
                                    S.ExponentialLR(opt, 0.9)], milestones=[4, 9])
    return S.ChainedScheduler([S.ConstantLR(opt, 0.5, total_iters=5),
                               S.ExponentialLR(opt, 0.95),
                               S.StepLR(opt, 3, 0.5)])


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_schedulers_of_schedulers_match_torch_and_resume(torch, kind):
    topt, eopt = _optimizers(torch, "SGD")
    tsched, esched = _composite(torch, topt, kind), _composite(ember, eopt, kind)
    for epoch in range(EPOCHS):
        np.testing.assert_allclose(esched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12)
        topt.step()
        eopt.step()
        tsched.step()
        esched.step()
        if epoch == 10:                        # both resume from state dicts mid-way
            states = tsched.state_dict(), esched.state_dict()
            topt2, eopt2 = _optimizers(torch, "SGD")
            topt2.load_state_dict(topt.state_dict())
            eopt2.load_state_dict(eopt.state_dict())
            tsched, esched = _composite(torch, topt2, kind), _composite(ember, eopt2, kind)
            tsched.load_state_dict(states[0])
            esched.load_state_dict(states[1])
            topt, eopt = topt2, eopt2
    np.testing.assert_allclose(esched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12)


def test_warm_restarts_with_fractional_epochs_match_torch(torch):
    topt, eopt = _optimizers(torch, "SGD")
    S = torch.optim.lr_scheduler
    tsched = S.CosineAnnealingWarmRestarts(topt, T_0=2, T_mult=2, eta_min=0.01)
    esched = lr_scheduler.CosineAnnealingWarmRestarts(eopt, T_0=2, T_mult=2, eta_min=0.01)
    import warnings
    for i in range(40):
        epoch = i / 4
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # torch warns about step(epoch)
            tsched.step(epoch)
        esched.step(epoch)
        np.testing.assert_allclose(esched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12)


def test_new_schedulers_refuse_what_torch_refuses(torch):
    _, eopt = _optimizers(torch, "SGD")
    S = lr_scheduler
    with pytest.raises(ember.errors.EmberValueError, match="T_0"):
        S.CosineAnnealingWarmRestarts(eopt, T_0=0)
    with pytest.raises(ember.errors.EmberValueError, match="factor"):
        S.ConstantLR(eopt, factor=1.5)
    with pytest.raises(ember.errors.EmberValueError, match="mode"):
        S.CyclicLR(eopt, 0.01, 0.1, mode="bogus")
    with pytest.raises(ember.errors.EmberValueError, match="milestones"):
        S.SequentialLR(eopt, [S.ExponentialLR(eopt, 0.9)], milestones=[3])
    with pytest.raises(ember.errors.EmberValueError, match="ReduceLROnPlateau"):
        S.ChainedScheduler([S.ReduceLROnPlateau(eopt)])
    no_momentum = optim.Adagrad([nn.Parameter(ember.zeros(2))], lr=0.1)
    with pytest.raises(ember.errors.EmberValueError, match="momentum"):
        S.CyclicLR(no_momentum, 0.01, 0.1)

