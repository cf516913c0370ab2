"""Rprop and ASGD, as torch.optim computes them (single-tensor form)."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import EmberValueError, NotInEmberError
from .adam_family import refuse_flags
from .optimizer import Optimizer


def _only_defaults(name: str, foreach, capturable: bool, differentiable: bool) -> None:
    """foreach/capturable/differentiable: the defaults are what ember does; anything else is
    refused, not ignored (foreach and differentiable as the other optimizers refuse them)."""
    refuse_flags(name, dict(foreach=foreach, differentiable=differentiable))
    if capturable:
        raise NotInEmberError(f"{name}: capturable=True (CUDA graphs) is not in ember; leave it "
                              "False")


def _scalar(value: float) -> float:
    """value rounded as torch's optimizer scalars are kept: 0-d tensors of the default
    float dtype (float32 unless set_default_dtype chose float64), so eta and mu match."""
    if D.get_default_dtype() is D.float64:
        return float(value)
    return float(np.float32(value))


class Rprop(Optimizer):
    """Resilient backpropagation: a step size per element, grown by ``etas[1]`` while the
    gradient keeps its sign and shrunk by ``etas[0]`` when it flips (that step skipped),
    within ``step_sizes``; the update uses only the gradient's sign.

    PyTorch
    -------
    ``torch.optim.Rprop``
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise EmberValueError(f"Rprop: invalid learning rate {lr}; expected >= 0")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise EmberValueError(f"Rprop: invalid eta values {etas[0]}, {etas[1]}; expected "
                                  "0 < etas[0] < 1 < etas[1]")
        _only_defaults("Rprop", foreach, capturable, differentiable)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    def _step_group(self, group: dict) -> None:
        # a group loaded from a state dict (or added later) may carry what ember refuses
        _only_defaults("Rprop", group["foreach"], group["capturable"], group["differentiable"])
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        for p, g, state in self._grads(group):
            if not state:
                state["step"] = 0
                state["prev"] = ops.zeros_like(p)
                state["step_size"] = ops.full_like(g, group["lr"])
            state["step"] += 1
            prev, step_size = state["prev"], state["step_size"]
            sign = (g * prev).sign()
            factor = ops.where(sign > 0, ops.full_like(sign, etaplus),
                               ops.where(sign < 0, ops.full_like(sign, etaminus),
                                         ops.ones_like(sign)))
            step_size.mul_(factor).clamp_(lo, hi)
            g = ops.where(sign < 0, 0.0, g)           # a flipped sign: skip this step
            p.addcmul_(g.sign(), step_size, value=-1)
            prev.copy_(g)


class ASGD(Optimizer):
    """Averaged SGD: SGD with a decaying step ``eta`` and weight decay ``lambd``, keeping
    the running average of the iterates in ``state['ax']`` from step ``t0`` on.

    PyTorch
    -------
    ``torch.optim.ASGD``
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0,
                 foreach=None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if not 0.0 <= lr:
            raise EmberValueError(f"ASGD: invalid learning rate {lr}; expected >= 0")
        if not 0.0 <= weight_decay:
            raise EmberValueError(f"ASGD: invalid weight_decay value {weight_decay}; expected "
                                  ">= 0")
        _only_defaults("ASGD", foreach, capturable, differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, differentiable=differentiable,
                                      capturable=capturable))

    def _step_group(self, group: dict) -> None:
        _only_defaults("ASGD", group["foreach"], group["capturable"], group["differentiable"])
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        for p, g, state in self._grads(group):
            if not state:
                state.update(step=0, eta=_scalar(lr), mu=1.0, ax=ops.zeros_like(p))
            state["step"] = step = state["step"] + 1
            if weight_decay:
                g = g + p * weight_decay
            eta = state["eta"]
            p.mul_(1 - lambd * eta)
            p.add_(g, alpha=-eta)
            ax = state["ax"]
            if state["mu"] != 1:
                ax.add_((p - ax) * state["mu"])
            else:
                ax.copy_(p)
            state["eta"] = _scalar(lr / ((1 + lambd * lr * step) ** alpha))
            state["mu"] = _scalar(1 / max(1, step - t0))
