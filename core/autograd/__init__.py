"""Define-by-run autograd: backward, grad, grad modes, gradcheck, anomaly detection."""
from __future__ import annotations

from . import (  # noqa: F401  (ember.autograd.engine, ...)
    engine,
    forward_ad,
    function,
    functional,
    graph,
    node,
    variable,
)
from .engine import (
           backward,
           detect_anomaly,
           grad,
           set_detect_anomaly,  # noqa: F401  (torch.autograd.set_detect_anomaly)
)
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .node import Node
from .variable import Variable

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_inference_mode_enabled",
           "is_grad_enabled", "gradcheck", "gradgradcheck", "detect_anomaly", "Node",
           "Function", "FunctionCtx", "once_differentiable", "function", "functional",
           "forward_ad", "Variable", "variable", "graph"]
