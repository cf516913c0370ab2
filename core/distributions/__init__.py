"""ember.distributions (torch.distributions): the distributions most code uses, their
constraints, transforms and kl_divergence, written with ember ops.

Parameters and log_prob's values are validated against ``arg_constraints`` and
``support`` (on by default, as torch's; ``Distribution.set_default_validate_args(False)``
or ``validate_args=False`` turns it off). Samples come from ember's host stream like every
random number (they differ from torch's for a seed); log_prob, entropy, cdf and the KL
divergences are differentiable composites, so they get gradients on every backend.

One module per distribution, named as torch.distributions' are (`from
torch.distributions.normal import Normal` works under ember.torch_alias).
"""
from __future__ import annotations

from . import (
    bernoulli,
    beta,
    categorical,
    constraints,
    dirichlet,
    distribution,
    exponential,
    gamma,
    independent,
    kl,
    laplace,
    log_normal,
    multivariate_normal,
    negative_binomial,
    normal,
    transformed_distribution,
    transforms,
    uniform,
    utils,
)
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)
from .uniform import Uniform

__all__ = ["Distribution", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "Dirichlet", "Exponential", "Gamma", "Geometric", "Gumbel", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "LowRankMultivariateNormal",
           "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial",
           "Normal", "OneHotCategorical", "Poisson", "StudentT", "TransformedDistribution",
           "Uniform",
           "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "SigmoidTransform",
           "TanhTransform", "Transform", "IndependentTransform", "biject_to", "transform_to",
           "kl_divergence", "register_kl",
           "bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2",
           "constraint_registry", "constraints",
           "dirichlet", "distribution", "exponential", "gamma", "geometric", "gumbel",
           "half_normal", "independent", "kl", "laplace", "log_normal",
           "lowrank_multivariate_normal", "mixture_same_family",
           "multinomial",
           "multivariate_normal", "negative_binomial", "normal", "one_hot_categorical",
           "poisson", "studentT",
           "transformed_distribution", "transforms", "uniform", "utils"]


def __getattr__(name: str):
    from .._torch_gaps import missing
    raise missing("distributions", name)
