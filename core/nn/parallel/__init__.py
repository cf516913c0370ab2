"""Data parallelism (ember.nn.parallel): DistributedDataParallel over ember.distributed."""
from __future__ import annotations

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
