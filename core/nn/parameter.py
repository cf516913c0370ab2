"""Parameter: a Tensor flagged as a module parameter (requires_grad=True by default).

ember's Tensor is a slotted class and the dispatcher's fast paths test `type(x) is Tensor`
(not isinstance) to stay cheap, so a Tensor *subclass* would be passed to kernels as an
opaque object.  `Parameter(t)` therefore returns a plain Tensor sharing t's storage, with a
"param" flag in its metadata; `isinstance(x, Parameter)` reads that flag.  Every op and
fast path treats a parameter exactly like any other tensor.
"""
from __future__ import annotations

from .. import dtypes as D
from ..errors import EmberError, EmberTypeError, EmberValueError
from ..tensor import Tensor, wrap

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


class _ParameterMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        kind = type(obj)
        return ((kind is Tensor and obj._meta is not None and "param" in obj._meta)
                or kind is UninitializedParameter)

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls or sub is UninitializedParameter


class Parameter(metaclass=_ParameterMeta):
    """Parameter(data, requires_grad=True) -> a Tensor registered as a module parameter.

    PyTorch
    -------
    ``torch.nn.Parameter``
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:
        if data is None:
            from ..ops import empty
            data = empty(0)
        if type(data) is not Tensor:
            raise EmberTypeError(f"Parameter: expected a Tensor, got {type(data).__name__}; "
                                 "wrap the values with ember.tensor(...) first")
        if requires_grad and data._dtype.category < D.FLOAT:
            raise EmberTypeError(f"Parameter: only floating point tensors can require "
                                 f"gradients, got {data._dtype.name}; pass "
                                 "requires_grad=False or cast with .float()")
        # shares storage with data, as torch.nn.Parameter(t) does
        t = wrap(data._data, data._device, data._dtype)
        t._set_meta("param", True)
        t.requires_grad = bool(requires_grad)
        return t


def zero_grads(params, set_to_none: bool = True) -> None:
    """Module.zero_grad and Optimizer.zero_grad: drop each gradient, or zero it in place."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        for p in params:
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p._set_grad(None)
            else:
                if g.grad_fn is not None:
                    g = g.detach()
                    p._set_grad(g)
                g.zero_()


def is_parameter(x) -> bool:
    return isinstance(x, Parameter)


class _BufferMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        kind = type(obj)
        return ((kind is Tensor or kind is UninitializedBuffer) and obj._meta is not None
                and "buffer" in obj._meta)


class Buffer(metaclass=_BufferMeta):
    """Buffer(data, persistent=True): assigning one to a Module attribute registers a buffer
    (torch.nn.Buffer).

    PyTorch
    -------
    ``torch.nn.Buffer``
    """

    def __new__(cls, data: Tensor, *, persistent: bool = True) -> Tensor:
        if type(data) is not Tensor:
            raise EmberTypeError(f"Buffer: expected a Tensor, got {type(data).__name__}")
        t = wrap(data._data, data._device, data._dtype)
        t._set_meta("buffer", bool(persistent))
        return t


# -- lazy modules' tensors whose shape is not known yet --------------------------------------
# Tensor subclasses with no slots of their own, so materialize() can turn one into a plain
# Tensor in place (`__class__ = Tensor`): a module, an optimizer or a user holding it keeps
# the same object, as torch's materialize keeps it.  Until then every use but a few reads
# (dtype, device, requires_grad, grad, size(), conversions) raises, as torch's do.
_READABLE = frozenset({
    "requires_grad", "dtype", "device", "is_leaf", "grad", "grad_fn", "data", "is_cuda",
    "is_cpu", "materialize", "cls_to_become", "shape", "share_memory_", "size",
    "is_floating_point", "is_complex", "half", "float", "double", "char", "short", "int",
    "long", "cuda", "cpu", "to", "get_device"})
# dunders a Tensor has that must not run on a tensor with no data (operators, indexing,
# conversions); the rest (construction, attribute access, hashing, repr, pickling) stay
_KEPT_DUNDERS = frozenset({
    "__init__", "__new__", "__class__", "__getattribute__", "__getattr__", "__setattr__",
    "__delattr__", "__hash__", "__repr__", "__str__", "__init_subclass__",
    "__subclasshook__", "__reduce__", "__reduce_ex__", "__dir__", "__sizeof__", "__slots__",
    "__module__", "__doc__", "__weakref__", "__array_priority__", "__deepcopy__",
    "__copy__", "__getstate__", "__setstate__", "__class_getitem__", "__annotations__",
    "__dict__", "__firstlineno__", "__static_attributes__", "__qualname__"})


class _UninitializedError(EmberError, RuntimeError):
    """What torch raises as RuntimeError for an uninitialized tensor's shape or memory."""


