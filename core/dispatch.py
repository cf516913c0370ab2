"""One path for every op: device -> dtype -> kernel -> one tail (call, errors, wrap, autograd).

`run(op, *inputs, **attrs)` is the full path.  The fast paths (same-dtype binary and unary
ops, tensor-number ops, callers that validated their attributes, creation, in-place
kernels) skip checks they do not need, and every one of them ends in `_tail`: the only
place a kernel is called.  The tail wraps kernel errors (KernelError), wraps the result,
records autograd and calls the hooks (plugin observers, EMBER_CHECK_KERNELS, capture).

Grad mode and the fallback policy are per thread, as in PyTorch (`_grad_off`, `_modes`).
"""
from __future__ import annotations

import os
import threading
import warnings
from contextlib import contextmanager

from . import dtypes as D
from . import plugins
from .backend import optional
from .errors import (
    DeviceMismatchError,
    DtypeNotSupportedError,
    EmberError,
    KernelError,
    KernelNotFoundError,
)
from .tensor import Tensor, wrap

_FALLBACK_POLICIES = ("error", "warn", "allow")


def _env_fallback() -> str:
    policy = os.environ.get("EMBER_FALLBACK", "error").strip().lower() or "error"
    if policy not in _FALLBACK_POLICIES:
        warnings.warn(f"EMBER_FALLBACK={policy!r} is not one of error, warn, allow; "
                      "using 'error'", stacklevel=3)
        policy = "error"
    return policy


class _Modes(threading.local):
    """Per-thread modes; the class attributes are every new thread's starting values."""

    fallback = _env_fallback()
    off = None                  # a _GradOff while this thread has grad mode off


_modes = _Modes()
# Grad mode is read on every op that records: a threading.local read costs ~70 ns, so the
# mode lives as the set of threads that switched it off (empty, the common case, costs one
# global read; a thread's entry leaves with the thread, see _GradOff)
_grad_off: set = set()
_ident = threading.get_ident


class _GradOff:
    """Kept in the thread's _modes while its grad mode is off: when the thread ends its
    locals go, and with them this thread's entry in _grad_off."""

    __slots__ = ("ident",)

    def __init__(self, ident):
        self.ident = ident

    def __del__(self):
        try:
            _grad_off.discard(self.ident)
        except Exception:  # noqa: BLE001  (interpreter shutdown: nothing left to clean)
            pass
_hooks: tuple = ()          # hook(op, device, kernel, natives, attrs, inputs, result): _tail
_observers: tuple = ()                # the plugins' ember_op_observer callables
_checking = os.environ.get("EMBER_CHECK_KERNELS", "").strip() not in ("", "0")
fallback_counts: dict = {}            # (op, device type) -> calls run on the CPU instead
_warned: set = set()
_lock = threading.Lock()
_NOATTRS: dict = {}
# autocast (amp_policy.py): the threads inside an enabled region (empty: no thread is, and
# run() and direct() pay one global read), the declared ops a policy table names, and the
# function that casts their inputs; amp_policy hands the last two down when it loads.  No
# table names a unary or binary elementwise op, so their fast paths need no check
_amp: set = set()
_amp_ops: frozenset = frozenset()
_amp_run = None
# the profiler's kernel call while a profile records (core/profiler hands it down with
# set_profiler): called as profile(op, device, kernel, natives, attrs, inputs) in place of
# kernel(*natives, **attrs); None (the common case) costs the tail one global read
_profile = None


class FallbackWarning(UserWarning):
    """An op ran on the CPU because its device has no kernel for it."""


# --- modes --------------------------------------------------------------------------------

def is_grad_enabled() -> bool:
    """Whether operations in this thread record a gradient graph now.

    Returns
    -------
    bool

    PyTorch
    -------
    ``torch.is_grad_enabled``
    """
    return not (_grad_off and _ident() in _grad_off)


def set_grad_enabled(mode: bool) -> bool:
    """Set this thread's grad mode; returns the previous one."""
    ident = _ident()
    prev = ident not in _grad_off
    if mode:
        _grad_off.discard(ident)
        _modes.off = None
    elif prev:
        _modes.off = _GradOff(ident)
        _grad_off.add(ident)
    return prev


def get_fallback() -> str:
    return _modes.fallback


@contextmanager
def fallback(policy: str):
    """Within the block (this thread), a missing kernel is an error, a warned CPU copy, or a
    quiet one.

    PyTorch
    -------
    None: ember's kernel fallback policy has no PyTorch equivalent.
    """
    policy = policy.lower()
    if policy not in _FALLBACK_POLICIES:
        raise ValueError(f"fallback: expected one of {', '.join(_FALLBACK_POLICIES)}, "
                         f"got {policy!r}")
    prev, _modes.fallback = _modes.fallback, policy
    try:
        yield
    finally:
        _modes.fallback = prev


