"""torch.* functions of the nn family, written with ember ops: the grid samplers
(torch.grid_sampler, grid_sampler_2d/3d, the body of nn.functional.grid_sample) and the
native normalisations that return their statistics (torch.native_batch_norm,
native_layer_norm, native_group_norm; nn.functional's batch_norm, layer_norm and
group_norm are their first outputs).

Grid sampling unnormalizes and pads the sample positions as torch does, gathers the
neighbours from the flattened input and blends them, so gradients reach both the input
(through the gather) and the grid (through the blend weights), on every device.
"""
from __future__ import annotations

import itertools
import math

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import no_grad
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..tensor import Tensor
from .elementwise import clamp as _clamp

__all__ = ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "native_batch_norm",
           "native_layer_norm", "native_group_norm"]

# torch's integer codes (aten GridSamplerInterpolation / GridSamplerPadding)
INTERPOLATION = ("bilinear", "nearest", "bicubic")
PADDING = ("zeros", "border", "reflection")
_CUBIC_A = -0.75                  # torch's (and OpenCV's) bicubic convolution constant


# -- grid sampling ------------------------------------------------------------------------


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = (coord - low).abs()
    with no_grad():
        flips = ops.floor(x / span)
        odd = ops.remainder(flips, 2.0) == 1
    extra = x - flips * span
    return ops.where(odd, span - extra + low, extra + low)


