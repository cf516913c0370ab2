"""Tensor's autograd entry points: backward, retain_grad, register_hook,
register_post_accumulate_grad_hook."""
from __future__ import annotations

from ..errors import EmberValueError


def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
             inputs=None):
    from ..autograd import backward as _backward
    _backward([self], None if gradient is None else [gradient], retain_graph=retain_graph,
              create_graph=create_graph, inputs=inputs)


def retain_grad(self) -> None:
    from ..autograd.engine import retain
    if self.grad_fn is None:
        if not self.requires_grad:
            raise EmberValueError("can't retain_grad on Tensor that has requires_grad=False")
        return
    retain(self)


def register_hook(self, hook):
    """Call hook(grad) when this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise EmberValueError("cannot register a hook on a tensor that doesn't require "
                              "gradient")
    if self.grad_fn is not None:
        self.grad_fn.register_hook(hook)
        hooks = self.grad_fn.pre_hooks
    else:
        hooks = self._get_meta("hooks")
        if hooks is None:
            hooks = []
            self._set_meta("hooks", hooks)
        hooks.append(hook)
    return _HookHandle(hooks, hook)


def register_post_accumulate_grad_hook(self, hook):
    """Call hook(tensor) after a gradient was accumulated into this leaf's .grad (each time
    backward adds one: once per use of the leaf in the graph); it returns nothing and may
    read or move .grad (FSDP takes it into its flat gradient and sets .grad to None)."""
    if self.grad_fn is not None:
        raise EmberValueError("post accumulate grad hooks cannot be registered on non-leaf "
                              "tensors; register them on the leaf (a parameter)")
    if not self.requires_grad:
        raise EmberValueError("cannot register a hook on a tensor that doesn't require "
                              "gradient")
    hooks = self._get_meta("post_accumulate_hooks")
    if hooks is None:
        hooks = []
        self._set_meta("post_accumulate_hooks", hooks)
    hooks.append(hook)
    return _HookHandle(hooks, hook)


class _HookHandle:
    def __init__(self, hooks, hook):
        self.hooks, self.hook = hooks, hook

    def remove(self):
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)
