"""Lookup tables and their functional forms (torch.nn.modules.sparse): Embedding, EmbeddingBag.

The functional forms are embedding and one_hot."""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = ["Embedding", "EmbeddingBag"]


# -- functional forms ---------------------------------------------------------------------


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of weight picked by the integer input; the padding_idx row gets no gradient.

    PyTorch
    -------
    ``torch.nn.functional.embedding``
    """
    if type(input) is not Tensor or input._dtype.category != D.INT:
        got = input._dtype.name if type(input) is Tensor else type(input).__name__
        raise EmberTypeError(f"embedding: expected an integer index tensor (int64), got "
                             f"{got}; convert with .long()")
    if scale_grad_by_freq or sparse:
        raise EmberValueError("embedding: scale_grad_by_freq and sparse gradients are not "
                              "supported; leave them False")
    if type(weight) is not Tensor or weight.ndim != 2:
        raise ShapeError(f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), "
                         f"got {tuple(weight.shape) if type(weight) is Tensor else weight!r}")
    num = weight._data.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    out = ops.take_along(weight, input, 0, "embedding")     # [0, rows), as PyTorch's
    if padding_idx is not None and weight.requires_grad and is_grad_enabled():
        keep = (input != padding_idx).unsqueeze(-1)
        out = ops.where(keep, out, out.detach())
    return out


def _renorm_rows(weight, input, max_norm, norm_type):
    """Rescale (in place) the looked-up rows whose norm exceeds max_norm, as torch does."""
    import numpy as np
    with no_grad():
        rows = ops.from_host(np.unique(input.detach().numpy().reshape(-1)), weight.device)
        picked = ops.take_along(weight, rows, 0)
        norms = ops.sum(ops.abs(picked) ** norm_type, 1, keepdim=True) ** (1.0 / norm_type)
        scale = ops.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = picked * scale


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxes of bags of ``weight``'s rows: a 2-D input is one bag per row; a
    1-D input is cut into bags at ``offsets``.  ``per_sample_weights`` scale each entry
    (mode='sum'); entries equal to ``padding_idx`` are left out of their bag (an empty bag
    gives zeros).

    PyTorch
    -------
    ``torch.nn.functional.embedding_bag``
    """
    name = "embedding_bag"
    if mode not in ("sum", "mean", "max"):
        raise EmberValueError(f"{name}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if type(weight) is not Tensor or weight.ndim != 2:
        raise ShapeError(f"{name}: 'weight' must be 2-D (num_embeddings, embedding_dim), "
                         f"got {tuple(weight.shape) if type(weight) is Tensor else weight!r}")
    if type(input) is not Tensor:
        raise EmberTypeError(f"{name}: expected an integer index tensor, got "
                             f"{type(input).__name__}")
    if padding_idx is not None:
        num = weight._data.shape[0]
        if not -num <= padding_idx < num:
            raise EmberValueError(f"{name}: padding_idx {padding_idx} must be within "
                                  f"num_embeddings ({num})")
        padding_idx %= num
    if per_sample_weights is not None:
        if mode != "sum":
            raise EmberValueError(f"{name}: per_sample_weights is only supported for "
                                  f"mode='sum', got mode={mode!r}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ShapeError(f"{name}: per_sample_weights of shape "
                             f"{tuple(per_sample_weights.shape)} must match the input's "
                             f"shape {tuple(input.shape)}")
    if input.ndim == 2:
        if offsets is not None:
            raise EmberValueError(f"{name}: offsets has to be None if input is 2-D (each row "
                                  "is a bag)")
        index, valid, weights = input, None, per_sample_weights
    elif input.ndim == 1:
        if offsets is None or offsets.ndim != 1:
            raise EmberValueError(f"{name}: a 1-D input needs 1-D offsets (where each bag "
                                  "starts)")
        index, valid, weights = _bags(input, offsets, per_sample_weights, include_last_offset)
    else:
        raise ShapeError(f"{name}: expected a 1-D (with offsets) or 2-D input, got shape "
                         f"{tuple(input.shape)}")
    emb = embedding(index, weight, None, max_norm, norm_type, scale_grad_by_freq,
                    sparse)                                              # (B, L, D)
    if padding_idx is not None:
        keep = index != padding_idx
        valid = keep if valid is None else valid & keep
    if mode == "max":
        if valid is None:
            return ops.amax(emb, 1)
        out = ops.amax(ops.where(valid.unsqueeze(-1), emb, -float("inf")), 1)
        return ops.where(ops.sum(valid.to(D.int64), 1, keepdim=True) > 0, out, 0.0)
    scale = None if valid is None else valid.to(emb._dtype)
    if weights is not None:
        scale = weights if scale is None else scale * weights
    total = ops.sum(emb if scale is None else emb * scale.unsqueeze(-1), 1)
    if mode == "sum":
        return total
    count = index._data.shape[1] if valid is None else \
        ops.maximum(ops.sum(valid.to(emb._dtype), 1, keepdim=True), 1.0)
    return total / count


def _bags(input, offsets, weights, include_last_offset: bool):
    """The 1-D input as a padded (bags, longest) index, with a mask of real entries."""
    import numpy as np
    starts = offsets.detach().numpy().astype(np.int64)    # bag bounds are host data
    n = input._data.shape[0]
    if starts.size and starts[0] != 0:
        raise EmberValueError(f"embedding_bag: offsets[0] has to be 0, i.e., the first "
                              f"sequence in the mini-batch has to start from position 0; "
                              f"got {int(starts[0])}")
    if np.any(np.diff(starts) < 0) or (starts.size and starts[-1] > n):
        raise EmberValueError(f"embedding_bag: offsets must be non-decreasing and at most "
                              f"the input length {n}, got {starts.tolist()}")
    ends = np.append(starts[1:], n)
    if include_last_offset:
        starts, ends = starts[:-1], ends[:-1]
    longest = max(int((ends - starts).max()) if starts.size else 0, 1)
    pos = starts[:, None] + np.arange(longest)[None, :]
    mask = pos < ends[:, None]
    pos = ops.from_host(np.where(mask, pos, 0), input.device)
    index = ops.take_along(input, pos, 0)
    if weights is not None:
        weights = ops.take_along(weights, pos, 0)
    return index, ops.from_host(mask, input.device), weights


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a trailing dim of ``num_classes`` (-1: the largest label + 1)
    holding 1 at each label.

    PyTorch
    -------
    ``torch.nn.functional.one_hot``
    """
    if tensor._dtype is not D.int64:
        raise EmberTypeError(f"one_hot: expected an int64 class-index tensor, got "
                             f"{tensor._dtype.name}")
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    classes = ops.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(D.int64)


# -- modules ------------------------------------------------------------------------------


class Embedding(Module):
    """weight[input]: rows of a (num_embeddings, embedding_dim) table; the padding_idx row
    starts at zero and receives no gradient.

    PyTorch
    -------
    ``torch.nn.Embedding``
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise EmberValueError(f"Embedding: padding_idx {padding_idx} must be within "
                                      f"num_embeddings ({num_embeddings})")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(ops.empty(num_embeddings, embedding_dim, dtype=dtype,
                                              device=device), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"Embedding: _weight has shape {tuple(_weight.shape)}, "
                                 f"expected ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        if embeddings.ndim != 2:
            raise ShapeError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape "
                             f"{tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse:
            s += ", sparse=True"
        return s


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings: a 2-D input is one bag per row; a 1-D
    input is cut into bags at offsets.  per_sample_weights scale each entry (mode='sum');
    entries equal to padding_idx are left out of their bag (an empty bag gives zeros).

    PyTorch
    -------
    ``torch.nn.EmbeddingBag``
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise EmberValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got "
                                  f"{mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise EmberValueError(f"EmbeddingBag: padding_idx {padding_idx} must be "
                                      f"within num_embeddings ({num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(ops.empty(num_embeddings, embedding_dim, dtype=dtype,
                                              device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"EmbeddingBag: _weight has shape {tuple(_weight.shape)}, "
                                 f"expected ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
