"""ember.nn: the layers and losses, gathered from one module per torch.nn.modules family."""
from __future__ import annotations

from . import functional, init, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
)
from .margin_loss import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .module import IncompatibleKeys, Module, RemovableHandle, StateDictError
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .parameter import Buffer, Parameter
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    # module, parameter
    "Module", "StateDictError", "IncompatibleKeys", "RemovableHandle", "Parameter", "Buffer",
    # containers
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    # activation
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Tanh",
    "Sigmoid", "LogSigmoid", "Softmax", "Softmin", "LogSoftmax", "GLU", "Hardswish",
    "Hardsigmoid", "SELU", "CELU", "Softsign", "Tanhshrink", "Threshold", "Softmax2d", "PReLU",
    # attention
    "MultiheadAttention",
    # conv
    "Conv1d", "Conv2d", "ConvTranspose2d",
    # distance
    "CosineSimilarity", "PairwiseDistance",
    # dropout
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    # linear
    "Identity", "Linear", "Bilinear", "Flatten", "Unflatten",
    # loss
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
    # margin_loss
    "TripletMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
    "CosineEmbeddingLoss", "MultiMarginLoss", "MultiLabelSoftMarginLoss",
    # normalization
    "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "RMSNorm", "LocalResponseNorm",
    # padding
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    # pixelshuffle
    "PixelShuffle", "PixelUnshuffle",
    # pooling
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
    # rnn
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    # sparse
    "Embedding", "EmbeddingBag",
    # transformer
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    # upsampling
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    # submodules
    "functional", "init", "utils",
]


def __getattr__(name: str):
    from .._torch_gaps import submodule_or_missing  # a PyTorch name ember lacks: a gap
    return submodule_or_missing(__name__, "nn", name)
