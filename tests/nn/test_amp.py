"""ember.amp: autocast regions and GradScaler, against torch.amp where torch runs them."""
from __future__ import annotations

import threading
import zlib

import ember
import ember.nn as nn
import numpy as np
import pytest
from ember import amp
from nn_helpers import copy_weights, device_params, to_numpy


def test_autocast_regions_nest_and_decorate(torch):
    assert ember.autocast is amp.autocast
    assert not torch.is_autocast_enabled("cpu") and not amp.is_autocast_enabled("cpu")
    seen = []

    def state(lib):
        if lib is torch:
            return torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
        return amp.is_autocast_enabled("cpu"), amp.get_autocast_dtype("cpu")

    for lib in (torch, ember):
        log = []
        with lib.autocast("cpu"):
            log.append(state(lib))
            with lib.autocast("cpu", enabled=False):
                log.append(state(lib))
                with lib.autocast(device_type="cpu", dtype=lib.float16):
                    log.append(state(lib))
                log.append(state(lib))
            log.append(state(lib))
        log.append(state(lib))

        @lib.autocast("cpu", dtype=lib.bfloat16)
        def inside(lib=lib):
            return state(lib)
        log.append(inside())
        log.append(state(lib))
        seen.append([(on, str(dtype).replace("torch.", "").replace("ember.", ""))
                     for on, dtype in log])
    assert seen[0] == seen[1]


def test_autocast_keeps_dtypes_and_is_per_thread():
    x = ember.randn(3, 4)
    layer = nn.Linear(4, 2)
    with ember.autocast("cuda"):
        assert amp.is_autocast_enabled("cuda") and not amp.is_autocast_enabled("cpu")
        assert amp.get_autocast_dtype("cuda") is ember.float16
        assert layer(x).dtype is ember.float32          # ember computes in float32
        other = []
        thread = threading.Thread(target=lambda: other.append(amp.is_autocast_enabled("cuda")))
        thread.start()
        thread.join()
        assert other == [False]
    with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"), \
            ember.cuda.amp.autocast(dtype=ember.bfloat16):            # deprecated, as torch's
        assert amp.get_autocast_dtype("cuda") is ember.bfloat16
    with ember.autocast("cuda:0"):
        assert amp.is_autocast_enabled("cuda")
    assert not amp.is_autocast_enabled("cuda")
    with pytest.raises(ember.EmberError, match="unsupported device_type 'tpu'"):
        ember.autocast("tpu")
    with pytest.raises(ember.EmberError, match="string"):
        ember.autocast(ember.device("cpu"))
    with pytest.warns(ember.errors.EmberWarning, match="Disabling autocast"):
        region = ember.autocast("cpu", dtype=ember.float64)
    with region:
        assert not amp.is_autocast_enabled("cpu")


def _train(lib, scaler_cls, weights, data, steps, bad_steps, clip, **scaler_kwargs):
    """A Linear model trained with SGD through a GradScaler; on bad_steps the loss is
    made inf, so the step must be skipped and the scale backed off."""
    layer = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(weights[0]))
        layer.bias.copy_(lib.tensor(weights[1]))
    opt = lib.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    scaler = scaler_cls("cpu", **scaler_kwargs)
    x, y = lib.tensor(data[0]), lib.tensor(data[1])
    log = []
    for step in range(steps):
        opt.zero_grad()
        loss = ((layer(x) - y) ** 2).mean()
        if step in bad_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(layer.parameters(), 0.5)
        scaler.step(opt)
        scaler.update()
        log.append((scaler.get_scale(), to_numpy(layer.weight).copy(),
                    to_numpy(layer.bias).copy()))
    return log, scaler


# NumPy warns about the inf/NaN the skipped steps compute on purpose (PyTorch is silent)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("clip", [False, True], ids=["plain", "unscale-and-clip"])
def test_grad_scaler_matches_torch(torch, clip):
    r = np.random.default_rng(zlib.crc32(b"grad scaler"))
    weights = (r.standard_normal((2, 3)), r.standard_normal(2))
    data = (r.standard_normal((8, 3)), r.standard_normal((8, 2)))
    kw = dict(init_scale=2.0 ** 4, growth_interval=2)
    t_log, t_scaler = _train(torch, torch.amp.GradScaler, weights, data, 7, {2, 3}, clip, **kw)
    e_log, e_scaler = _train(ember, amp.GradScaler, weights, data, 7, {2, 3}, clip, **kw)
    for i, (a, b) in enumerate(zip(e_log, t_log)):
        assert a[0] == b[0], f"scale after step {i}"
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, err_msg=f"weight after step {i}")
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12, err_msg=f"bias after step {i}")
    assert e_scaler.state_dict() == t_scaler.state_dict()
    fresh = amp.GradScaler("cpu")
    fresh.load_state_dict(t_scaler.state_dict())
    assert fresh.state_dict() == e_scaler.state_dict()


def test_grad_scaler_errors_and_disabled(torch):
    layer = nn.Linear(2, 1)
    opt = ember.optim.SGD(layer.parameters(), lr=0.1)
    scaler = amp.GradScaler("cpu")
    assert scaler.scale([ember.ones(1), (ember.ones(2),)])[1][0].tolist() == [65536.0] * 2
    scaler.scale(layer(ember.ones(3, 2)).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(ember.EmberError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(ember.EmberError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(ember.EmberError, match="Closure"):
        scaler.step(opt, closure=lambda: None)
    scaler.update(2.0 ** 10)
    assert scaler.get_scale() == 1024.0
    off = amp.GradScaler("cpu", enabled=False)
    loss = layer(ember.ones(1, 2)).sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ember.EmberError, match="growth_factor"):
        amp.GradScaler("cpu", growth_factor=0.5)
    if not ember.cuda.is_available():        # both libraries disable a CUDA scaler here
        with pytest.warns(ember.errors.EmberWarning, match="Disabling"), \
                pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
            assert not ember.cuda.amp.GradScaler().is_enabled()
        if not torch.cuda.is_available():
            with pytest.warns(UserWarning):
                assert not torch.amp.GradScaler("cuda").is_enabled()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("device", device_params())
def test_grad_scaler_on_device(device):
    ember.manual_seed(5)
    cpu, dev = nn.Linear(3, 2), nn.Linear(3, 2)
    copy_weights(cpu, dev)
    dev.to(device)
    x = ember.randn(4, 3)
    results = []
    for m, where in ((cpu, "cpu"), (dev, device)):
        opt = ember.optim.SGD(m.parameters(), lr=0.1)
        scaler = amp.GradScaler(where.split(":")[0], init_scale=8.0, growth_interval=1)
        for step in range(3):
            opt.zero_grad()
            loss = m(x.to(where)).square().mean() * (float("nan") if step == 1 else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        results.append((scaler.get_scale(), to_numpy(m.weight.to("cpu"))))
    assert results[0][0] == results[1][0] == 16.0      # grew, backed off, grew
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)