# --- hooks --------------------------------------------------------------------------------

def set_observers(observers) -> None:
    """The plugins' per-op observers, called as observer(op_name, device, output)."""
    global _observers
    _observers = tuple(observers)
    _rebuild_hooks()


def check_kernels(enabled: bool) -> None:
    """Check every kernel's output (EMBER_CHECK_KERNELS=1 turns it on at start-up)."""
    global _checking
    _checking = bool(enabled)
    _rebuild_hooks()


_extra_hooks: list = []               # (key, hook) pairs installed by add_hook


def add_hook(key, hook) -> None:
    """Install hook(op, device, kernel, natives, attrs, inputs, result), called after every
    kernel call (graph capture uses it; ember.graph)."""
    _extra_hooks.append((key, hook))
    _rebuild_hooks()


def remove_hook(key) -> None:
    _extra_hooks[:] = [(k, h) for k, h in _extra_hooks if k != key]
    _rebuild_hooks()


def set_profiler(profile) -> None:
    """Install (or, with None, remove) the profiler's timed kernel call (ember.profiler):
    profile(op, device, kernel, natives, attrs, inputs) -> the kernel's output."""
    global _profile
    _profile = profile


def _rebuild_hooks() -> None:
    global _hooks
    hooks = []
    if _checking:
        from ._kernel_check import check_output
        hooks.append(check_output)
    if _observers:
        hooks.append(_observe)
    hooks.extend(h for _, h in _extra_hooks)
    _hooks = tuple(hooks)


def _observe(op, device, kernel, natives, attrs, inputs, result) -> None:
    # an in-place kernel's "result" is the tensor it wrote into
    out = result if result is not None else inputs[0]
    for obs in _observers:
        obs(op.name, device, out)


plugins.watch_observers(set_observers)     # the host hands over each plugin's observer


# --- the tail -------------------------------------------------------------------------------

def _tail(op, device, kernel, natives, attrs, inputs, out_dtype, track):
    """Call the kernel; wrap its errors and its result; record autograd; call the hooks.

    track: whether some input requires grad (the caller knows cheaply; the thread's grad
    mode is read only then).  out_dtype None: an in-place kernel, which writes into its
    first input (the tail returns None)."""
    try:
        if _profile is None:
            out = kernel(*natives, **attrs) if attrs else kernel(*natives)
        else:
            out = _profile(op, device, kernel, natives, attrs, inputs)
    except EmberError:
        raise
    except Exception as exc:
        raise _kernel_error(op, device, inputs, attrs, exc) from exc
    if out_dtype is None:
        result = None
    else:
        result = wrap(out, device, out_dtype)
        if track and not (_grad_off and _ident() in _grad_off):
            record(op, result, inputs, attrs)
    if _hooks:
        for hook in _hooks:
            hook(op, device, kernel, natives, attrs, inputs, result)
    return result


def run(op, *inputs, **attrs):
    """Run one op on its inputs' device; record it for autograd when needed."""
    if _amp and op.name in _amp_ops and _ident() in _amp:
        return _amp_run(op, inputs, attrs)
    device = inputs[0]._device if len(inputs) == 1 else _device_of(op, inputs)
    kernel = (device._kernels or device.kernels).get(op.name)
    track = _any_requires_grad(inputs)
    if op.check is not None:         # before a decomposition too: its ops would accept
        op.check(inputs, attrs)      # what the op refuses (relu of bool off the CPU)
    if op.decompose is not None and (kernel is None or (
            op.vjp is None and track and is_grad_enabled())):
        if op.opaque and track and is_grad_enabled():
            return _opaque(op, inputs, attrs)
        if op.opaque and op.vjp is not None and _extra_hooks:
            tangent = next((h for k, h in _extra_hooks if k == "forward_ad"), None)
            if tangent is not None:
                return _opaque_tangent(op, device, inputs, attrs, tangent)
        # a declared kernel this device lacks, or one with no gradient rule of its own
        # while a graph is recorded: its decomposition records itself
        return op.decompose(*inputs, **attrs)
    compute, out_dtype = op.dtype(inputs, attrs)
    upcast = compute is D.bfloat16 and optional(device.backend, "upcast_bfloat16")
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
        if out_dtype is not None:
            _check_dtype(op.name, device, out_dtype)
    if kernel is None:
        kernel = _cpu_fallback(op, device)
    if upcast and out_dtype is D.bfloat16:
        kernel = _rounding(kernel, device.kernels["cast"], out_dtype)
    return _tail(op, device, kernel, natives, attrs, inputs, out_dtype, track)


