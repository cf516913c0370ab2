"""DistributedDataParallel: one model replica per process, gradients averaged across the
processes while backward still runs.

At construction every rank's model is checked against rank 0's (names, shapes, dtypes),
then rank 0's parameters and buffers are broadcast.  Gradients are gathered into buckets
(about 25 MB; the first 1 MB, so that communication starts early) in reverse parameter
order, the order backward produces them; a bucket's all-reduce starts, asynchronously, as
soon as its last gradient is in, and backward goes on.  The engine calls a parameter's
hook once per use in the graph, so each forward counts the uses from the output's graph;
the last use of the last parameter waits for every bucket and writes the averages into
`.grad`.
"""
from __future__ import annotations

import contextlib
import json
import zlib

from ... import autograd
from ...distributed import collectives as C
from ...distributed.errors import DistributedError
from ...distributed.group import resolve
from ...tensor import Tensor
from ..module import Module
from ..parameter import is_lazy

FIRST_BUCKET_MB = 1.0


def _device_ids(module: Module, device_ids, output_device):
    """(device_ids, the device inputs go to) as torch checks them: one device (or index) that
    every parameter is on, given only for an accelerator module; None for a CPU module."""
    if device_ids is None and output_device is None:
        return None, None
    from ...device import Device
    devices = {p.device for p in module.parameters()}
    ids = list(device_ids) if device_ids is not None else []
    if len(devices) != 1 or next(iter(devices)).type == "cpu" or len(ids) != 1:
        raise DistributedError(
            "DistributedDataParallel device_ids and output_device arguments only work with "
            f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
            f"{device_ids}, output_device {output_device}, and module parameters "
            f"{sorted(str(d) for d in devices)}; pass device_ids=[i] for a module on one "
            "accelerator device i (one process per device), nothing for a CPU module")
    device = next(iter(devices))
    wanted = ids[0]
    wanted = Device(device.type, wanted) if isinstance(wanted, int) else Device(wanted)
    if wanted != device:
        raise DistributedError(f"DistributedDataParallel: device_ids={device_ids} names "
                               f"{wanted}, but the module's parameters are on {device}; "
                               f"move the module with .to({str(wanted)!r}) first")
    return [device.index or 0], device


