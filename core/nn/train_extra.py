"""Local response normalisation and the bilinear layer (torch.nn's LocalResponseNorm,
Bilinear and their functional forms), as composites of ember ops."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError, ShapeError
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["local_response_norm", "bilinear", "LocalResponseNorm", "Bilinear"]


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels) ** beta, the
    window zero-padded at the channel ends and always divided by size (as torch)."""
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected 3D or higher dimensionality input "
                         f"(got {input.ndim} dimensions)")
    if not isinstance(size, int) or size < 1:
        raise EmberValueError(f"local_response_norm: size must be a positive int, got "
                              f"{size!r}")
    if input.numel() == 0:
        return input
    n, c = input.shape[0], input.shape[1]
    sq = (input * input).reshape(n, c, -1)
    padded = ops.pad(sq, (0, 0, size // 2, (size - 1) // 2))
    # the window sum as `size` shifted slices: size is small (torch programs use 2..5)
    total = padded[:, 0:c]
    for j in range(1, size):
        total = total + padded[:, j:j + c]
    div = (total.reshape(input.shape) * (alpha / size) + k) ** beta
    return input / div


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if weight.ndim != 3:
        raise ShapeError(f"bilinear: expected a 3-D weight (out, in1, in2), got shape "
                         f"{list(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.shape[-1:] != (in1,) or input2.shape[-1:] != (in2,) or \
            input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear: expected inputs of shapes (..., {in1}) and (..., {in2}) "
                         f"with the same leading dims, got {list(input1.shape)} and "
                         f"{list(input2.shape)}")
    lead = tuple(input1.shape[:-1])
    # one matmul: input1 against weight laid out as (in1, out * in2), then the in2 sum
    w = weight.permute(1, 0, 2).reshape(in1, out * in2)
    t = (input1.reshape(-1, in1) @ w).reshape(-1, out, in2)
    y = (t * input2.reshape(-1, 1, in2)).sum(-1).reshape(lead + (out,))
    return y if bias is None else y + bias


class LocalResponseNorm(Module):
    """Local response normalisation across channels (see local_response_norm)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight A of shape (out_features, in1_features, in2_features)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(ops.empty(out_features, in1_features, in2_features,
                                          dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(ops.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # torch's: U(-1/sqrt(in1_features), +) for weight and bias
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
