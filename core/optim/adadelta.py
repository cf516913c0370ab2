"""Adadelta, as torch.optim computes it (the update term for term, so runs agree)."""
from __future__ import annotations

from collections.abc import Iterable

from .. import ops
from ..errors import EmberValueError
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """Scale each step by the ratio of running RMS of past updates to that of gradients.

    foreach and capturable are accepted for torch's signature and change nothing here;
    differentiable=True (a graph through the update) is not supported.

    PyTorch
    -------
    ``torch.optim.Adadelta``
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, foreach: bool | None = None,
                 *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if differentiable:
            raise EmberValueError("Adadelta: differentiable=True is not supported by ember "
                                  "(updates run without a graph); leave it False")
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
        weight_decay = group["weight_decay"]
        for p, g, state in self._grads(group):
            if not state:
                state.update(step=0, square_avg=ops.zeros_like(p), acc_delta=ops.zeros_like(p))
            state["step"] += 1
            if weight_decay:
                g = g + p * weight_decay
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).addcmul_(g, g, value=1 - rho)
            delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)
