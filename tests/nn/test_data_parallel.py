"""nn.DataParallel and nn.parallel.data_parallel against PyTorch: on a machine without an
accelerator both libraries run the module as it is; on one device ember moves the module
and the inputs there (checked on opencl:0 standing in for the accelerator); several devices
are refused, naming DistributedDataParallel."""
from __future__ import annotations

import collections
import importlib

import ember
import ember.nn as nn
import numpy as np
import pytest
from ember.testing import devices_under_test
from nn_helpers import check_layer, copy_weights, randn_stream, to_numpy

randn = randn_stream(3)
# the module (ember.nn.parallel.data_parallel is the function, as in torch.nn.parallel)
dp_module = importlib.import_module("ember.nn.parallel.data_parallel")
_OPENCL = [d for d, why in devices_under_test() if d.startswith("opencl") and why is None]


def _twins(torch):
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)).double()
    e = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).double()
    copy_weights(t, e)
    return t, e


def test_without_an_accelerator_it_runs_the_module_as_torch(torch):
    if ember.accelerator.is_available():
        pytest.skip("this machine has an accelerator: the CPU path is not the one taken")
    t, e = _twins(torch)
    tp, ep = torch.nn.DataParallel(t), nn.DataParallel(e, device_ids=[0, 1], dim=1)
    assert ep.module is e and ep.device_ids == [] == tp.device_ids
    assert list(ep.state_dict()) == list(tp.state_dict()) == [
        "module.0.weight", "module.0.bias", "module.1.weight", "module.1.bias",
        "module.1.running_mean", "module.1.running_var", "module.1.num_batches_tracked"]
    for attr in ("dim", "output_device", "src_device_obj"):       # torch sets none of them
        assert not hasattr(tp, attr) and not hasattr(ep, attr)
    check_layer(torch, tp, ep, randn(5, 4))
    np.testing.assert_allclose(to_numpy(e[1].running_mean), to_numpy(t[1].running_mean))
    assert repr(ep) == repr(tp)
    # a checkpoint of the wrapper loads into the wrapper (keys with module.)
    fresh = nn.DataParallel(nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).double())
    fresh.load_state_dict(ep.state_dict())
    x = ember.tensor(randn(2, 4))
    ep.eval()
    fresh.eval()
    np.testing.assert_array_equal(to_numpy(fresh(x)), to_numpy(ep(x)))


def test_data_parallel_function_needs_an_accelerator_as_torch(torch):
    if ember.accelerator.is_available():
        pytest.skip("this machine has an accelerator")
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2))
    with pytest.raises(ember.DeviceUnavailableError, match="device type could not be "
                                                           "determined.*call module"):
        nn.parallel.data_parallel(nn.Linear(2, 2), ember.ones(1, 2))


@pytest.mark.skipif(not _OPENCL, reason="no OpenCL device to stand in for an accelerator")
def test_one_device_moves_module_and_inputs(monkeypatch):
    """The accelerator path, run for real on opencl:0 (ember.accelerator counts only GPUs,
    so the lookup is pointed at it): the module is moved at construction, tensors in
    tuples, lists, dicts and namedtuples are moved, the result and gradients are the CPU's."""
    monkeypatch.setattr(dp_module, "_accelerator", lambda: ("opencl", [0]))
    Pair = collections.namedtuple("Pair", "a b")

    class Net(nn.Module):
        def __init__(self, where):
            super().__init__()
            self.lin, self.where = nn.Linear(3, 2), where

        def forward(self, x, extra, pair, table, scale=1.0):
            seen = {x.device.type, extra[0].device.type, pair.b.device.type,
                    table["t"].device.type, scale.device.type}
            assert seen == {self.where}, seen
            return self.lin(x) * scale + extra[0].sum() + pair.a + table["t"].mean()

    ember.manual_seed(0)
    cpu = Net("cpu")
    net = Net("opencl")
    net.load_state_dict(cpu.state_dict())
    wrapped = nn.DataParallel(net)
    assert wrapped.device_ids == [0] and wrapped.output_device == 0
    assert wrapped.src_device_obj == ember.device("opencl:0")
    assert net.lin.weight.device.type == "opencl"
    args = (ember.randn(4, 3), [ember.ones(2)], Pair(1.0, ember.zeros(1)), {"t": ember.ones(3)})
    out = wrapped(*args, scale=ember.tensor(2.0))
    want = cpu(*args, scale=ember.tensor(2.0))
    assert out.device.type == "opencl"
    np.testing.assert_allclose(to_numpy(out.cpu()), to_numpy(want), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(to_numpy(net.lin.weight.grad.cpu()),
                               to_numpy(cpu.lin.weight.grad), rtol=1e-5, atol=1e-6)
    # the functional form, and the check that the module is on device_ids[0]
    out = nn.parallel.data_parallel(net, args[:4], module_kwargs={"scale": ember.tensor(2.0)})
    np.testing.assert_allclose(to_numpy(out.cpu()), to_numpy(want), rtol=1e-5, atol=1e-6)
    out = nn.parallel.data_parallel(net.lin, args[0])
    np.testing.assert_allclose(to_numpy(out.cpu()), to_numpy(cpu.lin(args[0])), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ember.DeviceMismatchError, match="parameters and buffers on device "
                                                        "opencl:0"):
        nn.parallel.data_parallel(nn.Linear(3, 2), args[0])
    wrapped.module.cpu()
    with pytest.raises(ember.DeviceMismatchError, match="found one of them on device: cpu"):
        wrapped(*args)


def test_several_devices_are_refused_naming_ddp(monkeypatch):
    monkeypatch.setattr(dp_module, "_accelerator", lambda: ("cuda", [0, 1]))
    with pytest.raises(ember.errors.NotInEmberError, match="DistributedDataParallel"):
        nn.DataParallel(nn.Linear(2, 2))
    with pytest.raises(ember.errors.NotInEmberError, match="device_ids=\\[0, 1\\]"):
        nn.parallel.data_parallel(nn.Linear(2, 2), ember.ones(1, 2), device_ids=[0, 1])
    with pytest.raises(ember.EmberError, match="expected a device index or a cuda device"):
        nn.DataParallel(nn.Linear(2, 2), device_ids=["opencl:0"])
