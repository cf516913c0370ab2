"""Activation layers and their functional forms (nn.activation) against PyTorch, on the CPU
and every device."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import (
    check_functional,
    check_layer,
    check_parameter_module,
    check_stateless,
    close,
    cpu_and_devices,
    randn_stream,
    rng,
    to_numpy,
    twin,
)

DEVICES = cpu_and_devices()
randn = randn_stream(0)


ACTIVATIONS = [("ReLU", {}), ("LeakyReLU", dict(negative_slope=0.2)), ("GELU", {}),
               ("GELU", dict(approximate="tanh")), ("SiLU", {}), ("Tanh", {}),
               ("Sigmoid", {}), ("Softmax", dict(dim=1)), ("LogSoftmax", dict(dim=-1)),
               ("ELU", {}), ("Softplus", dict(beta=2.0)), ("Mish", {}), ("Hardtanh", {}),
               ("ReLU6", {}), ("LogSigmoid", {}), ("Softmin", dict(dim=0))]


INPLACE = [("relu", "ReLU", {}), ("leaky_relu", "LeakyReLU", dict(negative_slope=0.2)),
           ("elu", "ELU", dict(alpha=0.5)), ("hardtanh", "Hardtanh", dict(min_val=-0.5)),
           ("relu6", "ReLU6", {}), ("silu", "SiLU", {}), ("mish", "Mish", {})]


@pytest.mark.parametrize("fn,name,kwargs", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_is_real(torch, fn, name, kwargs):
    """inplace=True writes into the input and returns it, in the functional form and the
    Module (which ember once accepted and ignored); values and gradients as PyTorch's."""
    x = randn(3, 5) * 4
    outs = {}
    for lib in (torch, ember):
        leaf = lib.tensor(x, requires_grad=True)
        y = leaf * 1.0                                   # a non-leaf: in place is allowed
        out = getattr(lib.nn.functional, fn)(y, **kwargs, inplace=True)
        assert out is y
        (out * lib.tensor(x)).sum().backward()
        module_in = lib.tensor(x)
        module_out = getattr(lib.nn, name)(**kwargs, inplace=True)(module_in)
        assert module_out is module_in
        outs[lib.__name__] = (to_numpy(y), to_numpy(leaf.grad), to_numpy(module_in),
                              repr(getattr(lib.nn, name)(**kwargs, inplace=True)))
    for (a, b) in zip(outs["ember"][:3], outs["torch"][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert outs["ember"][3] == outs["torch"][3]
    plain = ember.tensor(x)
    getattr(F, fn)(plain, **kwargs)
    np.testing.assert_array_equal(to_numpy(plain), x)      # out of place: x is untouched


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activations(torch, name, kwargs):
    t, e = twin(torch, name, **kwargs)
    check_layer(torch, t, e, randn(3, 5) * 4)
    assert repr(e) == repr(t)


FUNCTIONS = [
    ("glu", lambda F, x: F.glu(x), (2, 3, 6)),
    ("glu:dim", lambda F, x: F.glu(x, dim=1), (2, 6, 3)),
    ("hardswish", lambda F, x: F.hardswish(x * 4), (3, 7)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x * 4), (3, 7)),
    ("selu", lambda F, x: F.selu(x), (3, 7)),
    ("celu", lambda F, x: F.celu(x, alpha=0.6), (3, 7)),
    ("softsign", lambda F, x: F.softsign(x * 3), (3, 7)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x), (3, 7)),
    ("threshold", lambda F, x: F.threshold(x, 0.2, -3.0), (3, 7)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,shape", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_functional_matches_torch(torch, device, name, fn, shape):
    check_functional(torch, device, name, fn, shape, F)


MODULES = [
    ("PReLU", (), {}, (2, 3, 4)),
    ("PReLU", (3,), dict(init=0.1), (2, 3, 4)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,kwargs,shape", MODULES,
                         ids=[f"{m[0]}{m[1]}{m[2]}" for m in MODULES])
def test_parameter_modules_match_torch(torch, device, name, args, kwargs, shape):
    check_parameter_module(torch, device, name, args, kwargs, shape)


def test_prelu_initialises_like_torch():
    np.testing.assert_array_equal(to_numpy(nn.PReLU(4, init=0.3).weight), np.full(4, 0.3,
                                                                                 np.float32))


STATELESS = [
    ("GLU", (), (2, 4)), ("GLU", (0,), (4, 3)), ("Hardswish", (), (3, 5)),
    ("Hardsigmoid", (), (3, 5)), ("SELU", (), (3, 5)), ("CELU", (0.5,), (3, 5)),
    ("Softsign", (), (3, 5)), ("Tanhshrink", (), (3, 5)), ("Threshold", (0.1, 20.0), (3, 5)),
    ("Softmax2d", (), (2, 3, 2, 2)), ("Softmax2d", (), (3, 2, 2)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,shape", STATELESS,
                         ids=[f"{m[0]}{m[1]}" for m in STATELESS])
def test_stateless_modules_match_torch(torch, device, name, args, shape):
    check_stateless(torch, device, name, args, shape, nn)


def test_inplace_activations_write_their_input(torch):
    x = rng("inplace").standard_normal((3, 4)) * 4
    for name, args in [("Hardswish", ()), ("Hardsigmoid", ()), ("SELU", ()), ("CELU", (0.5,)),
                       ("Threshold", (0.1, 2.0))]:
        e_in, t_in = ember.tensor(x), torch.tensor(x)
        e_out = getattr(nn, name)(*args, inplace=True)(e_in)
        t_out = getattr(torch.nn, name)(*args, inplace=True)(t_in)
        close(e_in, t_in, name)
        close(e_out, t_out, name)


@pytest.mark.parametrize("device", DEVICES)
def test_gumbel_softmax(device):
    logits = ember.tensor(rng("gumbel").standard_normal((4, 5)), device=device,
                          requires_grad=True)
    ember.manual_seed(7)
    soft = F.gumbel_softmax(logits, tau=0.5)
    ember.manual_seed(7)
    again = F.gumbel_softmax(logits.detach().cpu(), tau=0.5)   # the same host stream
    close(soft, to_numpy(again), "seeded", rtol=1e-12)
    close(soft.sum(-1), np.ones(4), "rows sum to one")
    ember.manual_seed(7)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    one_hot = np.eye(5)[to_numpy(soft.cpu()).argmax(-1)]
    np.testing.assert_array_equal(to_numpy(hard.cpu()), one_hot)
    # straight-through: the hard sample's gradient is the soft sample's
    upstream = ember.tensor(rng("gumbel upstream").standard_normal((4, 5)), device=device)
    (g_hard,) = ember.autograd.grad(hard, logits, upstream)
    (g_soft,) = ember.autograd.grad(soft, logits, upstream)
    close(g_hard, to_numpy(g_soft.cpu()), "straight-through", rtol=1e-10)
    ember.manual_seed(8)
    assert not np.array_equal(to_numpy(F.gumbel_softmax(logits).cpu()), to_numpy(soft.cpu()))


def test_gumbel_softmax_samples_the_softmax():
    """argmax of logits + Gumbel noise is a draw from softmax(logits)."""
    p = np.array([0.5, 0.3, 0.15, 0.05])
    logits = ember.tensor(np.log(np.tile(p, (4000, 1))))
    ember.manual_seed(11)
    hard = F.gumbel_softmax(logits, hard=True, dim=1)
    np.testing.assert_allclose(to_numpy(hard).mean(0), p, atol=0.025)
    ember.manual_seed(11)
    columns = F.gumbel_softmax(logits.mT, hard=True, dim=0)     # along another dim
    np.testing.assert_array_equal(to_numpy(columns).sum(0), np.ones(4000))
    np.testing.assert_allclose(to_numpy(columns).mean(1), p, atol=0.025)


def test_errors_name_the_function():
    with pytest.raises(ember.ShapeError, match="glu: halving dimension must be even"):
        F.glu(ember.ones(2, 3))
    with pytest.raises(ember.ShapeError, match="prelu: weight has 3 values"):
        nn.PReLU(3)(ember.ones(2, 4))
    with pytest.raises(ember.ShapeError, match="Softmax2d: expected a 3-D or 4-D"):
        nn.Softmax2d()(ember.ones(2, 2))


UNDERSCORED = [("relu_", {}), ("elu_", dict(alpha=0.5)), ("leaky_relu_", dict(negative_slope=0.2)),
               ("hardtanh_", dict(min_val=-0.5, max_val=2.0)), ("selu_", {}),
               ("celu_", dict(alpha=0.7)), ("threshold_", dict(threshold=0.3, value=-2.0)),
               ("rrelu_", dict(lower=0.1, upper=0.3))]


@pytest.mark.parametrize("fn,kwargs", UNDERSCORED, ids=[u[0] for u in UNDERSCORED])
def test_underscored_functional_forms(torch, fn, kwargs):
    """F.relu_ & co. (torch's in-place functional names): write into the input, return
    it, values and gradients of a non-leaf as torch's; on a leaf that requires grad both
    refuse (rrelu_ in eval form: torch's default training=False)."""
    x = randn(4, 6) * 3
    up = randn(4, 6)
    got = {}
    for lib in (torch, ember):
        leaf = lib.tensor(x, requires_grad=True)
        y = leaf * 1.0
        out = getattr(lib.nn.functional, fn)(y, **kwargs)
        assert out is y
        (out * lib.tensor(up)).sum().backward()
        got[lib.__name__] = (to_numpy(y), to_numpy(leaf.grad))
        with pytest.raises((RuntimeError, ember.EmberError)):
            getattr(lib.nn.functional, fn)(lib.tensor(x, requires_grad=True), **kwargs)
    for a, b in zip(got["ember"], got["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_rrelu_training_draws_slopes_in_range(torch, device):
    """rrelu in training: each negative element scaled by its own slope in [lower, upper],
    positives untouched, the gradient the same slope; eval mode the mean slope (torch's)."""
    ember.manual_seed(0)
    x = ember.tensor(-np.abs(randn(200, 50)) - 0.1, device=device, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slope = (y / x).detach().numpy()
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6
    assert slope.std() > 0.04                              # really drawn per element
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-5)
    pos = ember.tensor(np.abs(randn(3, 4)), device=device)
    np.testing.assert_array_equal(F.rrelu(pos, training=True).numpy(), pos.numpy())
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    xe = randn(3, 4)
    tm = torch.nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(m(ember.tensor(xe, device=device)).numpy(),
                               tm(torch.tensor(xe)).numpy(), rtol=1e-6)
    assert repr(m) == repr(tm)
    with pytest.raises(ember.EmberError, match="lower <= upper"):
        F.rrelu(pos, 0.5, 0.2)
