"""__array_namespace_info__: what this namespace supports, per device."""
from __future__ import annotations

from .. import dtypes as D
from ..device import Device, as_device, default_device
from ._dtypes import isdtype


class __array_namespace_info__:  # noqa: N801  (the standard's name)
    """The inspection API of the standard: capabilities, devices and dtypes.

    PyTorch
    -------
    None: the array API standard's inspection namespace (PyTorch has none).
    """

    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self) -> Device:
        return default_device()

    def devices(self) -> list:
        """Every available device (loads the installed backend plugins)."""
        from ..device import devices
        return devices()

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": D.get_default_dtype(),
                "complex floating": D.get_default_dtype().to_complex(),
                "integral": D.int64, "indexing": D.int64}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """name -> dtype for the dtypes `device` supports, of `kind` (None: all)."""
        dev = as_device(device)
        # the standard's dtypes only: its keys are "canonical names of the data types of
        # this specification", so float16/bfloat16 (ember's extensions) are left out
        standard = tuple(d for d in D.ALL if d not in (D.float16, D.bfloat16))
        if dev.type == "cpu":
            supported = standard
        else:
            names = dev.backend.capabilities(dev.index).dtypes
            supported = tuple(d for d in standard if d.name in names)
        if kind is not None:
            supported = tuple(d for d in supported if isdtype(d, kind))
        return {d.name: d for d in supported}

