"""Tensor's ecosystem protocols: DLPack, the array API namespace, to_device."""
from __future__ import annotations

from ..errors import EmberValueError
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