def _pad(x: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """torch's compute_coordinates: a source position folded into the input by the padding
    mode ('zeros' leaves it; the gather reads zero outside)."""
    if padding_mode == "border":
        x = _clamp(x, 0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = _clamp(x, 0, size - 1)
    return x


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The four weights of the neighbours at -1, 0, 1, 2 for a fraction t (torch's
    get_cubic_upsample_coefficients)."""
    a = _CUBIC_A

    def near(x):                  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):                   # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    s = 1 - t
    return [far(t + 1), near(t), near(s), far(s + 1)]


def _check_sampler(name: str, input, grid, dims: int | None) -> None:
    """torch's grid_sampler checks: tensors of one dtype, a 4-D or 5-D input (4-D for
    grid_sampler_2d, 5-D for _3d), a grid (N, *out, dims) of the input's batch."""
    if type(input) is not Tensor or type(grid) is not Tensor:
        raise EmberTypeError(f"{name}: expected input and grid to be tensors, got "
                             f"{type(input).__name__} and {type(grid).__name__}")
    want = (dims + 2,) if dims else (4, 5)
    if input.ndim not in want or grid.ndim != input.ndim:
        shape = "4-D" if want == (4,) else "5-D" if want == (5,) else "4-D or 5-D"
        raise ShapeError(f"{name}: expected {shape} input and grid with the same number of "
                         f"dims, got input of shape {tuple(input.shape)} and grid of shape "
                         f"{tuple(grid.shape)}")
    if not input.dtype.is_floating_point or input.dtype is not grid.dtype:
        raise EmberTypeError(f"{name}: expected input and grid of one floating dtype, got "
                             f"{input.dtype.name} and {grid.dtype.name}")
    d = input.ndim - 2
    if grid.shape[0] != input.shape[0] or grid.shape[-1] != d:
        raise ShapeError(f"{name}: expected a grid of shape (N, *out, {d}) with N = "
                         f"{input.shape[0]} for an input of shape {tuple(input.shape)}, got "
                         f"{tuple(grid.shape)}")
    for k, n in enumerate(input.shape[2:]):
        if n == 0:
            raise ShapeError(f"{name}: expected an input with non-empty spatial dims, got "
                             f"shape {tuple(input.shape)} (dim {k + 2} is empty)")


def _sample(input: Tensor, grid: Tensor, mode: str, padding_mode: str,
            align_corners: bool) -> Tensor:
    """grid_sample's values: arguments already checked (_check_sampler)."""
    dims = input.ndim - 2
    n, c = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])            # (H, W) or (D, H, W)
    out_spatial = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    strides = [1] * dims
    for k in range(dims - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    count = math.prod(out_spatial)

    def gather(points):
        """input's values at K integer points per output position (one (N, K, *out) tensor
        per dim), zero where outside: (N, C, K, *out), all K in one gather."""
        inside = None
        index = None
        for k, p in enumerate(points):
            ok = (p >= 0) & (p <= sizes[k] - 1)
            inside = ok if inside is None else inside & ok
            q = _clamp(p, 0, sizes[k] - 1).to(D.int64) * strides[k]
            index = q if index is None else index + q
        many = index.shape[1]
        idx = index.reshape(n, 1, many * count).expand(n, c, many * count)
        vals = ops.gather(flat, 2, idx).reshape(n, c, many, *out_spatial)
        return ops.where(inside.unsqueeze(1), vals, 0.0)

    # the grid's components are x, y(, z): reversed dims of the input
    raw = [_unnormalize(grid[..., dims - 1 - k], sizes[k], align_corners)
           for k in range(dims)]              # raw[k] indexes input dim 2 + k
    if mode == "bicubic":
        # the 4x4 neighbours of floor(position) are padded one by one (torch's
        # get_value_bounded): only the fractions carry the grid's gradient
        with no_grad():
            lows = [ops.floor(x) for x in raw]
        y, x = (r - lo for r, lo in zip(raw, lows))
        wy = ops.stack(_cubic_weights(y), 1).unsqueeze(1)                  # (N, 1, 4, *out)
        wx = ops.stack(_cubic_weights(x), 1).reshape(n, 1, 1, 4, *out_spatial)
        with no_grad():
            rows, cols = (ops.stack([_pad(lows[d] + (i - 1), sizes[d], padding_mode,
                                          align_corners) for i in range(4)], 1)
                          for d in (0, 1))                                  # (N, 4, *out)
            grid16 = (n, 4, 4, *out_spatial)
            points = (rows.unsqueeze(2).expand(*grid16).reshape(n, 16, *out_spatial),
                      cols.unsqueeze(1).expand(*grid16).reshape(n, 16, *out_spatial))
        vals = gather(points).reshape(n, c, 4, 4, *out_spatial)
        # along x first, then along y, as torch
        return ops.sum(ops.sum(vals * wx, 3) * wy, 2)
    coords = [_pad(x, sizes[k], padding_mode, align_corners) for k, x in enumerate(raw)]
    if mode == "nearest":
        with no_grad():
            points = [ops.round(x).unsqueeze(1) for x in coords]
        return gather(points).squeeze(2)
    with no_grad():
        lows = [ops.floor(x) for x in coords]
    frac = [x - lo for x, lo in zip(coords, lows)]
    corners = list(itertools.product((0, 1), repeat=dims))
    with no_grad():
        points = [ops.stack([lo + corner[k] for corner in corners], 1)
                  for k, lo in enumerate(lows)]                           # (N, 2^dims, *out)
    weights = []
    for corner in corners:
        weight = None
        for f, b in zip(frac, corner):
            w = f if b else 1 - f
            weight = w if weight is None else weight * w
        weights.append(weight)
    return ops.sum(gather(points) * ops.stack(weights, 1).unsqueeze(1), 2)


def _codes(name: str, interpolation_mode, padding_mode) -> tuple[str, str]:
    for what, code, names in (("interpolation_mode", interpolation_mode, INTERPOLATION),
                              ("padding_mode", padding_mode, PADDING)):
        if isinstance(code, bool) or not isinstance(code, int) or \
                not 0 <= code < len(names):
            raise EmberValueError(
                f"{name}: expected {what} to be one of torch's codes "
                f"{', '.join(f'{i} ({m})' for i, m in enumerate(names))}, got {code!r}")
    return INTERPOLATION[interpolation_mode], PADDING[padding_mode]


def _sampler(name: str, dims, input, grid, interpolation_mode, padding_mode,
             align_corners) -> Tensor:
    mode, padding = _codes(name, interpolation_mode, padding_mode)
    _check_sampler(name, input, grid, dims)
    if mode == "bicubic" and input.ndim != 4:
        raise ShapeError(f"{name}: bicubic interpolation supports only 4-D input, got shape "
                         f"{tuple(input.shape)}; use interpolation_mode 0 (bilinear) or 1 "
                         f"(nearest)")
    return _sample(input, grid, mode, padding, bool(align_corners))


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """grid_sample with torch's integer codes: ``interpolation_mode`` 0 bilinear,
    1 nearest, 2 bicubic (4-D input only); ``padding_mode`` 0 zeros, 1 border,
    2 reflection; a 4-D or 5-D input.

    PyTorch
    -------
    ``torch.grid_sampler``
    """
    return _sampler("grid_sampler", None, input, grid, interpolation_mode, padding_mode,
                    align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """grid_sampler for a 4-D input (N, C, H, W) and grid (N, H', W', 2).

    PyTorch
    -------
    ``torch.grid_sampler_2d``
    """
    return _sampler("grid_sampler_2d", 2, input, grid, interpolation_mode, padding_mode,
                    align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """grid_sampler for a 5-D input (N, C, D, H, W) and grid (N, D', H', W', 3); no bicubic.

    PyTorch
    -------
    ``torch.grid_sampler_3d``
    """
    return _sampler("grid_sampler_3d", 3, input, grid, interpolation_mode, padding_mode,
                    align_corners)


# -- normalisation with its statistics ----------------------------------------------------


def _trailing_shape(normalized_shape) -> tuple:
    """normalized_shape as layer and RMS norms take it: an int is one trailing dim."""
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


def _trailing_dims(input: Tensor, normalized_shape, name: str) -> tuple[tuple, int]:
    """(the dims, their element count) a layer/RMS norm of `input` over normalized_shape
    reduces; a ShapeError naming `name` where the input does not end with that shape."""
    normalized_shape = _trailing_shape(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or tuple(input._data.shape[input.ndim - k:]) != normalized_shape:
        raise ShapeError(f"{name}: input of shape {tuple(input.shape)} does not end with "
                         f"normalized_shape {normalized_shape}")
    return tuple(range(input.ndim - k, input.ndim)), math.prod(normalized_shape)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: bool, momentum: float, eps: float
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalisation over every dim but the channels (dim 1) and its statistics:
    (out, save_mean, save_invstd).  Training uses the batch's mean and biased variance
    (save_mean and save_invstd = 1/sqrt(var + eps), per channel; the running statistics,
    where given, move by ``momentum`` toward the mean and the unbiased variance, in
    place); eval uses the running statistics and saves nothing (two empty tensors).  The
    statistics are outside the autograd graph, as torch's.

    PyTorch
    -------
    ``torch.native_batch_norm``
    """
    out, mean, invstd = batch_norm_stats(input, weight, bias, running_mean, running_var,
                                         training, momentum, eps, "native_batch_norm")
    if mean is None:                 # eval saves nothing
        empty = ops.zeros((0,), dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    return out, mean.detach(), invstd.detach()


def batch_norm_stats(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                     running_mean: Tensor | None, running_var: Tensor | None,
                     training: bool, momentum: float, eps: float, name: str = "batch_norm"):
    """native_batch_norm's (out, mean, invstd) in the graph, None for eval's statistics:
    the one batch norm F.batch_norm and native_batch_norm share (`name` for the errors)."""
    if type(input) is not Tensor or input.ndim < 2:
        raise ShapeError(f"{name}: expected an input with a channel dim (N, C, ...), got "
                         f"{tuple(getattr(input, 'shape', ())) or type(input).__name__}")
    c = input._data.shape[1]
    shape = (c,) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // c if c else 0
        dims = (0,) + tuple(range(2, input.ndim))
        mean = ops.sum(input, dims, keepdim=True) / max(count, 1)
        centered = input - mean
        var = ops.sum(centered * centered, dims, keepdim=True) / max(count, 1)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.reshape(c) * momentum)
                if running_var is not None:
                    unbiased = count / (count - 1) if count > 1 else math.nan
                    running_var.mul_(1 - momentum).add_(var.reshape(c) * (momentum * unbiased))
        invstd = ops.rsqrt(var + eps)
        scale = invstd if weight is None else invstd * weight.reshape(shape)
        out = centered * scale
        out = out if bias is None else out + bias.reshape(shape)
        return out, mean.reshape(c), invstd.reshape(c)
    if running_mean is None or running_var is None:
        raise EmberValueError(f"{name}: running_mean and running_var are needed when not "
                              f"training (or pass training=True to use batch statistics)")
    # eval: fold everything into one per-channel scale and shift
    scale = ops.rsqrt(running_var + eps)
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    return input * scale.reshape(shape) + shift.reshape(shape), None, None


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """Layer normalisation over the trailing ``normalized_shape`` dims and its statistics:
    (out, mean, rstd), the statistics of shape input.shape[:-k] + (1,) * k (outside the
    autograd graph, as torch's).

    PyTorch
    -------
    ``torch.native_layer_norm``
    """
    out, mean, rstd = layer_norm_stats(input, normalized_shape, weight, bias, eps,
                                       "native_layer_norm")
    return out, mean.detach(), rstd.detach()


def layer_norm_stats(input: Tensor, normalized_shape, weight: Tensor | None,
                     bias: Tensor | None, eps: float, name: str = "layer_norm"):
    """native_layer_norm's (out, mean, rstd) in the graph: the one layer norm F.layer_norm
    and native_layer_norm share (`name` for the shape error)."""
    dims, count = _trailing_dims(input, normalized_shape, name)
    mean = ops.sum(input, dims, keepdim=True) / max(count, 1)
    centered = input - mean
    var = ops.sum(centered * centered, dims, keepdim=True) / max(count, 1)
    rstd = ops.rsqrt(var + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight
    out = out if bias is None else out + bias
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """Group normalisation of an input of N samples, C channels and HxW elements per
    channel, in ``group`` groups of channels, and its statistics: (out, mean, rstd), the
    statistics of shape (N, group) (differentiable, unlike the batch and layer norms'
    statistics: as torch's).

    PyTorch
    -------
    ``torch.native_group_norm``
    """
    name = "native_group_norm"
    if type(input) is not Tensor or input.ndim < 2 or input.numel() != N * C * HxW or \
            input.shape[0] != N or input.shape[1] != C:
        raise ShapeError(f"{name}: expected an input of N={N} samples, C={C} channels and "
                         f"HxW={HxW} elements per channel, got shape "
                         f"{tuple(getattr(input, 'shape', ())) or type(input).__name__}")
    if group <= 0 or C % group:
        raise EmberValueError(f"{name}: expected the number of channels ({C}) to be "
                              f"divisible by the number of groups ({group})")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != C):
            raise ShapeError(f"{name}: expected {what} of shape ({C},), got "
                             f"{tuple(t.shape)}")
    count = (C // group) * HxW
    x = input.reshape(N, group, count)
    mean = ops.sum(x, 2, keepdim=True) / max(count, 1)
    centered = x - mean
    var = ops.sum(centered * centered, 2, keepdim=True) / max(count, 1)
    rstd = ops.rsqrt(var + eps)
    out = (centered * rstd).reshape(input._data.shape)
    shape = (C,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    out = out if bias is None else out + bias.reshape(shape)
    return out, mean.reshape(N, group), rstd.reshape(N, group)
