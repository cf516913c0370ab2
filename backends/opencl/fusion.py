"""Lazy elementwise fusion: `a * b + c` runs as one kernel, not two.

Elementwise kernels (unary, binary, where, cast) do not run when called: they return a
`LazyArray` that records the op and its operands. An elementwise op whose operand is still
pending takes that operand's recipe into its own, so a chain of elementwise ops becomes one
expression tree. The tree runs, as one generated kernel, when its buffer is first needed:
another kernel reads it, the host copies it, the queue is synchronised, or a kernel that
may write into existing memory is enqueued (`Runtime.launch` flushes every pending array
first unless the caller says the kernel writes only its own new output, `fresh=True`; so
a write like `assign` never runs before a pending array that reads that memory). A pending
array nobody holds any more is never computed.

Two consumers take a pending tree into their own kernel instead of computing it first:
`assign` (in-place ops: the tree is written straight into the target, `assign_into`) and
the reductions (`reduce_plan`: the reduce loop evaluates the tree per element).

The fused kernel computes every node as its own statement and rounds it to the node's
storage type, so results are bit-identical to running the ops one by one (OpenCL C
contracts `a*b + c` into an fma only within one expression). Trees are capped at
MAX_LEAVES operands and MAX_NODES ops; past that a pending operand runs first.
EMBER_OPENCL_FUSION=0 turns the deferral off (every op runs when called).

A tree shape is built into a program only once it has paid for itself (ready()): until
then it runs op by op through the per-op programs, and each meeting credits the tree with
what fusing would have saved, (launches saved) x (LAUNCH_S + elements x ELEMENT_S); the
program is built once the credit reaches EMBER_OPENCL_FUSE_AFTER seconds (default
FUSE_AFTER: about what a build and PoCL's compile of its kernel cost on a quiet 2-core
machine, ~0.2 + 0.1-0.3 s of CPU). 0 builds a tree the second time it is met (the old
rule; the fusion tests use it). Measured on the demo (2-core EPYC, load 13-19): with every
cache empty the rule of the second meeting built 16 fused elementwise and 7 fused
reduction programs in the first epoch (~8 s of its ~25 s of CPU); their trees of 2-6 ops
over at most 32K elements save ~0.1 ms a meeting, so a later epoch costs ~10% more CPU
without them (0.86-0.94 s against 0.78-0.84 s): about 100 epochs of this model to repay
the builds. A longer run, or a larger model, reaches the credit and fuses.
"""
from __future__ import annotations

import os
import re
import warnings

from .. import switched_on
from .codegen import COMPUTE, CTYPE
from .launch import _cast_expr, launch
from .runtime import CLArray, KernelBuildError, Runtime

MAX_LEAVES = 8
MAX_NODES = 16
FUSE_AFTER = 0.5        # seconds of estimated saving before a tree shape is built
LAUNCH_S = 30e-6        # a launch a fused tree saves (PyOpenCL's enqueue and PoCL's command)
ELEMENT_S = 1e-9        # an intermediate element it saves writing and reading again
_BUFFER = CLArray.buffer          # the slot: LazyArray fronts it with a property
_X = re.compile(r"\bx(\d+)\b")


def enabled() -> bool:
    return switched_on("EMBER_OPENCL_FUSION")


def fuse_after() -> float:
    """EMBER_OPENCL_FUSE_AFTER: seconds of estimated saving a tree shape accrues before its
    program is built (0: at its second meeting); see the module docstring."""
    raw = os.environ.get("EMBER_OPENCL_FUSE_AFTER", "").strip().lower()
    if raw in ("never", "inf", "off"):
        return float("inf")
    try:
        value = float(raw) if raw else FUSE_AFTER
    except ValueError:
        return FUSE_AFTER
    return value if value >= 0 else FUSE_AFTER


class Node:
    """One deferred elementwise op: what `launch.launch` needs to run it alone."""

    __slots__ = ("expr_fn", "in_dtypes", "key", "leaves", "nodes", "op", "operands", "sigs")

    def __init__(self, op, key, expr_fn, operands, in_dtypes, sigs):
        self.op, self.key, self.expr_fn = op, key, expr_fn
        self.operands, self.in_dtypes, self.sigs = operands, tuple(in_dtypes), sigs
        self.leaves, self.nodes = 0, 1
        for v in operands:
            child = v.node if isinstance(v, LazyArray) else None
            if child is None:
                self.leaves += 1
            else:
                self.leaves += child.leaves
                self.nodes += child.nodes


