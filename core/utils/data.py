"""ember.utils.data: datasets, samplers, batch collation and the DataLoader (PyTorch's API).

`DataLoader(num_workers=N)` fetches batches in worker processes (see `_workers.py`);
ember tensors refuse to pickle, so workers send NumPy arrays and the parent rebuilds
CPU tensors.  Shuffling and splitting draw from a seeded `ember.Generator` when one is
given, otherwise from ember's global stream (`ember.manual_seed`).
"""
from __future__ import annotations

import bisect
import collections.abc as cabc
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..ops.creation import Generator, from_host, randint, randperm
from ..ops.movement import stack
from ..tensor import Tensor
from ._workers import WorkerError, WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "WorkerError", "WorkerInfo", "default_collate", "default_convert",
    "get_worker_info", "random_split",
]

T_co = TypeVar("T_co", covariant=True)


# --- datasets ------------------------------------------------------------------------------

class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define __getitem__(index) and usually __len__."""

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define __iter__.

    With worker processes each worker iterates its own copy; use get_worker_info() in
    __iter__ to give each worker its share, or every sample arrives num_workers times.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension."""

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

    # Spawned workers receive the dataset by pickle, and tensors refuse to pickle: send
    # host arrays instead.  Only CPU tensors: workers never touch accelerators.
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
    """Several map-style datasets, one after the other."""

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


class Subset(Dataset):
    """The samples of a dataset at the given indices."""

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


# --- samplers ------------------------------------------------------------------------------

class Sampler(Generic[T_co]):
    """Yields dataset indices (or, for a batch sampler, lists of them)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _draw_seed(generator: Generator | None) -> int:
    return int(randint(0, 2**62, (), generator=generator, device="cpu").item())


def _seeded(generator: Generator | None) -> Generator:
    # without a generator, draw a seed from the global stream so ember.manual_seed still
    # makes the order reproducible (PyTorch does the same)
    return generator if generator is not None else Generator().manual_seed(_draw_seed(None))


class RandomSampler(Sampler[int]):
    """A fresh random order each epoch; with replacement, independent draws."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None):
        if not isinstance(replacement, bool):
            raise EmberTypeError(f"RandomSampler: replacement must be a bool, got "
                                 f"{replacement!r}")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise EmberValueError(f"RandomSampler: num_samples must be a positive int, got "
                                  f"{num_samples!r}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = _seeded(self.generator)
        if self.replacement:
            yield from randint(0, n, (self.num_samples,), generator=g, device="cpu").tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=g, device="cpu").tolist()
        yield from randperm(n, generator=g, device="cpu").tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None):
        self.indices = list(indices)
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        perm = randperm(len(self.indices), generator=_seeded(self.generator), device="cpu")
        return iter([self.indices[i] for i in perm.tolist()])

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[list]):
    """Groups a sampler's indices into lists of batch_size (the last one shorter unless
    drop_last)."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise EmberValueError(f"BatchSampler: batch_size must be a positive int, got "
                                  f"{batch_size!r}")
        if not isinstance(drop_last, bool):
            raise EmberTypeError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


# --- collation -----------------------------------------------------------------------------

def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, as torch's default_collate.

    Tensors and NumPy arrays stack along a new first dim; Python floats become float64,
    ints int64 and bools bool tensors; dicts, namedtuples and sequences collate field by
    field (tuples come back as lists, as in PyTorch); strings stay a list.
    """
    if not batch:
        raise EmberValueError("default_collate: got an empty batch")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, (np.ndarray, np.number, np.bool_)):
        arrays = [np.asarray(b) for b in batch]
        if arrays[0].dtype.kind in "OUSV":
            raise EmberTypeError(f"default_collate: NumPy arrays of dtype {arrays[0].dtype} "
                                 "cannot become tensors; pass a collate_fn")
        _same_shapes([a.shape for a in arrays])
        return from_host(np.stack(arrays), "cpu")
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, bool):
        return from_host(np.array(batch, dtype=np.bool_), "cpu")
    if isinstance(elem, numbers.Integral):
        return from_host(np.array(batch, dtype=np.int64), "cpu")
    if isinstance(elem, numbers.Real):
        return from_host(np.array(batch, dtype=np.float64), "cpu")
    if isinstance(elem, cabc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, cabc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise ShapeError(f"default_collate: each sample in a batch must have the same "
                             f"number of fields; got {sorted({len(b) for b in batch})}")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise EmberTypeError(f"default_collate: batches must contain tensors, NumPy arrays, "
                         f"numbers, strings, dicts or lists; found {type(elem).__name__}. "
                         "Pass collate_fn= to build batches of other types")


def _same_shapes(shapes):
    for i, s in enumerate(shapes):
        if s != shapes[0]:
            raise ShapeError(f"default_collate: sample 0 has shape {tuple(shapes[0])} but "
                             f"sample {i} has shape {tuple(s)}; pad the samples to one "
                             "shape or pass a collate_fn")


def _stack_tensors(batch):
    first = batch[0]
    for i, t in enumerate(batch):
        if not isinstance(t, Tensor):
            raise EmberTypeError(f"default_collate: sample 0 is a tensor but sample {i} is a "
                                 f"{type(t).__name__}")
        if t.device is not first.device:
            raise EmberValueError(f"default_collate: sample 0 is on {first.device} but sample "
                                  f"{i} is on {t.device}; keep samples on one device")
    _same_shapes([t.shape for t in batch])
    return stack(batch, 0)


def default_convert(data: Any) -> Any:
    """NumPy arrays to tensors, recursively (the collate_fn when batch_size=None)."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUSV":
        return from_host(data, "cpu")
    if isinstance(data, cabc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(v) for v in data)
    return data


def _rows_fast(dataset, indices):
    """A (Subset of a) TensorDataset batch gathered in one indexing op per tensor, or None.

    Equal to default_collate of the samples, without one getitem and stack per sample.
    """
    while isinstance(dataset, Subset):
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not dataset.tensors:
        return None
    index = from_host(np.asarray(indices, dtype=np.int64), "cpu")
    return [t[index.to(t.device)] for t in dataset.tensors]


class _Fetcher:
    """Turns one batch of indices (or the next items of a stream) into a collated batch."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool,
                 batch_size: int | None):
        self.dataset, self.auto, self.collate_fn = dataset, auto_collation, collate_fn
        self.drop_last, self.batch_size = drop_last, batch_size
        self.stream = iter(dataset) if isinstance(dataset, IterableDataset) else None

    def fetch(self, indices):
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
        samples = getitems(indices) if getitems else [self.dataset[i] for i in indices]
        return self.collate_fn(samples)


