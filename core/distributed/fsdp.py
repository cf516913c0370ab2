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

import contextlib
import enum
import time
from dataclasses import dataclass

from .. import autograd
from ..errors import NotInEmberError
from ..nn.module import Module
from ..nn.parallel.distributed import _tensors
from ..tensor import Tensor
from . import collectives as C
from .errors import DistributedError
from .group import resolve
from .sharded import FlatShard


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


# --- wrap policies (torch.distributed.fsdp.wrap) -----------------------------------------------

class ModuleWrapPolicy:
    """Wrap every submodule that is an instance of one of `module_classes`."""

    def __init__(self, module_classes):
        self._module_classes = tuple(module_classes)

    def __call__(self, module: Module, recurse: bool, nonwrapped_numel: int) -> bool:
        return True if recurse else isinstance(module, self._module_classes)


def transformer_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls) -> bool:
    """Wrap the transformer layers (functools.partial(..., transformer_layer_cls={...}))."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                min_num_params: int = int(1e8), force_leaf_modules=None,
                                exclude_wrap_modules=None) -> bool:
    """Wrap a submodule once the parameters under it not yet wrapped reach min_num_params."""
    leaves = tuple(force_leaf_modules or ())
    excluded = tuple(exclude_wrap_modules or ())
    if recurse:
        return not (leaves and isinstance(module, leaves))
    return nonwrapped_numel >= min_num_params and not (excluded and isinstance(module,
                                                                                 excluded))


def _own_numel(module: Module) -> int:
    return sum(p.numel() for p in _owned(module).values())


def _auto_wrap(module: Module, policy, make) -> int:
    """Wrap module's descendants as the policy says (deepest first, as torch's
    _recursive_wrap); returns the parameter count under module left unwrapped."""
    left = sum(p.numel() for p in module.__dict__["_parameters"].values() if p is not None)
    for name, child in list(module.__dict__["_modules"].items()):
        if child is None or _unit_of(child) is not None:
            continue
        if policy(module=child, recurse=True, nonwrapped_numel=_own_numel(child)):
            remaining = _auto_wrap(child, policy, make)
        else:
            remaining = _own_numel(child)
        if remaining and policy(module=child, recurse=False, nonwrapped_numel=remaining):
            module.__dict__["_modules"][name] = make(child)
        else:
            left += remaining
    return left


def _policy(auto_wrap_policy):
    if auto_wrap_policy is None or callable(auto_wrap_policy):
        return auto_wrap_policy
    if isinstance(auto_wrap_policy, (set, frozenset, list, tuple)):
        return ModuleWrapPolicy(auto_wrap_policy)
    raise DistributedError(f"FullyShardedDataParallel: auto_wrap_policy must be a callable "
                           f"(ModuleWrapPolicy, functools.partial of transformer_auto_wrap_"
                           f"policy or size_based_auto_wrap_policy) or a set of module "
                           f"classes, got {type(auto_wrap_policy).__name__}")


# --- which parameters a unit owns --------------------------------------------------------------

def _unit_of(module) -> _Unit | None:
    return module.__dict__.get("_fsdp_unit") if isinstance(module, Module) else None


def _owned(module: Module, aliases: list | None = None) -> dict:
    """(module, name) -> parameter, for the parameters under module not in a nested unit
    (each parameter once, at its first place; its other places, tied weights, go into
    `aliases` as (module, name, parameter))."""
    found: dict = {}
    seen: set = set()

    def walk(m: Module, top: bool):
        if not top and _unit_of(m) is not None:
            return
        for name, p in m.__dict__["_parameters"].items():
            if p is not None and id(p) in seen and aliases is not None:
                aliases.append((m, name, p))
            elif p is not None and id(p) not in seen:
                seen.add(id(p))
                found[(m, name)] = p
        for child in m.__dict__["_modules"].values():
            if child is not None:
                walk(child, False)
    walk(module, True)
    return found


def _nested_units(module: Module) -> list:
    out = []

    def walk(m: Module, top: bool):
        unit = _unit_of(m)
        if not top and unit is not None:
            out.append(unit)
        for child in m.__dict__["_modules"].values():
            if child is not None:
                walk(child, False)
    walk(module, True)
    return out


def _uses(outputs, stop: set) -> dict:
    """id(leaf) -> edges reaching it in the graph behind outputs, not walking past the
    nodes in `stop` (the unit's inputs' history: earlier units)."""
    from ..autograd.node import Node
    counts: dict = {}
    stack, seen = [], set(stop)
    for t in outputs:
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for edge in node.next:
            if edge is None:
                continue
            if type(edge) is Node:
                if id(edge) not in seen:
                    stack.append(edge)
            else:
                counts[id(edge)] = counts.get(id(edge), 0) + 1
    return counts


# --- the tree of units that train together -----------------------------------------------------

REDUCTIONS_IN_FLIGHT = 2        # gradient reductions started and not yet complete, at most


class _Tree:
    """The units of one root: their order, the reductions in flight, the no_sync flag."""

    def __init__(self, root: _Unit):
        self.root = root
        self.units = [root]
        self.order: list = []          # the first forward's unit order (for prefetching)
        self.recording = True
        self.pending: list = []        # (unit, work, out) of started gradient reductions
        self.armed = 0                 # units whose backward has not finished yet
        self.started = 0               # units whose backward finished this iteration
        self.sync = True
        self.wait_s = 0.0              # time blocked on gathers and reductions
        self.gathers = self.reductions = 0
        self.gathering: list = []      # units whose prefetched gather is in flight

    def progress(self) -> None:
        """Test the collectives in flight: MPI moves nonblocking work only when asked."""
        if self.gathering:
            self.gathering = [u for u in self.gathering if u.gather is not None
                              and not u.gather[0].is_completed()]
        for _, work, _ in self.pending:
            if work is not None and not work.is_completed():
                break


class _Unit:
    """One flat parameter: the sharded storage of the parameters a unit owns, and what
    moves them (see the module docstring)."""

    def __init__(self, module: Module, group, strategy: ShardingStrategy, mixed, offload,
                 backward_prefetch, forward_prefetch: bool, exact: bool,
                 sync_states: bool, what: str):
        from ..nn.parameter import Parameter
        self.module, self.group, self.strategy, self.what = module, group, strategy, what
        self.exact = exact
        self.backward_prefetch, self.forward_prefetch = backward_prefetch, forward_prefetch
        self.is_root = True
        self.tree = _Tree(self)
        for inner in _nested_units(module):         # an outer unit makes this the root
            inner.is_root = False
            if inner.tree is not self.tree:
                self.tree.units.append(inner)
                inner.tree = self.tree
        tied: list = []
        owned = _owned(module, tied)
        if sync_states and group.size > 1:
            from ..nn.parallel.distributed import _broadcast_coalesced
            with autograd.no_grad():
                _broadcast_coalesced(list(owned.values()), group)
                buffers = [b for m in _modules(module) for b in m.__dict__["_buffers"].values()
                           if b is not None]
                if buffers:
                    _broadcast_coalesced(buffers, group)
        params = list(owned.values())
        for (m, name), p in owned.items():
            other = p._get_meta("fsdp_unit")
            if other is not None:
                raise DistributedError(
                    f"{what}: parameter {name!r} of {type(m).__name__} is shared with "
                    f"{other}, another unit: a parameter belongs to one flat vector. Wrap the "
                    "modules that share it in one unit (leave one of them out of "
                    "auto_wrap_policy)")
        self.params = params
        self.places = list(owned)                     # (module, name), same order
        index = {id(p): i for i, p in enumerate(params)}
        self.aliases = [(m, name, index[id(p)]) for m, name, p in tied]
        self.order_names = {}                         # module -> its original param names
        for m, _ in self.places + [(m, name) for m, name, _ in self.aliases]:
            self.order_names.setdefault(m, [])
        for m in self.order_names:
            self.order_names[m] = [n for n, p in m.__dict__["_parameters"].items()]
        if params:
            dtypes = {p.dtype for p in params}
            devices = {p.device for p in params}
            needs = {p.requires_grad for p in params}
            if len(dtypes) > 1 or len(devices) > 1 or len(needs) > 1:
                raise DistributedError(
                    f"{what}: the parameters of one unit must share dtype, device and "
                    f"requires_grad (they are flattened into one vector); "
                    f"{type(module).__name__} has dtypes {sorted(d.name for d in dtypes)}, devices "
                    f"{sorted(str(d) for d in devices)}, requires_grad {sorted(needs)}. Wrap "
                    "the parts that differ as units of their own (auto_wrap_policy)")
            self.dtype, self.device = params[0].dtype, params[0].device
            self.requires_grad = params[0].requires_grad
        else:
            self.dtype, self.device, self.requires_grad = None, None, False
        self.offsets, total = [], 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.shapes = [tuple(p.shape) for p in params]
        self.numel = total
        n = group.size
        self.sharded = strategy is not ShardingStrategy.NO_SHARD and n > 1
        self.padded = -(-total // n) * n if self.sharded else total
        self.shard_numel = self.padded // n if self.sharded else total
        self.param_dtype = getattr(mixed, "param_dtype", None) or self.dtype
        self.reduce_dtype = (getattr(mixed, "reduce_dtype", None)
                             or getattr(mixed, "param_dtype", None) or self.dtype)
        self.mixed = mixed
        host = offload is not None and offload.offload_params
        self.shard_device = "cpu" if host else self.device
        self.full = None               # the gathered flat parameters, or None (freed)
        self.gather = None             # (work, full) of a prefetched gather
        self.flat_grad = None
        self.expected: list = []
        self.seen: list = []
        self.left = 0
        self.armed = False
        self.backward_started = False
        self.shard = None
        if params:
            from ..ops.movement import cat
            with autograd.no_grad():
                flat = cat([p.detach().reshape(-1) for p in params])
                if self.padded > total:
                    from ..ops.creation import zeros
                    flat = cat([flat, zeros(self.padded - total, dtype=self.dtype,
                                            device=self.device)])
                r = group.rank if self.sharded else 0
                piece = flat[r * self.shard_numel:(r + 1) * self.shard_numel].clone()
                if host:
                    piece = piece.to("cpu")
            self.shard = Parameter(piece, requires_grad=self.requires_grad)
            from ..ops.creation import empty
            self._empty = empty(0, dtype=self.param_dtype, device=self.device)._data
            for (m, name), p in zip(self.places, params):
                del m.__dict__["_parameters"][name]
                m.__dict__[name] = p
                p._set_meta("fsdp_unit", what)
            for m, name, i in self.aliases:           # tied weights: the same tensor
                del m.__dict__["_parameters"][name]
                m.__dict__[name] = params[i]
            self.hooks = []
            if self.requires_grad:
                for i, p in enumerate(params):
                    self.hooks.append(p.register_post_accumulate_grad_hook(self._grad_hook(i)))
            self._free()
        buffer_dtype = getattr(mixed, "buffer_dtype", None)
        if buffer_dtype is not None:
            with autograd.no_grad():
                for m in _modules(module):
                    for name, b in list(m.__dict__["_buffers"].items()):
                        if b is not None and b.dtype.is_floating_point:
                            m.__dict__["_buffers"][name] = b.to(buffer_dtype)

    # -- gather and free -------------------------------------------------------------------
    def _set_views(self, full: Tensor) -> None:
        for p, off, shape in zip(self.params, self.offsets, self.shapes):
            n = 1
            for s in shape:
                n *= s
            p._data = full[off:off + n].reshape(shape)._data
            if p._dtype is not full._dtype:
                p._dtype = full._dtype

    def _free(self) -> None:
        self.full = None
        for p in self.params:
            p._data = self._empty
            p._dtype = self.param_dtype

    def _source(self) -> Tensor:
        src = self.shard.detach()
        if src.device != self.device:
            src = src.to(self.device)
        if src.dtype is not self.param_dtype:
            src = src.to(self.param_dtype)
        return src

    def start_gather(self) -> None:
        """Start the all-gather of the full parameters (nothing if they are here)."""
        if self.full is not None or self.gather is not None or self.shard is None:
            return
        src = self._source()
        if not self.sharded:
            self.gather = (None, src)      # the shard itself, or its cast copy
            return
        from ..ops.creation import empty
        full = empty(self.padded, dtype=self.param_dtype, device=self.device)
        work = C.all_gather_into_tensor(full, src, self.group, async_op=True)
        self.tree.gathers += 1
        self.gather = (work, full)
        self.tree.gathering.append(self)

    def unshard(self) -> None:
        if self.full is not None or self.shard is None:
            return
        if self.gather is None:
            self.start_gather()
        work, full = self.gather
        self.gather = None
        if work is not None:
            t0 = time.perf_counter()
            work.wait()
            self.tree.wait_s += time.perf_counter() - t0
        self.full = full
        self._set_views(full)

    def reshard(self) -> None:
        if self.shard is not None and self.full is not None:
            self._free()

    # -- forward -----------------------------------------------------------------------------
    def pre_forward(self, args, kwargs):
        tree = self.tree
        if self.is_root:
            self._new_iteration()
            mixed = self.mixed
            if mixed is not None and mixed.param_dtype is not None and \
                    mixed.cast_root_forward_inputs:
                args, kwargs = _cast(args, mixed.param_dtype), _cast(kwargs, mixed.param_dtype)
        elif self.mixed is not None and self.mixed.cast_forward_inputs and \
                self.mixed.param_dtype is not None:
            args, kwargs = _cast(args, self.mixed.param_dtype), _cast(kwargs,
                                                                      self.mixed.param_dtype)
        if tree.recording and self not in tree.order:
            tree.order.append(self)
        self.unshard()
        if self.forward_prefetch and not tree.recording:
            nxt = _neighbour(tree.order, self, +1)
            if nxt is not None:
                nxt.start_gather()
        return args, kwargs

    def post_forward(self, args, kwargs, out):
        grad = autograd.is_grad_enabled()
        if grad and self.shard is not None and self.requires_grad:
            self._arm(out, args, kwargs)
        elif grad and self.requires_grad is False and self.shard is None:
            pass
        if self.is_root:
            self.tree.recording = False
            if not grad:
                self.reshard()
        elif self.strategy is ShardingStrategy.FULL_SHARD or not grad:
            self.reshard()
        return out

    def _new_iteration(self) -> None:
        tree = self.tree
        if tree.started and tree.armed:
            left = [u.what for u in tree.units if u.armed]
            for u in tree.units:
                u.armed = False
            tree.armed = tree.started = 0
            raise DistributedError(
                "FullyShardedDataParallel: the previous backward did not reach every unit "
                f"({len(left)} unit(s) got no complete gradient, e.g. {left[0]}), so the "
                "ranks' gradients were not all reduced. Make the loss depend on every "
                "unit's output (or run the forward under ember.no_grad())")
        for u in tree.units:           # a forward without backward (evaluation with grad)
            if u.armed:
                u.armed = False
                u.flat_grad = None if tree.sync else u.flat_grad
                u.reshard()
        tree.armed = tree.started = 0
        if tree.pending:
            self._finish_reductions()

    def _arm(self, out, args, kwargs) -> None:
        outputs = [t for t in _tensors(out) if t.requires_grad]
        stop = {id(t.grad_fn) for t in _tensors((args, kwargs)) if t.grad_fn is not None}
        uses = _uses(outputs, stop)
        expected = [uses.get(id(p), 0) for p in self.params]
        if self.armed:                 # called twice in one forward: uses add up
            self.expected = [a + b for a, b in zip(self.expected, expected)]
            self.left = sum(1 for e, s in zip(self.expected, self.seen) if e > s)
        else:
            self.expected, self.seen = expected, [0] * len(expected)
            self.left = sum(1 for e in expected if e)
            if not self.left:
                return
            self.armed = True
            self.backward_started = False
            self.tree.armed += 1
        for t in outputs:
            if t.grad_fn is not None:
                t.register_hook(self._pre_backward)

    # -- backward ----------------------------------------------------------------------------
    def _pre_backward(self, g):
        if not self.backward_started and self.armed:
            self.backward_started = True
            self.unshard()
            if self.backward_prefetch is BackwardPrefetch.BACKWARD_PRE:
                nxt = _neighbour(self.tree.order, self, -1)
                if nxt is not None and nxt.armed:
                    nxt.start_gather()
        return None

    def _grad_hook(self, i: int):
        def hook(p: Tensor):
            if not self.armed:
                return
            g = p.grad
            p._set_grad(None)
            if self.full is None:          # gradient before the pre-backward hook ran
                self.unshard()
            if self.flat_grad is None:
                from ..ops.creation import zeros
                self.flat_grad = zeros(self.padded, dtype=g.dtype, device=g.device)
            off, n = self.offsets[i], g.numel()
            with autograd.no_grad():
                self.flat_grad[off:off + n].add_(g.reshape(-1))
            tree = self.tree
            if tree.gathering or tree.pending:
                tree.progress()
            self.seen[i] += 1
            if self.seen[i] == self.expected[i]:
                self.left -= 1
                if self.left == 0:
                    self._post_backward()
            elif self.seen[i] > self.expected[i]:
                raise DistributedError(
                    f"FullyShardedDataParallel: parameter {self.places[i][1]!r} of {self.what} "
                    f"got {self.seen[i]} gradients, {self.expected[i]} expected: it is used "
                    "outside its unit's forward. Wrap the modules that share it in one unit")
        return hook

    def _post_backward(self) -> None:
        tree = self.tree
        self.armed = False
        tree.armed -= 1
        tree.started += 1
        if tree.sync:
            flat, self.flat_grad = self.flat_grad, None
            if flat.dtype is not self.reduce_dtype:
                flat = flat.to(self.reduce_dtype)
            self._reduce(flat)
            del flat
            self._bound_reductions()
        self.reshard()
        if self.backward_prefetch is BackwardPrefetch.BACKWARD_POST:
            nxt = _neighbour(tree.order, self, -1)
            if nxt is not None and nxt.armed:
                nxt.start_gather()
        tree.progress()
        if tree.armed == 0:
            self._finish_reductions()

    def _bound_reductions(self) -> None:
        """Wait for the oldest reductions while more than REDUCTIONS_IN_FLIGHT are: each
        holds a unit's whole flat gradient until it completes (torch's FSDP bounds them
        too), so the peak stays at a few units' gradients instead of the model's."""
        tree = self.tree
        flying = [w for _, w, _ in tree.pending if w is not None and not w.is_completed()]
        if len(flying) <= REDUCTIONS_IN_FLIGHT:
            return
        t0 = time.perf_counter()
        for work in flying[:len(flying) - REDUCTIONS_IN_FLIGHT]:
            work.wait()
        tree.wait_s += time.perf_counter() - t0

    def _reduce(self, flat: Tensor) -> None:
        from ..ops.creation import empty
        group, tree = self.group, self.tree
        n = group.size
        if n == 1:
            tree.pending.append((self, None, flat))
        elif not self.sharded:
            if self.exact:
                out = empty(n * self.padded, dtype=flat.dtype, device=flat.device)
                work = C.all_gather_into_tensor(out, flat, group, async_op=True)
            else:
                out = flat
                work = C.all_reduce(flat, C.ReduceOp.SUM, group, async_op=True)
            tree.pending.append((self, work, out))
        elif self.exact:
            out = empty(n * self.shard_numel, dtype=flat.dtype, device=flat.device)
            work = C.all_to_all_single(out, flat, group=group, async_op=True)
            tree.pending.append((self, work, out))
        else:
            out = empty(self.shard_numel, dtype=flat.dtype, device=flat.device)
            work = C.reduce_scatter_tensor(out, flat, C.ReduceOp.SUM, group, async_op=True)
            tree.pending.append((self, work, out))
        tree.reductions += 1

    def _finish_reductions(self) -> None:
        tree = self.tree
        pending, tree.pending = tree.pending, []
        n = self.group.size
        t0 = time.perf_counter()
        for _, work, _ in pending:
            if work is not None:
                work.wait()
        tree.wait_s += time.perf_counter() - t0
        with autograd.no_grad():
            for unit, _, out in pending:
                if unit.exact and n > 1:
                    width = unit.shard_numel if unit.sharded else unit.padded
                    total = out[0:width].clone()
                    for r in range(1, n):
                        total += out[r * width:(r + 1) * width]
                    out = total
                if n > 1:
                    out = out / n
                shard = unit.shard
                if out.dtype is not shard.dtype:
                    out = out.to(shard.dtype)
                if out.device != shard.device:
                    out = out.to(shard.device)
                if shard.grad is None:
                    shard._set_grad(out)
                else:
                    shard._set_grad(shard.grad + out)
        for u in tree.units:
            u.reshard()
        tree.started = 0

    # -- full and sharded weights -----------------------------------------------------------
    def full_flat(self) -> Tensor:
        """Every rank's slice gathered, in the shards' dtype (collective)."""
        src = self.shard.detach()
        if not self.sharded:
            return src
        from ..ops.creation import empty
        full = empty(self.padded, dtype=src.dtype, device=src.device)
        C.all_gather_into_tensor(full, src, self.group)
        return full

    def ranges(self):
        """(index, start, stop) of each parameter's flattened elements in this rank's shard
        (stop > start), and where they sit in the shard."""
        lo = self.group.rank * self.shard_numel if self.sharded else 0
        hi = lo + self.shard_numel
        for i, (off, shape) in enumerate(zip(self.offsets, self.shapes)):
            n = 1
            for s in shape:
                n *= s
            a, b = max(off, lo), min(off + n, hi)
            if b > a:
                yield i, a - off, b - off, a - lo
            elif n == 0:
                yield i, 0, 0, 0


def _neighbour(order: list, unit, step: int):
    try:
        k = order.index(unit) + step
    except ValueError:
        return None
    return order[k] if 0 <= k < len(order) else None


def _cast(x, dtype):
    if type(x) is Tensor:
        return x.to(dtype) if x.dtype.is_floating_point else x
    if isinstance(x, tuple):
        return tuple(_cast(y, dtype) for y in x)
    if isinstance(x, list):
        return [_cast(y, dtype) for y in x]
    if isinstance(x, dict):
        return {k: _cast(v, dtype) for k, v in x.items()}
    return x


def _modules(module: Module):
    """module and its descendants, nested units included (their modules are part of the
    model)."""
    stack = [module]
    while stack:
        m = stack.pop()
        yield m
        stack.extend(c for c in reversed(list(m.__dict__["_modules"].values()))
                     if c is not None)


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
                    from ..ops.creation import empty
                    piece = (0, empty(0, dtype=u.dtype, device=u.shard_device))
                local = piece[1].to("cpu") if offload else piece[1]
                out[prefix + name] = FlatShard(local, shape, piece[0])
        for name, b in m.__dict__["_buffers"].items():
            if b is not None and name not in m.__dict__["_non_persistent_buffers_set"] and keep:
                out[prefix + name] = (b.to("cpu") if offload else b).detach()
    return out


def _load_state_dict(module: Module, state_dict: dict, strict: bool = True):
    """Write full tensors or FlatShards (this rank's) into the shards and buffers."""
    from ..ops.creation import tensor as make
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

    from ..ops.creation import tensor
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
            from ..nn.parallel.distributed import _check_same_model
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
                                                     state_dict_config)
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
        from ..nn.module import IncompatibleKeys
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
        """False: gradients accumulate unsharded and unreduced (as FSDP1's no_sync)."""
        self.__dict__["_fsdp_unit"].tree.sync = bool(requires_gradient_sync)

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """Each rank's FlatShard of every parameter, buffers whole (torch's DTensor state
        dict); get_model_state_dict(..., full_state_dict=True) gathers full tensors."""
        out = _state_dict(self, StateDictType.SHARDED_STATE_DICT)
        return {prefix + k: v for k, v in out.items()}

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False):
        from ..nn.module import IncompatibleKeys
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


__all__ = ["FullyShardedDataParallel", "fully_shard", "FSDPModule", "ShardingStrategy",
           "BackwardPrefetch", "StateDictType", "MixedPrecision", "CPUOffload",
           "FullStateDictConfig", "ShardedStateDictConfig", "ModuleWrapPolicy",
           "transformer_auto_wrap_policy", "size_based_auto_wrap_policy", "clip_grad_norm_"]
