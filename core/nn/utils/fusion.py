"""Folding an eval-mode BatchNorm into the convolution or linear layer before it
(torch.nn.utils.fusion): one layer computing conv(x) then bn, with the same results."""
from __future__ import annotations

import copy

from ... import ops
from ...errors import EmberValueError
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The (weight, bias) of a convolution followed by an eval-mode batch norm.

    PyTorch
    -------
    ``torch.nn.utils.fusion.fuse_conv_bn_weights``
    """
    dtype = conv_w.dtype
    if conv_b is None:
        conv_b = ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = ops.zeros_like(bn_rm)
    inv = ops.rsqrt(bn_rv + bn_eps)
    shape = [1] * conv_w.ndim
    shape[1 if transpose else 0] = -1
    w = (conv_w * (bn_w * inv).reshape(shape)).to(dtype)
    b = ((conv_b - bn_rm) * inv * bn_w + bn_b).to(dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of conv (eval mode) with bn (eval mode) folded into its weight and bias.

    PyTorch
    -------
    ``torch.nn.utils.fusion.fuse_conv_bn_eval``
    """
    if conv.training or bn.training:
        raise EmberValueError("fuse_conv_bn_eval: fusion only for eval! (call .eval() on "
                              "both modules)")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise EmberValueError("fuse_conv_bn_eval: the batch norm keeps no running "
                              "statistics (track_running_stats=False)")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The (weight, bias) of a linear layer followed by an eval-mode batch norm.

    PyTorch
    -------
    ``torch.nn.utils.fusion.fuse_linear_bn_weights``
    """
    if linear_b is None:
        linear_b = ops.zeros_like(bn_rm)
    scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    w = linear_w * scale.unsqueeze(-1)
    b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of linear (eval mode) with bn (eval mode) folded into its weight and bias.

    PyTorch
    -------
    ``torch.nn.utils.fusion.fuse_linear_bn_eval``
    """
    if linear.training or bn.training:
        raise EmberValueError("fuse_linear_bn_eval: fusion only for eval! (call .eval() on "
                              "both modules)")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise EmberValueError("fuse_linear_bn_eval: to fuse, linear.out_features must equal "
                              "bn.num_features or bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise EmberValueError("fuse_linear_bn_eval: the batch norm keeps no running "
                              "statistics (track_running_stats=False)")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
