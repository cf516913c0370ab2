"""interpolate and Upsample: nearest, (bi/tri)linear, bicubic and area resizing over the
trailing spatial dims.

Each spatial dim is resized on its own with index_select (nearest) or two index_selects
and a blend (linear), so gradients come from those ops and every backend runs it.  The
source coordinates follow PyTorch's: with scale_factor given (and not recomputed) they use
1 / scale_factor, otherwise input size / output size; align_corners maps the corner
pixels' centres onto each other.
"""
from __future__ import annotations

import math

import numpy as np

from .. import amp_policy, ops
from ..amp_policy import active as _amp
from ..errors import EmberValueError, ShapeError
from ..tensor import Tensor
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}  # mode -> spatial dims
_SUPPORTED = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "bicubic", "area")
_CUBIC_A = -0.75                                # PyTorch's bicubic convolution constant


def _per_dim(value, dims: int, name: str) -> list:
    if isinstance(value, (tuple, list)):
        if len(value) != dims:
            raise ShapeError(f"interpolate: {name} has {len(value)} entries, the input has "
                             f"{dims} spatial dims")
        return list(value)
    return [value] * dims


def _output_sizes(spatial, size, scale_factor, recompute):
    """(output sizes, the scale of each dim for the coordinate map or None)."""
    dims = len(spatial)
    if (size is None) == (scale_factor is None):
        raise EmberValueError("interpolate: give exactly one of size and scale_factor")
    if size is not None:
        if recompute:
            raise EmberValueError("interpolate: recompute_scale_factor is not meaningful "
                                  "with an explicit size.")
        return [int(s) for s in _per_dim(size, dims, "size")], [None] * dims
    scales = [float(s) for s in _per_dim(scale_factor, dims, "scale_factor")]
    sizes = [int(math.floor(n * s)) for n, s in zip(spatial, scales)]
    return sizes, ([None] * dims if recompute else scales)


