"""Module: the base class of every layer, with parameters, buffers, submodules and hooks."""
from __future__ import annotations

import copy
import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import Any

from .. import dtypes as D
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..device import Device
from ..errors import EmberError, EmberTypeError, EmberValueError
from ..tensor import Tensor
from .parameter import Buffer, Parameter, _use_error, is_lazy, zero_grads

__all__ = ["Module", "StateDictError", "IncompatibleKeys", "RemovableHandle"]


class StateDictError(EmberError, RuntimeError):
    """load_state_dict found missing or unexpected keys, or tensors of the wrong shape.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict(strict=False) could not match (torch's _IncompatibleKeys).

    PyTorch
    -------
    ``torch.nn.modules.module._IncompatibleKeys``
    """

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE = "_extra_state"      # torch's key suffix for get_extra_state's value


# torch's own (private) name for it: torch.nn.modules.module._IncompatibleKeys
_IncompatibleKeys = IncompatibleKeys


class RemovableHandle:
    """Returned by register_*_hook: remove() unregisters the hook; also a context manager.

    PyTorch
    -------
    ``torch.utils.hooks.RemovableHandle``
    """

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self.hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()




def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class for all neural-network modules, as torch.nn.Module.

    Assigning a Parameter, a Module or a Buffer to an attribute registers it; forward()
    defines the computation and calling the module runs the hooks around it.

    PyTorch
    -------
    ``torch.nn.Module``
    """

    training: bool

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise EmberTypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments; Module.__init__ "
                "takes none (call super().__init__() without arguments)")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = {}
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_pre_hooks"] = {}
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_backward_hooks"] = {}
        d["_backward_pre_hooks"] = {}

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function; '
            "define forward(self, ...) in the subclass")

    # -- calling ------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if Tensor._capture is not None:      # a graph capture guards on `training`
            from ..graph.capture import notice_module
            notice_module(self)
        if self._forward_pre_hooks or self._forward_hooks:
            return self._call_with_hooks(args, kwargs)
        d = self.__dict__
        if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise EmberTypeError(
                            f"forward pre-hook {hook!r} registered with_kwargs=True must "
                            f"return None or (args, kwargs), got {type(result).__name__}")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        # full backward hooks (torch's order: after the pre-hooks, around forward and its
        # hooks): identity nodes on the inputs and outputs catch their gradients
        d = self.__dict__
        hooks = None
        if (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) and is_grad_enabled():
            from ._backward_hooks import _BackwardHooks
            hooks = _BackwardHooks(self)
            args = hooks.wrap_inputs(args)
        out = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, out)
            else:
                result = hook(self, args, out)
            if result is not None:
                out = result
        if hooks is not None:
            out = hooks.wrap_outputs(out)
        return out

    def _add_hook(self, hooks: dict, kwarg_set: set, hook, prepend: bool, with_kwargs: bool):
        if not callable(hook):
            raise EmberTypeError(f"hook must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if with_kwargs:
            kwarg_set.add(handle.id)
        if prepend:
            items = list(hooks.items())
            hooks.clear()
            hooks.update([items[-1]] + items[:-1])
        return handle

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args) -> None or new args; with_kwargs: hook(module, args, kwargs)
        -> None or (args, kwargs)."""
        return self._add_hook(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs,
                              hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args, output) -> None or a new output; with_kwargs:
        hook(module, args, kwargs, output)."""
        return self._add_hook(self._forward_hooks, self._forward_hooks_with_kwargs, hook,
                              prepend, with_kwargs)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False
                                    ) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or a new grad_input, called once
        the gradients w.r.t. the module's positional tensor inputs are computed (None for
        an input that needs none; all None where none does, then called when grad_output
        is known); grad_output: the gradients w.r.t. its tensor outputs.

        PyTorch
        -------
        ``torch.nn.Module.register_full_backward_hook``
        """
        return self._add_hook(self.__dict__.setdefault("_backward_hooks", {}), set(), hook,
                              prepend, False)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False
                                        ) -> RemovableHandle:
        """hook(module, grad_output) -> None or a new grad_output, called when the
        gradients w.r.t. the module's tensor outputs are known, before they flow on.

        PyTorch
        -------
        ``torch.nn.Module.register_full_backward_pre_hook``
        """
        return self._add_hook(self.__dict__.setdefault("_backward_pre_hooks", {}), set(),
                              hook, prepend, False)

    # -- registration --------------------------------------------------------------------
    def _check_name(self, name, kind: str) -> None:
        if not isinstance(name, str):
            raise EmberTypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if not name or "." in name:
            raise EmberValueError(f"{kind} name {name!r} must be a non-empty string without "
                                  "'.'")
        if "_parameters" not in self.__dict__:
            raise EmberTypeError(f"cannot assign {kind} {name!r} before Module.__init__() "
                                 "call; call super().__init__() first")

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        self._check_name(name, "parameter")
        if hasattr(type(self), name) or (name in self.__dict__ and
                                         name not in self._parameters):
            raise EmberValueError(f"attribute {name!r} already exists on "
                                  f"{type(self).__name__}; pick another parameter name")
        if param is not None and not isinstance(param, Parameter):
            raise EmberTypeError(
                f"cannot assign a {type(param).__name__} as parameter {name!r} "
                "(ember.nn.Parameter or None expected); wrap it: nn.Parameter(tensor)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None,
                        persistent: bool = True) -> None:
        self._check_name(name, "buffer")
        if hasattr(type(self), name) or (name in self.__dict__ and name not in self._buffers):
            raise EmberValueError(f"attribute {name!r} already exists on "
                                  f"{type(self).__name__}; pick another buffer name")
        if tensor is not None and type(tensor) is not Tensor and not is_lazy(tensor):
            raise EmberTypeError(f"cannot assign a {type(tensor).__name__} as buffer "
                                 f"{name!r} (Tensor or None expected)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise EmberTypeError(f"{type(module).__name__} is not a Module subclass")
        if hasattr(type(self), name) and name not in self._modules:
            raise EmberValueError(f"attribute {name!r} already exists on "
                                  f"{type(self).__name__}")
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            values = d.get(store)
            if values is not None and name in values:
                return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise EmberTypeError("cannot assign parameters before Module.__init__() "
                                     "call; call super().__init__() first")
            self._forget(name, keep="_parameters")    # a reassigned name keeps its place
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise EmberTypeError(
                    f"cannot assign a {type(value).__name__} as parameter {name!r} "
                    "(ember.nn.Parameter or None expected); wrap it: nn.Parameter(tensor), "
                    "or assign to .data to replace the values")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise EmberTypeError("cannot assign a module before Module.__init__() "
                                     "call; call super().__init__() first")
            self._forget(name, keep="_modules")
            self._modules[name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise EmberTypeError(f"cannot assign a {type(value).__name__} as child "
                                     f"module {name!r} (Module or None expected)")
            d["_modules"][name] = None
        elif isinstance(value, Buffer):
            self._forget(name, keep="_buffers")
            persistent = value._meta.pop("buffer")
            self.register_buffer(name, value, persistent)
        elif params is not None and name in d["_buffers"]:
            if value is not None and type(value) is not Tensor and not is_lazy(value):
                raise EmberTypeError(f"cannot assign a {type(value).__name__} as buffer "
                                     f"{name!r} (Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str | None = None) -> None:
        """Drop `name` from every store but `keep`, where a new value replaces the old in
        place: state_dict keys keep PyTorch's order when a parameter is re-tied."""
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                d[store].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d.get(store, ()):
                del d[store][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # -- traversal -----------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, module in mods:
            for name, value in module.__dict__[store].items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        module = self
        if not target:
            return module
        for part in target.split("."):
            child = module._modules.get(part)
            if not isinstance(child, Module):
                raise AttributeError(f"{module._get_name()} has no submodule {part!r} "
                                     f"(looking up {target!r})")
            module = child
        return module

    def get_parameter(self, target: str) -> Tensor:
        mod_path, _, name = target.rpartition(".")
        module = self.get_submodule(mod_path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no parameter {name!r}")
        return module._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        mod_path, _, name = target.rpartition(".")
        module = self.get_submodule(mod_path)
        if name not in module._buffers:
            raise AttributeError(f"{module._get_name()} has no buffer {name!r}")
        return module._buffers[name]

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise EmberTypeError(f"train(): mode is expected to be a bool, got "
                                 f"{type(mode).__name__}")
        for module in self.modules():
            module.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self.parameters(), set_to_none)

    # -- device and dtype ----------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                if is_lazy(p):
                    _convert_lazy(p, fn)
                    continue
                # the Parameter keeps its identity (optimizers hold it): swap its storage
                p.data = fn(p)
                g = p.grad
                if g is not None:
                    p._set_grad(fn(g))
            buffers = self._buffers
            for name, b in buffers.items():
                if b is not None and is_lazy(b):
                    _convert_lazy(b, fn)
                elif b is not None:
                    buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """to(device), to(dtype), to(device, dtype), to(tensor): in place; floating
        parameters and buffers take the dtype, integer ones keep theirs."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise EmberTypeError(f"Module.to(): unexpected arguments {sorted(kwargs)}")
        for a in args:
            if type(a) is Tensor:
                device, dtype = a.device, a.dtype
            elif isinstance(a, D.DType) or a in (float, int) or (
                    isinstance(a, str) and a in _DTYPE_NAMES):
                dtype = a
            elif isinstance(a, (str, Device)):
                device = a
            else:
                raise EmberTypeError(f"Module.to(): expected a device, a dtype or a tensor, "
                                     f"got {a!r}")
        if dtype is not None:
            dtype = D.get_dtype(dtype)
            if dtype.category != D.FLOAT:
                raise EmberTypeError(f"Module.to() only accepts floating point dtypes, but "
                                     f"got desired dtype={dtype.name}")

        def convert(t: Tensor) -> Tensor:
            return t.to(device=device,
                        dtype=dtype if t._dtype.category == D.FLOAT else None)
        return self._apply(convert)

    def cpu(self) -> Module:
        return self.to("cpu")

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move the parameters and buffers to device without copying their values (each
        becomes an empty tensor of its shape and dtype there: ember fills it with zeros);
        recurse=False: this module's own only.  In place; returns self.

        PyTorch
        -------
        ``torch.nn.Module.to_empty``
        """
        from ..ops import empty_like
        modules = self.modules() if recurse else [self]
        for m in modules:
            for t in itertools.chain(m._parameters.values(), m._buffers.values()):
                if t is not None and is_lazy(t):     # torch's empty_like refuses them
                    raise _use_error(type(t).__name__, "empty_like")
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> Module:
        """As torch: Tensor.share_memory_() on every parameter and buffer, then self.

        torch moves them into shared memory so that worker processes (Hogwild training)
        update one copy; ember has no shared-memory tensors (ember.multiprocessing sends a
        tensor by value), so for a module holding tensors this raises share_memory_'s
        NotInEmberError rather than return a module whose workers would silently train
        copies; a module holding none is returned, as torch returns it."""
        for t in [*self.parameters(), *self.buffers()]:
            t.share_memory_()
        return self

    def cuda(self, device: int | None = None) -> Module:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def float(self) -> Module:
        return self.to(D.float32)

    def double(self) -> Module:
        return self.to(D.float64)

    def half(self) -> Module:
        return self.to(D.float16)

    def bfloat16(self) -> Module:
        return self.to(D.bfloat16)

    # -- state dicts ---------------------------------------------------------------------
    def _state_items(self, prefix: str = "", extra: bool = False):
        """(key, tensor) of every parameter and persistent buffer, duplicates kept; extra:
        also (key + "_extra_state", module) for each module that defines
        get_extra_state, after its own tensors, as torch's state_dict orders them."""
        for mod_prefix, module in self.named_modules(prefix=prefix, remove_duplicate=False):
            dot = mod_prefix + ("." if mod_prefix else "")
            for name, p in module._parameters.items():
                if p is not None:
                    yield dot + name, p
            skip = module._non_persistent_buffers_set
            for name, b in module._buffers.items():
                if b is not None and name not in skip:
                    yield dot + name, b
            if extra and type(module).get_extra_state is not Module.get_extra_state:
                yield dot + _EXTRA_STATE, module

    def get_extra_state(self) -> Any:
        """What a subclass adds to its state_dict under "_extra_state" (any picklable
        object); set_extra_state receives it back from load_state_dict.  Module's own is
        never called (state_dict only asks modules that define it).

        PyTorch
        -------
        ``torch.nn.Module.get_extra_state``
        """
        raise EmberError("get_extra_state: define it in the Module subclass that has extra "
                         "state (state_dict calls it only where a subclass does)")

    def set_extra_state(self, state: Any) -> None:
        """Restore what get_extra_state returned (load_state_dict calls it).

        PyTorch
        -------
        ``torch.nn.Module.set_extra_state``
        """
        raise EmberError("set_extra_state: a state_dict holds extra state for this module; "
                         "define set_extra_state in its Module subclass to restore it")

    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name (sharing storage), and the
        extra state of modules that define get_extra_state."""
        out = OrderedDict() if destination is None else destination
        for key, t in self._state_items(prefix, extra=True):
            if isinstance(t, Module):
                out[key] = t.get_extra_state()
            else:
                # a lazy module's uninitialized tensors go in as they are (torch's)
                out[key] = t if keep_vars or is_lazy(t) else t.detach()
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy tensors into the parameters and buffers; every problem is reported at once,
        before anything is written."""
        if not hasattr(state_dict, "keys"):
            raise EmberTypeError(f"load_state_dict: expected a dict of tensors, got "
                                 f"{type(state_dict).__name__}")
        # lazy modules first give their uninitialized tensors the shapes loaded into them
        for mod_prefix, module in self.named_modules(remove_duplicate=False):
            if "_load_hook" in module.__dict__:
                module._lazy_load_hook(state_dict, mod_prefix + ("." if mod_prefix else ""))
        own = OrderedDict(self._state_items(extra=True))
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        extras = {k: own.pop(k) for k in [k for k, t in own.items() if isinstance(t, Module)]}
        problems = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if is_lazy(value):
                if not is_lazy(target):
                    _ = value.shape  # raises torch's error: uninitialized values into a tensor
                continue
            if type(value) is not Tensor:
                problems.append(f'While copying the parameter named "{key}", expected a '
                                f"Tensor, got {type(value).__name__}.")
            elif tuple(value.shape) != tuple(target.shape):
                problems.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{list(value.shape)} from checkpoint, the shape in current model is "
                    f"{list(target.shape)}.")
        if strict:
            if unexpected:
                problems.insert(0, "Unexpected key(s) in state_dict: "
                                + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                problems.insert(0, "Missing key(s) in state_dict: "
                                + ", ".join(f'"{k}"' for k in missing) + ".")
        if problems:
            raise StateDictError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                + "\n\t".join(problems)
                + "\nFix: load a checkpoint saved from the same architecture, or pass "
                  "strict=False to skip missing and unexpected keys.")
        with no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                value = state_dict[key]
                if is_lazy(value):
                    continue         # uninitialized into uninitialized: nothing to copy
                if assign:
                    self._assign_loaded(key, target, value)
                else:
                    target.copy_(value)
        for key, module in extras.items():
            if key in state_dict:
                module.set_extra_state(state_dict[key])
        return IncompatibleKeys(missing, unexpected)

    def _assign_loaded(self, key: str, target: Tensor, value: Tensor) -> None:
        mod_path, _, name = key.rpartition(".")
        module = self.get_submodule(mod_path)
        if name in module._parameters:
            module._parameters[name] = Parameter(value, target.requires_grad)
        else:
            module._buffers[name] = value

    # -- copies and repr -----------------------------------------------------------------
    def __deepcopy__(self, memo: dict) -> Module:
        # tensors do not pickle, so clone parameters and buffers into the memo first
        with no_grad():
            for t in itertools.chain(self.parameters(), self.buffers()):
                if id(t) in memo:
                    continue
                if is_lazy(t):
                    copy.deepcopy(t, memo)     # a new uninitialized one, in the memo
                    continue
                c = t.detach().clone()
                if isinstance(t, Parameter):
                    c = Parameter(c, t.requires_grad)
                if t.grad is not None:
                    c._set_grad(t.grad.detach().clone())
                memo[id(t)] = c
        new = object.__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = copy.deepcopy(value, memo)
        return new

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _convert_lazy(t: Tensor, fn) -> None:
    """Module._apply on an uninitialized tensor: it keeps its identity and stays
    uninitialized, taking the device and dtype fn gives its (empty) data."""
    new = fn(t._plain())
    t._data, t._device, t._dtype = new._data, new._device, new._dtype


_DTYPE_NAMES = frozenset({"float16", "bfloat16", "float32", "float64", "half", "float",
                          "double", "int8", "int16", "int32", "int64", "uint8", "bool",
                          "long", "int", "short"})
