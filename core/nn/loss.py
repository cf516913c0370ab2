"""Losses and their functional forms (torch.nn.modules.loss; the margin ones: margin_loss.py).

MSELoss, L1Loss, CrossEntropyLoss, NLLLoss, BCEWithLogitsLoss, KLDivLoss, PoissonNLLLoss,
GaussianNLLLoss, ...

Written for stability: cross entropy goes through log_softmax, the logits form of binary
cross entropy through max(-x, 0) + log1p(exp(-|x|)), KL divergence never evaluates log(0).
"""
from __future__ import annotations

import math
import warnings

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..autograd.grad_mode import no_grad
from ..dispatch import run
from ..errors import EmberIndexError, EmberTypeError, EmberValueError, ShapeError
from ..functional import log_softmax, xlogy
from ..ops import loss as _ops_loss
from ..ops.loss import cross_entropy_op
from ..tensor import Tensor
from ._util import _need_float, _tensor
from .module import Module

__all__ = [
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
]


_REDUCTIONS = ("mean", "sum", "none")


def _reduction(name: str, reduction: str, size_average=None, reduce=None,
               extra: tuple = ()) -> str:
    if size_average is not None or reduce is not None:
        # the legacy pair, as torch.nn._reduction.legacy_get_string
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in _REDUCTIONS + extra:
        raise EmberValueError(f"{name}: reduction must be one of "
                              f"{', '.join(map(repr, _REDUCTIONS + extra))}, got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        n = loss.numel()
        # the mean of nothing is nan, as in torch (without a division-by-zero warning)
        return ops.sum(loss) / n if n else ops.sum(loss) * math.nan
    if reduction == "sum":
        return ops.sum(loss)
    return loss


def _pair_shapes(name: str, input: Tensor, target: Tensor) -> None:
    _need_float(name, input)
    if type(target) is not Tensor:
        raise EmberTypeError(f"{name}: expected target to be a Tensor, got "
                             f"{type(target).__name__}")
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"{name}: using a target size ({list(target.shape)}) that is different to the "
            f"input size ({list(input.shape)}); this will likely lead to incorrect results "
            "due to broadcasting. Please ensure they have the same size.", UserWarning,
            stacklevel=3)


# -- regression losses -------------------------------------------------------------------