def _source_scale(n_in: int, n_out: int, scale, align_corners: bool) -> float:
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _nearest_index(n_in, n_out, scale, exact):
    s = _source_scale(n_in, n_out, scale, False)
    out = np.arange(n_out, dtype=np.float64)
    src = np.floor((out + 0.5) * s) if exact else np.floor(out * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_taps(n_in, n_out, scale, align_corners):
    """(low index, high index, weight of the high one) per output position."""
    s = _source_scale(n_in, n_out, scale, align_corners)
    out = np.arange(n_out, dtype=np.float64)
    src = out * s if align_corners else np.maximum((out + 0.5) * s - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    high = np.minimum(low + 1, n_in - 1)
    return low, high, src - low


def _cubic_matrix(n_in, n_out, scale, align_corners):
    """(n_out, n_in) weights of bicubic interpolation along one dim: PyTorch's four taps
    (A = -0.75) at floor(src) - 1 .. floor(src) + 2, clamped to the edge."""
    s = _source_scale(n_in, n_out, scale, align_corners)
    out = np.arange(n_out, dtype=np.float64)
    src = out * s if align_corners else (out + 0.5) * s - 0.5     # not clamped at 0
    base = np.floor(src)
    t = src - base
    a = _CUBIC_A

    def near(x):    # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):     # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for k, w in enumerate(weights):
        cols = np.clip(base.astype(np.int64) - 1 + k, 0, n_in - 1)
        np.add.at(m, (rows, cols), w)
    return m


def _area_matrix(n_in, n_out):
    """(n_out, n_in) weights of mode="area": adaptive average pooling's windows
    [floor(i * n_in / n_out), ceil((i + 1) * n_in / n_out))."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo = (i * n_in) // n_out
        hi = -((-(i + 1) * n_in) // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _apply(x: Tensor, dim: int, m: np.ndarray) -> Tensor:
    """x with dim mapped through the (n_out, n_in) matrix m (a matmul: its gradient and
    every backend come with it)."""
    w = ops.tensor(np.ascontiguousarray(m.T), dtype=x.dtype, device=x.device)
    return ops.matmul(x.movedim(dim, -1), w).movedim(-1, dim)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize (N, C, *spatial) by nearest or (bi)linear interpolation
    (torch.nn.functional.interpolate: nearest, nearest-exact, linear, bilinear, trilinear,
    bicubic, area).

    PyTorch
    -------
    ``torch.nn.functional.interpolate``
    """
    if _amp and amp_policy.on("interpolate"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "interpolate", interpolate, input, size, scale_factor, mode, align_corners,
            recompute_scale_factor, antialias)
    if mode not in _SUPPORTED:
        raise EmberValueError(f"interpolate: mode {mode!r} is not in ember yet; it has "
                              f"{', '.join(_SUPPORTED)}")
    if antialias:
        raise EmberValueError("interpolate: antialias=True is not in ember yet")
    spatial = tuple(input.shape[2:])
    if input.ndim < 3:
        raise ShapeError(f"interpolate: expected an (N, C, *spatial) input, got shape "
                         f"{tuple(input.shape)}")
    if mode in _LINEAR and len(spatial) != _LINEAR[mode]:
        raise ShapeError(f"interpolate: mode {mode!r} needs {_LINEAR[mode] + 2}-D input, got "
                         f"{input.ndim}-D")
    if (mode.startswith("nearest") or mode == "area") and align_corners is not None:
        raise EmberValueError("interpolate: align_corners option can only be set with the "
                              "interpolating modes: linear | bilinear | bicubic | trilinear")
    sizes, scales = _output_sizes(spatial, size, scale_factor, recompute_scale_factor)
    if any(n <= 0 for n in sizes):
        raise EmberValueError(f"interpolate: output sizes must be positive, got {sizes}")
    out = input
    for i, (n_in, n_out, scale) in enumerate(zip(spatial, sizes, scales)):
        dim = 2 + i
        if n_in == n_out and (scale is None or scale == 1.0 or mode == "area"):
            continue
        if mode == "area":
            out = _apply(out, dim, _area_matrix(n_in, n_out))
            continue
        if mode == "bicubic":
            out = _apply(out, dim, _cubic_matrix(n_in, n_out, scale, bool(align_corners)))
            continue
        if mode.startswith("nearest"):
            index = _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
            out = out.index_select(dim, ops.tensor(index, device=out.device))
            continue
        low, high, weight = _linear_taps(n_in, n_out, scale, bool(align_corners))
        shape = [1] * out.ndim
        shape[dim] = n_out
        w = ops.tensor(weight.reshape(shape), dtype=out.dtype, device=out.device)
        a = out.index_select(dim, ops.tensor(low, device=out.device))
        b = out.index_select(dim, ops.tensor(high, device=out.device))
        out = a + (b - a) * w
    return out


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The deprecated spelling of interpolate (torch.nn.functional.upsample).

    PyTorch
    -------
    ``torch.nn.functional.upsample``
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """torch.nn.functional.upsample_nearest: interpolate(mode="nearest").

    PyTorch
    -------
    ``torch.nn.functional.upsample_nearest``
    """
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """torch.nn.functional.upsample_bilinear: interpolate(mode="bilinear",
    align_corners=True).

    PyTorch
    -------
    ``torch.nn.functional.upsample_bilinear``
    """
    return interpolate(input, size, scale_factor, "bilinear", align_corners=True)


class Upsample(Module):
    """Resize the input by scale_factor or to size (see interpolate).

    PyTorch
    -------
    ``torch.nn.Upsample``
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) \
            else (tuple(float(s) for s in scale_factor) if scale_factor else None)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode,
                           self.align_corners, self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(mode='nearest') for (N, C, H, W).

    PyTorch
    -------
    ``torch.nn.UpsamplingNearest2d``
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode='bilinear', align_corners=True) for (N, C, H, W).

    PyTorch
    -------
    ``torch.nn.UpsamplingBilinear2d``
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
