"""Samplers (torch.utils.data.sampler): the order of dataset indices, and their batches."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Generic, TypeVar

import numpy as np

from ...dtypes import float64
from ...errors import EmberTypeError, EmberValueError
from ...ops.creation import Generator, _gen, randint, randperm, tensor

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)
_CHUNK = 1 << 16        # indices drawn at once by RandomSampler(replacement=True)


class Sampler(Generic[T_co]):
    """Yields dataset indices (or, for a batch sampler, lists of them).

    PyTorch
    -------
    ``torch.utils.data.Sampler``
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1.

    PyTorch
    -------
    ``torch.utils.data.SequentialSampler``
    """

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
    """A fresh random order each epoch; with replacement, independent draws.

    PyTorch
    -------
    ``torch.utils.data.RandomSampler``
    """

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
            # drawn in chunks: num_samples may be far more than fits in memory at once
            for start in range(0, self.num_samples, _CHUNK):
                count = min(_CHUNK, self.num_samples - start)
                yield from randint(0, n, (count,), generator=g, device="cpu").tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=g, device="cpu").tolist()
        yield from randperm(n, generator=g, device="cpu").tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order.

    PyTorch
    -------
    ``torch.utils.data.SubsetRandomSampler``
    """

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
    drop_last).

    PyTorch
    -------
    ``torch.utils.data.BatchSampler``
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise EmberValueError(f"BatchSampler: batch_size must be a positive int, got "
                                  f"{batch_size!r}")
        if not isinstance(drop_last, bool):
            raise EmberTypeError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list]:
        indices, size = iter(self.sampler), self.batch_size
        while True:                  # islice: no Python step per index
            batch = list(islice(indices, size))
            if not batch or (len(batch) < size and self.drop_last):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices drawn with P(i) proportional to weights[i]; with replacement
    they are independent draws, without it each index comes at most once.

    PyTorch
    -------
    ``torch.utils.data.WeightedRandomSampler``
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator: Generator | None = None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise EmberValueError(f"WeightedRandomSampler: num_samples must be a positive int, "
                                  f"got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise EmberTypeError(f"WeightedRandomSampler: replacement must be a bool, got "
                                 f"{replacement!r}")
        host = np.asarray(weights.tolist() if hasattr(weights, "tolist") else weights,
                          dtype=np.float64)
        if host.ndim != 1:
            raise EmberValueError(f"WeightedRandomSampler: weights must be a 1-d sequence, got "
                                  f"shape {host.shape}")
        if (host < 0).any() or not np.isfinite(host).all() or host.sum() <= 0:
            raise EmberValueError("WeightedRandomSampler: weights must be finite, >= 0 and not "
                                  "all zero")
        if not replacement and num_samples > np.count_nonzero(host):
            raise EmberValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples "
                                  f"without replacement from {np.count_nonzero(host)} "
                                  "non-zero weights")
        self.weights = tensor(host, dtype=float64)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator
        self._p = host / host.sum()

    def __iter__(self) -> Iterator[int]:
        # the draws come from the generator's stream (ember's global one without it), so
        # ember.manual_seed or a seeded Generator reproduces them; large counts go in chunks
        rng = _gen(self.generator)
        if not self.replacement:
            yield from rng.choice(len(self._p), self.num_samples, replace=False,
                                  p=self._p).tolist()
            return
        cdf = np.cumsum(self._p)
        for start in range(0, self.num_samples, _CHUNK):
            u = rng.random(min(_CHUNK, self.num_samples - start)) * cdf[-1]
            yield from np.minimum(np.searchsorted(cdf, u, side="right"),
                                  len(cdf) - 1).tolist()

    def __len__(self) -> int:
        return self.num_samples
