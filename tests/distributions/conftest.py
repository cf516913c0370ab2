"""The `device` fixture of the distribution tests: cpu, and opencl:0 where PoCL (or
another OpenCL platform) runs; skipped, saying why, where not."""
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
