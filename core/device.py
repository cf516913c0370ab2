"""Device objects ('cpu', 'cuda:1', 'opencl:0', 'auto'), the default device and its scope."""
from __future__ import annotations

import os
import threading

from . import plugins
from .errors import DeviceUnavailableError, EmberValueError

# Device types ember knows before any plugin is loaded (first-party plugins); plugins may
# add more.  'auto' picks the first available in this order.
KNOWN_TYPES = ("cpu", "cuda", "rocm", "opencl")
AUTO_ORDER = ("cuda", "rocm", "opencl", "cpu")


class Device:
    """A device: a type and an index ('cuda:1'); interned, so `is` compares them.

    Like torch.device it is also a context manager that makes itself the default device.

    PyTorch
    -------
    ``torch.device``
    """

    __slots__ = ("type", "index", "_backend", "_kernels", "_strided")
    _interned: dict = {}
    _lock = threading.Lock()

    def __new__(cls, spec="cpu", index: int | None = None):
        if type(spec) is Device and index is None:
            return spec
        key = (spec, index)
        dev = cls._interned.get(key)
        if dev is not None:
            return dev
        dtype_, idx = _parse(spec, index)
        with cls._lock:
            dev = cls._interned.get((dtype_, idx))
            if dev is None:
                dev = object.__new__(cls)
                dev.type, dev.index = dtype_, idx
                dev._backend = dev._kernels = dev._strided = None
                cls._interned[(dtype_, idx)] = dev
            cls._interned[key] = dev
        return dev

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except EmberValueError:
                return False
        return self is other

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (Device, (str(self),))

    # -- the backend behind it --------------------------------------------------------
    @property
    def backend(self):
        b = self._backend
        if b is None:
            b = plugins.backend_for(self.type)
            self._backend = b
        return b

    @property
    def kernels(self) -> dict:
        """The kernel table for this device (a dict; one lookup per op on the hot path)."""
        k = self._kernels
        if k is None:
            backend = self.backend
            concrete = self.concrete()
            if concrete is not self:
                k = concrete.kernels
            else:
                k = plugins.kernel_table(backend, self.index)    # checked when first seen
            self._kernels = k
        return k

    @property
    def strided_views(self) -> bool:
        """Whether this backend's movement kernels return views whose writes reach the base
        (Backend.views == "strided"); otherwise the core makes writes through views
        functional (see ops.index.write)."""
        s = self._strided
        if s is None:
            from .backend import optional
            s = self._strided = optional(self.backend, "views") == "strided"
        return s

    def _unbind(self) -> None:
        """Forget the backend (tests that reinstall plugins)."""
        self._backend = self._kernels = self._strided = None

    def concrete(self) -> Device:
        """The device tensors live on: 'cuda' means 'cuda:0', 'auto' the best available."""
        if self.type == "auto":
            return resolve_auto()
        if self.index is None and self.type != "cpu":
            backend = self.backend              # an alias, e.g. 'cuda' on a ROCm build,
            return Device(backend.name, current_index(backend.name))   # is the backend's
        if self.type != "cpu":
            backend = self.backend
            if self.type != backend.name:
                return Device(backend.name, self.index)
            count = len(backend.devices())
            if self.index >= count:
                raise DeviceUnavailableError(
                    f"device {self} does not exist: this machine has {count} {self.type} "
                    f"device(s) ({', '.join(f'{self.type}:{i}' for i in range(count)) or 'none'}); "
                    f"use an index below {count} or see `ember devices`")
        return self

    # -- context manager: `with ember.device("opencl"):` -------------------------------
    def __enter__(self) -> Device:
        _state.stack.append(_state.default)       # per thread, as the default itself
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        _state.default = _state.stack.pop()


def _forget_backends() -> None:
    """Every Device forgets the backend and kernels it bound (tests that reinstall plugins
    reset the host, which calls this)."""
    for dev in list(Device._interned.values()):
        dev._backend = dev._kernels = None


plugins.on_reset_for_tests(_forget_backends)


