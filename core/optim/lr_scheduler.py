"""Learning-rate schedulers with torch.optim.lr_scheduler's formulas.

StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR, MultiplicativeLR, LinearLR,
ConstantLR, PolynomialLR, OneCycleLR, CyclicLR, CosineAnnealingWarmRestarts,
ReduceLROnPlateau, and the schedulers of schedulers SequentialLR and ChainedScheduler.

Call scheduler.step() after optimizer.step().  A scheduler's state_dict holds only numbers,
strings, lists and dicts, so ember.save can store it.
"""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..errors import EmberTypeError, EmberValueError
from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "MultiplicativeLR", "LinearLR", "ConstantLR", "PolynomialLR",
           "OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts", "ReduceLROnPlateau",
           "SequentialLR", "ChainedScheduler"]


def _check_optimizer(name: str, optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise EmberTypeError(f"{name}: {type(optimizer).__name__} is not an Optimizer; pass "
                             "the optimizer whose learning rates it should schedule")


class LRScheduler:
    """Base class: subclasses define get_lr() (the recursive form torch uses) and, where
    torch has one, _get_closed_form_lr() for step(epoch)."""

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise EmberValueError(
                        f"{type(self).__name__}: param 'initial_lr' is not specified in "
                        f"param_groups[{i}] when resuming with last_epoch={last_epoch}; load "
                        "the optimizer's state_dict first (or use last_epoch=-1)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def _current(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """step's work without counting a step (SequentialLR sets a scheduler to epoch 0
        at its milestone this way, as torch's)."""
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = self._current()

    def get_last_lr(self) -> list[float]:
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()
                if k not in ("optimizer", "_is_initial") and not callable(v)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "optimizer"})


def _lambdas(name: str, optimizer: Optimizer, lr_lambda) -> list:
    """One function per param group: the list given, or the one function for all."""
    _check_optimizer(name, optimizer)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise EmberValueError(f"{name}: expected {len(optimizer.param_groups)} "
                                  f"lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * len(optimizer.param_groups)


class _LRScheduler(LRScheduler):
    """LRScheduler under its old name, which torch keeps for compatibility (schedulers
    written against torch < 2.0 subclass it).

    PyTorch
    -------
    ``torch.optim.lr_scheduler._LRScheduler``
    """


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch) (one function, or one per param group)."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _lambdas("LambdaLR", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas,
                                                                 self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        # the functions themselves are code, not state: they are not saved (as in torch)
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class StepLR(LRScheduler):
    """Multiply the lr by gamma every step_size epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if step_size <= 0:
            raise EmberValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by gamma at each milestone epoch."""

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["milestones"] = sorted(self.milestones.elements())
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self.milestones = Counter(int(m) for m in state_dict["milestones"])


