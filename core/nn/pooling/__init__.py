"""Pooling layers and their functional forms (torch.nn.modules.pooling), in three parts:

- `planar`: the 1-d and 2-d max, average and adaptive pools, each an unfold plus one
  reduction (max_pool2d a declared op with its own kernels);
- `composed`: the pools built from those: 3-d pools (the 2-d pool over each plane, then
  the same pool along depth), LP pools (an average of powers), adaptive max pooling in
  1-d, and unpooling (a scatter);
- `fractional`: fractional max pooling (windows at pseudo-random starts, a gather)."""
from __future__ import annotations

from . import composed, fractional, planar
from .composed import *  # noqa: F403
from .fractional import *  # noqa: F403
from .planar import *  # noqa: F403

__all__ = [*planar.__all__, *composed.__all__, *fractional.__all__]
