"""Fetching one batch of a dataset: in the loading process or in a worker (_workers.py).
"""
from __future__ import annotations

import numpy as np

from ...ops.creation import from_host
from ...ops.index import mark_in_range, take_along
from ._collate import default_collate
from .dataset import IterableDataset, Subset, TensorDataset


def _rows_fast(dataset, indices):
    """A (Subset of a) TensorDataset batch gathered in one indexing op per tensor, or None.

    Equal to default_collate of the samples, without one getitem and stack per sample.
    """
    while isinstance(dataset, Subset):
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not dataset.tensors:
        return None
    values = np.asarray(indices, dtype=np.int64)
    size = len(dataset.tensors[0])
    if values.size and (values.min() < -size or values.max() >= size):
        return None                   # the samples one by one: their error names the index
    values = np.where(values < 0, values + size, values)
    index = from_host(values, "cpu")
    # checked here, on the host: on a device the check cost two reductions and two waits;
    # take_along (index_select's gather): what t[index] gathers, without getitem's key
    # planning (18 -> 10 us a tensor for a batch of one)
    return [take_along(t, mark_in_range(index.to(t.device), size), 0) for t in
            dataset.tensors]


class _Fetcher:
    """Turns one batch of indices (or the next items of a stream) into a collated batch."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool,
                 batch_size: int | None):
        self.dataset, self.auto, self.collate_fn = dataset, auto_collation, collate_fn
        self.drop_last, self.batch_size = drop_last, batch_size
        self.stream = iter(dataset) if isinstance(dataset, IterableDataset) else None
        self.at = None     # the dataset index being loaded (or _COLLATE), for where()

    def fetch(self, indices):
        self.at = None
        if self.stream is not None:
            if not self.auto:
                return self.collate_fn(next(self.stream))
            items = []
            for item in self.stream:
                items.append(item)
                if len(items) == self.batch_size:
                    break
            if not items or (self.drop_last and len(items) < self.batch_size):
                raise StopIteration
            return self.collate_fn(items)
        if not self.auto:
            return self.collate_fn(self.dataset[indices])
        if self.collate_fn is default_collate:
            rows = _rows_fast(self.dataset, indices)
            if rows is not None:
                return rows
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            samples = getitems(indices)
        else:
            samples = []
            for i in indices:
                self.at = i
                samples.append(self.dataset[i])
        self.at = _COLLATE
        return self.collate_fn(samples)

    def where(self, indices) -> str:
        """What fetch(indices) was loading when it raised, in words for the error."""
        if self.stream is not None:
            return "the next items of its IterableDataset"
        if not self.auto:
            return f"dataset[{indices!r:.100}]"
        batch = f"{indices!r:.200}"
        if self.at is _COLLATE:
            return f"the collate_fn of the batch of dataset indices {batch}"
        if self.at is None:
            return f"the batch of dataset indices {batch}"
        return f"dataset[{self.at!r:.100}] (in the batch of dataset indices {batch})"


_COLLATE = object()
