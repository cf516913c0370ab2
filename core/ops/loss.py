"""Cross-entropy over class indices as a declared kernel: the log_softmax of (N, C) logits
and the negative log-likelihood of the targets in one kernel, and its gradient,
(softmax - onehot) scaled per row, in one more (nn/loss.py's cross_entropy runs them).

Without a kernel the decomposition runs: log_softmax, then `nll` (which nn.functional's
nll_loss also runs), ember ops on every device whose graph records itself; the gradient
kernel's decomposition is what create_graph differentiates.  A target outside [0, C) that
is not ignore_index raises EmberIndexError either way (gather's, or the kernel's)."""
from __future__ import annotations

from ..dispatch import run
from ..tensor import Tensor
from ._op import declare, rule_first
from .nn import log_softmax_shifted

__all__: list = []       # nn.functional.cross_entropy and nll_loss are the public forms


def _rows(target: Tensor, weight, classes: int, ignore_index: int, dtype) -> tuple:
    """(safe, w): each row's class index to read (0 where the target is ignore_index; a
    negative target sent out of range, where gather and take would wrap it: an error
    there), and its weight (0 where ignored, else its class's weight, or 1)."""
    from .elementwise import where
    from .index import take_along
    keep = target != ignore_index
    safe = where(keep, where(target < 0, classes, target), 0)
    w = keep.to(dtype)
    if weight is not None:
        w = w * take_along(weight, safe, 0)
    return safe, w


def nll(logp: Tensor, target: Tensor, weight, axis: int, ignore_index: int,
        reduction: str) -> Tensor:
    """-logp[n, target[n]] weighted, reduced; 'mean' divides by the summed weight of the
    targets that are not ignore_index."""
    from .index import gather
    from .reduce import sum as sum_
    safe, w = _rows(target, weight, logp._data.shape[axis], ignore_index, logp._dtype)
    picked = gather(logp, axis, safe.unsqueeze(axis)).squeeze(axis)
    loss = -(picked * w)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return sum_(loss)
    return sum_(loss) / sum_(w)


_ATTRS = "ignore_index: int, reduction: str"


def _decompose(x, target, weight=None, *, ignore_index, reduction):
    return nll(log_softmax_shifted(x, 1), target, weight, 1, ignore_index, reduction)


def _shape(inputs, attrs) -> tuple:
    return inputs[0]._data.shape[:1] if attrs["reduction"] == "none" else ()


def _backward_decompose(g, x, target, weight=None, *, ignore_index, reduction):
    """d x = (softmax(x) - onehot(target)) * the row's scale: its weight (0 where ignored)
    times g (g[n] for 'none'; g / the summed weight for 'mean')."""
    from .creation import arange
    from .nn import softmax_op
    from .reduce import sum as sum_
    classes = x._data.shape[1]
    safe, w = _rows(target, weight, classes, ignore_index, x._dtype)
    scale = w * g if reduction != "mean" else w * (g / sum_(w))
    onehot = (arange(classes, device=x.device) == safe.unsqueeze(1)).to(x._dtype)
    return (run(softmax_op, x, axis=1) - onehot) * scale.unsqueeze(1)


cross_entropy_backward_op = declare(
    "cross_entropy_backward", "gradient", rule_first, sig="g, x, target, weight?, *, " + _ATTRS,
    serves="cross_entropy", shape=lambda inputs, attrs: inputs[1]._data.shape,
    decompose=_backward_decompose,
    doc="cross_entropy's gradient to its logits x (N, C): (softmax(x) - onehot(target)) "
        "times each row's weight and g (divided by the summed weight for 'mean')")


def _vjp(g, out, x, target, weight=None, **attrs):
    dx = (lambda: run(cross_entropy_backward_op, g, x, target, weight, **attrs),)
    return dx + (None,) if weight is None else dx + (None, None)


cross_entropy_op = declare(
    "cross_entropy", "composite", rule_first, sig="x, target, weight?, *, " + _ATTRS,
    shape=_shape, decompose=_decompose, vjp=_vjp,
    doc="cross-entropy of logits x (N, C) against class indices target (N,) (ignore_index: "
        "no loss), weighted per class by weight (C,) when given; reduction 'none' (N,), "
        "'sum' or 'mean' ()")
