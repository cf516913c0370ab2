"""FSDP1 (torch.distributed.fsdp.fully_sharded_data_parallel): the FullyShardedDataParallel
wrapper, its state dicts (full and sharded) and clip_grad_norm_ over the whole model."""
from __future__ import annotations

import contextlib

from ... import autograd
from ...errors import NotInEmberError
from ...nn.module import Module
from ...tensor import Tensor
from .. import collectives as C
from ..errors import DistributedError
from ..group import resolve
from ..sharded import FlatShard
from ._units import _modules, _Unit, _unit_of
from .api import BackwardPrefetch, CPUOffload, MixedPrecision, ShardingStrategy, StateDictType
from .wrap import _auto_wrap, _policy

# --- state dicts -------------------------------------------------------------------------------

def _walk(module: Module, prefix: str = ""):
    """(name prefix, module) for module and its descendants with the wrappers' own names
    left out (`_fsdp_wrapped_module.` is not in a key, as torch's)."""
    if isinstance(module, FullyShardedDataParallel):
        yield from _walk(module._fsdp_wrapped_module, prefix)
        return
    yield prefix, module
    for name, child in module.__dict__["_modules"].items():
        if child is not None:
            yield from _walk(child, f"{prefix}{name}.")


def _units_in(module: Module) -> list:
    out, seen = [], set()
    for m in _modules(module):
        unit = _unit_of(m)
        if unit is not None and id(unit) not in seen:
            seen.add(id(unit))
            out.append(unit)
    return out


def _unit_places(module: Module) -> dict:
    """(id(module), param name) -> (unit, index) for every sharded parameter."""
    places = {}
    for unit in _units_in(module):
        for i, (m, name) in enumerate(unit.places):
            places[(id(m), name)] = (unit, i)
        for m, name, i in unit.aliases:
            places[(id(m), name)] = (unit, i)
    return places


def _state_dict(module: Module, kind: StateDictType, offload: bool = False,
                rank0_only: bool = False) -> dict:
    """The model's weights under their original names: full tensors (collective: every unit
    is gathered) or each rank's FlatShard of every parameter."""
    from collections import OrderedDict
    units = _units_in(module)
    group = units[0].group if units else None
    places = _unit_places(module)
    names_of = {}
    for u in units:
        names_of.update(u.order_names)
    fulls: dict = {}
    if kind is StateDictType.FULL_STATE_DICT:
        with autograd.no_grad():
            for u in units:
                if u.shard is not None:
                    fulls[id(u)] = u.full_flat()
    elif kind is not StateDictType.SHARDED_STATE_DICT:
        raise NotInEmberError("FullyShardedDataParallel: LOCAL_STATE_DICT (the raw flat "
                              "shards) is not in ember; use SHARDED_STATE_DICT (each "
                              "parameter's slice with its global shape) or FULL_STATE_DICT")
    out = OrderedDict()
    keep = not (rank0_only and group is not None and group.rank != 0)
    for prefix, m in _walk(module):
        unit = _unit_of(m)
        names = names_of.get(m)
        for name in names if names is not None else list(m.__dict__["_parameters"]):
            where = places.get((id(m), name))
            if where is None:
                if unit is not None and name == "_flat_param":
                    continue
                p = m.__dict__["_parameters"].get(name)
                if p is not None and keep:
                    out[prefix + name] = p.detach()
                continue
            u, i = where
            shape = u.shapes[i]
            n = 1
            for s in shape:
                n *= s
            if kind is StateDictType.FULL_STATE_DICT:
                if keep:
                    off = u.offsets[i]
                    t = fulls[id(u)][off:off + n].reshape(shape).clone()
                    out[prefix + name] = t.to("cpu") if offload else t
            else:
                piece = None
                for j, a, b, at in u.ranges():
                    if j == i:
                        piece = (a, u.shard.detach()[at:at + (b - a)])
                if piece is None:
                    from ...ops.creation import empty
                    piece = (0, empty(0, dtype=u.dtype, device=u.shard_device))
                local = piece[1].to("cpu") if offload else piece[1]
                out[prefix + name] = FlatShard(local, shape, piece[0])
        for name, b in m.__dict__["_buffers"].items():
            if b is not None and name not in m.__dict__["_non_persistent_buffers_set"] and keep:
                out[prefix + name] = (b.to("cpu") if offload else b).detach()
    return out


