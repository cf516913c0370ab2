"""The rest of torch.nn.modules.pooling: 3-d pools (max, average, adaptive), LP pools,
adaptive max pooling in 1-d, and unpooling, with their functional forms.

A 3-d window is a box, so a max or a sum over it is the max or sum over depth of the max or
sum over each (H, W) plane: the 3-d pools are the 2-d pools over the planes followed by the
same pool along depth (each dimension's padding, dilation, ceil_mode and divisor apply to
that dimension alone, as in torch, whose divisors are products of the per-dimension
counts).  So they run, with their gradients, on every device the 2-d pools run on."""
from __future__ import annotations

from ... import dtypes as D
from ... import ops
from ...autograd.grad_mode import no_grad
from ...errors import EmberValueError, NotInEmberError, ShapeError
from ...functional.elementwise import div as _div
from ...functional.index import scatter as _scatter
from ...tensor import Tensor
from ..module import Module

# ember.nn.functional, handed down when it loads (it re-exports this module's functions)
F = None

__all__ = ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
           "AdaptiveMaxPool1d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d"]


def _triple(v, name: str, what: str) -> tuple:
    if isinstance(v, int):
        return (v, v, v)
    v = tuple(v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise ShapeError(f"{name}: {what} must be an int or 3 ints, got {v}")
    return v


def _batched(name: str, input: Tensor) -> tuple[Tensor, bool]:
    """input as (N, C, D, H, W) and whether it came unbatched (C, D, H, W)."""
    if type(input) is not Tensor or input.ndim not in (4, 5):
        raise ShapeError(f"{name}: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, "
                         f"got {input.ndim if type(input) is Tensor else type(input).__name__}"
                         f"{'-D' if type(input) is Tensor else ''}")
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def _planes_then_depth(x: Tensor, plane_pool, depth_pool) -> Tensor:
    """plane_pool over each (H, W) plane of (N, C, D, H, W), then depth_pool along D of
    (N, C*OH*OW, D); back as (N, C, OD, OH, OW)."""
    n, c, d, h, w = x.shape
    y = plane_pool(x.reshape(n, c * d, h, w))
    oh, ow = y.shape[-2], y.shape[-1]
    y = y.reshape(n, c, d, oh, ow).permute(0, 1, 3, 4, 2).reshape(n, c * oh * ow, d)
    z = depth_pool(y)
    od = z.shape[-1]
    return z.reshape(n, c, oh, ow, od).permute(0, 1, 4, 2, 3)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Max over (kD, kH, kW) windows of (N, C, D, H, W); with ``return_indices`` also each
    maximum's flat index into its (D*H*W) volume, as torch's (for max_unpool3d).

    PyTorch
    -------
    ``torch.nn.functional.max_pool3d``
    """
    name = "max_pool3d"
    x, unbatched = _batched(name, input)
    k = _triple(kernel_size, name, "kernel_size")
    s = k if stride is None or stride == () else _triple(stride, name, "stride")
    p, dl = _triple(padding, name, "padding"), _triple(dilation, name, "dilation")
    n, c, d, h, w = x.shape
    if not return_indices:
        out = _planes_then_depth(
            x, lambda v: F.max_pool2d(v, k[1:], s[1:], p[1:], dl[1:], ceil_mode),
            lambda v: F.max_pool1d(v, k[0], s[0], p[0], dl[0], ceil_mode))
        return out.squeeze(0) if unbatched else out
    planes, hw_idx = F.max_pool2d(x.reshape(n, c * d, h, w), k[1:], s[1:], p[1:], dl[1:],
                                  ceil_mode, True)
    oh, ow = planes.shape[-2], planes.shape[-1]
    cols = planes.reshape(n, c, d, oh, ow).permute(0, 1, 3, 4, 2).reshape(n, c * oh * ow, d)
    vals, d_idx = F.max_pool1d(cols, k[0], s[0], p[0], dl[0], ceil_mode, True)
    od = vals.shape[-1]
    vals = vals.reshape(n, c, oh, ow, od).permute(0, 1, 4, 2, 3)
    d_idx = d_idx.reshape(n, c, oh, ow, od).permute(0, 1, 4, 2, 3)
    hw = ops.gather(hw_idx.reshape(n, c, d, oh, ow), 2, d_idx)
    idx = d_idx * (h * w) + hw
    return (vals.squeeze(0), idx.squeeze(0)) if unbatched else (vals, idx)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over (kD, kH, kW) windows of (N, C, D, H, W) (torch's divisors; see the module
    docstring).

    PyTorch
    -------
    ``torch.nn.functional.avg_pool3d``
    """
    name = "avg_pool3d"
    x, unbatched = _batched(name, input)
    k = _triple(kernel_size, name, "kernel_size")
    s = k if stride is None or stride == () else _triple(stride, name, "stride")
    p = _triple(padding, name, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise EmberValueError(f"{name}: divisor must be not zero")
    if x._dtype in D.INTEGRAL:
        out = _integer_avg_pool3d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    elif divisor_override is not None:
        out = _window_sums(x, k, s, p, ceil_mode) / divisor_override
    else:
        out = _planes_then_depth(
            x, lambda v: F.avg_pool2d(v, k[1:], s[1:], p[1:], ceil_mode, count_include_pad),
            lambda v: F.avg_pool1d(v, k[0], s[0], p[0], ceil_mode, count_include_pad))
    return out.squeeze(0) if unbatched else out


def _window_sums(x: Tensor, k, s, p, ceil_mode) -> Tensor:
    """The sum over each (kD, kH, kW) window (zero padding), exact for integers."""
    return _planes_then_depth(
        x, lambda v: F.avg_pool2d(v, k[1:], s[1:], p[1:], ceil_mode, True, 1),
        lambda v: F.avg_pool2d(v.unsqueeze(-1), (k[0], 1), (s[0], 1), (p[0], 0), ceil_mode,
                               True, 1).squeeze(-1))


def _integer_avg_pool3d(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    """torch's average of integer tensors: each window's integer sum divided by its divisor
    and truncated (averaging planes and then depth would truncate twice)."""
    total = _window_sums(x, k, s, p, ceil_mode)
    if divisor_override is not None:
        divisor = divisor_override
    elif count_include_pad and not ceil_mode:
        divisor = k[0] * k[1] * k[2]          # every window lies inside the padded volume
    elif not count_include_pad:              # the real cells of each window
        ones = ops.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device)
        with no_grad():
            divisor = _window_sums(ones, k, s, p, ceil_mode)
    else:
        raise NotInEmberError("avg_pool3d of an integer tensor with ceil_mode=True and "
                              "count_include_pad=True is not in ember (a window past the "
                              "edge counts the padding but not the cells beyond it); pass "
                              "count_include_pad=False, or a float tensor")
    return _div(total, divisor, rounding_mode="trunc")


def _size3(name: str, output_size, x: Tensor) -> tuple:
    size = _triple(output_size, name, "output_size")
    return tuple(x.shape[2 + i] if v is None else v for i, v in enumerate(size))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Mean over torch's adaptive (D, H, W) windows.

    PyTorch
    -------
    ``torch.nn.functional.adaptive_avg_pool3d``
    """
    x, unbatched = _batched("adaptive_avg_pool3d", input)
    od, oh, ow = _size3("adaptive_avg_pool3d", output_size, x)
    out = _planes_then_depth(x, lambda v: F.adaptive_avg_pool2d(v, (oh, ow)),
                             lambda v: F.adaptive_avg_pool1d(v, od))
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max over torch's adaptive windows along L of (N, C, L); with ``return_indices`` the
    positions along L.

    PyTorch
    -------
    ``torch.nn.functional.adaptive_max_pool1d``
    """
    if type(input) is not Tensor or input.ndim not in (2, 3):
        raise ShapeError(f"adaptive_max_pool1d: expected a 2-D (C, L) or 3-D (N, C, L) input, "
                         f"got {getattr(input, 'ndim', type(input).__name__)}-D")
    if isinstance(output_size, int):
        size = output_size
    elif len(tuple(output_size)) == 1:
        size = tuple(output_size)[0]
    else:
        raise ShapeError(f"adaptive_max_pool1d: output_size must be an int or one int, got "
                         f"{tuple(output_size)}")
    out = F.adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max over torch's adaptive (D, H, W) windows; with ``return_indices`` each maximum's
    flat index into its (D*H*W) volume.

    PyTorch
    -------
    ``torch.nn.functional.adaptive_max_pool3d``
    """
    x, unbatched = _batched("adaptive_max_pool3d", input)
    od, oh, ow = _size3("adaptive_max_pool3d", output_size, x)
    if not return_indices:
        out = _planes_then_depth(x, lambda v: F.adaptive_max_pool2d(v, (oh, ow)),
                                 lambda v: adaptive_max_pool1d(v, od))
        return out.squeeze(0) if unbatched else out
    n, c, d, h, w = x.shape
    planes, hw_idx = F.adaptive_max_pool2d(x.reshape(n, c * d, h, w), (oh, ow), True)
    cols = planes.reshape(n, c, d, oh, ow).permute(0, 1, 3, 4, 2).reshape(n, c * oh * ow, d)
    vals, d_idx = adaptive_max_pool1d(cols, od, True)
    vals = vals.reshape(n, c, oh, ow, od).permute(0, 1, 4, 2, 3)
    d_idx = d_idx.reshape(n, c, oh, ow, od).permute(0, 1, 4, 2, 3)
    idx = d_idx * (h * w) + ops.gather(hw_idx.reshape(n, c, d, oh, ow), 2, d_idx)
    return (vals.squeeze(0), idx.squeeze(0)) if unbatched else (vals, idx)


def _lp(out: Tensor, norm_type: float, count: int) -> Tensor:
    # torch's: (sign(out) * relu(|out|)) * count, to the power 1/p
    return (out.sign() * ops.relu(out.abs())).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm over windows along L: (sum of x^p)^(1/p).

    PyTorch
    -------
    ``torch.nn.functional.lp_pool1d``
    """
    k = kernel_size if isinstance(kernel_size, int) else tuple(kernel_size)[0]
    out = F.avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return _lp(out, norm_type, k)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm over (kH, kW) windows: (sum of x^p)^(1/p).

    PyTorch
    -------
    ``torch.nn.functional.lp_pool2d``
    """
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    out = F.avg_pool2d(input.pow(norm_type), (kh, kw), stride, 0, ceil_mode)
    return _lp(out, norm_type, kh * kw)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm over (kD, kH, kW) windows: (sum of x^p)^(1/p).

    PyTorch
    -------
    ``torch.nn.functional.lp_pool3d``
    """
    kd, kh, kw = _triple(kernel_size, "lp_pool3d", "kernel_size")
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return _lp(out, norm_type, kd * kh * kw)


def _unpool(name: str, input: Tensor, indices: Tensor, kernel_size, stride, padding,
            output_size, dims: int) -> Tensor:
    def tup(v, what):
        if isinstance(v, int):
            return (v,) * dims
        v = tuple(v)
        if len(v) != dims:
            raise ShapeError(f"{name}: {what} must be an int or {dims} ints, got {v}")
        return v
    if type(input) is not Tensor or input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{name}: expected a {dims + 1}-D or {dims + 2}-D input, got "
                         f"{getattr(input, 'ndim', type(input).__name__)}-D")
    if tuple(indices.shape) != tuple(input.shape):
        raise ShapeError(f"{name}: expected indices of the input's shape "
                         f"{tuple(input.shape)}, got {tuple(indices.shape)}")
    k = tup(kernel_size, "kernel_size")
    s = k if stride is None or stride == () else tup(stride, "stride")
    p = tup(padding, "padding")
    spatial = tuple(input.shape[-dims:])
    default = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(dims))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size)[-dims:]
        if len(size) != dims:
            raise ShapeError(f"{name}: output_size must have {dims} spatial sizes, got "
                             f"{tuple(output_size)}")
        for i in range(dims):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < size[i] < hi:
                raise ShapeError(f"{name}: invalid output_size {tuple(output_size)} (dim {i} "
                                 f"must be between {lo + 1} and {hi - 1})")
    lead = tuple(input.shape[:-dims])
    plane = 1
    for v in size:
        plane *= v
    flat_idx = indices.reshape(*lead, -1)
    if flat_idx.numel():
        lo, hi = int(ops.amin(flat_idx).item()), int(ops.amax(flat_idx).item())
        if lo < 0 or hi >= plane:
            raise EmberValueError(f"{name}: found an invalid max index {lo if lo < 0 else hi} "
                                  f"(output volumes are of size {plane}); pass the indices "
                                  "its max pool returned, with the same sizes")
    out = ops.zeros((*lead, plane), dtype=input.dtype, device=input.device)
    out = _scatter(out, len(lead), flat_idx, input.reshape(*lead, -1))
    return out.reshape(*lead, *size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool1d: each value put back at its index, zeros
    elsewhere.

    PyTorch
    -------
    ``torch.nn.functional.max_unpool1d``
    """
    return _unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size,
                   1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool2d: each value put back at its index into its (H*W)
    plane, zeros elsewhere.

    PyTorch
    -------
    ``torch.nn.functional.max_unpool2d``
    """
    return _unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size,
                   2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool3d: each value put back at its index into its
    (D*H*W) volume, zeros elsewhere.

    PyTorch
    -------
    ``torch.nn.functional.max_unpool3d``
    """
    return _unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size,
                   3)


# -- Modules ---------------------------------------------------------------------------------

class MaxPool3d(Module):
    """Maximum over (kD, kH, kW) windows.

    PyTorch
    -------
    ``torch.nn.MaxPool3d``
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding="
                f"{self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool3d(Module):
    """Mean over (kD, kH, kW) windows.

    PyTorch
    -------
    ``torch.nn.AvgPool3d``
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    """Mean over adaptive windows giving ``output_size``.

    PyTorch
    -------
    ``torch.nn.AdaptiveAvgPool3d``
    """

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    """Maximum over adaptive windows giving ``output_size``.

    PyTorch
    -------
    ``torch.nn.AdaptiveMaxPool3d``
    """

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(Module):
    """Maximum over adaptive windows along L giving ``output_size``.

    PyTorch
    -------
    ``torch.nn.AdaptiveMaxPool1d``
    """

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _LPPoolNd(Module):
    _fn = ""

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size,
                                    self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """The p-norm over windows along L.

    PyTorch
    -------
    ``torch.nn.LPPool1d``
    """

    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    """The p-norm over (kH, kW) windows.

    PyTorch
    -------
    ``torch.nn.LPPool2d``
    """

    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """The p-norm over (kD, kH, kW) windows.

    PyTorch
    -------
    ``torch.nn.LPPool3d``
    """

    _fn = "lp_pool3d"


class _MaxUnpoolNd(Module):
    _fn = ""
    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()

        def tup(v):                       # torch keeps _single/_pair/_triple tuples
            return (v,) * self._dims if isinstance(v, int) else tuple(v)
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return getattr(F, self._fn)(input, indices, self.kernel_size, self.stride,
                                    self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d.

    PyTorch
    -------
    ``torch.nn.MaxUnpool1d``
    """

    _fn = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d.

    PyTorch
    -------
    ``torch.nn.MaxUnpool2d``
    """

    _fn = "max_unpool2d"
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d.

    PyTorch
    -------
    ``torch.nn.MaxUnpool3d``
    """

    _fn = "max_unpool3d"
    _dims = 3
