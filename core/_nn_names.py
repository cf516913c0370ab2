"""The torch.* names of the nn family ember serves from core/nn/_torch_names.py (torch.conv2d,
torch.layer_norm, torch.hann_window, ...): listed here, with no imports, so the facade
(ember.__getattr__) knows them without loading ember.nn."""
from __future__ import annotations

# torch.X is torch.nn.functional.X itself
SAME_AS_FUNCTIONAL = ("adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_",
                      "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                      "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "hardshrink",
                      "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu",
                      "rrelu_", "selu_", "threshold_")
# torch.X(input, ...) is input.X(...)
TENSOR_METHODS = ("absolute", "negative", "is_same_size", "is_signed", "moveaxis", "adjoint",
                  "detach", "get_device")

TORCH_NN_NAMES = frozenset(SAME_AS_FUNCTIONAL + TENSOR_METHODS + (
    "celu", "selu", "threshold", "rrelu", "layer_norm", "group_norm", "rms_norm", "batch_norm",
    "instance_norm", "embedding", "max_pool1d", "max_pool2d", "max_pool3d", "alpha_dropout",
    "feature_alpha_dropout", "dropout_", "alpha_dropout_", "feature_alpha_dropout_", "kl_div",
    "binary_cross_entropy_with_logits", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "ctc_loss",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
    "range"))
