"""ember.distributions (torch.distributions): Categorical, Bernoulli, Normal and
MultivariateNormal, with
sample / rsample, log_prob, entropy and their moments, written with ember ops.

Samples come from ember's host stream like every random number (multinomial, randn);
log_prob and entropy are differentiable composites, so policy gradients and
reparameterised losses get their gradients on every backend.

One module per distribution, named as torch.distributions' are (`from
torch.distributions.normal import Normal` works under ember.torch_alias).
"""
from __future__ import annotations

from . import bernoulli, categorical, distribution, multivariate_normal, normal
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .multivariate_normal import MultivariateNormal
from .normal import Normal

__all__ = ["Distribution", "Categorical", "Bernoulli", "Normal", "MultivariateNormal",
           "bernoulli", "categorical", "distribution", "multivariate_normal", "normal"]


def __getattr__(name: str):
    from .._torch_gaps import missing
    raise missing("distributions", name)
