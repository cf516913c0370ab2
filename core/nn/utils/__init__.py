"""Gradient clipping and parameter/vector conversion (ember.nn.utils)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

from ... import dtypes, ops
from ...autograd.grad_mode import no_grad
from ...errors import EmberValueError
from ...tensor import Tensor
from . import fusion, memory_format, parametrizations, parametrize, rnn
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .weight_norms import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "rnn", "fusion",
           "parametrize", "parametrizations",
           "memory_format", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format", "skip_init",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


_HALVES = (dtypes.float16, dtypes.bfloat16)


def _grads(parameters) -> list[Tensor]:
    if type(parameters) is Tensor:
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The norm of the tensors' norms (as if concatenated into one vector), a 0-d tensor.
    (foreach picks torch's multi-tensor kernel; ember computes the same values either
    way.)

    PyTorch
    -------
    ``torch.nn.utils.get_total_norm``
    """
    tensors = [tensors] if type(tensors) is Tensor else [t for t in tensors if t is not None]
    if not tensors:
        return ops.tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if norm_type == math.inf:
            per = [ops.amax(ops.abs(g)) for g in tensors]
            total = per[0] if len(per) == 1 else ops.amax(ops.stack(per))
        elif any(g.dtype in _HALVES for g in tensors):
            # torch's formula (each tensor's norm, then the norm of those): a half tensor's
            # norm accumulates in float32, where summing squares in float16 overflows
            from ...linalg.norms import vector_norm
            per = [vector_norm(g, norm_type) for g in tensors]
            total = per[0] if len(per) == 1 else vector_norm(
                ops.stack([p.to(per[0].dtype) for p in per]), norm_type)
        else:
            if norm_type == 2.0:
                # a real tensor's sum of squares as the dot product of its elements with
                # themselves (BLAS on the CPU: a 256x784 gradient in 12 us, (g * g).sum()
                # 52 us)
                per = [ops.sum(g * g) if g._dtype.category == dtypes.COMPLEX else
                       ops.matmul(f, f) for g in tensors for f in (g.reshape(-1),)]
            else:
                per = [ops.sum(ops.abs(g) ** norm_type) for g in tensors]
            total = per[0] if len(per) == 1 else ops.sum(ops.stack(per))
            total = total ** (1.0 / norm_type)
        if error_if_nonfinite and not bool(ops.isfinite(total).item()):
            raise EmberValueError(
                f"clip_grad_norm_: the total norm of order {norm_type} for gradients from "
                "`parameters` is non-finite, so it cannot be clipped. To disable this error "
                "and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale the gradients by max_norm / (total_norm + 1e-6) where that is below 1 (the
    second half of clip_grad_norm_, for a norm computed elsewhere).

    PyTorch
    -------
    ``torch.nn.utils.clip_grads_with_norm_``
    """
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        # a 0-d tensor, not a Python float: no device-to-host sync per step
        coef = max_norm / (total_norm + 1e-6)
        coef = ops.where(coef < 1.0, coef, 1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so their joint norm is at most max_norm; returns the
    norm before clipping (as torch.nn.utils.clip_grad_norm_)."""
    if type(parameters) is Tensor:
        parameters = [parameters]
    parameters = list(parameters)
    grads = _grads(parameters)
    if not grads:
        return ops.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) whose parameters torch leaves uninitialized (their
    values are unspecified there); ember never hands out uninitialized memory, so they
    hold the class's own initial values.  As torch's, the class must take a `device`
    keyword.

    PyTorch
    -------
    ``torch.nn.utils.skip_init``
    """
    import inspect

    from ..module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise EmberValueError(f"skip_init: expected a Module subclass, got {module_cls!r}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise EmberValueError("skip_init: the module must support a 'device' arg to skip "
                              "initialization")
    return module_cls(*args, **kwargs)


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """clip_grad_norm_ under its old name, which PyTorch deprecates with a FutureWarning
    (and so does ember)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened into one vector."""
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of vec into the parameters (in place)."""
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise EmberValueError(f"vector_to_parameters: expected a 1-D vector of {total} "
                              f"elements, got shape {tuple(vec.shape)}")
    with no_grad():
        start = 0
        for p in params:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(p.shape))
            start += n
