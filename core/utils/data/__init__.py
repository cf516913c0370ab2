"""ember.utils.data: datasets, samplers, batch collation and the DataLoader (PyTorch's API).

The submodules are torch's: `dataset`, `sampler`, `dataloader`, `distributed`.
`DataLoader(num_workers=N)` fetches batches in worker processes (see `_workers.py`);
workers send batches with tensors as NumPy arrays and the parent rebuilds CPU tensors.
Shuffling and splitting draw from a seeded `ember.Generator` when one is given, otherwise
from ember's global stream (`ember.manual_seed`).
"""
from __future__ import annotations

from ._collate import default_collate, default_convert
from ._workers import WorkerError, WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "StackDataset", "DataLoader", "Dataset",
    "DistributedSampler",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WorkerError", "WorkerInfo", "default_collate",
    "default_convert", "get_worker_info", "random_split", "WeightedRandomSampler",
]
