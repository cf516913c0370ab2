"""Distances and their functional forms (torch.nn.modules.distance).

CosineSimilarity, PairwiseDistance, cosine_similarity, pairwise_distance."""
from __future__ import annotations

import math

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..errors import EmberIndexError, EmberValueError, ShapeError
from ..functional.creation import triu_indices
from ..ops._util import broadcast_shapes
from ..signatures import numpy_names
from ..tensor import Tensor
from ._util import _floats
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


# -- functional forms ---------------------------------------------------------------------

@numpy_names
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1/|x1| * x2/|x2|) along dim (after broadcasting), each norm at least eps.

    PyTorch
    -------
    ``torch.nn.functional.cosine_similarity``
    """
    if _amp and amp_policy.on("cosine_similarity"):      # autocast (amp_policy.py)
        return amp_policy.call("cosine_similarity", cosine_similarity, x1, x2, dim, eps)
    _floats("cosine_similarity", x1=x1, x2=x2)
    x1, x2 = _broadcast("cosine_similarity", x1, x2)
    dim = _dim("cosine_similarity", dim, x1.ndim)
    n1, n2 = _norm(x1, 2, dim, keepdim=True), _norm(x2, 2, dim, keepdim=True)
    # torch clamps the norms under no_grad: the value is clamped, the gradient is the norm's
    n1 = n1 + (ops.maximum(n1, eps) - n1).detach()
    n2 = n2 + (ops.maximum(n2, eps) - n2).detach()
    return ops.sum((x1 / n1) * (x2 / n2), dim)


@numpy_names
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim.

    PyTorch
    -------
    ``torch.nn.functional.pairwise_distance``
    """
    _floats("pairwise_distance", x1=x1, x2=x2)
    last = max(x1.ndim, x2.ndim) - 1
    return _norm(x1 - x2 + eps, p, max(last, 0), keepdim)


def _norm(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """The p-norm along dim, with torch's gradient (0, not NaN) where a 2-norm is 0."""
    if p == 2:
        if x._dtype.category == D.COMPLEX:      # the norm of the magnitudes (real)
            x = ops.abs(x)
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
    shape = broadcast_shapes(name, *(x._data.shape for x in xs))
    return [x if x._data.shape == shape else x.expand(shape) for x in xs]


def _dim(name: str, dim: int, ndim: int) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise EmberIndexError(f"{name}: dim {dim} is out of range for a {ndim}-D input; "
                              f"expected a dim in [{-max(ndim, 1)}, {max(ndim, 1) - 1}]")
    return dim % max(ndim, 1)


# -- modules ------------------------------------------------------------------------------

class CosineSimilarity(Module):
    """Cosine similarity along dim.

    PyTorch
    -------
    ``torch.nn.CosineSimilarity``
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance over the last dim.

    PyTorch
    -------
    ``torch.nn.PairwiseDistance``
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance between every pair of rows i < j of an (N, M) input, in row-major
    order of the pairs (N (N - 1) / 2 values).

    PyTorch
    -------
    ``torch.nn.functional.pdist``
    """
    if type(input) is not Tensor or input.ndim != 2:
        raise ShapeError(f"pdist only supports 2D tensors, got: "
                         f"{input.ndim if type(input) is Tensor else type(input).__name__}D")
    _floats("pdist", input=input)
    if p < 0:
        raise EmberValueError(f"pdist only supports non-negative p values, got {p}")
    n = input.shape[0]
    if n < 2:                       # no pairs: empty, still in the graph as torch's
        return input.reshape(-1)[:0]
    i, j = triu_indices(n, n, 1, device=input.device)
    diff = input[i] - input[j]
    out = _norm(diff, p, -1)
    if p == 0:                      # a count: in the graph with a zero gradient, as torch's
        out = out + ops.sum(diff * 0.0, -1)
    return out
