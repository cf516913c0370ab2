"""Linear layers (torch.nn.modules.linear, flatten): Linear, Bilinear, Identity, Flatten, ...

bilinear is Bilinear's functional form; linear's is ember.functional.linear, which
ember.linear shares."""
from __future__ import annotations

import math

from .. import amp_policy, ops
from ..amp_policy import active as _amp
from ..autograd.grad_mode import no_grad
from ..errors import EmberValueError, ShapeError
from ..functional import linear
from ..tensor import Tensor
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter, UninitializedParameter

__all__ = ["Identity", "Linear", "LazyLinear", "Bilinear", "Flatten", "Unflatten"]


# -- functional forms ---------------------------------------------------------------------

def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o].

    PyTorch
    -------
    ``torch.nn.functional.bilinear``
    """
    if _amp and amp_policy.on("bilinear"):      # autocast (amp_policy.py)
        return amp_policy.call("bilinear", bilinear, input1, input2, weight, bias)
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


# -- modules ------------------------------------------------------------------------------

class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    PyTorch
    -------
    ``torch.nn.Identity``
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b, with W of shape (out_features, in_features).

    Examples
    --------
    >>> import ember
    >>> layer = ember.nn.Linear(3, 2)
    >>> layer(ember.ones(4, 3)).shape
    ember.Size([4, 2])
    >>> layer.weight.shape
    ember.Size([2, 3])

    PyTorch
    -------
    ``torch.nn.Linear``
    """

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


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear that torch's dynamic quantization leaves alone: MultiheadAttention's
    out_proj (its name keeps reprs and state dicts as torch's); ember has no quantization,
    so it is a Linear.

    PyTorch
    -------
    ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``
    """


class LazyLinear(LazyModuleMixin, Linear):
    """LazyLinear(out_features, bias=True): a Linear whose in_features is inferred from
    the first input's last dim; it then becomes a Linear.

    Examples
    --------
    >>> import ember
    >>> layer = ember.nn.LazyLinear(2)
    >>> layer(ember.ones(4, 3)).shape
    ember.Size([4, 2])
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)

    PyTorch
    -------
    ``torch.nn.LazyLinear``
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        # bias=False here: no tensor is made only to be replaced
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """in_features = input.shape[-1]; materialize and initialize weight and bias."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one.

    PyTorch
    -------
    ``torch.nn.Flatten``
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return ops.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim into unflattened_size.

    PyTorch
    -------
    ``torch.nn.Unflatten``
    """

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


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight A of shape (out_features, in1_features, in2_features).

    PyTorch
    -------
    ``torch.nn.Bilinear``
    """

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
