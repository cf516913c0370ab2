"""Helpers for the nn/optim tests: ember <-> torch conversion, twin layers, side-by-side checks."""
from __future__ import annotations

import zlib

import ember
import numpy as np


def to_ember(t, requires_grad: bool = False) -> ember.Tensor:
    """A torch tensor's values as an ember tensor (same dtype)."""
    arr = np.array(t.detach().cpu().numpy(), copy=True)
    return ember.tensor(arr, requires_grad=requires_grad)


def to_numpy(x) -> np.ndarray:
    if isinstance(x, ember.Tensor):
        return x.detach().numpy()
    return x.detach().cpu().numpy()


def copy_weights(torch_module, ember_module) -> None:
    """Load a torch module's state dict into the ember twin (same keys and shapes)."""
    ember_module.load_state_dict({k: to_ember(v) for k, v in
                                  torch_module.state_dict().items()})


def check_layer(torch, tmod, emod, *arrays, rtol=1e-7, atol=1e-9, kwargs=None,
                seed=0) -> None:
    """Forward and backward of a torch module and its ember twin (weights copied) on the
    same inputs: outputs, input gradients and parameter gradients must agree."""
    kwargs = kwargs or {}
    copy_weights(tmod, emod)
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    e_in = [ember.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    t_out, e_out = tmod(*t_in, **kwargs), emod(*e_in, **kwargs)
    if isinstance(t_out, tuple):
        t_out, e_out = t_out[0], e_out[0]
    np.testing.assert_allclose(to_numpy(e_out), to_numpy(t_out), rtol=rtol, atol=atol,
                               err_msg="forward")
    upstream = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream, dtype=t_out.dtype))
    e_out.backward(ember.tensor(upstream, dtype=e_out.dtype))
    for i, (t, e) in enumerate(zip(t_in, e_in)):
        if t.grad is not None:
            np.testing.assert_allclose(to_numpy(e.grad), to_numpy(t.grad), rtol=rtol,
                                       atol=atol, err_msg=f"grad of input {i}")
    t_params = dict(tmod.named_parameters())
    for name, p in emod.named_parameters():
        q = t_params[name]
        if q.grad is None:
            assert p.grad is None, name
            continue
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(q.grad), rtol=rtol, atol=atol,
                                   err_msg=f"grad of {name}")


def device_params():
    """pytest.param for every available device besides the CPU, with a skip mark where
    none is available (or a device type is known but not usable here)."""
    import pytest
    from ember.testing import devices_under_test
    params = [pytest.param(d, marks=[pytest.mark.skip(reason=reason)] if reason else [],
                           id=d) for d, reason in devices_under_test()
              if not d.startswith("cpu")]
    return params or [pytest.param("none", marks=pytest.mark.skip(
        reason="no device besides the CPU"), id="none")]


def rng(name: str) -> np.random.Generator:
    """A generator seeded from a test's own name (a stable hash)."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def twin64(torch, name: str, *args, **kwargs):
    """The same layer from torch.nn and ember.nn in float64, ember's weights copied from
    torch's."""
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    e = getattr(ember.nn, name)(*args, **kwargs, dtype=ember.float64)
    copy_weights(t, e)
    return t, e


def train_side_by_side(torch, models, optimizer: str, batches, loss_fn, clip=None,
                       **opt_kwargs) -> dict:
    """The losses of training (torch model, ember model) on the same batches with the
    named optimizer: {"torch": [...], "ember": [...]}.  loss_fn(lib, model, batch) gives
    the loss; clip (a max norm) clips the gradients before each step."""
    losses = {}
    for lib, model in zip((torch, ember), models):
        opt = getattr(lib.optim, optimizer)(model.parameters(), **opt_kwargs)
        log = losses[lib.__name__] = []
        for batch in batches:
            opt.zero_grad()
            loss = loss_fn(lib, model, batch)
            loss.backward()
            if clip is not None:
                lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            log.append(float(loss.item()))
    return losses


def check_outputs_and_grads(torch, t_outs, e_outs, t_inputs, e_inputs, t_mod, e_mod, r,
                            rtol=1e-9, atol=1e-11) -> None:
    """Every output (None ones skipped) agrees; then one random upstream gradient per
    output gives the same gradients of the inputs and of every parameter."""
    t_outs = [o for o in t_outs if o is not None]
    e_outs = [o for o in e_outs if o is not None]
    assert len(t_outs) == len(e_outs)

    def close(a, b, what):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=rtol, atol=atol,
                                   err_msg=what)
    for i, (a, b) in enumerate(zip(e_outs, t_outs)):
        close(a, b, f"output {i}")
    ups = [r.standard_normal(tuple(o.shape)) for o in t_outs]
    torch.autograd.backward(t_outs, [torch.tensor(u) for u in ups])
    ember.autograd.backward(e_outs, [ember.tensor(u) for u in ups])
    for i, (a, b) in enumerate(zip(e_inputs, t_inputs)):
        close(a.grad, b.grad, f"grad of input {i}")
    t_params = dict(t_mod.named_parameters())
    assert [n for n, _ in e_mod.named_parameters()] == list(t_params)
    for name, p in e_mod.named_parameters():
        if t_params[name].grad is None:
            assert p.grad is None or not np.any(to_numpy(p.grad)), name
        else:
            close(p.grad, t_params[name].grad, f"grad of {name}")


def cpu_and_devices():
    """pytest.param for the CPU and every other available device (see device_params)."""
    import pytest
    return [pytest.param("cpu", id="cpu"), *device_params()]