class ExponentialLR(LRScheduler):
    """Multiply the lr by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal the lr from its initial value to eta_min along half a cosine over T_max
    epochs (and back up after, as torch's recursive form does)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if T_max <= 0:
            raise EmberValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, T, low = self.last_epoch, self.T_max, self.eta_min  # noqa: N806
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and t > 0:
            return [low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._current())]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (lr - low) + low for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min) *
                (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise EmberValueError(f"LinearLR: start_factor must be in (0, 1], got "
                                  f"{start_factor}")
        if end_factor > 1.0 or end_factor < 0:
            raise EmberValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        span = self.end_factor - self.start_factor
        return [lr * (1.0 + span / (self.total_iters * self.start_factor
                                    + (self.last_epoch - 1) * span))
                for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class MultiplicativeLR(LRScheduler):
    """Multiply the lr by lr_lambda(epoch) every epoch (one function, or one per group)."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _lambdas("MultiplicativeLR", optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise EmberTypeError(f"MultiplicativeLR: lr_lambda should be a function, but "
                                     f"got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._current())]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class ConstantLR(LRScheduler):
    """Scale the lr by factor until epoch total_iters, then restore it."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise EmberValueError(f"ConstantLR: factor expected to be between 0 and 1, got "
                                  f"{factor}")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current()]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [lr * (1.0 / self.factor) for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * (self.factor + (self.last_epoch >= self.total_iters)
                        * (1 - self.factor)) for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr as (1 - epoch / total_iters) ** power, down to 0 at total_iters."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        t, n = self.last_epoch, self.total_iters
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in self._current()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: anneal along half a cosine over T_i epochs, then restart at the initial lr
    with T_i multiplied by T_mult.  step(epoch) may take a fractional epoch (per batch)."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise EmberValueError(f"CosineAnnealingWarmRestarts: expected positive integer "
                                  f"T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise EmberValueError(f"CosineAnnealingWarmRestarts: expected integer T_mult >= "
                                  f"1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise EmberValueError(f"CosineAnnealingWarmRestarts: expected float or int "
                                  f"eta_min, but got {eta_min!r}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise EmberValueError(f"CosineAnnealingWarmRestarts: expected non-negative "
                                      f"epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._current()

    def _update_lr(self, epoch: int | None = None) -> None:
        self.step(epoch)
        self._step_count -= 1


def _per_group(name: str, optimizer: Optimizer, value, owner: str = "OneCycleLR") -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise EmberValueError(f"{owner}: expected {len(optimizer.param_groups)} values "
                                  f"for {name}, got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to max_lr, then anneal far below the initial lr; the
    momentum (or Adam's beta1) cycles the other way.  Step it after every batch."""

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        _check_optimizer("OneCycleLR", optimizer)
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise EmberValueError(f"OneCycleLR: expected a positive integer total_steps, "
                                      f"got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if epochs <= 0 or steps_per_epoch <= 0:
                raise EmberValueError(f"OneCycleLR: epochs and steps_per_epoch must be "
                                      f"positive, got {epochs} and {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise EmberValueError("OneCycleLR: you must define either total_steps OR "
                                  "(epochs AND steps_per_epoch)")
        if not 0.0 <= pct_start <= 1.0:
            raise EmberValueError(f"OneCycleLR: expected a float between 0 and 1 for "
                                  f"pct_start, got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise EmberValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', "
                                  f"got {anneal_strategy!r}")
        n = self.total_steps
        up = float(pct_start * n) - 1
        if three_phase:
            self._schedule_phases = [
                dict(end_step=up, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * n) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=n - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum")]
        else:
            self._schedule_phases = [
                dict(end_step=up, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=n - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum")]
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = optimizer.defaults
            if "momentum" not in defaults and "betas" not in defaults:
                raise EmberValueError("OneCycleLR: optimizer must support momentum or beta1 "
                                      "with the cycle_momentum option enabled")
            self.use_beta1 = "betas" in defaults
            highs = _per_group("max_momentum", optimizer, max_momentum)
            lows = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (high, *group["betas"][1:])
                    else:
                        group["momentum"] = high
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise EmberValueError(f"OneCycleLR: tried to step {step} times; the specified "
                                  f"number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]],
                                                group[phase["end_momentum"]], pct)
                    break
                start = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by factor once a metric has stopped improving for patience epochs."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0, eps: float = 1e-8) -> None:
        _check_optimizer("ReduceLROnPlateau", optimizer)
        if factor >= 1.0:
            raise EmberValueError(f"ReduceLROnPlateau: factor should be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise EmberValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got "
                                  f"{mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise EmberValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', "
                                  f"got {threshold_mode!r}")
        self.optimizer = optimizer
        self.factor = factor
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise EmberValueError(f"ReduceLROnPlateau: expected "
                                      f"{len(optimizer.param_groups)} min_lrs, got "
                                      f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._current()
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch: int | None = None) -> None:  # type: ignore[override]
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0          # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current()

    def _reduce_lr(self) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise EmberValueError(
                    f"ReduceLROnPlateau: the optimizer has {len(self.optimizer.param_groups)} "
                    f"param groups but min_lrs has {len(self.min_lrs)} entries; update "
                    "scheduler.min_lrs after adding a param group")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old = float(group["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                group["lr"] = new

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" \
                else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" \
            else a > best + self.threshold


class CyclicLR(LRScheduler):
    """The cyclical lr policy: the lr moves between base_lr and max_lr (triangular,
    triangular2 halving the amplitude each cycle, exp_range scaling it by gamma ** step, or
    scale_fn), the momentum (or Adam's beta1) the other way.  Step it after every batch."""

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1) -> None:
        _check_optimizer("CyclicLR", optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr, "CyclicLR")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr, "CyclicLR")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise EmberValueError(f"CyclicLR: mode {mode!r} is invalid and scale_fn is None; "
                                  "use 'triangular', 'triangular2' or 'exp_range', or pass "
                                  "scale_fn")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise EmberValueError("CyclicLR: optimizer must support momentum or beta1 "
                                      "with the cycle_momentum option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum,
                                             "CyclicLR")
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum,
                                            "CyclicLR")
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums,
                                            optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (high, *group["betas"][1:])
                    else:
                        group["momentum"] = high
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base + (high - base) * scale_factor * self.scale_fn(at)
               for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for low, high, group in zip(self.base_momentums, self.max_momentums,
                                        self.optimizer.param_groups):
                momentum = high - (high - low) * scale_factor * self.scale_fn(at)
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in super().state_dict().items() if k != "_scale_fn_custom"}
        fn = self._scale_fn_custom
        # a callable object's attributes are state; a function is code (as torch's)
        state["_scale_fn_custom"] = (fn.__dict__.copy() if fn is not None and
                                     not isinstance(fn, types.FunctionType) else None)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _check_schedulers(name: str, schedulers, optimizer) -> None:
    if len(schedulers) < 1:
        raise EmberValueError(f"{name} expects at least one scheduler, but got none")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise EmberTypeError(f"{name}: the scheduler at index {i} should have `optimizer` "
                                 "as its attribute")
        if isinstance(s, ReduceLROnPlateau):
            raise EmberValueError(f"{name} does not support ReduceLROnPlateau (its step takes "
                                  f"a metric), but got one at index {i}")
        if s.optimizer is not optimizer:
            raise EmberValueError(f"{name} expects all schedulers to belong to the same "
                                  f"optimizer, but the {type(s).__name__} at index {i} has "
                                  "another one")


class _OfSchedulers(LRScheduler):
    """A scheduler of schedulers: its state holds theirs, one state dict each."""

    _schedulers: list

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers", "_is_initial")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, d in zip(self._schedulers, inner):
            s.load_state_dict(d)


class SequentialLR(_OfSchedulers):
    """Run schedulers one after the other, switching at the milestone epochs (a warm-up
    then a decay, say); each starts from epoch 0 at its milestone."""

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list,
                 last_epoch: int = -1) -> None:
        _check_optimizer("SequentialLR", optimizer)
        _check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise EmberValueError(
                "SequentialLR expects one more scheduler than milestones, got "
                f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:          # back to the initial rates
            group["lr"] = group["initial_lr"]
        self._undo(self)                              # the constructors' own first steps
        i = bisect_right(self._milestones, 0)
        self._schedulers[i]._initial_step()
        self._last_lr = self._schedulers[i].get_last_lr()

    def _undo(self, sched) -> None:
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self) -> None:  # noqa: D102  (torch's takes no epoch)
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()



class ChainedScheduler(_OfSchedulers):
    """Step every scheduler of the list at each step, their factors combined."""

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise EmberValueError("ChainedScheduler expects at least one scheduler, but got "
                                  "none")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in schedulers[-1].optimizer.param_groups]

    def step(self) -> None:  # noqa: D102  (torch's takes no epoch)
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]
