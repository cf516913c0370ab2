"""The array-API kernel table uses only the standard: the conformance table runs on it with
xp = array_api_strict (the LIBRARY_SPECIFIC kernels, listed by name, go through NumPy)."""
from __future__ import annotations

import array_api_strict as xp
import ember
import numpy as np
import pytest
from ember import plugins
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api
from ember.testing import CASES, check_forward

# NumPy under array_api_strict warns on log(0) etc.; the values are what is checked
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

STRICT_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64")


def _to_np(x):
    return np.from_dlpack(x) if hasattr(x, "__dlpack__") else x


class StrictBackend:
    name = "strict"
    aliases = ()

    def __init__(self):
        self.kernels = array_api.kernels(xp)
        extras = array_api.numpy_extras(np)
        for name in array_api.LIBRARY_SPECIFIC:
            self.kernels[name] = self._via_numpy(name, extras[name])

    @staticmethod
    def _via_numpy(name, fn):
        if name == "assign":
            def assign(dst, src):
                dst[...] = src if not hasattr(src, "__dlpack__") else xp.asarray(src)
            return assign

        def kernel(*args, **kwargs):
            out = fn(*[_to_np(a).copy() if hasattr(a, "__dlpack__") else a for a in args],
                     **kwargs)
            return xp.asarray(out)
        return kernel

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, "array_api_strict")]

    def from_host(self, array, index=None):
        return xp.asarray(array.copy(order="C"))

    def to_host(self, native):
        return np.from_dlpack(native).copy()

    def capabilities(self, index=None):
        return Capabilities(frozenset(STRICT_DTYPES))


@pytest.fixture(scope="module")
def strict_device():
    plugins._backends["strict"] = StrictBackend()
    try:
        yield "strict:0"
    finally:
        ember.Device("strict", 0)._kernels = None     # (parsed while the backend is known)
        plugins._backends.pop("strict", None)
        ember.Device("strict", 0)._backend = None


def test_library_specific_kernels_are_few():
    # eig and eigvals: the standard has no general eigenproblem (nor CuPy)
    assert set(array_api.LIBRARY_SPECIFIC) <= {"erf", "index_add", "scatter_add",
                                                 "index_put", "assign", "eig", "eigvals"}
    missing = set(ember.ops.OPS) - set(array_api.kernels(np)) - set(array_api.LIBRARY_SPECIFIC)
    assert not missing, f"primitives without a kernel in the table: {sorted(missing)}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_table_is_standard_only(case, strict_device):
    dtypes = [d for d in case.dtypes if d in STRICT_DTYPES]
    if not dtypes or not set(case.needs) <= set(STRICT_DTYPES):
        pytest.skip("array_api_strict has no float16/bfloat16")
    for dtype in dtypes:
        check_forward(case, dtype, strict_device)
