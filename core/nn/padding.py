"""Padding layers: Zero/Constant/Reflection/Replication/CircularPad{1,2,3}d (F.pad's modes)."""
from __future__ import annotations

from .._doc import generated
from ..errors import EmberValueError
from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _pads(padding, dims: int, name: str) -> tuple:
    """An int (every side) or 2*dims ints (left, right, top, bottom, ...), as torch's."""
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    padding = tuple(int(p) for p in padding)
    if len(padding) != 2 * dims:
        raise EmberValueError(f"{name}: expected an int or {2 * dims} paddings, got "
                              f"{len(padding)}")
    return padding


class _Pad(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding, value: float = 0.0) -> None:
        super().__init__()
        self.padding = _pads(padding, self.dims, type(self).__name__)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise EmberValueError(f"{type(self).__name__}: expected a {self.dims + 1}-D or "
                                  f"{self.dims + 2}-D input, got shape {tuple(input.shape)}")
        if self.mode == "constant":
            return F.pad(input, self.padding, value=self.value)
        return F.pad(input, self.padding, mode=self.mode)

    def extra_repr(self) -> str:
        if self.mode == "constant" and type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"       # torch's two forms
        return f"{self.padding}"


def _make(name, mode, dims, constant=False):
    if constant:
        def __init__(self, padding, value: float) -> None:
            _Pad.__init__(self, padding, value)
    else:
        def __init__(self, padding) -> None:
            _Pad.__init__(self, padding)
    return type(name, (_Pad,), {"mode": mode, "dims": dims, "__init__": __init__,
                                "__doc__": generated(f"F.pad(mode={mode!r}) over the last "
                                                     f"{dims} dim(s).", f"torch.nn.{name}")})


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_make(f"ZeroPad{d}d", "constant", d) for d in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_make(f"ConstantPad{d}d", "constant", d, True)
                                               for d in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_make(f"ReflectionPad{d}d", "reflect", d)
                                                     for d in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _make(f"ReplicationPad{d}d", "replicate", d) for d in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_make(f"CircularPad{d}d", "circular", d)
                                               for d in (1, 2, 3))
