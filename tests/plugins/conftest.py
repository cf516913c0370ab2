"""Fixtures shared by the plugin tests (each backend's fixtures carry its prefix)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def opencl_device():
    """'opencl:0', or a skip carrying the OpenCL probe's reason and fix."""
    import ember
    from ember import plugins
    backend = plugins.find_backend("opencl")
    if backend is None:
        pytest.skip(f"no plugin provides 'opencl': {plugins.INSTALL_HINTS['opencl']}")
    probe = plugins._probe(backend)
    if not probe.available:
        pytest.skip(f"OpenCL is not available: {probe.reason} (fix: {probe.fix})")
    return str(ember.device("opencl:0").concrete())
