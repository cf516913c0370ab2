"""The CUDA and ROCm backends: CuPy behind ember's Backend protocol, one object per plugin.

The plugin distributions (ember-cuda12, ember-cuda13, ember-rocm) construct a CuPyBackend
for the device type they serve.  Constructing one imports nothing heavy and touches no
GPU: CuPy is imported by the probe's child process, and in this process on first use.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ember.backend import Capabilities, DeviceInfo, Probe

from . import probe as _probe
from .compat import FLAVOURS

__all__ = ["CuPyBackend"]


class CuPyBackend:
    """CuPy on NVIDIA (CUDA) or AMD (ROCm) GPUs; `distribution` names the plugin using it."""

    # CuPy's slicing, reshape, transpose and broadcast_to return views like NumPy's,
    # negative steps too
    views = "strided"

    def __init__(self, distribution: str = "ember-cuda12"):
        if distribution not in FLAVOURS:
            from ember.errors import EmberValueError
            raise EmberValueError(
                f"CuPyBackend: unknown plugin distribution {distribution!r}; expected one of "
                f"{', '.join(FLAVOURS)}")
        flavour = FLAVOURS[distribution]
        self.distribution = distribution
        self.name = flavour.kind
        # PyTorch-style code says 'cuda' on AMD GPUs too; `ember devices` shows 'rocm'
        self.aliases: tuple[str, ...] = ("cuda",) if flavour.kind == "rocm" else ()
        self._lock = threading.RLock()     # probe() runs inside kernels_for's lock
        self._probe: Probe | None = None
        self._facts: _probe.Facts | None = None
        self._devices: list[DeviceInfo] | None = None
        self._base: dict | None = None
        self._tables: dict[int, dict] = {}
        self._capabilities: dict[int, Capabilities] = {}
        self._cp: Any = None

    def __repr__(self) -> str:
        return f"CuPyBackend({self.distribution!r}, name={self.name!r})"

    # -- availability ---------------------------------------------------------------------
    def probe(self) -> Probe:
        """Whether CuPy can run here; when not, the first failing step and the fix."""
        if self._probe is None:
            with self._lock:
                if self._probe is None:
                    try:
                        self._facts = _probe.gather(self.distribution)
                        self._probe = _probe.decide(self._facts)
                    except Exception as exc:  # noqa: BLE001  (the contract: a probe never raises)
                        self._probe = Probe(False, f"the CuPy probe failed: "
                                            f"{type(exc).__name__}: {exc}",
                                            "report this to ember's authors with `ember doctor "
                                            "--json`", f"{self.name}-probe-failed")
        return self._probe

    def devices(self) -> list[DeviceInfo]:
        if self._devices is None:
            found = []
            if self.probe().available and self._facts is not None:
                f = self._facts
                platform = ("ROCm " if f.is_hip else "CUDA ") + _probe.runtime_text(
                    f.runtime_version, f.is_hip)
                for i, d in enumerate(f.devices):
                    version = (d.get("gcn_arch", "") if f.is_hip
                               else f"compute capability {d.get('arch', '')}")
                    found.append(DeviceInfo(i, d.get("name", ""), "gpu", platform=platform,
                                            version=version, memory=d.get("memory") or None))
            self._devices = found
        return self._devices

    def capabilities(self, index: int | None = None) -> Capabilities:
        # cached: the dispatcher asks on every op on this device
        i = index or 0
        caps = self._capabilities.get(i)
        if caps is None:
            from ember import dtypes
            devs = self.devices()
            memory = devs[i].memory if i < len(devs) else None
            # CuPy has no bfloat16 arrays; every other ember dtype, float64 and float16 too
            caps = Capabilities(frozenset(d.name for d in dtypes.ALL if d.name != "bfloat16"),
                                memory=memory)
            self._capabilities[i] = caps
        return caps

    # -- kernels --------------------------------------------------------------------------
    @property
    def cupy(self):
        """The cupy module, imported on first use (never at plugin load)."""
        cp = self._cp
        if cp is None:
            import cupy as cp
            self._cp = cp
        return cp

    @property
    def kernels(self) -> dict[str, Callable[..., Any]]:
        """Device 0's table; {} where CuPy cannot run (so no op looks available here)."""
        if not self.probe().available:
            return {}
        return self.kernels_for(0)

    def kernels_for(self, index: int | None) -> dict[str, Callable[..., Any]]:
        """The kernel table for device `index`: each kernel runs with that device current."""
        i = index or 0
        table = self._tables.get(i)
        if table is None:
            from . import kernels
            with self._lock:
                if self._base is None:
                    self._base = kernels.table(self.cupy)
                if len(self.devices()) > 1:
                    table = kernels.on_device(self._base, self.cupy.cuda.Device(i))
                else:
                    # one GPU: device 0 is the only possible current device, so the
                    # context switch (about a microsecond per op) would buy nothing
                    table = dict(self._base)
                self._tables[i] = table
        return table

    def compile_graph(self, graph):
        """ember.compile's replay on this device: its elementwise trees as fused kernels
        (fusion.py), replayed as CUDA graphs (graphs.py, backends/static_replay.py); no
        graphs on ROCm, which CuPy cannot capture.  EMBER_CUDA_GRAPHS=0 and
        EMBER_CUDA_FUSION=0 turn either off (both off: ember's generic replay); the compile
        mode's graph.options["cudagraphs"] (True or False) decides graphs where it is set."""
        from .. import switched_on
        if not self.probe().available:
            return None
        wanted = graph.options.get("cudagraphs")     # the compile mode's, else the switch
        graphs = (wanted if wanted is not None else switched_on("EMBER_CUDA_GRAPHS")) and \
            self.name != "rocm"
        fuse = switched_on("EMBER_CUDA_FUSION")
        if not (graphs or fuse):
            return None
        from .graphs import compile_graph
        device = graph.values()[0].device
        return compile_graph(graph, self.cupy, device.index or 0, graphs=graphs, fuse=fuse)

    # -- memory and transfers -------------------------------------------------------------
    def from_host(self, array, index: int | None = None):
        cp = self.cupy
        with cp.cuda.Device(index or 0):
            return cp.asarray(array)

    def to_host(self, native):
        return self.cupy.asnumpy(native)

    def strides(self, native) -> tuple:
        itemsize = native.itemsize
        return tuple(s // itemsize for s in native.strides)

    def data_ptr(self, native) -> int:
        return native.data.ptr          # a MemoryPointer: a view's includes its offset

    def copy_to(self, native, index: int | None):
        """A copy of `native` on device `index`, GPU to GPU (peer copy where the GPUs allow)."""
        cp = self.cupy
        target = index or 0
        source = native.device.id
        if source == target:
            with cp.cuda.Device(target):
                return native.copy()
        with cp.cuda.Device(source):
            src = cp.ascontiguousarray(native)
            # the copy below runs on the target's stream: the source's pending work must
            # be done before it reads
            cp.cuda.get_current_stream().synchronize()
        with cp.cuda.Device(target):
            out = cp.empty(src.shape, dtype=src.dtype)
            if src.nbytes:
                out.data.copy_from_device(src.data, src.nbytes)
                # src may be a temporary: its memory goes back to the source's pool on
                # return, where the next allocation could overwrite it mid-copy
                cp.cuda.get_current_stream().synchronize()
        return out

    def synchronize(self, index: int | None = None) -> None:
        """Wait for every queued kernel on device `index` (all devices when None)."""
        if not self.probe().available:
            return
        cp = self.cupy
        for i in (range(len(self.devices())) if index is None else (index,)):
            cp.cuda.Device(i).synchronize()

    def memory_allocated(self, index: int | None = None) -> int:
        """Bytes held by arrays on device `index` (CuPy's default memory pool)."""
        if not self.probe().available:
            return 0
        cp = self.cupy
        with cp.cuda.Device(index or 0):
            return int(cp.get_default_memory_pool().used_bytes())

    def memory_reserved(self, index: int | None = None) -> int:
        """Bytes CuPy's pool holds on device `index`, used or cached for reuse."""
        if not self.probe().available:
            return 0
        cp = self.cupy
        with cp.cuda.Device(index or 0):
            return int(cp.get_default_memory_pool().total_bytes())

    def empty_cache(self) -> None:
        """Give the pool's cached, unused blocks back to the driver."""
        if self.probe().available:
            self.cupy.get_default_memory_pool().free_all_blocks()
