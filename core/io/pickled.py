"""Whole objects in PyTorch's zip checkpoint format: what ember.save writes for an object its
safe format cannot hold (an nn.Module, a dataclass, an argparse Namespace, a dict holding
arbitrary objects), and what ember.load(weights_only=False) unpickles fully.

Writing: the object is pickled (protocol 2, as torch.save) into `archive/data.pkl`; every
ember tensor becomes what torch.save writes for a tensor, `torch._utils._rebuild_tensor_v2`
over a storage given by persistent id ('storage', torch.<Type>Storage, key, location,
numel), whose bytes are the zip member `archive/data/<key>` (stored, aligned to 64 bytes as
torch aligns them); a parameter is `torch._utils._rebuild_parameter` of such a tensor, a
dtype `torch.<name>`, a device `torch.device(str)`.  torch.load reads the file (tensors
come back as torch tensors; objects of ember classes need ember importable), and so does
ember.load: the allowlisted part (tensors, containers, the globals add_safe_globals marked
safe) by default, everything with weights_only=False.

Reading with weights_only=False is Python's unpickler: the file can run any code, as
torch.load(weights_only=False) can; use it only for files from a source you trust.  torch's
names are ember's (torch.nn.modules.linear.Linear is ember.nn.Linear, as under
ember.torch_alias); storages, sizes and offsets are checked as for a weights-only load.
"""
from __future__ import annotations

import io
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from .. import dtypes as D
from ..device import Device
from ..errors import CheckpointError, EmberTypeError, brief
from ..tensor import Size, Tensor
from . import torch_zip

_PROTOCOL = 2                        # torch.save's DEFAULT_PROTOCOL
_ALIGN = 64                          # torch aligns each storage's bytes to 64
_STORAGE_OF = {dtype: name for name, dtype in torch_zip._STORAGES.items()}


class _TorchGlobal:
    """A name in torch's namespace written as a pickle GLOBAL (torch._utils._rebuild_...):
    the file must name torch's functions for torch.load to read it, and ember has no torch
    to import them from."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):           # pickle's save_reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_DEVICE = _TorchGlobal("torch", "device")
_SIZE = _TorchGlobal("torch", "Size")


class _StorageRef:
    __slots__ = ("key", "kind", "location", "numel")

    def __init__(self, key: str, kind: str, location: str, numel: int):
        self.key, self.kind, self.location, self.numel = key, kind, location, numel


class _TensorData:
    """A tensor's data without its parameter flag (what _rebuild_parameter wraps)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """Python's pickler, writing ember tensors, dtypes and devices as torch.save does."""

    def __init__(self, file, protocol: int):
        super().__init__(file, protocol)
        self.storages: dict[str, np.ndarray] = {}
        self._keys: dict[int, _StorageRef] = {}        # id of a native buffer -> storage
        self._keep: list = []

    def save(self, obj, save_persistent_id=True):
        kind = type(obj)
        if kind is _TorchGlobal:
            self._global(obj.module, obj.name)
        elif isinstance(obj, D.DType):
            self._global("torch", obj.name)
        else:
            super().save(obj, save_persistent_id)

    def _global(self, module: str, name: str) -> None:
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return ("storage", _TorchGlobal("torch", obj.kind), obj.key, obj.location,
                    obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if obj._meta is not None and "param" in obj._meta:
                return (_REBUILD_PARAMETER, (_TensorData(obj), bool(obj.requires_grad),
                                             OrderedDict()))
            return self._tensor(obj, bool(obj.requires_grad))
        kind = type(obj)
        if kind is _TensorData:
            return self._tensor(obj.tensor, False)
        if kind is Size:
            return (_SIZE, (tuple(obj),))
        if isinstance(obj, Device):
            return (_DEVICE, (str(obj),))
        return NotImplemented

    def _tensor(self, t: Tensor, requires_grad: bool):
        ref = self._keys.get(id(t._data))
        if ref is None:
            host = np.ascontiguousarray(t.detach().numpy())
            host = host.astype(host.dtype.newbyteorder("<"), copy=False)
            key = str(len(self.storages))
            ref = _StorageRef(key, _STORAGE_OF[t.dtype.name], str(t.device), host.size)
            self.storages[key] = host
            self._keys[id(t._data)] = ref
            self._keep.append(t._data)
        shape = tuple(t.shape)
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        return (_REBUILD_TENSOR, (ref, 0, Size(shape), tuple(reversed(strides)),
                                  requires_grad, OrderedDict()))


def prepare(obj, protocol: int = _PROTOCOL) -> tuple[bytes, dict, int]:
    """(data.pkl's bytes, {storage key: host array}, the file's size about): everything
    is pickled before anything is written, so an unpicklable part leaves f untouched."""
    pickled = io.BytesIO()
    pickler = _Pickler(pickled, protocol)
    try:
        pickler.dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise EmberTypeError(
            f"ember.save: cannot save {type(obj).__name__}: part of it cannot be pickled "
            f"({brief(str(exc), 300)}); save what can be (a state_dict(), plain data), or "
            "give the class __getstate__/__reduce__") from None
    data = pickled.getvalue()
    size = len(data) + sum(a.nbytes + 2 * _ALIGN for a in pickler.storages.values()) + 1024
    return data, pickler.storages, size


def write(fh, data: bytes, storages: dict) -> None:
    """The torch zip checkpoint (data.pkl, byteorder, the storages, version records) to fh,
    each storage's bytes streamed from its array."""
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as z:
        _put(z, "archive/data.pkl", data)
        _put(z, "archive/byteorder", b"little")
        for key, host in storages.items():
            _put(z, f"archive/data/{key}", host)
        _put(z, "archive/version", b"3\n")
        _put(z, "archive/.data/version", b"3\n")


