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
from . import ops, plugins
from ._doc import generated
from ._torch_gaps import only_default
from .device import as_device
from .errors import DeviceMismatchError, EmberTypeError
from .tensor import Size, Tensor, wrap

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
           "set_default_tensor_type"]

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


def tensor_legacy_new(self: Tensor, *args, device=None, size=None) -> Tensor:
    """Tensor.new(...): PyTorch's legacy constructor on a tensor, in self's dtype and on its
    device: new() is empty, new(2, 3) and new(Size) zeros of that shape (ember never hands
    out uninitialised memory), new(data) a copy of data (a list or a tuple is data:
    x.new((2, 3)) is tensor([2., 3.])), new(tensor) that tensor's memory (same dtype)."""
    if size is not None:
        if args:
            raise EmberTypeError("new(): got sizes both as arguments and as size=; pass one")
        args = (Size(size),)
    dev = self._device
    if device is not None:
        dev = as_device(device)
        if dev.type != self._device.type:
            raise DeviceMismatchError(
                f"new(): legacy constructor expects device type: {self._device.type} but "
                f"device type: {dev.type} was passed; use ember.tensor(data, device=...) or "
                "x.new_zeros(..., device=...) for another device")
    if len(args) == 1 and type(args[0]) is Tensor and args[0]._device is not dev:
        raise DeviceMismatchError(f"new(tensor): expected a tensor on {dev}, got one on "
                                  f"{args[0]._device}; move it with .to({str(dev)!r})")
    return construct(self._dtype, *args, device=dev, strict=True)


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
        device, dtype = dtype._kind or "cpu", dtype._dtype
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
    the dtype and the device type (PyTorch's rule); `_kind` is None for the CPU types,
    the device type for torch.cuda.FloatTensor & co."""

    _kind = None

    def __call__(cls, *args, device=None):
        if cls._kind is None:
            return construct(cls._dtype, *args, device=device, strict=True)
        if plugins.device_count(cls._kind) == 0:
            try:
                plugins.backend_for(cls._kind)
                why = "its backend lists no device"
            except Exception as exc:  # noqa: BLE001  (the reason, said below)
                why = str(exc)
            raise EmberTypeError(
                f"type torch.{cls._kind}.{cls.__name__} not available: ember has no "
                f"{cls._kind} device here ({why}); make tensors on the devices ember has "
                "(ember.devices()) with ember.tensor(data, device=...)")
        return construct(cls._dtype, *args, device=device or cls._kind, strict=True)

    def __instancecheck__(cls, obj) -> bool:
        return (type(obj) is Tensor and obj._dtype is cls._dtype and
                obj._device.type == (cls._kind or "cpu"))

    def __repr__(cls) -> str:
        return f"<class 'ember.{cls._kind + '.' if cls._kind else ''}{cls.__name__}'>"


def _legacy(name: str, kind: str | None = None) -> _Legacy:
    dtype = TYPES[name]
    where = f"{kind} devices" if kind else "the CPU"
    torch_name = f"torch.{kind + '.' if kind else ''}{name}"
    return _Legacy(name, (), {"_dtype": dtype, "_kind": kind,
                              "__doc__": generated(f"{dtype.name} tensors on {where} (PyTorch's "
                                                   "legacy tensor type): calling it builds one, "
                                                   "isinstance checks dtype and device.",
                                                   torch_name)})


def device_types(kind: str) -> dict:
    """The legacy type names of a GPU device type (torch.cuda.FloatTensor & co): calling
    one builds a tensor on that device (and raises a TypeError, as PyTorch's CPU-only
    build does, on a machine without one); isinstance checks dtype and device type."""
    return {name: _legacy(name, kind) for name in TYPES}


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


def set_default_tensor_type(t) -> None:
    """PyTorch's deprecated set_default_tensor_type (it warns, and so does ember): t (a
    floating legacy type or its name, 'torch.FloatTensor', 'torch.cuda.DoubleTensor') sets
    the default dtype, and a GPU type the default device too.

    PyTorch
    -------
    ``torch.set_default_tensor_type``
    """
    import warnings

    from .errors import EmberWarning
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  EmberWarning, stacklevel=2)
    if isinstance(t, str):
        parts = t.split(".")
        if parts[-1] not in TYPES or parts[0] not in ("torch", "ember") or len(parts) > 3:
            raise EmberTypeError(f"set_default_tensor_type: unknown type name {t!r}; "
                                 "expected e.g. 'torch.FloatTensor' or 'torch.DoubleTensor'")
        t = _legacy(parts[-1], parts[1] if len(parts) == 3 else None)
    if not isinstance(t, _Legacy):
        raise EmberTypeError(f"set_default_tensor_type: invalid type object {t!r}: only "
                             "floating-point types are supported as the default type; pass "
                             "e.g. ember.DoubleTensor (or use ember.set_default_dtype)")
    if t._dtype.category != D.FLOAT:
        raise EmberTypeError(f"set_default_tensor_type: only floating-point types are supported "
                             f"as the default type, got {t.__name__}")
    if t._kind is not None:
        t()                              # raises as PyTorch's does where there is no such device
        from .device import set_default_device
        set_default_device(t._kind)
    D.set_default_dtype(t._dtype)
