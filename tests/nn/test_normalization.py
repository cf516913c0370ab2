"""Normalisation layers and their functional forms (nn.normalization) against PyTorch: batch,
layer, group, instance, RMS and local response norms, on the CPU and devices."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember.autograd import gradcheck
from nn_helpers import (
    check_functional,
    check_layer,
    check_parameter_module,
    close,
    copy_weights,
    cpu_and_devices,
    cpu_and_opencl,
    forward_backward,
    randn_stream,
    rng,
    to_numpy,
    twin,
)

DEVICES = cpu_and_devices()
randn = randn_stream(0)


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (6, 4, 5)),
                                        ("BatchNorm2d", (4, 4, 3, 5)),
                                        ("BatchNorm3d", (3, 4, 2, 3, 2)),
                                        ("SyncBatchNorm", (4, 4, 3, 2))])
def test_batch_norm_train_then_eval(torch, name, shape, momentum):
    t, e = twin(torch, name, 4, momentum=momentum)
    for step in range(3):
        check_layer(torch, t, e, randn(*shape) * 2 + 1, seed=step)
        copy_weights(t, e)
    for key, value in t.state_dict().items():
        np.testing.assert_allclose(to_numpy(e.state_dict()[key]), to_numpy(value),
                                   err_msg=key)
    assert int(e.num_batches_tracked.item()) == 3 and e.num_batches_tracked.dtype == ember.int64
    t.eval()
    e.eval()
    check_layer(torch, t, e, randn(*shape))
    assert repr(e) == repr(t)


def test_convert_sync_batchnorm_keeps_parameters_and_statistics(torch):
    """One process (ember.distributed not initialised): SyncBatchNorm is BatchNorm, as
    PyTorch's; convert_sync_batchnorm swaps the modules and keeps what they hold."""
    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 1), lib.nn.BatchNorm2d(4),
                                 lib.nn.Sequential(lib.nn.BatchNorm1d(4)))
    t, e = build(torch).double(), build(ember).double()
    x = randn(3, 2, 2, 2)
    t[0](torch.tensor(x))
    copy_weights(t, e)
    ts = torch.nn.SyncBatchNorm.convert_sync_batchnorm(t)
    es = nn.SyncBatchNorm.convert_sync_batchnorm(e)
    assert type(es[1]) is nn.SyncBatchNorm and type(es[2][0]) is nn.SyncBatchNorm
    assert type(es[0]) is nn.Conv2d and list(es.state_dict()) == list(ts.state_dict())
    assert es[1].weight is e[1].weight and es[1].running_mean is e[1].running_mean
    check_layer(torch, ts[1], es[1], randn(3, 4, 2, 2))
    for key, value in ts.state_dict().items():
        np.testing.assert_allclose(to_numpy(es.state_dict()[key]), to_numpy(value),
                                   err_msg=key)
    assert repr(es) == repr(ts)


def test_sync_batchnorm_refuses_several_processes(monkeypatch):
    layer = nn.SyncBatchNorm(3)
    monkeypatch.setattr(nn.SyncBatchNorm, "_world_size", lambda self: 2)
    with pytest.raises(ember.errors.NotInEmberError, match="across 2 processes"):
        layer(ember.ones(2, 3))
    layer.eval()                          # eval uses the running statistics: no syncing
    assert layer(ember.ones(2, 3)).shape == (2, 3)


def test_batch_norm_without_affine_or_stats(torch):
    t, e = twin(torch, "BatchNorm2d", 3, affine=False, track_running_stats=False)
    check_layer(torch, t, e, randn(4, 3, 2, 2))
    t.eval()
    e.eval()
    check_layer(torch, t, e, randn(4, 3, 2, 2))
    assert list(e.state_dict()) == list(t.state_dict()) == []


@pytest.mark.parametrize("shape,normalized", [((4, 6), 6), ((2, 3, 4, 5), (4, 5))])
def test_layer_norm(torch, shape, normalized):
    t, e = twin(torch, "LayerNorm", normalized)
    with torch.no_grad():
        t.weight.normal_()
        t.bias.normal_()
    check_layer(torch, t, e, randn(*shape))
    assert repr(e) == repr(t)


def test_group_norm(torch):
    t, e = twin(torch, "GroupNorm", 3, 6)
    with torch.no_grad():
        t.weight.normal_()
        t.bias.normal_()
    check_layer(torch, t, e, randn(2, 6, 4, 3))
    assert repr(e) == repr(t)


