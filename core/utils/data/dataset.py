"""Datasets (torch.utils.data.dataset): map-style and iterable, tensors, concatenation,
subsets and random_split."""
from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar

from ...errors import EmberTypeError, EmberValueError, ShapeError
from ...ops.creation import Generator, from_host, randperm
from ...tensor import Tensor

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define __getitem__(index) and usually __len__.

    PyTorch
    -------
    ``torch.utils.data.Dataset``
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define __iter__.

    With worker processes each worker iterates its own copy; use get_worker_info() in
    __iter__ to give each worker its share, or every sample arrives num_workers times.

    PyTorch
    -------
    ``torch.utils.data.IterableDataset``
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are the rows of tensors that share their first dimension.

    PyTorch
    -------
    ``torch.utils.data.TensorDataset``
    """

    def __init__(self, *tensors: Tensor):
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise EmberTypeError(f"TensorDataset: argument {i} is a {type(t).__name__}; "
                                     "expected ember tensors (wrap arrays with ember.tensor)")
            if t.ndim == 0:
                raise ShapeError(f"TensorDataset: argument {i} is 0-d; expected tensors with "
                                 "a first dimension to index samples along")
        if tensors and any(len(t) != len(tensors[0]) for t in tensors):
            raise ShapeError(
                "TensorDataset: size mismatch between tensors: first dimensions are "
                f"{[len(t) for t in tensors]}; expected one length for all")
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0]) if self.tensors else 0

    # Spawned workers receive the dataset by pickle: host arrays (NumPy pickles them
    # without a copy of its own).  Only CPU tensors: workers never touch accelerators.
    def __getstate__(self):
        for t in self.tensors:
            if t.device.type != "cpu":
                raise EmberTypeError(
                    f"TensorDataset: a tensor on {t.device} cannot be sent to DataLoader "
                    "worker processes; keep datasets on the CPU and move each batch to "
                    "the device in the training loop (batch.to(device))")
        return {"arrays": [t.detach().numpy() for t in self.tensors]}

    def __setstate__(self, state):
        self.tensors = tuple(from_host(a, "cpu") for a in state["arrays"])


class ConcatDataset(Dataset):
    """Several map-style datasets, one after the other.

    PyTorch
    -------
    ``torch.utils.data.ConcatDataset``
    """

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise EmberValueError("ConcatDataset: expected at least one dataset, got none")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise EmberTypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"ConcatDataset: index out of range for length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Several iterable datasets, one after the other (the streams' ConcatDataset).

    PyTorch
    -------
    ``torch.utils.data.ChainDataset``
    """

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise EmberTypeError("ChainDataset only supports IterableDataset, got "
                                     f"{type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise EmberTypeError("ChainDataset only supports IterableDataset, got "
                                     f"{type(d).__name__}")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Samples that gather the same index of several datasets of one length: a tuple
    (positional datasets) or a dict (keyword datasets).

    PyTorch
    -------
    ``torch.utils.data.StackDataset``
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset):
        if args and kwargs:
            raise EmberValueError("StackDataset: supported either tuple-like (positional "
                                  "datasets) or dict-like (keyword datasets) samples, not "
                                  "both")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise EmberValueError("StackDataset: at least one dataset should be passed")
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise EmberValueError("StackDataset: size mismatch between datasets: "
                                  f"{[len(d) for d in datasets]}")
        self.datasets = args if args else dict(kwargs)

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list):
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


class Subset(Dataset):
    """The samples of a dataset at the given indices.

    PyTorch
    -------
    ``torch.utils.data.Subset``
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = [int(i) for i in indices]

    def __getitem__(self, index):
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths, or fractions summing to 1.

    Fractions are floored and the remainder handed out one by one from the first split
    (PyTorch's rule).  generator: a seeded ember.Generator for a reproducible split.

    PyTorch
    -------
    ``torch.utils.data.random_split``
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths):
        if not math.isclose(sum(lengths), 1.0, abs_tol=1e-9) or any(x < 0 for x in lengths):
            raise EmberValueError(f"random_split: fractions must be >= 0 and sum to 1, got "
                                  f"{lengths} (sum {sum(lengths)})")
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(not isinstance(x, numbers.Integral) or isinstance(x, bool) or x < 0
           for x in lengths):
        raise EmberValueError(f"random_split: lengths must be non-negative ints or fractions "
                              f"summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise EmberValueError(f"random_split: sum of lengths {sum(lengths)} does not equal "
                              f"the length of the dataset ({n}); give lengths summing to {n} "
                              "or fractions summing to 1")
    perm = randperm(n, generator=generator, device="cpu").tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start:start + length]))
        start += length
    return out
