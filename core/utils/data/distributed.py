"""DistributedSampler: each rank's share of a dataset (ember.utils.data.distributed)."""
from __future__ import annotations

import math
from collections.abc import Iterator

from ...errors import EmberValueError
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    """Rank `rank` of `num_replicas` gets every num_replicas-th index of one order.

    shuffle: the order is a permutation seeded from seed + epoch (call set_epoch(e) each
    epoch), the same on every rank.  Every rank gets the same number of indices: the
    order is padded with its own first indices (drop_last=False) or cut (drop_last=True).
    pad=False, for evaluation: every index exactly once over all ranks, so the first
    len(dataset) % num_replicas ranks get one more than the others.

    PyTorch
    -------
    ``torch.utils.data.DistributedSampler``
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False,
                 pad: bool = True):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_initialized():
                raise EmberValueError(
                    "DistributedSampler: pass num_replicas= and rank=, or call "
                    "ember.distributed.init_process_group() first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise EmberValueError(f"DistributedSampler: rank must be in [0, {num_replicas - 1}]"
                                  f" (num_replicas={num_replicas}), got {rank}")
        if drop_last and not pad:
            raise EmberValueError("DistributedSampler: drop_last=True and pad=False "
                                  "contradict; pad=False keeps every sample exactly once")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.pad = shuffle, seed, drop_last, pad
        self.epoch = 0
        n = len(dataset)
        if not pad:
            self.num_samples = len(range(rank, n, num_replicas))
            self.total_size = n
        elif drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
            self.total_size = self.num_samples * num_replicas
        else:
            self.num_samples = math.ceil(n / num_replicas)
            self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            from ...ops.creation import Generator, randperm
            g = Generator().manual_seed(self.seed + self.epoch)
            order = randperm(n, generator=g, device="cpu").tolist()
        else:
            order = list(range(n))
        if self.pad and not self.drop_last and len(order) < self.total_size:
            extra = self.total_size - len(order)
            order += (order * math.ceil(extra / max(len(order), 1)))[:extra]
        order = order[:self.total_size]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Shuffle differently each epoch (the same way on every rank)."""
        self.epoch = epoch