def _load_state_dict(module: Module, state_dict: dict, strict: bool = True):
    """Write full tensors or FlatShards (this rank's) into the shards and buffers."""
    from ...ops.creation import tensor as make
    places = _unit_places(module)
    expected = {}
    for prefix, m in _walk(module):
        for name in m.__dict__["_parameters"]:
            if name == "_flat_param" and _unit_of(m) is not None:
                continue
            if m.__dict__["_parameters"][name] is not None:
                expected[prefix + name] = ("param", m, name)
        for u in _units_in(module):
            for name in u.order_names.get(m, ()):
                if (id(m), name) in places:
                    expected[prefix + name] = ("sharded", m, name)
        for name, b in m.__dict__["_buffers"].items():
            if b is not None and name not in m.__dict__["_non_persistent_buffers_set"]:
                expected[prefix + name] = ("buffer", m, name)
    missing = [k for k in expected if k not in state_dict]
    unexpected = [k for k in state_dict if k not in expected]
    if strict and (missing or unexpected):
        raise DistributedError(
            f"FullyShardedDataParallel.load_state_dict: missing keys {missing[:8]}, "
            f"unexpected keys {unexpected[:8]}; pass a state dict of this model (strict=False "
            "to load what matches)")
    del make
    with autograd.no_grad():
        for key, (kind, m, name) in expected.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if kind == "buffer":
                m.__dict__["_buffers"][name].copy_(_dense(value, key))
                continue
            if kind == "param":
                m.__dict__["_parameters"][name].copy_(_dense(value, key))
                continue
            u, i = places[(id(m), name)]
            shape = u.shapes[i]
            for j, a, b, at in u.ranges():
                if j != i or b == a:
                    continue
                if isinstance(value, FlatShard):
                    if value.start > a or value.start + value.local.numel() < b or \
                            tuple(value.global_shape) != tuple(shape):
                        raise DistributedError(
                            f"load_state_dict: {key!r} holds elements [{value.start}, "
                            f"{value.start + value.local.numel()}) of {value.global_shape}; "
                            f"this rank needs [{a}, {b}) of {shape}. Load a sharded "
                            "checkpoint with ember.distributed.checkpoint.load, which "
                            "reshards")
                    src = value.local[a - value.start:b - value.start]
                else:
                    if tuple(value.shape) != tuple(shape):
                        raise DistributedError(
                            f"load_state_dict: {key!r} has shape {tuple(value.shape)}; the "
                            f"model's parameter has {shape}")
                    src = value.detach().reshape(-1)[a:b]
                u.shard.detach()[at:at + (b - a)].copy_(src.to(u.shard.device))
    return missing, unexpected


def _dense(value, key: str) -> Tensor:
    if isinstance(value, FlatShard):
        raise DistributedError(f"load_state_dict: {key!r} is a FlatShard but the model holds "
                               "it whole on every rank; load it with "
                               "ember.distributed.checkpoint.load")
    return value


def clip_grad_norm_(module: Module, max_norm: float, norm_type: float = 2.0) -> Tensor:
    """Scale the gradients of every shard under module so that the norm of the whole
    model's gradient is at most max_norm; returns that norm (collective: every rank calls
    it).  nn.utils.clip_grad_norm_(model.parameters()) would see this rank's shards only."""
    import math

    from ...ops.creation import tensor
    units = [u for u in _units_in(module) if u.shard is not None and u.shard.grad is not None]
    norm_type = float(norm_type)
    if not units:
        return tensor(0.0)
    group = units[0].group
    with autograd.no_grad():
        parts = {True: 0.0, False: 0.0}
        for u in units:
            g = u.shard.grad.double()
            if norm_type == math.inf:
                v = float(g.abs().max().item()) if g.numel() else 0.0
                parts[u.sharded] = max(parts[u.sharded], v)
            else:
                parts[u.sharded] += float((g.abs() ** norm_type).sum().item())
        local = tensor([parts[True]], dtype=units[0].shard.grad.dtype).double()
        if group.size > 1:
            C.all_reduce(local, C.ReduceOp.MAX if norm_type == math.inf else C.ReduceOp.SUM,
                         group)
        if norm_type == math.inf:
            total = max(float(local.item()), parts[False])
        else:
            total = (float(local.item()) + parts[False]) ** (1.0 / norm_type)
        coef = max_norm / (total + 1e-6)
        if coef < 1.0:
            for u in units:
                u.shard.grad.mul_(coef)
    return tensor(total, dtype=units[0].shard.grad.dtype)


_STATE_TYPE = "_fsdp_state_dict_type"
_WRAPPING = [False]          # auto-wrapping: the model was checked once, at the root


# --- FSDP1: the wrapper ------------------------------------------------------------------------

