"""ember.nn.functional: the layers and losses as functions, with torch's names and signatures.

Convolution, pooling, normalisation, embedding, dropout, attention, activations, losses.

Every function is a composite over ember ops, so it runs on every backend and its gradient
comes from the ops' rules.  Convolution and pooling use unfold (im2col) plus one matmul or
one reduction: no Python loop over batch or channels.
"""
from __future__ import annotations

from ..autograd.grad_mode import is_grad_enabled, no_grad  # noqa: F401  (public API snapshot)
from ..errors import (  # noqa: F401  (EmberTypeError: public API snapshot)
    EmberTypeError,
    EmberValueError,
    EmberWarning,
    ShapeError,
)
from ..functional import (
    gelu,
    leaky_relu,
    linear,
    log_softmax,
    logsumexp,
    relu,
    silu,
    softmax,
    softplus,
)
from ..ops import fold, pad, sigmoid, tanh, unfold
from ..ops.creation import bernoulli_mask  # noqa: F401  (public API snapshot)
from ..ops.nn import max_pool2d_op, out_size, pair  # noqa: F401  (public API snapshot)
from ..tensor import Tensor  # noqa: F401  (public API snapshot)
from .activation import (
    celu,
    elu,
    glu,
    gumbel_softmax,
    hardsigmoid,
    hardswish,
    hardtanh,
    logsigmoid,
    mish,
    prelu,
    relu6,
    selu,
    softmin,
    softsign,
    tanhshrink,
    threshold,
)
from .attention import scaled_dot_product_attention
from .conv import conv1d, conv2d, conv_transpose2d
from .distance import cosine_similarity, pairwise_distance
from .dropout import dropout, dropout1d, dropout2d, dropout3d
from .linear import bilinear
from .loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from .margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from .pixelshuffle import pixel_shuffle, pixel_unshuffle
from .pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .sparse import embedding, one_hot
from .upsampling import interpolate, upsample

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "logsigmoid",
    "sigmoid", "tanh", "hardtanh", "softmax", "softmin", "log_softmax", "logsumexp",
    "linear", "conv1d", "conv2d", "conv_transpose2d", "unfold", "fold", "pad", "instance_norm",
    "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "layer_norm",
    "group_norm", "normalize", "embedding", "one_hot", "dropout", "dropout1d", "dropout2d",
    "dropout3d", "pixel_shuffle", "pixel_unshuffle", "interpolate", "upsample",
    "scaled_dot_product_attention", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div",
    "glu", "hardswish", "hardsigmoid", "selu", "celu", "softsign", "tanhshrink", "threshold",
    "prelu", "rms_norm", "gumbel_softmax", "adaptive_max_pool2d", "max_pool1d", "avg_pool1d",
    "adaptive_avg_pool1d",
    "cosine_similarity", "pairwise_distance", "triplet_margin_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "multi_margin_loss", "multilabel_soft_margin_loss",
    "local_response_norm", "bilinear",
]


def __getattr__(name: str):
    from .._torch_gaps import submodule_or_missing  # a PyTorch name ember lacks: a gap
    return submodule_or_missing(__name__, "nn.functional", name)