def _opaque(op, inputs, attrs):
    """A declared kernel this device lacks whose decomposition is not to be differentiated:
    run it with grad mode off, then record the op's own rule."""
    previous = set_grad_enabled(False)
    try:
        out = op.decompose(*inputs, **attrs)
    finally:
        set_grad_enabled(previous)
    record(op, out, inputs, attrs)
    return out


def _opaque_tangent(op, device, inputs, attrs, hook):
    """An opaque op's decomposition under forward-mode AD: its steps carry no tangents (they
    are not to be differentiated: nextafter's are bit arithmetic); the op's own rule gives
    the result's, as the forward-AD hook does after a kernel."""
    global _hooks
    saved = _hooks
    _hooks = tuple(h for h in saved if h is not hook)
    try:
        out = op.decompose(*inputs, **attrs)
    finally:
        _hooks = saved
    hook(op, device, None, (), attrs, inputs, out)
    return out


def _any_requires_grad(inputs) -> bool:
    for x in inputs:
        if type(x) is Tensor and x.requires_grad:
            return True
    return False


def _rounding(kernel, cast, dtype):
    def k(*args, **kwargs):
        return cast(kernel(*args, **kwargs), dtype=dtype)
    return k


def unwatched() -> bool:
    """No hook (ember.compile's capture, observers), profiler or autocast watches ops:
    a caller that records nothing for autograd may call kernels itself."""
    return not _hooks and _profile is None and not _amp


def direct(op, device, out_dtype, inputs, attrs):
    """run() for callers that already validated: same device and dtype, no casts.  Fast
    paths of ops with attributes (sum, permute, matmul) end here."""
    kernel = (device._kernels or device.kernels).get(op.name)
    if kernel is None or _amp:
        return run(op, *inputs, **attrs)
    if len(inputs) == 1:
        x = inputs[0]
        return _tail(op, device, kernel, (x._data,), attrs, inputs, out_dtype, x.requires_grad)
    return _tail(op, device, kernel, [x._data for x in inputs], attrs, inputs, out_dtype,
                 _any_requires_grad(inputs))


def create(op, device, dtype, attrs):
    """A creation op (full, arange): no tensor inputs, the output dtype given."""
    kernel = device.kernels.get(op.name)
    if kernel is None:
        kernel = _cpu_fallback(op, device)
    return _tail(op, device, kernel, (), attrs, (), dtype, False)


def inplace(op, target: Tensor, other) -> bool:
    """target op= other through the backend's in-place kernel (op declares which); False
    when the backend has none, so the caller takes the out-of-place path."""
    dev = target._device
    kernel = (dev._kernels or dev.kernels).get(op.name)
    if kernel is None:
        return False
    native = other._data if type(other) is Tensor else other
    _tail(op, dev, kernel, (target._data, native), _NOATTRS, (target, other), None, False)
    return True


def binary(op, a, b):
    """Fast path for binary elementwise ops: same device and dtype, or a scalar.  Shapes
    are the kernel's to broadcast; only if it fails is the op's check run, for the message
    (comparing two shapes up front cost more than the rest of this path)."""
    tb = type(b)
    if tb is Tensor:
        if a._dtype is b._dtype and a._device is b._device:
            out_dtype = op.fast.get(a._dtype)
            if out_dtype is not None:
                dev = a._device
                kernel = (dev._kernels or dev.kernels).get(op.name)
                if kernel is not None:
                    return _tail(op, dev, kernel, (a._data, b._data), _NOATTRS, (a, b),
                                 out_dtype, a.requires_grad or b.requires_grad)
    elif tb is float or tb is int:
        return _with_number(op, a, b, False)
    return run(op, a, b)


def rbinary(op, a, b):
    """Fast path for a Python number on the left: 1 - x, 2 / x."""
    ta = type(a)
    if ta is float or ta is int:
        return _with_number(op, b, a, True)
    return run(op, a, b)


_EXACT = 2 ** 53


