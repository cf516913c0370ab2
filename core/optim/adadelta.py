"""Adadelta, as torch.optim computes it (the update term for term, so runs agree)."""
from __future__ import annotations

from collections.abc import Iterable

from .. import ops
from ..errors import EmberValueError
from .adam_family import _advance, _new_step, refuse_flags
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """Scale each step by the ratio of running RMS of past updates to that of gradients.

    foreach=True (torch's multi-tensor update) and differentiable=True (a graph through
    the update) raise NotInEmberError; capturable=True keeps the step count as a tensor on
    the parameter's device (torch's), so a captured step replays with the right count.

    PyTorch
    -------
    ``torch.optim.Adadelta``
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, foreach: bool | None = None,
                 *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        refuse_flags("Adadelta", dict(foreach=foreach, differentiable=differentiable))
        for key, value in (("learning rate", lr), ("epsilon value", eps),
                           ("weight_decay value", weight_decay)):
            if value < 0.0:
                raise EmberValueError(f"Adadelta: invalid {key} {value}; expected >= 0")
        if not 0.0 <= rho <= 1.0:
            raise EmberValueError(f"Adadelta: invalid rho value {rho}; expected 0 <= rho <= 1")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    def _step_group(self, group: dict) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        weight_decay, capturable = group["weight_decay"], group.get("capturable", False)
        refuse_flags("Adadelta", group)
        for p, g, state in self._grads(group):
            if not state:
                state.update(step=_new_step(p, capturable), square_avg=ops.zeros_like(p),
                             acc_delta=ops.zeros_like(p))
            _advance(state, p, capturable)
            if weight_decay:
                g = g + p * weight_decay
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).addcmul_(g, g, value=1 - rho)
            delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)
