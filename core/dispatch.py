"""run(op, *inputs): device check -> dtype promotion -> kernel -> autograd record -> hooks.

The hot path is attribute lookups, one dict lookup for the kernel and one kernel call.
"""
from __future__ import annotations

import os
import threading
import warnings
from contextlib import contextmanager

from . import dtypes as D
from .errors import (
    DeviceMismatchError,
    DtypeNotSupportedError,
    EmberError,
    KernelNotFoundError,
    ShapeError,
)
from .tensor import Tensor, wrap

# Grad mode is a module global read by every op (ember.autograd.grad_mode flips it).
grad_enabled = True
_observers: tuple = ()
_FALLBACK_POLICIES = ("error", "warn", "allow")
_fallback = os.environ.get("EMBER_FALLBACK", "error").strip().lower() or "error"
if _fallback not in _FALLBACK_POLICIES:
    warnings.warn(f"EMBER_FALLBACK={_fallback!r} is not one of error, warn, allow; "
                  "using 'error'", stacklevel=1)
    _fallback = "error"
fallback_counts: dict = {}            # (op, device type) -> calls run on the CPU instead
_warned: set = set()
_lock = threading.Lock()


class FallbackWarning(UserWarning):
    """An op ran on the CPU because its device has no kernel for it."""


def set_observers(observers) -> None:
    global _observers
    _observers = tuple(observers)


def _observe(name, device, result) -> None:
    for obs in _observers:
        obs(name, device, result)


def get_fallback() -> str:
    return _fallback


@contextmanager
def fallback(policy: str):
    """Within the block, a missing kernel is an error, a warned CPU copy, or a quiet one."""
    global _fallback
    policy = policy.lower()
    if policy not in _FALLBACK_POLICIES:
        raise ValueError(f"fallback: expected one of {', '.join(_FALLBACK_POLICIES)}, "
                         f"got {policy!r}")
    prev, _fallback = _fallback, policy
    try:
        yield
    finally:
        _fallback = prev


def _device_of(op, inputs):
    device = None
    for x in inputs:
        if type(x) is Tensor:
            d = x._device
            if device is None or device is d:
                device = d
            elif not x._data.shape and d.type == "cpu":
                continue                      # 0-d CPU tensors go anywhere, like scalars
            elif device.type == "cpu" and all(
                    not y._data.shape for y in inputs if type(y) is Tensor and y._device is device):
                device = d
            else:
                _mismatch(op, inputs)
    return device


def _mismatch(op, inputs):
    seen = ", ".join(f"argument {i} on {x._device}" for i, x in enumerate(inputs)
                     if type(x) is Tensor)
    target = next(x._device for x in inputs if type(x) is Tensor)
    raise DeviceMismatchError(
        f"{op.name}: expected all tensors on one device, got {seen}; move them first, "
        f"e.g. other.to('{target}')")


def _check_dtype(op, device, dtype):
    if device.type == "cpu":
        return
    supported = device.backend.capabilities(device.index).dtypes
    if dtype.name not in supported:
        raise DtypeNotSupportedError(
            f"{op}: {device} does not support {dtype.name} (it supports "
            f"{', '.join(sorted(supported))}); cast first, e.g. x.to(ember.float32)")


