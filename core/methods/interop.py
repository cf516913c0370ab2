"""Tensor's ecosystem protocols: pickling by value, DLPack, the array API namespace,
to_device."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..errors import EmberValueError, brief
from ..ops.creation import from_host
from ..tensor import Tensor

_API_VERSIONS = ("2021.12", "2022.12", "2023.12")


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of this tensor's memory (see ember.utils.dlpack)."""
    from ..utils import dlpack
    return dlpack.export(self, stream=stream, max_version=max_version, dl_device=dl_device,
                         copy=copy)


def __dlpack_device__(self) -> tuple:
    """(DLPack device type, index): (1, 0) for cpu, (4, i) for opencl:i (see dlpack.py)."""
    from ..utils import dlpack
    return dlpack.dlpack_device(self)


def __array_namespace__(self, /, *, api_version: str | None = None):
    """ember.array_api: the array API standard's namespace for ember tensors."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise EmberValueError(f"__array_namespace__: api_version {api_version!r} is not "
                              f"supported; ember.array_api implements "
                              f"{', '.join(_API_VERSIONS)} (2023.12)")
    from .. import array_api
    return array_api


def to_device(self, device, /, *, stream=None) -> Tensor:
    """This tensor on `device` (the array API's spelling of .to(device))."""
    if stream is not None:
        raise EmberValueError("to_device: ember has no streams to order the copy on; pass "
                              "stream=None")
    return self.to(device)


def __reduce__(self):
    """Tensor.__reduce__: by value (dtype, shape, bytes, device), for ember.multiprocessing
    and copy; checkpoints never pickle (ember.save writes a safe format).  A parameter
    (nn.Parameter: a tensor flagged "param") comes back as one."""
    t = self
    host = t.detach()._host()
    # tobytes() writes any layout (strided, offset, transposed, 0-d, empty) in C order
    data = host.tobytes()
    return (_rebuild_tensor, (t.dtype.name, tuple(host.shape), data, str(t.device),
                              bool(t.requires_grad), t._meta is not None and "param" in t._meta))


def _rebuild_tensor(dtype: str, shape: tuple, data: bytes, device: str,
                    requires_grad: bool = False, parameter: bool = False):
    kind = D.get_dtype(dtype)
    if (not isinstance(shape, tuple) or any(type(s) is not int or s < 0 for s in shape)
            or not isinstance(data, bytes) or len(data) != math.prod(shape) * kind.itemsize):
        raise EmberValueError(f"ember.multiprocessing: a pickled tensor of {brief(dtype, 40)} "
                              f"and shape {brief(shape, 100)} carries "
                              f"{len(data) if isinstance(data, bytes) else brief(data, 40)} "
                              "bytes; it was not written by Tensor.__reduce__")
    host = np.frombuffer(data, dtype=kind.np).reshape(shape).copy()
    t = from_host(host, device)
    if parameter:                       # nn.Parameter(t, requires_grad), as it was sent
        t._set_meta("param", True)
        t.requires_grad = bool(requires_grad)
        return t
    return t.requires_grad_(True) if requires_grad else t
