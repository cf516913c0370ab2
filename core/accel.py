"""ember.cuda and ember.rocm: torch.cuda's questions (is it there, how many, which) answered
through the plugin host, without importing CuPy until a GPU is really used."""
from __future__ import annotations

import warnings

from . import legacy, plugins
from .amp import GradScaler, autocast, custom_bwd, custom_fwd
from .backend import optional
from .errors import DeviceUnavailableError, EmberValueError, KernelMemoryError, NotInEmberError

__all__ = ["cuda", "rocm", "mps", "xpu", "accelerator", "device_namespace"]


class Accelerator:
    """One GPU device type's namespace; `ember.cuda` also answers for ROCm builds, as in
    PyTorch, where 'cuda' is an alias of 'rocm'."""

    # torch.cuda.OutOfMemoryError: what a kernel that cannot allocate raises (CuPy's
    # OutOfMemoryError, a MemoryError, reaches the program as this)
    OutOfMemoryError = KernelMemoryError

    def __init__(self, kind: str):
        self._kind = kind

    def __repr__(self) -> str:
        return f"<ember.{self._kind}>"

    # -- questions that never raise ---------------------------------------------------------
    def _backend(self):
        """The available backend serving this type, or None (never raises)."""
        try:
            return plugins.try_backend_for(self._kind)
        except Exception:  # noqa: BLE001  (a broken third-party plugin means "not available")
            return None

    def _count(self, backend) -> int:
        try:
            return len(backend.devices())
        except Exception:  # noqa: BLE001  (same: availability questions must not raise)
            return 0

    @property
    def amp(self):
        """torch.cuda.amp: autocast and GradScaler bound to this device type (ember.amp)."""
        return device_namespace(self._kind)

    # -- seeds: ember draws every random number on the host from one stream (so a seed
    # gives the same numbers on every device); seeding "this device type's generator"
    # seeds that stream, and with no such device it is silently ignored, as in PyTorch
    def manual_seed(self, seed: int) -> None:
        if self.is_available():
            from .ops.creation import manual_seed
            manual_seed(seed)

    manual_seed_all = manual_seed

    def seed(self) -> None:
        if self.is_available():
            import random
            self.manual_seed(random.SystemRandom().randrange(2 ** 63))

    seed_all = seed

    def initial_seed(self) -> int:
        self._require()
        from .ops.creation import initial_seed
        return initial_seed()

    def is_initialized(self) -> bool:
        return self.is_available()

    def init(self) -> None:
        self._require()

    def set_device(self, device) -> None:
        """Make `device` the one a bare 'cuda' means on this thread (`.cuda()`,
        ``device="cuda"``), as torch.cuda.set_device: tensors created without a device still
        go to the default device (cpu unless ember.set_default_device chose another).  A
        negative index does nothing, as in torch."""
        if isinstance(device, int) and not isinstance(device, bool) and device < 0:
            return
        from .device import set_current_index
        set_current_index(self._require().name, self._index(device))

    def device(self, device):
        """Context manager: a bare 'cuda' means `device` inside the block, the previous one
        after (torch.cuda.device). None or a negative index changes nothing."""
        return _CurrentDevice(self, device)

    def is_bf16_supported(self, including_emulation: bool = True) -> bool:
        return self.is_available()

    def is_available(self) -> bool:
        """True when a plugin for this type is installed, its probe passes and it has a GPU."""
        return plugins.device_count(self._kind) > 0

    def device_count(self) -> int:
        return plugins.device_count(self._kind)

    def unavailable_reason(self) -> str:
        """'' when available; otherwise why not and the fix (what `ember doctor` says)."""
        try:
            self._require()
        except DeviceUnavailableError as exc:
            return str(exc)
        return ""

    def synchronize(self, device=None) -> None:
        """Wait for the queued kernels on `device` (every device when None); with no GPU
        there is nothing queued, so this returns at once."""
        backend = self._backend()
        sync = optional(backend, "synchronize")
        if sync is not None and self._count(backend):
            sync(None if device is None else self._index(device))

    def memory_allocated(self, device=None) -> int:
        """Bytes held by tensors on `device` (0 with no GPU)."""
        return self._memory("memory_allocated", device)

    def memory_reserved(self, device=None) -> int:
        """Bytes the backend's memory pool holds on `device`, in use or cached (0 with no GPU)."""
        return self._memory("memory_reserved", device)

    def max_memory_allocated(self, device=None) -> int:
        """The most bytes tensors held on `device`: 0 with no GPU, as in PyTorch; ember's
        backends do not track the peak, so with a GPU this raises NotInEmberError."""
        return self._peak("max_memory_allocated", device)

    def max_memory_reserved(self, device=None) -> int:
        """The most bytes the memory pool held on `device` (see max_memory_allocated)."""
        return self._peak("max_memory_reserved", device)

    def reset_peak_memory_stats(self, device=None) -> None:
        """Start the peaks anew: nothing to do with no GPU (see max_memory_allocated)."""
        self._peak("reset_peak_memory_stats", device)

    reset_max_memory_allocated = reset_peak_memory_stats

    def _peak(self, what: str, device) -> int:
        if not self._count(self._backend()):
            return 0
        raise NotInEmberError(
            f"ember.{self._kind}.{what}: ember's {self._kind} backend does not track peak "
            f"memory; ember.{self._kind}.memory_allocated() gives the bytes tensors hold now "
            f"and memory_reserved() what the pool holds")

    def empty_cache(self) -> None:
        """Return cached, unused pool memory to the driver (nothing to do with no GPU)."""
        fn = optional(self._backend(), "empty_cache")
        if fn is not None:
            fn()

    def _memory(self, what: str, device) -> int:
        backend = self._backend()
        fn = optional(backend, what)
        if fn is None or not self._count(backend):
            return 0
        return int(fn(self._index(device)))

    # -- questions about a device: these need one ---------------------------------------------
    def current_device(self) -> int:
        """The index a bare 'cuda' means now on this thread (0 unless set_device chose another).

        Raises DeviceUnavailableError (with the reason) when there is no such device.
        """
        backend = self._require()
        from .device import current_index
        return current_index(backend.name)

    def get_device_name(self, device=None) -> str:
        """The GPU's name, e.g. 'NVIDIA H100 80GB HBM3'."""
        backend = self._require()
        return backend.devices()[self._index(device)].name

    def _require(self):
        backend = plugins.backend_for(self._kind)   # raises with the probe's reason
        if not self._count(backend):
            raise DeviceUnavailableError(
                f"device type '{self._kind}' is not available here: the {backend.name} "
                "backend loaded but lists no device; fix: check the driver (`nvidia-smi` or "
                "`rocminfo`) and see `ember doctor`")
        return backend

    def _serves(self, kind: str) -> bool:
        backend = self._backend()
        return kind == self._kind or (backend is not None and kind == backend.name)

    def _index(self, device) -> int:
        """An index from None (the current device), an int, 'cuda:1' or a Device."""
        if device is None:
            return self.current_device()
        if isinstance(device, int) and not isinstance(device, bool):
            index = device
        else:
            from .device import Device
            dev = Device(device)
            if not self._serves(dev.type):
                raise EmberValueError(
                    f"ember.{self._kind}: expected a {self._kind} device, got {dev}; pass an "
                    f"index or '{self._kind}:N'")
            index = dev.index or 0
        count = self.device_count()
        if not 0 <= index < count:
            raise DeviceUnavailableError(
                f"ember.{self._kind}: no device {self._kind}:{index}; this machine has {count} "
                f"({', '.join(f'{self._kind}:{i}' for i in range(count)) or 'none'}); use an "
                f"index below {count}")
        return index