def run(op, *inputs, **attrs):
    """Run one op on its inputs' device; record it for autograd when needed."""
    device = inputs[0]._device if len(inputs) == 1 else _device_of(op, inputs)
    kernel = (device._kernels or device.kernels).get(op.name)
    if kernel is None and op.decompose is not None:
        return op.decompose(*inputs, **attrs)         # a composite this device lacks
    if op.check is not None:
        op.check(inputs, attrs)
    compute, out_dtype = op.dtype(inputs, attrs)
    upcast = compute is D.bfloat16 and getattr(device.backend, "upcast_bfloat16", False)
    if upcast:
        compute = D.float32      # the backend computes bfloat16 math in float32, then rounds
    promote = op.promote
    natives = []
    for i, x in enumerate(inputs):
        if type(x) is Tensor:
            if x._device is not device:
                x = x.to(device)
            if compute is None or x._dtype is compute or (promote is not None and
                                                          i not in promote):
                natives.append(x._data)
            else:
                natives.append(_cast(x, compute, op.name))
        else:
            natives.append(x)
    if device.type != "cpu":
        if compute is not None:
            _check_dtype(op.name, device, compute)
        _check_dtype(op.name, device, out_dtype)
    try:
        if kernel is None:
            out = _missing(op, device, natives, attrs)
        else:
            out = kernel(*natives, **attrs)
            if upcast and out_dtype is D.bfloat16:
                out = device.kernels["cast"](out, dtype=out_dtype)
    except EmberError:
        raise
    except Exception as exc:
        raise _kernel_error(op, device, inputs, attrs, exc) from exc
    result = wrap(out, device, out_dtype)
    if grad_enabled:
        for x in inputs:
            if type(x) is Tensor and x.requires_grad:
                record(op, result, inputs, attrs)
                break
    if _observers:
        _observe(op.name, device, result)
    return result


def direct(op, device, out_dtype, inputs, attrs):
    """The tail of run() for callers that already validated: same device and dtype, no
    casts.  Fast paths of ops with attributes (sum, permute, matmul) end here."""
    kernel = (device._kernels or device.kernels).get(op.name)
    if kernel is None:
        return run(op, *inputs, **attrs)
    try:
        if len(inputs) == 1:
            out = kernel(inputs[0]._data, **attrs)
        else:
            out = kernel(*[x._data for x in inputs], **attrs)
    except Exception as exc:
        raise _kernel_error(op, device, inputs, attrs, exc) from exc
    result = wrap(out, device, out_dtype)
    if grad_enabled:
        for x in inputs:
            if x.requires_grad:
                record(op, result, inputs, attrs)
                break
    if _observers:
        _observe(op.name, device, result)
    return result


def fused(name: str, composite, g: Tensor, *tensors: Tensor, **attrs) -> Tensor:
    """A backend's fused gradient kernel kernel(g, *tensors, **attrs) when no graph of the
    gradient is being built (create_graph=False) and every dtype and device agree; otherwise
    composite(): the rule written with ops, which differentiates again."""
    if not grad_enabled:
        dev, dtype = g._device, g._dtype
        if all(t._dtype is dtype and t._device is dev for t in tensors):
            kernel = (dev._kernels or dev.kernels).get(name)
            if kernel is not None:
                return wrap(kernel(g._data, *[t._data for t in tensors], **attrs), dev, dtype)
    return composite()


def binary(op, a, b):
    """Fast path for binary elementwise ops: same device, dtype and shape, or a scalar."""
    tb = type(b)
    if tb is Tensor:
        if a._dtype is b._dtype and a._device is b._device and a._data.shape == b._data.shape:
            out_dtype = op.fast.get(a._dtype)
            if out_dtype is not None:
                dev = a._device
                kernel = (dev._kernels or dev.kernels).get(op.name)
                if kernel is not None:
                    try:        # zero-cost in Python 3.11 unless something raises
                        t = wrap(kernel(a._data, b._data), dev, out_dtype)
                    except Exception as exc:
                        raise _kernel_error(op, dev, (a, b), {}, exc) from exc
                    if grad_enabled and (a.requires_grad or b.requires_grad):
                        record(op, t, (a, b), {})
                    if _observers:
                        _observe(op.name, dev, t)
                    return t
    elif tb is float or tb is int:
        return _with_number(op, a, b, False)
    return run(op, a, b)


def rbinary(op, a, b):
    """Fast path for a Python number on the left: 1 - x, 2 / x."""
    ta = type(a)
    if ta is float or ta is int:
        return _with_number(op, b, a, True)
    return run(op, a, b)


