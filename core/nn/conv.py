"""Convolution layers and their functional forms (torch.nn.modules.conv).

Conv1d, Conv2d, Conv3d, ConvTranspose1d/2d/3d and their functional forms: unfold/fold plus
one matmul, no Python loop over batch or channels (conv3d and conv_transpose3d: one 2-D
convolution per depth tap of the kernel, summed)."""
from __future__ import annotations

import math

from .. import amp_policy, ops
from ..amp_policy import active as _amp
from ..autograd.grad_mode import no_grad
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberValueError, ShapeError
from ..ops import fold, pad
from ..ops.nn import conv2d_input_grad_op, conv2d_op, out_size, pair
from ..tensor import Tensor
from . import init
from ._util import _batched
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter, UninitializedParameter

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


# -- functional forms ---------------------------------------------------------------------


def _same_padding(name, kernel, dilation, stride):
    """'same' padding per spatial dim as (low, high) pairs (the extra pixel goes high)."""
    if any(s != 1 for s in stride):
        raise EmberValueError(f"{name}: padding='same' is not supported for strided "
                              f"convolutions (stride={stride}); use an explicit padding")
    out = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        out.append((total // 2, total - total // 2))
    return out


def _check_steps(name: str, stride, dilation) -> None:
    """stride and dilation positive, as torch requires (stride 0 was a ZeroDivisionError,
    dilation 0 a silent answer)."""
    if any(s <= 0 for s in stride):
        raise EmberValueError(f"{name}: non-positive stride is not supported, got stride "
                              f"{tuple(stride)}; expected every stride >= 1")
    if any(d <= 0 for d in dilation):
        raise EmberValueError(f"{name}: dilation should be greater than zero, but got "
                              f"{tuple(dilation)}")


def _check_padding(name: str, padding) -> None:
    """padding not negative, as torch requires (it was a kernel error)."""
    if any(p < 0 for p in padding):
        raise EmberValueError(f"{name}: negative padding is not supported, got padding "
                              f"{tuple(padding)}; crop the input instead (x[..., a:b])")


def _same_dtype(name, input, weight, bias):
    """torch: input, weight and bias of one dtype (no promotion inside a convolution)."""
    for what, t in (("weight", weight), ("bias", bias)):
        if type(t) is Tensor and type(input) is Tensor and t._dtype is not input._dtype:
            raise DtypeNotSupportedError(
                f"{name}: input type ({input._dtype.name}) and {what} type ({t._dtype.name}) "
                f"should be the same; cast with .to({input._dtype.name})")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution of (N, C, H, W) by (O, C/groups, kh, kw): ops/nn.py's conv2d op
    (unfold + one matmul, or the backend's kernel; the CPU's is Winograd for 3x3 stride 1).

    PyTorch
    -------
    ``torch.nn.functional.conv2d``
    """
    if _amp and amp_policy.on("conv2d"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "conv2d", conv2d, input, weight, bias, stride, padding, dilation, groups)
    _same_dtype("conv2d", input, weight, bias)
    x, unbatched = _batched("conv2d", input, 4)
    if weight.ndim != 4:
        raise ShapeError(f"conv2d: expected a 4-D weight (out_channels, in_channels/groups, "
                         f"kh, kw), got shape {tuple(weight.shape)}")
    n, c, h, w = x._data.shape
    o, cg, kh, kw = weight._data.shape
    if groups < 1 or c != cg * groups or o % groups:
        raise ShapeError(
            f"conv2d: input has {c} channels and weight {tuple(weight.shape)} with groups="
            f"{groups}; expected in_channels == weight.shape[1] * groups ({cg * groups}) and "
            f"out_channels ({o}) divisible by groups")
    stride, dilation = pair(stride, "conv2d"), pair(dilation, "conv2d")
    _check_steps("conv2d", stride, dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            (t, b), (left, r) = _same_padding("conv2d", (kh, kw), dilation, stride)
            if t != b or left != r:
                x = pad(x, (left, r, t, b))
                h, w = h + t + b, w + left + r
                padding = (0, 0)
            else:
                padding = (t, left)
        else:
            raise EmberValueError(f"conv2d: padding must be an int, a pair, 'valid' or "
                                  f"'same', got {padding!r}")
    padding = pair(padding, "conv2d")
    _check_padding("conv2d", padding)
    oh = out_size(h, kh, dilation[0], padding[0], stride[0])
    ow = out_size(w, kw, dilation[1], padding[1], stride[1])
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"conv2d: the kernel {(kh, kw)} (dilation {dilation}) is larger than "
                         f"the padded input {(h + 2 * padding[0], w + 2 * padding[1])}; use a "
                         "smaller kernel or more padding")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ShapeError(f"conv2d: weight {tuple(weight.shape)} expects a bias of shape "
                         f"({o},), got {tuple(bias.shape)}")
    # ops/nn.py's declared conv2d: unfold + matmul (+ bias), or one backend kernel each way
    a = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    out = run(conv2d_op, x, weight, **a) if bias is None else \
        run(conv2d_op, x, weight, bias, **a)
    return out.squeeze(0) if unbatched else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) by (O, C/groups, k), as a conv2d over a 1-high image.

    PyTorch
    -------
    ``torch.nn.functional.conv1d``
    """
    if _amp and amp_policy.on("conv1d"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "conv1d", conv1d, input, weight, bias, stride, padding, dilation, groups)
    _same_dtype("conv1d", input, weight, bias)
    x, unbatched = _batched("conv1d", input, 3)
    if weight.ndim != 3:
        raise ShapeError(f"conv1d: expected a 3-D weight (out_channels, in_channels/groups, "
                         f"k), got shape {tuple(weight.shape)}")

    def one(v):
        return 1, (v[0] if isinstance(v, (tuple, list)) else v)
    _check_steps("conv1d", one(stride)[1:], one(dilation)[1:])
    if not isinstance(padding, str):
        padding = (0, one(padding)[1])
        _check_padding("conv1d", padding[1:])
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, one(stride), padding,
                 one(dilation), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution of (N, C, D, H, W) by (O, C/groups, kd, kh, kw): for each depth tap
    of the kernel, a conv2d of the input's depth slices it meets (as one batch), summed.

    PyTorch
    -------
    ``torch.nn.functional.conv3d``
    """
    _same_dtype("conv3d", input, weight, bias)
    x, unbatched = _batched("conv3d", input, 5)
    if weight.ndim != 5:
        raise ShapeError(f"conv3d: expected a 5-D weight (out_channels, in_channels/groups, "
                         f"kd, kh, kw), got shape {tuple(weight.shape)}")
    o, cg, kd = weight._data.shape[:3]
    stride, dilation = _tuple(stride, 3, "conv3d"), _tuple(dilation, 3, "conv3d")
    _check_steps("conv3d", stride, dilation)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise EmberValueError(f"conv3d: padding must be an int, a triple, 'valid' or "
                                  f"'same', got {padding!r}")
        pairs = ([(0, 0)] * 3 if padding == "valid" else
                 _same_padding("conv3d", weight._data.shape[2:], dilation, stride))
        if any(lo != hi for lo, hi in pairs):
            x = pad(x, tuple(v for pair_ in reversed(pairs) for v in pair_))
            pairs = [(0, 0)] * 3
        padding = tuple(lo for lo, _ in pairs)
    padding = _tuple(padding, 3, "conv3d")
    _check_padding("conv3d", padding)
    if padding[0]:
        x = pad(x, (0, 0, 0, 0, padding[0], padding[0]))
    n, c, d, h, w = x._data.shape
    od = out_size(d, kd, dilation[0], 0, stride[0])
    if od <= 0:
        raise ShapeError(f"conv3d: the kernel's depth {kd} (dilation {dilation[0]}) is larger "
                         f"than the padded input's {d}; use a smaller kernel or more padding")
    out = None
    for t in range(kd):
        start = t * dilation[0]
        taps = x[:, :, start:start + stride[0] * (od - 1) + 1:stride[0]]     # (N, C, OD, H, W)
        taps = taps.permute(0, 2, 1, 3, 4).reshape(n * od, c, h, w)
        y = conv2d(taps, weight[:, :, t], None, stride[1:], padding[1:], dilation[1:], groups)
        out = y if out is None else out + y
    oh, ow = out._data.shape[-2:]
    out = out.reshape(n, od, o, oh, ow).permute(0, 2, 1, 3, 4)
    if bias is not None:
        out = out + bias.reshape(o, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed convolution, weight (C_in, C_out/groups, kh, kw): conv2d's input gradient
    (with output_padding: one matmul + fold).

    PyTorch
    -------
    ``torch.nn.functional.conv_transpose2d``
    """
    if _amp and amp_policy.on("conv_transpose2d"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "conv_transpose2d", conv_transpose2d, input, weight, bias, stride, padding,
            output_padding, groups, dilation)
    x, unbatched = _batched("conv_transpose2d", input, 4)
    if weight.ndim != 4:
        raise ShapeError(f"conv_transpose2d: expected a 4-D weight (in_channels, "
                         f"out_channels/groups, kh, kw), got shape {tuple(weight.shape)}")
    n, c, h, w = x._data.shape
    ci, og, kh, kw = weight._data.shape
    if groups < 1 or c != ci or c % groups:
        raise ShapeError(f"conv_transpose2d: input has {c} channels, weight "
                         f"{tuple(weight.shape)} expects {ci}; in_channels must also be "
                         f"divisible by groups={groups}")
    stride, padding, dilation = (pair(v, "conv_transpose2d")
                                 for v in (stride, padding, dilation))
    _check_steps("conv_transpose2d", stride, dilation)
    _check_padding("conv_transpose2d", padding)
    opad = pair(output_padding, "conv_transpose2d")
    if any(op >= max(s, d) for op, s, d in zip(opad, stride, dilation)):
        raise EmberValueError(f"conv_transpose2d: output_padding {opad} must be smaller than "
                              f"either stride {stride} or dilation {dilation}")
    oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + opad[0] + 1
    ow = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + opad[1] + 1
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"conv_transpose2d: the output size {(oh, ow)} is not positive; "
                         "reduce padding")
    o = og * groups
    if opad == (0, 0):
        # the input gradient of the convolution it transposes: one declared kernel (the
        # CPU's: channels-last rows, no fold), with its own gradient rule
        out = run(conv2d_input_grad_op, x, weight, input_size=(oh, ow), stride=stride,
                  padding=padding, dilation=dilation, groups=groups)
        if bias is not None:
            out = out + bias.reshape(o, 1, 1)
        return out.squeeze(0) if unbatched else out
    if groups == 1:
        cols = weight.reshape(c, og * kh * kw).mT @ x.reshape(n, c, h * w)
    else:
        cols = weight.reshape(groups, c // groups, og * kh * kw).mT @ x.reshape(
            n, groups, c // groups, h * w)
    cols = cols.reshape(n, o * kh * kw, h * w)
    if opad == (0, 0):
        out = fold(cols, (oh, ow), (kh, kw), dilation, padding, stride)
    else:
        # output_padding: fold the whole uncropped output, add the extra rows/columns at
        # the end, then crop `padding` from each side (the extra rows can lie in the
        # cropped border, which holds contributions; folding straight to (oh, ow) would
        # also count one block too many where output_padding >= stride)
        fh = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1
        fw = (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1
        out = fold(cols, (fh, fw), (kh, kw), dilation, (0, 0), stride)
        out = ops.pad(out, (0, opad[1], 0, opad[0]))
        out = out[..., padding[0]:padding[0] + oh, padding[1]:padding[1] + ow]
    if bias is not None:
        out = out + bias.reshape(o, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 1-D convolution of (N, C_in, L), weight (C_in, C_out/groups, k):
    conv_transpose2d over a 1-high image.

    PyTorch
    -------
    ``torch.nn.functional.conv_transpose1d``
    """
    name = "conv_transpose1d"
    if type(input) is not Tensor or input.ndim not in (2, 3):
        raise ShapeError(f"{name}: expected a 2-D (C, L) or 3-D (N, C, L) input, got "
                         f"{getattr(input, 'ndim', type(input).__name__)}-D")
    if type(weight) is not Tensor or weight.ndim != 3:
        raise ShapeError(f"{name}: expected a 3-D weight (in_channels, out_channels/groups, "
                         f"k), got shape {tuple(getattr(weight, 'shape', ()))}")

    def one(v, what):
        if isinstance(v, int):
            return v
        v = tuple(v)
        if len(v) != 1:
            raise ShapeError(f"{name}: {what} must be an int or 1 int, got {v}")
        return v[0]
    out = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias,
                           (1, one(stride, "stride")), (0, one(padding, "padding")),
                           (0, one(output_padding, "output_padding")), groups,
                           (1, one(dilation, "dilation")))
    return out.squeeze(-2)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed 3-D convolution of (N, C_in, D, H, W), weight (C_in, C_out/groups, kd, kh,
    kw): for each depth tap of the kernel, a conv_transpose2d of every input depth slice
    (one batch), placed stride apart from the tap's offset and summed; `padding` is then
    cropped from both ends of the depth (conv3d's transpose, written as conv3d is).

    PyTorch
    -------
    ``torch.nn.functional.conv_transpose3d``
    """
    name = "conv_transpose3d"
    _same_dtype(name, input, weight, bias)
    x, unbatched = _batched(name, input, 5)
    if weight.ndim != 5:
        raise ShapeError(f"{name}: expected a 5-D weight (in_channels, out_channels/groups, "
                         f"kd, kh, kw), got shape {tuple(weight.shape)}")
    n, c, d, h, w = x._data.shape
    ci, og, kd = weight._data.shape[:3]
    if groups < 1 or c != ci or c % groups:
        raise ShapeError(f"{name}: input has {c} channels, weight {tuple(weight.shape)} "
                         f"expects {ci}; in_channels must also be divisible by "
                         f"groups={groups}")
    stride, padding, opad, dilation = (_tuple(v, 3, name) for v in (
        stride, padding, output_padding, dilation))
    _check_steps(name, stride, dilation)
    _check_padding(name, padding)
    if any(op >= max(st, dl) for op, st, dl in zip(opad, stride, dilation)):
        raise EmberValueError(f"{name}: output_padding {opad} must be smaller than either "
                              f"stride {stride} or dilation {dilation}")
    od = (d - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kd - 1) + opad[0] + 1
    if od <= 0:
        raise ShapeError(f"{name}: the output depth {od} is not positive; reduce padding")
    o, sd = og * groups, stride[0]
    full = (d - 1) * sd + dilation[0] * (kd - 1) + 1 + opad[0]     # before the crop
    slices = x.permute(0, 2, 1, 3, 4).reshape(n * d, c, h, w)
    out = None
    for t in range(kd):
        y = conv_transpose2d(slices, weight[:, :, t], None, stride[1:], padding[1:], opad[1:],
                             groups, dilation[1:])
        oh, ow = y._data.shape[-2:]
        if sd > 1:       # input depth i lands at i * stride: zeros between the slices
            y = pad(y.reshape(n, d, 1, o, oh, ow), (0, 0, 0, 0, 0, 0, 0, sd - 1))
            y = y.reshape(n, d * sd, o, oh, ow)[:, :(d - 1) * sd + 1]
        else:
            y = y.reshape(n, d, o, oh, ow)
        start = t * dilation[0]
        y = pad(y, (0, 0, 0, 0, 0, 0, start, full - start - y._data.shape[1]))
        out = y if out is None else out + y
    out = out[:, padding[0]:padding[0] + od].permute(0, 2, 1, 3, 4)
    if bias is not None:
        out = out + bias.reshape(o, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


# -- modules ------------------------------------------------------------------------------


def _tuple(v, n: int, name: str) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise EmberValueError(f"{name}: expected an int or {n} ints, got {v}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


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
        if padding_mode not in _PADDING_MODES:
            raise EmberValueError(f"{name}: padding_mode must be one of {list(_PADDING_MODES)}, "
                                  f"but got padding_mode={padding_mode!r}")
        if self.transposed and padding_mode != "zeros":
            raise EmberValueError(f'Only "zeros" padding mode is supported for {name}')
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
        # F.pad's order (last dim first, each side), for padding modes other than zeros
        if self.padding == "same":
            rev = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                rev += [total // 2, total - total // 2]
        elif self.padding == "valid":
            rev = [0, 0] * n
        else:
            rev = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = tuple(rev)
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
            s += f", padding={self.padding}"          # padding=same, as PyTorch prints it
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _padded(self, input: Tensor):
        """(input, padding) for the conv call: with a padding mode other than zeros the
        input padded by F.pad in that mode and no padding left for the conv (torch's
        _conv_forward)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return (F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                (0,) * self._dims)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L).

    PyTorch
    -------
    ``torch.nn.Conv1d``
    """

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        padding = padding if isinstance(padding, str) else padding[0]
        return F.conv1d(input, self.weight, self.bias, self.stride[0], padding,
                        self.dilation[0], self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W).

    PyTorch
    -------
    ``torch.nn.Conv2d``
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W).

    PyTorch
    -------
    ``torch.nn.Conv3d``
    """

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution (the gradient of Conv2d with respect to its input).

    PyTorch
    -------
    ``torch.nn.ConvTranspose2d``
    """

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                 dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if isinstance(padding, str):
            raise EmberValueError(f"{type(self).__name__}: padding must be an int or a tuple, "
                                  f"not {padding!r}")
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
        n = self._dims
        for i, want in enumerate(size):
            least = ((input.shape[-n + i] - 1) * self.stride[i] - 2 * self.padding[i]
                     + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            extra = want - least
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise EmberValueError(
                    f"{type(self).__name__}: requested an output size of {size}, but valid "
                    f"sizes for this input are {least} to {least + self.stride[i] - 1} in "
                    f"dim {i}")
            out.append(extra)
        return tuple(out)


class ConvTranspose1d(ConvTranspose2d):
    """Transposed 1-D convolution (the gradient of Conv1d with respect to its input).

    PyTorch
    -------
    ``torch.nn.ConvTranspose1d``
    """

    _dims = 1

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding(input, tuple(output_size)[-1:])
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose3d(ConvTranspose2d):
    """Transposed 3-D convolution (the gradient of Conv3d with respect to its input).

    PyTorch
    -------
    ``torch.nn.ConvTranspose3d``
    """

    _dims = 3

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding(input, tuple(output_size)[-3:])
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


# -- lazy convolutions: in_channels inferred at the first forward --------------------------


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share (torch's _LazyConvXdMixin)."""

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """in_channels from the input's channel dim (dim 1, or 0 unbatched); materialize
        and initialize weight and bias."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise EmberValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            with no_grad():
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise ShapeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D "
                             f"(batched) input to {type(self).__name__}, but got input of "
                             f"size: {tuple(input.shape)}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose in_channels is inferred from the first input (dim 1); it then
    becomes a Conv1d.

    PyTorch
    -------
    ``torch.nn.LazyConv1d``
    """

    cls_to_become = Conv1d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose in_channels is inferred from the first input (dim 1); it then
    becomes a Conv2d.

    Examples
    --------
    >>> import ember
    >>> conv = ember.nn.LazyConv2d(8, 3)
    >>> conv(ember.ones(1, 3, 5, 5)).shape
    ember.Size([1, 8, 3, 3])
    >>> conv.weight.shape
    ember.Size([8, 3, 3, 3])

    PyTorch
    -------
    ``torch.nn.LazyConv2d``
    """

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A Conv3d whose in_channels is inferred from the first input (dim 1); it then
    becomes a Conv3d.

    PyTorch
    -------
    ``torch.nn.LazyConv3d``
    """

    cls_to_become = Conv3d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is inferred from the first input (dim 1); it
    then becomes a ConvTranspose1d.

    PyTorch
    -------
    ``torch.nn.LazyConvTranspose1d``
    """

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is inferred from the first input (dim 1); it
    then becomes a ConvTranspose2d.

    PyTorch
    -------
    ``torch.nn.LazyConvTranspose2d``
    """

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is inferred from the first input (dim 1); it
    then becomes a ConvTranspose3d.

    PyTorch
    -------
    ``torch.nn.LazyConvTranspose3d``
    """

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_init(out_channels, bias, device, dtype)
