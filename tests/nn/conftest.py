"""Fixtures for the nn/optim tests: PyTorch, skipped where it is not installed."""
from __future__ import annotations

import pytest


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# Parametrized tables whose cases on a device other than the CPU cost ~1 s of CPU each
# (their programs): there a stable sample runs (tests/conftest.py: `sampled`; all with
# --full).  Every case runs on the CPU, and each op under them is checked on every device
# by the conformance rows (tests/ops/test_conformance.py).
SAMPLED_ON_DEVICES = {
    ("test_margin_loss.py", "test_loss_matches_torch"),            # 30 cases, ~40 s
    ("test_loss.py", "test_likelihood_loss_matches_torch"),        # 12 cases, ~8 s
}


def pytest_itemcollected(item):
    spec = getattr(item, "callspec", None)
    if spec is None or (item.path.name, item.originalname) not in SAMPLED_ON_DEVICES:
        return
    if not str(spec.params.get("device", "cpu")).startswith("cpu"):
        item.add_marker(pytest.mark.sampled)
