"""Adamax, NAdam and RAdam (torch.optim's update rules, parameter groups and state keys)."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import ops
from ..errors import EmberValueError, NotInEmberError
from ..tensor import Tensor
from .adam import _check
from .optimizer import Optimizer


def _advance(state: dict, p: Tensor, capturable: bool):
    """Count one more step and return it: a tensor on p's device for capturable (so a
    captured step replays with the right count), else a Python number; a step saved the
    other way (e.g. torch's tensor step) is converted."""
    step = state["step"]
    if capturable:
        if type(step) is not Tensor:
            step = state["step"] = ops.full((), float(step), device=p.device)
        step.add_(1.0)
        return step
    if type(step) is Tensor:
        step = float(step.item())
    state["step"] = step = step + 1
    return step


def _new_step(p: Tensor, capturable: bool):
    return ops.zeros((), device=p.device) if capturable else 0


def _flags(name: str, foreach, maximize, capturable, differentiable) -> dict:
    """torch's flags, kept in the group (state dicts carry them); the ones ember cannot
    honour are refused here and again at each step (a group loaded from a state dict or
    added later may carry them)."""
    flags = dict(foreach=foreach, maximize=maximize, capturable=capturable,
                 differentiable=differentiable)
    refuse_flags(name, flags)
    return flags


def refuse_flags(name: str, group: dict) -> None:
    """foreach=True (torch's multi-tensor update) and differentiable=True (a graph through
    the update) for an optimizer that has neither: NotInEmberError naming the flag.
    foreach=None picks the per-parameter loop (torch's None lets the implementation
    choose), foreach=False asks for it."""
    foreach = group.get("foreach")
    if foreach not in (None, True, False):
        raise EmberValueError(f"{name}: foreach must be None, True or False, got {foreach!r}")
    if foreach:
        raise NotInEmberError(
            f"{name}(foreach=True): ember has no multi-tensor path for {name} (SGD, Adam and "
            f"AdamW have one, ember.optim._foreach); its update runs per parameter, as "
            f"foreach=False. Leave foreach at None or False")
    if group.get("differentiable"):
        raise NotInEmberError(
            f"{name}(differentiable=True): ember's optimizer steps update the parameters in "
            f"place without an autograd graph, so the update cannot be differentiated "
            f"through; leave differentiable=False")


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm of past gradients in place of the second moment.

    PyTorch
    -------
    ``torch.optim.Adamax``
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, foreach: bool | None = None,
                 *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check("Adamax", lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      **_flags(type(self).__name__, foreach, maximize, capturable,
                                               differentiable)))

    def _step_group(self, group: dict) -> None:
        refuse_flags(type(self).__name__, group)
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, capturable = group["weight_decay"], group.get("capturable", False)
        for p, g, state in self._grads(group):
            if not state:
                state["step"] = _new_step(p, capturable)
                state["exp_avg"] = ops.zeros_like(p)
                state["exp_inf"] = ops.zeros_like(p)
            step = _advance(state, p, capturable)
            if weight_decay:
                g = g + p * weight_decay
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_inf.mul_(beta2).maximum_(g.abs() + eps)
            clr = (1 - beta1 ** step).reciprocal() * lr if capturable else \
                lr / (1 - beta1 ** step)
            p.addcdiv_(exp_avg, exp_inf, value=-clr)


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum and a momentum schedule (momentum_decay).

    PyTorch
    -------
    ``torch.optim.NAdam``
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check("NAdam", lr, betas, eps, weight_decay)
        if momentum_decay < 0.0:
            raise EmberValueError(f"NAdam: invalid momentum_decay value {momentum_decay}; "
                                  "expected >= 0")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      **_flags(type(self).__name__, foreach, maximize, capturable,
                                               differentiable)))

    def _step_group(self, group: dict) -> None:
        refuse_flags(type(self).__name__, group)
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
        decoupled = group.get("decoupled_weight_decay", False)
        capturable = group.get("capturable", False)
        for p, g, state in self._grads(group):
            if not state:
                state["step"] = _new_step(p, capturable)
                state["mu_product"] = ops.ones((), device=p.device) if capturable else 1.0
                state["exp_avg"] = ops.zeros_like(p)
                state["exp_avg_sq"] = ops.zeros_like(p)
            step = _advance(state, p, capturable)
            g = _weight_decay(p, g, lr, weight_decay, decoupled)
            mu = (0.96 ** (step * momentum_decay) * -0.5 + 1.0) * beta1
            mu_next = (0.96 ** ((step + 1) * momentum_decay) * -0.5 + 1.0) * beta1
            mu_product = state["mu_product"]
            if capturable:
                if type(mu_product) is not Tensor:
                    mu_product = state["mu_product"] = ops.full((), float(mu_product),
                                                                device=p.device)
                mu_product.mul_(mu)
            else:
                if type(mu_product) is Tensor:
                    mu_product = float(mu_product.item())
                # torch keeps the product in a float32 tensor; round the same way so long
                # runs follow its trajectory
                mu_product = state["mu_product"] = float(np.float32(mu_product)
                                                           * np.float32(mu))
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            denom = (exp_avg_sq / (1 - beta2 ** step)).sqrt() + eps
            mu_product_next = mu_product * mu_next
            p.addcdiv_(g, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product)))
            p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def _weight_decay(p, g, lr: float, weight_decay: float, decoupled: bool):
    """The gradient after L2 weight decay, or (decoupled, AdamW-style) p shrunk in place."""
    if not weight_decay:
        return g
    if decoupled:
        p.mul_(1 - lr * weight_decay)
        return g
    return g + p * weight_decay


class RAdam(Optimizer):
    """RAdam: Adam whose adaptive step is rectified (plain momentum while the variance
    estimate is unreliable, rho_t <= 5).

    PyTorch
    -------
    ``torch.optim.RAdam``
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check("RAdam", lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      **_flags(type(self).__name__, foreach, maximize, capturable,
                                               differentiable)))

    def _step_group(self, group: dict) -> None:
        refuse_flags(type(self).__name__, group)
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        decoupled = group.get("decoupled_weight_decay", False)
        capturable = group.get("capturable", False)
        rho_inf = 2 / (1 - beta2) - 1
        for p, g, state in self._grads(group):
            if not state:
                state["step"] = _new_step(p, capturable)
                state["exp_avg"] = ops.zeros_like(p)
                state["exp_avg_sq"] = ops.zeros_like(p)
            step = _advance(state, p, capturable)
            g = _weight_decay(p, g, lr, weight_decay, decoupled)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            corrected = exp_avg / bias_correction1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if capturable:
                # no host sync on rho_t: both branches as tensor math, chosen by where
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)).abs().sqrt()
                adaptive = bias_correction2.sqrt() / (exp_avg_sq.sqrt() + eps)
                ok = rho_t > 5.0
                p.sub_(corrected * lr * ops.where(ok, adaptive * rect, 1.0))
            elif rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (bias_correction2 ** 0.5) / (exp_avg_sq.sqrt() + eps)
                p.sub_(corrected * lr * adaptive * rect)
            else:
                p.sub_(corrected * lr)
