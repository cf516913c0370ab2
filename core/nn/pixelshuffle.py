"""PixelShuffle and PixelUnshuffle: channels to space and back (sub-pixel convolution)."""
from __future__ import annotations

from ..errors import EmberValueError, ShapeError
from ..tensor import Tensor
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


def _check(name: str, input: Tensor, factor: int, what: str) -> None:
    if isinstance(factor, bool) or not isinstance(factor, int) or factor <= 0:
        raise EmberValueError(f"{name}: expected {what} to be a positive int, got {factor!r}")
    if input.ndim < 3:
        raise ShapeError(f"{name} expects input to have at least 3 dimensions, but got input "
                         f"with {input.ndim} dimension(s)")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes an r x r
    block of pixels (torch.nn.functional.pixel_shuffle).

    PyTorch
    -------
    ``torch.nn.functional.pixel_shuffle``
    """
    _check("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                         f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                         f"is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of pixel_shuffle.

    PyTorch
    -------
    ``torch.nn.functional.pixel_unshuffle``
    """
    _check("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle expects height ({h}) and width ({w}) to be "
                         f"divisible by downscale_factor ({r})")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


class PixelShuffle(Module):
    """Rearrange (*, C r^2, H, W) into (*, C, H r, W r).

    PyTorch
    -------
    ``torch.nn.PixelShuffle``
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange (*, C, H r, W r) into (*, C r^2, H, W).

    PyTorch
    -------
    ``torch.nn.PixelUnshuffle``
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels of (N, C, *) regrouped: C split into `groups` groups, interleaved.

    PyTorch
    -------
    ``torch.nn.functional.channel_shuffle``
    """
    if type(input) is not Tensor or input.ndim < 3:
        raise ShapeError("channel_shuffle expects input to have at least 3 dimensions, but "
                         f"got input with {input.ndim if type(input) is Tensor else 0} "
                         "dimension(s)")
    if groups <= 0:
        raise EmberValueError(f"Number of groups to divide channels in must be positive. "
                              f"Value of groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise ShapeError(f"Number of channels must be divisible by groups. Got {c} channels "
                         f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape(
        (n, c) + rest)


class ChannelShuffle(Module):
    """Regroup the channels of (N, C, *): C split into ``groups`` groups, interleaved
    (:func:`ember.nn.functional.channel_shuffle`).

    PyTorch
    -------
    ``torch.nn.ChannelShuffle``
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