def _with_number(op, t, number, left: bool):
    """t op number (or number op t): the number keeps t's dtype when its kind allows."""
    tn = type(number)
    category = t._dtype.category
    if (tn is float and category == D.FLOAT) or (tn is int and (
            category == D.INT or (category == D.FLOAT and -_EXACT <= number <= _EXACT))):
        # (an int with a float tensor (x * 2, x / 255) computes in the tensor's dtype, as
        # torch's: NumPy converts the int to it; ints past 2**53 take the general path)
        out_dtype = op.fast.get(t._dtype)
        if out_dtype is not None:
            dev = t._device
            kernel = (dev._kernels or dev.kernels).get(op.name)
            if kernel is not None:
                if left:
                    return _tail(op, dev, kernel, (number, t._data), _NOATTRS, (number, t),
                                 out_dtype, t.requires_grad)
                return _tail(op, dev, kernel, (t._data, number), _NOATTRS, (t, number),
                             out_dtype, t.requires_grad)
    return run(op, number, t) if left else run(op, t, number)


def unary(op, a):
    """Fast path for unary elementwise ops."""
    out_dtype = op.fast.get(a._dtype)
    if out_dtype is not None:
        dev = a._device
        kernel = (dev._kernels or dev.kernels).get(op.name)
        if kernel is not None:
            return _tail(op, dev, kernel, (a._data,), _NOATTRS, (a,), out_dtype,
                         a.requires_grad)
    return run(op, a)


# --- devices and dtypes ----------------------------------------------------------------------

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


_cast_op = None              # the cast declaration: ops/elementwise.py hands it down (use_cast)


def use_autocast(op_names, run_op) -> None:
    """The declared ops autocast casts, and how (amp_policy.py, when it loads)."""
    global _amp_ops, _amp_run
    _amp_ops, _amp_run = frozenset(op_names), run_op


def use_cast(op) -> None:
    """The op promoted inputs are cast with (declared in ops, a layer above dispatch)."""
    global _cast_op
    _cast_op = op


def _cast(x: Tensor, dtype, opname: str):
    """A promoted input's native array (a step inside another op, not an op of its own)."""
    device = x._device
    if device.type != "cpu":
        _check_dtype(opname, device, dtype)
    # not tracked: the op that needs the cast records x itself, not this step
    return _tail(_cast_op, device, device.kernels["cast"], (x._data,), {"dtype": dtype},
                 (x,), dtype, False)._data


# --- autograd ----------------------------------------------------------------------------------

def record(op, out, inputs, attrs):
    if op.vjp is None or out._dtype.category < D.FLOAT:
        # only floating and complex results carry gradients, as in PyTorch
        out._set_meta("nondiff", op.name)
        return
    out.grad_fn = _node(op, out, inputs, attrs)
    out.requires_grad = True


def _node(op, out, inputs, attrs):
    global _node
    from .autograd.node import Node
    _node = Node          # bind once: an import statement per op costs more than the op
    return Node(op, out, inputs, attrs)


# --- missing kernels: the fallback policy ----------------------------------------------------

def _where_available(name):
    return list(plugins.available_kernel_sources(name))


def _cpu_fallback(op, device):
    """A kernel that runs op on the CPU with host copies, if the policy allows; else the
    KernelNotFoundError naming the op, the device and where the op is available."""
    policy = _modes.fallback
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
                      FallbackWarning, stacklevel=5)
    from .device import Device
    backend, cpu_kernel = device.backend, Device("cpu").kernels[op.name]

    def kernel(*natives, **attrs):
        host = [backend.to_host(x) if not isinstance(x, (int, float, bool, type(None)))
                else x for x in natives]
        return backend.from_host(cpu_kernel(*host, **attrs), device.index)
    return kernel


def _kernel_error(op, device, inputs, attrs, exc):
    """One public class for a kernel's failure; a kernel's ValueError/TypeError/
    IndexError/ZeroDivisionError/MemoryError keeps its kind (KernelValueError, ...)."""
    if op.check is not None:
        op.check(inputs, attrs)          # inputs the op itself refuses: its own clear error
    shapes = ", ".join(f"{tuple(x.shape)} {x._dtype.name}" if type(x) is Tensor else repr(x)
                       for x in inputs)
    message = (f"{op.name} failed on {device} for inputs ({shapes})"
               f"{' with ' + str(attrs) if attrs else ''}: {type(exc).__name__}: {exc}")
    for builtin, cls in _KERNEL_ERRORS:
        if isinstance(exc, builtin):
            return cls(message)
    return KernelError(message)


def _kernel_error_classes():
    from . import errors
    return ((ValueError, errors.KernelValueError), (TypeError, errors.KernelTypeError),
            (ZeroDivisionError, errors.KernelZeroDivisionError),
            (IndexError, errors.KernelIndexError), (MemoryError, errors.KernelMemoryError),
            (OverflowError, errors.KernelOverflowError))


_KERNEL_ERRORS = _kernel_error_classes()
if _checking:
    _rebuild_hooks()
