"""Argument checks several nn families share (conv and pooling inputs, loss and distance
ones), and torch.nn.modules.utils' argument expanders (_single, _pair, _triple,
_quadruple), which PyTorch programs import from there."""
from __future__ import annotations

import collections.abc
from itertools import repeat

from .. import dtypes as D
from ..errors import EmberTypeError, ShapeError
from ..tensor import Tensor


def _batched(name: str, x: Tensor, ndim: int):
    """(x with a batch dim, whether one was added): torch accepts unbatched inputs."""
    if x.ndim == ndim:
        return x, False
    if x.ndim == ndim - 1:
        return x.unsqueeze(0), True
    raise ShapeError(f"{name}: expected a {ndim - 1}-D (unbatched) or {ndim}-D (batched) "
                     f"input, got shape {tuple(x.shape)}")


def _need_float(name: str, x: Tensor, what: str = "input") -> None:
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}: expected {what} to be a Tensor, got "
                             f"{type(x).__name__}")
    if x._dtype.category != D.FLOAT and not (x._dtype.category == D.COMPLEX and
                                              name in COMPLEX_OK):
        raise EmberTypeError(f"{name}: expected a floating point {what}, got "
                             f"{x._dtype.name}; call .float() first")


# the nn functions torch computes on complex tensors too (the others refuse them, as torch)
COMPLEX_OK = frozenset({"l1_loss", "linear", "tanhshrink", "silu", "bilinear",
                        "pairwise_distance", "triplet_margin_loss"})


def _floats(name: str, **tensors: Tensor) -> None:
    for what, x in tensors.items():
        _need_float(name, x, what)


def _tensor(name: str, x, what: str) -> None:
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}: expected {what} to be a Tensor, got {type(x).__name__}")


def _ntuple(n: int, name: str = "parse"):
    """x as an n-tuple: an iterable as a tuple, anything else repeated n times (torch's)."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")
