"""EMBER_CHECK_KERNELS=1: every kernel's output checked against its op's declaration.

A debugging aid for backend authors (slow: it copies every output to the host).  It checks
the output's array type (what the backend's from_host returns), its dtype (the op's dtype
rule) and its shape (the op's shape rule, or where an op declares none, the CPU backend's
answer on host copies of the inputs), and names the op and the backend on a mismatch.
"""
from __future__ import annotations

import numpy as np

from .errors import KernelError
from .tensor import Tensor

_native_types: dict = {}


class KernelOutputError(KernelError):
    """A kernel returned something its op's declaration does not allow."""


def _native_type(device):
    key = (device.type, device.index)
    kind = _native_types.get(key)
    if kind is None:
        probe = device.backend.from_host(np.zeros(1, np.float32), device.index)
        kind = _native_types[key] = type(probe)
    return kind


def check_output(op, device, kernel, natives, attrs, inputs, result) -> None:
    if result is None:                      # an in-place kernel: it returns nothing
        return
    native = result._data
    where = f"{op.name} on {device} (backend {device.backend.name!r})"
    kind = _native_type(device)
    if not isinstance(native, kind):
        raise KernelOutputError(
            f"{where}: the kernel returned a {type(native).__module__}."
            f"{type(native).__qualname__}; expected the backend's array type {kind.__qualname__} "
            "(wrap scalars, e.g. numpy.asarray(value))")
    host = np.asarray(device.backend.to_host(native))
    if host.dtype != result._dtype.np:
        raise KernelOutputError(
            f"{where}: the kernel returned {host.dtype} data; the op's dtype rule "
            f"({op.rule or 'custom'}) gives {result._dtype.name}")
    expected = _expected_shape(op, device, inputs, attrs)
    if expected is not None and tuple(host.shape) != tuple(expected):
        raise KernelOutputError(f"{where}: the kernel returned shape {tuple(host.shape)}; "
                                f"expected {tuple(expected)}")
    if tuple(getattr(native, "shape", host.shape)) != tuple(host.shape):
        raise KernelOutputError(f"{where}: the array's shape {tuple(native.shape)} differs from "
                                f"what to_host gives, {tuple(host.shape)}")
    if op.kind != "movement" and isinstance(native, np.ndarray):
        for x in inputs:
            if type(x) is Tensor and isinstance(x._data, np.ndarray) and \
                    np.may_share_memory(native, x._data):
                raise KernelOutputError(
                    f"{where}: the kernel returned (a view of) an input's memory; only the "
                    "movement kernels may return views, every other kernel new memory (an "
                    "in-place write into the result would reach the input)")


def _expected_shape(op, device, inputs, attrs):
    if op.shape is not None:
        return op.shape(inputs, attrs)
    if device.type == "cpu":
        return None                          # the CPU backend is the reference itself
    from .device import Device
    cpu = Device("cpu").kernels.get(op.name)
    if cpu is None:
        return None
    host = [x.detach()._host() if type(x) is Tensor else x for x in inputs]
    return np.shape(cpu(*host, **attrs))
