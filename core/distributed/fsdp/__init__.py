"""Fully sharded data parallel (torch.distributed.fsdp): FullyShardedDataParallel (FSDP1's
wrapper) and fully_shard (FSDP2's in-place entry), on ember.distributed's collectives.

Each wrapped unit (a module chosen by `auto_wrap_policy`, a module passed to fully_shard,
and the root for what is left) flattens the parameters it owns into one flat vector, pads
it to a multiple of the group size and keeps only this rank's 1/N slice: the unit's
`_flat_param`, the parameter the optimizer sees and steps on (any ember optimizer: its
state is the size of the slice).  Around the unit's forward the full flat vector is
all-gathered and the module's parameters become views of it; after the forward it is freed
(FULL_SHARD; SHARD_GRAD_OP keeps it until the backward is done; NO_SHARD never shards).
Backward gathers it again from a hook on the unit's outputs, adds each parameter's
gradient into a flat gradient as the engine produces it (post-accumulate-grad hooks, the
original parameters' .grad stays None), and once the unit's last gradient is in, starts a
non-blocking reduce_scatter (NO_SHARD: all_reduce) of the flat gradient and frees the full
parameters; the last unit to finish waits for every reduction and writes each rank's
averaged slice into `_flat_param.grad`.

Overlap: every gather and reduction is a non-blocking MPI call progressed from the
engine's hooks; backward_prefetch=BACKWARD_PRE starts the next unit's all-gather when a
unit's backward starts, forward_prefetch=True the next unit's when a forward starts (the
order is the first iteration's).  `stats()` reports the time spent blocked on them.

The parameters of a unit are kept as they were (the same Tensor objects, moved out of
their modules' parameter lists into plain attributes): between iterations they have no
storage (shape (0,)), as torch's.  Use state_dict() (full or sharded, see
StateDictType) to read the weights.
"""
from __future__ import annotations

from ._fully_shard import FSDPModule, fully_shard
from .api import (
    BackwardPrefetch,
    CPUOffload,
    FullStateDictConfig,
    MixedPrecision,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictType,
)
from .fully_sharded_data_parallel import (  # noqa: F401 (the private two: tests, checkpoint)
    FullyShardedDataParallel,
    _load_state_dict,
    _state_dict,
    clip_grad_norm_,
)
from .wrap import ModuleWrapPolicy, size_based_auto_wrap_policy, transformer_auto_wrap_policy

__all__ = ["FullyShardedDataParallel", "fully_shard", "FSDPModule", "ShardingStrategy",
           "BackwardPrefetch", "StateDictType", "MixedPrecision", "CPUOffload",
           "FullStateDictConfig", "ShardedStateDictConfig", "ModuleWrapPolicy",
           "transformer_auto_wrap_policy", "size_based_auto_wrap_policy", "clip_grad_norm_"]
