"""ember.nn.functional: the layers and losses as functions, with torch's names and signatures.

Nothing is defined here: each function lives beside its Module in the nn family module
(activation, conv, pooling, normalization, sparse, dropout, attention, linear, distance,
loss, margin_loss, pixelshuffle, upsampling), and the composites ember.* shares (relu,
softmax, linear, pad, unfold, ...) come from ember.functional and ember.ops.  Every one
is a composite over ember ops, so it runs on every backend and its gradient comes from the
ops' rules.

The Modules call their functional forms through this module (F.dropout, F.conv2d, ...), as
torch's do, so code that replaces F.dropout (a mocking test, the programs harness replaying
dropout masks) reaches nn.Dropout too.  The family modules sit below this one, so it hands
itself down to them when it loads (their `F`); ember.nn imports it first.
"""
from __future__ import annotations

import sys

# names this module has always exposed besides torch's carry `noqa: F401 (snapshot)`: the
# public API snapshot (tests/unit/data/public_api.json) holds them, so they stay
from ..autograd.grad_mode import is_grad_enabled, no_grad  # noqa: F401  (snapshot)
from ..errors import (  # noqa: F401  (snapshot)
    EmberTypeError,
    EmberValueError,
    EmberWarning,
    ShapeError,
)
from ..functional import (
    gelu,
    linear,
    log_softmax,
    logsumexp,
    softmax,
    softplus,
)
from ..ops import fold, pad, sigmoid, tanh, unfold
from ..ops.creation import bernoulli_mask  # noqa: F401  (snapshot)
from ..ops.nn import out_size, pair  # noqa: F401  (snapshot)
from ..tensor import Tensor  # noqa: F401  (snapshot)
from . import activation as _activation
from . import attention as _attention
from . import conv as _conv
from . import dropout as _dropout
from . import normalization as _normalization
from . import sparse as _sparse
from .activation import (
    celu,
    celu_,
    elu,
    elu_,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    silu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from .ctc import ctc_loss
from .distance import cosine_similarity, pairwise_distance, pdist
from .dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .grid_sample import affine_grid, grid_sample
from .linear import bilinear
from .linear_cross_entropy import linear_cross_entropy
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
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
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
from .pixelshuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle
from .pooling import composed as _pooling_composed
from .pooling import fractional as _pooling_fractional
from .pooling import planar as _pooling_planar
from .pooling.composed import (
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool3d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .pooling.fractional import fractional_max_pool2d, fractional_max_pool3d
from .pooling.planar import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .sparse import embedding, embedding_bag, one_hot
from .upsampling import interpolate, upsample, upsample_bilinear, upsample_nearest

__all__ = [
    # ember.functional and ember.ops
    "relu", "leaky_relu", "gelu", "silu", "softplus", "sigmoid", "tanh", "softmax",
    "log_softmax", "logsumexp", "linear", "unfold", "fold", "pad",
    # activation
    "relu6", "elu", "mish", "logsigmoid", "hardtanh", "softmin", "glu", "hardswish",
    "hardsigmoid", "selu", "celu", "softsign", "tanhshrink", "hardshrink", "softshrink",
    "threshold", "prelu", "rrelu",
    "relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_", "rrelu_",
    "gumbel_softmax",
    # attention
    "scaled_dot_product_attention", "multi_head_attention_forward",
    # conv
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    # distance
    "cosine_similarity", "pairwise_distance", "pdist",
    # dropout
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    # linear
    "bilinear",
    # loss
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "linear_cross_entropy",
    "ctc_loss",
    # margin_loss
    "triplet_margin_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "cosine_embedding_loss", "multi_margin_loss", "multilabel_soft_margin_loss",
    "multilabel_margin_loss", "triplet_margin_with_distance_loss",
    # normalization
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
    "local_response_norm", "normalize",
    # pixelshuffle
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    # pooling
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool3d", "avg_pool3d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool3d", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool3d",
    # sparse
    "embedding", "embedding_bag", "one_hot",
    # grid_sample
    "affine_grid", "grid_sample",
    # upsampling
    "interpolate", "upsample", "upsample_bilinear", "upsample_nearest",
]


# the families' Modules call their forms through this module: hand it down to them
for _family in (_activation, _attention, _conv, _dropout, _normalization,
                _pooling_composed, _pooling_fractional, _pooling_planar, _sparse):
    _family.F = sys.modules[__name__]


def __getattr__(name: str):
    from .._torch_gaps import submodule_or_missing  # a PyTorch name ember lacks: a gap
    return submodule_or_missing(__name__, "nn.functional", name)
