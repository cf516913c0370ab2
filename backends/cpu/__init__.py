"""The CPU backend: the array-API kernel table with xp = NumPy; always available.

It registers through the `ember.plugins` entry point like any third-party backend.
"""
from __future__ import annotations

import os

import numpy as np

from ember.backend import Capabilities, DeviceInfo, Probe
from ember.plugins import hookimpl

from .. import array_api

# Kernels that meet log(0), x/0 or overflow in everyday use: PyTorch returns inf/nan
# quietly, so these run with NumPy's floating-point warnings off.  The rest stay unwrapped
# (errstate costs about 1 us per call, more than a small add).
_QUIET = ("log", "log1p", "div", "sqrt", "rsqrt", "reciprocal", "pow", "remainder",
          "floor_divide", "exp", "expm1", "sigmoid", "erf", "sum", "prod", "matmul")


def _quiet(fn):
    def kernel(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _softmax(x, *, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class CPUBackend:
    """NumPy on the host."""

    name = "cpu"
    aliases = ()

    def __init__(self):
        table = array_api.kernels(np)
        table.update(array_api.numpy_extras(np))
        for name in _QUIET:
            table[name] = _quiet(table[name])
        table["softmax"] = _quiet(_softmax)          # a composite's faster kernel
        # NumPy's own broadcast_to/transpose are views; matmul of the standard is NumPy's
        self.kernels = table

    def probe(self) -> Probe:
        return Probe(True, details={"numpy": np.__version__})

    def devices(self) -> list[DeviceInfo]:
        return [DeviceInfo(None, f"host CPU ({os.cpu_count()} cores)", "cpu",
                           platform="NumPy " + np.__version__)]

    def from_host(self, array, index=None):
        return array

    def to_host(self, native):
        return native

    def capabilities(self, index=None) -> Capabilities:
        from ember import dtypes
        return Capabilities(frozenset(d.name for d in dtypes.ALL))

    def synchronize(self, index=None) -> None:
        pass


@hookimpl
def ember_backends():
    return [CPUBackend()]
