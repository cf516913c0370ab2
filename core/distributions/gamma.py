"""torch.distributions.gamma: Gamma."""
from __future__ import annotations

from .. import ops
from ..autograd.function import Function
from ..ops.sampling import _standard_gamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .normal import _is_number
from .utils import broadcast_all

__all__ = ["Gamma"]

NO_RSAMPLE = ("ember's {name} has no rsample: torch reparametrises it with implicit "
              "gradients (torch._dirichlet_grad), which ember does not have, and a "
              "sample without that gradient would be silently wrong; use sample() (no "
              "gradient) or a reparametrisable distribution")


# torch's rational approximation of the reparametrised gradient (ATen Distributions.h,
# standard_gamma_grad_one), for x >= 0.8 and alpha <= 8.  Ported from PyTorch (BSD-3-Clause,
# Copyright (c) 2016- Facebook, Inc. and contributors): THIRD_PARTY_NOTICES.md
_RATIONAL = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) drawn by inverting its CDF at a fixed
    uniform (implicit reparametrisation), elementwise, as torch._standard_gamma_grad:
    a Taylor series for x < 0.8, Rice's saddle point expansion for alpha > 8, else a
    bivariate rational approximation; every branch in ember ops, the fitting one kept."""
    # small x: the series of the incomplete gamma function and its alpha-derivative
    numer, denom = ops.ones_like(x), alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    gamma_pdf = x ** (alpha - 1) * (-x).exp()
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (x.log() - alpha.digamma()) * gamma_cdf - pow_x_alpha * series2
    small = -gamma_cdf_alpha / gamma_pdf
    small = ops.where(small.isnan(), 0.0, small)
    # large alpha: Rice's saddle point expansion (a polynomial near the mode)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + \
        alpha * (107 + 3600 * x)
    near = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    root = (8 * alpha).sqrt()
    term2 = root / (alpha - x)
    term3 = (x - alpha - alpha * (x / alpha).log()) ** -1.5
    term23 = ops.where(x < alpha, term2 - term3, term2 + term3)
    term1 = (x / alpha).log() * term23 - (2 / alpha).sqrt() * (alpha + x) / \
        ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * (x * term1) / root
    large = ops.where((0.9 * alpha <= x) & (x <= 1.1 * alpha), near, far)
    # the rest: exp(p(u, v) / q(u, v)), u = log(x / alpha), v = log(alpha)
    u, v = (x / alpha).log(), alpha.log()
    c = [_RATIONAL[0][i] + u * (_RATIONAL[1][i] + u * _RATIONAL[2][i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    rational = (p / q).exp()
    return ops.where(x < 0.8, small, ops.where(alpha > 8, large, rational))


class _StandardGamma(Function):
    """x ~ Gamma(alpha, 1) with torch's implicit reparametrised gradient w.r.t. alpha."""

    @staticmethod
    def forward(ctx, alpha):
        x = _standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, g):
        alpha, x = ctx.saved_tensors
        return g * standard_gamma_grad(alpha.detach(), x)


def _regularized_lower_gamma(a, x, iterations: int = 200):
    """P(a, x) = gamma(a, x) / Gamma(a), elementwise: its power series where x < a + 1,
    else 1 - Q(a, x) from the continued fraction of the upper function (modified Lentz),
    a fixed number of steps each so it runs as ember ops on any device."""
    info_tiny = 1e-300 if str(x.dtype).endswith("float64") else 1e-30
    x_safe = x.clamp(min=info_tiny)
    log_prefactor = -x_safe + a * x_safe.log() - a.lgamma()
    # series: sum_n x^n / (a (a+1) ... (a+n))
    ap, term = a, 1.0 / a
    total = term
    for _ in range(iterations):
        ap = ap + 1
        term = term * x_safe / ap
        total = total + term
    lower = total * log_prefactor.exp()
    # continued fraction of Q(a, x)
    b = x_safe + 1 - a
    c = ops.full_like(x_safe, 1 / info_tiny)
    d = 1.0 / ops.where(b.abs() < info_tiny, info_tiny, b)
    h = d
    for i in range(1, iterations + 1):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = ops.where(d.abs() < info_tiny, info_tiny, d)
        c = b + an / c
        c = ops.where(c.abs() < info_tiny, info_tiny, c)
        d = 1.0 / d
        h = h * d * c
    upper = 1 - log_prefactor.exp() * h
    out = ops.where(x < a + 1, lower, upper)
    return ops.where(x <= 0, 0.0, out)


class _GammaInc(Function):
    """torch.special.gammainc(a, x) with torch's gradient: w.r.t. x only."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return _regularized_lower_gamma(a, x)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not "
                                      "implemented (as in PyTorch): Gamma.cdf has a "
                                      "gradient w.r.t. value and rate only")
        density = (-x + (a - 1) * x.log() - a.lgamma()).exp()
        return None, g * density


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and ``rate`` (mean
    concentration / rate).

    PyTorch
    -------
    ``torch.distributions.Gamma``; samples differ from torch's for a seed; rsample's
    gradient is torch's implicit reparametrisation (the same formula).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch = () if _is_number(concentration) and _is_number(rate) else \
            tuple(self.concentration.shape)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        from ..dtypes import finfo
        shape = tuple(self._extended_shape(sample_shape))
        value = _StandardGamma.apply(self.concentration.expand(shape)) / \
            self.rate.expand(shape)
        # as torch: the value floored at tiny, its gradient left as it is
        floor = (value.detach().clamp(min=finfo(value.dtype).tiny) - value.detach())
        return value + floor

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration.xlogy(self.rate) + \
            (self.concentration - 1).xlogy(value) - self.rate * value - \
            self.concentration.lgamma()

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, x = broadcast_all(self.concentration, self.rate * value)
        return _GammaInc.apply(a, x)

    def entropy(self) -> Tensor:
        return self.concentration - self.rate.log() + self.concentration.lgamma() + \
            (1.0 - self.concentration) * self.concentration.digamma()