# --- the loader ----------------------------------------------------------------------------

class DataLoader(Generic[T_co]):
    """Iterates a dataset in batches, optionally shuffled, optionally with worker processes.

    As torch.utils.data.DataLoader: batch_size=None turns batching off; sampler and
    batch_sampler replace the built-in ones; num_workers > 0 fetches in that many worker
    processes, each keeping prefetch_factor batches in flight (default 2); a worker's
    exception is re-raised here with its traceback; persistent_workers keeps the workers
    between epochs.  Workers start with the platform's multiprocessing method unless
    multiprocessing_context says otherwise ('fork', 'spawn', 'forkserver').
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
            raise EmberValueError(f"DataLoader: num_workers must be an int >= 0, got "
                                  f"{num_workers!r}")
        if timeout < 0:
            raise EmberValueError(f"DataLoader: timeout must be >= 0 seconds, got {timeout}")
        if num_workers == 0 and prefetch_factor is not None:
            raise EmberValueError("DataLoader: prefetch_factor only applies with "
                                  "num_workers > 0; drop it or start workers")
        if num_workers == 0 and persistent_workers:
            raise EmberValueError("DataLoader: persistent_workers=True needs num_workers > 0")
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 1):
            raise EmberValueError(f"DataLoader: prefetch_factor must be an int >= 1, got "
                                  f"{prefetch_factor!r}")
        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise EmberValueError(
                "DataLoader: an IterableDataset decides its own order; shuffle, sampler and "
                "batch_sampler do not apply to it")
        if sampler is not None and shuffle:
            raise EmberValueError("DataLoader: sampler and shuffle are mutually exclusive; "
                                  "shuffle inside the sampler")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise EmberValueError(
                    "DataLoader: batch_sampler is mutually exclusive with batch_size, "
                    "shuffle, sampler and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise EmberValueError("DataLoader: batch_size=None (no batching) is mutually "
                                  "exclusive with drop_last")
        elif batch_size is not None and (not isinstance(batch_size, int)
                                         or isinstance(batch_size, bool) or batch_size <= 0):
            raise EmberValueError(f"DataLoader: batch_size must be a positive int or None, "
                                  f"got {batch_size!r}")
        if not iterable and sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if not iterable and batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.timeout = num_workers, timeout
        self.worker_init_fn, self.generator = worker_init_fn, generator
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = 2 if num_workers and prefetch_factor is None else prefetch_factor
        self.persistent_workers = persistent_workers
        self._auto_collation = batch_sampler is not None or (iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _fetcher(self, dataset=None) -> _Fetcher:
        return _Fetcher(self.dataset if dataset is None else dataset, self._auto_collation,
                        self.collate_fn, self.drop_last, self.batch_size)

    def __iter__(self) -> Iterator[T_co]:
        # drawn on every path, so the shuffle order does not depend on num_workers
        base_seed = _draw_seed(self.generator)
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        from ._workers import MultiProcessIter
        if not self.persistent_workers:
            return MultiProcessIter(self, base_seed)
        if self._iterator is None or self._iterator.closed:
            self._iterator = MultiProcessIter(self, base_seed)
        else:
            self._iterator.reset()
        return self._iterator

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler)

    def close(self) -> None:
        """Stop persistent workers now (they also stop when the loader is collected)."""
        if self._iterator is not None:
            self._iterator.shutdown()
            self._iterator = None

    def __del__(self):
        if getattr(self, "_iterator", None) is not None:
            self._iterator.shutdown()


class _SingleProcessIter:
    """Batches fetched in this process, one at a time."""

    def __init__(self, loader: DataLoader):
        self._fetcher = loader._fetcher()
        index_sampler = loader._index_sampler
        self._indices = iter(index_sampler) if index_sampler is not None else None

    def __iter__(self):
        return self

    def __next__(self):
        indices = next(self._indices) if self._indices is not None else None
        return self._fetcher.fetch(indices)


# torch's paths to the sampler: ember.utils.data.distributed.DistributedSampler (importable
# too, though this module is no package) and ember.utils.data.DistributedSampler
from . import distributed_sampler as distributed  # noqa: E402
from .distributed_sampler import DistributedSampler  # noqa: E402, F401

__import__("sys").modules[__name__ + ".distributed"] = distributed