def _parse(spec, index):
    if isinstance(spec, Device):
        if index is not None and index != spec.index:
            raise EmberValueError(f"device: got a device {spec} and a second index {index}")
        return spec.type, spec.index
    if isinstance(spec, int) and not isinstance(spec, bool):
        # torch.device(1) means the current accelerator; ember has no global accelerator.
        raise EmberValueError(
            f"device: got the bare index {spec}; expected a string such as 'cuda:{spec}' "
            f"or 'opencl:{spec}'")
    if not isinstance(spec, str):
        raise EmberValueError(f"device: expected a string like 'cpu' or 'cuda:0', got {spec!r}")
    text = spec.strip().lower()
    kind, sep, rest = text.partition(":")
    if sep:
        if index is not None:
            raise EmberValueError(f"device: {spec!r} already has an index; got index={index} too")
        if not rest.isdigit():
            raise EmberValueError(
                f"device: bad index in {spec!r}; expected 'type:N' with N >= 0, e.g. 'cuda:0'")
        index = int(rest)
    if index is not None and (not isinstance(index, int) or index < 0):
        raise EmberValueError(f"device: index must be an int >= 0, got {index!r}")
    if not kind.isidentifier():
        raise EmberValueError(f"device: {spec!r} is not a device string; expected e.g. 'cpu', "
                              "'cuda:0', 'opencl:1' or 'auto'")
    if kind not in KNOWN_TYPES and kind != "auto":
        # a third-party type is known once the plugin providing it loads
        if kind not in plugins.known_device_types() and plugins.find_backend(kind) is None:
            raise EmberValueError(
                f"device: unknown device type {kind!r} in {spec!r}; expected one of "
                f"{', '.join(sorted(set(KNOWN_TYPES) | plugins.known_device_types()))} or "
                "'auto' (a third-party type appears once its plugin is installed)")
    if kind in ("cpu", "auto"):
        if index not in (None, 0):
            raise EmberValueError(f"device: {kind} has no index {index}; use '{kind}'")
        index = None
    return kind, index


class _State(threading.local):
    """The default device and the `with ember.device(...)` stack, per thread (PyTorch's
    default device is per thread too), and each GPU type's current index (what a bare
    'cuda' means: torch.cuda.set_device's, also per thread in PyTorch)."""

    def __init__(self):
        self.default = None
        self.stack = []
        self.current = {}


_state = _State()


def current_index(kind: str) -> int:
    """The index a bare device type means on this thread (0 unless set_current_index or
    ``ember.cuda.set_device`` chose another)."""
    return _state.current.get(kind, 0)


def set_current_index(kind: str, index: int) -> None:
    """Make a bare `kind` (e.g. 'cuda') mean `kind:index` on this thread; factories keep
    creating on the default device (torch.cuda.set_device does not move them either)."""
    _state.current[kind] = index


def default_device() -> Device:
    """The device new tensors go to when no ``device=`` is given.

    Returns
    -------
    Device
        ``cpu`` unless :func:`set_default_device` chose another.

    PyTorch
    -------
    ``torch.get_default_device``
    """
    d = _state.default
    if d is None:
        env = os.environ.get("EMBER_DEVICE")
        d = Device(env).concrete() if env else Device("cpu")
        _state.default = d
    return d


get_default_device = default_device


def set_default_device(spec) -> None:
    """Make factories (zeros, tensor, randn, ...) create tensors on this device.

    PyTorch
    -------
    ``torch.set_default_device``
    """
    _state.default = None if spec is None else Device(spec).concrete()


def resolve_auto() -> Device:
    """The best available device: cuda, rocm, an OpenCL GPU, then cpu."""
    for kind in AUTO_ORDER:
        if kind == "cpu":
            return Device("cpu")
        backend = plugins.try_backend_for(kind)
        if backend is None or backend.name != kind:
            continue
        devs = backend.devices()
        if kind == "opencl":
            devs = [d for d in devs if getattr(d, "is_gpu", False)]
        if devs:
            return Device(kind, getattr(devs[0], "index", 0))
    return Device("cpu")


def as_device(spec) -> Device:
    """A concrete Device from a Device, a string or None (the default device)."""
    if spec is None:
        return default_device()
    dev = spec if type(spec) is Device else Device(spec)
    return dev if dev.type == "cpu" else dev.concrete()


def synchronize(device=None) -> None:
    """Wait until the work queued on `device` (default: the default device) has finished.

    Backends that queue kernels (CUDA, ROCm, OpenCL) return from ops before the work is
    done, and OpenCL defers elementwise ops until a result is needed: time a step with the
    result held until after this call. On the CPU it returns at once.

    PyTorch
    -------
    ``torch.cuda.synchronize`` (``torch.accelerator.synchronize``), for any ember device.
    """
    dev = (Device(device) if device is not None else default_device()).concrete()
    from .backend import optional
    sync = optional(dev.backend, "synchronize")
    if sync is not None:
        sync(dev.index)


def devices() -> list:
    """Every available device of every installed backend (loads all plugins).

    PyTorch
    -------
    None: PyTorch asks per device type (``torch.cuda.device_count``); ember lists every
    backend's devices at once.
    """
    from . import plugins
    plugins.load_all()
    out = []
    for kind, backend in sorted(plugins.loaded_backends().items()):
        if kind != backend.name or not plugins._probe(backend).available:
            continue
        for info in backend.devices():
            out.append(Device(kind, info.index))
    return out
