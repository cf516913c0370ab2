"""The DataLoader (torch.utils.data.dataloader): batches of a dataset, in this process or
in worker processes (_workers.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ...errors import EmberValueError
from ...ops.creation import Generator
from ._collate import default_collate, default_convert
from ._workers import WorkerInfo, get_worker_info
from .dataset import Dataset, IterableDataset
from .fetch import _Fetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert",
           "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)








# --- the loader ----------------------------------------------------------------------------


class DataLoader(Generic[T_co]):
    """Iterates a dataset in batches, optionally shuffled, optionally with worker processes.

    As torch.utils.data.DataLoader: batch_size=None turns batching off; sampler and
    batch_sampler replace the built-in ones; num_workers > 0 fetches in that many worker
    processes, each keeping prefetch_factor batches in flight (default 2); a worker's
    exception is re-raised here with its traceback; persistent_workers keeps the workers
    between epochs.  Workers start with the platform's multiprocessing method unless
    multiprocessing_context says otherwise ('fork', 'spawn', 'forkserver').  An exception
    while loading names the dataset index (or the batch's indices) it came from.
    pin_memory, pin_memory_device and in_order are accepted for PyTorch programs: batches
    are CPU tensors in ember's own memory (nothing to pin) and always come in order.

    Examples
    --------
    >>> import ember
    >>> from ember.utils.data import DataLoader, TensorDataset
    >>> data = TensorDataset(ember.arange(10.0), ember.arange(10))
    >>> [tuple(x.shape) for x, y in DataLoader(data, batch_size=4)]
    [(4,), (4,), (2,)]

    PyTorch
    -------
    ``torch.utils.data.DataLoader``
    """

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
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
        self.pin_memory, self.pin_memory_device = bool(pin_memory), pin_memory_device
        self.in_order = in_order
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
        """Stop persistent workers now (they also stop once neither the loader nor its
        iterator is referenced, as torch's: a thread stops them, see _workers._Reaper)."""
        if self._iterator is not None:
            self._iterator.shutdown()
            self._iterator = None


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
        try:
            return self._fetcher.fetch(indices)
        except StopIteration:
            raise
        except Exception as exc:
            if hasattr(exc, "add_note"):          # Python 3.11+
                exc.add_note(f"(raised in DataLoader while loading "
                             f"{self._fetcher.where(indices)})")
            raise

