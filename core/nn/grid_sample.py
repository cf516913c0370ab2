"""affine_grid and grid_sample (torch.nn.functional's spatial transformer pair), written with
ember ops; grid_sample is torch.grid_sampler (functional/nn.py) with mode and padding named.
2-d (4-D input) and 3-d (5-D input) sampling; modes 'bilinear', 'nearest' and 'bicubic'
(4-D input only)."""
from __future__ import annotations

from .. import ops
from ..errors import EmberValueError, NotInEmberError, ShapeError
from ..functional.movement import meshgrid as _meshgrid
from ..functional.nn import _check_sampler, _sample
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


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) (or (N, C, D, H, W)) at the normalized positions of
    ``grid`` (N, H', W', 2) (or (N, D', H', W', 3), x first): 'bilinear' blends the
    neighbouring values (trilinear for 5-D input), 'nearest' takes the nearest (ties to
    even, as torch), 'bicubic' (4-D input) convolves the 4x4 neighbours with torch's cubic
    kernel (A = -0.75); positions outside take zeros, the border value or a reflection
    (``padding_mode``); ``align_corners`` as torch's (None means False).

    PyTorch
    -------
    ``torch.nn.functional.grid_sample``
    """
    name = "grid_sample"
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise EmberValueError(f"{name}: expected mode to be 'bilinear', 'nearest' or "
                              f"'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise EmberValueError(f"{name}: expected padding_mode to be 'zeros', 'border', or "
                              f"'reflection', but got: '{padding_mode}'")
    _check_sampler(name, input, grid, None)
    if mode == "bicubic" and input.ndim != 4:
        raise ShapeError(f"{name}: mode='bicubic' supports only 4-D input, got shape "
                         f"{tuple(input.shape)}; use mode='bilinear' or 'nearest'")
    return _sample(input, grid, mode, padding_mode, bool(align_corners))
