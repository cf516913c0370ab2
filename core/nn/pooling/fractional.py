"""Fractional max pooling (torch.nn.FractionalMaxPool2d/3d and their functional forms):
windows of a fixed size placed at pseudo-random, increasing starts, one set per sample and
channel, drawn from a uniform sample in [0, 1) per dimension (ember's generator where
`_random_samples` is not given).

The starts follow torch's interval formula (aten generate_intervals, in the input's
dtype), the windows' elements are gathered from the flattened planes, and the maximum's
flat index (the first of equal maxima, the last NaN where there is one, as torch's loop)
gathers the values again, so the gradient reaches the chosen elements on every device."""
from __future__ import annotations

import math

from ... import dtypes as D
from ... import ops
from ...autograd.grad_mode import no_grad
from ...errors import EmberTypeError, EmberValueError, ShapeError
from ...functional.elementwise import clamp as _clamp
from ...tensor import Tensor
from ..module import Module

# ember.nn.functional, handed down when it loads (it re-exports this module's functions)
F = None

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]

_DIMS = {2: "height, width", 3: "time, height, width"}


def _sizes(name: str, value, dims: int, what: str) -> tuple:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (value,) * dims
    try:
        value = tuple(value)
    except TypeError:
        raise EmberTypeError(f"{name}: {what} must be a number or a tuple of {dims}, got "
                             f"{type(value).__name__}") from None
    if len(value) == 1:
        value = value * dims
    if len(value) != dims:
        raise ShapeError(f"{name}: {what} must either be a single number or a tuple of "
                         f"{dims}, got {value}")
    return value


def _intervals(samples: Tensor, size: int, out: int, k: int) -> Tensor:
    """torch's window starts along one dim: (..., out) int64 from samples (...), in the
    samples' dtype: int((i + u) * alpha) - int(u * alpha), the last at size - k."""
    lead = tuple(samples.shape)
    last = ops.full(lead + (min(out, 1),), size - k, dtype=D.int64, device=samples.device)
    if out <= 1:
        return last[..., :out]
    alpha = (size - k) / (out - 1)             # rounded to the dtype once, as torch's
    steps = ops.arange(out - 1, dtype=samples.dtype, device=samples.device)
    u = samples.unsqueeze(-1)
    starts = ((steps + u) * alpha).to(D.int64) - (u * alpha).to(D.int64)
    # starts are in [0, size - k] for samples in [0, 1); others are kept inside the input
    return ops.cat([_clamp(starts, 0, size - k), last], -1)


def _fractional_max_pool(name: str, dims: int, input: Tensor, kernel_size, output_size,
                         output_ratio, return_indices: bool, _random_samples):
    if type(input) is not Tensor or input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"{name}: expected a {dims + 1}-D or {dims + 2}-D (batched) input, "
                         f"got {getattr(input, 'ndim', type(input).__name__)}-D")
    if not input.dtype.is_floating_point:
        raise EmberTypeError(f"{name}: expected a floating point input, got "
                             f"{input.dtype.name}")
    kernel = _sizes(name, kernel_size, dims, "kernel_size")
    if any(k <= 0 for k in kernel):
        raise EmberValueError(f"{name}: kernel_size must be greater than 0, got {kernel_size}")
    sizes = tuple(input.shape[-dims:])
    if output_size is None:
        if output_ratio is None:
            raise EmberValueError(f"{name} requires specifying either an output_size or an "
                                  f"output_ratio")
        ratio = _sizes(name, output_ratio, dims, "output_ratio")
        output_size = tuple(int(n * r) for n, r in zip(sizes, ratio))
    out = _sizes(name, output_size, dims, "output_size")
    for i in range(1 if input.ndim == dims + 2 else 0, input.ndim):
        if input.shape[i] == 0:
            raise ShapeError(f"{name}: expected an input with non-zero size for non-batch "
                             f"dims, got shape {tuple(input.shape)} with dim {i} empty")
    for what, o, k, n in zip(_DIMS[dims].split(", "), out, kernel, sizes):
        if o < 0 or o + k - 1 > n:
            raise ShapeError(f"{name}: pool {what} {k} too large relative to input {what} {n} "
                             f"for an output {what} of {o}; use a smaller kernel_size or "
                             f"output_size")
    unbatched = input.ndim == dims + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        samples = ops.rand(n, c, dims, dtype=x.dtype, device=x.device)
    else:
        samples = _random_samples
        if type(samples) is not Tensor or samples.ndim != 3 or samples.shape[0] < n or \
                samples.shape[1] != c or samples.shape[2] != dims:
            raise ShapeError(f"{name}: expected _random_samples of shape ({n}, {c}, {dims}) "
                             f"(batch, channels, {dims}), got "
                             f"{tuple(getattr(samples, 'shape', ())) or type(samples).__name__}")
        if samples.dtype is not x.dtype:
            raise EmberTypeError(f"{name}: expected _random_samples of the input's dtype "
                                 f"{x.dtype.name}, got {samples.dtype.name}")
        samples = samples[:n]
    plane, count = math.prod(sizes), math.prod(out)
    if n * count == 0:                  # an empty batch or output: nothing to choose
        chosen = ops.zeros((n, c, count), dtype=D.int64, device=x.device)
    else:
        chosen = _choose(x.detach(), samples, dims, sizes, kernel, out)
    result = ops.gather(x.reshape(n, c, plane), 2, chosen).reshape(n, c, *out)
    chosen = chosen.reshape(n, c, *out)
    if unbatched:
        result, chosen = result.squeeze(0), chosen.squeeze(0)
    return (result, chosen) if return_indices else result


