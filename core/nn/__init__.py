"""Neural-network layers, losses and initialisers (ember.nn)."""
from __future__ import annotations

from . import functional, init
from .activation import (
                         ELU,
                         GELU,
                         Hardtanh,
                         LeakyReLU,
                         LogSigmoid,
                         LogSoftmax,
                         Mish,
                         ReLU,
                         ReLU6,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softmin,
                         Softplus,
                         Tanh,
)
from .containers import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .linear import Flatten, Identity, Linear, Unflatten
from .loss import (
                         BCELoss,
                         BCEWithLogitsLoss,
                         CrossEntropyLoss,
                         HuberLoss,
                         KLDivLoss,
                         L1Loss,
                         MSELoss,
                         NLLLoss,
                         SmoothL1Loss,
)
from .module import IncompatibleKeys, Module, RemovableHandle, StateDictError
from .parameter import Buffer, Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "Buffer", "Conv1d",
    "Conv2d", "ConvTranspose2d", "CrossEntropyLoss", "ELU", "Flatten", "GELU", "Hardtanh",
    "HuberLoss", "Identity", "IncompatibleKeys", "KLDivLoss", "L1Loss", "LeakyReLU", "Linear",
    "LogSigmoid", "LogSoftmax", "MSELoss", "MaxPool2d", "Mish", "Module", "ModuleDict",
    "ModuleList", "NLLLoss", "Parameter", "ReLU", "ReLU6", "RemovableHandle", "Sequential",
    "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softmin", "Softplus", "StateDictError",
    "Tanh", "Unflatten", "functional", "init"]
