"""torch.distributions.studentT: StudentT."""
from __future__ import annotations

import math

from .. import ops
from ..tensor import Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, ``loc`` and ``scale``.

    PyTorch
    -------
    ``torch.distributions.StudentT``; samples differ from torch's for a seed; rsample
    reparametrised through Chi2 (torch's implicit gradient).
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return ops.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / ops.where(df > 2, df - 2, 1.0)
        out = ops.where(df > 2, finite, math.inf)
        return ops.where(df <= 1, math.nan, out)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        x = ops.randn(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + \
            (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma()
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - Z

    def entropy(self) -> Tensor:
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return self.scale.log() + 0.5 * (self.df + 1) * (
            (0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma()) + \
            0.5 * self.df.log() + lbeta