def _choose(x: Tensor, samples: Tensor, dims: int, sizes: tuple, kernel: tuple,
            out: tuple) -> Tensor:
    """(N, C, count) int64: each window's maximum's flat position in its plane."""
    n, c = x.shape[0], x.shape[1]
    plane, count, window = math.prod(sizes), math.prod(out), math.prod(kernel)
    # torch's sample order: (W, H) in 2-d, (T, H, W) in 3-d
    which = (1, 0) if dims == 2 else (0, 1, 2)
    with no_grad():
        index = None                    # (N, C, *out, *kernel): flat positions in a plane
        stride = plane
        for d in range(dims):
            stride //= sizes[d]
            starts = _intervals(samples[..., which[d]], sizes[d], out[d], kernel[d])
            pos = starts.unsqueeze(-1) + ops.arange(kernel[d], dtype=D.int64,
                                                    device=x.device)        # (N, C, o, k)
            shape = [n, c] + [1] * (2 * dims)
            shape[2 + d], shape[2 + dims + d] = out[d], kernel[d]
            term = pos.reshape(shape) * stride
            index = term if index is None else index + term
        index = index.reshape(n, c, count * window)
        flat = x.reshape(n, c, plane)
        values = ops.gather(flat, 2, index).reshape(n, c, count, window)
        first = ops.argmax(values, -1, keepdim=True)
        nan = values != values
        last_nan = (window - 1) - ops.argmax(ops.flip(nan, (-1,)).to(D.int32), -1,
                                             keepdim=True)
        local = ops.where(ops.any(nan, -1, keepdim=True), last_nan, first)
        return ops.gather(index.reshape(n, c, count, window), -1, local).reshape(n, c, count)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Max over (kH, kW) windows of (N, C, H, W) (or (C, H, W)) at pseudo-random starts
    giving an output of ``output_size`` (oH, oW) or ``output_ratio`` of the input;
    ``_random_samples`` (N, C, 2) in [0, 1) fixes the starts (drawn from ember's generator
    otherwise); with ``return_indices`` also each maximum's flat index into its (H*W) plane.

    PyTorch
    -------
    ``torch.nn.functional.fractional_max_pool2d``
    """
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """fractional_max_pool2d over (kT, kH, kW) windows of (N, C, T, H, W) (or (C, T, H, W));
    ``_random_samples`` (N, C, 3); indices into the (T*H*W) volume.

    PyTorch
    -------
    ``torch.nn.functional.fractional_max_pool3d``
    """
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


class _FractionalMaxPoolNd(Module):
    dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _sizes(name, kernel_size, self.dims, "kernel_size")
        if any(k <= 0 for k in self.kernel_size):
            raise EmberValueError(f"{name}: kernel_size must be greater than 0, but got "
                                  f"{kernel_size}")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _sizes(
            name, output_size, self.dims, "output_size")
        self.output_ratio = None if output_ratio is None else _sizes(
            name, output_ratio, self.dims, "output_ratio")
        if output_size is None and output_ratio is None:
            raise EmberValueError(f"{name} requires specifying either an output size, or a "
                                  f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise EmberValueError(f"{name}: only one of output_size and output_ratio may be "
                                  f"specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise EmberValueError(f"{name}: output_ratio must be between 0 and 1 (got "
                                  f"{output_ratio})")

    def forward(self, input: Tensor):
        pool = F.fractional_max_pool2d if self.dims == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (kH, kW) windows (see F.fractional_max_pool2d).

    PyTorch
    -------
    ``torch.nn.FractionalMaxPool2d``
    """

    dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (kT, kH, kW) windows (see F.fractional_max_pool3d).

    PyTorch
    -------
    ``torch.nn.FractionalMaxPool3d``
    """

    dims = 3
