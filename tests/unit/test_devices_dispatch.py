"""Devices, the default device, and the dispatcher's rules: device check, capability check,
fallback policy, errors that name the op, what was expected, what was got and the fix."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import ember
import numpy as np
import pytest
from ember import dispatch
from ember.errors import (
    DeviceMismatchError,
    DeviceUnavailableError,
    DtypeNotSupportedError,
    EmberError,
    KernelNotFoundError,
)


def test_device_strings():
    assert str(ember.device("cpu")) == "cpu"
    assert ember.device("cuda:1").type == "cuda" and ember.device("cuda:1").index == 1
    assert ember.device("cuda", 2) is ember.device("cuda:2")
    assert repr(ember.device("opencl:0")) == "device(type='opencl', index=0)"
    assert ember.device("cpu") == "cpu"
    for bad, msg in [("cdua:0", "unknown device type 'cdua'"), ("cuda:x", "bad index"),
                     ("cuda:-1", "bad index"), ("cpu:3", "cpu has no index 3"),
                     ("", "not a device string")]:
        with pytest.raises(EmberError, match=msg):
            ember.device(bad)
    with pytest.raises(EmberError, match="bare index"):
        ember.device(1)


def test_unavailable_device_says_why():
    with pytest.raises(DeviceUnavailableError) as info:
        ember.zeros(2, device="rocm")
    text = str(info.value)
    assert "rocm" in text and ("fix:" in text)


def test_default_device_scope_and_env(aux):
    assert ember.zeros(1).device.type == "cpu"
    with ember.device("aux:1"):
        assert str(ember.zeros(1).device) == "aux:1"
        assert str(ember.tensor([1.0]).device) == "aux:1"
    assert ember.zeros(1).device.type == "cpu"
    ember.set_default_device("aux")
    try:
        assert str(ember.ones(2).device) == "aux:0"
    finally:
        ember.set_default_device("cpu")
    code = "import ember; print(ember.zeros(1).device, ember.get_default_device())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, EMBER_DEVICE="cpu"))
    assert out.stdout.split() == ["cpu", "cpu"]


def test_auto_picks_the_best_available():
    dev = ember.device("auto").concrete()
    assert dev.type in ("cuda", "rocm", "opencl", "cpu")
    if not ember.cuda.is_available():
        assert dev.type != "cuda"


def test_devices_lists_cpu():
    assert ember.device("cpu") in ember.devices()


def test_mixed_devices_raise_naming_everything(aux):
    a = ember.ones(3)
    b = ember.ones(3, device="aux:1")
    with pytest.raises(DeviceMismatchError) as info:
        a + b
    msg = str(info.value)
    assert "add" in msg and "argument 0 on cpu" in msg and "argument 1 on aux:1" in msg
    assert ".to(" in msg
    with pytest.raises(DeviceMismatchError, match="matmul"):
        ember.ones(2, 2, device="aux:0") @ ember.ones(2, 2, device="aux:1")
    # 0-d CPU tensors and Python scalars go anywhere
    out = b * ember.tensor(2.0) + 1
    assert str(out.device) == "aux:1" and out.tolist() == [3.0, 3.0, 3.0]


def test_to_moves_and_copies(aux):
    a = ember.arange(4.0)
    b = a.to("aux:1")
    assert str(b.device) == "aux:1" and b.tolist() == a.tolist()
    c = b.to("cpu", ember.int32)
    assert c.device.type == "cpu" and c.dtype is ember.int32
    g = ember.ones(2, requires_grad=True)
    (g.to("aux:0") * 3).sum().backward()
    assert g.grad.device.type == "cpu" and g.grad.tolist() == [3.0, 3.0]


def test_capability_check_before_kernel(aux):
    x = ember.ones(2, device="aux")
    with pytest.raises(DtypeNotSupportedError, match="aux:0 does not support float64"):
        x.to(ember.float64)
    with pytest.raises(DtypeNotSupportedError, match="float64"):
        ember.zeros(2, dtype=ember.float64, device="aux")
    # a Python float never promotes a float32 tensor to float64
    assert (x * 0.1).dtype is ember.float32


def test_fallback_policy(aux):
    x = ember.tensor([0.5, 1.0], device="aux")
    with pytest.raises(KernelNotFoundError) as info:
        x.erf()
    msg = str(info.value)
    assert "erf" in msg and "aux:0" in msg and "cpu" in msg and "EMBER_FALLBACK" in msg
    dispatch.fallback_counts.clear()
    dispatch._warned.clear()
    with ember.fallback("warn"):
        with pytest.warns(dispatch.FallbackWarning, match="erf"):
            y = x.erf()
        z = x.erf()                                         # warned once per op
    assert str(y.device) == "aux:0"
    np.testing.assert_allclose(z.numpy(), [0.5204999, 0.8427008], rtol=1e-6)
    assert dispatch.fallback_counts[("erf", "aux")] == 2
    with ember.fallback("allow"):
        x.erf()
    with pytest.raises(ValueError, match="error, warn, allow"):
        with ember.fallback("sometimes"):
            pass


def test_fallback_env_policy():
    code = ("import ember, ember.dispatch as d; print(d.get_fallback())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, EMBER_FALLBACK="warn"))
    assert out.stdout.strip() == "warn"


def test_bad_input_errors_are_ember_errors():
    a = ember.ones(2, 3)
    cases = [
        (lambda: a + ember.ones(4), "add: shapes (2, 3) and (4,) do not broadcast"),
        (lambda: a @ ember.ones(2, 3), "cannot be multiplied"),
        (lambda: a.sum(5), "dim 5 is out of range"),
        (lambda: a.reshape(4, 2), "invalid for input of size 6"),
        (lambda: a[5], "index 5 is out of bounds"),
        (lambda: a[0, 0, 0], "too many indices"),
        (lambda: a[ember.tensor([0, 3])], "out of bounds"),
        (lambda: a.permute(0, 0), "repeat a dimension"),
        (lambda: a.expand(4, 3), "expanded size 4 must match"),
        (lambda: ember.cat([a, ember.ones(3, 3)], 1), "sizes of tensors must match"),
        (lambda: ember.where(a, a, a), "bool condition"),
        (lambda: ember.tensor(["x"]), "expected numbers"),
        (lambda: ember.tensor([[1, 2], [3]]), "regular shape"),
        (lambda: ember.arange(3).mean(), "floating point"),
        (lambda: -ember.ones(2, dtype=ember.bool), "bool tensor is not supported"),
        (lambda: ember.ones(2) & ember.ones(2), "bool tensors only"),
    ]
    for fn, msg in cases:
        with pytest.raises(EmberError, match=re.escape(msg)):
            fn()


def test_kernel_errors_are_wrapped():
    with pytest.raises(EmberError, match="pow failed on cpu"):
        ember.tensor([2]) ** ember.tensor([-1])


def test_observer_hooks_cost_nothing_unless_set():
    seen = []
    dispatch.set_observers([lambda name, dev, out: seen.append(name)])
    try:
        (ember.ones(2) + 1).exp().sum()
    finally:
        dispatch.set_observers([])
    assert seen == ["full", "add", "exp", "sum"]     # creation passes the same tail
    ember.ones(2) + 1
    assert seen == ["full", "add", "exp", "sum"]


def test_synchronize_takes_any_device_form():
    ember.synchronize()
    ember.synchronize("cpu")
    ember.synchronize(ember.device("cpu"))
    with pytest.raises(ember.EmberError, match="unknown device type 'nosuchdev'"):
        ember.synchronize("nosuchdev:0")


def test_index_bounds_are_checked_once_per_index_version(monkeypatch):
    checks = []
    real_min = ember.Tensor.min

    def counting_min(self, *args, **kwargs):
        checks.append(tuple(self.shape))
        return real_min(self, *args, **kwargs)
    monkeypatch.setattr(ember.Tensor, "min", counting_min)
    x = ember.randn(4, 5, requires_grad=True)
    idx = ember.tensor([[0, 4, 4], [2, 2, 0], [1, 3, 3], [4, 0, 0]])
    out = ember.gather(x, 1, idx)
    assert len(checks) == 1
    out.sum().backward()                 # scatter_add reuses the checked index
    assert len(checks) == 1
    np.testing.assert_array_equal(out.detach().numpy(),
                                  np.take_along_axis(x.detach().numpy(), idx.numpy(), 1))
    with pytest.raises(ember.EmberError, match="index -1 is out of bounds"):
        ember.gather(x, 1, ember.tensor([[0, -1]] * 4))   # as PyTorch: no wrap in gather
    assert len(checks) == 2
    good = ember.tensor([[0, 1, 2]] * 4)
    ember.gather(x, 1, good)
    ember.gather(x, 1, good)             # the same tensor, unchanged: checked once
    assert len(checks) == 3
    good.add_(5)                         # a new version: checked again, and out of range
    with pytest.raises(ember.EmberError, match="out of bounds"):
        ember.gather(x, 1, good)
    view = ember.tensor([[0, 1, 2, 3, 4]] * 4)[:, :3]
    ember.gather(x, 1, view)
    ember.gather(x, 1, view)             # a view's mark is not trusted
    assert len(checks) == 6
