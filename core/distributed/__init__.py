"""ember.distributed: process groups and collectives, as torch.distributed, on MPI (mpi4py)
and NCCL (CuPy); communication backends are plugins (hook `ember_process_groups`).

Start a job with `ember run -n 4 train.py` (or `mpiexec -n 4 python train.py`), then::

    import ember.distributed as dist
    dist.init_process_group()            # MPI, and NCCL for GPU tensors where it works
    dist.all_reduce(t)                   # t: a tensor of any device, summed in place

Before any data moves, every collective checks that the ranks called the same collective
with the same dtype, shape, reduction and root (one small nonblocking exchange; check.py):
where they differ, every rank raises CollectiveMismatchError naming each rank's call and
call site.  Every collective times out (init_process_group(timeout=...),
EMBER_DISTRIBUTED_TIMEOUT, default 600 s) with the ranks that did not arrive;
EMBER_DISTRIBUTED_DEBUG=1 also compares each collective's sequence number across the
ranks, blocking at every call.

ember.distributed.fsdp: FullyShardedDataParallel and fully_shard (parameters, gradients and
optimizer state sharded across the ranks); ember.distributed.checkpoint: sharded
checkpoints, loadable on any number of ranks (docs/fsdp.md).
"""
from __future__ import annotations

from .collectives import (
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .errors import CollectiveMismatchError, DistributedError, DistributedTimeoutError
from .group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_initialized,
    new_group,
)
from .work import Work

# torch.distributed.group, the class (group.WORLD): it takes the name of the group module,
# which stays importable as ember.distributed.group (sys.modules)
from .group import group  # noqa: E402,F811  isort: skip

__all__ = [
    "init_process_group", "destroy_process_group", "is_initialized", "is_available",
    "get_rank", "get_world_size", "get_backend", "get_process_group_ranks", "new_group",
    "GroupMember", "ProcessGroup", "Work", "ReduceOp", "group",
    "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter",
    "reduce_scatter_tensor", "reduce", "gather", "scatter", "barrier", "send", "recv",
    "isend", "irecv", "all_to_all", "all_to_all_single",
    "check_equivalence", "EquivalenceReport",
    "DistributedError", "DistributedTimeoutError", "CollectiveMismatchError",
]


def is_available() -> bool:
    """True: ember.distributed is part of every ember (backends come from plugins).

    PyTorch
    -------
    ``torch.distributed.is_available``
    """
    return True


def _all_gather_base(output_tensor, input_tensor, group=None, async_op: bool = False):
    """all_gather_into_tensor under torch's old private name (deprecated: a FutureWarning).

    PyTorch
    -------
    ``torch.distributed._all_gather_base``
    """
    import warnings
    warnings.warn("`torch.distributed._all_gather_base` is a private function and will be "
                  "deprecated. Please use `torch.distributed.all_gather_into_tensor` "
                  "instead.", FutureWarning, stacklevel=2)
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


class _ReduceOpAlias:
    """torch.distributed.reduce_op: ReduceOp's members under the deprecated name (each
    read of a member warns with a FutureWarning, as torch's; torch also warns when Python
    itself reads a dunder, isinstance's __class__, which ember does not)."""

    def __getattribute__(self, key: str):
        if key.startswith("__") and key != "__members__":
            return object.__getattribute__(self, key)    # isinstance, repr: no warning
        import warnings
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                      "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        if key == "__members__":
            return ReduceOp.__members__
        return getattr(ReduceOp, key)


reduce_op = _ReduceOpAlias()


def __getattr__(name: str):
    if name in ("check_equivalence", "EquivalenceReport"):
        from . import equivalence
        return getattr(equivalence, name)
    raise AttributeError(f"module 'ember.distributed' has no attribute {name!r}")
