"""Margin and embedding losses, the second half of torch.nn.modules.loss, with functional forms.

TripletMarginLoss, MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss, CosineEmbeddingLoss,
MultiMarginLoss, MultiLabelSoftMarginLoss (nn.loss has the others)."""
from __future__ import annotations

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..autograd.grad_mode import no_grad
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..functional import softplus
from ..tensor import Tensor
from ._util import _floats, _need_float, _tensor
from .distance import pairwise_distance
from .loss import _Loss, _reduce, _reduction, _WeightedLoss

__all__ = [
    "TripletMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
    "CosineEmbeddingLoss", "MultiMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss",
]


# -- helpers ---------------------------------------------------------------------------------

def _relu(v: Tensor) -> Tensor:
    """clamp_min(v, 0) as torch differentiates it: the gradient passes where v >= 0, and a
    NaN stays NaN."""
    return ops.where(v < 0, 0.0, v)


# -- margin losses ---------------------------------------------------------------------------

def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0), d the pairwise p-distance; swap also tries
    d(p, n) as the negative distance.

    PyTorch
    -------
    ``torch.nn.functional.triplet_margin_loss``
    """
    if _amp and amp_policy.on("triplet_margin_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "triplet_margin_loss", triplet_margin_loss, anchor, positive, negative, margin, p, eps,
            swap, size_average, reduce, reduction)
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


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) for any distance ``d`` (a callable of two
    tensors; default :func:`pairwise_distance`); ``swap`` also tries d(p, n).

    PyTorch
    -------
    ``torch.nn.functional.triplet_margin_with_distance_loss``
    """
    name = "triplet_margin_with_distance_loss"
    reduction = _reduction(name, reduction, None, None)
    if margin <= 0:
        raise EmberValueError(f"{name}: margin must be greater than 0, got {margin}")
    for what, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _tensor(name, t, what)
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise ShapeError(f"{name}: the anchor, positive, and negative inputs are expected to "
                         f"have the same number of dimensions, but got: anchor {dims[0]}D, "
                         f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = ops.minimum(d_neg, dist(positive, negative))
    return _reduce(_relu(d_pos - d_neg + margin), reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(-target * (input1 - input2) + margin, 0), target 1 or -1.

    PyTorch
    -------
    ``torch.nn.functional.margin_ranking_loss``
    """
    if _amp and amp_policy.on("margin_ranking_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "margin_ranking_loss", margin_ranking_loss, input1, input2, target, margin,
            size_average, reduce, reduction)
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
    """input where target is 1, max(margin - input, 0) where it is -1.

    PyTorch
    -------
    ``torch.nn.functional.hinge_embedding_loss``
    """
    if _amp and amp_policy.on("hinge_embedding_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "hinge_embedding_loss", hinge_embedding_loss, input, target, margin, size_average,
            reduce, reduction)
    name = "hinge_embedding_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    loss = ops.where(target != 1, _relu(margin - input), 0.0) + \
        ops.where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), as a softplus that does not overflow.

    PyTorch
    -------
    ``torch.nn.functional.soft_margin_loss``
    """
    if _amp and amp_policy.on("soft_margin_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "soft_margin_loss", soft_margin_loss, input, target, size_average, reduce, reduction)
    name = "soft_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    return _reduce(softplus(-target * input), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(cos(x1, x2) - margin, 0) where it is -1.

    PyTorch
    -------
    ``torch.nn.functional.cosine_embedding_loss``
    """
    if _amp and amp_policy.on("cosine_embedding_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "cosine_embedding_loss", cosine_embedding_loss, input1, input2, target, margin,
            size_average, reduce, reduction)
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
    """sum over j != y of max(0, margin - x[y] + x[j]) ** p (times weight[y]), over C.

    PyTorch
    -------
    ``torch.nn.functional.multi_margin_loss``
    """
    if _amp and amp_policy.on("multi_margin_loss"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "multi_margin_loss", multi_margin_loss, input, target, p, margin, weight, size_average,
            reduce, reduction)
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
    if input.ndim == 0:
        input = input.reshape(1)     # torch: a 0-d input is one sample of one class
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


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: ``target`` (same shape as ``input``) lists each sample's
    classes, ended by the first -1; the loss sums max(0, 1 - (x[y] - x[i])) over its
    classes y and the classes i it does not have, over C.

    PyTorch
    -------
    ``torch.nn.functional.multilabel_margin_loss``
    """
    name = "multilabel_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    _need_float(name, input)
    _tensor(name, target, "target")
    if target._dtype.category != D.INT:
        raise EmberTypeError(f"{name}: expected an integer (int64) target of class indices "
                             f"ended by -1, got {target._dtype.name}")
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"{name}: expected input of shape (C,) or (N, C) and a target of the "
                         f"same shape, got input {tuple(input.shape)} and target "
                         f"{tuple(target.shape)}")
    classes = input._data.shape[-1] if input.ndim else 1
    rows = input._data.shape[0] if input.ndim == 2 else 1
    if input.numel() == 0:
        return _reduce(ops.sum(input.reshape(rows, classes), 1), reduction)
    x = input.reshape(rows, classes)
    t = target.reshape(rows, classes)
    with no_grad():
        valid = ops.cumprod((t != -1).to(D.int64), 1) > 0            # before the first -1
        bad = ((t < -1) | (t >= classes)).any().item()
    if bad:
        raise EmberValueError(f"{name}: target holds a value outside [-1, {classes - 1}] "
                              "(class indices, ended by -1; torch checks every entry)")
    idx = ops.where(valid, t, ops.zeros_like(t))
    cls = ops.arange(classes, device=input.device)
    member = ((idx.unsqueeze(2) == cls.reshape(1, 1, classes)) & valid.unsqueeze(2)).any(1)
    x_y = ops.gather(x, 1, idx)                                      # (rows, targets)
    z = 1.0 - x_y.unsqueeze(2) + x.unsqueeze(1)                       # (rows, targets, C)
    keep = valid.unsqueeze(2) & member.logical_not().unsqueeze(1)
    h = ops.where(keep.logical_and(z > 0), z, 0.0)
    loss = ops.sum(ops.sum(h, 2), 1) / classes
    return _reduce(loss.reshape(tuple(input.shape[:-1]) if input.ndim else ()), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross entropy of logits per class, averaged over the class (last) dim.

    PyTorch
    -------
    ``torch.nn.functional.multilabel_soft_margin_loss``
    """
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


# -- Module forms ----------------------------------------------------------------------------

class TripletMarginLoss(_Loss):
    """Anchor closer to the positive than to the negative by a margin.

    PyTorch
    -------
    ``torch.nn.TripletMarginLoss``
    """

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
    """Ranks input1 above input2 (target 1) or below it (target -1) by a margin.

    PyTorch
    -------
    ``torch.nn.MarginRankingLoss``
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """Distances of similar (1) and dissimilar (-1) pairs.

    PyTorch
    -------
    ``torch.nn.HingeEmbeddingLoss``
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss with targets 1 and -1.

    PyTorch
    -------
    ``torch.nn.SoftMarginLoss``
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """Cosine distance of similar (1) and dissimilar (-1) pairs.

    PyTorch
    -------
    ``torch.nn.CosineEmbeddingLoss``
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss over class-index targets.

    PyTorch
    -------
    ``torch.nn.MultiMarginLoss``
    """

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
    """Per-class logistic loss for multi-label targets, averaged over classes.

    PyTorch
    -------
    ``torch.nn.MultiLabelSoftMarginLoss``
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_soft_margin_loss(input, target, self.weight,
                                           reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss over class-index targets ended by -1
    (:func:`ember.nn.functional.multilabel_margin_loss`).

    PyTorch
    -------
    ``torch.nn.MultiLabelMarginLoss``
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any distance function
    (:func:`ember.nn.functional.triplet_margin_with_distance_loss`).

    PyTorch
    -------
    ``torch.nn.TripletMarginWithDistanceLoss``
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise EmberValueError(f"TripletMarginWithDistanceLoss: margin must be greater "
                                  f"than 0, got {margin}")
        self.distance_function = distance_function
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
