"""Containers (torch.nn.modules.container): Sequential, ModuleList/Dict, ParameterList/Dict."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from ..errors import EmberError, EmberIndexError, EmberTypeError, EmberValueError
from ..tensor import Tensor
from .module import Module, _addindent
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(i: int, n: int, what: str) -> int:
    if not isinstance(i, int):
        raise EmberTypeError(f"{what} indices must be integers or slices, not "
                             f"{type(i).__name__}")
    if not -n <= i < n:
        raise EmberIndexError(f"index {i} is out of range for a {what} of length {n}")
    return i % n


class Sequential(Module):
    """Runs its modules in order, each on the previous one's output.

    PyTorch
    -------
    ``torch.nn.Sequential``
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (dict, OrderedDict)):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules)
        self.add_module(keys[_index(idx, len(keys), "Sequential")], module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else
                    [keys[_index(idx, len(keys), "Sequential")]]):
            del self._modules[key]
        # keep the keys 0..n-1, as torch does
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise EmberTypeError(f"add operator supports only objects of Sequential class, "
                                 f"got {type(other).__name__}")
        return Sequential(*self, *other)

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        items = list(self._modules.values())
        n = len(items)
        if not -n <= index <= n:
            raise EmberIndexError(f"index {index} is out of range for a Sequential of "
                                  f"length {n}")
        items.insert(index + n if index < 0 else index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)
        return self


class ModuleList(Module):
    """A list of modules, registered so their parameters are found.

    PyTorch
    -------
    ``torch.nn.ModuleList``
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __repr__(self) -> str:
        """torch's: runs of modules with the same repr shown once, ``(0-1): 2 x Linear(...)``."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []                              # [first, last, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2)
                 for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __getitem__(self, idx):
        values = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(values[idx])
        return values[_index(idx, len(values), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx) -> None:
        values = list(self._modules.values())
        if isinstance(idx, slice):
            del values[idx]
        else:
            del values[_index(idx, len(values), "ModuleList")]
        self._modules.clear()
        for i, m in enumerate(values):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList(list(self) + list(other))

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise EmberTypeError(f"ModuleList.extend should be called with an iterable of "
                                 f"modules, got {type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(values):
            self.add_module(str(i), m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(); iterate over it and call "
                                  "each module")


class ModuleDict(Module):
    """A dict of modules, registered so their parameters are found.

    PyTorch
    -------
    ``torch.nn.ModuleDict``
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(key)
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        value = self[key]
        del self[key]
        return value

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(); index it and call the "
                                  "module")


# -- ParameterList, ParameterDict ---------------------------------------------------------

class _KeyError(EmberError, KeyError):
    """A key a ParameterDict does not have (a KeyError, as in torch)."""


def _as_parameter(value):
    # torch wraps a plain tensor put in a parameter container
    if type(value) is Tensor and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters registered as "0", "1", ... (in parameters() and state_dict).

    PyTorch
    -------
    ``torch.nn.ParameterList``
    """

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx: int) -> str:
        if not isinstance(idx, int):
            raise EmberTypeError(f"ParameterList indices must be integers or slices, not "
                                 f"{type(idx).__name__}")
        if not -self._size <= idx < self._size:
            raise EmberIndexError(f"index {idx} is out of range for a ParameterList of "
                                  f"length {self._size}")
        return str(idx % self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, param) -> None:
        key = self._key(idx)
        param = _as_parameter(param)
        if isinstance(param, Parameter):
            if key in self.__dict__:
                del self.__dict__[key]
            setattr(self, key, param)
        else:
            self._parameters.pop(key, None)
            self.__dict__[key] = param

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(self._size))

    def __iadd__(self, parameters: Iterable) -> ParameterList:
        return self.extend(parameters)

    def append(self, value) -> ParameterList:
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        if isinstance(values, (Tensor, str)) or not isinstance(values, Iterable):
            raise EmberTypeError(f"ParameterList.extend should be called with an iterable, "
                                 f"but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        # torch's lines, indented twice over (its extra_repr adds two spaces of its own)
        return "\n".join(f"  ({i}): {_describe(p, p.dtype if isinstance(p, Tensor) else None)}"
                         for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise EmberTypeError("ParameterList should not be called")


class ParameterDict(Module):
    """A dict of parameters registered under their keys (in parameters() and state_dict).

    PyTorch
    -------
    ``torch.nn.ParameterDict``
    """

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise _KeyError(f"ParameterDict has no key {key!r}; it has "
                                f"{list(self._keys)}")
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise EmberTypeError(f"ParameterDict keys must be strings, got "
                                 f"{type(key).__name__}")
        self._keys[key] = None
        value = _as_parameter(value)
        if isinstance(value, Parameter):
            self.__dict__.pop(key, None)
            setattr(self, key, value)
        else:
            self._parameters.pop(key, None)
            self.__dict__[key] = value

    def __delitem__(self, key: str) -> None:
        self[key]                                   # a missing key raises the clear error
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def copy(self) -> ParameterDict:
        return ParameterDict(list(self.items()))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        if not self._keys:
            raise _KeyError("popitem(): ParameterDict is empty")
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def update(self, parameters) -> None:
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            # any other mapping, a plain dict too, in sorted key order (torch's update)
            pairs = sorted(parameters.items())
        elif isinstance(parameters, Iterable):
            pairs = []
            for j, pair in enumerate(parameters):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise EmberValueError(f"ParameterDict.update: element #{j} should be a "
                                          f"(key, parameter) pair, got {pair!r}")
                pairs.append(pair)
        else:
            raise EmberTypeError(f"ParameterDict.update should be called with a mapping or "
                                 f"an iterable of (key, value) pairs, got "
                                 f"{type(parameters).__name__}")
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        # torch names the type here (torch.typename: torch.FloatTensor), the dtype in the list
        return "\n".join(f"  ({k}): {_describe(p, p.type() if isinstance(p, Tensor) else None)}"
                         for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise EmberTypeError("ParameterDict should not be called")


def _describe(p, kind) -> str:
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        what = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return (f"{what} containing: [{kind} of size {size}"
                f"{'' if str(p.device) == 'cpu' else ' (' + str(p.device) + ')'}]")
    return f"Object of type: {type(p).__name__}"
