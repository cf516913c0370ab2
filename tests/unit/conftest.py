"""A second, in-process device type ('aux': the real NumPy kernels under another name), so
device rules and the fallback policy are tested without hardware."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import plugins
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api


class AuxBackend:
    name = "aux"
    aliases = ()

    def __init__(self, missing=("erf",)):
        self.kernels = array_api.kernels(np)
        self.kernels.update(array_api.numpy_extras(np))
        for op in missing:
            del self.kernels[op]

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, "aux 0"), DeviceInfo(1, "aux 1")]

    def from_host(self, array, index=None):
        return array.copy()

    def to_host(self, native):
        return native

    def capabilities(self, index=None):
        return Capabilities(frozenset(d.name for d in ember.dtypes.ALL if d.name != "float64"))


@pytest.fixture
def aux():
    plugins._backends["aux"] = AuxBackend()
    try:
        yield "aux"
    finally:
        # the devices first, while "aux" is still a known type (a device index no test
        # made is created here: after the pop its type is unknown and Device refuses it)
        devices = [ember.Device("aux", i) for i in (0, 1)]
        plugins._backends.pop("aux", None)
        for dev in devices:
            dev._backend = dev._kernels = None
