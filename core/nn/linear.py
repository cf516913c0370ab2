"""Linear layers and shape helpers: Linear, Identity, Flatten, Unflatten."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError
from ..functional import linear
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b, with W of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise EmberValueError(f"Linear: in_features and out_features must be "
                                  f"non-negative, got {in_features} and {out_features}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(ops.empty(out_features, in_features, dtype=dtype,
                                          device=device))
        if bias:
            self.bias = Parameter(ops.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # torch's default: kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), +)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None and self.in_features > 0:
            bound = 1 / math.sqrt(self.in_features)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return ops.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim into unflattened_size."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        shape = tuple(input.shape)
        d = self.dim % max(input.ndim, 1)
        return input.reshape(shape[:d] + self.unflattened_size + shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
