"""torch.autograd.graph: hooks on the tensors autograd saves for backward.

``saved_tensors_hooks(pack, unpack)`` runs ``pack`` on every tensor a recorded op keeps for
its gradient (the inputs its VJP reads, its output where the VJP reads that, and what a
custom Function saves with ``ctx.save_for_backward``) and ``unpack`` on the packed value
when backward needs the tensor; ``save_on_cpu`` keeps them on the host and moves them back;
``disable_saved_tensors_hooks`` makes a region refuse any.  Inputs a VJP reads only for
their shape are kept as they are.
"""
from __future__ import annotations

from ..tensor import Tensor
from .node import SAVED_HOOKS, Node

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]


class saved_tensors_hooks:
    """Context manager: pack(tensor) -> anything when autograd saves a tensor,
    unpack(that) -> tensor when backward reads it (innermost hooks win).

    PyTorch
    -------
    ``torch.autograd.graph.saved_tensors_hooks``
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callables")
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if SAVED_HOOKS and SAVED_HOOKS[-1][0] is None:
            raise RuntimeError(SAVED_HOOKS[-1][1])
        SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept on the CPU during the forward and moved back to their device for
    backward (GPU memory for host memory).  ember has no pinned host memory: pin_memory
    changes nothing here (copies are synchronous), as in torch for memory not pinned.

    PyTorch
    -------
    ``torch.autograd.graph.save_on_cpu``
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor):
            return (t.device, t.detach().to("cpu", copy=t.device.type != "cpu"))

        def unpack(packed):
            device, host = packed
            return host.to(device)
        self.pin_memory, self.device_type = pin_memory, device_type
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager in which entering saved_tensors_hooks (or saving a tensor under hooks
    entered outside) raises RuntimeError with ``error_message``.

    PyTorch
    -------
    ``torch.autograd.graph.disable_saved_tensors_hooks``
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        SAVED_HOOKS.append((None, self.error_message))
        return self

    def __exit__(self, *exc) -> None:
        SAVED_HOOKS.pop()
