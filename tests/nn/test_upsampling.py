"""Upsample, UpsamplingNearest2d/Bilinear2d and interpolate (nn.upsampling) against PyTorch."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import pytest
from nn_helpers import check_layer, rng

UPSAMPLE = [
    ((2, 3, 5, 7), dict(scale_factor=2)),
    ((2, 3, 5, 7), dict(size=(8, 3))),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=2, mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=(1.5, 0.6), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(size=(3, 11), mode="bilinear")),
    ((2, 3, 5, 7), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear")),
    ((1, 2, 4, 3, 2), dict(scale_factor=(2, 1, 3))),
]


@pytest.mark.parametrize("shape,kwargs", UPSAMPLE,
                         ids=[",".join(f"{k}={v}" for k, v in c.items()) for _, c in UPSAMPLE])
def test_upsample_matches_torch(torch, shape, kwargs):
    t, e = torch.nn.Upsample(**kwargs), nn.Upsample(**kwargs)
    assert repr(e) == repr(t)
    check_layer(torch, t, e, rng(f"upsample{kwargs}").standard_normal(shape))


def test_upsampling_modules_and_errors(torch):
    x = rng("upsampling").standard_normal((1, 2, 3, 4))
    for name in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
        check_layer(torch, getattr(torch.nn, name)(scale_factor=2),
                    getattr(nn, name)(scale_factor=2), x)
    with pytest.raises(ember.EmberError, match="'lanczos' is not in ember yet"):
        F.interpolate(ember.zeros(1, 1, 2, 2), scale_factor=2, mode="lanczos")
    with pytest.raises(ember.EmberError, match="exactly one of size and scale_factor"):
        F.interpolate(ember.zeros(1, 1, 2, 2))
    with pytest.raises(ember.EmberError, match="not meaningful with an explicit size"):
        F.interpolate(ember.zeros(1, 1, 2, 2), size=3, recompute_scale_factor=True)
    with pytest.raises(ember.ShapeError, match="needs 4-D input"):
        F.interpolate(ember.zeros(1, 1, 2), scale_factor=2, mode="bilinear")