@pytest.mark.parametrize("name,shape,kw", [
    ("InstanceNorm1d", (3, 4, 7), {}), ("InstanceNorm2d", (2, 3, 4, 5), {"affine": True}),
    ("InstanceNorm2d", (3, 4, 5), {}), ("InstanceNorm3d", (2, 2, 3, 3, 4), {"affine": True}),
    ("InstanceNorm2d", (2, 3, 4, 5), {"track_running_stats": True, "momentum": 0.3}),
])
def test_instance_norm_matches_torch(torch, name, shape, kw):
    r = rng(name + str(kw))
    channels = shape[1] if len(shape) > {"InstanceNorm1d": 2, "InstanceNorm2d": 3,
                                          "InstanceNorm3d": 4}[name] else shape[0]
    tmod = getattr(torch.nn, name)(channels, **kw).double()
    emod = getattr(ember.nn, name)(channels, **kw)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    for _ in range(2):                                 # running statistics move each step
        check_layer(torch, tmod, emod, r.standard_normal(shape), rtol=1e-6, atol=1e-8)
    if kw.get("track_running_stats"):
        for k, v in tmod.state_dict().items():
            np.testing.assert_allclose(emod.state_dict()[k].numpy(), v.numpy(), rtol=1e-6)
        tmod.eval()
        emod.eval()
        check_layer(torch, tmod, emod, r.standard_normal(shape), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_instance_norm_on_every_device(device):
    x = ember.randn(2, 3, 4, 4, device=device, requires_grad=True)
    layer = ember.nn.InstanceNorm2d(3, affine=True).to(device)
    out = layer(x)
    flat = out.detach().numpy().reshape(2, 3, -1)
    np.testing.assert_allclose(flat.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(flat.var(-1), 1, rtol=1e-3)
    out.sum().backward()
    assert x.grad.shape == x.shape and layer.weight.grad is not None


FUNCTIONS = [
    ("rms_norm", lambda F, x: F.rms_norm(x, (3, 4)), (2, 3, 4)),
    ("rms_norm:eps", lambda F, x: F.rms_norm(x, (4,), eps=0.5), (2, 3, 4)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,shape", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_functional_matches_torch(torch, device, name, fn, shape):
    check_functional(torch, device, name, fn, shape, F)


MODULES = [
    ("RMSNorm", ((3, 4),), {}, (2, 3, 4)),
    ("RMSNorm", (4,), dict(eps=1e-2, elementwise_affine=False), (2, 3, 4)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,kwargs,shape", MODULES,
                         ids=[f"{m[0]}{m[1]}{m[2]}" for m in MODULES])
def test_parameter_modules_match_torch(torch, device, name, args, kwargs, shape):
    check_parameter_module(torch, device, name, args, kwargs, shape)


def test_rms_norm_initialises_like_torch(torch):
    np.testing.assert_array_equal(to_numpy(nn.RMSNorm((2, 3)).weight), np.ones((2, 3)))
    assert nn.RMSNorm(3, elementwise_affine=False).weight is None
    x = rng("rms eps").standard_normal((2, 3)).astype(np.float32) * 1e-4
    # eps=None is the dtype's machine epsilon, as in torch
    close(F.rms_norm(ember.tensor(x), (3,)),
          torch.nn.functional.rms_norm(torch.tensor(x), (3,)), "float32 eps", rtol=1e-6)


@pytest.mark.parametrize("device", cpu_and_opencl())
@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((1, 4, 2, 3), 2),
                                        ((2, 3, 2, 2, 2), 5)])
def test_local_response_norm_matches_torch(torch, device, shape, size):
    tmod = torch.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=1.5)
    emod = ember.nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=1.5)
    assert repr(emod) == repr(tmod)
    forward_backward(torch, tmod, emod, rng(f"lrn{shape}").standard_normal(shape), device,
                      "local_response_norm")
    with pytest.raises(ember.ShapeError, match="3D or higher"):
        ember.nn.functional.local_response_norm(ember.zeros(2, 3), 2)


GRADCHECK = [
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     [(4, 3, 2), (3,), (3,)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    ("group_norm", lambda x: F.group_norm(x, 2), [(2, 4, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, shapes):
    inputs = [ember.tensor(randn(*s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, inputs)


def test_errors_name_the_layer():
    with pytest.raises(ember.ShapeError, match="BatchNorm2d: expected a 4-D input"):
        nn.BatchNorm2d(3)(ember.randn(2, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(ember.randn(1, 3))
    with pytest.raises(ember.ShapeError, match="layer_norm"):
        nn.LayerNorm(5)(ember.randn(2, 4))
    with pytest.raises(ember.ShapeError, match="rms_norm: input of shape"):
        F.rms_norm(ember.ones(2, 3), (4,))


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_native_norms_return_torchs_statistics(torch, device):
    """torch.native_batch_norm/layer_norm/group_norm: the outputs, the statistics (shapes,
    values, whether they are in the graph: only group norm's are) and the gradients for
    random upstream gradients on every output torch differentiates; the running statistics
    move as torch's."""
    r = rng("native_norms")
    x = r.standard_normal((4, 6, 5)).astype(np.float32)
    w, b = (r.standard_normal(6).astype(np.float32) for _ in range(2))
    stats = (r.standard_normal(6).astype(np.float32), r.random(6).astype(np.float32) + 0.5)
    for name, t_args, e_args in (      # e_args: the leaves whose gradients are compared
            ("native_batch_norm", lambda T, t: (t["w"], t["b"], t["rm"], t["rv"], True, 0.3,
                                                1e-5), None),
            # eval: torch's own backward fails for weight and bias (it reads the empty saved
            # statistics), so only the input's gradient is compared
            ("native_batch_norm", lambda T, t: (t["w"], t["b"], t["rm"], t["rv"], False, 0.3,
                                                1e-5), ("x",)),
            ("native_batch_norm", lambda T, t: (None, None, None, None, True, 0.1, 1e-3),
             None),
            ("native_layer_norm", lambda T, t: ((6, 5), None, None, 1e-5), None),
            ("native_layer_norm", lambda T, t: ((5,), t["b5"], t["w5"], 1e-5), None),
            ("native_group_norm", lambda T, t: (t["w"], t["b"], 4, 6, 5, 3, 1e-5), None),
            ("native_group_norm", lambda T, t: (t["w"], None, 4, 6, 5, 2, 1e-2), None)):
        tt = {"x": torch.tensor(x, requires_grad=True), "w": torch.tensor(w, requires_grad=True),
              "b": torch.tensor(b, requires_grad=True), "rm": torch.tensor(stats[0]),
              "rv": torch.tensor(stats[1]), "w5": torch.tensor(w[:5], requires_grad=True),
              "b5": torch.tensor(b[:5], requires_grad=True)}
        et = {k: ember.tensor(v.detach().numpy(), device=device,
                              requires_grad=v.requires_grad) for k, v in tt.items()}
        to = getattr(torch, name)(tt["x"], *t_args(torch, tt))
        eo = getattr(ember, name)(et["x"], *t_args(ember, et))
        for i, (t, e) in enumerate(zip(to, eo)):
            assert tuple(e.shape) == tuple(t.shape), (name, i)
            assert e.requires_grad == t.requires_grad, (name, i)
            close(e, t, f"{name} output {i}", rtol=1e-5, atol=1e-5)
        for k in ("rm", "rv"):
            close(et[k], tt[k], f"{name} running statistic {k}", rtol=1e-6, atol=1e-6)
        outs = [(t, e) for t, e in zip(to, eo) if t.requires_grad]
        ups = [r.standard_normal(tuple(t.shape)).astype(np.float32) for t, _ in outs]
        leaves = [k for k in e_args or ("x", "w", "b", "w5", "b5") if tt[k].requires_grad]
        tg = torch.autograd.grad([t for t, _ in outs], [tt[k] for k in leaves],
                                 [torch.tensor(u) for u in ups], allow_unused=True)
        eg = ember.autograd.grad([e for _, e in outs], [et[k] for k in leaves],
                                 [ember.tensor(u, device=device) for u in ups],
                                 allow_unused=True)
        for k, t, e in zip(leaves, tg, eg):
            if t is None:
                assert e is None or not np.any(to_numpy(e)), (name, k)
                continue
            close(e, t, f"{name} gradient of {k}", rtol=1e-4, atol=1e-4)


def test_native_norm_errors_are_ember_errors():
    x = ember.ones(2, 6, 3)
    for call, match in (
            (lambda: ember.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5),
             "running_mean"),
            (lambda: ember.native_batch_norm(ember.ones(3), None, None, None, None, True, 0.1,
                                             1e-5), "channel"),
            (lambda: ember.native_layer_norm(x, (4,), None, None, 1e-5), "normalized_shape"),
            (lambda: ember.native_group_norm(x, None, None, 2, 6, 3, 4, 1e-5), "divisible"),
            (lambda: ember.native_group_norm(x, None, None, 2, 6, 4, 3, 1e-5), "HxW"),
            (lambda: ember.native_group_norm(x, ember.ones(5), None, 2, 6, 3, 3, 1e-5),
             "weight")):
        with pytest.raises(ember.EmberError, match=match):
            call()
