"""The OpenCL backend: generated OpenCL C kernels over shape and strides, through PyOpenCL.

Importing this module touches no device and does not import pyopencl: that happens in
probe() and on the first op.  Devices are `opencl:0`, `opencl:1`, ... over every platform
(see devices.discover for the order).  Random numbers are drawn on the host by the core and
copied, so a seed gives the same numbers as on the CPU.
"""
from __future__ import annotations

import threading

from ember.backend import Capabilities, DeviceInfo, Probe
from ember.plugins import hookimpl

from .. import switched_on

PLUGIN_API = 1          # the ember plugin API these hookimpls implement

# bfloat16 has no OpenCL C type; float16 needs cl_khr_fp16, float64 CL_DEVICE_DOUBLE_FP_CONFIG;
# complex64 is float2 pairs (every device), complex128 double2 (only with fp64)
BASE_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "complex64")


def _table(backend, index):
    from . import (
        bundles,  # noqa: F401  (which programs build as one: Runtime.bundle_of)
        elementwise,
        fft,
        host_linalg,
        linalg,
        movement,
        nn,
        reduce,
        scan,
        sort,
    )
    from . import index as index_ops
    table = {}
    for part in (elementwise, reduce, movement, index_ops, linalg, nn, scan, sort, host_linalg,
                 fft):
        table.update(part.table())
    from . import complexops
    table.update(complexops.table(table))

    def runtime():
        return backend.runtime(0 if index is None else index)

    table["full"] = lambda *, shape, value, dtype: elementwise.full(
        runtime(), shape=shape, value=value, dtype=dtype)
    table["arange"] = lambda *, start, stop, step, dtype: elementwise.arange(
        runtime(), start=start, stop=stop, step=step, dtype=dtype)
    return table


class OpenCLBackend:
    """Every OpenCL device PyOpenCL sees, each with its own context, queue and programs."""

    name = "opencl"
    aliases = ()
    # slice (negative steps too), permute and expand are strided views over the same
    # buffer (movement.py); reshape of a non-contiguous input copies, as NumPy's does
    views = "strided"

    def __init__(self):
        self._lock = threading.Lock()
        self._profiling = False       # ember.profiler records device time (profile_device)
        self._found = None            # [(platform, device)] once discovered
        self._infos = None
        self._runtimes: dict = {}
        self._tables: dict = {}
        self._caps: dict = {}
        # kernels find their device from their array arguments; full/arange use device 0
        self.kernels = _table(self, None)

    # -- discovery ------------------------------------------------------------------------
    def probe(self) -> Probe:
        from .devices import probe
        return probe()

    def _devices(self):
        if self._found is None:
            from .devices import discover, import_pyopencl
            cl, failed = import_pyopencl()
            if failed is not None:
                self._found = []
            else:
                try:
                    self._found = discover(cl)[1]
                except Exception:  # noqa: BLE001  (no platform: probe() says why)
                    self._found = []
        return self._found

    def devices(self) -> list[DeviceInfo]:
        if self._infos is None:        # Device.concrete() asks on every factory call
            found = self._devices()
            if not found:
                return []
            import pyopencl as cl

            from .devices import infos
            self._infos = infos(cl, found)
        return list(self._infos)

    def capabilities(self, index=None) -> Capabilities:
        caps = self._caps.get(index)
        if caps is None:
            info = self.devices()[index or 0]
            names = set(BASE_DTYPES)
            if info.fp64:
                names.update(("float64", "complex128"))
            if info.fp16:
                names.add("float16")
            caps = Capabilities(frozenset(names), info.memory,
                                {"platform": info.platform, "version": info.version,
                                 "kind": info.kind})
            self._caps[index] = caps
        return caps

    # -- runtime ----------------------------------------------------------------------------
    def runtime(self, index: int):
        rt = self._runtimes.get(index)
        if rt is None:
            from .devices import FORKED, forked_error
            if FORKED:
                raise forked_error(index)
            with self._lock:
                rt = self._runtimes.get(index)
                if rt is None:
                    from .runtime import Runtime
                    found = self._devices()
                    rt = Runtime(index, found[index][1])
                    if self._profiling:
                        rt.profile(True)
                    self._runtimes[index] = rt
        return rt

    def kernels_for(self, index) -> dict:
        table = self._tables.get(index)
        if table is None:
            table = self._tables[index] = _table(self, index)
        return table

    def from_host(self, array, index=None):
        from ember import dtypes as D
        return self.runtime(index or 0).from_host(array, D.from_numpy_dtype(array.dtype))

    def to_host(self, native):
        return native.runtime.to_host(native)

    def strides(self, native) -> tuple:
        return native.strides           # CLArray keeps them in elements

    def offset(self, native, base) -> int | None:
        if native.buffer is not base.buffer:
            return None                 # memory of its own
        return native.offset - base.offset      # in elements too

    def compile_graph(self, graph):
        """ember.compile's replay on this device: the graph's launches, recorded once and
        enqueued again at each call (graphs.py); EMBER_OPENCL_GRAPHS=0 keeps ember's
        generic replay, unless the compile mode asks for recorded launches (graph.options
        "cudagraphs": True, reduce-overhead and max-autotune) or never (False)."""
        wanted = graph.options.get("cudagraphs")
        if not (wanted if wanted is not None else switched_on("EMBER_OPENCL_GRAPHS")):
            return None
        from .graphs import compile_graph
        device = graph.values()[0].device
        return compile_graph(graph, self.runtime(device.index or 0))

    def set_num_threads(self, n: int) -> None:
        """A CPU OpenCL device (PoCL) runs its work-groups on n threads.  PoCL reads the
        count once, when OpenCL first loads in the process (ember's first OpenCL use), so
        call ember.set_num_threads before that; afterwards the live device keeps its count
        (a warning says so) and the count reaches processes started later (devices.py).
        A GPU's threads are the driver's."""
        from .devices import set_pocl_threads
        set_pocl_threads(n)

    def profile_device(self, on: bool):
        """ember.profiler's device time on every device in use (Runtime.profile); a device
        first used while the profile records starts recording when its runtime is made."""
        self._profiling = on
        out = []
        for i, rt in list(self._runtimes.items()):
            out += [(i, *r) for r in rt.profile(on) or ()]
        return None if on else out

    def synchronize(self, index=None) -> None:
        for i, rt in list(self._runtimes.items()):
            if index is None or i == index:
                rt.synchronize()


@hookimpl
def ember_backends():
    return [OpenCLBackend()]


@hookimpl
def ember_compat():
    from .compat import DATA
    return DATA


@hookimpl
def ember_doctor_checks():
    from .caches import check
    return [check]