def _use_error(cls_name: str, what: str) -> EmberValueError:
    return EmberValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when "
        f"you are using a `LazyModule` or explicitly manipulating "
        f"`ember.nn.parameter.{cls_name}` objects. When using LazyModules Call `forward` "
        "with a dummy batch to initialize the parameters before calling ember functions")


class _UninitializedTensor(Tensor):
    """What UninitializedParameter and UninitializedBuffer share (torch's
    UninitializedTensorMixin)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        from ..ops import empty
        data = empty(0, device=device, dtype=dtype)
        if requires_grad and data._dtype.category < D.FLOAT:
            raise EmberTypeError(f"{cls.__name__}: only floating point tensors can require "
                                 f"gradients, got {data._dtype.name}; pass "
                                 "requires_grad=False or a floating dtype")
        t = object.__new__(cls)
        t._data, t._device, t._dtype = data._data, data._device, data._dtype
        t.requires_grad = bool(requires_grad)
        t.grad_fn = None
        t._version = 0
        t._meta = None
        return t

    def __getattribute__(self, name: str):
        if name[0] == "_" or name in _READABLE:
            return object.__getattribute__(self, name)
        raise _use_error(type(self).__name__, f"Tensor.{name}")

    def _plain(self) -> Tensor:
        return wrap(self._data, self._device, self._dtype)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor `shape` (values not set) on device and dtype (its own where None),
        and make it the plain class it stands for (cls_to_become), in place.

        PyTorch
        -------
        ``torch.nn.parameter.UninitializedTensorMixin.materialize``
        """
        from ..ops import empty
        data = empty(*tuple(shape), device=self._device if device is None else device,
                     dtype=self._dtype if dtype is None else dtype)
        self._data, self._device, self._dtype = data._data, data._device, data._dtype
        self.__class__ = Tensor

    @property
    def shape(self):
        raise _UninitializedError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise _UninitializedError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    @property
    def data(self) -> Tensor:
        return self._plain()

    def size(self, dim=None):
        return self._plain().size() if dim is None else self._plain().size(dim)

    def is_floating_point(self) -> bool:
        return self._plain().is_floating_point()

    def is_complex(self) -> bool:
        return self._plain().is_complex()

    def get_device(self) -> int:
        return self._plain().get_device()

    def to(self, *args, **kwargs) -> Tensor:
        return self._plain().to(*args, **kwargs)

    def cpu(self) -> Tensor:
        return self._plain().cpu()

    def cuda(self, *args, **kwargs) -> Tensor:
        return self._plain().cuda(*args, **kwargs)

    def half(self) -> Tensor:
        return self._plain().half()

    def float(self) -> Tensor:
        return self._plain().float()

    def double(self) -> Tensor:
        return self._plain().double()

    def char(self) -> Tensor:
        return self._plain().char()

    def short(self) -> Tensor:
        return self._plain().short()

    def int(self) -> Tensor:
        return self._plain().int()

    def long(self) -> Tensor:
        return self._plain().long()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __deepcopy__(self, memo):
        new = type(self)(self.requires_grad, self._device, self._dtype)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))


def _refuse(name: str):
    def refuse(self, *args, **kwargs):
        raise _use_error(type(self).__name__, f"Tensor.{name}")
    refuse.__name__ = name
    return refuse


for _name in dir(Tensor):
    if (_name.startswith("__") and _name.endswith("__") and _name not in _KEPT_DUNDERS
            and callable(getattr(Tensor, _name, None))):
        setattr(_UninitializedTensor, _name, _refuse(_name))
del _name


class UninitializedParameter(_UninitializedTensor):
    """UninitializedParameter(requires_grad=True, device=None, dtype=None): a parameter
    whose shape is not known yet (a lazy module's, until its first forward).

    It holds no data: reading its shape or using it in an op raises; it can change dtype
    and device with its module (module.to(...)), and ``materialize(shape)`` makes it a
    plain Parameter in place (the same object).

    PyTorch
    -------
    ``torch.nn.UninitializedParameter``
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        t = _UninitializedTensor.__new__(cls, requires_grad, device, dtype)
        t._set_meta("param", True)
        return t


class UninitializedBuffer(_UninitializedTensor):
    """UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True):
    a buffer whose shape is not known yet (a lazy module's running statistics, until its
    first forward); ``materialize(shape)`` makes it a plain Tensor in place.

    PyTorch
    -------
    ``torch.nn.UninitializedBuffer``
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None,
                persistent: bool = True):
        t = _UninitializedTensor.__new__(cls, requires_grad, device, dtype)
        # assigned to a module attribute it registers a buffer, persistent or not (torch's
        # UninitializedBuffer is a Buffer)
        t._set_meta("buffer", bool(persistent))
        return t


def is_lazy(param) -> bool:
    """Whether param is an UninitializedParameter or an UninitializedBuffer.

    PyTorch
    -------
    ``torch.nn.parameter.is_lazy``
    """
    return isinstance(param, _UninitializedTensor)
