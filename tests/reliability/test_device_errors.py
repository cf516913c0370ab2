"""Sizes a device cannot hold are ember errors that name the op, the size and the limit
(issue 20, item 6): never a library's raw error, never a later failure somewhere else."""
from __future__ import annotations

import re

import ember
import pytest
from ember.testing import devices_under_test

DEVICES = ["cpu"] + [d for d, why in devices_under_test() if why is None and
                     d.startswith("opencl")][:1]


@pytest.mark.parametrize("device", DEVICES)
def test_sizes_no_device_holds(device):
    for make in (lambda: ember.empty(2 ** 63, device=device),
                 lambda: ember.zeros(2 ** 31, 2 ** 31, device=device)):
        with pytest.raises(ember.EmberError, match=r"zeros: shape .* elements; no device"):
            make()
    with pytest.raises(ember.EmberError, match=r"full: shape"):
        ember.full((2 ** 62,), 1.0, device=device)


def test_negative_sizes():
    for make, name in ((lambda: ember.randn(-1), "randn"), (lambda: ember.eye(-1), "eye"),
                       (lambda: ember.zeros(3, -2), "zeros"),
                       (lambda: ember.randint(0, 3, (-1,)), "randint"),
                       (lambda: ember.rand(2, -3), "rand")):
        with pytest.raises(ember.EmberError, match=f"{name}: negative dimension"):
            make()


@pytest.mark.skipif(len(DEVICES) < 2, reason="no OpenCL device here")
def test_opencl_buffers_larger_than_the_device_allows():
    dev = DEVICES[1]
    with pytest.raises(ember.KernelError) as info:
        ember.empty(10 ** 12, device=dev)
    text = str(info.value)
    assert isinstance(info.value, MemoryError)
    assert text.startswith("full failed on opencl:0")
    assert re.search(r"needs 4,000,000,000,000 bytes; one buffer on opencl:0 .* may hold at "
                     r"most [\d,]+ bytes", text)
    # a deferred (fused) elementwise result fails where the op is called, not at a later
    # synchronize
    a = ember.ones(100_000, 1, device=dev)
    b = ember.ones(1, 100_000, device=dev)
    with pytest.raises(ember.KernelError, match=r"^mul failed on opencl:0 .*40,000,000,000 "
                                                r"bytes"):
        a * b
    ember.synchronize(dev)                    # nothing left pending to fail later
    with pytest.raises(ember.KernelError, match="arange failed on opencl:0"):
        ember.arange(0, 10 ** 13, device=dev)