def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The mean squared error between ``input`` and ``target`` (``reduction``: ``'mean'``,
    ``'sum'`` or ``'none'``).

    PyTorch
    -------
    ``torch.nn.functional.mse_loss``
    """
    if _amp and amp_policy.on("mse_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "mse_loss", mse_loss, input, target, size_average, reduce, reduction, weight)
    reduction = _reduction("mse_loss", reduction, size_average, reduce)
    _pair_shapes("mse_loss", input, target)
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The mean absolute error between ``input`` and ``target``.

    PyTorch
    -------
    ``torch.nn.functional.l1_loss``
    """
    if _amp and amp_policy.on("l1_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "l1_loss", l1_loss, input, target, size_average, reduce, reduction, weight)
    reduction = _reduction("l1_loss", reduction, size_average, reduce)
    _pair_shapes("l1_loss", input, target)
    loss = ops.abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared error below ``beta``, absolute error above it (Huber loss scaled by
    ``1 / beta``).

    PyTorch
    -------
    ``torch.nn.functional.smooth_l1_loss``
    """
    if _amp and amp_policy.on("smooth_l1_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "smooth_l1_loss", smooth_l1_loss, input, target, size_average, reduce, reduction, beta)
    reduction = _reduction("smooth_l1_loss", reduction, size_average, reduce)
    _pair_shapes("smooth_l1_loss", input, target)
    if beta < 0:
        raise EmberValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = input - target
    ad = ops.abs(d)
    if beta == 0.0:
        return _reduce(ad, reduction)
    loss = ops.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error below ``delta``, ``delta``-scaled absolute error above it.

    PyTorch
    -------
    ``torch.nn.functional.huber_loss``
    """
    if _amp and amp_policy.on("huber_loss"):      # autocast (amp_policy.py)
        return amp_policy.call("huber_loss", huber_loss, input, target, reduction, delta, weight)
    reduction = _reduction("huber_loss", reduction)
    _pair_shapes("huber_loss", input, target)
    if delta <= 0:
        raise EmberValueError(f"huber_loss: delta must be positive, got {delta}")
    d = input - target
    ad = ops.abs(d)
    loss = ops.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# -- classification losses ---------------------------------------------------------------

def _class_dim(name: str, input: Tensor) -> int:
    if input.ndim == 0:
        raise ShapeError(f"{name}: expected an input of shape (C,), (N, C) or (N, C, d1, ...)"
                         f", got a 0-d tensor")
    return 0 if input.ndim == 1 else 1


def _check_target(name: str, input: Tensor, target: Tensor, cd: int) -> None:
    if type(target) is not Tensor:
        raise EmberTypeError(f"{name}: expected target to be a Tensor, got "
                             f"{type(target).__name__}")
    if target._dtype.category != D.INT:
        raise EmberTypeError(f"{name}: expected an integer (int64) class-index target, got "
                             f"{target._dtype.name}; for class probabilities pass a float "
                             "target of the input's shape to cross_entropy")
    expected = input._data.shape[:cd] + input._data.shape[cd + 1:]
    if target._data.shape != expected:
        raise ShapeError(f"{name}: input of shape {tuple(input.shape)} expects a target of "
                         f"shape {expected}, got {tuple(target.shape)}")


def _out_of_bounds(name: str, target: Tensor, classes: int, ignore_index: int):
    """The error for a target outside [0, classes): found after the fact, so the check
    costs nothing when the targets are fine (gather checks its indices anyway)."""
    bad = ops.where((target < 0).logical_or(target >= classes).logical_and(
        target != ignore_index), target, 0)
    value = int(ops.amin(bad).item()) or int(ops.amax(bad).item())
    return EmberValueError(f"{name}: target {value} is out of bounds; expected class indices "
                           f"in [0, {classes - 1}] (or ignore_index={ignore_index})")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] (weighted); mean divides by the summed weight of the targets
    that are not ignore_index.

    PyTorch
    -------
    ``torch.nn.functional.nll_loss``
    """
    if _amp and amp_policy.on("nll_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "nll_loss", nll_loss, input, target, weight, size_average, ignore_index, reduce,
            reduction)
    reduction = _reduction("nll_loss", reduction, size_average, reduce)
    _need_float("nll_loss", input)
    cd = _class_dim("nll_loss", input)
    _check_target("nll_loss", input, target, cd)
    classes = input._data.shape[cd]
    if weight is not None and tuple(weight.shape) != (classes,):
        raise ShapeError(f"nll_loss: weight must have shape ({classes},) (one per class), got "
                         f"{tuple(weight.shape)}")
    try:
        return _ops_loss.nll(input, target, weight, cd, ignore_index, reduction)
    except EmberIndexError:
        raise _out_of_bounds("nll_loss", target, classes, ignore_index) from None


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim, then the negative log-likelihood; target is class
    indices (int) or class probabilities (float, the input's shape).

    Examples
    --------
    >>> import ember
    >>> logits = ember.zeros(2, 4)
    >>> round(ember.nn.functional.cross_entropy(logits, ember.tensor([0, 3])).item(), 4)
    1.3863

    PyTorch
    -------
    ``torch.nn.functional.cross_entropy``
    """
    if _amp and amp_policy.on("cross_entropy"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "cross_entropy", cross_entropy, input, target, weight, size_average, ignore_index,
            reduce, reduction, label_smoothing)
    reduction = _reduction("cross_entropy", reduction, size_average, reduce)
    _need_float("cross_entropy", input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise EmberValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, "
                              f"got {label_smoothing}")
    cd = _class_dim("cross_entropy", input)
    classes = input._data.shape[cd]
    if _one_kernel(input, target, weight, label_smoothing):
        # ops/loss.py's declared cross_entropy: one kernel each way where the device has
        # them (the CPU's), else the same log_softmax + nll as below
        _check_target("cross_entropy", input, target, cd)
        try:
            return run(cross_entropy_op, input, target, weight, ignore_index=ignore_index,
                       reduction=reduction)
        except EmberIndexError:
            raise _out_of_bounds("cross_entropy", target, classes, ignore_index) from None
    logp = log_softmax(input, cd)
    wshape = (classes,) + (1,) * (input.ndim - cd - 1)
    if type(target) is Tensor and target._dtype.category == D.FLOAT:
        if target._data.shape != input._data.shape:
            raise ShapeError(f"cross_entropy: a probability target must have the input's "
                             f"shape {tuple(input.shape)}, got {tuple(target.shape)}")
        if label_smoothing > 0.0:
            target = target * (1.0 - label_smoothing) + label_smoothing / classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        # 'mean' averages over samples (numel / classes of them), never over the weights
        return _reduce(-ops.sum(prod, cd), reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    # torch's label smoothing for index targets: mix in the mean of -logp over classes
    keep = target != ignore_index
    smooth = -ops.sum(logp * weight.reshape(wshape) if weight is not None else logp, cd)
    smooth = ops.where(keep, smooth, 0.0)
    if reduction == "mean":
        if weight is not None:
            denom = ops.sum(ops.take_along(weight, ops.where(keep, target, 0), 0) * keep.to(
                weight._dtype))
        else:
            denom = ops.sum(keep.to(input._dtype))
        smooth = ops.sum(smooth) / denom
    elif reduction == "sum":
        smooth = ops.sum(smooth)
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / classes)


