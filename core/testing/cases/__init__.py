"""The conformance table: CASES, the rows of every op family module listed in FAMILIES.

A family module builds its own `ROWS` (a `_table.Rows`) and nothing else adds rows, so the
table is exactly the modules written out below, in that order.  A module of this package
left out of FAMILIES would drop its rows without a word: importing the package refuses
instead.  Modules whose name starts with `_` hold no rows (the row types, shared references).
"""
from __future__ import annotations

import pkgutil

from . import (
    complex_numbers,
    creation,
    elementwise,
    fft,
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
    nn_rnn,
    nn_sparse,
    nn_upsampling,
    products,
    reduce,
    shapes,
    sorting,
    special,
)
from ._table import COMPLEX_SPECIAL, SPECIAL, Input, OpCase

FAMILIES = (
    # torch.*, torch.linalg
    elementwise, reduce, movement, index, creation, linalg, shapes, inplace, sorting, products,
    special, complex_numbers, fft,
    # torch.nn, by torch.nn.modules family
    nn_activation, nn_linear, nn_conv, nn_pooling, nn_normalization, nn_padding, nn_sparse,
    nn_dropout, nn_attention, nn_loss, nn_distance, nn_upsampling, nn_pixelshuffle, nn_rnn,
)


def _unlisted() -> list[str]:
    """The row modules of this package that FAMILIES leaves out."""
    listed = {module.__name__.rpartition(".")[2] for module in FAMILIES}
    return sorted(name for _, name, _ in pkgutil.iter_modules(__path__)
                  if not name.startswith("_") and name not in listed)


if _unlisted():
    raise ImportError(f"ember.testing.cases: {', '.join(_unlisted())} not in FAMILIES "
                      f"({__file__}): their rows would not run; add them there")

CASES: list[OpCase] = [row for family in FAMILIES for row in family.ROWS]

__all__ = ["CASES", "FAMILIES", "SPECIAL", "COMPLEX_SPECIAL", "Input", "OpCase"]
