"""Recycled result arrays for the CPU's large kernel outputs (rnn.py's kernels, linear).

A training step allocates the same large arrays every step (an LSTM layer's saved
activations, its gradient, the input projections), and frees them when autograd lets them
go.  Freed at the end of a step, they leave a large free block at the top of glibc's heap,
which glibc gives back to the system; the next step's np.empty of that size then
page-faults on every page it writes: ~2,300 faults a step of a 2-layer LSTM (hidden 200,
batch 20, seq 35; benchmarks/rnn.py), at ~3 us each on this machine, ~10% of the step.

result() hands out again an array of the same shape and dtype that nothing references any
more (the previous step's), so a steady training loop allocates nothing large: its caller
must write all of the array (it comes uninitialized, as np.empty's).  One is free when the
only references to it are this module's (sys.getrefcount: a Tensor wrapping it, a view of
it or an array exported from it holds one more).  Arrays under MIN_BYTES come from
np.empty (glibc's bins keep those); at most CAP_BYTES are kept in all, a new shape making
room by dropping free arrays of the shapes used longest ago.
"""
from __future__ import annotations

import os
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 18
CAP_BYTES = 64 << 20
_spares: dict = {}                     # (shape, dtype) -> [arrays], least recently used first
_held = [0]                            # bytes in _spares
_lock = threading.Lock()


def _after_fork() -> None:
    global _lock                       # a fork while another thread held it: a new one
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _refs_when_free() -> int:
    # what sys.getrefcount reports for an array held by a list alone, read as result()
    # reads it (in a loop over the list): the count differs between Python versions
    for a in [np.empty(0)]:
        return sys.getrefcount(a)


_FREE = _refs_when_free()


def result(shape: tuple, dtype) -> np.ndarray:
    """An uninitialized C-contiguous (shape, dtype) array: a kept one nothing references
    any more, else a new one, kept while CAP_BYTES allows."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    for n in shape:
        size *= n
    if size < MIN_BYTES:
        return np.empty(shape, dtype=dtype)
    key = (tuple(shape), dtype)
    with _lock:
        arrays = _spares.pop(key, [])
        _spares[key] = arrays                      # most recently used last
        for a in arrays:
            if sys.getrefcount(a) <= _FREE:
                return a
        new = np.empty(shape, dtype=dtype)
        for old in [k for k in _spares if k != key]:
            if _held[0] + size <= CAP_BYTES:
                break
            kept = []
            for a in _spares[old]:
                if _held[0] + size > CAP_BYTES and sys.getrefcount(a) <= _FREE:
                    _held[0] -= a.nbytes
                else:
                    kept.append(a)
            if kept:
                _spares[old] = kept
            else:
                del _spares[old]
        if _held[0] + size <= CAP_BYTES:
            arrays.append(new)
            _held[0] += size
        elif not arrays:
            del _spares[key]
        return new