def cpu_and_opencl():
    """pytest.param for the CPU and opencl:0 (skipped where there is none): the layers the
    OpenCL backend was written for are checked there, other plugins test their own."""
    import pytest
    return [pytest.param("cpu", id="cpu"),
            *([p for p in device_params() if p.id == "opencl:0"]
              or [pytest.param("opencl:0", marks=pytest.mark.skip(reason="no opencl:0"),
                               id="opencl:0")])]


def twin(torch, name, *args, **kwargs):
    """The same layer built by torch.nn and ember.nn, both float64."""
    return (getattr(torch.nn, name)(*args, **kwargs).double(),
            getattr(ember.nn, name)(*args, **kwargs).double())


def loaded_twin(torch, name, *args, **kwargs):
    """torch.nn.name and ember.nn.name in float64; torch's weights randomised (so loading
    them is visible), the ember twin loaded from torch's state_dict."""
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.randn_like(p))
    e = getattr(ember.nn, name)(*args, **kwargs, dtype=ember.float64)
    t_state = t.state_dict()
    assert list(e.state_dict()) == list(t_state)
    assert [tuple(v.shape) for v in e.state_dict().values()] == \
        [tuple(v.shape) for v in t_state.values()]
    result = e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_state.items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    return t, e


def close(got, want, what, rtol=1e-7, atol=1e-9):
    """An ember tensor (on any device) or array against a torch tensor or array."""
    if isinstance(got, ember.Tensor):
        got = to_numpy(got.to("cpu"))
    want = want if isinstance(want, np.ndarray) else to_numpy(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def compare(torch, name, device, t_call, e_call, floats, ints=(), t_mod=None, e_mod=None):
    """t_call(*torch tensors) and e_call(*ember tensors on device) agree: the output, and
    with a random upstream gradient the gradients of every float input and parameter."""
    r = rng(name)
    t_in = [torch.tensor(a, requires_grad=True) for a in floats]
    e_in = [ember.tensor(a, device=device, requires_grad=True) for a in floats]
    t_out = t_call(*t_in, *[torch.tensor(i) for i in ints])
    e_out = e_call(*e_in, *[ember.tensor(i, device=device) for i in ints])
    assert str(e_out.device) == device
    close(e_out, t_out, f"{name}: forward")
    upstream = r.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream))
    e_out.backward(ember.tensor(upstream, device=device))
    for i, (t, e) in enumerate(zip(t_in, e_in)):
        close(e.grad, t.grad, f"{name}: grad of input {i}")
    if t_mod is not None:
        t_params = dict(t_mod.named_parameters())
        assert [n for n, _ in e_mod.named_parameters()] == list(t_params)
        for key, p in e_mod.named_parameters():
            close(p.grad, t_params[key].grad, f"{name}: grad of {key}")


def compare_modules(torch, t_mod, e_mod, arrays, grads, name, device):
    """Outputs, then the gradients of the chosen inputs under one random upstream gradient."""
    t_args = [torch.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    e_args = [ember.tensor(a, device=device, requires_grad=i in grads)
              for i, a in enumerate(arrays)]
    t_out, e_out = t_mod(*t_args), e_mod(*e_args)
    assert tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(to_numpy(e_out.to("cpu")), to_numpy(t_out), rtol=1e-9,
                               atol=1e-12, err_msg="forward")
    upstream = rng(name + "upstream").standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream))
    e_out.backward(ember.tensor(upstream, device=device))
    for i in grads:
        np.testing.assert_allclose(to_numpy(e_args[i].grad.to("cpu")),
                                   to_numpy(t_args[i].grad), rtol=1e-8, atol=1e-11,
                                   err_msg=f"grad of input {i}")


def copy_state(tmod, emod, device):
    """Load torch's state_dict into the ember twin, on device."""
    emod.load_state_dict({k: ember.tensor(v.detach().numpy(), device=device)
                          for k, v in tmod.state_dict().items()})


def forward_backward(torch, tmod, emod, x, device, name):
    """One input through both modules: the output, the input's and every parameter's
    gradient under a random upstream gradient (float64 tolerances)."""
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


def randn_stream(seed: int = 0):
    """randn(*shape): standard normal draws from one seeded stream (one per test module)."""
    stream = np.random.default_rng(seed)
    return lambda *shape: stream.standard_normal(shape)


def check_functional(torch, device, name, fn, shape, F):
    """fn(torch.nn.functional, x) and fn(ember.nn.functional, x) agree, forward and backward."""
    x = rng(name).standard_normal(shape)
    compare(torch, name, device, lambda t: fn(torch.nn.functional, t), lambda e: fn(F, e), [x])


def check_stateless(torch, device, name, args, shape, nn):
    """torch.nn.<name>(*args) and ember.nn.<name>(*args): same repr, no state, same values."""
    t, e = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict()) == []
    x = rng(f"{name}{args}").standard_normal(shape) * 3
    compare(torch, f"{name}{args}", device, t, e, [x])


def check_parameter_module(torch, device, name, args, kwargs, shape):
    """torch.nn.<name> and ember.nn.<name> with the same parameters: same repr, values and
    gradients (parameters' too) on device."""
    torch.manual_seed(3)
    t, e = loaded_twin(torch, name, *args, **kwargs)
    assert repr(e) == repr(t)
    e.to(device)
    compare(torch, f"{name}{args}", device, t, e,
            [rng(f"{name}{args}").standard_normal(shape)], t_mod=t, e_mod=e)
