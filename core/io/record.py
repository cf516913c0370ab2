"""The record a checkpoint reader returns for each tensor: checked bytes, not yet placed."""
from __future__ import annotations

import numpy as np


class Saved:
    """A tensor read from a file and checked, not yet placed on a device."""

    __slots__ = ("array", "device", "requires_grad", "parameter", "key")

    def __init__(self, array: np.ndarray, device: str, requires_grad: bool, parameter: bool,
                 key):
        self.array, self.device, self.key = array, device, key
        self.requires_grad, self.parameter = requires_grad, parameter
