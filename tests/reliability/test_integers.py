"""No silent integer corruption (issue 20, item 5), against PyTorch: where PyTorch refuses a
number an integer tensor cannot hold, ember raises too (an EmberError of the fitting
builtin); where PyTorch computes, ember gives the same values and dtype. On every device."""
from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember.testing import devices_under_test

DEVICES = ["cpu"] + [d for d, why in devices_under_test() if why is None and
                     d.startswith("opencl")][:1]

# (what, torch call, ember call(device), the builtin ember's error must also be)
REFUSED = [
    ("tensor([2**40], int32)", lambda t: t.tensor([2 ** 40], dtype=t.int32),
     lambda d: ember.tensor([2 ** 40], dtype=ember.int32, device=d), OverflowError),
    ("tensor([300], uint8)", lambda t: t.tensor([300], dtype=t.uint8),
     lambda d: ember.tensor([300], dtype=ember.uint8, device=d), OverflowError),
    ("int // 0", lambda t: t.tensor([4, 2]) // t.tensor([0, 1]),
     lambda d: ember.tensor([4, 2], device=d) // ember.tensor([0, 1], device=d),
     ZeroDivisionError),
    ("int % 0", lambda t: t.tensor([4, 2]) % t.tensor([0, 1]),
     lambda d: ember.tensor([4, 2], device=d) % ember.tensor([0, 1], device=d),
     ZeroDivisionError),
    ("x[0] = nan (int64)", lambda t: t.zeros(2, dtype=t.int64).__setitem__(0, math.nan),
     lambda d: ember.zeros(2, dtype=ember.int64, device=d).__setitem__(0, math.nan),
     ValueError),
    ("full(2, 2**40, int32)", lambda t: t.full((2,), 2 ** 40, dtype=t.int32),
     lambda d: ember.full((2,), 2 ** 40, dtype=ember.int32, device=d), OverflowError),
]

COMPUTED = [
    ("masked_fill(int, 1.5)", lambda t: t.tensor([1, 5]).masked_fill(t.tensor([True, False]),
                                                                       1.5),
     lambda d: ember.tensor([1, 5], device=d).masked_fill(
         ember.tensor([True, False], device=d), 1.5)),
    ("int32 overflow wraps", lambda t: t.tensor([2 ** 31 - 1], dtype=t.int32) + 1,
     lambda d: ember.tensor([2 ** 31 - 1], dtype=ember.int32, device=d) + 1),
    ("uint8 sum is int64", lambda t: t.tensor([200, 100], dtype=t.uint8).sum(),
     lambda d: ember.tensor([200, 100], dtype=ember.uint8, device=d).sum()),
    ("int // negative", lambda t: t.tensor([7, -7]) // t.tensor([-2, 2]),
     lambda d: ember.tensor([7, -7], device=d) // ember.tensor([-2, 2], device=d)),
    ("int % negative", lambda t: t.tensor([7, -7]) % t.tensor([-2, 2]),
     lambda d: ember.tensor([7, -7], device=d) % ember.tensor([-2, 2], device=d)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("what,torch_call,ember_call,builtin", REFUSED,
                         ids=[c[0] for c in REFUSED])
def test_what_pytorch_refuses_ember_refuses(device, what, torch_call, ember_call, builtin):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch_call(torch)
    with pytest.raises(ember.EmberError) as info:
        ember_call(device)
    assert isinstance(info.value, builtin), (what, type(info.value).__mro__)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("what,torch_call,ember_call", COMPUTED, ids=[c[0] for c in COMPUTED])
def test_what_pytorch_computes_ember_computes_alike(device, what, torch_call, ember_call):
    torch = pytest.importorskip("torch")
    want = torch_call(torch)
    got = ember_call(device)
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), what
    np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=what)