def _with_number(op, t, number, left: bool):
    """t op number (or number op t): the number keeps t's dtype when its kind allows."""
    tn = type(number)
    if (tn is float and t._dtype.category == D.FLOAT) or (
            tn is int and t._dtype.category == D.INT):
        out_dtype = op.fast.get(t._dtype)
        if out_dtype is not None:
            dev = t._device
            kernel = (dev._kernels or dev.kernels).get(op.name)
            if kernel is not None:
                inputs = (number, t) if left else (t, number)
                try:
                    out = kernel(number, t._data) if left else kernel(t._data, number)
                except Exception as exc:
                    raise _kernel_error(op, dev, inputs, {}, exc) from exc
                result = wrap(out, dev, out_dtype)
                if grad_enabled and t.requires_grad:
                    record(op, result, inputs, {})
                if _observers:
                    _observe(op.name, dev, result)
                return result
    return run(op, number, t) if left else run(op, t, number)


def unary(op, a):
    """Fast path for unary elementwise ops."""
    out_dtype = op.fast.get(a._dtype)
    if out_dtype is not None:
        dev = a._device
        kernel = (dev._kernels or dev.kernels).get(op.name)
        if kernel is not None:
            try:
                t = wrap(kernel(a._data), dev, out_dtype)
            except Exception as exc:
                raise _kernel_error(op, dev, (a,), {}, exc) from exc
            if grad_enabled and a.requires_grad:
                record(op, t, (a,), {})
            if _observers:
                _observe(op.name, dev, t)
            return t
    return run(op, a)


def _cast(x: Tensor, dtype, opname: str):
    device = x._device
    if device.type != "cpu":
        _check_dtype(opname, device, dtype)
    return device.kernels["cast"](x._data, dtype=dtype)


def record(op, out, inputs, attrs):
    if op.vjp is None or out._dtype.category != D.FLOAT:
        # only floating results carry gradients, as in PyTorch
        out._set_meta("nondiff", op.name)
        return
    out.grad_fn = _node(op, out, inputs, attrs)
    out.requires_grad = True


def _node(op, out, inputs, attrs):
    global _node
    from .autograd.engine import Node
    _node = Node          # bind once: an import statement per op costs more than the op
    return Node(op, out, inputs, attrs)


def _where_available(name):
    from . import plugins
    return sorted({b.name for b in plugins.loaded_backends().values()
                   if name in getattr(b, "kernels", {})})


def _missing(op, device, natives, attrs):
    policy = _fallback
    where = _where_available(op.name)
    if policy == "error" or "cpu" not in where or device.type == "cpu":
        raise KernelNotFoundError(
            f"{op.name}: the {device.type} backend has no kernel for this op (device "
            f"{device}); it is available on: {', '.join(where) or 'no loaded backend'}. "
            f"Fix: run it on one of those devices (x.to('cpu')), or allow a CPU copy with "
            f"EMBER_FALLBACK=warn (or `with ember.fallback('warn'):`)")
    key = (op.name, device.type)
    with _lock:
        fallback_counts[key] = fallback_counts.get(key, 0) + 1
        first = key not in _warned
        _warned.add(key)
    if policy == "warn" and first:
        warnings.warn(f"{op.name}: no kernel on {device.type}; ran on the CPU with host "
                      "copies (counted in ember.dispatch.fallback_counts)",
                      FallbackWarning, stacklevel=4)
    from .device import Device
    backend, cpu = device.backend, Device("cpu")
    host = [backend.to_host(x) if not isinstance(x, (int, float, bool, type(None))) else x
            for x in natives]
    out = cpu.kernels[op.name](*host, **attrs)
    return backend.from_host(out, device.index)


def _kernel_error(op, device, inputs, attrs, exc):
    shapes = ", ".join(f"{tuple(x.shape)} {x._dtype.name}" if type(x) is Tensor else repr(x)
                       for x in inputs)
    cls = ShapeError if isinstance(exc, ValueError) else type(
        "KernelError", (EmberError, RuntimeError), {})
    return cls(f"{op.name} failed on {device} for inputs ({shapes})"
               f"{' with ' + str(attrs) if attrs else ''}: {type(exc).__name__}: {exc}")