class FullyShardedDataParallel(Module):
    """torch.distributed.fsdp.FullyShardedDataParallel on ember.distributed (see the module
    docstring for what moves when).

    reduce_in_rank_order=True (ember's own, as DDP's) sums the ranks' gradients in rank
    order (an all-to-all and a local sum instead of a reduce-scatter), so that N processes
    give bit for bit what one process gets summing the N shards' gradients in that
    order.

    limit_all_gathers: ember prefetches at most one unit ahead, so at most two units' full
    parameters are gathered at a time whether it is True (torch's bound) or False."""

    def __init__(self, module: Module, process_group=None, sharding_strategy=None,
                 cpu_offload: CPUOffload | None = None, auto_wrap_policy=None,
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision: MixedPrecision | None = None, ignored_modules=None,
                 param_init_fn=None, device_id=None, sync_module_states: bool = False,
                 forward_prefetch: bool = False, limit_all_gathers: bool = True,
                 use_orig_params: bool = False, ignored_states=None, device_mesh=None,
                 reduce_in_rank_order: bool = False):
        super().__init__()
        what = "FullyShardedDataParallel"
        group = resolve(process_group)
        if group is None:
            raise DistributedError(f"{what}: this rank is not in process_group; wrap the "
                                   "model only on its members")
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        if not isinstance(strategy, ShardingStrategy):
            raise DistributedError(f"{what}: sharding_strategy must be a ShardingStrategy, "
                                   f"got {strategy!r}")
        if strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise NotInEmberError(f"{what}: {strategy.name} (shard within a node, replicate "
                                  "across nodes) is not in ember; use FULL_SHARD or "
                                  "SHARD_GRAD_OP")
        for name, value in (("ignored_modules", ignored_modules),
                            ("ignored_states", ignored_states), ("device_mesh", device_mesh),
                            ("param_init_fn", param_init_fn)):
            if value is not None:
                raise NotInEmberError(f"{what}: {name} is not in ember (pass None); "
                                      + ("ember has no meta device: build the model "
                                         "materialized" if name == "param_init_fn" else
                                         "every parameter of the module is sharded"))
        if use_orig_params:
            raise NotInEmberError(f"{what}: use_orig_params=True is not in ember: the "
                                  "optimizer steps on each unit's flat shard "
                                  "(model.parameters()); use fully_shard for per-module "
                                  "units")
        if mixed_precision is not None and mixed_precision.keep_low_precision_grads:
            raise NotInEmberError(f"{what}: keep_low_precision_grads=True is not in ember: "
                                  "the shards' gradients take the shards' dtype")
        if backward_prefetch is not None and not isinstance(backward_prefetch,
                                                            BackwardPrefetch):
            raise DistributedError(f"{what}: backward_prefetch must be a BackwardPrefetch or "
                                   f"None, got {backward_prefetch!r}")
        if device_id is not None:
            module = module.to(f"cuda:{device_id}" if isinstance(device_id, int)
                               else device_id)
        if not _WRAPPING[0]:
            from ...nn.parallel.distributed import _check_same_model
            _check_same_model(module, group)
        options = dict(process_group=group, sharding_strategy=strategy,
                       cpu_offload=cpu_offload, backward_prefetch=backward_prefetch,
                       mixed_precision=mixed_precision, sync_module_states=sync_module_states,
                       forward_prefetch=forward_prefetch, limit_all_gathers=limit_all_gathers,
                       reduce_in_rank_order=reduce_in_rank_order)
        policy = _policy(auto_wrap_policy)
        if policy is not None:
            _WRAPPING[0] = True
            try:
                _auto_wrap(module, policy, lambda child: FullyShardedDataParallel(child,
                                                                                  **options))
            finally:
                _WRAPPING[0] = False
        self.__dict__["_modules"]["_fsdp_wrapped_module"] = module
        unit = _Unit(module, group, strategy, mixed_precision, cpu_offload,
                     backward_prefetch, forward_prefetch, reduce_in_rank_order,
                     sync_module_states, f"{what}({type(module).__name__})")
        self.__dict__["_fsdp_unit"] = unit
        self.__dict__[_STATE_TYPE] = (StateDictType.FULL_STATE_DICT, None)
        if unit.shard is not None:
            self.__dict__["_parameters"]["_flat_param"] = unit.shard
        self.process_group = group
        self.sharding_strategy = strategy
        self.mixed_precision = mixed_precision
        self.cpu_offload = cpu_offload or CPUOffload()

    @property
    def module(self) -> Module:
        return self.__dict__["_modules"]["_fsdp_wrapped_module"]

    def __getattr__(self, name: str):
        """The wrapped module's attributes, as torch's wrapper forwards them."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            wrapped = self.__dict__["_modules"].get("_fsdp_wrapped_module")
            if wrapped is None:
                raise
            return getattr(wrapped, name)

    def __getitem__(self, key):
        return self.__dict__["_modules"]["_fsdp_wrapped_module"].__getitem__(key)

    def forward(self, *args, **kwargs):
        unit = self.__dict__["_fsdp_unit"]
        args, kwargs = unit.pre_forward(args, kwargs)
        out = self.__dict__["_modules"]["_fsdp_wrapped_module"](*args, **kwargs)
        return unit.post_forward(args, kwargs, out)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward inside accumulates unsharded gradients locally, without communication
        (they take the full flat size per unit); the first backward after it reduces the
        sum."""
        tree = self.__dict__["_fsdp_unit"].tree
        previous, tree.sync = tree.sync, False
        try:
            yield
        finally:
            tree.sync = previous

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        """Clip the whole model's gradient norm (see the module function; collective)."""
        return clip_grad_norm_(self, max_norm, norm_type)

    def stats(self) -> dict:
        """Collectives this tree started and the seconds spent blocked waiting on them."""
        tree = self.__dict__["_fsdp_unit"].tree
        return {"gathers": tree.gathers, "reductions": tree.reductions,
                "wait_s": tree.wait_s}

    # -- state dicts ------------------------------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module: Module, state_dict_type: StateDictType,
                        state_dict_config=None, optim_state_dict_config=None):
        """Which state_dict() every FSDP instance under module returns inside the block."""
        instances = [m for _, m in module.named_modules()
                     if isinstance(m, FullyShardedDataParallel)]
        previous = [m.__dict__[_STATE_TYPE] for m in instances]
        FullyShardedDataParallel.set_state_dict_type(module, state_dict_type,
                                                     state_dict_config,
                                                     optim_state_dict_config)
        try:
            yield
        finally:
            for m, p in zip(instances, previous):
                m.__dict__[_STATE_TYPE] = p

    @staticmethod
    def set_state_dict_type(module: Module, state_dict_type: StateDictType,
                            state_dict_config=None, optim_state_dict_config=None):
        if not isinstance(state_dict_type, StateDictType):
            raise DistributedError(f"state_dict_type: expected a StateDictType, got "
                                   f"{state_dict_type!r}")
        if state_dict_type is StateDictType.LOCAL_STATE_DICT:
            raise NotInEmberError("FullyShardedDataParallel: LOCAL_STATE_DICT is not in "
                                  "ember; use SHARDED_STATE_DICT or FULL_STATE_DICT")
        if optim_state_dict_config is not None:
            raise NotInEmberError("FullyShardedDataParallel: optimizer state dicts of the "
                                  "flat shards are not in ember; save optim.state_dict() "
                                  "on each rank")
        for _, m in module.named_modules():
            if isinstance(m, FullyShardedDataParallel):
                m.__dict__[_STATE_TYPE] = (state_dict_type, state_dict_config)

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        _no_keep_vars("FullyShardedDataParallel", keep_vars)
        kind, config = self.__dict__[_STATE_TYPE]
        offload = bool(getattr(config, "offload_to_cpu", False))
        rank0 = bool(getattr(config, "rank0_only", False))
        out = _state_dict(self, kind, offload, rank0)
        if prefix or destination is not None:
            dest = destination if destination is not None else type(out)()
            for k, v in out.items():
                dest[prefix + k] = v
            return dest
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False):
        if assign:
            raise NotInEmberError("FullyShardedDataParallel.load_state_dict: assign=True is "
                                  "not in ember (the shards are copied into)")
        from ...nn.module import IncompatibleKeys
        missing, unexpected = _load_state_dict(self, state_dict, strict)
        return IncompatibleKeys(missing, unexpected)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        raise NotInEmberError("FullyShardedDataParallel.optim_state_dict is not in ember: "
                              "the optimizer's state is per shard; save optim.state_dict() "
                              "on each rank (same number of ranks to load)")

    def __getstate__(self):
        raise DistributedError("FullyShardedDataParallel does not pickle; save its "
                               "state_dict() (or ember.distributed.checkpoint.save)")


def _no_keep_vars(owner: str, keep_vars) -> None:
    """keep_vars=True asks for the parameters themselves; a sharded state dict holds each
    rank's FlatShard (a copy of its range) or gathered full tensors, never a parameter."""
    if keep_vars:
        raise NotInEmberError(f"{owner}.state_dict: keep_vars=True is not in ember (the state "
                              "dict holds copies of the shards or gathered tensors, not the "
                              "parameters); leave keep_vars out")
