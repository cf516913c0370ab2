"""Every conformance case on every available device: forward against NumPy, then gradients."""
from __future__ import annotations

import pytest
from ember.testing import CASES, check_forward, check_gradients, devices_under_test

_ALL = devices_under_test()
_DEVICES = [d for d, why in _ALL if why is None]
_MISSING = [(d, why) for d, why in _ALL if why is not None]


def _supported(device: str, dtype: str) -> bool:
    import ember
    dev = ember.device(device).concrete()
    return dtype in dev.backend.capabilities(dev.index).dtypes


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward(case, device):
    ran = 0
    for dtype in case.dtypes:
        if _supported(device, dtype):
            check_forward(case, dtype, device)
            ran += 1
    if not ran:
        pytest.skip(f"{device} supports none of {case.dtypes}")


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=lambda c: c.name)
def test_gradients(case, device):
    check_gradients(case, device)


@pytest.mark.parametrize("device,reason", _MISSING or [("none", None)],
                         ids=[d for d, _ in _MISSING] or ["none"])
def test_unavailable_devices(device, reason):
    """Device types not testable here are reported once each, with the probe's reason."""
    if reason is None:
        return
    pytest.skip(f"{device} not tested: {reason}")
