"""PyTorch's legacy constructors and type names: Tensor(2, 3), Tensor([1.0]), FloatTensor,
LongTensor, ..., and Tensor.type().

`ember.Tensor(...)` builds a tensor of the default float dtype: from sizes (filled with
zeros: ember never hands out uninitialised memory), from data (a list, a NumPy array), from
a Size, or as an alias of another tensor.  The typed names (FloatTensor, ...) build their
own dtype and answer `isinstance` by dtype on the CPU, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import ops
from ._torch_gaps import only_default
from .errors import EmberTypeError
from .tensor import Size, Tensor, wrap

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]

# legacy type name -> dtype
TYPES = {"FloatTensor": D.float32, "DoubleTensor": D.float64, "HalfTensor": D.float16,
         "BFloat16Tensor": D.bfloat16, "LongTensor": D.int64, "IntTensor": D.int32,
         "ShortTensor": D.int16, "CharTensor": D.int8, "ByteTensor": D.uint8,
         "BoolTensor": D.bool_}
_NAMES = {dtype: name for name, dtype in TYPES.items()}


def construct(dtype, *args, device=None, strict: bool = False) -> Tensor:
    """The tensor that Tensor(*args) / FloatTensor(*args) makes (see the module doc)."""
    if not args:
        return ops.zeros(0, dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if type(data) is Tensor:
            if strict and data._dtype is not dtype:
                raise EmberTypeError(f"{_NAMES.get(dtype, 'Tensor')}(tensor): expected a "
                                     f"{dtype.name} tensor, got {data._dtype.name}; convert "
                                     "it with .to(...)")
            return wrap(data._data, data._device, data._dtype)     # shares its storage
        if isinstance(data, Size):
            return ops.zeros(tuple(data), dtype=dtype, device=device)
        if isinstance(data, (list, tuple, np.ndarray)):
            return ops.tensor(data, dtype=dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return ops.zeros(args, dtype=dtype, device=device)
    raise EmberTypeError(
        f"Tensor(): expected sizes (ints), a Size, data (a list or an array) or a tensor, "
        f"got ({', '.join(type(a).__name__ for a in args)}); to make a tensor from data use "
        "ember.tensor(data, dtype=...)")


def tensor_new(cls, *args, device=None):
    """Tensor.__new__: ember.Tensor(...) builds a tensor of the default float dtype."""
    return construct(D.get_default_dtype(), *args, device=device)


def type_name(x: Tensor) -> str:
    """PyTorch's legacy type string: 'torch.FloatTensor', 'torch.cuda.LongTensor', ..."""
    name = _NAMES[x._dtype]
    kind = x._device.type
    return f"torch.{name}" if kind == "cpu" else f"torch.{kind}.{name}"


def tensor_type(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """t.type() -> the legacy type string; t.type(ember.int64 / 'torch.LongTensor' /
    ember.LongTensor) -> t converted (a 'torch.cuda.*' name also moves it to 'cuda').
    non_blocking (or its old name async) lets torch copy asynchronously: ember's copy is
    done when type() returns, which that allows."""
    unknown = set(kwargs) - {"async", "memory_format"}
    if unknown:
        raise EmberTypeError(f"type() got an unexpected keyword argument "
                             f"{sorted(unknown)[0]!r}")
    only_default("Tensor.type", "memory_format", kwargs.get("memory_format"),
                 ("preserve_format", "contiguous_format"))
    if dtype is None:
        return type_name(self)
    device = None
    if isinstance(dtype, _Legacy):
        dtype = dtype._dtype
    elif isinstance(dtype, str) and dtype.endswith("Tensor"):
        parts = dtype.split(".")
        if parts[-1] not in TYPES or parts[0] not in ("torch", "ember") or len(parts) > 3:
            raise EmberTypeError(f"type(): unknown type name {dtype!r}; expected e.g. "
                                 f"'torch.FloatTensor' or a dtype")
        device = parts[1] if len(parts) == 3 else "cpu"
        dtype = TYPES[parts[-1]]
    out = self.to(D.get_dtype(dtype))
    return out.to(device) if device is not None and out._device.type != device else out


class _Legacy(type):
    """The metaclass of FloatTensor & co: calling one builds a tensor; isinstance checks
    the dtype on the CPU (PyTorch's rule)."""

    def __call__(cls, *args, device=None):
        return construct(cls._dtype, *args, device=device, strict=True)

    def __instancecheck__(cls, obj) -> bool:
        return type(obj) is Tensor and obj._dtype is cls._dtype and obj._device.type == "cpu"

    def __repr__(cls) -> str:
        return f"<class 'ember.{cls.__name__}'>"


def _legacy(name: str) -> _Legacy:
    dtype = TYPES[name]
    return _Legacy(name, (), {"_dtype": dtype, "__doc__": f"{dtype.name} tensors on the CPU "
                                                          f"(PyTorch's legacy {name})."})


FloatTensor = _legacy("FloatTensor")
DoubleTensor = _legacy("DoubleTensor")
HalfTensor = _legacy("HalfTensor")
BFloat16Tensor = _legacy("BFloat16Tensor")
LongTensor = _legacy("LongTensor")
IntTensor = _legacy("IntTensor")
ShortTensor = _legacy("ShortTensor")
CharTensor = _legacy("CharTensor")
ByteTensor = _legacy("ByteTensor")
BoolTensor = _legacy("BoolTensor")
