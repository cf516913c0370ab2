"""Normalisation layers: BatchNorm1d/2d (running statistics), LayerNorm, GroupNorm."""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..errors import EmberValueError, ShapeError
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    _accepted: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine(self, affine, bias, num_features, dtype, device)
        _running_stats(self, track_running_stats, num_features, dtype, device)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._accepted:
            raise ShapeError(f"{type(self).__name__}: expected a "
                             f"{' or '.join(f'{d}-D' for d in self._accepted)} input, got "
                             f"shape {tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise ShapeError(f"{type(self).__name__}: expected {self.num_features} channels "
                             f"(dim 1), got input of shape {tuple(input.shape)}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:            # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L)."""

    _accepted = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W)."""

    _accepted = (4,)


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims, with a per-element affine."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ops.ones(self.normalized_shape, dtype=dtype,
                                             device=device))
            if bias:
                self.bias = Parameter(ops.zeros(self.normalized_shape, dtype=dtype,
                                                device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise groups of channels per sample, with a per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise EmberValueError(f"GroupNorm: num_channels ({num_channels}) must be "
                                  f"divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine(self, affine, bias, num_channels, dtype, device)
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(Module):
    """Normalise each channel of each sample over its spatial dims (torch's defaults: no
    affine, no running statistics)."""

    dims = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine(self, affine, True, num_features, dtype, device)
        if affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)
        _running_stats(self, track_running_stats, num_features, dtype, device)

    def forward(self, input: Tensor) -> Tensor:
        unbatched = input.ndim == self.dims + 1
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ShapeError(f"{type(self).__name__}: expected a {self.dims + 1}-D or "
                             f"{self.dims + 2}-D input, got shape {tuple(input.shape)}")
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features:
            raise ShapeError(f"{type(self).__name__}: expected {self.num_features} channels, "
                             f"got input of shape {tuple(input.shape)}")
        # torch's instance norms keep num_batches_tracked (for state dicts) but never count
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum,
                              self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    dims = 1


class InstanceNorm2d(_InstanceNorm):
    dims = 2


class InstanceNorm3d(_InstanceNorm):
    dims = 3


def _running_stats(module: Module, track: bool, n: int, dtype, device) -> None:
    """Register running_mean, running_var and num_batches_tracked (None when not tracked),
    in torch's order, so state dicts match."""
    module.register_buffer("running_mean", ops.zeros(n, dtype=dtype, device=device)
                           if track else None)
    module.register_buffer("running_var", ops.ones(n, dtype=dtype, device=device)
                           if track else None)
    module.register_buffer("num_batches_tracked", ops.tensor(0, dtype=D.int64, device=device)
                           if track else None)


def _affine(module: Module, affine: bool, bias: bool, n: int, dtype, device) -> None:
    """Register a normalisation layer's weight and bias (None where switched off)."""
    def make():
        return Parameter(ops.empty(n, dtype=dtype, device=device))
    module.register_parameter("weight", make() if affine else None)
    module.register_parameter("bias", make() if affine and bias else None)
