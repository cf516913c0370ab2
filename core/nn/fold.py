"""Fold and Unfold layers (torch.nn.modules.fold): sliding local blocks of a batched image
to columns and back, over nn.functional's unfold and fold."""
from __future__ import annotations

from ..ops import fold, unfold
from ..tensor import Tensor
from .module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Extract sliding local blocks of (N, C, H, W) into (N, C * prod(kernel_size), L)
    columns (:func:`ember.nn.functional.unfold`).

    PyTorch
    -------
    ``torch.nn.Unfold``
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum (N, C * prod(kernel_size), L) columns back into (N, C, *output_size), adding
    overlapping values (:func:`ember.nn.functional.fold`).

    PyTorch
    -------
    ``torch.nn.Fold``
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
