"""Pooling layers and their functional forms (nn.pooling) against PyTorch, and the max-pool
gradient's decomposition (what a device without a max_pool2d_backward kernel runs)."""
from __future__ import annotations

import subprocess
import sys

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import dispatch
from ember.autograd import gradgradcheck
from ember.ops.nn import max_pool2d_backward_op, max_pool2d_op
from nn_helpers import rng

# (kernel_size, stride, padding, dilation, extra): extra is ceil_mode's far-edge padding
GEOMETRIES = [((2, 2), (2, 2), (0, 0), (1, 1), (0, 0)),
              ((3, 3), (2, 2), (1, 1), (1, 1), (0, 0)),
              ((3, 2), (1, 2), (1, 0), (2, 1), (1, 1)),
              ((2, 2), (3, 3), (1, 1), (1, 1), (2, 1))]


def _attrs(geometry):
    return dict(zip(("kernel_size", "stride", "padding", "dilation", "extra"), geometry))


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_pool_gradient_decomposition_is_the_kernel(geometry, dtype):
    r = rng(f"max_pool_decomposition{geometry}{dtype}")
    x = r.standard_normal((2, 3, 7, 6)).astype(dtype)
    x[0, 0, :2, :2] = 1.0                   # a tie: the first maximum takes the gradient
    x = ember.tensor(x)
    attrs = _attrs(geometry)
    out = dispatch.run(max_pool2d_op, x, **attrs)
    g = ember.tensor(r.standard_normal(tuple(out.shape)).astype(dtype))
    want = dispatch.run(max_pool2d_backward_op, g, x, out, **attrs)        # the CPU kernel
    got = max_pool2d_backward_op.decompose(g, x, out, **attrs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


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