class LazyArray(CLArray):
    """A CLArray whose buffer is computed on first use (see the module docstring)."""

    __slots__ = ("__weakref__", "node")

    def __init__(self, runtime, shape, dtype, node):
        runtime.check_size(shape, dtype)     # a deferred op too fails where it is called
        self.node = node
        CLArray.__init__(self, runtime, None, shape, dtype)

    def _get_buffer(self):
        if self.node is not None:
            materialize(self)
        buffer = _BUFFER.__get__(self)
        if buffer is None:      # a kernel given no buffer crashes the process: say so here
            raise RuntimeError(f"opencl:{self.runtime.index}: internal error: a deferred "
                               "array has neither a recipe nor a buffer; please report it")
        return buffer

    def _set_buffer(self, value):
        _BUFFER.__set__(self, value)

    buffer = property(_get_buffer, _set_buffer)

    @property
    def pending(self) -> bool:
        return self.node is not None

    def __repr__(self) -> str:
        state = f"pending {self.node.op}" if self.node is not None else "computed"
        return f"<LazyArray ({state}) {self.dtype.name} shape={self.shape} " \
               f"on opencl:{self.runtime.index}>"


def _pending(v) -> bool:
    return isinstance(v, LazyArray) and v.node is not None


def defer(op, runtime, key, expr_fn, operands, in_dtypes, shape, dtype, sigs) -> CLArray:
    """out = op(operands), as a pending LazyArray (or computed now where fusion is off)."""
    if not runtime.fusion:
        return launch(op, runtime, key, expr_fn, operands, in_dtypes,
                      runtime.empty(shape, dtype), sigs)
    node = Node(op, key, expr_fn, operands, in_dtypes, sigs)
    while node.leaves > MAX_LEAVES or node.nodes > MAX_NODES:
        # run the biggest pending operand now; it becomes a plain operand of this node
        biggest = max((v for v in operands if _pending(v)), key=lambda v: v.node.nodes)
        materialize(biggest)
        node = Node(op, key, expr_fn, operands, in_dtypes, sigs)
    out = LazyArray(runtime, shape, dtype, node)
    runtime.defer(out)
    return out


def materialize(x: LazyArray) -> None:
    """Compute x into a buffer of its own (one kernel for its whole pending tree)."""
    if x.node is None:
        return
    rt = x.runtime
    # kernels launched from here write only into new buffers: the runtime does not flush
    # other pending arrays in between (that would run x's own tree twice)
    rt.materializing += 1
    try:
        _materialize(x, rt)
    finally:
        rt.materializing -= 1


def _materialize(x: LazyArray, rt) -> None:
    node = x.node
    out = rt.empty(x.shape, x.dtype)
    if any(_pending(v) for v in node.operands):
        leaves, in_dtypes, nodes, sig, key = tree(x, "fused")
        if ready(rt, key, len(nodes) - 1, x.size):
            try:
                launch("fused", rt, key, lambda: source(nodes), leaves, in_dtypes, out,
                       [sig])
            except KernelBuildError as exc:
                # a compiler that rejects the fused program still has the per-op ones
                rejected(rt, key, exc, "elementwise kernel", "running its ops one by one")
            else:
                _done(x, out)
                return
        # a tree shape met for the first time (or rejected) runs op by op: no build for a
        # one-off shape
        for v in node.operands:
            if _pending(v):
                materialize(v)
    launch(node.op, rt, node.key, node.expr_fn, node.operands, node.in_dtypes, out, node.sigs)
    _done(x, out)


def _done(x: LazyArray, out: CLArray) -> None:
    _BUFFER.__set__(x, out.buffer)
    x.node = None                     # drops the operands: their memory may be reused


def _walk(x, leaves, in_dtypes, nodes, size) -> int:
    """Append x's pending tree to `nodes` (children first) as (op key, operand dtypes,
    dtype, args, expression); an arg is a node number, or -1-k for the k-th leaf operand.
    Returns x's node number. No source text here: that is made only to build a program.

    A pending operand that the tree broadcasts (at most a quarter of the `size` elements
    computed) runs first, on its own: inside the tree it would be computed again for every
    element (capturable Adam's `1 - beta ** step`, a 0-d tree, cost two pow per element)."""
    node = x.node
    args = []
    for v, dt in zip(node.operands, node.in_dtypes):
        if _pending(v) and v.size * 4 <= size:
            materialize(v)
        if _pending(v):
            args.append(_walk(v, leaves, in_dtypes, nodes, size))
        else:
            args.append(-1 - len(leaves))
            leaves.append(v)
            in_dtypes.append(dt)
    nodes.append((node.key, node.in_dtypes, x.dtype.name, tuple(args), node.expr_fn))
    return len(nodes) - 1


def tree(x: LazyArray, tag) -> tuple:
    """(leaves, operand dtypes, nodes, signature, key) of x's pending tree; `tag` names
    the kernel that will consume it ("fused", or a reduction), so the key says which
    program computes it."""
    leaves, in_dtypes, nodes = [], [], []
    _walk(x, leaves, in_dtypes, nodes, x.size)
    sig = "".join("A" if isinstance(v, CLArray) else "S" for v in leaves)
    return leaves, in_dtypes, nodes, sig, (tag, tuple(n[:4] for n in nodes), sig)


