"""Adamax/NAdam/RAdam, autograd.functional, checkpoint, weight/spectral norm,
LocalResponseNorm and Bilinear against PyTorch."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import device_params, rng, to_numpy

# the CPU and OpenCL (PoCL), as the issue asks; other plugins' devices are theirs to test
DEVICES = [pytest.param("cpu", id="cpu"),
           *([p for p in device_params() if p.id == "opencl:0"]
             or [pytest.param("opencl:0", marks=pytest.mark.skip(reason="no opencl:0"),
                              id="opencl:0")])]

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


# -- ember.autograd.functional ----------------------------------------------------------
def _pair(lib):
    def f(x, y):
        return (x * y.sum()).sin(), (x ** 2).sum() * y
    return f


def _scalar(lib):
    def f(x, y):
        return ((x ** 3).sum() * y.exp().sum()) + (x[:2] * y).sum()
    return f


def _close(e, t, what):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t), what
        for i, (a, b) in enumerate(zip(e, t)):
            _close(a, b, f"{what}[{i}]")
        return
    assert isinstance(e, ember.Tensor), what
    assert tuple(e.shape) == tuple(t.shape), what
    np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-10, atol=1e-12,
                               err_msg=what)


@pytest.mark.parametrize("device", DEVICES)
def test_autograd_functional_matches_torch(torch, device):
    import ember.autograd.functional as EF
    import torch.autograd.functional as TF
    r = rng(f"functional{device}")
    xs = [r.standard_normal(3), r.standard_normal(2)]
    tx = tuple(torch.tensor(a) for a in xs)
    ex = tuple(ember.tensor(a, device=device) for a in xs)
    vo = [r.standard_normal(3), r.standard_normal(2)]
    tvo = tuple(torch.tensor(a) for a in vo)
    evo = tuple(ember.tensor(a, device=device) for a in vo)
    _close(EF.jacobian(_pair(ember), ex), TF.jacobian(_pair(torch), tx), "jacobian")
    _close(EF.jacobian(lambda x: x.sin() * 2, ex[0]),
           TF.jacobian(lambda x: x.sin() * 2, tx[0]), "jacobian single")
    _close(EF.jacobian(lambda x: (x.exp(), x * 3), ex[0]),
           TF.jacobian(lambda x: (x.exp(), x * 3), tx[0]), "jacobian tuple out")
    _close(EF.hessian(_scalar(ember), ex), TF.hessian(_scalar(torch), tx), "hessian")
    _close(EF.hessian(lambda x: (x ** 3).prod(), ex[0]),
           TF.hessian(lambda x: (x ** 3).prod(), tx[0]), "hessian single")
    _close(EF.vjp(_pair(ember), ex, evo), TF.vjp(_pair(torch), tx, tvo), "vjp")
    vi = [r.standard_normal(3), r.standard_normal(2)]
    tv = tuple(torch.tensor(a) for a in vi)
    ev = tuple(ember.tensor(a, device=device) for a in vi)
    _close(EF.jvp(_pair(ember), ex, ev), TF.jvp(_pair(torch), tx, tv), "jvp")
    for name in ("vhp", "hvp"):
        _close(getattr(EF, name)(_scalar(ember), ex, ev),
               getattr(TF, name)(_scalar(torch), tx, tv), name)
    # an input the function ignores: zeros, or an error under strict=True
    _close(EF.jacobian(lambda x, y: x * 2, ex), TF.jacobian(lambda x, y: x * 2, tx),
           "unused")
    with pytest.raises(ember.AutogradError, match="independent of input 1"):
        EF.jacobian(lambda x, y: x * 2, ex, strict=True)


def test_autograd_functional_create_graph_and_errors(torch):
    import ember.autograd.functional as EF
    x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    _, g = EF.vjp(lambda t: (t ** 3).sum(), x, create_graph=True)
    g.sum().backward()           # through the vjp: d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(to_numpy(x.grad), 6 * to_numpy(x))
    out, g2 = EF.vjp(lambda t: (t ** 3).sum(), x)
    assert not g2.requires_grad and not out.requires_grad
    with pytest.raises(ember.AutogradError, match="single element"):
        EF.vjp(lambda t: t * 2, x)
    with pytest.raises(ember.ShapeError, match="entry 0 in v has shape"):
        EF.jvp(lambda t: t * 2, x, ember.ones(2))
    with pytest.raises(ember.AutogradError, match="hessian should return a single"):
        EF.hessian(lambda t: t * 2, x)


# -- ember.utils.checkpoint -------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_gradients_equal_plain(device):
    from ember.utils.checkpoint import checkpoint, checkpoint_sequential
    assert ember.utils.checkpoint.checkpoint is checkpoint      # torch.utils.checkpoint...
    nn = ember.nn
    ember.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Dropout(0.5), nn.Linear(6, 3),
                          nn.ReLU(), nn.Linear(3, 2)).to(device)
    x = ember.tensor(rng("ckpt").standard_normal((5, 4)), dtype=ember.float32,
                     device=device, requires_grad=True)

    def grads(run):
        model.zero_grad()
        x.grad = None
        ember.manual_seed(11)        # the same dropout mask in every variant
        run().square().sum().backward()
        return [to_numpy(p.grad) for p in model.parameters()] + [to_numpy(x.grad)]

    plain = grads(lambda: model(x))
    for variant in (lambda: checkpoint(model, x, use_reentrant=False),
                    lambda: checkpoint(lambda t, scale: model(t) * scale, x, 1.0,
                                       use_reentrant=True),
                    lambda: checkpoint_sequential(model, 3, x, use_reentrant=False)):
        for a, b in zip(grads(variant), plain):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # an input that needs no grad: the parameters inside still get theirs
    model.zero_grad()
    checkpoint(model, x.detach(), use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_checkpoint_recomputes_instead_of_keeping():
    from ember.utils.checkpoint import checkpoint
    calls = []

    def f(t):
        calls.append(1)
        return (t.sin() * 2).exp()

    x = ember.tensor([0.1, 0.2], requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2       # the backward ran the function again
    expected = np.exp(2 * np.sin([0.1, 0.2])) * 2 * np.cos([0.1, 0.2])
    np.testing.assert_allclose(to_numpy(x.grad), expected, rtol=1e-6)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(f, x)
    with pytest.raises(ember.EmberError, match="must return a Tensor"):
        checkpoint(lambda t: 3, x, use_reentrant=False)


# -- weight_norm / spectral_norm --------------------------------------------------------
def _copy_state(tmod, emod, device):
    emod.load_state_dict({k: ember.tensor(v.detach().numpy(), device=device)
                          for k, v in tmod.state_dict().items()})


def _forward_backward(torch, tmod, emod, x, device, name):
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, device=device, requires_grad=True)
    tout, eout = tmod(tx), emod(ex)
    np.testing.assert_allclose(to_numpy(eout), to_numpy(tout), rtol=1e-9, atol=1e-11,
                               err_msg=f"{name} forward")
    up = rng(f"up{name}").standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(up))
    eout.backward(ember.tensor(up, device=device))
    np.testing.assert_allclose(to_numpy(ex.grad), to_numpy(tx.grad), rtol=1e-9, atol=1e-11)
    tparams = dict(tmod.named_parameters())
    for k, p in emod.named_parameters():
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(tparams[k].grad), rtol=1e-9,
                                   atol=1e-11, err_msg=f"{name} grad of {k}")


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch, device, dim):
    torch.manual_seed(0)
    tmod = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    emod = ember.nn.utils.weight_norm(ember.nn.Linear(4, 3, dtype=ember.float64), dim=dim)
    emod.to(device)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert tuple(emod.weight_g.shape) == tuple(tmod.weight_g.shape)
    _copy_state(tmod, emod, device)
    x = rng(f"wn{dim}").standard_normal((5, 4))
    _forward_backward(torch, tmod, emod, x, device, f"weight_norm{dim}")
    torch.nn.utils.remove_weight_norm(tmod)
    ember.nn.utils.remove_weight_norm(emod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    np.testing.assert_allclose(to_numpy(emod.weight), to_numpy(tmod.weight), rtol=1e-12)
    with pytest.raises(ember.EmberError, match="weight_norm of 'weight' not found"):
        ember.nn.utils.remove_weight_norm(emod)


@pytest.mark.parametrize("device", DEVICES)
def test_spectral_norm_matches_torch(torch, device):
    torch.manual_seed(1)
    tmod = torch.nn.utils.spectral_norm(torch.nn.Conv2d(2, 3, 2).double(),
                                        n_power_iterations=2)
    emod = ember.nn.utils.spectral_norm(ember.nn.Conv2d(2, 3, 2, dtype=ember.float64),
                                        n_power_iterations=2)
    emod.to(device)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert [k for k, _ in emod.named_buffers()] == ["weight_u", "weight_v"]
    _copy_state(tmod, emod, device)
    x = rng("sn").standard_normal((2, 2, 4, 4))
    for step in range(2):               # training: the power iteration updates u and v
        _forward_backward(torch, tmod, emod, x, device, f"spectral_norm{step}")
        np.testing.assert_allclose(to_numpy(emod.weight_u), to_numpy(tmod.weight_u),
                                   rtol=1e-9, atol=1e-12)
        tmod.zero_grad()
        emod.zero_grad()
    tmod.eval()
    emod.eval()
    u = to_numpy(emod.weight_u).copy()
    _forward_backward(torch, tmod, emod, x, device, "spectral_norm eval")
    np.testing.assert_array_equal(to_numpy(emod.weight_u), u)      # eval: no iteration
    torch.nn.utils.remove_spectral_norm(tmod)
    ember.nn.utils.remove_spectral_norm(emod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    np.testing.assert_allclose(to_numpy(emod.weight), to_numpy(tmod.weight), rtol=1e-9)


# -- LocalResponseNorm, Bilinear --------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((1, 4, 2, 3), 2),
                                        ((2, 3, 2, 2, 2), 5)])
def test_local_response_norm_matches_torch(torch, device, shape, size):
    tmod = torch.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=1.5)
    emod = ember.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=1.5)
    assert repr(emod) == repr(tmod)
    _forward_backward(torch, tmod, emod, rng(f"lrn{shape}").standard_normal(shape), device,
                      "local_response_norm")
    with pytest.raises(ember.ShapeError, match="3D or higher"):
        ember.nn.functional.local_response_norm(ember.zeros(2, 3), 2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(torch, device, bias):
    tmod = torch.nn.Bilinear(3, 4, 2, bias=bias).double()
    emod = ember.nn.Bilinear(3, 4, 2, bias=bias, dtype=ember.float64)
    assert repr(emod) == repr(tmod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    assert tuple(emod.weight.shape) == (2, 3, 4)
    bound = 1 / np.sqrt(3)              # torch's init: U(-1/sqrt(in1), 1/sqrt(in1))
    assert np.abs(to_numpy(emod.weight)).max() <= bound
    emod.to(device)
    _copy_state(tmod, emod, device)
    r = rng(f"bilinear{bias}")
    a, b = r.standard_normal((2, 5, 3)), r.standard_normal((2, 5, 4))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    ea, eb = (ember.tensor(v, device=device, requires_grad=True) for v in (a, b))
    tout, eout = tmod(ta, tb), emod(ea, eb)
    np.testing.assert_allclose(to_numpy(eout), to_numpy(tout), rtol=1e-10, atol=1e-12)
    up = r.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(up))
    eout.backward(ember.tensor(up, device=device))
    for e, t in [(ea, ta), (eb, tb), *zip(emod.parameters(), tmod.parameters())]:
        np.testing.assert_allclose(to_numpy(e.grad), to_numpy(t.grad), rtol=1e-10,
                                   atol=1e-12)
    with pytest.raises(ember.ShapeError, match="bilinear: expected inputs"):
        emod(ember.zeros(5, 3, dtype=ember.float64, device=device),
             ember.zeros(5, 3, dtype=ember.float64, device=device))
