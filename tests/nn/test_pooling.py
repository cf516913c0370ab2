"""Pooling layers and their functional forms (nn.pooling) against PyTorch, and the max-pool
gradient's decomposition (what a device without a max_pool2d_backward kernel runs)."""
from __future__ import annotations

import subprocess
import sys

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember import dispatch
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.nn import max_pool2d_backward_op, max_pool2d_op
from nn_helpers import (
    check_functional,
    check_layer,
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

@pytest.mark.parametrize("cfg", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                 dict(kernel_size=3, stride=2, ceil_mode=True),
                                 dict(kernel_size=(2, 3), stride=1, dilation=2)])
def test_max_pool2d(torch, cfg):
    t, e = twin(torch, "MaxPool2d", **cfg)
    check_layer(torch, t, e, randn(2, 3, 9, 8))
    assert repr(e) == repr(t)


def test_max_pool2d_ties_go_to_the_first_maximum(torch):
    x = np.zeros((1, 1, 4, 4))
    t, e = twin(torch, "MaxPool2d", 2)
    check_layer(torch, t, e, x)


def test_max_pool2d_return_indices(torch):
    x = randn(2, 3, 7, 6)
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    ev, ei = F.max_pool2d(ember.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_allclose(to_numpy(ev), to_numpy(tv))
    np.testing.assert_array_equal(to_numpy(ei), to_numpy(ti))


@pytest.mark.parametrize("cfg", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                 dict(kernel_size=3, stride=2, padding=1,
                                      count_include_pad=False),
                                 dict(kernel_size=3, stride=2, ceil_mode=True),
                                 dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False),
                                 dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(torch, cfg):
    t, e = twin(torch, "AvgPool2d", **cfg)
    check_layer(torch, t, e, randn(2, 3, 9, 8))


@pytest.mark.parametrize("size", [1, (3, 4), (5, 3), (None, 2)])
def test_adaptive_avg_pool2d(torch, size):
    t, e = twin(torch, "AdaptiveAvgPool2d", size)
    check_layer(torch, t, e, randn(2, 3, 9, 8))


FUNCTIONS = [
    ("max_pool1d", lambda F, x: F.max_pool1d(x, 3), (2, 3, 10)),
    ("max_pool1d:pad", lambda F, x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), (2, 3, 10)),
    ("max_pool1d:dilation", lambda F, x: F.max_pool1d(x, 2, 1, 0, 3), (3, 9)),
    ("avg_pool1d", lambda F, x: F.avg_pool1d(x, 3), (2, 3, 10)),
    ("avg_pool1d:pad", lambda F, x: F.avg_pool1d(x, 4, 3, 2, True, False), (2, 3, 10)),
    ("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 4), (2, 3, 10)),
    ("adaptive_avg_pool1d:unbatched", lambda F, x: F.adaptive_avg_pool1d(x, 3), (3, 7)),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, (3, 2)), (2, 3, 7, 5)),
    ("adaptive_max_pool2d:even", lambda F, x: F.adaptive_max_pool2d(x, 2), (2, 3, 6, 4)),
    ("adaptive_max_pool2d:none", lambda F, x: F.adaptive_max_pool2d(x, (None, 3)),
     (3, 4, 7)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,shape", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_functional_matches_torch(torch, device, name, fn, shape):
    check_functional(torch, device, name, fn, shape, F)


def test_max_pool1d_indices_match_torch(torch):
    x = rng("max_pool1d indices").standard_normal((2, 3, 11))
    t_out, t_idx = torch.nn.functional.max_pool1d(torch.tensor(x), 3, 2, 1,
                                                  return_indices=True)
    e_out, e_idx = F.max_pool1d(ember.tensor(x), 3, 2, 1, return_indices=True)
    close(e_out, t_out, "values")
    np.testing.assert_array_equal(to_numpy(e_idx), to_numpy(t_idx))


STATELESS = [
    ("MaxPool1d", (3,), (2, 2, 9)), ("MaxPool1d", (2, 1, 1), (2, 9)),
    ("AvgPool1d", (3,), (2, 2, 9)), ("AvgPool1d", (3, 2, 1), (2, 2, 9)),
    ("AdaptiveAvgPool1d", (4,), (2, 2, 9)), ("AdaptiveMaxPool2d", ((2, 3),), (2, 2, 5, 7)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,shape", STATELESS,
                         ids=[f"{m[0]}{m[1]}" for m in STATELESS])
def test_stateless_modules_match_torch(torch, device, name, args, shape):
    check_stateless(torch, device, name, args, shape, nn)


GRADCHECK = [
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                          count_include_pad=False), [(1, 2, 5, 5)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, shapes):
    inputs = [ember.tensor(randn(*s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, inputs)


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="pad should be at most half"):
        nn.MaxPool2d(2, padding=2)(ember.randn(1, 1, 4, 4))
    values, index = F.adaptive_max_pool2d(ember.ones(1, 1, 4, 4), 2, return_indices=True)
    assert values.shape == index.shape == (1, 1, 2, 2)      # built since (OpInfo fidelity)
    with pytest.raises(ember.ShapeError, match="max_pool1d: expected a 2-D"):
        F.max_pool1d(ember.ones(2, 2, 2, 2), 2)


# (kernel_size, stride, padding, dilation, extra): extra is ceil_mode's far-edge padding
GEOMETRIES = [((2, 2), (2, 2), (0, 0), (1, 1), (0, 0)),
              ((3, 3), (2, 2), (1, 1), (1, 1), (0, 0)),
              ((3, 2), (1, 2), (1, 0), (2, 1), (1, 1)),
              ((2, 2), (3, 3), (1, 1), (1, 1), (2, 1))]


def _attrs(geometry):
    return dict(zip(("kernel_size", "stride", "padding", "dilation", "extra"), geometry))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_pool_gradient_decomposition_is_the_kernel(geometry, dtype, device):
    # CuPy has no max_pool2d_backward kernel: there the decomposition is what runs
    r = rng(f"max_pool_decomposition{geometry}{dtype}")
    x = r.standard_normal((2, 3, 7, 6)).astype(dtype)
    x[0, 0, :2, :2] = 1.0                   # a tie: the first maximum takes the gradient
    x = ember.tensor(x)
    attrs = _attrs(geometry)
    out = dispatch.run(max_pool2d_op, x, **attrs)
    g = ember.tensor(r.standard_normal(tuple(out.shape)).astype(dtype))
    want = dispatch.run(max_pool2d_backward_op, g, x, out, **attrs)        # the CPU kernel
    got = max_pool2d_backward_op.decompose(g.to(device), x.to(device), out.to(device),
                                           **attrs)
    assert got.dtype == want.dtype and str(got.device) == device
    np.testing.assert_array_equal(got.to("cpu").numpy(), want.numpy())


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_max_pool_gradient_decomposition_differentiates_again(geometry):
    # create_graph: the decomposition is what the CPU runs for a recorded gradient
    k, s, p, d, _ = geometry
    x = ember.tensor(rng(f"max_pool_gradgrad{geometry}").standard_normal((1, 2, 7, 6)),
                     requires_grad=True)
    assert gradgradcheck(lambda v: F.max_pool2d(v, k, s, p, d, ceil_mode=True), (x,))


def test_max_pool_gradient_decomposition_needs_no_nn():
    # ops run it (a device lacking the kernel, an exported program): ember.nn need not load
    code = """
import sys
import ember
from ember import dispatch
from ember.ops.nn import max_pool2d_backward_op, max_pool2d_op
attrs = dict(kernel_size=(2, 2), stride=(1, 1), padding=(1, 1), dilation=(1, 1), extra=(0, 0))
x = ember.arange(24.0).reshape(1, 2, 3, 4)
out = dispatch.run(max_pool2d_op, x, **attrs)
got = max_pool2d_backward_op.decompose(ember.ones_like(out), x, out, **attrs)
want = dispatch.run(max_pool2d_backward_op, ember.ones_like(out), x, out, **attrs)
assert (got == want).all().item(), (got, want)
assert "ember.nn" not in sys.modules, "ember.nn was imported"
"""
    subprocess.run([sys.executable, "-c", code], check=True)
