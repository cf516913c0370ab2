"""Normalisation layers and their functional forms (torch.nn.modules.normalization, batchnorm).

BatchNorm1d/2d, LayerNorm, GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm, and
batch_norm, layer_norm, group_norm, instance_norm, rms_norm, local_response_norm, normalize."""
from __future__ import annotations

import math
import warnings

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..autograd.grad_mode import no_grad
from ..dtypes import finfo
from ..errors import EmberValueError, NotInEmberError, ShapeError
from ..functional.nn import (
    _trailing_dims,
    _trailing_shape,
    batch_norm_stats,
    layer_norm_stats,
    native_group_norm,
)
from ..tensor import Tensor
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm",
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]


# -- functional forms ---------------------------------------------------------------------


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) by batch statistics (training; the running ones are
    updated in place) or by the running statistics (eval).

    PyTorch
    -------
    ``torch.nn.functional.batch_norm``
    """
    if input.ndim == 1 and input._data.size == 0:
        return input * 0             # torch answers an empty 1-D input with an empty output
    if input.ndim < 2:
        raise ShapeError(f"batch_norm: expected an input with a channel dim (N, C, ...), got "
                         f"shape {tuple(input.shape)}")
    c = input._data.shape[1]
    if training:
        if input.numel() == 0:
            # torch: an empty batch normalises to an empty output (in the graph, zero
            # gradient for weight and bias) and leaves the running statistics as they are
            shape = (c,) + (1,) * (input.ndim - 2)
            out = input * 0
            if weight is not None:
                out = out * weight.reshape(shape)
            return out if bias is None else out + bias.reshape(shape)
        if input.numel() // c <= 1:
            raise EmberValueError(f"batch_norm: expected more than 1 value per channel when "
                                  f"training, got input size {list(input.shape)}")
    return batch_norm_stats(input, weight, bias, running_mean, running_var, training,
                            momentum, eps)[0]


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last len(normalized_shape) dims.

    PyTorch
    -------
    ``torch.nn.functional.layer_norm``
    """
    if _amp and amp_policy.on("layer_norm"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "layer_norm", layer_norm, input, normalized_shape, weight, bias, eps)
    return layer_norm_stats(input, normalized_shape, weight, bias, eps)[0]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels of each sample.

    PyTorch
    -------
    ``torch.nn.functional.group_norm``
    """
    if _amp and amp_policy.on("group_norm"):      # autocast (amp_policy.py)
        return amp_policy.call("group_norm", group_norm, input, num_groups, weight, bias, eps)
    if input.ndim < 2:
        raise ShapeError(f"group_norm: expected an input (N, C, ...), got shape "
                         f"{tuple(input.shape)}")
    n, c = input._data.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise EmberValueError(f"group_norm: expected the number of channels ({c}) to be "
                              f"divisible by num_groups ({num_groups})")
    return native_group_norm(input, weight, bias, n, c, math.prod(input._data.shape[2:]),
                             num_groups, eps)[0]


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims (torch's instance_norm:
    running statistics, when given, follow the mean over the batch of the per-instance
    mean and unbiased variance).

    PyTorch
    -------
    ``torch.nn.functional.instance_norm``
    """
    if input.ndim < 3:
        raise ShapeError(f"instance_norm: expected an input (N, C, ...) with at least one "
                         f"spatial dim, got shape {tuple(input.shape)}")
    c = input._data.shape[1]
    dims = tuple(range(2, input.ndim))
    shape = (1, c) + (1,) * (input.ndim - 2)
    if use_input_stats:
        mean = ops.sum(input, dims, keepdim=True) / _count(input, dims)
        centered = input - mean
        var = ops.sum(centered * centered, dims, keepdim=True) / _count(input, dims)
        count = _count(input, dims)
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.detach().mean(0).reshape(c) *
                                                     momentum)
            if running_var is not None:
                unbiased = var.detach() * (count / max(count - 1, 1))
                running_var.mul_(1 - momentum).add_(unbiased.mean(0).reshape(c) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise EmberValueError("instance_norm: use_input_stats=False needs running_mean "
                                  "and running_var")
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
        centered = input - mean
    out = centered * ops.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


def _count(x, dims) -> int:
    n = 1
    for d in dims:
        n *= x._data.shape[d]
    return n


def _eps(eps, dtype) -> float:
    return float(finfo(dtype).eps) if eps is None else eps


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, times weight; eps
    None means the dtype's machine epsilon, as in torch.

    PyTorch
    -------
    ``torch.nn.functional.rms_norm``
    """
    if _amp and amp_policy.on("rms_norm"):      # autocast (amp_policy.py)
        return amp_policy.call("rms_norm", rms_norm, input, normalized_shape, weight, eps)
    dims, count = _trailing_dims(input, normalized_shape, "rms_norm")
    # half precision in float32 and rounded once, as torch's (squares past 256 overflow
    # float16); eps is the input dtype's
    x = input.float() if input._dtype in (D.float16, D.bfloat16) else input
    out = x * ops.rsqrt(ops.sum(x * x, dims, keepdim=True) / count + _eps(eps, input._dtype))
    out = out.to(input._dtype) if x is not input else out
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels) ** beta, the
    window zero-padded at the channel ends and always divided by size (as torch).

    PyTorch
    -------
    ``torch.nn.functional.local_response_norm``
    """
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected 3D or higher dimensionality input "
                         f"(got {input.ndim} dimensions)")
    if not isinstance(size, int) or size < 1:
        raise EmberValueError(f"local_response_norm: size must be a positive int, got "
                              f"{size!r}")
    if input.numel() == 0:
        return input
    n, c = input.shape[0], input.shape[1]
    sq = (input * input).reshape(n, c, -1)
    padded = ops.pad(sq, (0, 0, size // 2, (size - 1) // 2))
    # the window sum as `size` shifted slices: size is small (torch programs use 2..5)
    total = padded[:, 0:c]
    for j in range(1, size):
        total = total + padded[:, j:j + c]
    div = (total.reshape(input.shape) * (alpha / size) + k) ** beta
    return input / div


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x divided by its p-norm along dim (at least eps).

    PyTorch
    -------
    ``torch.nn.functional.normalize``
    """
    if p == 2:
        a = input.abs() if input._dtype.category == D.COMPLEX else input     # |x|: a real norm
        half = a._dtype in (D.float16, D.bfloat16)   # torch's norm accumulates in float32
        a = a.float() if half else a
        norm = ops.sqrt(ops.sum(a * a, dim, keepdim=True))
        norm = norm.to(input._dtype) if half else norm
    else:
        # p = 0 (count of nonzeros), inf, -inf and the rest: linalg.vector_norm, as torch
        from ..linalg.norms import vector_norm
        norm = vector_norm(input, p, dim, keepdim=True)
    return input / _clamp_min(norm, eps)


def _clamp_min(x: Tensor, low: float) -> Tensor:
    return ops.where(x < low, low, x)


# -- modules ------------------------------------------------------------------------------


class _NormBase(Module):
    """What batch and instance norms share (torch's _NormBase): resetting, the repr."""

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

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
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


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L).

    PyTorch
    -------
    ``torch.nn.BatchNorm1d``
    """

    _accepted = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W).

    PyTorch
    -------
    ``torch.nn.BatchNorm2d``
    """

    _accepted = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W).

    PyTorch
    -------
    ``torch.nn.BatchNorm3d``
    """

    _accepted = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose training statistics PyTorch gathers over the processes of
    process_group.  With one process (ember.distributed not initialised, or a group of
    one), and in eval mode, it is BatchNorm over any (N, C, ...) input, as PyTorch's;
    synchronising the statistics of several processes is not in ember (it raises).

    PyTorch
    -------
    ``torch.nn.SyncBatchNorm``
    """

    _accepted = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        if self.training and self._world_size() > 1:
            raise NotInEmberError(
                "SyncBatchNorm: ember does not synchronise batch statistics across "
                f"{self._world_size()} processes; use BatchNorm (each process normalises "
                "its own batch) or train in one process")
        return super().forward(input)

    def _world_size(self) -> int:
        import sys
        dist = sys.modules.get("ember.distributed")   # never initialised if never imported
        if dist is None or not dist.is_initialized():
            return 1
        return dist.get_world_size(self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """module with every BatchNorm*d in it replaced by a SyncBatchNorm holding the same
        parameters and running statistics (module itself if it is one)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims, with a per-element affine.

    PyTorch
    -------
    ``torch.nn.LayerNorm``
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _trailing_shape(normalized_shape)
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
    """Normalise groups of channels per sample, with a per-channel affine.

    PyTorch
    -------
    ``torch.nn.GroupNorm``
    """

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


class _InstanceNorm(_NormBase):
    """Normalise each channel of each sample over its spatial dims (torch's defaults: no
    affine, no running statistics)."""

    dims = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine(self, affine, bias, num_features, dtype, device)
        _running_stats(self, track_running_stats, num_features, dtype, device)
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        unbatched = input.ndim == self.dims + 1
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ShapeError(f"{type(self).__name__}: expected a {self.dims + 1}-D or "
                             f"{self.dims + 2}-D input, got shape {tuple(input.shape)}")
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features:
            dim = 0 if unbatched else 1
            if self.affine:
                raise ShapeError(f"{type(self).__name__}: expected input's size at dim={dim} "
                                 f"to match num_features ({self.num_features}), but got: "
                                 f"{x.shape[1]}.")
            # without affine parameters num_features is not used (torch warns)
            warnings.warn(f"input's size at dim={dim} does not match num_features. You can "
                          "silence this warning by not passing in num_features, which is not "
                          "used because affine=False", stacklevel=2)
        # torch's instance norms keep num_batches_tracked (for state dicts) but never count
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum,
                              self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over each sample's channels of a 3-D input
    ``(N, C, L)`` (or without N), with optional
    affine parameters and running statistics.

    PyTorch
    -------
    ``torch.nn.InstanceNorm1d``
    """
    dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over each sample's channels of a 4-D input
    ``(N, C, H, W)`` (or without N), with optional
    affine parameters and running statistics.

    PyTorch
    -------
    ``torch.nn.InstanceNorm2d``
    """
    dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over each sample's channels of a 5-D input
    ``(N, C, D, H, W)`` (or without N), with optional
    affine parameters and running statistics.

    PyTorch
    -------
    ``torch.nn.InstanceNorm3d``
    """
    dims = 3


# -- lazy batch and instance norms: num_features inferred at the first forward -------------


class _LazyNormBase(LazyModuleMixin):
    """What the lazy norms share (torch's _LazyNormBase); affine and running statistics
    are on by default, as torch's (for the instance norms too)."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = ops.tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """num_features = input.shape[1] (torch's, for the instance norms too);
        materialize and initialize the weight, bias and running statistics."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose num_features is inferred from the first input (dim 1); it then
    becomes a BatchNorm1d.

    PyTorch
    -------
    ``torch.nn.LazyBatchNorm1d``
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose num_features is inferred from the first input (dim 1); it then
    becomes a BatchNorm2d.

    PyTorch
    -------
    ``torch.nn.LazyBatchNorm2d``
    """

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A BatchNorm3d whose num_features is inferred from the first input (dim 1); it then
    becomes a BatchNorm3d.

    PyTorch
    -------
    ``torch.nn.LazyBatchNorm3d``
    """

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An InstanceNorm1d whose num_features is inferred from the first input (dim 1); it
    then becomes an InstanceNorm1d.

    PyTorch
    -------
    ``torch.nn.LazyInstanceNorm1d``
    """

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An InstanceNorm2d whose num_features is inferred from the first input (dim 1); it
    then becomes an InstanceNorm2d.

    PyTorch
    -------
    ``torch.nn.LazyInstanceNorm2d``
    """

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An InstanceNorm3d whose num_features is inferred from the first input (dim 1); it
    then becomes an InstanceNorm3d.

    PyTorch
    -------
    ``torch.nn.LazyInstanceNorm3d``
    """

    cls_to_become = InstanceNorm3d


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


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing normalized_shape dims.

    PyTorch
    -------
    ``torch.nn.RMSNorm``
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _trailing_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ops.empty(*self.normalized_shape, dtype=dtype,
                                              device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
                f"{self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalisation across channels (see local_response_norm).

    PyTorch
    -------
    ``torch.nn.LocalResponseNorm``
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
