"""affine_grid and grid_sample (torch.nn.functional's spatial transformer pair), written with
ember ops: the sample positions are unnormalized and padded as torch does, the corners are
gathered from the flattened input and blended, so gradients reach both the input (through
the gather) and the grid (through the blend weights), on every device.  2-d (4-D input)
and 3-d (5-D input) sampling; modes 'bilinear' and 'nearest' ('bicubic' is refused)."""
from __future__ import annotations

import itertools

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import no_grad
from ..errors import EmberValueError, NotInEmberError, ShapeError
from ..functional.elementwise import clamp as _clamp
from ..functional.movement import meshgrid as _meshgrid
from ..tensor import Tensor

__all__: list[str] = []


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) over an output of ``size`` (N, C, H, W) (or (N, C, D, H, W)),
    in normalized [-1, 1] coordinates, x first; ``align_corners`` as grid_sample's
    (None means False, torch's default).

    PyTorch
    -------
    ``torch.nn.functional.affine_grid``
    """
    name = "affine_grid"
    size = tuple(int(v) for v in size)
    if type(theta) is not Tensor or not theta.dtype.is_floating_point:
        raise EmberValueError(f"{name}: expected theta to be a floating point tensor, got "
                              f"{getattr(theta, 'dtype', type(theta).__name__)}")
    if len(size) == 4:
        want = (size[0], 2, 3)
    elif len(size) == 5:
        want = (size[0], 3, 4)
    else:
        raise NotInEmberError(f"{name}: only 2-d (size of 4) and 3-d (size of 5) grids are "
                              f"supported, as torch's; got size {size}")
    if tuple(theta.shape) != want:
        raise ShapeError(f"{name}: expected a batch of {want[1]}x{want[2]} affine matrices of "
                         f"shape {want} for size {size}, got {tuple(theta.shape)}")
    spatial = size[2:][::-1]                  # (W, H[, D]): x first
    axes = []
    for n in spatial:
        line = ops.linspace(-1.0, 1.0, n, dtype=theta.dtype, device=theta.device)
        if not align_corners:
            line = line * ((n - 1) / n) if n > 1 else line * 0.0
        axes.append(line)
    # base (..spatial in torch order.., dims + 1): [x, y, (z,) 1]
    grids = _meshgrid(*axes[::-1], indexing="ij")[::-1]
    base = ops.stack([*grids, ops.ones_like(grids[0])], -1)
    flat = base.reshape(1, -1, len(spatial) + 1)
    out = flat @ theta.transpose(1, 2)
    return out.reshape(size[0], *size[2:], len(spatial))


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


def _source(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    x = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        x = _clamp(x, 0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = _clamp(x, 0, size - 1)
    return x


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) (or (N, C, D, H, W)) at the normalized positions of
    ``grid`` (N, H', W', 2) (or (N, D', H', W', 3), x first): 'bilinear' blends the
    neighbouring values (trilinear for 5-D input), 'nearest' takes the nearest (ties to
    even, as torch); positions outside take zeros, the border value or a reflection
    (``padding_mode``); ``align_corners`` as torch's (None means False).

    PyTorch
    -------
    ``torch.nn.functional.grid_sample``
    """
    name = "grid_sample"
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise EmberValueError(f"{name}: expected mode to be 'bilinear', 'nearest' or "
                              f"'bicubic', but got: '{mode}'")
    if mode == "bicubic":
        raise NotInEmberError(f"{name}: mode='bicubic' is not in ember yet; use 'bilinear'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise EmberValueError(f"{name}: expected padding_mode to be 'zeros', 'border', or "
                              f"'reflection', but got: '{padding_mode}'")
    if type(input) is not Tensor or input.ndim not in (4, 5):
        raise ShapeError(f"{name}: expected a 4-D or 5-D input, got "
                         f"{getattr(input, 'ndim', type(input).__name__)}-D")
    dims = input.ndim - 2
    if type(grid) is not Tensor or grid.ndim != input.ndim or grid.shape[-1] != dims or \
            grid.shape[0] != input.shape[0]:
        raise ShapeError(f"{name}: expected a grid of shape (N, *out, {dims}) with N = "
                         f"{input.shape[0]} for a {input.ndim}-D input, got "
                         f"{tuple(getattr(grid, 'shape', ()))}")
    if input.dtype is not grid.dtype:
        raise EmberValueError(f"{name}: expected input and grid to have the same dtype, got "
                              f"{input.dtype.name} and {grid.dtype.name}")
    align = bool(align_corners)
    n, c = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])            # (H, W) or (D, H, W)
    out_spatial = tuple(grid.shape[1:-1])
    # the grid's components are x, y(, z): reversed dims of the input
    coords = [_source(grid[..., dims - 1 - k], sizes[k], padding_mode, align)
              for k in range(dims)]           # coords[k] indexes input dim 2 + k
    flat = input.reshape(n, c, -1)
    strides = [1] * dims
    for k in range(dims - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    count = 1
    for v in out_spatial:
        count *= v

    def gather(points):
        """input's values at integer points (one tensor per dim), zero where outside."""
        inside = None
        index = None
        for k, p in enumerate(points):
            ok = (p >= 0) & (p <= sizes[k] - 1)
            inside = ok if inside is None else inside & ok
            q = _clamp(p, 0, sizes[k] - 1).to(D.int64) * strides[k]
            index = q if index is None else index + q
        idx = index.reshape(n, 1, count).expand(n, c, count)
        vals = ops.gather(flat, 2, idx).reshape(n, c, *out_spatial)
        return ops.where(inside.unsqueeze(1), vals, 0.0)

    if mode == "nearest":
        with no_grad():
            points = [ops.round(x) for x in coords]
        return gather(points)
    with no_grad():
        lows = [ops.floor(x) for x in coords]
    frac = [x - lo for x, lo in zip(coords, lows)]
    out = None
    for corner in itertools.product((0, 1), repeat=dims):
        points = [lo + b for lo, b in zip(lows, corner)]
        weight = None
        for f, b in zip(frac, corner):
            w = f if b else 1 - f
            weight = w if weight is None else weight * w
        term = gather(points) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out
