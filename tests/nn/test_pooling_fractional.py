"""Fractional max pooling against PyTorch on the CPU and opencl:0: with the same
_random_samples, values, indices and the input's gradient for a random upstream gradient
are torch's exactly (2-d and 3-d, batched and not, output_size and output_ratio, samples
outside [0, 1) as torch's formula takes them, ties and NaN); without them the samples come
from ember's generator (one seed, one answer); the modules; bad arguments are ember
errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl

RNG = np.random.default_rng(9)
CASES = [  # dims, input shape, kernel, keywords, sample scale
    (2, (2, 3, 9, 9), 3, {"output_size": (2, 3)}, 1),
    (2, (1, 3, 9, 9), (4, 4), {"output_ratio": (0.5, 0.5)}, 1),
    (2, (3, 7, 6), (2, 3), {"output_size": (4, 3)}, 1),
    (2, (1, 1, 16, 16), (1, 1), {"output_ratio": (0.5, 0.5)}, 9),
    (2, (1, 2, 6, 6), 2, {"output_size": 1}, 1),
    (3, (2, 3, 5, 5, 5), (2, 2, 2), {"output_size": (2, 3, 2)}, 1),
    (3, (1, 1, 7, 6, 7), (2, 3, 4), {"output_ratio": (0.5, 0.5, 0.5)}, 1),
    (3, (2, 6, 5, 4), 2, {"output_size": 2}, 1),
]


def _samples(dims, shape, scale):
    n = shape[0] if len(shape) == dims + 2 else 1
    u = RNG.random((n, shape[-dims - 1], dims)) * (2 * scale if scale > 1 else 1)
    return (u - (scale if scale > 1 else 0)).astype(np.float32)


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_fractional_max_pool_is_torchs_exactly(torch, device):
    for dims, shape, kernel, kw, scale in CASES:
        x = RNG.standard_normal(shape).astype(np.float32)
        x.flat[::7] = x.flat[3]                   # ties inside windows
        s = _samples(dims, shape, scale)
        name = f"fractional_max_pool{dims}d"
        xt = torch.tensor(x, requires_grad=True)
        xe = ember.tensor(x, device=device, requires_grad=True)
        ot, it = getattr(torch.nn.functional, name)(
            xt, kernel, return_indices=True, _random_samples=torch.tensor(s), **kw)
        oe, ie = getattr(ember.nn.functional, name)(
            xe, kernel, return_indices=True, _random_samples=ember.tensor(s, device=device),
            **kw)
        what = f"{name} {shape} {kernel} {kw}"
        assert ie.dtype is ember.int64, what
        np.testing.assert_array_equal(oe.detach().numpy(), ot.detach().numpy(), err_msg=what)
        np.testing.assert_array_equal(ie.numpy(), it.numpy(), err_msg=what)
        up = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
        (ot * torch.tensor(up)).sum().backward()
        (oe * ember.tensor(up, device=device)).sum().backward()
        np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy(), err_msg=what)


def test_nan_and_ties_pick_torchs_index(torch):
    x = np.array([[[[1.0, np.nan, 3.0, np.nan, 3.0, 0.0]]]], np.float32)
    s = np.array([[[0.5, 0.5]]], np.float32)
    for window in ((1, 6), (1, 3)):
        ot, it = torch.nn.functional.fractional_max_pool2d(
            torch.tensor(x), window, output_size=(1, 6 // window[1]), return_indices=True,
            _random_samples=torch.tensor(s))
        oe, ie = ember.nn.functional.fractional_max_pool2d(
            ember.tensor(x), window, output_size=(1, 6 // window[1]), return_indices=True,
            _random_samples=ember.tensor(s))
        np.testing.assert_array_equal(ie.numpy(), it.numpy())
        np.testing.assert_array_equal(oe.numpy(), ot.numpy())


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_samples_come_from_embers_generator(device):
    x = ember.tensor(RNG.standard_normal((2, 3, 10, 9)).astype(np.float32), device=device)
    F = ember.nn.functional
    ember.manual_seed(5)
    a, ia = F.fractional_max_pool2d(x, 2, output_size=(4, 5), return_indices=True)
    ember.manual_seed(5)
    u = ember.rand(2, 3, 2, device=device)
    b, ib = F.fractional_max_pool2d(x, 2, output_size=(4, 5), return_indices=True,
                                    _random_samples=u)
    assert tuple(a.shape) == (2, 3, 4, 5)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_modules_match_torch(torch, device):
    for dims, shape, kw in ((2, (2, 3, 7, 6), {"output_size": (4, 3)}),
                            (2, (3, 5, 7), {"output_ratio": 0.5}),
                            (3, (2, 4, 5, 6, 7), {"output_ratio": (0.5, 0.6, 0.5)})):
        x = RNG.standard_normal(shape).astype(np.float32)
        n = shape[0] if len(shape) == dims + 2 else 1
        s = RNG.random((n, shape[-dims - 1], dims)).astype(np.float32)
        cls = f"FractionalMaxPool{dims}d"
        tm = getattr(torch.nn, cls)(2, return_indices=True,
                                    _random_samples=torch.tensor(s), **kw)
        em = getattr(ember.nn, cls)(2, return_indices=True,
                                    _random_samples=ember.tensor(s), **kw).to(device)
        assert set(em.state_dict()) == set(tm.state_dict()) == {"_random_samples"}
        ot, it = tm(torch.tensor(x))
        oe, ie = em(ember.tensor(x, device=device))
        np.testing.assert_array_equal(oe.numpy(), ot.numpy())
        np.testing.assert_array_equal(ie.numpy(), it.numpy())


def test_bad_arguments_are_ember_errors():
    F = ember.nn.functional
    x = ember.ones(1, 1, 6, 6)
    for call, match in (
            (lambda: F.fractional_max_pool2d(x, 2), "output_size or an output_ratio"),
            (lambda: F.fractional_max_pool2d(x, (5, 5), output_size=3), "too large"),
            (lambda: F.fractional_max_pool2d(x, (2, 2, 2), output_size=2), "kernel_size"),
            (lambda: F.fractional_max_pool2d(x, 2, output_size=(2, 2, 2)), "output_size"),
            (lambda: F.fractional_max_pool2d(x, 0, output_size=2), "greater than 0"),
            (lambda: F.fractional_max_pool2d(ember.ones(6, 6), 2, output_size=2), "3-D"),
            (lambda: F.fractional_max_pool2d(ember.ones(1, 0, 6, 6), 2, output_size=2),
             "non-zero"),
            (lambda: F.fractional_max_pool2d(x, 2, output_size=2,
                                             _random_samples=ember.rand(1, 1, 3)),
             "_random_samples"),
            (lambda: F.fractional_max_pool2d(x, 2, output_size=2,
                                             _random_samples=ember.rand(1, 1, 2).double()),
             "dtype"),
            (lambda: F.fractional_max_pool3d(ember.ones(4, 4, 4), 2, output_size=2),
             "4-D"),
            (lambda: ember.nn.FractionalMaxPool2d(2), "output size"),
            (lambda: ember.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
             "only one"),
            (lambda: ember.nn.FractionalMaxPool3d(2, output_ratio=1.5), "between 0 and 1"),
    ):
        with pytest.raises(ember.EmberError, match=match):
            call()
