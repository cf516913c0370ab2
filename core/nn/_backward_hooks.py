"""Module full backward hooks (register_full_backward_hook / _pre_hook), as torch's
torch.utils.hooks.BackwardHook: the module's positional tensor inputs that require grad
pass through one identity node and its tensor outputs through another, so the gradients
w.r.t. all outputs (grad_output) and then all inputs (grad_input) arrive together, each
once; the hooks see them and may replace them."""
from __future__ import annotations

import warnings

from ..autograd.function import Function
from ..errors import EmberTypeError
from ..tensor import Tensor

__all__: list[str] = []          # infrastructure of Module.__call__, no public names


class _Identity(Function):
    """Passes its tensors through; its backward hands all their gradients to `on_grads`
    at once (None where one has none), which returns the gradients to pass on."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(False)
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


def _check(name: str, given, expected: int):
    if given is None:
        return None
    given = tuple(given) if isinstance(given, (tuple, list)) else (given,)
    if len(given) != expected:
        raise EmberTypeError(f"{name} returned {len(given)} gradients, expected {expected} "
                             "(one per tensor, None where there is none)")
    return given


class _BackwardHooks:
    def __init__(self, module):
        self.module = module
        self.grad_output = None
        self.n_inputs = 0
        self.input_positions: list = []
        self.inputs_need_grad = False

    # -- inputs ----------------------------------------------------------------------------
    # grad_input has one entry per positional argument, as torch's: None for what is not a
    # tensor, zeros for a tensor that needs no gradient (torch's identity node passes every
    # tensor argument and materializes their gradients)
    def wrap_inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        tensors = [i for i, a in enumerate(args) if type(a) is Tensor]
        need = [i for i in tensors if args[i].requires_grad]
        if not need:
            return args
        self.inputs_need_grad = True
        wrapped = _Identity.apply(self._on_input_grads(args, tensors, need),
                                  *(args[i] for i in need))
        if isinstance(wrapped, Tensor):
            wrapped = (wrapped,)
        args = list(args)
        for i, t in zip(need, wrapped):
            args[i] = t
        return tuple(args)

    def _on_input_grads(self, args, tensors, need):
        from .. import ops
        like = {i: args[i] for i in tensors}

        def on_grads(grads):
            grad_input = [None] * self.n_inputs
            for i in tensors:
                grad_input[i] = ops.zeros_like(like[i])
            for i, g in zip(need, grads):
                if g is not None:
                    grad_input[i] = g
            out = self._call_hooks(tuple(grad_input))
            return [out[i] for i in need]
        return on_grads

    def _call_hooks(self, grad_input: tuple) -> tuple:
        grad_output = self.grad_output if self.grad_output is not None else ()
        for hook in list(self.module.__dict__.get("_backward_hooks", {}).values()):
            result = _check(f"backward hook {hook!r}",
                            hook(self.module, grad_input, grad_output), len(grad_input))
            if result is not None:
                grad_input = result
        return grad_input

    # -- outputs ---------------------------------------------------------------------------
    # grad_output has one entry per tensor output: None for one that needs no gradient or
    # got none
    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        items = [out] if single else (list(out) if isinstance(out, (tuple, list)) else None)
        if items is None:
            return out
        tensors = [i for i, o in enumerate(items) if type(o) is Tensor]
        need = [i for i in tensors if items[i].requires_grad]
        if not need:
            return out

        def on_grads(grads):
            by_position = dict(zip(need, grads))
            grad_output = tuple(by_position.get(i) for i in tensors)
            for hook in list(self.module.__dict__.get("_backward_pre_hooks", {}).values()):
                result = _check(f"backward pre-hook {hook!r}", hook(self.module, grad_output),
                                len(grad_output))
                if result is not None:
                    grad_output = result
            self.grad_output = grad_output
            if not self.inputs_need_grad:       # no input gradient will come: call now
                if self.module.__dict__.get("_backward_hooks"):
                    warnings.warn("Full backward hook is firing when gradients are computed "
                                  "with respect to module outputs since no inputs require "
                                  "gradients (as torch's); grad_input is all None",
                                  UserWarning, stacklevel=2)
                self._call_hooks((None,) * self.n_inputs)
            passed = dict(zip(tensors, grad_output))
            return [passed[i] for i in need]

        wrapped = _Identity.apply(on_grads, *(items[i] for i in need))
        if isinstance(wrapped, Tensor):
            wrapped = (wrapped,)
        for i, t in zip(need, wrapped):
            items[i] = t
        if single:
            return items[0]
        return type(out)(items) if isinstance(out, list) else tuple(items)
