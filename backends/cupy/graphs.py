"""ember.compile on CUDA: a captured graph replayed as CUDA graphs (cupy.cuda.Graph).

The rules (segments, direct and staged inputs, copies of results, held memory, failures)
are backends/static_replay.py's; this is the CUDA side of them:

- capture runs a segment's kernels on a private non-blocking stream in capture mode
  (relaxed: CuPy's kernels and cuBLAS may allocate), with an allocator of the graph's own
  (cupy.cuda.using_allocator, per thread) that keeps every block it hands out until the
  graph goes: a CUDA graph replays into the addresses it was captured with, so no memory
  it uses, a kernel's temporaries included, may go back to a pool (whence another array,
  or `ember.cuda.empty_cache()` and CuPy's retry after an out-of-memory, could take it).
- the captured graph is launched on the caller's current stream, right away (so the
  recording call computes its results) and at each later call; staging copies and result
  copies run on that stream too, so everything stays in stream order with eager work.
- a kernel that needs the host during capture (a synchronising CuPy call: `bool(xp.any(...))`
  in integer division, a LAPACK info check) raises cudaErrorStreamCaptureUnsupported: the
  capture is ended and dropped, and static_replay runs that segment plainly and keeps the
  generic replay for this graph.

CUDA only: CuPy has no stream capture on HIP (ROCm takes ember's generic replay, with
fused elementwise kernels).  `EMBER_CUDA_GRAPHS=0` turns the graphs off,
`EMBER_CUDA_FUSION=0` the fusion (fusion.py).
"""
from __future__ import annotations

# a graph holds its arrays for good: past this share of the GPU's memory it keeps the
# generic replay, which frees each array after its last use
MAX_HELD_SHARE = 0.25


class CudaGraphs:
    """static_replay's strategy on one CUDA device (see the module docstring)."""

    def __init__(self, cupy, index: int):
        self.cp = cupy
        self.device = cupy.cuda.Device(index)
        with self.device:
            self.pool = cupy.cuda.MemoryPool()
            self.stream = cupy.cuda.Stream(non_blocking=True)
            total = self.device.mem_info[1]
        self.limit = int(MAX_HELD_SHARE * total)
        self.kept: list = []          # every block malloc handed out, for the graph's life
        self.kept_bytes = 0

    def malloc(self, nbytes: int):
        memory = self.pool.malloc(nbytes)
        self.kept.append(memory)
        self.kept_bytes += nbytes
        return memory

    def held_bytes(self, arrays) -> int:
        """What the graph holds: every block its allocator handed out."""
        return self.kept_bytes

    def capture(self, run):
        cp = self.cp
        launch_on = cp.cuda.get_current_stream()
        stream = self.stream
        with self.device, cp.cuda.using_allocator(self.malloc), stream:
            stream.begin_capture()
            try:
                run(_call)
            except BaseException:
                try:
                    stream.end_capture()
                except Exception:       # noqa: BLE001,S110  (an invalidated capture: dropped)
                    pass
                raise
            graph = stream.end_capture()
        graph.launch(stream=launch_on)
        return graph

    def launch(self, graph) -> None:
        graph.launch(stream=self.cp.cuda.get_current_stream())

    @staticmethod
    def layout(x) -> tuple:
        return (x.data.ptr, x.shape, x.strides, x.dtype)

    @staticmethod
    def bounds(x) -> tuple:
        lo = hi = x.data.ptr
        for n, st in zip(x.shape, x.strides):
            if n == 0:
                return (x.data.ptr, x.data.ptr)
            if st < 0:
                lo += (n - 1) * st
            else:
                hi += (n - 1) * st
        return (lo, hi + x.itemsize)

    def static_like(self, x):
        cp = self.cp
        with self.device, cp.cuda.using_allocator(self.malloc):
            return cp.empty(x.shape, dtype=x.dtype)

    def stage(self, dst, src) -> None:
        self.cp.copyto(dst, src)

    @staticmethod
    def fresh(x):
        return x.copy()

    @staticmethod
    def nbytes(x) -> int:
        return int(x.nbytes)


def _call(fn, args, attrs, inplace):
    return fn(*args, **attrs) if attrs else fn(*args)


def replay_for(graph, strategy=None, make_kernel=None):
    """`graph`'s elementwise trees fused by make_kernel (fusion.rewrite; None: unfused),
    replayed through `strategy`'s device graphs (static_replay; None: ember's generic
    replay); None where neither applies.  The suite runs this with NumPy stand-ins."""
    from ember.graph.replay import generate

    from ..static_replay import StaticReplay
    from . import fusion
    g = fusion.rewrite(graph, make_kernel) if make_kernel is not None else graph
    if strategy is not None:
        return StaticReplay(g, strategy, generate(g))
    return generate(g) if g is not graph else None


def compile_graph(graph, cupy, index: int, *, graphs: bool = True, fuse: bool = True):
    """The replay of `graph` on device `index`: its elementwise trees fused (fusion.py),
    then CUDA graphs (backends/static_replay.py); None where neither applies."""
    from . import fusion
    return replay_for(graph, CudaGraphs(cupy, index) if graphs else None,
                      fusion.cupy_kernel(cupy) if fuse else None)
