"""In-process backends whose movement kernels return copies (`views = "none"`, the default
a third-party backend gets, or "positive-steps"), as strangers would write them from the
documented contract and `ember.backends.array_api.kernels(xp)`:

- CopyingBackend ('copier'): NumPy arrays; reshape, permute, expand and slice return
  copies (a library without strided views).
- StepsBackend ('stepper', `views = "positive-steps"`): NumPy views, except that a slice
  with a negative step is a copy.
- FrozenBackend ('frozen'): immutable arrays, as JAX's: every native is a Frozen box
  around a read-only NumPy array, every kernel unboxes its inputs and boxes its result,
  `assign` swaps the array inside the box (the one in-place write the contract asks for),
  and `to_host` hands out the read-only array itself.

`installed(backend)` registers one as a device type for the length of a `with` block.
"""
from __future__ import annotations

import contextlib

import ember
import numpy as np
from ember import plugins
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api


class NumpyBackend:
    """The array-API kernel table over NumPy as an in-process device type `name`."""

    aliases = ()
    upcast_bfloat16 = True      # NumPy mixes ml_dtypes' bfloat16 with Python numbers in float32

    def __init__(self):
        self.kernels = array_api.kernels(np)
        self.kernels.update(array_api.numpy_extras(np))

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, f"{self.name} 0")]

    def from_host(self, array, index=None):
        return np.array(array, copy=True)

    def to_host(self, native):
        return native

    def capabilities(self, index=None):
        return Capabilities(frozenset(d.name for d in ember.dtypes.ALL))


class CopyingBackend(NumpyBackend):
    """NumPy kernels whose reshape/permute/expand/slice return copies (views = "none"), as
    a backend over a library without strided views would."""

    name = "copier"
    views = "none"

    def __init__(self):
        super().__init__()
        for name in ("reshape", "permute", "expand", "slice"):
            self.kernels[name] = (lambda k: lambda *a, **kw: np.array(k(*a, **kw), copy=True))(
                self.kernels[name])


class StepsBackend(NumpyBackend):
    """NumPy views for positive steps; a slice with a negative step returns a copy
    (views = "positive-steps", as a library whose strides cannot be negative)."""

    name = "stepper"
    views = "positive-steps"

    def __init__(self):
        super().__init__()
        view = self.kernels["slice"]

        def slice_(x, *, index):
            out = view(x, index=index)
            return out.copy() if any(s.step < 0 for s in index) else out
        self.kernels["slice"] = slice_


def _frozen(array) -> np.ndarray:
    array = np.asarray(array)          # a kernel's NumPy scalar becomes a 0-d array
    array.flags.writeable = False
    return array


class Frozen:
    """A native of FrozenBackend: a box whose read-only array `assign` replaces."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = _frozen(array)

    @property
    def shape(self):
        return self.array.shape

    @property
    def dtype(self):
        return self.array.dtype


def _unbox(value):
    return value.array if type(value) is Frozen else value


def _boxed(kernel):
    def run(*args, **attrs):
        out = kernel(*[_unbox(a) for a in args], **attrs)
        if isinstance(out, tuple):
            return tuple(Frozen(o) for o in out)
        return Frozen(out)
    return run


class FrozenBackend(NumpyBackend):
    """Immutable arrays (a JAX-like library): read-only NumPy arrays in Frozen boxes, every
    movement kernel a new array; `assign` is the only write, and it replaces the box's
    array, so every tensor holding the box (detach(), .data) sees it."""

    name = "frozen"
    views = "none"

    def __init__(self):
        super().__init__()
        self.kernels = {name: _boxed(k) for name, k in self.kernels.items()}
        self.kernels["assign"] = self._assign

    @staticmethod
    def _assign(dst, src):
        new = np.array(np.broadcast_to(_unbox(src), dst.shape), dtype=dst.dtype)
        dst.array = _frozen(new)

    def from_host(self, array, index=None):
        return Frozen(np.array(array, copy=True))

    def to_host(self, native):
        return native.array                   # read-only memory: ember must not write it


@contextlib.contextmanager
def installed(backend):
    """`backend` registered as its device type for the block; yields 'name:0'."""
    plugins._backends[backend.name] = backend
    try:
        yield f"{backend.name}:0"
    finally:
        for i in (None, 0):
            ember.Device(backend.name, i)._unbind()
        plugins._backends.pop(backend.name, None)
