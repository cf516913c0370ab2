"""Per-device OpenCL state (context, queue, memory pool, program cache) and the native array.

Cold start: PoCL charges ~0.16 s of CPU per program build (whatever its size) and ~0.05-0.3 s
per kernel at its first launch (its LLVM codegen), so a run compiles only what pays for
itself, and these knobs, read when a Runtime is made, say when more is compiled (0 = at
once, the behaviour before them; the test suite can keep the defaults to compile less):
  EMBER_OPENCL_HOT_ELEMENTS  elements a dense elementwise program runs through its generic
                             `flat_` kernel before its whole_/vec_ variants (hot_elements())
  EMBER_OPENCL_FUSE_AFTER    seconds of estimated saving before a fused tree is built
                             (fusion.py)
  EMBER_OPENCL_TUNE_AFTER    float32 matmul multiply-adds before the structures are timed
                             (linalg.py; read at the first product)
`ember warmup` builds, times and stores everything ahead of time instead.
Two more things keep a cold start short: the families a training step meets for float32
and int64 build as one program (bundles.py, Runtime._build_bundle), and while cold the ops
of a family share kernels, the op an argument (launch._family_groups: one kernel per
output dtype for the plain elementwise ops, a cast from bool in where's; reduce.
_cold_source: one per dtype pair for the reductions; index.take_words for every dtype's
take; linalg.pack_any for every panel width; nn's max_pool_pair both ways, conv_rows for
unfold and fold; index's gather_scatter), since PoCL's compile at a kernel's first launch
(~0.1 s) is nearly all fixed. Measured on the demo's first epoch: 18 builds and 47 kernels
before, 1 build (42 kernels in it) and 17 kernels now; with every cache empty it took
4.8-6.3 s on a 2-core machine at load ~1 (8.8-9.7 s before this round, side by side).
Two more: the kernels' long index arithmetic and loops live in out-of-line functions
(codegen.offset_fn, conv_rows' rows, reduce_cold's walks), which PoCL compiles faster;
and once the training bundle is built, a helper thread compiles the kernels a training
step meets in a second context, from the last, while the step compiles from the first
(bundles.compile_ahead; PoCL's disk cache hands them over).
"""
from __future__ import annotations

import atexit
import collections
import os
import re
import sys
import threading
import time
import weakref

import numpy as np
from ember.errors import EmberError, ShapeError

from . import binaries, codegen

# One work-group size for every elementwise launch: PoCL compiles a work-group function per
# (kernel, local size) on first launch, so a fixed size compiles each kernel once.
LOCAL_SIZE = 256

# One line on stderr the first time a device has spent this long building programs.
NOTICE_SECONDS = 2.0


def notices_enabled() -> bool:
    """EMBER_OPENCL_NOTICE=0 silences the compile notice (`ember warmup` shows a bar)."""
    return os.environ.get("EMBER_OPENCL_NOTICE", "1").strip().lower() not in ("0", "off", "no")


# Cold tier of launch.py: elements a dense elementwise program processes through its generic
# kernel before its specialised variants are used.
HOT_ELEMENTS = 1 << 26


def hot_elements() -> int:
    """EMBER_OPENCL_HOT_ELEMENTS: how many elements a dense elementwise program (one op or
    fused tree, one operand signature) processes through its one generic bounds-checked
    kernel before the faster variants (whole work-groups; 8-wide vectors) are compiled and
    used. Each variant costs PoCL a compile at its first launch (~0.1-0.3 s of CPU), which
    small arrays never win back; 0 = specialise at once, `never` = never."""
    raw = os.environ.get("EMBER_OPENCL_HOT_ELEMENTS", "").strip().lower()
    if not raw:
        return HOT_ELEMENTS
    if raw in ("inf", "never", "off"):
        return 1 << 62
    try:
        return max(0, int(float(raw)))
    except ValueError:
        return HOT_ELEMENTS


# what a program source defines at file scope: kernels, helper functions, macros (a bundle
# of programs must not define one twice)
_DEFINED = re.compile(r"(?:__kernel\s+void|(?:inline|__attribute__\(\(noinline\)\))\s+[\w ]+?)"
                      r"\s+(\w+)\s*\(|#define\s+(\w+)")


