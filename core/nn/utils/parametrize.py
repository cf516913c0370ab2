"""torch.nn.utils.parametrize: a module's parameter or buffer computed by modules from
"original" tensors each time it is read (weight = f(original)), as torch's: the first
registration gives the module a class of its own (Parametrized<Class>) with a property per
parametrized name; the originals live in module.parametrizations.<name>.original (or
original0, original1, ... where right_inverse returns several), so they are what
state_dict saves and what an optimizer updates; assigning the name runs right_inverse."""
from __future__ import annotations

import contextlib

from ...autograd.grad_mode import no_grad
from ...errors import EmberError, EmberValueError
from ...tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_depth = [0]
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within the block a parametrized tensor is computed once, at its first read.

    PyTorch
    -------
    ``torch.nn.utils.parametrize.cached``
    """
    _cache_depth[0] += 1
    try:
        yield
    finally:
        _cache_depth[0] -= 1
        if not _cache_depth[0]:
            _cache.clear()


def _register(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _replace_values(target: Tensor, value: Tensor) -> None:
    """target takes value's elements (torch's set_: its identity, which optimizers hold,
    stays)."""
    if value is target:
        return
    if tuple(target.shape) == tuple(value.shape) and target.dtype == value.dtype:
        target.copy_(value)
    else:
        target.data = value.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to the original(s).

    PyTorch
    -------
    ``torch.nn.utils.parametrize.ParametrizationList``
    """

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (tuple(new.shape) != shape or new.dtype != dtype):
                raise EmberValueError(
                    "register_parametrization: when right_inverse returns one tensor it "
                    f"must keep the original's shape {list(shape)} and dtype {dtype}; got "
                    f"{list(new.shape)} and {new.dtype} (pass unsafe=True to allow it)")
            with no_grad():
                _replace_values(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise EmberValueError("register_parametrization: right_inverse must "
                                          "return a tensor or a sequence of tensors, got "
                                          f"{type(part).__name__} at position {i}")
                part = part.detach()
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                _register(self, f"original{i}", part)
        if not unsafe:
            value = self()
            if tuple(value.shape) != shape or value.dtype != dtype:
                raise EmberValueError(
                    "register_parametrization: the parametrization changes the tensor's "
                    f"shape or dtype ({list(shape)}, {dtype} -> {list(value.shape)}, "
                    f"{value.dtype}); pass unsafe=True to allow it")

    def right_inverse(self, value: Tensor) -> None:
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise EmberError(f"parametrization {type(module).__name__} does not "
                                     "implement right_inverse: define right_inverse(value) "
                                     "on it to assign the parametrized tensor")
                value = module.right_inverse(value)
            if self.is_tensor:
                _replace_values(self.original, value)
            else:
                for i, part in enumerate(value):
                    _replace_values(getattr(self, f"original{i}"), part)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_class(module: Module) -> None:
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})


def _inject_property(module: Module, name: str) -> None:
    def get(self):
        parametrization = self.parametrizations[name]
        if _cache_depth[0]:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(module.__class__, name, property(get, set_))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether module has a parametrization (on tensor_name, where given).

    PyTorch
    -------
    ``torch.nn.utils.parametrize.is_parametrized``
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make module.<tensor_name> = parametrization(original), computed on every read (a
    second registration on the same name composes after the first); returns module.

    PyTorch
    -------
    ``torch.nn.utils.parametrize.register_parametrization``
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe and not plist.unsafe:
            before = getattr(module, tensor_name)
            after = parametrization(before)
            if tuple(after.shape) != tuple(before.shape) or after.dtype != before.dtype:
                raise EmberValueError(
                    "register_parametrization: the parametrization changes the tensor's "
                    "shape or dtype; pass unsafe=True to allow it")
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise EmberValueError(f"register_parametrization: module '{type(module).__name__}' "
                              "does not have a parameter, a buffer, or a parametrized "
                              f"element with name '{tensor_name}'")
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization: tensor_name becomes a plain parameter (or buffer)
    again, holding the parametrized value (leave_parametrized) or the original.

    PyTorch
    -------
    ``torch.nn.utils.parametrize.remove_parametrizations``
    """
    if not is_parametrized(module, tensor_name):
        raise EmberValueError(f"remove_parametrizations: module {type(module).__name__} "
                              f"does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _replace_values(original, value)
    else:
        if not leave_parametrized:
            raise EmberValueError("remove_parametrizations: cannot leave unparametrized "
                                  "(leave_parametrized=False) a tensor that is parametrized "
                                  "in terms of a sequence of tensors")
        with no_grad():
            value = getattr(module, tensor_name)
        first = plist.original0
        original = Parameter(value.detach(), first.requires_grad) \
            if isinstance(first, Parameter) else value.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before register_parametrization gave it one of its own.

    PyTorch
    -------
    ``torch.nn.utils.parametrize.type_before_parametrizations``
    """
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Give to_module from_module's parametrizations (of tensor_name, or all), with the
    same original tensors; returns to_module.

    PyTorch
    -------
    ``torch.nn.utils.parametrize.transfer_parametrizations_and_params``
    """
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        source = from_module.parametrizations[name]
        if not is_parametrized(to_module, name):
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
            for p in source:
                register_parametrization(to_module, name, p, unsafe=source.unsafe)
            target = to_module.parametrizations[name]
            if source.is_tensor:
                target.original = source.original
            else:
                for i in range(source.ntensors):
                    setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module
