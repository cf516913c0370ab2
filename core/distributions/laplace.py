"""torch.distributions.laplace: Laplace."""
from __future__ import annotations

from .. import ops
from ..tensor import Tensor
from .distribution import _expanded
from .normal import _LocationScale

__all__ = ["Laplace"]


class Laplace(_LocationScale):
    """The Laplace distribution with location ``loc`` and scale ``scale``.

    PyTorch
    -------
    ``torch.distributions.Laplace``; samples differ from torch's for a seed.
    """

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Laplace, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        from ..dtypes import finfo
        eps = finfo(self.loc.dtype).eps
        u = ops.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype,
                     device=self.loc.device) * (2 - eps) + (eps - 1)     # in [eps-1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * \
            (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