class _Bucket:
    """Gradients of some parameters of one dtype and device, in one flat tensor."""

    def __init__(self, indices: list[int], params: list[Tensor], group_size: int,
                 gathered: bool):
        from ...ops.creation import zeros
        first = params[indices[0]]
        self.indices = indices
        self.offsets, total = [], 0
        for i in indices:
            self.offsets.append(total)
            total += params[i].numel()
        self.flat = zeros(total, dtype=first.dtype, device=first.device)
        # the exact mode gathers every rank's bucket and sums in rank order
        self.gathered = (zeros(total * group_size, dtype=first.dtype, device=first.device)
                         if gathered else None)
        self.needed = self.ready = 0
        self.work = None

    def slice(self, position: int, param: Tensor) -> Tensor:
        start = self.offsets[position]
        return self.flat[start:start + param.numel()].reshape(tuple(param.shape))


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel on ember.distributed.

    reduce_in_rank_order=True (ember's own) sums the ranks' gradients in rank order
    (rank 0 + rank 1 + ...: an all-gather and a local sum instead of an all-reduce), so
    that N processes give bit for bit what one process gets summing the N shards'
    gradients in that order (see ember.distributed.check_equivalence)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None,
                 bucket_cap_mb: float | None = 25.0, find_unused_parameters: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 init_sync: bool = True, reduce_in_rank_order: bool = False):
        super().__init__()
        group = resolve(process_group)
        if group is None:
            raise DistributedError("DistributedDataParallel: this rank is not in "
                                   "process_group; wrap the model only on its members")
        if any(is_lazy(p) for p in module.parameters()):
            raise DistributedError(
                "Modules with uninitialized parameters can't be used with "
                "`DistributedDataParallel`. Run a dummy forward pass to correctly initialize "
                "the modules")
        self.module = module
        self.process_group = group
        self.device_ids, self.device = _device_ids(module, device_ids, output_device)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.reduce_in_rank_order = reduce_in_rank_order
        self.require_backward_grad_sync = True
        self.bucket_cap_mb = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        _check_same_model(module, group)
        if init_sync and group.size > 1:
            with autograd.no_grad():
                _broadcast_coalesced([t for _, t in module.state_dict().items()
                                      if type(t) is Tensor], group)
        self._buckets, self._where = self._make_buckets()
        self._expected = [0] * len(self._params)
        self._seen = [0] * len(self._params)
        self._armed = False
        self._left = 0
        self._launched = 0
        self._handles = [p.register_hook(self._hook_for(i)) for i, p in
                         enumerate(self._params)]

    # -- buckets --------------------------------------------------------------------------
    def _make_buckets(self):
        buckets, where = [], {}
        current: list[int] = []
        size, cap = 0, min(FIRST_BUCKET_MB, self.bucket_cap_mb) * 2**20
        gathered = self.reduce_in_rank_order and self.process_group.size > 1
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            nbytes = p.numel() * p.element_size()
            first = self._params[current[0]] if current else None
            if current and (size + nbytes > cap or p.dtype is not first.dtype
                            or p.device is not first.device):
                buckets.append(_Bucket(current, self._params, self.process_group.size,
                                       gathered))
                current, size, cap = [], 0, self.bucket_cap_mb * 2**20
            current.append(i)
            size += nbytes
        if current:
            buckets.append(_Bucket(current, self._params, self.process_group.size,
                                   gathered))
        for b, bucket in enumerate(buckets):
            for position, i in enumerate(bucket.indices):
                where[i] = (b, position)
        return buckets, where

    # -- forward ----------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        self._check_finished()
        group = self.process_group
        if self.broadcast_buffers and group.size > 1:
            buffers = list(self.module.buffers())
            if buffers:
                with autograd.no_grad():
                    _broadcast_coalesced(buffers, group)
        if self.device is not None:        # torch moves the inputs to device_ids[0]
            from .data_parallel import _to
            inputs, kwargs = _to(inputs, self.device), _to(kwargs, self.device)
        out = self.module(*inputs, **kwargs)
        if autograd.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare(out)
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Backward inside accumulates gradients locally; the first backward after it
        averages the accumulated sum."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def _check_finished(self) -> None:
        if self._armed and any(self._seen):
            missing = [self._names[i] for i in range(len(self._params))
                       if self._seen[i] < self._expected[i] or self._expected[i] == 0]
            self._armed = False
            raise DistributedError(
                "DistributedDataParallel: the previous backward did not average every "
                "gradient, so the ranks' models may now differ. Parameters that got no "
                f"(complete) gradient on this rank: {missing[:8]}"
                f"{' ...' if len(missing) > 8 else ''}. If some parameters take no part in "
                "the loss, pass find_unused_parameters=True; if the loss uses only part of "
                "the output, make it use all of it")

    def _prepare(self, out) -> None:
        """Count each parameter's uses in the graph behind `out`; arm the hooks."""
        uses = _uses(out)
        expected = [uses.get(id(p), 0) for p in self._params]
        self._expected, self._seen = expected, [0] * len(expected)
        self._launched = 0
        left = 0
        for bucket in self._buckets:
            bucket.ready, bucket.work = 0, None
            bucket.needed = len(bucket.indices)
            for position, i in enumerate(bucket.indices):
                if expected[i] == 0 and self.find_unused_parameters:
                    with autograd.no_grad():
                        bucket.slice(position, self._params[i]).zero_()
                    bucket.ready += 1
                elif expected[i]:
                    left += 1
        self._left = left
        self._used = [e > 0 for e in expected]
        self._armed = left > 0
        if self._armed and self.find_unused_parameters:
            self._launch()

    # -- backward ----------------------------------------------------------------------------
    def _hook_for(self, i: int):
        def hook(g: Tensor):
            return self._ready(i, g) if self._armed else None
        return hook

    def _ready(self, i: int, g: Tensor):
        self._seen[i] += 1
        if self._seen[i] < self._expected[i]:
            return None                  # more uses to come: the engine sums them in .grad
        p = self._params[i]
        b, position = self._where[i]
        bucket = self._buckets[b]
        with autograd.no_grad():
            full = g if p.grad is None else p.grad + g     # after no_sync: the local sum
            bucket.slice(position, p).copy_(full)
        bucket.ready += 1
        self._left -= 1
        if bucket.ready == bucket.needed:
            self._launch()
        for other in self._buckets[:self._launched]:
            if other.work is not None:
                other.work.is_completed()     # MPI moves nonblocking work only when asked
        if self._left:
            return None
        return self._finish(i)

    def _launch(self) -> None:
        """Start the all-reduce of every ready bucket, in bucket order (the same on every
        rank: MPI matches collectives by order)."""
        group = self.process_group
        while self._launched < len(self._buckets):
            bucket = self._buckets[self._launched]
            if bucket.ready < bucket.needed:
                return
            if group.size == 1:
                bucket.work = None
            elif bucket.gathered is not None:
                bucket.work = C.all_gather_into_tensor(bucket.gathered, bucket.flat, group,
                                                       async_op=True)
            else:
                bucket.work = C.all_reduce(bucket.flat, C.ReduceOp.SUM, group, async_op=True)
            self._launched += 1

    def _finish(self, current: int):
        """Wait for every bucket, average, write .grad; return the current parameter's
        gradient (the engine stores it after this hook)."""
        from ...ops.creation import tensor
        self._armed = False
        group = self.process_group
        used = None
        if self.find_unused_parameters and group.size > 1:
            used = tensor([int(u) for u in self._used])
            C.all_reduce(used, C.ReduceOp.MAX, group)
            used = used.tolist()
        result = None
        with autograd.no_grad():
            for bucket in self._buckets:
                if bucket.work is not None:
                    bucket.work.wait()
                if bucket.gathered is not None:
                    n = bucket.flat.numel()
                    total = bucket.gathered[0:n].clone()
                    for r in range(1, group.size):
                        total += bucket.gathered[r * n:(r + 1) * n]
                    bucket.flat.copy_(total)
                if group.size > 1:
                    bucket.flat /= group.size
                for position, i in enumerate(bucket.indices):
                    if used is not None and not used[i]:
                        continue            # no rank used it: its .grad stays as it was
                    p = self._params[i]
                    average = bucket.slice(position, p)
                    if i == current:
                        p.grad = None
                        result = average.clone()
                    elif p.grad is None:
                        p.grad = average.clone()
                    else:
                        p.grad.copy_(average)
        return result

    def __getstate__(self):
        raise DistributedError("DistributedDataParallel does not pickle; save "
                               "model.module.state_dict() with ember.save")


