"""Adafactor, as torch.optim computes it (the update term for term, so runs agree)."""
from __future__ import annotations

import math
from collections.abc import Iterable

from .. import dtypes as D
from .. import ops
from ..errors import EmberTypeError, EmberValueError
from .adam_family import refuse_flags
from .optimizer import Optimizer


class Adafactor(Optimizer):
    """Adam-like steps with a factored second moment: for a matrix (and the last two dims
    of a higher tensor) one running mean of squared gradients per row and per column
    instead of one per entry; vectors keep a full one.  The step is relative to the
    parameter's RMS (``eps[1]`` its floor) and clipped so the update's RMS is at most ``d``.

    foreach=True raises NotInEmberError (no multi-tensor path; foreach=None and False run
    the per-parameter update, torch's single-tensor one).

    PyTorch
    -------
    ``torch.optim.Adafactor``
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        refuse_flags("Adafactor", dict(foreach=foreach))
        if not 0.0 <= lr:
            raise EmberValueError(f"Adafactor: Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise EmberValueError(f"Adafactor: beta2_decay should be <= 0 but is: "
                                  f"{beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise EmberValueError(f"Adafactor: epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise EmberValueError(f"Adafactor: epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise EmberValueError(f"Adafactor: Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise EmberValueError(f"Adafactor: weight_decay should be >= 0 but is: "
                                  f"{weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _step_group(self, group: dict) -> None:
        refuse_flags("Adafactor", group)
        lr, beta2_decay, d = group["lr"], group["beta2_decay"], group["d"]
        eps1, eps2 = group["eps"]
        weight_decay = group["weight_decay"]
        for p, g, state in self._grads(group):
            if p.dtype.category == D.COMPLEX:
                raise EmberTypeError("Adafactor does not support complex parameters")
            if not state:
                state["step"] = ops.zeros(())            # torch's: a float32 0-d tensor
                if g.ndim > 1:
                    state["row_var"] = ops.zeros(*g.shape[:-1], 1, dtype=g.dtype,
                                                 device=g.device)
                    state["col_var"] = ops.zeros(*g.shape[:-2], 1, g.shape[-1],
                                                 dtype=g.dtype, device=g.device)
                else:
                    state["variance"] = ops.zeros_like(g)
            if eps1 is None:          # (torch's loop: the first parameter's dtype sets it)
                eps1 = D.finfo(p.dtype).eps
            step_t = state["step"]
            step_t.add_(1)
            step = float(step_t.item())
            one_minus_beta2_t = step ** beta2_decay
            rho_t = min(lr, 1 / math.sqrt(step))
            alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho_t
            if weight_decay != 0:
                p.mul_(1 - lr * weight_decay)
            if g.ndim > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_mean = g.norm(dim=-1, keepdim=True).square() / g.shape[-1]
                row_var.lerp_(row_mean, one_minus_beta2_t)
                col_mean = g.norm(dim=-2, keepdim=True).square() / g.shape[-2]
                col_var.lerp_(col_mean, one_minus_beta2_t)
                var_estimate = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(
                    min=eps1)
            else:
                variance = state["variance"]
                variance.lerp_(g * g, one_minus_beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * g
            denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
            p.add_(update, alpha=-alpha / denom)
