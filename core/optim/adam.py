"""Adam (with amsgrad) and AdamW (decoupled weight decay), as torch.optim computes them."""
from __future__ import annotations

import math
from collections.abc import Iterable

from .. import ops
from ..errors import EmberValueError
from ..tensor import Tensor
from . import _foreach
from .optimizer import Optimizer


def _check(name, lr, betas, eps, weight_decay):
    if lr < 0.0:
        raise EmberValueError(f"{name}: invalid learning rate {lr}; expected lr >= 0")
    if eps < 0.0:
        raise EmberValueError(f"{name}: invalid epsilon value {eps}; expected >= 0")
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise EmberValueError(f"{name}: invalid beta parameter at index {i}: {b}; "
                                  "expected 0 <= beta < 1")
    if weight_decay < 0.0:
        raise EmberValueError(f"{name}: invalid weight_decay value {weight_decay}; "
                              "expected >= 0")


class Adam(Optimizer):
    """Adam: bias-corrected first and second moment estimates (L2 weight decay).

    foreach (torch's flag): None (the default) updates the float32/float64 CPU parameters
    of a group term by term in one pass over all of them (ember.optim._foreach), the others
    one by one; True requires the multi-tensor path for every parameter; False loops.  Both
    paths give bit-identical results.  fused=True has no ember kernel: NotInEmberError.
    capturable=True keeps the step count as a 0-d tensor on the parameter's device and
    computes the bias corrections from it with tensor ops, so a step captured by
    ember.compile replays with the right count (False: a Python number, which a capture
    would freeze).

    PyTorch
    -------
    ``torch.optim.Adam``
    """

    _decoupled = False

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, fused: bool | None = None) -> None:
        _check(type(self).__name__, lr, betas, eps, weight_decay)
        _foreach.check_flags(type(self).__name__, foreach, fused)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      foreach=foreach, maximize=maximize,
                                      capturable=capturable, fused=fused))

    def _step_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        capturable = group.get("capturable", False)
        multi, loop = _foreach.split(self, group)
        if multi:
            _foreach.adam(multi, lr, beta1, beta2, eps, weight_decay, amsgrad,
                          group.get("maximize", False), self._decoupled, capturable)
        for p, g, state in loop:
            if not state:
                # capturable (as torch's): the step count is a tensor on p's device and the
                # bias corrections are computed from it with tensor ops, so a captured step
                # (ember.compile) replays with the right count; otherwise a Python number
                state["step"] = ops.zeros((), device=p.device) if capturable else 0
                state["exp_avg"] = ops.zeros_like(p)
                state["exp_avg_sq"] = ops.zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = ops.zeros_like(p)
            step = state["step"]
            if capturable:
                if type(step) is not Tensor:           # a state saved without capturable
                    step = state["step"] = ops.full((), float(step), device=p.device)
                step.add_(1.0)
            else:
                if type(step) is Tensor:
                    step = int(step.item())
                state["step"] = step = step + 1
            if weight_decay:
                if self._decoupled:
                    p.mul_(1 - lr * weight_decay)
                else:
                    g = g + p * weight_decay
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            if capturable:
                step_size = (1 - beta1 ** step).reciprocal() * lr
                bias_correction2_sqrt = (1 - beta2 ** step).sqrt()
            else:
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
            if amsgrad:
                second = state["max_exp_avg_sq"].maximum_(exp_avg_sq)
            else:
                second = exp_avg_sq
            denom = second.sqrt() / bias_correction2_sqrt + eps
            p.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay: p <- p * (1 - lr * weight_decay) before the step.

    PyTorch
    -------
    ``torch.optim.AdamW``
    """

    _decoupled = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, fused=fused)
