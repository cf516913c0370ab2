"""Distances, margin losses and likelihood losses of torch.nn, functional and Module forms."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import no_grad
from ..errors import EmberIndexError, EmberTypeError, EmberValueError, ShapeError
from ..functional import softplus
from ..tensor import Tensor
from .loss import _Loss, _need_float, _reduce, _reduction, _WeightedLoss
from .module import Module

# -- helpers ---------------------------------------------------------------------------------


def _relu(v: Tensor) -> Tensor:
    """clamp_min(v, 0) as torch differentiates it: the gradient passes where v >= 0, and a
    NaN stays NaN."""
    return ops.where(v < 0, 0.0, v)


def _norm(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """The p-norm along dim, with torch's gradient (0, not NaN) where a 2-norm is 0."""
    if p == 2:
        sq = ops.sum(x * x, dim, keepdim=keepdim)
        nonzero = sq > 0
        return ops.where(nonzero, ops.sqrt(ops.where(nonzero, sq, 1.0)), 0.0)
    ax = ops.abs(x)
    if p == 1:
        return ops.sum(ax, dim, keepdim=keepdim)
    if p == math.inf:
        return ops.amax(ax, dim, keepdim=keepdim)
    if p == -math.inf:
        return ops.amin(ax, dim, keepdim=keepdim)
    if p == 0:
        return ops.sum((x != 0).to(x._dtype), dim, keepdim=keepdim)
    return ops.sum(ax ** p, dim, keepdim=keepdim) ** (1.0 / p)


def _broadcast(name: str, *xs: Tensor) -> list[Tensor]:
    try:
        shape = np.broadcast_shapes(*(x._data.shape for x in xs))
    except ValueError:
        raise ShapeError(f"{name}: the shapes {', '.join(str(tuple(x.shape)) for x in xs)} "
                         "do not broadcast together") from None
    return [x if x._data.shape == shape else x.expand(shape) for x in xs]


def _dim(name: str, dim: int, ndim: int) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise EmberIndexError(f"{name}: dim {dim} is out of range for a {ndim}-D input; "
                              f"expected a dim in [{-max(ndim, 1)}, {max(ndim, 1) - 1}]")
    return dim % max(ndim, 1)


def _floats(name: str, **tensors: Tensor) -> None:
    for what, x in tensors.items():
        _need_float(name, x, what)


def _tensor(name: str, x, what: str) -> None:
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}: expected {what} to be a Tensor, got {type(x).__name__}")


# -- distances -------------------------------------------------------------------------------

def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1/|x1| * x2/|x2|) along dim (after broadcasting), each norm at least eps."""
    _floats("cosine_similarity", x1=x1, x2=x2)
    x1, x2 = _broadcast("cosine_similarity", x1, x2)
    dim = _dim("cosine_similarity", dim, x1.ndim)
    n1, n2 = _norm(x1, 2, dim, keepdim=True), _norm(x2, 2, dim, keepdim=True)
    # torch clamps the norms under no_grad: the value is clamped, the gradient is the norm's
    n1 = n1 + (ops.maximum(n1, eps) - n1).detach()
    n2 = n2 + (ops.maximum(n2, eps) - n2).detach()
    return ops.sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim."""
    _floats("pairwise_distance", x1=x1, x2=x2)
    last = max(x1.ndim, x2.ndim) - 1
    return _norm(x1 - x2 + eps, p, max(last, 0), keepdim)


# -- margin losses ---------------------------------------------------------------------------

