"""Pooling layers and their functional forms (torch.nn.modules.pooling).

MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool2d, and max_pool2d,
avg_pool2d, adaptive_avg_pool2d, ... (unfold plus one reduction each)."""
from __future__ import annotations

from ... import amp_policy, dispatch, ops
from ... import dtypes as D
from ...amp_policy import active as _amp
from ...autograd.grad_mode import no_grad
from ...errors import EmberValueError, ShapeError
from ...functional.elementwise import div as _div
from ...ops import pad, unfold
from ...ops.nn import max_pool2d_decomposed, max_pool2d_op, pair
from ...tensor import Tensor
from .._util import _batched
from ..module import Module

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = [
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
]


# -- functional forms ---------------------------------------------------------------------


def _pool_geometry(name, x, kernel_size, stride, padding, dilation, ceil_mode):
    k = pair(kernel_size, name)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else pair(stride, name)
    p, d = pair(padding, name), pair(dilation, name)
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0 or min(p) < 0:
        raise EmberValueError(f"{name}: kernel_size, stride and dilation must be positive "
                              f"and padding non-negative; got kernel_size={k}, stride={s}, "
                              f"padding={p}, dilation={d}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise EmberValueError(f"{name}: pad should be at most half of effective kernel size, "
                              f"but got pad={p} and kernel_size={k}")
    outs, extra = [], []
    for i, size in enumerate(x._data.shape[-2:]):
        span = d[i] * (k[i] - 1) + 1
        num = size + 2 * p[i] - span
        o = (-(-num // s[i]) if ceil_mode else num // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= size + p[i]:
            o -= 1       # the last window must start inside the input or left padding
        if o <= 0:
            raise ShapeError(f"{name}: the input {tuple(x.shape[-2:])} is too small for "
                             f"kernel_size={k} with padding={p}, dilation={d}")
        outs.append(o)
        extra.append(max(0, (o - 1) * s[i] + span - (size + 2 * p[i])))
    return k, s, p, d, tuple(outs), tuple(extra)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Max over windows; the gradient goes to the first maximum of each window, as in
    PyTorch.

    PyTorch
    -------
    ``torch.nn.functional.max_pool2d``
    """
    x, unbatched = _batched("max_pool2d", input, 4)
    k, s, p, d, (oh, ow), (eh, ew) = _pool_geometry("max_pool2d", x, kernel_size, stride,
                                                    padding, dilation, ceil_mode)
    n, c, h, w = x._data.shape
    attrs = dict(kernel_size=k, stride=s, padding=p, dilation=d, extra=(eh, ew))
    if return_indices:
        out, idx = max_pool2d_decomposed(x, **attrs)
    else:
        out = dispatch.run(max_pool2d_op, x, **attrs)
    if unbatched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    return out, _window_to_flat(idx, n, c, h, w, k, s, p, d, oh, ow, unbatched)


def _window_to_flat(idx, n, c, h, w, k, s, p, d, oh, ow, unbatched):
    """Indices into each (H*W) plane, as max_pool2d(return_indices=True) gives them."""
    with no_grad():
        idx = idx.reshape(n, c, oh, ow)
        ki, kj = idx // k[1], idx % k[1]
        rows = ops.arange(oh, device=idx.device).reshape(oh, 1) * s[0] - p[0] + ki * d[0]
        colsj = ops.arange(ow, device=idx.device).reshape(1, ow) * s[1] - p[1] + kj * d[1]
        flat = rows * w + colsj
    return flat.squeeze(0) if unbatched else flat


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over windows (unfold + sum); padding counts toward the divisor unless
    count_include_pad=False, windows past the edge (ceil_mode) never do.

    PyTorch
    -------
    ``torch.nn.functional.avg_pool2d``
    """
    if divisor_override is not None and divisor_override == 0:
        raise EmberValueError("avg_pool2d: divisor must be not zero")
    x, unbatched = _batched("avg_pool2d", input, 4)
    k, s, p, d, (oh, ow), (eh, ew) = _pool_geometry("avg_pool2d", x, kernel_size, stride,
                                                    padding, 1, ceil_mode)
    n, c, h, w = x._data.shape
    flat = x.reshape(n * c, 1, h, w)
    if p != (0, 0) or eh or ew:
        flat = pad(flat, (p[1], p[1] + ew, p[0], p[0] + eh))
    total = ops.sum(unfold(flat, k, 1, 0, s), 1)          # (N*C, L)
    if divisor_override is not None:
        divisor = divisor_override
    elif p == (0, 0) and not (eh or ew):
        divisor = k[0] * k[1]
    else:
        divisor = _pool_divisor(x, h, w, k, s, p, eh, ew, count_include_pad)
    # integer tensors average as torch's: the integer sum divided and truncated
    out = _div(total, divisor, rounding_mode="trunc") if x._dtype in D.INTEGRAL else \
        total / divisor
    out = out.reshape(n, c, oh, ow)
    return out.squeeze(0) if unbatched else out


def _pool_divisor(x, h, w, k, s, p, eh, ew, count_include_pad):
    """How many cells each window averages: the windows of a mask of the counted area."""
    with no_grad():
        if count_include_pad:
            mask = pad(ops.ones(1, 1, h + 2 * p[0], w + 2 * p[1], dtype=x.dtype,
                                device=x.device), (0, ew, 0, eh))
        else:
            mask = pad(ops.ones(1, 1, h, w, dtype=x.dtype, device=x.device),
                       (p[1], p[1] + ew, p[0], p[0] + eh))
        return ops.sum(unfold(mask, k, 1, 0, s), 1)        # (1, L)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average over PyTorch's adaptive windows: rows and columns are pooled by two small
    averaging matrices (exact for any sizes, one matmul each).

    PyTorch
    -------
    ``torch.nn.functional.adaptive_avg_pool2d``
    """
    if _amp and amp_policy.on("adaptive_avg_pool2d"):      # autocast (amp_policy.py)
        return amp_policy.call("adaptive_avg_pool2d", adaptive_avg_pool2d, input, output_size)
    x, unbatched = _batched("adaptive_avg_pool2d", input, 4)
    n, c, h, w = x._data.shape
    output_size = _pair_size("adaptive_avg_pool2d", output_size)
    oh, ow = (h if output_size[0] is None else output_size[0],
              w if output_size[1] is None else output_size[1])
    if oh <= 0 or ow <= 0:
        raise EmberValueError(f"adaptive_avg_pool2d: output_size must be positive, got "
                              f"{output_size}")
    if (oh, ow) == (1, 1):
        out = ops.sum(x, (2, 3), keepdim=True) / (h * w)
    elif h % oh == 0 and w % ow == 0:
        out = ops.sum(x.reshape(n, c, oh, h // oh, ow, w // ow), (3, 5)) / (
            (h // oh) * (w // ow))
    else:
        rows = _adaptive_matrix(oh, h, x)                   # (oh, h)
        cols = _adaptive_matrix(ow, w, x)                   # (ow, w)
        out = rows @ x @ cols.mT
    return out.squeeze(0) if unbatched else out


def _adaptive_matrix(out: int, size: int, like: Tensor) -> Tensor:
    import numpy as np
    m = np.zeros((out, size), dtype=like._dtype.np)
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return ops.from_host(m, like.device)


def _one(v, name):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise EmberValueError(f"{name}: expected an int or a 1-tuple, got {v!r}")
        return v[0]
    return v


def _check_1d(name: str, input: Tensor) -> None:
    if input.ndim not in (2, 3):
        raise ShapeError(f"{name}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                         f"{tuple(input.shape)}")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """max_pool2d over a 1-high image; indices are positions along L.

    PyTorch
    -------
    ``torch.nn.functional.max_pool1d``
    """
    _check_1d("max_pool1d", input)
    if 0 in input._data.shape[-2:]:
        raise ShapeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                         f"dim batch size for input, but got: {list(input.shape)}")
    stride = None if stride is None or stride == () else (1, _one(stride, "max_pool1d"))
    out = F.max_pool2d(input.unsqueeze(-2), (1, _one(kernel_size, "max_pool1d")), stride,
                       (0, _one(padding, "max_pool1d")), (1, _one(dilation, "max_pool1d")),
                       ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """avg_pool2d over a 1-high image.

    PyTorch
    -------
    ``torch.nn.functional.avg_pool1d``
    """
    _check_1d("avg_pool1d", input)
    stride = None if stride is None or stride == () else (1, _one(stride, "avg_pool1d"))
    return F.avg_pool2d(input.unsqueeze(-2), (1, _one(kernel_size, "avg_pool1d")), stride,
                        (0, _one(padding, "avg_pool1d")), ceil_mode,
                        count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """adaptive_avg_pool2d over a 1-high image.

    PyTorch
    -------
    ``torch.nn.functional.adaptive_avg_pool1d``
    """
    _check_1d("adaptive_avg_pool1d", input)
    size = _one(output_size, "adaptive_avg_pool1d")
    return F.adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def _pair_size(name, output_size):
    if isinstance(output_size, int):
        return (output_size, output_size)
    if len(output_size) != 2:
        raise ShapeError(f"{name}: output_size must be 2 (an int or a pair), got "
                         f"{tuple(output_size)}")
    return tuple(output_size)


def _adaptive_bounds(out: int, size: int):
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Max over PyTorch's adaptive windows (a window's max is the max over its rows of the
    max over its columns, so two passes of per-window slices).  With return_indices also
    each max's index into its (H*W) plane (the first of equal maxima), the values gathered
    there so the gradient reaches that element, as torch's.

    PyTorch
    -------
    ``torch.nn.functional.adaptive_max_pool2d``
    """
    if input.ndim not in (3, 4):
        raise ShapeError(f"adaptive_max_pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) "
                         f"input, got shape {tuple(input.shape)}")
    h, w = input._data.shape[-2:]
    output_size = _pair_size("adaptive_max_pool2d", output_size)
    oh = h if output_size[0] is None else output_size[0]
    ow = w if output_size[1] is None else output_size[1]
    if oh <= 0 or ow <= 0:
        raise EmberValueError(f"adaptive_max_pool2d: output_size must be positive, got "
                              f"{output_size}")
    lead = input._data.shape[:-2]
    if return_indices:
        return _adaptive_max_with_indices(input, oh, ow)
    if h % oh == 0 and w % ow == 0:
        out = input.reshape(lead + (oh, h // oh, ow, w // ow))
        return ops.amax(out, (-3, -1))
    cols = ops.cat([ops.amax(input[..., a:b], -1, keepdim=True)
                    for a, b in _adaptive_bounds(ow, w)], -1)              # (..., H, ow)
    return ops.cat([ops.amax(cols[..., a:b, :], -2, keepdim=True)
                    for a, b in _adaptive_bounds(oh, h)], -2)              # (..., oh, ow)


def _adaptive_max_with_indices(input: Tensor, oh: int, ow: int):
    h, w = input._data.shape[-2:]
    lead = input._data.shape[:-2]
    index = []
    for a, b in _adaptive_bounds(oh, h):
        row = []
        for c, d in _adaptive_bounds(ow, w):
            window = input[..., a:b, c:d].reshape(lead + ((b - a) * (d - c),))
            local = ops.argmax(window.detach(), -1, keepdim=True)
            row.append((ops.floor_divide(local, d - c) + a) * w
                       + ops.remainder(local, d - c) + c)
        index.append(ops.cat(row, -1))
    index = ops.stack(index, -2)                                        # (..., oh, ow)
    values = ops.gather(input.reshape(lead + (h * w,)), -1,
                        index.reshape(lead + (oh * ow,))).reshape(lead + (oh, ow))
    return values, index


# -- modules ------------------------------------------------------------------------------


class MaxPool2d(Module):
    """Maximum over (kernel_size) windows.

    PyTorch
    -------
    ``torch.nn.MaxPool2d``
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding,
                            self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding="
                f"{self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over (kernel_size) windows.

    PyTorch
    -------
    ``torch.nn.AvgPool2d``
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Mean over windows chosen so the output has output_size.

    PyTorch
    -------
    ``torch.nn.AdaptiveAvgPool2d``
    """

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(Module):
    """Maximum over kernel_size windows along L.

    PyTorch
    -------
    ``torch.nn.MaxPool1d``
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding="
                f"{self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(Module):
    """Mean over kernel_size windows along L.

    PyTorch
    -------
    ``torch.nn.AvgPool1d``
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        # torch keeps these as 1-tuples (its repr shows kernel_size=(3,))
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None and stride != () else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """Mean over windows chosen so the output has length output_size.

    PyTorch
    -------
    ``torch.nn.AdaptiveAvgPool1d``
    """

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """Max over windows chosen so the output has output_size (return_indices=False only).

    PyTorch
    -------
    ``torch.nn.AdaptiveMaxPool2d``
    """

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