class _CurrentDevice:
    """torch.cuda.device(i): set the current device of a GPU type for a block."""

    def __init__(self, accel: Accelerator, device):
        self._accel, self._device, self._previous = accel, device, None

    def __enter__(self):
        device = self._device
        if device is None or (isinstance(device, int) and not isinstance(device, bool)
                              and device < 0):
            return self
        from .device import current_index, set_current_index
        kind = self._accel._require().name
        self._previous = (kind, current_index(kind))
        set_current_index(kind, self._accel._index(device))
        return self

    def __exit__(self, *exc) -> bool:
        if self._previous is not None:
            from .device import set_current_index
            set_current_index(*self._previous)
            self._previous = None
        return False


class _DeviceAmp:
    """torch.cuda.amp / torch.cpu.amp: autocast and GradScaler bound to one device type,
    as classes (subclasses of ember.amp's), so isinstance, subclassing, decorators and
    `with` work as in PyTorch, which deprecates these spellings with a FutureWarning."""

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type
        self.autocast, self.GradScaler = _amp_classes(device_type)

    def custom_fwd(self, fwd=None, *, cast_inputs=None):
        return custom_fwd(fwd, device_type=self.device_type, cast_inputs=cast_inputs)

    def custom_bwd(self, bwd=None):
        return custom_bwd(bwd, device_type=self.device_type)

    def __repr__(self) -> str:
        return f"<ember.{self.device_type}.amp>"


def _deprecated(device_type: str, name: str, stacklevel: int = 3) -> None:
    # PyTorch's text, word for word (programs filter on it)
    warnings.warn(f"`torch.{device_type}.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('{device_type}', args...)` instead.", FutureWarning,
                  stacklevel=stacklevel)