def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0), d the pairwise p-distance; swap also tries
    d(p, n) as the negative distance."""
    name = "triplet_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    if margin <= 0:
        raise EmberValueError(f"{name}: margin must be greater than 0, got {margin}")
    _floats(name, anchor=anchor, positive=positive, negative=negative)
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1 or dims[0] not in (1, 2):
        raise ShapeError(f"{name}: expected anchor, positive and negative to be all 1-D "
                         f"(D,) or all 2-D (N, D), got {dims[0]}-D, {dims[1]}-D and "
                         f"{dims[2]}-D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_relu(d_pos - d_neg + margin), reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(-target * (input1 - input2) + margin, 0), target 1 or -1."""
    name = "margin_ranking_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _floats(name, input1=input1, input2=input2)
    _tensor(name, target, "target")
    if not input1.ndim == input2.ndim == target.ndim:
        raise ShapeError(f"{name}: all input tensors should have the same number of dims, "
                         f"got input1 {tuple(input1.shape)}, input2 {tuple(input2.shape)}, "
                         f"target {tuple(target.shape)}")
    return _reduce(_relu(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """input where target is 1, max(margin - input, 0) where it is -1."""
    name = "hinge_embedding_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    loss = ops.where(target != 1, _relu(margin - input), 0.0) + \
        ops.where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), as a softplus that does not overflow."""
    name = "soft_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    return _reduce(softplus(-target * input), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(cos(x1, x2) - margin, 0) where it is -1."""
    name = "cosine_embedding_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _floats(name, input1=input1, input2=input2)
    _tensor(name, target, "target")
    if target.ndim not in (0, 1):
        raise ShapeError(f"{name}: expected a 0-D or 1-D target, got shape "
                         f"{tuple(target.shape)} (multi-target is not supported)")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise ShapeError(f"{name}: a {target.ndim}-D target expects {want}-D inputs, got "
                         f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    dim = target.ndim
    # torch's EPSILON (1e-12) keeps the denominator of a zero vector positive
    sq1 = ops.sum(input1 * input1, dim) + 1e-12
    sq2 = ops.sum(input2 * input2, dim) + 1e-12
    cos = ops.sum(input1 * input2, dim) / ops.sqrt(sq1 * sq2)
    loss = ops.where(target == 1, 1.0 - cos, 0.0) + \
        ops.where(target == -1, _relu(cos - margin), 0.0)
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """sum over j != y of max(0, margin - x[y] + x[j]) ** p (times weight[y]), over C."""
    name = "multi_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    if p not in (1, 2):
        raise EmberValueError(f"{name}: only p == 1 and p == 2 are supported, got p={p}")
    _need_float(name, input)
    _tensor(name, target, "target")
    if target._dtype.category != D.INT:
        raise EmberTypeError(f"{name}: expected an integer (int64) class-index target, got "
                             f"{target._dtype.name}")
    if weight is not None and weight.ndim != 1:
        raise EmberValueError(f"{name}: weight must be one-dimensional, got shape "
                              f"{tuple(weight.shape)}")
    if input.ndim not in (1, 2) or input.numel() == 0:
        raise ShapeError(f"{name}: expected a non-empty 1-D (C,) or 2-D (N, C) input, got "
                         f"shape {tuple(input.shape)}")
    classes = input._data.shape[-1]
    rows = 1 if input.ndim == 1 else input._data.shape[0]
    if target.numel() != rows or target.ndim > 1:
        raise ShapeError(f"{name}: input of shape {tuple(input.shape)} expects a target of "
                         f"{rows} class indices, got shape {tuple(target.shape)}")
    if weight is not None and weight.numel() != classes:
        raise ShapeError(f"{name}: weight must have {classes} entries (one per class), got "
                         f"{weight.numel()}")
    with no_grad():
        lo, hi = int(ops.amin(target).item()), int(ops.amax(target).item())
    if lo < 0 or hi >= classes:
        raise EmberValueError(f"{name}: target {lo if lo < 0 else hi} is out of bounds; "
                              f"expected class indices in [0, {classes - 1}]")
    x = input.reshape(rows, classes)
    t = target.reshape(rows, 1)
    z = margin - ops.gather(x, 1, t) + x
    own = t == ops.arange(classes, device=input.device).reshape(1, classes)
    h = ops.where(own.logical_or(z <= 0), 0.0, z)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * ops.take_along(weight, t, 0)
    loss = ops.sum(h, 1) / classes
    return _reduce(loss.reshape(target._data.shape), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross entropy of logits per class, averaged over the class (last) dim."""
    name = "multilabel_soft_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    if input.ndim == 0:
        raise ShapeError(f"{name}: expected an input of shape (C,) or (N, C), got a 0-D "
                         "tensor")
    # -(t log sigmoid(x) + (1 - t) log sigmoid(-x)), written with softplus
    loss = target * softplus(-input) + (1.0 - target) * softplus(input)
    if weight is not None:
        loss = loss * weight
    loss = ops.sum(loss, input.ndim - 1) / input._data.shape[-1]
    return _reduce(loss, reduction)


# -- likelihood losses -----------------------------------------------------------------------

def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input) or input - target * log(input + eps); full
    adds Stirling's term for targets above 1."""
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
    per element, one per row (last dim dropped or 1), or a float."""
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


# -- Module forms ----------------------------------------------------------------------------

class CosineSimilarity(Module):
    """Cosine similarity along dim."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class TripletMarginLoss(_Loss):
    """Anchor closer to the positive than to the negative by a margin."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise EmberValueError(f"TripletMarginLoss: margin must be greater than 0, got "
                                  f"{margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                   self.swap, reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """Ranks input1 above input2 (target 1) or below it (target -1) by a margin."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """Distances of similar (1) and dissimilar (-1) pairs."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss with targets 1 and -1."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """Cosine distance of similar (1) and dissimilar (-1) pairs."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson-distributed target."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of a Gaussian target with predicted mean and variance."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss over class-index targets."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        if p not in (1, 2):
            raise EmberValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, "
                                  f"got p={p}")
        if weight is not None and weight.ndim != 1:
            raise EmberValueError(f"MultiMarginLoss: weight must be one-dimensional, got "
                                  f"shape {tuple(weight.shape)}")
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                 reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss for multi-label targets, averaged over classes."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_soft_margin_loss(input, target, self.weight,
                                           reduction=self.reduction)
