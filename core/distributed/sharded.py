"""FlatShard: one rank's piece of a tensor in a sharded state dict (FSDP's
SHARDED_STATE_DICT, fully_shard's state_dict, ember.distributed.checkpoint)."""
from __future__ import annotations

from ..tensor import Tensor


class FlatShard:
    """Elements [start, start + local.numel()) of the row-major flattening of a tensor of
    `global_shape`: what FSDP's flat sharding gives each rank of each parameter.

    `local` is a 1-D tensor (a view of the rank's flat shard: writing into it, as
    ember.distributed.checkpoint.load does, writes into the model's shard)."""

    __slots__ = ("local", "global_shape", "start")

    def __init__(self, local: Tensor, global_shape, start: int):
        self.local = local
        self.global_shape = tuple(int(s) for s in global_shape)
        self.start = int(start)

    @property
    def stop(self) -> int:
        return self.start + self.local.numel()

    @property
    def dtype(self):
        return self.local.dtype

    def numel(self) -> int:
        n = 1
        for s in self.global_shape:
            n *= s
        return n

    def __repr__(self) -> str:
        return (f"FlatShard({self.local.dtype.name}, global shape {self.global_shape}, "
                f"elements [{self.start}, {self.stop}))")


__all__ = ["FlatShard"]
