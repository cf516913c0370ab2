"""Auto-wrap policies (torch.distributed.fsdp.wrap): which submodules become their own
FSDP unit."""
from __future__ import annotations

from ...nn.module import Module
from ..errors import DistributedError
from ._units import _owned, _unit_of


class ModuleWrapPolicy:
    """Wrap every submodule that is an instance of one of `module_classes`."""

    def __init__(self, module_classes):
        self._module_classes = tuple(module_classes)

    def __call__(self, module: Module, recurse: bool, nonwrapped_numel: int) -> bool:
        return True if recurse else isinstance(module, self._module_classes)


def transformer_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls) -> bool:
    """Wrap the transformer layers (functools.partial(..., transformer_layer_cls={...}))."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                min_num_params: int = int(1e8), force_leaf_modules=None,
                                exclude_wrap_modules=None) -> bool:
    """Wrap a submodule once the parameters under it not yet wrapped reach min_num_params."""
    leaves = tuple(force_leaf_modules or ())
    excluded = tuple(exclude_wrap_modules or ())
    if recurse:
        return not (leaves and isinstance(module, leaves))
    return nonwrapped_numel >= min_num_params and not (excluded and isinstance(module,
                                                                                 excluded))


def _own_numel(module: Module) -> int:
    return sum(p.numel() for p in _owned(module).values())


def _auto_wrap(module: Module, policy, make) -> int:
    """Wrap module's descendants as the policy says (deepest first, as torch's
    _recursive_wrap); returns the parameter count under module left unwrapped."""
    left = sum(p.numel() for p in module.__dict__["_parameters"].values() if p is not None)
    for name, child in list(module.__dict__["_modules"].items()):
        if child is None or _unit_of(child) is not None:
            continue
        if policy(module=child, recurse=True, nonwrapped_numel=_own_numel(child)):
            remaining = _auto_wrap(child, policy, make)
        else:
            remaining = _own_numel(child)
        if remaining and policy(module=child, recurse=False, nonwrapped_numel=remaining):
            module.__dict__["_modules"][name] = make(child)
        else:
            left += remaining
    return left


def _policy(auto_wrap_policy):
    if auto_wrap_policy is None or callable(auto_wrap_policy):
        return auto_wrap_policy
    if isinstance(auto_wrap_policy, (set, frozenset, list, tuple)):
        return ModuleWrapPolicy(auto_wrap_policy)
    raise DistributedError(f"FullyShardedDataParallel: auto_wrap_policy must be a callable "
                           f"(ModuleWrapPolicy, functools.partial of transformer_auto_wrap_"
                           f"policy or size_based_auto_wrap_policy) or a set of module "
                           f"classes, got {type(auto_wrap_policy).__name__}")
