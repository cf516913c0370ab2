"""The conformance suite under pytest: every check on every testable device, and one
result per device type that cannot be tested (a broken plugin fails once, here)."""
from __future__ import annotations

import pytest
from ember.testing import Unsupported, all_checks, targets

_TARGETS = targets()
_CHECKS = all_checks()


def _params():
    for t in _TARGETS:
        if t.problem:
            continue
        cpu = t.device.split(":")[0] == "cpu"
        for check in _CHECKS:
            if check.cpu or not cpu:
                yield pytest.param(check, t.device, id=f"{t.device}-{check.name}")


@pytest.mark.parametrize("check,device", list(_params()))
def test_conformance(check, device):
    try:
        check.run(device)
    except Unsupported as exc:
        pytest.skip(str(exc))


_UNTESTED = [t for t in _TARGETS if t.problem]


@pytest.mark.parametrize("target", _UNTESTED or [pytest.param(None, marks=pytest.mark.skip(
    reason="every device type here is tested"))], ids=[t.device for t in _UNTESTED] or
    ["none"])
def test_device_type(target):
    """A plugin that failed to load (or a requested device that cannot be used) fails
    here once, with its reason; a device type that is simply absent is a skip."""
    if target.fatal:
        pytest.fail(f"{target.device} cannot be tested: {target.problem}", pytrace=False)
    pytest.skip(f"{target.device} not tested: {target.problem}")
