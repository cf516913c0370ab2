"""linear_cross_entropy (torch.nn.functional's fused linear layer + cross entropy) and its
LinearCrossEntropyOptions (torch.nn.modules.linear_cross_entropy_options).

Without options the loss is torch's reference path, cross_entropy(linear(input, weight,
bias), target, ...), K-dimensional weights (C, d1..dK, in) included.  With options (and
what torch's chunked path takes: class-index targets, no label smoothing, a mean, sum or
no reduction, no K-dim weight; otherwise the options are ignored with torch's warning)
the batch is split into chunks of torch's size (batch_chunk_size, or the chunking_method
heuristic), each chunk's logits computed in acc_dtype and checkpointed: only one chunk's
(chunk, num_classes) logits exist at a time, in the forward and again in the backward, as
torch's chunked op; the values and gradients are the reference path's, and as torch's
the gradients are outside the graph (no second derivatives through a chunked call)."""
from __future__ import annotations

import dataclasses
import math
import warnings

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import is_grad_enabled
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..functional.products import linear
from ..tensor import Tensor
from ..utils.checkpoint import checkpoint
from .loss import cross_entropy

__all__ = ["LinearCrossEntropyOptions"]

_ACC_DTYPES = ("float16", "bfloat16", "float32", "float64")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How linear_cross_entropy chunks its batch (see the module's docstring).

    ``batch_chunk_size`` rows per chunk (None: from ``chunking_method``: "auto",
    "aspect_ratio" or "aspect_ratio:N", torch's heuristic, or None: one chunk);
    ``acc_dtype`` the dtype the logits are computed in (None: float32 for float16 and
    bfloat16 inputs, else the input's); ``acc_policy`` ("auto", "accurate", "balanced",
    "compact") is validated as torch's and computed the "accurate" way (every
    intermediate in acc_dtype); ``allow_retain_graph`` is accepted (ember's chunked
    backward recomputes each chunk, so a second backward always works).

    PyTorch
    -------
    ``torch.nn.LinearCrossEntropyOptions``
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        name = "LinearCrossEntropyOptions"
        if self.acc_policy not in ("auto", "accurate", "balanced", "compact"):
            raise EmberValueError(f"{name}: invalid acc_policy {self.acc_policy!r}; expected "
                                  f"'auto', 'accurate', 'balanced' or 'compact'")
        if self.chunking_method is not None and self.chunking_method != "auto":
            method, sep, factor = str(self.chunking_method).partition(":")
            if not sep:
                factor = "1"
            if not (method == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise EmberValueError(f"{name}: invalid chunking_method "
                                      f"{self.chunking_method!r}; expected 'auto', "
                                      f"'aspect_ratio', 'aspect_ratio:N' or None")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and not isinstance(size, bool)
                                 and size > 0)):
            raise EmberValueError(f"{name}: batch_chunk_size must be a positive int or None, "
                                  f"got {size!r}")
        if self.acc_dtype is not None and getattr(self.acc_dtype, "name", None) \
                not in _ACC_DTYPES:
            raise EmberValueError(f"{name}: acc_dtype must be None or one of ember.float16, "
                                  f"bfloat16, float32, float64, got {self.acc_dtype!r}")

    def _chunk(self, num_batches: int, in_features: int, num_classes: int, dtype) -> int:
        """Rows per chunk for this call (torch's _adjust and _compute_batch_chunk_size)."""
        if self.batch_chunk_size is not None:
            return min(self.batch_chunk_size, max(num_batches, 1))
        method = self.chunking_method
        if method == "auto":       # torch's CPU picks; its fallback elsewhere
            method = "aspect_ratio" if dtype in (D.float16, D.bfloat16) else "aspect_ratio:2"
        if method is None:
            return max(num_batches, 1)
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // max(in_features, 1)))
        size = 1 << max(target - 1, 0).bit_length()
        return max(min(size // factor, num_batches), 1)

    def _acc(self, dtype):
        if self.acc_dtype is not None:
            return self.acc_dtype
        return D.float32 if dtype in (D.float16, D.bfloat16) else dtype


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): input (in,)
    or (N, in); linear_weight (C, in) or (C, d1..dK, in) for a K-dimensional loss (batched
    input); target class indices or probabilities (the logits' shape); ``ignore_index``
    None means -100 (refused with probabilities); ``options`` chunks the batch (see
    LinearCrossEntropyOptions).

    PyTorch
    -------
    ``torch.nn.functional.linear_cross_entropy``
    """
    name = "linear_cross_entropy"
    for what, t in (("input", input), ("linear_weight", linear_weight), ("target", target)):
        if type(t) is not Tensor:
            raise EmberTypeError(f"{name}: expected {what} to be a tensor, got "
                                 f"{type(t).__name__}")
    if input.ndim not in (1, 2):
        raise ShapeError(f"{name}: expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise ShapeError(f"{name}: expected linear_weight with dimensionality at least 2, got "
                         f"{linear_weight.ndim}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise ShapeError(f"{name}: expected equal input and linear_weight last dimensions "
                         f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                         f"respectively")
    classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise ShapeError(f"{name}: expected linear_bias shape {(classes, *out_features)}, got "
                         f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise ShapeError(f"{name}: K-dimensional loss defined by linear_weight shape "
                         f"{tuple(linear_weight.shape)} requires batched input, (N, "
                         f"{in_features}), got unbatched input with shape "
                         f"{tuple(input.shape)}")
    probabilities = tuple(target.shape) == (*batches, classes, *out_features)
    if probabilities and ignore_index is not None:
        raise EmberValueError(f"{name}: ignore_index cannot be specified when target "
                              f"contains probabilities")
    ignore = -100 if ignore_index is None else ignore_index
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise EmberTypeError(f"{name}: expected options to be an "
                             f"ember.nn.LinearCrossEntropyOptions or None, got "
                             f"{type(options).__name__}")
    if options is not None:
        if out_features or reduction not in ("mean", "sum", "none") or label_smoothing != 0.0 \
                or target.dtype is not D.int64:
            warnings.warn(
                f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                f"{{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                f"out_features == (). Got reduction={reduction!r}, "
                f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                f"out_features={out_features}", stacklevel=2)
        else:
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                            ignore, options)
    if out_features:
        flat = linear_weight.reshape(math.prod(out_features) * classes, in_features)
        bias = None if linear_bias is None else linear_bias.reshape(-1)
        logits = linear(input, flat, bias).reshape(*batches, classes, *out_features)
    else:
        logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(logits, target, weight, ignore_index=ignore, reduction=reduction,
                         label_smoothing=label_smoothing)


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore, options):
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n = input.shape[0]
    size = options._chunk(n, input.shape[-1], linear_weight.shape[0], input.dtype)
    acc = options._acc(input.dtype)

    def chunk_loss(x, t, w, b):
        if acc is not x.dtype:
            x, w = x.to(acc), w.to(acc)
            b = None if b is None else b.to(acc)
        loss = cross_entropy(linear(x, w, b), t, weight if weight is None or acc is
                             weight.dtype else weight.to(acc), ignore_index=ignore,
                             reduction="none" if reduction == "none" else "sum")
        return loss.to(input.dtype)

    parts = []
    # checkpointed only where a gradient is wanted (without one nothing is saved to spare)
    grads = is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (input, linear_weight, linear_bias, weight))
    for start in range(0, n, size):
        args = (input[start:start + size], target[start:start + size], linear_weight,
                linear_bias)
        parts.append(checkpoint(chunk_loss, *args, use_reentrant=False)
                     if grads else chunk_loss(*args))
    if reduction == "none":
        out = ops.cat(parts, 0) if parts else ops.zeros((0,), dtype=input.dtype,
                                                        device=input.device)
        return out.squeeze(0) if unbatched else out
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    if reduction == "sum":
        return total
    # mean: over the kept targets, each counted with its class weight (cross_entropy's)
    kept = target != ignore
    if weight is None:
        count = ops.sum(kept.to(input.dtype))
    else:
        safe = ops.where(kept, target, ops.zeros_like(target))
        count = ops.sum(ops.where(kept, ops.take(weight.detach(), safe), 0.0))
    return total / count
