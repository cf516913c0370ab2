"""The conformance table: the rows of every op family, one module per family."""
from __future__ import annotations

from . import (  # noqa: F401  (each adds its rows)
    creation,
    elementwise,
    index,
    inplace,
    linalg,
    movement,
    nn_activation,
    nn_attention,
    nn_conv,
    nn_distance,
    nn_dropout,
    nn_linear,
    nn_loss,
    nn_normalization,
    nn_padding,
    nn_pixelshuffle,
    nn_pooling,
    nn_sparse,
    nn_upsampling,
    products,
    reduce,
    shapes,
    sorting,
)
from ._table import CASES, SPECIAL, Input, OpCase

__all__ = ["CASES", "SPECIAL", "Input", "OpCase"]
