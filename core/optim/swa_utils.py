"""torch.optim.swa_utils: stochastic weight averaging and exponential moving averages of a
model's weights (AveragedModel), the SWA learning-rate schedule (SWALR), and update_bn to
recompute batch-norm statistics for the averaged weights."""
from __future__ import annotations

import copy
import itertools
import math

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import no_grad
from ..errors import EmberTypeError, EmberValueError
from ..nn.module import Module
from ..nn.normalization import _BatchNorm
from ..tensor import Tensor
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay: float = 0.999):
    """In place over lists: ``ema = decay * ema + (1 - decay) * current``.

    PyTorch
    -------
    ``torch.optim.swa_utils.get_ema_multi_avg_fn``
    """
    if not 0.0 <= decay <= 1.0:
        raise EmberValueError(f"get_ema_multi_avg_fn: invalid decay value {decay}; expected "
                              "a value in [0, 1]")

    def ema_update(ema_params, current_params, num_averaged) -> None:
        with no_grad():
            for e, c in zip(ema_params, current_params):
                if e.dtype.is_floating_point:
                    e.lerp_(c, 1 - decay)
                else:                               # integer buffers, as torch's
                    e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In place over lists: the running mean ``avg += (current - avg) / (n + 1)``.

    PyTorch
    -------
    ``torch.optim.swa_utils.get_swa_multi_avg_fn``
    """
    def swa_update(averaged_params, current_params, num_averaged) -> None:
        n = float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        with no_grad():
            for a, c in zip(averaged_params, current_params):
                if a.dtype.is_floating_point:
                    a.lerp_(c, 1 / (n + 1))
                else:                               # integer buffers, as torch's
                    a.copy_(a + (c - a) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """``(ema, current, n) -> decay * ema + (1 - decay) * current``.

    PyTorch
    -------
    ``torch.optim.swa_utils.get_ema_avg_fn``
    """
    if not 0.0 <= decay <= 1.0:
        raise EmberValueError(f"get_ema_avg_fn: invalid decay value {decay}; expected a value "
                              "in [0, 1]")

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``(avg, current, n) -> avg + (current - avg) / (n + 1)``.

    PyTorch
    -------
    ``torch.optim.swa_utils.get_swa_avg_fn``
    """
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (``.module``) whose weights are the average of the weights passed
    to :meth:`update_parameters` (SWA's running mean by default; ``avg_fn`` or
    ``multi_avg_fn`` for others, e.g. ``get_ema_multi_avg_fn(0.999)``). ``use_buffers``
    averages the buffers too; otherwise they are copied from the model at each update.
    ``n_averaged`` (a buffer) counts the updates.

    PyTorch
    -------
    ``torch.optim.swa_utils.AveragedModel``
    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise EmberValueError("AveragedModel: only one of avg_fn and multi_avg_fn should "
                                  "be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ops.tensor(0, dtype=D.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list:
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        mine = [t.detach() for t in self._tensors(self.module)]
        theirs = [t.detach().to(a.device) for t, a in zip(self._tensors(model), mine)]
        if len(mine) != len(self._tensors(model)):
            raise EmberValueError(
                f"AveragedModel.update_parameters: the model has {len(theirs)} tensors to "
                f"average, the averaged copy {len(mine)}; pass the model it was built from")
        with no_grad():
            n = int(self.n_averaged.item())
            if n == 0:
                for a, t in zip(mine, theirs):
                    a.copy_(t)
            elif self.avg_fn is not None:
                count = self.n_averaged
                for a, t in zip(mine, theirs):
                    a.copy_(self.avg_fn(a, t, count.to(a.device)))
            else:                    # per (device, dtype) group, as torch's
                groups: dict = {}
                for a, t in zip(mine, theirs):
                    pair = groups.setdefault((str(a.device), a.dtype), ([], []))
                    pair[0].append(a)
                    pair[1].append(t)
                fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                for (device, _), (a_list, t_list) in groups.items():
                    fn(a_list, t_list, self.n_averaged.to(device))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the batch-norm running statistics of ``model`` over one pass of ``loader``
    (a cumulative average over every batch, as after SWA), then put the modules' momentum
    and training mode back. Batches may be tensors or (input, ...) sequences.

    PyTorch
    -------
    ``torch.optim.swa_utils.update_bn``
    """
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if not isinstance(batch, Tensor):
                raise EmberTypeError(f"update_bn: expected batches of tensors (or sequences "
                                     f"whose first item is one), got {type(batch).__name__}")
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs
    (cosine or linear), then hold it.

    PyTorch
    -------
    ``torch.optim.swa_utils.SWALR``
    """

    def __init__(self, optimizer: Optimizer, swa_lr, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else \
            [swa_lr] * len(optimizer.param_groups)
        if len(lrs) != len(optimizer.param_groups):
            raise EmberValueError(f"SWALR: swa_lr has {len(lrs)} values for "
                                  f"{len(optimizer.param_groups)} param groups")
        for lr, group in zip(lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise EmberValueError(f"SWALR: anneal_strategy must be one of 'cos' or 'linear', "
                                  f"instead got {anneal_strategy!r}")
        self.anneal_func = _cosine_anneal if anneal_strategy == "cos" else _linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise EmberValueError(f"SWALR: anneal_epochs must be equal or greater than 0, got "
                                  f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _initial(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0.0, min(1.0, (step - 1) /
                                                   max(1, self.anneal_epochs))))
        prev = [self._initial(g["lr"], g["swa_lr"], prev_alpha)
                for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0.0, min(1.0, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev)]


def _cosine_anneal(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


def _linear_anneal(t: float) -> float:
    return t
