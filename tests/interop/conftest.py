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


def pytest_itemcollected(item):
    """ember.array_api's cases on a device other than the CPU are a stable sample
    (tests/conftest.py: `sampled`; all of them with --full): the namespace's own code is
    the same on every device and runs for every case on the CPU, and each op under it is
    checked on every device by the conformance rows (tests/ops/test_conformance.py).  On
    opencl:0 a case costs ~0.6 s of CPU (its programs), on the CPU ~5 ms."""
    spec = getattr(item, "callspec", None)
    if item.originalname == "test_matches_array_api_strict" and spec is not None and \
            not str(spec.params.get("device", "cpu")).startswith("cpu"):
        item.add_marker(pytest.mark.sampled)
