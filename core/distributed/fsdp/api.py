"""FSDP's configuration types (torch.distributed.fsdp.api): sharding strategies,
prefetch modes, state-dict types, mixed precision and CPU offload."""
from __future__ import annotations

import enum
from dataclasses import dataclass


class ShardingStrategy(enum.Enum):
    """What each rank keeps between a unit's forward and backward."""

    FULL_SHARD = 1          # parameters, gradients, optimizer state sharded (ZeRO-3)
    SHARD_GRAD_OP = 2       # full parameters kept from forward to backward (ZeRO-2)
    NO_SHARD = 3            # replicated: DDP through this API
    HYBRID_SHARD = 4
    _HYBRID_SHARD_ZERO2 = 5


class BackwardPrefetch(enum.Enum):
    BACKWARD_PRE = 1        # start the next unit's gather when a unit's backward starts
    BACKWARD_POST = 2       # ... when a unit's backward ends


class StateDictType(enum.Enum):
    FULL_STATE_DICT = 1
    LOCAL_STATE_DICT = 2
    SHARDED_STATE_DICT = 3


@dataclass
class MixedPrecision:
    """param_dtype: the dtype of the gathered parameters (forward and backward compute);
    reduce_dtype: the dtype gradients are reduced in (default param_dtype); buffer_dtype:
    buffers are cast to it.  The shards, their gradients and the optimizer stay in the
    parameters' own dtype."""

    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


@dataclass
class CPUOffload:
    """offload_params=True: shards, their gradients and so the optimizer state live in host
    memory; a unit's full parameters are copied to the compute device for its forward and
    backward.  A CPU model already holds everything in host memory: nothing moves."""

    offload_params: bool = False


@dataclass
class FullStateDictConfig:
    offload_to_cpu: bool = False
    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig:
    offload_to_cpu: bool = False
