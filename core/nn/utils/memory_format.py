"""Convolution weights in a memory format (torch.nn.utils.memory_format)."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        with no_grad():
            module.weight.data = module.weight.detach().contiguous(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weights of every Conv2d / ConvTranspose2d in module (recursively) in
    memory_format (channels_last: NHWC); returns module.

    PyTorch
    -------
    ``torch.nn.utils.convert_conv2d_weight_memory_format``
    """
    from ..conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """The same for Conv3d / ConvTranspose3d weights (channels_last_3d).

    PyTorch
    -------
    ``torch.nn.utils.convert_conv3d_weight_memory_format``
    """
    from ..conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
