"""The bilinear layer (torch.nn's Bilinear and its functional form), as a composite of ember
ops."""
from __future__ import annotations

import math

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["bilinear", "Bilinear"]


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
