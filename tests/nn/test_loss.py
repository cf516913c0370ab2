"""Losses (nn.loss) against PyTorch (values and gradients, float64), stability, and clear
errors; the likelihood losses on every device."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import compare_modules, cpu_and_devices, rng, to_numpy

DEVICES = cpu_and_devices()

RNG = np.random.default_rng(1)


def _compare(torch, name, inputs, kwargs=None, module_kwargs=None, grad_inputs=(0,)):
    """Run torch.nn.<name> and ember.nn.<name> on the same arrays; compare value and grads."""
    kwargs = kwargs or {}
    t_args, e_args = [], []
    for i, a in enumerate(inputs):
        floating = a.dtype.kind == "f"
        t_args.append(torch.tensor(a, requires_grad=floating and i in grad_inputs))
        e_args.append(ember.tensor(a, requires_grad=floating and i in grad_inputs))
    conv = {k: (torch.tensor(v), ember.tensor(v)) if isinstance(v, np.ndarray) else (v, v)
            for k, v in (module_kwargs or {}).items()}
    t_mod = getattr(torch.nn, name)(**{k: v[0] for k, v in conv.items()}, **kwargs)
    e_mod = getattr(nn, name)(**{k: v[1] for k, v in conv.items()}, **kwargs)
    t_out, e_out = t_mod(*t_args), e_mod(*e_args)
    np.testing.assert_allclose(to_numpy(e_out), to_numpy(t_out), rtol=1e-9, atol=1e-12)
    upstream = RNG.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream))
    e_out.backward(ember.tensor(upstream))
    for i in grad_inputs:
        if t_args[i].grad is not None:
            np.testing.assert_allclose(to_numpy(e_args[i].grad), to_numpy(t_args[i].grad),
                                       rtol=1e-8, atol=1e-11, err_msg=f"grad {i}")
    return e_out


REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [("MSELoss", {}), ("L1Loss", {}),
                                         ("SmoothL1Loss", {}), ("SmoothL1Loss", dict(beta=0.3)),
                                         ("HuberLoss", {}), ("HuberLoss", dict(delta=0.4))])
def test_regression_losses(torch, name, kwargs, reduction):
    x, y = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 4))
    _compare(torch, name, [x, y], dict(kwargs, reduction=reduction), grad_inputs=(0, 1))


CE_CASES = [
    dict(),
    dict(label_smoothing=0.1),
    dict(ignore_index=1),
    dict(ignore_index=1, label_smoothing=0.2),
    dict(weight=True),
    dict(weight=True, ignore_index=0, label_smoothing=0.3),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CE_CASES, ids=lambda c: ",".join(c) or "plain")
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2, 3), (4,)], ids=["NC", "NCHW", "C"])
def test_cross_entropy_class_indices(torch, shape, case, reduction):
    x = RNG.standard_normal(shape)
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    y = RNG.integers(0, 4, target_shape)
    if np.ndim(y):
        y.flat[0] = 1
    kwargs = {k: v for k, v in case.items() if k != "weight"}
    extra = dict(weight=RNG.random(4) + 0.5) if case.get("weight") else {}
    if reduction == "mean" and case.get("ignore_index") is not None and not np.ndim(y):
        y = np.array((case["ignore_index"] + 1) % 4)     # an all-ignored mean is 0/0
    _compare(torch, "CrossEntropyLoss", [x, y], dict(kwargs, reduction=reduction), extra)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities(torch, reduction, smoothing, weighted):
    x = RNG.standard_normal((5, 3, 2))
    p = RNG.random((5, 3, 2))
    p /= p.sum(1, keepdims=True)
    extra = dict(weight=RNG.random(3) + 0.5) if weighted else {}
    _compare(torch, "CrossEntropyLoss", [x, p],
             dict(reduction=reduction, label_smoothing=smoothing), extra)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(torch, reduction):
    x = RNG.standard_normal((6, 5))
    y = np.array([0, 4, 2, 2, -100, 1])
    _compare(torch, "NLLLoss", [x, y], dict(reduction=reduction),
             dict(weight=RNG.random(5) + 0.1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce(torch, reduction, weighted):
    x = RNG.random((4, 3)) * 0.98 + 0.01
    y = (RNG.random((4, 3)) > 0.5).astype(np.float64)
    extra = dict(weight=RNG.random((4, 3))) if weighted else {}
    _compare(torch, "BCELoss", [x, y], dict(reduction=reduction), extra)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("extra", ["none", "weight", "pos_weight"])
def test_bce_with_logits(torch, reduction, extra):
    x = RNG.standard_normal((4, 3)) * 5
    y = RNG.random((4, 3))
    module_kwargs = {"weight": dict(weight=RNG.random((4, 3))),
                     "pos_weight": dict(pos_weight=RNG.random(3) * 3)}.get(extra, {})
    _compare(torch, "BCEWithLogitsLoss", [x, y], dict(reduction=reduction), module_kwargs,
             grad_inputs=(0, 1))


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(torch, reduction, log_target):
    x = np.log(RNG.dirichlet(np.ones(4), size=3))
    target = RNG.dirichlet(np.ones(4), size=3)
    target[0, 1] = 0.0                                   # 0 * log 0 must be 0, not nan
    if log_target:
        target = np.log(target + 1e-3)
    # torch's gradient for a zero target is nan (d/dt of t log t); ember's is finite, so the
    # target gradient is compared only in log space
    _compare(torch, "KLDivLoss", [x, target], dict(reduction=reduction, log_target=log_target),
             grad_inputs=(0, 1) if log_target else (0,))


def test_kl_div_of_a_negative_target_is_nan_as_torch(torch):
    # torch's xlogy(target, target): 0 for a zero target, nan for a negative one
    x, t = [0.1, -0.2, 0.3], [0.0, -0.5, 0.25]
    want = torch.nn.functional.kl_div(torch.tensor(x), torch.tensor(t), reduction="none")
    got = F.kl_div(ember.tensor(x), ember.tensor(t), reduction="none")
    np.testing.assert_allclose(to_numpy(got), want.numpy(), rtol=1e-6)
    assert np.isnan(F.kl_div(ember.tensor(x), ember.tensor(t)).item())


def test_kl_div_mean_is_elementwise_mean():
    x = ember.randn(3, 4).log_softmax(-1)
    t = ember.randn(3, 4).softmax(-1)
    total = F.kl_div(x, t, reduction="sum")
    np.testing.assert_allclose(F.kl_div(x, t).item(), total.item() / 12, rtol=1e-6)


def test_losses_are_stable_for_extreme_logits():
    x = ember.tensor([[1000.0, -1000.0, 0.0]], requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([1]))
    loss.backward()
    assert np.isfinite(loss.item()) and np.allclose(loss.item(), 2000.0)
    assert np.all(np.isfinite(to_numpy(x.grad)))
    z = ember.tensor([-800.0, 800.0, 0.0], requires_grad=True)
    bce = F.binary_cross_entropy_with_logits(z, ember.tensor([1.0, 0.0, 1.0]), reduction="sum")
    bce.backward()
    np.testing.assert_allclose(bce.item(), 1600 + np.log(2), rtol=1e-6)
    assert np.all(np.isfinite(to_numpy(z.grad)))
    p = ember.tensor([0.0, 1.0], requires_grad=True)
    assert np.isclose(F.binary_cross_entropy(p, ember.tensor([1.0, 0.0])).item(), 100.0)


def test_loss_errors_are_clear():
    x = ember.randn(4, 3)
    with pytest.raises(ValueError, match=r"cross_entropy: target 7 is out of bounds"):
        F.cross_entropy(x, ember.tensor([0, 1, 7, 2]))
    with pytest.raises(ValueError, match="target -3 is out of bounds"):
        F.cross_entropy(x, ember.tensor([0, -3, 1, 1]))       # no wrap-around
    with pytest.raises(ember.ShapeError, match="expects a target of shape"):
        F.cross_entropy(x, ember.tensor([0, 1]))
    with pytest.raises(TypeError, match="expected an integer"):
        F.nll_loss(x, ember.tensor([0.0, 1.0, 2.0, 0.0]).to(ember.int32).to(ember.float32))
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(ember.randn(3, 1), ember.randn(3))
    assert issubclass(nn.StateDictError, ember.EmberError)


def test_loss_modules_register_weight_buffers(torch):
    w = np.array([1.0, 2.0, 3.0])
    e = nn.CrossEntropyLoss(weight=ember.tensor(w))
    t = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))
    assert list(e.state_dict()) == list(t.state_dict()) == ["weight"]
    assert repr(e) == repr(t)
    assert list(nn.BCEWithLogitsLoss(pos_weight=ember.ones(2)).state_dict()) == ["pos_weight"]


# name: (module kwargs, inputs from a generator, which inputs get gradients); the counts
# a Poisson loss compares with get none, as in the programs that use them
LIKELIHOOD = {
    "PoissonNLLLoss": ({}, lambda r: [r.standard_normal((4, 3)),
                                      r.integers(0, 6, (4, 3)).astype(np.float64)], (0,)),
    "PoissonNLLLoss:full_linear": (dict(log_input=False, full=True), lambda r: [
        r.random((4, 3)) + 0.1, r.integers(0, 6, (4, 3)).astype(np.float64)], (0,)),
    "GaussianNLLLoss": (dict(full=True), lambda r: [
        r.standard_normal((5, 3)), r.standard_normal((5, 3)), r.random((5, 3)) + 0.1],
        (0, 1, 2)),
    "GaussianNLLLoss:homoscedastic": ({}, lambda r: [
        r.standard_normal((5, 3)), r.standard_normal((5, 3)), r.random(5) + 0.1], (0, 2)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(LIKELIHOOD))
def test_likelihood_loss_matches_torch(torch, case, reduction, device):
    kwargs, make, grads = LIKELIHOOD[case]
    name = case.split(":")[0]
    arrays = make(rng(f"{case}{reduction}"))
    t_mod = getattr(torch.nn, name)(**kwargs, reduction=reduction)
    e_mod = getattr(nn, name)(**kwargs, reduction=reduction)
    compare_modules(torch, t_mod, e_mod, arrays, grads, f"{case}{reduction}", device)


def test_likelihood_user_code_forms(torch):
    """The calls programs make; ember's legacy keywords against torch's reduction= (torch
    warns on the legacy ones)."""
    r = rng("user code")
    a, b = (r.standard_normal((8, 16)) for _ in range(2))
    tf, ta, tb = torch.nn.functional, *(torch.tensor(v) for v in (a, b))
    ea, eb = (ember.tensor(v) for v in (a, b))
    pairs = [
        (tf.gaussian_nll_loss(ta, tb, 0.5), F.gaussian_nll_loss(ea, eb, 0.5)),
        (tf.poisson_nll_loss(ta, tb.abs(), reduction="none"),
         F.poisson_nll_loss(ea, eb.abs(), reduce=False)),
    ]
    for t, e in pairs:
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-9, atol=1e-12)


def test_likelihood_errors():
    x = ember.zeros(4, 3)
    with pytest.raises(ember.ShapeError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, ember.ones(3, 2))
    with pytest.raises(ember.EmberError, match="negative"):
        F.gaussian_nll_loss(x, x, -ember.ones(4, 3))
