"""torch.distributions.multivariate_normal: MultivariateNormal."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError
from ..functional.movement import broadcast_shapes
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded, _tensor
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrix: Tensor, vector: Tensor) -> Tensor:
    """matrix @ vector over broadcast batch dimensions."""
    return ops.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


class MultivariateNormal(Distribution):
    """A normal distribution over vectors of size k, given by its mean ``loc`` (..., k)
    and exactly one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``
    (..., k, k; ``scale_tril`` lower triangular with a positive diagonal). Everything is
    computed from the Cholesky factor, as torch's.

    PyTorch
    -------
    ``torch.distributions.MultivariateNormal``
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        from .. import linalg
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise EmberValueError(
                "MultivariateNormal: expected exactly one of covariance_matrix, "
                f"precision_matrix or scale_tril, got {sum(given)}; pass one of them")
        loc = _tensor(loc)
        if loc.dim() < 1:
            raise EmberValueError("MultivariateNormal: loc must be at least one-dimensional "
                                  f"(a vector of means), got a {loc.dim()}-d tensor")
        matrix = next(m for m in (covariance_matrix, precision_matrix, scale_tril)
                      if m is not None)
        matrix = _tensor(matrix, loc)
        if matrix.dim() < 2 or matrix.shape[-1] != matrix.shape[-2] or \
                matrix.shape[-1] != loc.shape[-1]:
            raise EmberValueError(
                f"MultivariateNormal: the matrix must be (..., {loc.shape[-1]}, "
                f"{loc.shape[-1]}) to match loc's last dimension, got {tuple(matrix.shape)}")
        batch = tuple(broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2])))
        k = loc.shape[-1]
        given = ("scale_tril", "covariance_matrix", "precision_matrix")[
            [scale_tril is not None, covariance_matrix is not None,
             precision_matrix is not None].index(True)]
        setattr(self, given, matrix.expand(*batch, k, k))
        self.loc = loc.expand(*batch, k)
        super().__init__(batch, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = matrix
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:                                   # precision: L of its inverse
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(matrix))

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, MultivariateNormal, batch_shape,
                        ("loc", "scale_tril", "covariance_matrix", "precision_matrix"),
                        _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return L.expand(*self.batch_shape, *L.shape[-2:])

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        m = ops.matmul(L, L.transpose(-1, -2))
        return m.expand(*self.batch_shape, *m.shape[-2:])

    @lazy_property
    def precision_matrix(self) -> Tensor:
        from .. import linalg
        L = self._unbroadcasted_scale_tril
        m = linalg.inv(ops.matmul(L, L.transpose(-1, -2)))
        return m.expand(*self.batch_shape, *m.shape[-2:])

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L * L).sum(-1).expand(*self.batch_shape, *self.event_shape)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def rsample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps = ops.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return L.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value) -> Tensor:
        from .. import linalg
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        L = self._unbroadcasted_scale_tril
        shape = broadcast_shapes(tuple(diff.shape[:-1]), tuple(L.shape[:-2]))
        k = self.event_shape[0]
        Lb = L.expand(*shape, k, k)
        z = linalg.solve_triangular(Lb, diff.expand(*shape, k).unsqueeze(-1),
                                    upper=False).squeeze(-1)
        M = (z * z).sum(-1)
        return -0.5 * (k * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self.event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self.batch_shape) if self.batch_shape else h
