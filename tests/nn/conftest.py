"""Fixtures for the nn/optim tests: PyTorch, skipped where it is not installed."""
from __future__ import annotations

import pytest


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
