"""FSDP2 (torch.distributed.fsdp.fully_shard): shard a module in place."""
from __future__ import annotations

from ...errors import NotInEmberError
from ...nn.module import Module
from ...tensor import Tensor
from ..errors import DistributedError
from ..group import resolve
from ._units import _Unit, _unit_of
from .api import BackwardPrefetch, CPUOffload, MixedPrecision, ShardingStrategy, StateDictType
from .fully_sharded_data_parallel import (
    FullyShardedDataParallel,
    _load_state_dict,
    _no_keep_vars,
    _state_dict,
    clip_grad_norm_,
)

# --- FSDP2: fully_shard ------------------------------------------------------------------------

class FSDPModule:
    """What fully_shard mixes into a module's class (torch's FSDPModule)."""

    def unshard(self, async_op: bool = False):
        unit = self.__dict__["_fsdp_unit"]
        if async_op:
            unit.start_gather()
            return None
        unit.unshard()
        return None

    def reshard(self) -> None:
        self.__dict__["_fsdp_unit"].reshard()

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        """Clip the whole model's gradient norm (ember.distributed.fsdp.clip_grad_norm_;
        nn.utils.clip_grad_norm_ would see this rank's shards only)."""
        return clip_grad_norm_(self, max_norm, norm_type)

    def set_requires_gradient_sync(self, requires_gradient_sync: bool,
                                   *, recurse: bool = True) -> None:
        """False: gradients accumulate unsharded and unreduced (as FSDP1's no_sync), for
        every unit of the tree (recurse=True, torch's default)."""
        if not recurse:
            raise NotInEmberError("set_requires_gradient_sync(recurse=False): ember switches "
                                  "gradient reduction for the whole tree of fully_shard "
                                  "units at once; leave recurse out")
        self.__dict__["_fsdp_unit"].tree.sync = bool(requires_gradient_sync)

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """Each rank's FlatShard of every parameter, buffers whole (torch's DTensor state
        dict); get_model_state_dict(..., full_state_dict=True) gathers full tensors."""
        _no_keep_vars("FSDPModule", keep_vars)
        out = _state_dict(self, StateDictType.SHARDED_STATE_DICT)
        dest = destination if destination is not None else {}
        for k, v in out.items():
            dest[prefix + k] = v
        return dest

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False):
        if assign:
            raise NotInEmberError("FSDPModule.load_state_dict: assign=True is not in ember "
                                  "(the shards are copied into)")
        from ...nn.module import IncompatibleKeys
        missing, unexpected = _load_state_dict(self, state_dict, strict)
        return IncompatibleKeys(missing, unexpected)


def _fsdp2_call(self, *args, **kwargs):
    unit = self.__dict__["_fsdp_unit"]
    args, kwargs = unit.pre_forward(args, kwargs)
    out = Module.__call__(self, *args, **kwargs)
    return unit.post_forward(args, kwargs, out)


def fully_shard(module: Module, *, mesh=None, reshard_after_forward: bool | int = True,
                shard_placement_fn=None, mp_policy: MixedPrecision | None = None,
                offload_policy: CPUOffload | None = None, process_group=None):
    """FSDP2's entry: shard module's parameters (those not under an already sharded
    submodule) across the group, in place; module becomes an FSDPModule.  Call it on the
    layers first, then on the root.  reshard_after_forward=True is FULL_SHARD, False
    SHARD_GRAD_OP.  module.parameters() are then the flat shards, the optimizer's."""
    what = "fully_shard"
    if mesh is not None:
        raise NotInEmberError(f"{what}: a DeviceMesh is not in ember; pass process_group= "
                              "(default: the world group)")
    if shard_placement_fn is not None:
        raise NotInEmberError(f"{what}: shard_placement_fn is not in ember: each unit is "
                              "flattened and split evenly across the ranks")
    if not isinstance(reshard_after_forward, bool):
        raise NotInEmberError(f"{what}: reshard_after_forward={reshard_after_forward!r} (to "
                              "a smaller group) is not in ember; pass True or False")
    if not isinstance(module, Module) or isinstance(module, FullyShardedDataParallel):
        raise DistributedError(f"{what}: expected an ember nn.Module, got "
                               f"{type(module).__name__}")
    if _unit_of(module) is not None:
        raise DistributedError(f"{what}: {type(module).__name__} is already sharded")
    group = resolve(process_group)
    if group is None:
        raise DistributedError(f"{what}: this rank is not in process_group")
    strategy = (ShardingStrategy.FULL_SHARD if reshard_after_forward
                else ShardingStrategy.SHARD_GRAD_OP)
    unit = _Unit(module, group, strategy, mp_policy, offload_policy,
                 BackwardPrefetch.BACKWARD_PRE, False, False, False,
                 f"{what}({type(module).__name__})")
    module.__dict__["_fsdp_unit"] = unit
    if unit.shard is not None:
        module.__dict__["_parameters"]["_flat_param"] = unit.shard
    cls = type(module)
    module.__class__ = type(f"FSDP{cls.__name__}", (FSDPModule, cls),
                            {"__call__": _fsdp2_call})
    return module
