"""The connectionist temporal classification loss (torch.nn.modules.loss's CTCLoss and
nn.functional.ctc_loss): the forward (alpha) recursion in log space over the targets
with blanks between them, one step per time frame for the whole batch, written with ember
ops, so it runs on every device and autograd gives its gradient."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..errors import EmberIndexError, EmberTypeError, EmberValueError, ShapeError
from ..tensor import Tensor
from .loss import _Loss, _reduction

__all__ = ["CTCLoss"]


def _lengths(what: str, lengths, count: int) -> list[int]:
    """input_lengths / target_lengths (a tensor, a list or tuple, or one int) as ints."""
    if type(lengths) is Tensor:
        if lengths._dtype.category != D.INT:
            raise EmberTypeError(f"ctc_loss: {what} must be integers, got "
                                 f"{lengths._dtype.name}")
        values = [int(v) for v in lengths.reshape(-1).tolist()]
    elif isinstance(lengths, int):
        values = [lengths]
    else:
        values = [int(v) for v in lengths]
    if len(values) != count:
        raise ShapeError(f"ctc_loss: expected {what} to have {count} values (one per batch "
                         f"entry), got {len(values)}")
    return values


def _logaddexp(*terms: Tensor) -> Tensor:
    """log(sum(exp(terms))) that is -inf, with a zero gradient, where every term is -inf
    (a plain logsumexp's gradient would be nan there)."""
    top = terms[0]
    for t in terms[1:]:
        top = ops.maximum(top, t)
    finite = top > -math.inf
    shift = ops.where(finite, top, 0.0)
    total = None
    for t in terms:
        e = ops.exp(t - shift)
        total = e if total is None else total + e
    safe = ops.where(finite, total, 1.0)
    return ops.where(finite, shift + ops.log(safe), -math.inf)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The negative log-likelihood of each target sequence under the per-frame class
    log-probabilities (T, N, C) (or unbatched (T, C)), summed over every alignment of the
    target with blanks and repeats; targets are padded (N, S) or concatenated (sum of
    target_lengths).  reduction 'mean' divides each loss by its target length, then
    averages; zero_infinity turns infinite losses (targets too long for their inputs) and
    their gradients into zeros.

    The gradient with respect to log_probs is torch's: the alignment posteriors' negative
    plus exp(log_probs) over each input's frames, which is the gradient through
    log_softmax's input once it flows back through log_softmax.

    PyTorch
    -------
    ``torch.nn.functional.ctc_loss``
    """
    reduction = _reduction("ctc_loss", reduction)
    if type(log_probs) is not Tensor or type(targets) is not Tensor:
        raise EmberTypeError("ctc_loss: log_probs and targets must be Tensors")
    if log_probs._dtype not in (D.float32, D.float64, D.float16, D.bfloat16):
        raise EmberTypeError(f"ctc_loss: log_probs must be floating, got "
                             f"{log_probs._dtype.name}; pass log_softmax's output")
    if targets._dtype.category != D.INT:
        raise EmberTypeError(f"ctc_loss: targets must be integers, got {targets._dtype.name}")
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3):
        raise ShapeError(f"ctc_loss: expected log_probs (T, N, C) or unbatched (T, C), got "
                         f"shape {tuple(log_probs.shape)}")
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if unbatched:
        targets = targets.unsqueeze(0)
    steps, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise EmberIndexError(f"ctc_loss: blank must be in the label range [0, {classes}), "
                              f"got {blank}")
    in_len = _lengths("input_lengths", input_lengths, n)
    tg_len = _lengths("target_lengths", target_lengths, n)
    for i, t in enumerate(in_len):
        if not 0 <= t <= steps:
            raise EmberValueError(f"ctc_loss: expected input_lengths to be at most the "
                                  f"{steps} frames of log_probs, got {t} for batch entry {i}")
    if any(t < 0 for t in tg_len):
        raise EmberValueError(f"ctc_loss: target_lengths must be >= 0, got {tg_len}")
    longest = max(tg_len, default=0)
    if targets.ndim == 2:
        if targets.shape[0] != n or targets.shape[1] < longest:
            raise ShapeError(f"ctc_loss: expected padded targets of shape ({n}, >= {longest})"
                             f", got {tuple(targets.shape)}")
        padded = targets[:, :longest] if longest else ops.zeros(n, 0, dtype=D.int64,
                                                                 device=lp.device)
    elif targets.ndim == 1:
        if targets.shape[0] < sum(tg_len):
            raise ShapeError(f"ctc_loss: concatenated targets hold {targets.shape[0]} labels, "
                             f"fewer than the {sum(tg_len)} target_lengths add up to")
        # each entry's labels, padded by repeating a label (the padding is never read)
        starts = [sum(tg_len[:i]) for i in range(n)]
        last = max(targets.shape[0] - 1, 0)
        where = [[min(s + min(j, max(t - 1, 0)), last) for j in range(longest)]
                 for s, t in zip(starts, tg_len)]
        padded = targets[ops.tensor(where, dtype=D.int64, device=lp.device)] if longest \
            else ops.zeros(n, 0, dtype=D.int64, device=lp.device)
    else:
        raise ShapeError(f"ctc_loss: expected targets 1-D (concatenated) or 2-D (padded), "
                         f"got shape {tuple(targets.shape)}")
    padded = padded.to(D.int64)
    width = 2 * longest + 1
    # the extended target: blank, l1, blank, l2, ..., blank
    position = ops.arange(width, device=lp.device)
    ext = ops.full((n, width), blank, dtype=D.int64, device=lp.device)
    if longest:
        labels = ops.index_select(padded, 1, ((position - 1) // 2).clamp(min=0))
        ext = ops.where((position % 2 == 1).reshape(1, width), labels, ext)
    # a label may be reached from two back unless it is a blank or repeats that label
    two_back = ops.cat([ops.full((n, 2), blank, dtype=D.int64, device=lp.device),
                        ext[:, :-2]], 1)
    skip = (ext != blank) & (ext != two_back) & (position >= 2).reshape(1, width)
    lp_ext = ops.gather(lp, 2, ext.unsqueeze(0).expand(steps, n, width))   # (T, N, 2S+1)
    neg = ops.full((n, 1), -math.inf, dtype=lp.dtype, device=lp.device)
    first = (position < 2).reshape(1, width)
    alpha = ops.where(first, lp_ext[0], -math.inf)
    frames = ops.tensor(in_len, device=lp.device).reshape(n, 1)
    for t in range(1, steps):
        one = ops.cat([neg, alpha[:, :-1]], 1)
        two = ops.where(skip, ops.cat([neg, neg, alpha[:, :-2]], 1), -math.inf)
        step = _logaddexp(alpha, one, two) + lp_ext[t]
        alpha = ops.where(frames > t, step, alpha)          # frozen past each input's end
    ends = ops.tensor([[2 * t, max(2 * t - 1, 0)] for t in tg_len], dtype=D.int64,
                      device=lp.device)
    last = ops.gather(alpha, 1, ends)
    has_labels = ops.tensor([t > 0 for t in tg_len], device=lp.device)
    nll = -_logaddexp(last[:, 0], ops.where(has_labels, last[:, 1], -math.inf))
    # torch's gradient adds exp(log_probs) over each input's frames: a term whose value is
    # exactly zero (x - x) and whose gradient is that
    seen = (ops.arange(steps, device=lp.device).reshape(steps, 1) <
            frames.reshape(1, n)).unsqueeze(-1)
    e = ops.where(seen, ops.exp(lp), 0.0)
    loss = nll + (e - e.detach()).sum((0, 2))
    if zero_infinity:
        loss = ops.where(nll == math.inf, 0.0, loss)
    if reduction == "mean":
        scale = ops.tensor([max(t, 1) for t in tg_len], dtype=loss.dtype, device=lp.device)
        return (loss / scale).mean()
    if reduction == "sum":
        return loss.sum()
    return loss[0] if unbatched else loss


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (ctc_loss).

    PyTorch
    -------
    ``torch.nn.CTCLoss``
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths,
                target_lengths) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
