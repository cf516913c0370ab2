"""FSDP's units: which parameters a unit owns, the flat sharded parameter of each unit
and the collectives that move it (the package docstring says when), and the tree of units
that train together."""
from __future__ import annotations

import time

from ... import autograd
from ...nn.module import Module
from ...nn.parallel.distributed import _tensors
from ...tensor import Tensor
from .. import collectives as C
from ..errors import DistributedError
from .api import BackwardPrefetch, ShardingStrategy

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
    from ...autograd.node import Node
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
        from ...nn.parameter import Parameter
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
            from ...nn.parallel.distributed import _broadcast_coalesced
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
            from ...ops.movement import cat
            with autograd.no_grad():
                flat = cat([p.detach().reshape(-1) for p in params])
                if self.padded > total:
                    from ...ops.creation import zeros
                    flat = cat([flat, zeros(self.padded - total, dtype=self.dtype,
                                            device=self.device)])
                r = group.rank if self.sharded else 0
                piece = flat[r * self.shard_numel:(r + 1) * self.shard_numel].clone()
                if host:
                    piece = piece.to("cpu")
            self.shard = Parameter(piece, requires_grad=self.requires_grad)
            from ...ops.creation import empty
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
        from ...ops.creation import empty
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
                from ...ops.creation import zeros
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
        from ...ops.creation import empty
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
        from ...ops.creation import empty
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
