"""Define-by-run autograd: backward, grad, grad modes, gradcheck, anomaly detection."""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import AutogradError, EmberTypeError
from ..tensor import Tensor
from . import engine, function, functional, node
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .node import Node

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "gradcheck", "gradgradcheck", "detect_anomaly", "Node",
           "Function", "FunctionCtx", "once_differentiable", "function", "functional"]


def _grad_outputs(outputs, grad_outputs):
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif type(grad_outputs) is Tensor:
        grad_outputs = [grad_outputs]
    result = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.numel() != 1:
                raise AutogradError(
                    f"grad can be implicitly created only for scalar outputs; this output has "
                    f"shape {list(out.shape)}: pass gradient=ember.ones_like(out) (or the "
                    "gradient you want)")
            from .. import ops
            g = ops.ones_like(out)
        elif type(g) is not Tensor:
            raise EmberTypeError(f"gradient must be a Tensor, got {type(g).__name__}")
        elif g.shape != out.shape:
            raise AutogradError(f"Mismatch in shape: grad_output has a shape of "
                                f"{list(g.shape)} and output has a shape of {list(out.shape)}")
        result.append(g)
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into every leaf's .grad."""
    if type(tensors) is Tensor:
        tensors = [tensors]
    tensors = list(tensors)
    grads = _grad_outputs(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = [inputs] if type(inputs) is Tensor else list(inputs)
        found = engine.run_backward(tensors, grads, retain_graph=retain_graph,
                                    create_graph=create_graph, inputs=inputs,
                                    allow_unused=True)
        for x, g in zip(inputs, found):
            if g is not None:
                x._set_grad(g if x.grad is None else x.grad + g)
        return
    engine.run_backward(tensors, grads, retain_graph=retain_graph, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: bool = False, materialize_grads: bool = False):
    """The gradients of outputs with respect to inputs (leaves' .grad are untouched)."""
    single = type(outputs) is Tensor
    outputs = [outputs] if single else list(outputs)
    inputs_t = [inputs] if type(inputs) is Tensor else list(inputs)
    for x in inputs_t:
        if not x.requires_grad:
            raise AutogradError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    result = engine.run_backward(outputs, _grad_outputs(outputs, grad_outputs),
                                 retain_graph=retain_graph, create_graph=create_graph,
                                 inputs=inputs_t,
                                 allow_unused=allow_unused or materialize_grads)
    if materialize_grads:
        from .. import ops
        result = tuple(ops.zeros_like(x) if g is None else g for x, g in zip(inputs_t, result))
    return result


@contextmanager
def detect_anomaly(check_nan: bool = True):
    """Within the block, a NaN/inf gradient raises an error naming the forward op and where
    it was called."""
    prev = node._anomaly[0]
    node._anomaly[0] = bool(check_nan)
    try:
        yield
    finally:
        node._anomaly[0] = prev


def set_detect_anomaly(mode: bool) -> None:
    node._anomaly[0] = bool(mode)
