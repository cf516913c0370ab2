"""Convolution layers: Conv1d, Conv2d, ConvTranspose2d (unfold/fold + one matmul)."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _tuple(v, n: int, name: str) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise EmberValueError(f"{name}: expected an int or {n} ints, got {v}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


class _ConvNd(Module):
    _dims = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None,
                 output_padding=0) -> None:
        super().__init__()
        name, n = type(self).__name__, self._dims
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise EmberValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                                  f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise EmberValueError(f"{name}: padding_mode {padding_mode!r} is not supported; "
                                  "use 'zeros' (or pad the input with F.pad first)")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n, name)
        self.stride = _tuple(stride, n, name)
        self.dilation = _tuple(dilation, n, name)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise EmberValueError(f"{name}: padding must be an int, a tuple, 'same' or "
                                      f"'valid', got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise EmberValueError(f"{name}: padding='same' is not supported for strided "
                                      f"convolutions (stride={self.stride})")
            self.padding = padding
        else:
            self.padding = _tuple(padding, n, name)
        self.output_padding = _tuple(output_padding, n, name)
        self.groups = groups
        self.padding_mode = padding_mode
        if self.transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(ops.empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(ops.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) \
                else f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        padding = self.padding if isinstance(self.padding, str) else self.padding[0]
        return F.conv1d(input, self.weight, self.bias, self.stride[0], padding,
                        self.dilation[0], self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution (the gradient of Conv2d with respect to its input)."""

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                 dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if isinstance(padding, str):
            raise EmberValueError("ConvTranspose2d: padding must be an int or a pair, not "
                                  f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding(input, tuple(output_size)[-2:])
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)

    def _output_padding(self, input: Tensor, size: tuple) -> tuple:
        out = []
        for i, want in enumerate(size):
            least = ((input.shape[-2 + i] - 1) * self.stride[i] - 2 * self.padding[i]
                     + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            extra = want - least
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise EmberValueError(
                    f"ConvTranspose2d: requested an output size of {size}, but valid sizes "
                    f"for this input are {least} to {least + self.stride[i] - 1} in dim {i}")
            out.append(extra)
        return tuple(out)
