"""DataParallel and data_parallel: PyTorch's single-process data parallelism, as PyTorch
runs it on one device.

PyTorch's DataParallel splits the batch over its devices' GPUs (scatter), runs a replica
of the module on each in threads (replicate, parallel_apply) and gathers the outputs.
What it does on one device is what ember does:

- no accelerator (PyTorch: no CUDA): `device_ids` is `[]` and forward calls the module;
- one device (ember's accelerator: a CUDA or ROCm GPU, or an OpenCL GPU; or
  `device_ids=[i]`): the module is moved there at construction, forward checks that its
  parameters and buffers are there, moves the inputs' tensors there (through tuples,
  lists, dicts and namedtuples) and calls the module;
- several devices: ember does not split a batch across devices in one process; this
  raises NotInEmberError naming DistributedDataParallel, which does (one process per
  device, `ember run -n N`).

`.module` is the wrapped module and `state_dict()` keys start with `module.`, as in
PyTorch.
"""
from __future__ import annotations

from itertools import chain

from ... import plugins
from ...device import Device, resolve_auto
from ...errors import DeviceMismatchError, DeviceUnavailableError, EmberValueError, NotInEmberError
from ...tensor import Tensor
from ..module import Module

__all__ = ["DataParallel", "data_parallel"]


def _accelerator() -> tuple:
    """(device type, its device indices) that data parallelism spreads over: ember's
    accelerator, as `ember.accelerator` finds it, or (None, []) on a machine without one."""
    dev = resolve_auto()
    if dev.type == "cpu":
        return None, []
    devices = plugins.backend_for(dev.type).devices()
    if dev.type == "opencl":
        devices = [d for d in devices if getattr(d, "is_gpu", False)]
    return dev.type, [d.index if d.index is not None else i for i, d in enumerate(devices)]


def _index(device, kind: str, what: str) -> int:
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    try:
        dev = Device(device)
    except Exception as exc:  # noqa: BLE001  (said below, with what was expected)
        raise EmberValueError(f"{what}: expected a device index or a {kind} device, got "
                              f"{device!r} ({exc})") from None
    if dev.type != kind:
        raise EmberValueError(f"{what}: expected a device index or a {kind} device (the "
                              f"accelerator here), got {dev}; pass an index such as 0")
    return dev.index or 0


def _one_device(device_ids: list, what: str) -> None:
    if len(device_ids) > 1:
        raise NotInEmberError(
            f"{what} over {len(device_ids)} devices (device_ids={device_ids}): ember does "
            "not split a batch across devices in one process; use "
            "ember.nn.parallel.DistributedDataParallel (one process per device, started "
            f"with `ember run -n {len(device_ids)} script.py`), or pass one device "
            "(device_ids=[0])")


def _check_on(module: Module, device: Device) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if t.device != device:
            raise DeviceMismatchError(
                f"module must have its parameters and buffers on device {device} "
                f"(device_ids[0]) but found one of them on device: {t.device}; move it "
                f"with module.to({str(device)!r}) first")


def _to(obj, device: Device):
    """obj with every tensor in it moved to device: PyTorch's scatter onto one device."""
    if type(obj) is Tensor:
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):      # a namedtuple
        return type(obj)(*(_to(v, device) for v in obj))
    if isinstance(obj, tuple):
        return tuple(_to(v, device) for v in obj)
    if isinstance(obj, list):
        return [_to(v, device) for v in obj]
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0): see the module
    doc.  `dim` is the dimension PyTorch would split the batch along; on one device
    there is nothing to split."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        kind, available = _accelerator()
        if kind is None:
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = available
        if not device_ids:
            raise DeviceUnavailableError("DataParallel: no available devices were found "
                                         "(device_ids is empty); pass device_ids=[0]")
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d, kind, "DataParallel") for d in device_ids]
        self.output_device = _index(device_ids[0] if output_device is None else
                                    output_device, kind, "DataParallel(output_device=)")
        self.src_device_obj = Device(kind, self.device_ids[0])
        _one_device(self.device_ids, "DataParallel")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        return self.module(*_to(inputs, self.src_device_obj),
                           **_to(kwargs, self.src_device_obj))


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """module(*inputs, **module_kwargs) on the accelerator, as PyTorch's data_parallel runs
    it on one device (see the module doc); a machine without an accelerator raises, as
    PyTorch's does without CUDA."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    kind, available = _accelerator()
    if kind is None:
        raise DeviceUnavailableError(
            "data_parallel: device type could not be determined: there is no accelerator "
            "here (PyTorch raises the same without CUDA); call module(*inputs) directly")
    if device_ids is None:
        device_ids = available
    if not device_ids:
        raise DeviceUnavailableError("data_parallel: no available devices were found "
                                     "(device_ids is empty); pass device_ids=[0]")
    device_ids = [_index(d, kind, "data_parallel") for d in device_ids]
    _index(device_ids[0] if output_device is None else output_device, kind,
           "data_parallel(output_device=)")
    _one_device(device_ids, "data_parallel")
    device = Device(kind, device_ids[0])
    _check_on(module, device)
    return module(*_to(inputs, device), **_to(module_kwargs or {}, device))
