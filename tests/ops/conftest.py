"""The `device` fixture of the tests in parity/ (an op against PyTorch): cpu, and opencl:0
where PoCL (or another OpenCL platform) runs; skipped, saying why, where not.  The parity
tables (`test_parity`) and ember.special's namespace run on the CPU only: their ops are
checked on every device by the conformance rows (test_conformance.py)."""
from __future__ import annotations

import ember
import pytest


@pytest.fixture(params=["cpu", "opencl:0"])
def device(request):
    if request.param != "cpu":
        try:
            ember.Device("opencl").concrete()
        except ember.EmberError as exc:
            pytest.skip(f"opencl:0: {exc}")
    return request.param


def pytest_itemcollected(item):
    """The conformance suite's random programs on a device other than the CPU (each runs
    twice there and builds the fused programs it meets the second time: seconds per seed
    with an empty PoCL cache) are a stable sample (tests/conftest.py: `sampled`); all of
    them with --full.  Every op row and rule still runs on every device."""
    spec = getattr(item, "callspec", None)
    if item.originalname == "test_conformance" and spec is not None:
        check, device = spec.params.get("check"), spec.params.get("device", "cpu")
        if getattr(check, "family", None) == "programs" and not device.startswith("cpu"):
            item.add_marker(pytest.mark.sampled)
