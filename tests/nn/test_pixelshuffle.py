"""PixelShuffle and PixelUnshuffle (nn.pixelshuffle) against PyTorch."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import check_layer, rng, to_numpy


@pytest.mark.parametrize("shape,factor", [((2, 8, 3, 2), 2), ((2, 1, 9, 2, 3), 3),
                                          ((4, 2, 2), 2)])
def test_pixel_shuffle_matches_torch(torch, shape, factor):
    r = rng(f"shuffle{shape}")
    t, e = torch.nn.PixelShuffle(factor), nn.PixelShuffle(factor)
    assert repr(e) == repr(t)
    check_layer(torch, t, e, r.standard_normal(shape))
    big = tuple(shape[:-3]) + (shape[-3] // factor ** 2, shape[-2] * factor,
                               shape[-1] * factor)
    tu, eu = torch.nn.PixelUnshuffle(factor), nn.PixelUnshuffle(factor)
    assert repr(eu) == repr(tu)
    check_layer(torch, tu, eu, r.standard_normal(big))
    x = ember.tensor(r.standard_normal(shape))
    np.testing.assert_array_equal(to_numpy(F.pixel_unshuffle(F.pixel_shuffle(x, factor),
                                                             factor)), to_numpy(x))


def test_pixel_shuffle_errors():
    with pytest.raises(ember.ShapeError, match="divisible by the square"):
        F.pixel_shuffle(ember.zeros(1, 6, 2, 2), 2)
    with pytest.raises(ember.ShapeError, match="at least 3 dimensions"):
        nn.PixelShuffle(2)(ember.zeros(4, 4))
    with pytest.raises(ember.ShapeError, match="divisible by downscale_factor"):
        F.pixel_unshuffle(ember.zeros(1, 1, 3, 4), 2)
    with pytest.raises(ember.EmberError, match="positive int"):
        F.pixel_shuffle(ember.zeros(1, 4, 2, 2), 0)