def ready(rt, key, launches: int, size: int) -> bool:
    """Whether to build (or use) the program for `key`, whose tree of `size` elements
    saves `launches` launches: yes once the saving credited over its earlier meetings
    reaches rt.fuse_after (with 0: from the second meeting), never once the compiler has
    rejected it."""
    if key in rt.fused_failed:
        return False
    if key in rt.fused_seen:
        return True
    credit = rt.fused_credit.get(key)
    if credit is not None and credit >= rt.fuse_after:
        rt.fused_seen.add(key)
        return True
    rt.fused_credit[key] = (credit or 0.0) + launches * (LAUNCH_S + size * ELEMENT_S)
    return False


def rejected(rt, key, exc, what: str, instead: str) -> None:
    """Record that the compiler rejected the program for `key`, and say what runs instead."""
    rt.fused_failed.add(key)
    warnings.warn(f"opencl:{rt.index}: fused {what} did not build; {instead}. {exc}",
                  RuntimeWarning, stacklevel=3)


def source(nodes):
    """(final expression, helper functions, statements) of a fused kernel."""
    stmts, extras = [], {}
    for i, (_, _, out_dt, args, expr_fn) in enumerate(nodes):
        expr, extra = expr_fn()
        if extra:
            extras[extra] = None          # helper functions, once per program
        names = [f"t{a}" if a >= 0 else f"x{-1 - a}" for a in args]
        expr = _X.sub(lambda m, names=names: names[int(m.group(1))], expr)
        c = COMPUTE[out_dt]
        # stored and reloaded as the op alone would: same rounding, same results
        stmts.append(f"{c} t{i} = ({c})({CTYPE[out_dt]})({expr});")
    return f"t{len(nodes) - 1}", "".join(extras), stmts


def _reads_below(x: LazyArray, target, memo: dict) -> bool:
    """Whether x's pending tree reads buffer `target`; memo gets id -> that answer for
    every pending array below x."""
    reads = False
    for v in x.node.operands:
        if _pending(v):
            if id(v) not in memo:
                memo[id(v)] = _reads_below(v, target, memo)
            reads = reads or memo[id(v)]
        elif isinstance(v, CLArray) and v.buffer is target:
            reads = True
    return reads


def _same_elements(v: CLArray, dst: CLArray) -> bool:
    """Whether v, broadcast to dst's shape, reads exactly the element each work-item of dst
    writes (then reading and writing the same memory in one kernel is safe)."""
    if v.offset != dst.offset:
        return False
    lead = dst.ndim - v.ndim
    for i, n in enumerate(dst.shape):
        if n == 1:
            continue
        j = i - lead
        if j < 0 or v.shape[j] == 1 or v.strides[j] != dst.strides[i]:
            return False
    return True


def assign_into(dst: CLArray, src: LazyArray) -> bool:
    """dst[...] = src as one kernel writing src's pending tree straight into dst (an in-place
    op: compute then copy were two kernels). src then becomes a pending copy of dst, so it
    still holds the values assigned whatever happens to dst later. Returns False where this
    does not apply (the caller then copies): shapes or dtypes differ, a leaf reads dst's
    memory through another layout, or the tree shape is met for the first time."""
    rt = dst.runtime
    if (src.node is None or src.shape != dst.shape or src.dtype is not dst.dtype
            or (isinstance(dst, LazyArray) and dst.node is not None)):
        return False
    leaves, in_dtypes, nodes, sig, key = tree(src, "fused")
    target = dst.buffer
    for v in leaves:
        if isinstance(v, CLArray) and v.buffer is target and not _same_elements(v, dst):
            return False                      # x[1:] = x[:-1] * 2 and the like
    if not ready(rt, key, len(nodes), dst.size):      # (compute, then copy: one more)
        return False
    inner: dict = {}
    _reads_below(src, target, inner)
    try:
        # every pending array that reads dst runs before the write, except src itself
        # (that is this kernel) and those inside src's tree that do not read dst
        rt.flush(keep=lambda x: x is src or inner.get(id(x)) is False)
        rt.materializing += 1
        try:
            launch("fused", rt, key, lambda: source(nodes), leaves, in_dtypes, dst, [sig])
        finally:
            rt.materializing -= 1
    except KernelBuildError as exc:
        rejected(rt, key, exc, "elementwise kernel", "running its ops one by one")
        return False
    dt = dst.dtype.name
    # the same program as assign's own copy (key "copy", signatures A and S)
    src.node = Node("copy", "copy", lambda: (_cast_expr(dt, dt), ""), [dst], [dt],
                    ["A", "S"])
    rt.defer(src)
    return True


def reduce_plan(x: CLArray, tag) -> tuple | None:
    """tree(x, tag) for a kernel that computes x's pending tree and consumes it at once (a
    reduction), or None: x is not pending, or this tree shape meets `tag` for the first
    time or was rejected (x is then computed on its own as before)."""
    if not _pending(x) or not x.runtime.fusion:
        return None
    plan = tree(x, tag)
    return plan if ready(x.runtime, plan[4], len(plan[2]), x.size) else None


Runtime.deferral_enabled = staticmethod(enabled)
Runtime.fuse_after_setting = staticmethod(fuse_after)
Runtime.materialize = staticmethod(materialize)
