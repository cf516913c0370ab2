"""torch.distributions.lowrank_multivariate_normal: LowRankMultivariateNormal
(covariance W W^T + diag(D), computed through the m x m capacitance matrix)."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError
from ..functional.movement import broadcast_shapes
from ..functional.products import diag_embed
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .kl import _batch_mahalanobis
from .multivariate_normal import _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _eye_like(x, n):
    return ops.eye(n, dtype=x.dtype, device=x.device)


def _capacitance_tril(W, D):
    """Cholesky factor of I + W^T D^-1 W."""
    from .. import linalg
    m = W.shape[-1]
    K = ops.matmul(W.mT / D.unsqueeze(-2), W) + _eye_like(W, m)
    return linalg.cholesky(K)


class LowRankMultivariateNormal(Distribution):
    """A normal distribution over vectors with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    PyTorch
    -------
    ``torch.distributions.LowRankMultivariateNormal``; samples differ from torch's for a
    seed.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        where = "LowRankMultivariateNormal"
        if loc.dim() < 1:
            raise EmberValueError(f"{where}: loc must be at least one-dimensional, got a "
                                  "0-d tensor")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise EmberValueError(f"{where}: cov_factor must be at least two-dimensional "
                                  f"(..., {n}, m), got {tuple(cov_factor.shape)}")
        if cov_factor.shape[-2] != n:
            raise EmberValueError(f"{where}: cov_factor must be a batch of matrices with "
                                  f"shape {n} x m, got {tuple(cov_factor.shape)}")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise EmberValueError(f"{where}: cov_diag must be a batch of vectors with shape "
                                  f"({n},), got {tuple(cov_diag.shape)}")
        m = cov_factor.shape[-1]
        try:
            batch = tuple(broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                           tuple(cov_diag.shape[:-1])))
        except (ValueError, RuntimeError) as exc:
            raise EmberValueError(
                f"{where}: incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from exc
        self.loc = loc.expand(*batch, n)
        self.cov_factor = cov_factor.expand(*batch, n, m)
        self.cov_diag = cov_diag.expand(*batch, n)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch, (n,), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, LowRankMultivariateNormal, batch_shape,
                        ("loc", "cov_factor", "cov_diag"), _instance)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    def _full(self, x):
        n = self.event_shape[0]
        return x.expand(*self.batch_shape, n, n)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(*self.batch_shape, *self.event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        from .. import linalg
        n = self.event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        w = self._unbroadcasted_cov_factor / d_sqrt
        K = ops.matmul(w, w.mT) + _eye_like(w, n)
        return self._full(d_sqrt * linalg.cholesky(K))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self._full(ops.matmul(W, W.mT) + diag_embed(D))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        from .. import linalg
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2),
                                    upper=False)
        return self._full(diag_embed(D.reciprocal()) - ops.matmul(A.mT, A))

    def rsample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        W = self._unbroadcasted_cov_factor
        eps_w = ops.randn(shape[:-1] + (W.shape[-1],), dtype=self.loc.dtype,
                          device=self.loc.device)
        eps_d = ops.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(W, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _log_det(self) -> Tensor:
        return 2 * self._capacitance_tril.diagonal(0, -2, -1).log().sum(-1) + \
            self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff = value - self.loc
        wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), diff)
        M = (diff.pow(2) / D).sum(-1) - _batch_mahalanobis(self._capacitance_tril, wt_dinv_x)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Tensor:
        H = 0.5 * (self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H.expand(*self.batch_shape) if len(self.batch_shape) else H