def _one_kernel(input: Tensor, target, weight, label_smoothing: float) -> bool:
    """Whether cross_entropy is the declared op: (N, C) float32/float64 logits, N and C
    not 0, class indices, no label smoothing, and a weight (C,) of the logits' dtype that
    takes no gradient (torch's has none: nll_loss's weight is not differentiated)."""
    return (input.ndim == 2 and 0 not in input._data.shape and label_smoothing == 0.0
            and input._dtype in (D.float32, D.float64) and type(target) is Tensor
            and target._dtype.category == D.INT
            and (weight is None or (type(weight) is Tensor and weight._dtype is input._dtype
                                    and tuple(weight.shape) == input._data.shape[1:]
                                    and not weight.requires_grad)))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) for probabilities x; logs are clamped at -100.

    PyTorch
    -------
    ``torch.nn.functional.binary_cross_entropy``
    """
    if _amp and amp_policy.on("binary_cross_entropy"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "binary_cross_entropy", binary_cross_entropy, input, target, weight, size_average,
            reduce, reduction)
    reduction = _reduction("binary_cross_entropy", reduction, size_average, reduce)
    _need_float("binary_cross_entropy", input)
    if type(target) is not Tensor or target._data.shape != input._data.shape:
        got = tuple(target.shape) if type(target) is Tensor else type(target).__name__
        raise ShapeError(f"binary_cross_entropy: expected a target of the input's shape "
                         f"{tuple(input.shape)}, got {got}")
    if input.numel():
        lo, hi = ops.amin(input.detach()).item(), ops.amax(input.detach()).item()
        if lo < 0 or hi > 1:
            raise EmberValueError(
                f"binary_cross_entropy: all elements of input should be between 0 and 1, got "
                f"values in [{lo}, {hi}]; apply sigmoid first or use "
                "binary_cross_entropy_with_logits")
    log_x = ops.maximum(ops.log(input), -100.0)
    log_1mx = ops.maximum(ops.log(1.0 - input), -100.0)
    loss = -(target * (log_x - log_1mx) + log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable expression; pos_weight scales the
    positive term (per class, broadcast along the last dim).

    PyTorch
    -------
    ``torch.nn.functional.binary_cross_entropy_with_logits``
    """
    if _amp and amp_policy.on("binary_cross_entropy_with_logits"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "binary_cross_entropy_with_logits", binary_cross_entropy_with_logits, input, target,
            weight, size_average, reduce, reduction, pos_weight)
    reduction = _reduction("binary_cross_entropy_with_logits", reduction, size_average,
                           reduce)
    _need_float("binary_cross_entropy_with_logits", input)
    if type(target) is not Tensor or target._data.shape != input._data.shape:
        got = tuple(target.shape) if type(target) is Tensor else type(target).__name__
        raise ShapeError(f"binary_cross_entropy_with_logits: target size ({got}) must be "
                         f"the same as input size ({tuple(input.shape)})")
    # softplus(-x) = log(1 + exp(-x)), without overflow for either sign of x
    softplus_neg = ops.maximum(-input, 0.0) + ops.log1p(ops.exp(-ops.abs(input)))
    if pos_weight is not None:
        softplus_neg = softplus_neg * ((pos_weight - 1.0) * target + 1.0)
    loss = (1.0 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target * (log target - input) with input in log space; 'batchmean' divides the sum by
    the batch size (the true KL divergence), 'mean' by the number of elements.

    PyTorch
    -------
    ``torch.nn.functional.kl_div``
    """
    if _amp and amp_policy.on("kl_div"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "kl_div", kl_div, input, target, size_average, reduce, reduction, log_target)
    reduction = _reduction("kl_div", reduction, size_average, reduce, extra=("batchmean",))
    _need_float("kl_div", input)
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        # torch's xlogy(target, target): 0 * log 0 is 0, a negative target's log is nan,
        # and its gradient (nan at a target <= 0, as torch's xlogy backward gives)
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return ops.sum(loss) / (input._data.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


# -- likelihood losses ------------------------------------------------------------------

def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input) or input - target * log(input + eps); full
    adds Stirling's term for targets above 1.

    PyTorch
    -------
    ``torch.nn.functional.poisson_nll_loss``
    """
    if _amp and amp_policy.on("poisson_nll_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "poisson_nll_loss", poisson_nll_loss, input, target, log_input, full, size_average,
            eps, reduce, reduction)
    name = "poisson_nll_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        big = target > 1
        safe = ops.where(big, target, 2.0)     # no log(0) on the masked side
        stirling = safe * ops.log(safe) - safe + 0.5 * ops.log(2 * math.pi * safe)
        loss = loss + ops.where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 * (log var + (input - target)^2 / var), var clamped to eps; var may be one value
    per element, one per row (last dim dropped or 1), or a float.

    PyTorch
    -------
    ``torch.nn.functional.gaussian_nll_loss``
    """
    name = "gaussian_nll_loss"
    _need_float(name, input)
    _tensor(name, target, "target")
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise EmberValueError(f"{name}: var has negative entry/entries, got {var}")
        var = ops.full(input._data.shape, float(var), dtype=input._dtype, device=input.device)
    else:
        _need_float(name, var, "var")
        with no_grad():
            if var.numel() and ops.amin(var).item() < 0:
                raise EmberValueError(f"{name}: var has negative entry/entries")
    ishape, vshape = input._data.shape, var._data.shape
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif not (len(ishape) == len(vshape) and
                  sum(v for i, v in zip(ishape, vshape) if i != v) == 1):
            raise ShapeError(f"{name}: var is of incorrect size: expected {tuple(ishape)}, "
                             f"{tuple(ishape[:-1])} or one dim of size 1, got {tuple(vshape)}")
    reduction = _reduction(name, reduction)
    # torch clamps a clone under no_grad: the value is clamped, the gradient passes as is
    var = var + (ops.maximum(var, eps) - var).detach()
    d = input - target
    loss = 0.5 * (ops.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# -- Module forms ------------------------------------------------------------------------

class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _reduction(type(self).__name__, reduction, size_average, reduce,
                                    extra=("batchmean",) if type(self) is KLDivLoss else ())


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error.

    PyTorch
    -------
    ``torch.nn.MSELoss``
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    PyTorch
    -------
    ``torch.nn.L1Loss``
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below beta, absolute error above it.

    PyTorch
    -------
    ``torch.nn.SmoothL1Loss``
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below delta, delta-scaled absolute error above it.

    PyTorch
    -------
    ``torch.nn.HuberLoss``
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities.

    PyTorch
    -------
    ``torch.nn.NLLLoss``
    """

    def __init__(self, weight: Tensor | None = None, size_average=None,
                 ignore_index: int = -100, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                        reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL over logits; targets as class indices or probabilities.

    PyTorch
    -------
    ``torch.nn.CrossEntropyLoss``
    """

    def __init__(self, weight: Tensor | None = None, size_average=None,
                 ignore_index: int = -100, reduce=None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise EmberValueError(f"CrossEntropyLoss: label_smoothing must be between 0.0 "
                                  f"and 1.0, got {label_smoothing}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                             reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities.

    PyTorch
    -------
    ``torch.nn.BCELoss``
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (sigmoid folded in, stable).

    PyTorch
    -------
    ``torch.nn.BCEWithLogitsLoss``
    """

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(input, target, self.weight,
                                                reduction=self.reduction,
                                                pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities from a target distribution.

    PyTorch
    -------
    ``torch.nn.KLDivLoss``
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson-distributed target.

    PyTorch
    -------
    ``torch.nn.PoissonNLLLoss``
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of a Gaussian target with predicted mean and variance.

    PyTorch
    -------
    ``torch.nn.GaussianNLLLoss``
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)
