"""The one place ember.array_api leaves the device: a NumPy call on a host copy, copied back.

Not on-device yet (each needs a primitive ember does not have; docs/array-api.md keeps the
list): the stable argsort under sort/argsort/unique_* (the rest of those runs on the
device), and the LAPACK decompositions of `linalg` (cholesky, det, eigh, eigvalsh, inv,
pinv, qr, slogdet, solve, svd, svdvals; matrix_rank, matrix_power with n < 0 and the 2 and
nuclear matrix norms through them).  On the CPU device the "copy" is the tensor's own
NumPy array, so there is no transfer there; on other devices each call costs a copy each
way and a wait for the device.  They record no gradient, so an input that requires grad
is refused (under no_grad, or detached, it is fine) rather than silently cut from the graph.
"""
from __future__ import annotations

import numpy as np

from ..autograd import is_grad_enabled
from ..errors import AutogradError
from ..ops import from_host
from ..tensor import Tensor


def to_host(x: Tensor, name: str) -> np.ndarray:
    """x's values as a NumPy array for `name` (on the CPU, x's own array: do not write)."""
    if x.requires_grad and is_grad_enabled():
        raise AutogradError(
            f"ember.array_api.{name}: this function runs in NumPy on the host (no ember "
            "primitive for it yet) and records no gradient, but its input requires grad; "
            "call it under `with ember.no_grad():` or on x.detach()")
    return np.asarray(x.detach()._host())


def to_device(array, like: Tensor) -> Tensor:
    """A NumPy result as a tensor on like's device."""
    array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array) if array.ndim else array.copy()
    return from_host(array, like._device)
