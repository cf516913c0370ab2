"""RMSprop (plain and centered, with momentum) and Adagrad, as torch.optim computes them."""
from __future__ import annotations

from collections.abc import Iterable

from .. import ops
from ..errors import EmberValueError
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """Divide the gradient by a running root-mean-square of recent gradients.

    PyTorch
    -------
    ``torch.optim.RMSprop``
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, *, maximize: bool = False) -> None:
        for key, value in (("lr", lr), ("eps", eps), ("momentum", momentum),
                           ("weight_decay", weight_decay), ("alpha", alpha)):
            if value < 0.0:
                raise EmberValueError(f"RMSprop: invalid {key} value {value}; expected >= 0")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered,
                                      maximize=maximize))

    def _step_group(self, group: dict) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        centered = group["centered"]
        for p, g, state in self._grads(group):
            if not state:
                state["step"] = 0
                state["square_avg"] = ops.zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = ops.zeros_like(p)
                if centered:
                    state["grad_avg"] = ops.zeros_like(p)
            state["step"] += 1
            if weight_decay:
                g = g + p * weight_decay
            square_avg = state["square_avg"]
            square_avg.mul_(alpha).addcmul_(g, g, value=1 - alpha)
            if centered:
                grad_avg = state["grad_avg"].lerp_(g, 1 - alpha)
                avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
            else:
                avg = square_avg.sqrt() + eps
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).addcdiv_(g, avg)
                p.add_(buf, alpha=-lr)
            else:
                p.addcdiv_(g, avg, value=-lr)


class Adagrad(Optimizer):
    """Scale each coordinate by the root of its summed squared gradients.

    PyTorch
    -------
    ``torch.optim.Adagrad``
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, maximize: bool = False) -> None:
        for key, value in (("lr", lr), ("lr_decay", lr_decay), ("eps", eps),
                           ("weight_decay", weight_decay),
                           ("initial_accumulator_value", initial_accumulator_value)):
            if value < 0.0:
                raise EmberValueError(f"Adagrad: invalid {key} value {value}; expected >= 0")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      maximize=maximize))
        for group in self.param_groups:
            for p in group["params"]:
                # created eagerly, as torch does, so state_dict() is complete before a step
                self.state[p] = {"step": 0, "sum": ops.full_like(
                    p, group["initial_accumulator_value"])}

    def _step_group(self, group: dict) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        weight_decay = group["weight_decay"]
        for p, g, state in self._grads(group):
            if not state:
                state.update(step=0, sum=ops.full_like(p, group["initial_accumulator_value"]))
            state["step"] = step = state["step"] + 1
            if weight_decay:
                g = g + p * weight_decay
            clr = lr / (1 + (step - 1) * lr_decay)
            state["sum"].addcmul_(g, g, value=1)
            p.addcdiv_(g, state["sum"].sqrt() + eps, value=-clr)
