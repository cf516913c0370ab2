"""ember.cuda and ember.rocm: torch.cuda's questions (is it there, how many, which) answered
through the plugin host, without importing CuPy until a GPU is really used."""
from __future__ import annotations

from .backend import optional
from .errors import DeviceUnavailableError, EmberValueError

__all__ = ["cuda", "rocm"]


class Accelerator:
    """One GPU device type's namespace; `ember.cuda` also answers for ROCm builds, as in
    PyTorch, where 'cuda' is an alias of 'rocm'."""

    def __init__(self, kind: str):
        self._kind = kind

    def __repr__(self) -> str:
        return f"<ember.{self._kind}>"

    # -- questions that never raise ---------------------------------------------------------
    def _backend(self):
        """The available backend serving this type, or None (never raises)."""
        from . import plugins
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
        from .amp import device_namespace
        return device_namespace(self._kind)

    def is_available(self) -> bool:
        """True when a plugin for this type is installed, its probe passes and it has a GPU."""
        backend = self._backend()
        return backend is not None and self._count(backend) > 0

    def device_count(self) -> int:
        backend = self._backend()
        return 0 if backend is None else self._count(backend)

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
        """The index 'cuda' means now: the default device's, if it is of this type, else 0.

        Raises DeviceUnavailableError (with the reason) when there is no such device.
        """
        self._require()
        from .device import default_device
        dev = default_device()
        return dev.index if self._serves(dev.type) and dev.index is not None else 0

    def get_device_name(self, device=None) -> str:
        """The GPU's name, e.g. 'NVIDIA H100 80GB HBM3'."""
        backend = self._require()
        return backend.devices()[self._index(device)].name

    def _require(self):
        from . import plugins
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


cuda = Accelerator("cuda")
rocm = Accelerator("rocm")
