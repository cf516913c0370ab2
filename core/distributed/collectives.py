"""Collectives on ember tensors of any device (torch.distributed's functions).

A tensor reaches the communicator as a native 1-D buffer: a CPU tensor's own memory when it
is contiguous (MPI reads and writes it in place: no copy, no pickle), a GPU tensor's own
memory for NCCL, and otherwise a contiguous copy in host memory whose result is written
back into the tensor in place (`copy_` under no_grad) when the collective completes.
"""
from __future__ import annotations

import enum
import operator

import numpy as np

from .. import autograd
from ..errors import DtypeNotSupportedError, EmberTypeError, ShapeError
from ..tensor import Tensor, bump_version, wrap
from . import check as _check
from . import debug
from .errors import DistributedError
from .group import ProcessGroup, resolve
from .work import Work


class ReduceOp(enum.Enum):
    """How all_reduce, reduce and reduce_scatter combine the ranks' values.

    PyTorch
    -------
    ``torch.distributed.ReduceOp``
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "prod"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


# bool tensors are reduced as uint8 0/1: sum and max are `or`, product and min are `and`
_BOOL_OP = {"sum": "max", "max": "max", "bor": "max", "prod": "min", "min": "min",
            "band": "min", "bxor": "bxor"}


# --- tensors as native buffers -----------------------------------------------------------

class _Buffer:
    """A tensor as a communicator's native 1-D array (`array`), and how results get back.

    `alias` is True when the array is the tensor's own memory: results are already in
    place (only its version moves, as for any in-place op)."""

    __slots__ = ("tensor", "array", "alias")

    def __init__(self, t: Tensor, comm, wire=None, write: bool = True):
        if type(t) is not Tensor:
            raise EmberTypeError(f"ember.distributed: expected an ember Tensor, got "
                                 f"{type(t).__name__}")
        if t._device.type == "cpu" or t._device.type in comm.device_types:
            arr, alias = t._data, True          # the tensor's own memory
            if not hasattr(arr, "flags"):       # a NumPy scalar (a 0-d result)
                arr, alias = np.array(arr), False
        else:
            arr, alias = t.detach().numpy(), False    # a copy in host memory
        if wire is not None and arr.dtype != wire:
            arr, alias = arr.astype(wire), False
        if not arr.flags.c_contiguous or (write and not getattr(arr.flags, "writeable", True)):
            arr, alias = arr.copy(order="C"), False
        self.tensor, self.array, self.alias = t, arr.reshape(-1), alias

    def commit(self) -> None:
        """Make the result visible in the tensor (after the collective completed)."""
        if self.alias:
            _bump(self.tensor)
        else:
            _write(self.tensor, self.array)


def _bump(t: Tensor) -> None:
    # the communicator wrote into the tensor's memory: an in-place change autograd sees
    bump_version(t)


def _write(t: Tensor, arr) -> None:
    """Write a native array (host, or the tensor's own device) into t, in place."""
    arr = arr.reshape(tuple(t.shape)) if arr.size == t.numel() else arr
    if isinstance(arr, np.ndarray):
        from ..ops.creation import from_numpy
        src = from_numpy(arr)
    else:
        src = wrap(arr, t._device, t._dtype)
    with autograd.no_grad():
        t.copy_(src)


def _bytes(arr):
    return arr.view(np.uint8)


def _reduction(t: Tensor, op, comm, what: str):
    """(wire numpy dtype or None, communicator op name, average?) for reducing t."""
    op = ReduceOp(op) if not isinstance(op, ReduceOp) else op
    name = op.value
    dtype = t._dtype
    if dtype.name == "bool":
        if op is ReduceOp.AVG:
            raise DtypeNotSupportedError(f"{what}: ReduceOp.AVG needs a floating tensor, got "
                                         "bool; use SUM (or) or MIN (and)")
        return np.dtype(np.uint8), _BOOL_OP[name], False
    floating = dtype.category == 2
    if op is ReduceOp.AVG and not floating:
        raise DtypeNotSupportedError(f"{what}: ReduceOp.AVG needs a floating tensor, got "
                                     f"{dtype.name}; use SUM and divide, or cast first")
    if floating and name in ("band", "bor", "bxor"):
        raise DtypeNotSupportedError(f"{what}: {op.name} is a bitwise reduction; got a "
                                     f"{dtype.name} tensor (expected an integer or bool one)")
    wire = None
    if dtype.np.name not in comm.reduce_dtypes:
        if not floating:
            raise DtypeNotSupportedError(f"{what}: the {getattr(comm, 'name', '')} backend "
                                         f"cannot reduce {dtype.name} tensors")
        wire = np.dtype(np.float32)      # float16, bfloat16: reduced in float32
    return wire, ("sum" if op is ReduceOp.AVG else name), op is ReduceOp.AVG


def _finish(work_outputs):
    def finish():
        for b in work_outputs:
            b.commit()
    return finish


def _run(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


def _signature(t: Tensor, *extra) -> tuple:
    """What every rank's call must agree on: dtype, shape, then root and reduction."""
    if type(t) is not Tensor:
        raise EmberTypeError(f"ember.distributed: expected an ember Tensor, got "
                             f"{type(t).__name__}")
    return (t._dtype.name, tuple(t.shape),
            *(x.name if isinstance(x, ReduceOp) else _index(x) for x in extra))


def _index(x):
    # a root as numpy.int64 on one rank and int on another is the same root
    try:
        return operator.index(x)
    except TypeError:
        return x


def _op(op) -> ReduceOp:
    return op if isinstance(op, ReduceOp) else ReduceOp(op)


def _device_type(x) -> str:
    return x._device.type if type(x) is Tensor else "cpu"


def _collective(group, kind: str, device_type: str, signature, prepare, async_op: bool):
    """Run a collective on `group`.

    signature() is what the ranks must agree on (dtype, shape, root, reduction);
    prepare(g, comm) checks this rank's other arguments and stages its buffers; it returns
    (start, finish, outputs, pairs): the callable that issues the data (a list of
    requests), what runs when they complete, the output tensors, and all_to_all's size
    lane (check.py).  Unless the group does not check
    (one rank, or `verify` off), start runs only after every rank's check agreed; an error
    of prepare is raised on this rank and reported to the others, which raise too."""
    g = resolve(group)
    if g is None:
        return None
    if Tensor._capture is not None:         # ember.compile: this is no kernel to replay
        from ..graph.capture import cannot_replay
        cannot_replay(f"a collective ({kind}) ran: communication is not replayed from a "
                      "graph; compile the model's forward, or the step without DDP")
    comm = g.comm_for(device_type)
    seq = g.start(kind)
    checking = g.checking
    sig = ()
    try:
        sig = signature()
        start, finish, outputs, pairs = prepare(g, comm)
        error = None
    except Exception as exc:
        if not checking:
            raise
        start, finish, outputs, pairs, error = None, None, None, 0, exc
    if g.debug:
        debug.check(g, seq, kind, sig)
    work = Work(g, kind, seq, (), finish, outputs, start=start)
    if checking:
        _check.submit(g, work, _check.Check(kind, sig, pairs, error), async_op)
    else:
        work.requests, work.start = start(), None
    return _run(work, async_op)


# --- the collectives -----------------------------------------------------------------------

def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Every rank's tensor becomes op over all ranks' tensors, in place.

    PyTorch
    -------
    ``torch.distributed.all_reduce``
    """
    def prepare(g, comm):
        wire, name, average = _reduction(tensor, op, comm, "all_reduce")
        buf = _Buffer(tensor, comm, wire)

        def finish():
            if average:
                buf.array /= g.size
            buf.commit()
        return (lambda: [comm.allreduce(None, buf.array, name)], finish,
                [tensor], 0)
    return _collective(group, "all_reduce", _device_type(tensor),
                       lambda: _signature(tensor, _op(op)), prepare, async_op)


def broadcast(tensor: Tensor, src: int, group=None, async_op: bool = False):
    """Every rank's tensor becomes rank `src`'s (a global rank), in place.

    PyTorch
    -------
    ``torch.distributed.broadcast``
    """
    def prepare(g, comm):
        root = g.group_rank(src, "broadcast")
        buf = _Buffer(tensor, comm, write=g.rank != root)
        outputs = [buf] if g.rank != root else []
        return (lambda: [comm.broadcast(_bytes(buf.array), root)],
                _finish(outputs), [tensor], 0)
    return _collective(group, "broadcast", _device_type(tensor),
                       lambda: _signature(tensor, src), prepare, async_op)


def _check_list(what: str, tensors, n: int, like: Tensor, name: str) -> list:
    if not isinstance(tensors, (list, tuple)) or len(tensors) != n:
        got = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise DistributedError(f"{what}: {name} must be a list of {n} tensors (one per "
                               f"rank of the group), got {got}")
    for i, t in enumerate(tensors):
        if type(t) is not Tensor or t.shape != like.shape or t._dtype is not like._dtype:
            desc = (f"{t._dtype.name} {tuple(t.shape)}" if type(t) is Tensor
                    else type(t).__name__)
            raise ShapeError(f"{what}: {name}[{i}] is {desc}; expected {like._dtype.name} "
                             f"{tuple(like.shape)} like the input")
    return list(tensors)


class _Slices:
    """Results in one staged array, written into a list of tensors when complete."""

    def __init__(self, tensors, array, width: int):
        self.tensors, self.array, self.width = tensors, array, width

    def commit(self):
        for i, t in enumerate(self.tensors):
            _write(t, self.array[i * self.width:(i + 1) * self.width].view(t._dtype.np))


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """tensor_list[i] becomes rank i's tensor, on every rank.

    PyTorch
    -------
    ``torch.distributed.all_gather``
    """
    def prepare(g, comm):
        outputs = _check_list("all_gather", tensor_list, g.size, tensor, "tensor_list")
        send = _bytes(_Buffer(tensor, comm, write=False).array)
        recv = comm.empty(send.size * g.size, np.uint8)
        return (lambda: [comm.allgather(send, recv)],
                _finish([_Slices(outputs, recv, send.size)]), outputs, 0)
    return _collective(group, "all_gather", _device_type(tensor),
                       lambda: _signature(tensor), prepare, async_op)


def _check_total(what: str, big: Tensor, small: Tensor, size: int) -> None:
    if type(big) is not Tensor:
        raise EmberTypeError(f"{what}: expected an ember Tensor, got {type(big).__name__}")
    if big.numel() != small.numel() * size or big._dtype is not small._dtype:
        raise ShapeError(
            f"{what}: the large tensor must hold {size} x the small one ({size} x "
            f"{small.numel()} {small._dtype.name} elements), got {big.numel()} "
            f"{big._dtype.name} elements of shape {tuple(big.shape)}")


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False):
    """output_tensor (size x input, stacked or concatenated on dim 0) gets every rank's
    input, in rank order.

    PyTorch
    -------
    ``torch.distributed.all_gather_into_tensor``
    """
    def prepare(g, comm):
        _check_total("all_gather_into_tensor", output_tensor, input_tensor, g.size)
        send = _Buffer(input_tensor, comm, write=False)
        out = _Buffer(output_tensor, comm)
        return (lambda: [comm.allgather(_bytes(send.array), _bytes(out.array))],
                _finish([out]), [output_tensor], 0)
    return _collective(group, "all_gather", _device_type(input_tensor),
                       lambda: _signature(input_tensor), prepare, async_op)


def _reduce_scatter(group, output: Tensor, make_input, op, async_op: bool, what: str):
    """output = chunk `rank` of op over every rank's input (make_input(g): one tensor)."""
    def prepare(g, comm):
        input = make_input(g)
        _check_total(what, input, output, g.size)
        wire, name, average = _reduction(input, op, comm, "reduce_scatter")
        send = _Buffer(input, comm, wire, write=False)
        out = _Buffer(output, comm, wire)

        def finish():
            if average:
                out.array /= g.size
            out.commit()
        return (lambda: [comm.reduce_scatter(send.array, out.array, name)],
                finish, [output], 0)
    return _collective(group, "reduce_scatter", _device_type(output),
                       lambda: _signature(output, _op(op)), prepare, async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """output = chunk `rank` (on dim 0) of op over every rank's input.

    PyTorch
    -------
    ``torch.distributed.reduce_scatter_tensor``
    """
    return _reduce_scatter(group, output, lambda g: input, op, async_op,
                           "reduce_scatter_tensor")


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """output = op over ranks of input_list[rank].

    PyTorch
    -------
    ``torch.distributed.reduce_scatter``
    """
    def make_input(g):
        from ..ops.movement import cat
        inputs = _check_list("reduce_scatter", input_list, g.size, output, "input_list")
        with autograd.no_grad():
            return cat([t.reshape(-1) for t in inputs])
    return _reduce_scatter(group, output, make_input, op, async_op, "reduce_scatter")


def reduce(tensor: Tensor, dst: int, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Rank `dst`'s tensor becomes op over all ranks' tensors (the others keep theirs).

    PyTorch
    -------
    ``torch.distributed.reduce``
    """
    def prepare(g, comm):
        root = g.group_rank(dst, "reduce")
        wire, name, average = _reduction(tensor, op, comm, "reduce")
        buf = _Buffer(tensor, comm, wire, write=g.rank == root)

        def finish():
            if g.rank == root:
                if average:
                    buf.array /= g.size
                buf.commit()
        return (lambda: [comm.reduce(buf.array, name, root)], finish, [tensor],
                0)
    return _collective(group, "reduce", _device_type(tensor),
                       lambda: _signature(tensor, dst, _op(op)), prepare, async_op)


def gather(tensor: Tensor, gather_list: list | None = None, dst: int = 0, group=None,
           async_op: bool = False):
    """On rank `dst`, gather_list[i] becomes rank i's tensor.

    PyTorch
    -------
    ``torch.distributed.gather``
    """
    def prepare(g, comm):
        root = g.group_rank(dst, "gather")
        send = _bytes(_Buffer(tensor, comm, write=False).array)
        outputs, recv, commits = [], None, []
        if g.rank == root:
            outputs = _check_list("gather", gather_list, g.size, tensor, "gather_list")
            recv = comm.empty(send.size * g.size, np.uint8)
            commits = [_Slices(outputs, recv, send.size)]
        elif gather_list:
            raise DistributedError(f"gather: gather_list is for rank {dst} only; pass None "
                                   f"on rank {g.ranks[g.rank]}")
        return (lambda: [comm.gather(send, recv, root)], _finish(commits),
                outputs, 0)
    return _collective(group, "gather", _device_type(tensor),
                       lambda: _signature(tensor, dst), prepare, async_op)


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int = 0, group=None,
            async_op: bool = False):
    """Every rank's tensor becomes scatter_list[rank] of rank `src`.

    PyTorch
    -------
    ``torch.distributed.scatter``
    """
    def prepare(g, comm):
        from ..ops.movement import cat
        root = g.group_rank(src, "scatter")
        send = None
        if g.rank == root:
            inputs = _check_list("scatter", scatter_list, g.size, tensor, "scatter_list")
            with autograd.no_grad():
                flat = cat([t.reshape(-1) for t in inputs])
            send = _bytes(_Buffer(flat, comm, write=False).array)
        elif scatter_list:
            raise DistributedError(f"scatter: scatter_list is for rank {src} only; pass "
                                   f"None on rank {g.ranks[g.rank]}")
        out = _Buffer(tensor, comm)
        return (lambda: [comm.scatter(send, _bytes(out.array), root)],
                _finish([out]), [tensor], 0)
    return _collective(group, "scatter", _device_type(tensor),
                       lambda: _signature(tensor, src), prepare, async_op)


def _all_to_all(group, lists, first, async_op: bool):
    """lists(g) -> (outputs, inputs): one tensor per rank of the group each, all of the
    dtype of `first` (the first input)."""
    def prepare(g, comm):
        from ..ops.movement import cat
        outputs, inputs = lists(g)
        for name, tensors in (("output_tensor_list", outputs),
                              ("input_tensor_list", inputs)):
            if not isinstance(tensors, (list, tuple)) or len(tensors) != g.size:
                raise DistributedError(f"all_to_all: {name} must be a list of {g.size} "
                                       "tensors (one per rank of the group)")
        dtype = first._dtype.name
        for name, tensors in (("output_tensor_list", outputs),
                              ("input_tensor_list", inputs)):
            for i, t in enumerate(tensors):
                if _signature(t)[0] != dtype:
                    raise DistributedError(f"all_to_all: {name}[{i}] is {t._dtype.name}; "
                                           f"every tensor must be {dtype} like "
                                           "input_tensor_list[0]")
        with autograd.no_grad():
            flat = cat([t.reshape(-1) for t in inputs])
        send = _bytes(_Buffer(flat, comm, write=False).array)
        send_counts = [t.numel() * t._dtype.itemsize for t in inputs]
        recv_counts = [t.numel() * t._dtype.itemsize for t in outputs]
        recv = comm.empty(sum(recv_counts), np.uint8)
        me = g.rank
        pairs = 0
        for peer in range(g.size):   # sum 0 over the ranks when every size agrees
            pairs += (_check.pair_hash(me, peer, send_counts[peer])
                      - _check.pair_hash(peer, me, recv_counts[peer]))
        outputs = list(outputs)

        def finish():
            start = 0
            for t, n in zip(outputs, recv_counts):
                _write(t, recv[start:start + n].view(t._dtype.np))
                start += n
        return (lambda: [comm.alltoall(send, send_counts, recv, recv_counts)],
                finish, outputs, pairs)
    return _collective(group, "all_to_all", _device_type(first),
                       lambda: () if first is None else _signature(first)[:1], prepare,
                       async_op)


def all_to_all(output_tensor_list: list, input_tensor_list: list, group=None,
               async_op: bool = False):
    """output_tensor_list[i] becomes rank i's input_tensor_list[rank] (sizes may differ
    from rank to rank).

    PyTorch
    -------
    ``torch.distributed.all_to_all``
    """
    first = (input_tensor_list[0] if isinstance(input_tensor_list, (list, tuple))
             and input_tensor_list else None)
    return _all_to_all(group, lambda g: (output_tensor_list, input_tensor_list), first,
                       async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group=None, async_op: bool = False):
    """all_to_all on dim 0 of one input and one output tensor.

    PyTorch
    -------
    ``torch.distributed.all_to_all_single``
    """
    def lists(g):
        return (_split(output, output_split_sizes, g.size, "output_split_sizes"),
                _split(input, input_split_sizes, g.size, "input_split_sizes"))
    return _all_to_all(group, lists, input, async_op)


def _split(t: Tensor, sizes, n: int, name: str) -> list:
    _signature(t)
    if sizes is None:
        if t.shape[0] % n:
            raise ShapeError(f"all_to_all_single: dim 0 ({t.shape[0]}) is not divisible by "
                             f"the group size {n}; pass {name}")
        sizes = [t.shape[0] // n] * n
    if len(sizes) != n or sum(sizes) != t.shape[0]:
        raise ShapeError(f"all_to_all_single: {name} must be {n} sizes adding up to "
                         f"{t.shape[0]}, got {list(sizes)}")
    out, start = [], 0
    for s in sizes:
        out.append(t[start:start + s])          # views: results land in t
        start += s
    return out


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank of the group has reached the barrier.

    PyTorch
    -------
    ``torch.distributed.barrier``
    """
    g = resolve(group)
    if g is None:
        return None
    device_type = "cpu" if "*" in g.comms else g.nccl.device_types[0]

    def prepare(g, comm):
        return lambda: [comm.barrier()], None, None, 0
    return _collective(g, "barrier", device_type, tuple, prepare, async_op)


# --- point to point ------------------------------------------------------------------------

def _peer(g: ProcessGroup, rank: int, what: str) -> int:
    peer = g.group_rank(rank, what)
    if peer == g.rank:
        raise DistributedError(f"{what}: rank {rank} is this process; send to or receive "
                               "from another rank")
    return peer


def isend(tensor: Tensor, dst: int, group=None, tag: int = 0) -> Work | None:
    """Send ``tensor`` to rank ``dst`` without waiting: ``wait()`` on the returned work
    object.

    PyTorch
    -------
    ``torch.distributed.isend``
    """
    g = resolve(group)
    if g is None:
        return None
    if g.broken:
        g.start("barrier")                      # raises: the group is unusable
    peer = _peer(g, dst, "send")
    comm = g.comm_for(tensor._device.type)
    send = _Buffer(tensor, comm, write=False)
    request = comm.send(_bytes(send.array), peer, tag)
    return Work(g, "send", g.seq, [request], None, [tensor], peer=peer)


def irecv(tensor: Tensor, src: int | None = None, group=None, tag: int = 0) -> Work | None:
    """Receive into ``tensor`` from rank ``src`` without waiting: ``wait()`` on the returned
    work object.

    PyTorch
    -------
    ``torch.distributed.irecv``
    """
    g = resolve(group)
    if g is None:
        return None
    if g.broken:
        g.start("barrier")
    peer = None if src is None else _peer(g, src, "recv")
    comm = g.comm_for(tensor._device.type)
    out = _Buffer(tensor, comm)
    request = comm.recv(_bytes(out.array), peer, tag)
    return Work(g, "recv", g.seq, [request], _finish([out]), [tensor],
                peer=-1 if peer is None else peer)


def send(tensor: Tensor, dst: int, group=None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst``; returns when it is sent.

    PyTorch
    -------
    ``torch.distributed.send``
    """
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


def recv(tensor: Tensor, src: int | None = None, group=None, tag: int = 0) -> int:
    """Receive into tensor; returns the sender's rank (any rank when src is None).

    PyTorch
    -------
    ``torch.distributed.recv``
    """
    work = irecv(tensor, src, group, tag)
    if work is None:
        return -1
    request = work.requests[0]
    work.wait()
    g = resolve(group)
    return g.ranks[request.source] if getattr(request, "source", None) is not None else src
