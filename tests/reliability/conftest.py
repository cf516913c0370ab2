"""Fixtures of the reliability suite."""
from __future__ import annotations

import pytest


@pytest.fixture
def opencl_device():
    """'opencl:0', or a skip carrying the OpenCL probe's reason and fix."""
    import ember
    from ember import plugins
    backend = plugins.find_backend("opencl")
    probe = plugins._probe(backend) if backend is not None else None
    if probe is None or not probe.available:
        pytest.skip(f"OpenCL is not available: {probe.reason if probe else 'no plugin'}")
    return str(ember.device("opencl:0").concrete())