def _amp_classes(device_type: str) -> tuple:
    class _Autocast(autocast):
        """torch.<device>.amp.autocast(enabled=True, dtype=None, cache_enabled=True):
        ember.autocast(device_type, ...)."""

        def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
            if type(self) is _Autocast:     # PyTorch warns for the class itself, and when
                _deprecated(device_type, "autocast")          # it is subclassed (below)
            super().__init__(device_type, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

        def __init_subclass__(cls, **kwargs):
            _deprecated(device_type, "autocast", stacklevel=2)   # PyTorch warns here too
            super().__init_subclass__(**kwargs)

    class _GradScaler(GradScaler):
        """torch.<device>.amp.GradScaler(...): ember.amp.GradScaler(device_type, ...)."""

        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            _deprecated(device_type, "GradScaler")
            super().__init__(device_type, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    for cls, name in ((_Autocast, "autocast"), (_GradScaler, "GradScaler")):
        cls.__name__ = cls.__qualname__ = name
        cls.__module__ = f"ember.{device_type}.amp"
    return _Autocast, _GradScaler


_NAMESPACES: dict = {}


def device_namespace(device_type: str) -> _DeviceAmp:
    """The torch.<device>.amp namespace for device_type (ember.cuda.amp is this for
    'cuda'); one per device type, so its classes are the same objects on every access."""
    if device_type not in _NAMESPACES:
        _NAMESPACES[device_type] = _DeviceAmp(device_type)
    return _NAMESPACES[device_type]


cuda = Accelerator("cuda")
rocm = Accelerator("rocm")
# torch.cuda.FloatTensor & co (ember.legacy): tensors of a dtype on a CUDA device
vars(cuda).update(legacy.device_types("cuda"))


class _Absent:
    """torch.mps / torch.xpu: device types ember has no backend for; every question
    answers "none here" (and seeding is ignored, as PyTorch does without the device)."""

    def __init__(self, kind: str):
        self._kind = kind

    def __repr__(self) -> str:
        return f"<ember.{self._kind}: ember has no {self._kind} backend>"

    def is_available(self) -> bool:
        return False

    def device_count(self) -> int:
        return 0

    def manual_seed(self, seed: int) -> None:
        pass

    manual_seed_all = manual_seed

    def seed(self) -> None:
        pass

    seed_all = seed

    def synchronize(self, device=None) -> None:
        pass

    def empty_cache(self) -> None:
        pass

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        raise DeviceUnavailableError(
            f"ember.{self._kind}.{name}: ember has no {self._kind} backend, so there is no "
            f"{self._kind} device here; use ember.accelerator or ember.devices() to find "
            "the devices ember has")


mps = _Absent("mps")
xpu = _Absent("xpu")


class _CpuNamespace:
    """torch.cpu: the host as a device (always there, one of it) and its deprecated
    torch.cpu.amp spellings."""

    def __init__(self) -> None:
        # torch.cpu.amp: autocast and GradScaler bound to the CPU (deprecated in torch: a
        # FutureWarning, as torch's); an attribute, so `import torch.cpu.amp` can set it
        self.amp = device_namespace("cpu")

    def __repr__(self) -> str:
        return "<ember.cpu>"

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def current_device(self) -> str:
        return "cpu"

    def synchronize(self, device=None) -> None:
        """Nothing to wait for: CPU kernels finish before they return."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        from ._torch_gaps import missing
        raise missing("cpu", name)


cpu = _CpuNamespace()


class _AcceleratorNamespace:
    """torch.accelerator: the best accelerator ember has (a CUDA or ROCm GPU, or an
    OpenCL GPU; an OpenCL CPU device such as PoCL is not an accelerator), or none."""

    def __repr__(self) -> str:
        return "<ember.accelerator>"

    def current_accelerator(self, check_available: bool = False):
        from .device import resolve_auto
        dev = resolve_auto()
        if dev.type == "cpu":
            return None
        from .device import Device
        return Device(dev.type)

    def is_available(self) -> bool:
        return self.current_accelerator() is not None

    def device_count(self) -> int:
        dev = self.current_accelerator()
        if dev is None:
            return 0
        if dev.type in ("cuda", "rocm"):
            return Accelerator(dev.type).device_count()
        return len([d for d in dev.backend.devices() if getattr(d, "is_gpu", False)])

    def current_device_index(self) -> int:
        dev = self.current_accelerator()
        if dev is None:
            return -1
        from .device import default_device
        default = default_device()
        return (default.index or 0) if default.type == dev.type else 0

    current_device_idx = current_device_index

    def set_device_index(self, index: int) -> None:
        dev = self.current_accelerator()
        if dev is None:
            raise DeviceUnavailableError("ember.accelerator.set_device_index: no "
                                         "accelerator here (see `ember devices`)")
        from .device import set_default_device
        set_default_device(f"{dev.type}:{index}")

    set_device_idx = set_device_index

    def synchronize(self, device=None) -> None:
        dev = self.current_accelerator()
        if dev is not None:
            from .device import synchronize
            synchronize(device or dev)


accelerator = _AcceleratorNamespace()
