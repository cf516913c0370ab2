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
    """On a device other than the CPU, the conformance suite's random programs (each runs
    twice there and builds the fused programs it meets the second time: seconds per seed
    with an empty PoCL cache) are a stable 1-in-4 sample and its op rows a stable 1-in-3
    sample (tests/conftest.py: `sampled`); all of them with --full (EMBER_TEST_FULL=1),
    which a change to a backend's kernels runs.  The rules run on every device.  An op row
    on OpenCL with an empty PoCL cache builds a program per dtype of its forward, layout
    and float64 gradient checks: ~200 s of CPU for all rows on a new machine (40 s warm), the
    largest part of the suite's cold cost.  PyTorch's OpInfo ops (tests/reference: float32
    values and gradients) are a stable 1-in-2 sample there, drawn independently."""
    spec = getattr(item, "callspec", None)
    if item.originalname == "test_conformance" and spec is not None:
        check, device = spec.params.get("check"), spec.params.get("device", "cpu")
        if device.startswith("cpu") or str(getattr(check, "name", "")).startswith("rule:"):
            return
        if getattr(check, "family", None) == "programs":
            item.add_marker(pytest.mark.sampled)
        else:
            item.add_marker(pytest.mark.sampled(every=3))
