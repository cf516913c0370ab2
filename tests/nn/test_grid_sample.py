"""F.grid_sample, torch.grid_sampler(_2d/_3d) and F.affine_grid against PyTorch on the CPU
and opencl:0: 2-d and 3-d, bilinear/trilinear, nearest and bicubic (2-d), every padding
mode, align_corners both ways, positions outside the input; values, the input's gradient
and the grid's (bilinear and bicubic) for a random upstream gradient; bad arguments are
ember errors."""
from __future__ import annotations

import itertools

import ember
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl

RNG = np.random.default_rng(0)
CONFIGS = [c for c in itertools.product((2, 3), ("bilinear", "nearest", "bicubic"),
                                       ("zeros", "border", "reflection"), (False, True))
           if c[:2] != (3, "bicubic")]


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_grid_sample_matches_torch(torch, device):
    for dims, mode, pad, align in CONFIGS:
        shape = (2, 3, 5, 6) if dims == 2 else (2, 3, 4, 5, 6)
        gshape = (2, 4, 7, 2) if dims == 2 else (2, 3, 4, 5, 3)
        x = RNG.standard_normal(shape).astype(np.float32)
        g = (RNG.random(gshape) * 2.6 - 1.3).astype(np.float32)       # some points outside
        xe, ge = (ember.tensor(v, device=device, requires_grad=True) for v in (x, g))
        xt, gt = (torch.tensor(v, requires_grad=True) for v in (x, g))
        oe = ember.nn.functional.grid_sample(xe, ge, mode, pad, align)
        ot = torch.nn.functional.grid_sample(xt, gt, mode, pad, align)
        what = f"{dims}-d {mode} {pad} align_corners={align}"
        np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=1e-5,
                                   err_msg=what)
        up = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
        (oe * ember.tensor(up, device=device)).sum().backward()
        (ot * torch.tensor(up)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-4, err_msg=what)
        if mode != "nearest":
            np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), rtol=1e-3, atol=1e-3,
                                       err_msg=what)


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_grid_sampler_codes_match_torch(torch, device):
    """torch.grid_sampler and its 2-d/3-d forms take torch's integer codes."""
    x = RNG.standard_normal((1, 2, 4, 5)).astype(np.float32)
    g = (RNG.random((1, 3, 3, 2)) * 2.6 - 1.3).astype(np.float32)
    x3 = RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    g3 = (RNG.random((1, 2, 3, 2, 3)) * 2.6 - 1.3).astype(np.float32)
    for name, (xv, gv), modes in (("grid_sampler", (x, g), (0, 1, 2)),
                                  ("grid_sampler_2d", (x, g), (0, 1, 2)),
                                  ("grid_sampler", (x3, g3), (0, 1)),
                                  ("grid_sampler_3d", (x3, g3), (0, 1))):
        for mode, pad, align in itertools.product(modes, (0, 1, 2), (False, True)):
            oe = getattr(ember, name)(ember.tensor(xv, device=device),
                                      ember.tensor(gv, device=device), mode, pad, align)
            ot = getattr(torch, name)(torch.tensor(xv), torch.tensor(gv), mode, pad, align)
            np.testing.assert_allclose(oe.numpy(), ot.numpy(), atol=1e-5,
                                       err_msg=f"{name} {mode} {pad} {align}")


@pytest.mark.parametrize("device", cpu_and_opencl())
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(torch, device, align):
    for size, tshape in (((2, 3, 5, 7), (2, 2, 3)), ((2, 3, 4, 5, 6), (2, 3, 4))):
        th = RNG.standard_normal(tshape).astype(np.float32)
        te, tt = ember.tensor(th, device=device, requires_grad=True), torch.tensor(
            th, requires_grad=True)
        oe = ember.nn.functional.affine_grid(te, size, align)
        ot = torch.nn.functional.affine_grid(tt, size, align)
        np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=1e-5)
        up = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
        (oe * ember.tensor(up, device=device)).sum().backward()
        (ot * torch.tensor(up)).sum().backward()
        np.testing.assert_allclose(te.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_bad_arguments_are_ember_errors():
    F = ember.nn.functional
    x, g = ember.ones(1, 1, 3, 3), ember.zeros(1, 2, 2, 2)
    with pytest.raises(ember.EmberError, match="mode"):
        F.grid_sample(x, g, mode="cubic")
    with pytest.raises(ember.EmberError, match="bicubic"):       # 4-D input only, as torch
        F.grid_sample(ember.ones(1, 1, 2, 3, 3), ember.zeros(1, 2, 2, 2, 3), mode="bicubic")
    with pytest.raises(ember.EmberError, match="bicubic"):
        ember.grid_sampler_3d(ember.ones(1, 1, 2, 3, 3), ember.zeros(1, 2, 2, 2, 3), 2, 0, False)
    with pytest.raises(ember.EmberError, match="interpolation_mode"):
        ember.grid_sampler(x, g, 3, 0, False)
    with pytest.raises(ember.EmberError, match="padding_mode"):
        ember.grid_sampler_2d(x, g, 0, -1, False)
    with pytest.raises(ember.EmberError, match="4-D"):
        ember.grid_sampler_2d(ember.ones(1, 1, 2, 3, 3), ember.zeros(1, 2, 2, 2, 3), 0, 0, False)
    with pytest.raises(ember.EmberError, match="dtype"):
        F.grid_sample(x, g.double())
    with pytest.raises(ember.EmberError, match="non-empty"):
        F.grid_sample(ember.ones(1, 1, 0, 3), g)
    with pytest.raises(ember.EmberError, match="padding_mode"):
        F.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(ember.EmberError, match="grid of shape"):
        F.grid_sample(x, ember.zeros(1, 2, 2, 3))
    with pytest.raises(ember.EmberError, match="affine matrices"):
        F.affine_grid(ember.zeros(1, 3, 3), (1, 1, 4, 4))
