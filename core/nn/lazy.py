"""LazyModuleMixin: modules whose parameter shapes are inferred at their first forward
(torch.nn.modules.lazy).

A lazy module (LazyLinear, LazyConv2d, LazyBatchNorm1d, ...) holds UninitializedParameters
and UninitializedBuffers until its first call; a forward pre-hook then runs
initialize_parameters(input) (materialize every one in place, then reset_parameters), and
the module becomes its plain class (``__class__ = cls_to_become``: a LazyLinear becomes a
Linear).  Before that, state_dict holds the uninitialized tensors themselves, and
load_state_dict of an initialized state materializes them to its shapes (the module stays
lazy until its first forward, as torch's).
"""
from __future__ import annotations

import itertools

from ..errors import EmberError
from .parameter import is_lazy

# torch.nn does not export LazyModuleMixin either (torch.nn.modules.lazy.LazyModuleMixin)
__all__: list = []


class _LazyInitError(EmberError, RuntimeError):
    """A lazy module whose initialize_parameters left a tensor uninitialized."""


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from their first input.

    Put it before the module class (``class LazyMLP(LazyModuleMixin, MLP)``), create the
    parameters as ``UninitializedParameter()``, write ``initialize_parameters(*inputs)``
    (materialize each one, then initialize its values) and set ``cls_to_become`` to the
    class the module becomes once initialized (None: it keeps its class).

    PyTorch
    -------
    ``torch.nn.modules.lazy.LazyModuleMixin``
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        d = self.__dict__
        # load_state_dict calls _lazy_load_hook of each module that has this mark
        d["_load_hook"] = True
        d["_initialize_hook"] = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _lazy_load_hook(self, state_dict, prefix: str) -> None:
        """Materialize each uninitialized parameter or buffer to the shape of the
        initialized tensor state_dict holds for it (a lazy one stays lazy)."""
        from ..autograd.grad_mode import no_grad
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(value.shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize and initialize the parameters from the first forward's inputs (each
        lazy module defines it).

        PyTorch
        -------
        ``torch.nn.modules.lazy.LazyModuleMixin.initialize_parameters``
        """
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any of the module's own parameters or buffers is still uninitialized.

        PyTorch
        -------
        ``torch.nn.modules.lazy.LazyModuleMixin.has_uninitialized_params``
        """
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        """The forward pre-hook: initialize from this call's inputs, drop the hooks, and
        become cls_to_become."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise _LazyInitError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        d = module.__dict__
        del d["_initialize_hook"], d["_load_hook"]
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise _LazyInitError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
            "dummy forward pass to correctly initialize the modules")