class KernelBuildError(EmberError, RuntimeError):
    """The OpenCL compiler rejected a generated program (the message carries its log)."""


def contiguous_strides(shape) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class CLArray:
    """An OpenCL buffer seen as a strided array: shape, strides and offset in elements."""

    __slots__ = ("buffer", "dtype", "offset", "runtime", "shape", "strides")

    def __init__(self, runtime, buffer, shape, dtype, strides=None, offset=0):
        self.runtime = runtime
        self.buffer = buffer
        self.shape = tuple(shape)
        self.dtype = dtype                      # an ember DType
        self.strides = contiguous_strides(shape) if strides is None else tuple(strides)
        self.offset = offset

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return numel(self.shape)

    @property
    def is_contiguous(self) -> bool:
        """Row-major and dense (sizes of 1 may carry any stride)."""
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def view(self, shape, strides, offset) -> CLArray:
        return CLArray(self.runtime, self.buffer, shape, self.dtype, strides, offset)

    def __repr__(self) -> str:
        return (f"<CLArray {self.dtype.name} shape={self.shape} strides={self.strides} "
                f"offset={self.offset} on opencl:{self.runtime.index}>")


class Runtime:
    """Everything one OpenCL device needs: context, in-order queue, pool, built programs."""

    # What the layers above provide (fusion.py and copies.py set them when they load):
    # the runtime calls up through these and never imports those modules.
    deferral_enabled = staticmethod(lambda: False)
    fuse_after_setting = staticmethod(lambda: 0.0)
    materialize = None          # materialize(lazy_array): compute a deferred result
    contiguous = None           # contiguous(array) -> a row-major copy
    # bundles.py: key -> [(key, make_source), ...] of the programs built with it as one
    # program (None: alone), and what runs once a bundle is built from source
    # (bundle_built(runtime, key, source): bundles.warm)
    bundle_of = staticmethod(lambda key: None)
    bundle_built = staticmethod(lambda runtime, key, source: None)

    def __init__(self, index: int, device):
        import pyopencl as cl
        import pyopencl.tools as cltools
        self.cl = cl
        self.index = index
        self.device = device
        self._max_alloc = None                # CL_DEVICE_MAX_MEM_ALLOC_SIZE, read once
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context)
        # a training loop frees and reallocates the same sizes every step: pool them
        self.pool = cltools.MemoryPool(cltools.ImmediateAllocator(self.queue))
        self.is_cpu = bool(device.type & cl.device_type.CPU)
        from .devices import has_fp64
        self.fp64 = has_fp64(device)
        self.fp16 = "cl_khr_fp16" in device.extensions
        self.local_size = min(LOCAL_SIZE, device.max_work_group_size)
        self._programs: dict = {}
        self._renamed: dict = {}                # key -> {kernel name: its name in a bundle}
        self._kernels: dict = {}
        self._typed_kernels: set = set()     # ids of kernels (kept alive by _kernels)
        self._uploads: collections.deque = collections.deque()
        self._lock = threading.Lock()
        self._identity = None                   # binaries.device_identity, read once
        self.builds = 0                         # programs built (or loaded) and the
        self.build_seconds = 0.0                # seconds spent doing so
        self.cached_builds = 0                  # ... of which from ember's binary cache
        self.compile_seconds = 0.0              # seconds building from source
        self._noticed = False                   # the compile notice was printed
        self.choices: dict = {}                 # per-device tuned variants (matmul)
        self.hot_elements = hot_elements()      # launch.py's cold tier: elements per
        self.dense_elements: dict = {}          # dense program before its fast variants
        self.failed_families: set = set()       # launch.py: dtype programs not built
        self.fusion = Runtime.deferral_enabled()   # elementwise ops deferred and fused
        self.fused_seen: set = set()            # fused tree shapes built (or to build)
        self.fused_credit: dict = {}            # ... and the saving others have accrued
        self.fuse_after = Runtime.fuse_after_setting()   # fusion.py: credit that builds
        self.fused_failed: set = set()          # ... and those the compiler rejected
        self._pending: list = []                # weak references to pending LazyArrays
        self.materializing = 0                  # > 0 while fusion.materialize runs
        self.recorder = None                    # graphs.Recorder while a graph records
        # while ember.profiler records: (kernel name, host ns at enqueue, event) per launch,
        # on a queue made with PROFILING_ENABLE (profile()); None otherwise
        self.events = None
        self._plain_queue = None
        self._prune_at = 512
        # Let queued kernels finish before the interpreter tears PyOpenCL down: exiting
        # with work in flight crashed PoCL at exit now and then.
        atexit.register(self._drain)
        from .devices import started
        started(self._after_fork)

    def _after_fork(self) -> None:
        """In a child forked from this process: every OpenCL handle raises a clear error
        (devices.forked_error) where it would hang; nothing is checked on the hot path."""
        self.cl = self.queue = self.context = self.pool = _Forked(self.index)
        self._uploads = collections.deque()     # the parent's events: never waited on here

    # -- memory -------------------------------------------------------------------------
    def empty(self, shape, dtype) -> CLArray:
        n = numel(shape)
        self.check_size(shape, dtype)
        buffer = self.pool.allocate(max(n, 1) * dtype.itemsize)
        if self.recorder is not None:
            self.recorder.allocated(buffer)
        return CLArray(self, buffer, shape, dtype)

    def check_size(self, shape, dtype) -> None:
        """MemoryError (the dispatcher names the op) for an array larger than one buffer of
        this device may be: checked before anything is enqueued, deferred results too."""
        nbytes = numel(shape) * dtype.itemsize
        limit = self._max_alloc
        if limit is None:
            limit = self._max_alloc = int(self.device.max_mem_alloc_size)
        if nbytes > limit:
            raise MemoryError(
                f"an array of shape {tuple(shape)} and dtype {dtype.name} needs {nbytes:,} "
                f"bytes; one buffer on opencl:{self.index} ({self.device.name.strip()}) may "
                f"hold at most {limit:,} bytes ({int(self.device.global_mem_size):,} in all)")

    def from_host(self, array: np.ndarray, dtype) -> CLArray:
        out = self.empty(array.shape, dtype)
        if array.size:
            # a private copy: the upload is asynchronous and the caller may change `array`
            host = np.array(array, dtype=dtype.np, order="C", copy=True)
            self.upload(out.buffer, host)
            if self.recorder is not None:
                self.recorder.uploaded(out.buffer, host)
        return out

    def upload(self, buffer, host: np.ndarray) -> None:
        """Copy `host` (which nobody changes any more) into `buffer`, asynchronously."""
        event = self.cl.enqueue_copy(self.queue, buffer, host, is_blocking=False)
        # PyOpenCL's event owns `host` and waits for the copy when it is dropped: keep it
        # until it completes, so an upload does not stall the queue
        pending = self._uploads
        pending.append(event)
        complete = self.cl.command_execution_status.COMPLETE
        while pending and (len(pending) > 64 or
                           pending[0].command_execution_status == complete):
            pending.popleft()

    def to_host(self, x: CLArray) -> np.ndarray:
        host = np.empty(x.shape, dtype=x.dtype.np)
        if x.size == 0:
            return host
        if self.recorder is not None:
            self.recorder.read_on_host()
        if not x.is_contiguous:
            x = Runtime.contiguous(x)
        self.cl.enqueue_copy(self.queue, host, x.buffer, src_offset=x.offset * x.dtype.itemsize,
                             is_blocking=True)
        return host

    # -- programs -----------------------------------------------------------------------
    def kernel(self, key, make_source, name: str):
        """Kernel `name` of the program built once for `key` (an op and its dtypes)."""
        found = self._kernels.get((key, name))
        if found is not None:
            return found
        with self._lock:
            program = self._programs.get(key)
            if program is None:
                program = self._build_bundle(key)
            if program is None:
                program = self._build(key, make_source())
                self._programs[key] = program
            found = getattr(program, self._renamed.get(key, {}).get(name, name))
            self._kernels[(key, name)] = found
        return found

    def _build_bundle(self, key):
        """Build `key`'s program together with the others of its bundle (bundles.py) as
        one program, stored under each of their keys; None when `key` has no bundle, or
        its bundle does not build (then each builds alone). A PoCL build costs ~0.2 s of
        CPU whatever the program's size, and a kernel compiles only at its first launch,
        so one build of ten families costs about what one family's does."""
        members = Runtime.bundle_of(key)
        if not members or (("bundle",) + key) in self.failed_families:
            return None
        parts, names = [], set()
        for mkey, make in members:
            if mkey in self._programs:
                continue
            try:
                source = make()
            except (KeyError, TypeError, ValueError):   # no such kernel for this dtype
                continue
            defined = {a or b for a, b in _DEFINED.findall(source)}
            clash = defined & names
            renamed = {}
            if clash:           # another dtype's family: its names get the dtype's suffix
                suffix = (f"_{mkey[-1]}" if str(mkey[-1]).isidentifier() else f"_b{len(parts)}")
                renamed = {name: name + suffix for name in clash}
                pattern = r"\b(" + "|".join(map(re.escape, sorted(clash))) + r")\b"
                source = re.sub(pattern, lambda m, to=renamed: to[m.group(1)], source)
                defined = (defined - clash) | set(renamed.values())
                if defined & names:      # still clashing: that member builds alone
                    continue
            names |= defined
            parts.append((mkey, source, renamed))
        if not any(mkey == key for mkey, _, _ in parts):
            return None
        source = "\n".join(s for _, s, _ in parts)
        cached = self.cached_builds
        try:
            program = self._build(("bundle",) + key, source)
        except KernelBuildError:
            self.failed_families.add(("bundle",) + key)
            return None
        for mkey, _, renamed in parts:
            self._programs[mkey] = program
            if renamed:
                self._renamed[mkey] = renamed
        if self.cached_builds == cached:    # built from source: its kernels compile later
            Runtime.bundle_built(self, key, codegen.prelude(source) + source)
        return program

    def _build(self, key, source: str):
        cl = self.cl
        source = codegen.prelude(source) + source
        if self._identity is None:
            self._identity = binaries.device_identity(self.device)
        started = time.perf_counter()
        try:
            program, cached = binaries.build(cl, self.context, self.device, self._identity,
                                             source)
        except cl.RuntimeError as exc:
            raise KernelBuildError(
                f"opencl:{self.index}: the OpenCL compiler of {self.device.name!r} rejected "
                f"the program for {key}; expected it to build. Compiler log:\n{exc}\n"
                "fix: update the OpenCL driver (or PoCL: pip install -U "
                "pocl-binary-distribution) and report this with the log") from None
        took = time.perf_counter() - started
        self.build_seconds += took
        self.builds += 1
        self.cached_builds += cached
        if not cached:
            self.compile_seconds += took
        if self.compile_seconds > NOTICE_SECONDS and not self._noticed:
            self._noticed = True
            if notices_enabled():
                sys.stderr.write(
                    f"ember: opencl:{self.index} ({self.device.name.strip()}) is compiling "
                    f"OpenCL programs ({self.builds - self.cached_builds} in "
                    f"{self.compile_seconds:.1f} s so far); "
                    "they are cached for later runs. To build them ahead of time run "
                    f"`ember warmup --device opencl:{self.index}`\n")
                sys.stderr.flush()
        return program

    def _typed(self, kernel, args) -> None:
        # Declaring the scalar argument types once lets PyOpenCL pack them with `struct`:
        # a launch then costs ~4 us instead of ~35 us (setting a NumPy scalar is ~6 us).
        if id(kernel) not in self._typed_kernels:
            kernel.set_scalar_arg_dtypes([a.dtype if isinstance(a, np.generic) else None
                                          for a in args])
            self._typed_kernels.add(id(kernel))

    def defer(self, lazy) -> None:
        """Track a pending LazyArray until the next flush."""
        pending = self._pending
        pending.append(weakref.ref(lazy))
        if len(pending) > self._prune_at:    # a long run of elementwise ops: drop the dead
            pending[:] = [r for r in pending if (x := r()) is not None and x.node is not None]
            self._prune_at = max(512, 2 * len(pending))

    def flush(self, keep=None) -> None:
        """Compute every pending LazyArray still held (before a kernel that may write),
        except those `keep(x)` says may stay pending.

        Newest first: a newer array may take an older pending one into its own kernel,
        after which the older one is often held by nobody and never computed."""
        materialize = Runtime.materialize
        kept = []
        while self._pending:
            refs, self._pending = self._pending, []
            for done, ref in enumerate(reversed(refs)):
                x = ref()
                if x is None or x.node is None:
                    continue
                if keep is not None and keep(x):
                    kept.append(ref)
                    continue
                try:
                    materialize(x)
                except BaseException:
                    # the rest stay tracked: a later write must still wait for them
                    self._pending[:0] = kept + refs[:len(refs) - done]
                    raise
        self._pending[:0] = kept

    def launch(self, kernel, n: int, *args, local: int | None = None, offset: int = 0,
               fresh: bool = False) -> None:
        """Run `kernel` over n work-items (rounded up to whole work-groups) from `offset`.

        Pending (deferred) arrays are computed first, unless `fresh` says the kernel writes
        only into memory allocated for its own result (then no pending read can be
        overtaken by its writes)."""
        if n <= 0:
            return
        if self._pending and not (fresh or self.materializing):
            self.flush()
        self._typed(kernel, args)
        size = local or self.local_size
        global_size, offset = (-(-n // size) * size,), (offset,) if offset else None
        event = kernel(self.queue, global_size, (size,), *args, global_offset=offset)
        if self.events is not None:
            self.events.append((kernel.function_name, time.perf_counter_ns(), event))
        if self.recorder is not None:
            self.recorder.launched(kernel, global_size, (size,), args, offset)

    def launch_nd(self, kernel, global_size, local_size, *args, fresh: bool = False) -> None:
        if self._pending and not (fresh or self.materializing):
            self.flush()
        self._typed(kernel, args)
        event = kernel(self.queue, global_size, local_size, *args)
        if self.events is not None:
            self.events.append((kernel.function_name, time.perf_counter_ns(), event))
        if self.recorder is not None:
            self.recorder.launched(kernel, global_size, local_size, args, None)

    def profile(self, on: bool):
        """Record each launch's event (ember.profiler): on, the work queued so far finishes
        and launches go to a queue made with PROFILING_ENABLE; off, that queue finishes, the
        plain queue is back, and the launches recorded come back as (kernel name, host ns
        at enqueue, queued, submit, start, end ns on the device's clock)."""
        cl = self.cl
        self.synchronize()
        if on:
            if self._plain_queue is None:
                self._plain_queue = self.queue
                self.queue = cl.CommandQueue(
                    self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
            self.events = []
            return None
        events, self.events = self.events or [], None
        if self._plain_queue is not None:
            self.queue, self._plain_queue = self._plain_queue, None
        out = []
        for name, host, event in events:
            p = event.profile
            out.append((name, host, p.queued, p.submit, p.start, p.end))
        return out

    def _drain(self) -> None:
        if isinstance(self.queue, _Forked):
            return
        try:
            self.synchronize()
        except self.cl.Error:   # at exit a failing device has nothing left to report to
            pass

    def synchronize(self) -> None:
        self.flush()
        self.queue.finish()
        self._uploads.clear()


class _Forked:
    """A Runtime's context, queue, pool and pyopencl module in a forked child: any use
    raises devices.forked_error instead of hanging."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __getattr__(self, name: str):
        from .devices import forked_error
        raise forked_error(self.index)

    def __call__(self, *args, **kwargs):
        from .devices import forked_error
        raise forked_error(self.index)


def max_dims_error(op: str, shape) -> ShapeError:
    return ShapeError(
        f"{op}: this layout needs {len(shape)} non-mergeable dims after merging contiguous "
        f"ones; the OpenCL backend handles up to {codegen.MAXDIM}. Fix: call .contiguous() "
        "on the inputs first")
