"""Fixtures for the interop tests: the devices they run on, PyTorch where it is installed."""
from __future__ import annotations

import pytest
from ember.testing import devices_under_test

_FOUND = devices_under_test()
_MISSING = {d: reason for d, reason in _FOUND if reason is not None}
# the CPU and the first OpenCL device (or "opencl", skipped with the probe's reason)
_DEVICES = ["cpu"] + ([d for d, _ in _FOUND if d.startswith("opencl")][:1] or ["opencl"])


@pytest.fixture(params=_DEVICES, scope="module")
def device(request) -> str:
    if request.param in _MISSING:
        pytest.skip(f"{request.param} is not available here: {_MISSING[request.param]}")
    return request.param


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
