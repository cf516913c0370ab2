"""Gradient clipping and parameter/vector conversion (ember.nn.utils)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

from ... import ops
from ...autograd.grad_mode import no_grad
from ...errors import EmberValueError
from ...tensor import Tensor
from . import rnn
from .weight_norms import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "rnn",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


def _grads(parameters) -> list[Tensor]:
    if type(parameters) is Tensor:
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so their joint norm is at most max_norm; returns the
    norm before clipping (as torch.nn.utils.clip_grad_norm_)."""
    grads = _grads(parameters)
    if not grads:
        return ops.tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if norm_type == math.inf:
            per = [ops.amax(ops.abs(g)) for g in grads]
            total = per[0] if len(per) == 1 else ops.amax(ops.stack(per))
        else:
            if norm_type == 2.0:
                per = [ops.sum(g * g) for g in grads]
            else:
                per = [ops.sum(ops.abs(g) ** norm_type) for g in grads]
            total = per[0] if len(per) == 1 else ops.sum(ops.stack(per))
            total = total ** (1.0 / norm_type)
        if error_if_nonfinite and not bool(ops.isfinite(total).item()):
            raise EmberValueError(
                f"clip_grad_norm_: the total norm of order {norm_type} for gradients from "
                "`parameters` is non-finite, so it cannot be clipped. To disable this error "
                "and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`")
        # a 0-d tensor, not a Python float: no device-to-host sync per step
        coef = max_norm / (total + 1e-6)
        coef = ops.where(coef < 1.0, coef, 1.0)
        for g in grads:
            g.mul_(coef)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """clip_grad_norm_ under its old name, which PyTorch deprecates with a FutureWarning
    (and so does ember)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened into one vector."""
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of vec into the parameters (in place)."""
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise EmberValueError(f"vector_to_parameters: expected a 1-D vector of {total} "
                              f"elements, got shape {tuple(vec.shape)}")
    with no_grad():
        start = 0
        for p in params:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(p.shape))
            start += n