def _uses(out) -> dict[int, int]:
    """id(parameter) -> how many edges of the graph behind `out` reach it."""
    counts: dict[int, int] = {}
    stack, seen = [], set()
    for t in _tensors(out):
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            counts[id(t)] = counts.get(id(t), 0) + 1
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for fn, _ in node.next_functions:
            if fn is None:
                continue
            leaf = getattr(fn, "variable", None)
            if leaf is not None:
                counts[id(leaf)] = counts.get(id(leaf), 0) + 1
            elif id(fn) not in seen:
                stack.append(fn)
    return counts


def _tensors(out):
    if type(out) is Tensor:
        yield out
    elif isinstance(out, (list, tuple)):
        for x in out:
            yield from _tensors(x)
    elif isinstance(out, dict):
        for x in out.values():
            yield from _tensors(x)


def _describe(module: Module) -> list:
    out = [["parameter", n, list(p.shape), p.dtype.name] for n, p in module.named_parameters()]
    out += [["buffer", n, list(b.shape), b.dtype.name] for n, b in module.named_buffers()]
    return out


def _check_same_model(module: Module, group) -> None:
    """Every rank holds the same model as rank 0, or every rank raises the same error."""
    if group.size == 1:
        return
    mine = json.dumps(_describe(module)).encode()
    crcs = group.allgather_bytes(str(zlib.crc32(mine)).encode())
    if len(set(crcs)) == 1:
        return
    models = [json.loads(d) for d in group.allgather_bytes(mine)]
    reference = models[0]
    for r, model in enumerate(models[1:], start=1):
        if model == reference:
            continue
        for i in range(max(len(model), len(reference))):
            a = reference[i] if i < len(reference) else None
            b = model[i] if i < len(model) else None
            if a != b:
                break
        what = (f"{a[0]} {a[1]!r} is {a[3]} {tuple(a[2])} on rank {group.ranks[0]}" if a
                else f"rank {group.ranks[0]} has nothing at position {i}")
        got = (f"{b[0]} {b[1]!r}, {b[3]} {tuple(b[2])}" if b else "nothing")
        raise DistributedError(
            f"DistributedDataParallel: rank {group.ranks[r]} holds a different model than "
            f"rank {group.ranks[0]}: entry {i}: {what}, but rank {group.ranks[r]} has {got}. "
            "Build the same model (same layers, shapes and dtypes) on every rank before "
            "wrapping it")


def _broadcast_coalesced(tensors: list[Tensor], group, src_rank: int = 0) -> None:
    """Broadcast tensors from the group's rank src_rank, one flat buffer per dtype and
    device, written back in place."""
    from ...ops.movement import cat
    groups: dict = {}
    for t in tensors:
        groups.setdefault((t.dtype, t.device), []).append(t)
    for batch in groups.values():
        flat = cat([t.detach().reshape(-1) for t in batch])
        C.broadcast(flat, group.ranks[src_rank], group)
        start = 0
        for t in batch:
            n = t.numel()
            t.copy_(flat[start:start + n].reshape(tuple(t.shape)))
            start += n