def _put(z: zipfile.ZipFile, name: str, data) -> None:
    """A stored member whose bytes begin at a multiple of 64 in the file (a padding extra
    field, as torch's writer pads), so storages can be memory-mapped at their dtype's
    alignment."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = z.fp.tell() + 30 + len(name.encode())
    pad = (-(start + 4)) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    payload = data if isinstance(data, bytes) else memoryview(
        np.ascontiguousarray(data).reshape(-1).view(np.uint8))
    info.file_size = len(payload) if isinstance(payload, bytes) else payload.nbytes
    with z.open(info, "w", force_zip64=info.file_size > 0x7FFF0000) as member:
        for at in range(0, info.file_size, 64 << 20):     # no second copy of a storage
            member.write(payload[at:at + (64 << 20)])


class _Unpickler(pickle.Unpickler):
    """Python's unpickler (any code may run), with torch's names read as ember's."""

    def __init__(self, data: bytes, machine, place):
        super().__init__(io.BytesIO(data))
        self.machine, self.place = machine, place

    def persistent_load(self, pid):
        return self.machine._persistent(pid)

    def find_class(self, module: str, name: str):
        full = f"{module}.{name}"
        if full in ("torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2"):
            return self._tensor
        if full in ("torch._utils._rebuild_parameter",
                    "torch._utils._rebuild_parameter_with_state"):
            return self._parameter
        if full == "torch.device":
            return torch_zip.make_device
        if module == "torch" and name in torch_zip._STORAGES:
            return torch_zip._StorageType(name, torch_zip._STORAGES[name])
        if module == "torch" and name in torch_zip._DTYPE_NAMES:
            return D.get_dtype(name)
        if full == "torch.Size":
            return Size
        if module == "torch" or module.startswith("torch."):
            from ..torch_alias import resolve
            try:
                return getattr(resolve(module), name)
            except (ImportError, AttributeError):
                raise CheckpointError(
                    f"ember.load: the checkpoint holds an object of torch's {full}, which "
                    "ember has no counterpart for (see `ember torch-api`); save its data "
                    "(a state_dict()) with torch instead") from None
        return super().find_class(module, name)

    def _tensor(self, *args):
        args = tuple(tuple(a) if type(a) is Size else a for a in args)
        return self.place(self.machine._rebuild_tensor(*args))

    def _parameter(self, data, requires_grad, hooks=None, state=None):
        from ..nn.parameter import Parameter
        if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
            raise CheckpointError("ember.load: a parameter that is not a tensor with a "
                                  "requires_grad flag")
        out = Parameter(data, requires_grad=requires_grad)
        for key, value in (state or {}).items():
            setattr(out, key, value)
        return out


def loads(fh, start: int, size: int, name: str, place, mmap_path: str | None):
    """Unpickle the torch zip checkpoint fully (weights_only=False)."""
    archive, data, machine = torch_zip.open_archive(fh, start, size, name, mmap_path)
    with archive:
        try:
            return _Unpickler(data, machine, place).load()
        except CheckpointError:
            raise
        except (pickle.UnpicklingError, EOFError) as exc:
            raise CheckpointError(f"ember.load: {name} is not a valid PyTorch checkpoint: "
                                  f"data.pkl is not a valid pickle ({brief(str(exc), 200)})") \
                from None
