"""Which OpenCL programs are built together as one program (Runtime._build_bundle).

A PoCL build (clBuildProgram) costs ~0.2-0.3 s of CPU plus a share of the program's size
(measured: 1 kernel 0.16-0.23 s, 100 kernels 0.40 s; the first build of a process ~0.6 s
more, PoCL's compiler starting), and each kernel is compiled only at its first launch, so
the families a training step meets are one build instead of one each: the first time any
of them is needed, all are built, and each keeps its own key (the demo's first epoch built
18 programs; the bundle makes that 1). A bundle costs a run that needs one family of it
~0.2-0.4 s more; one that does not build (a compiler that refuses a member) leaves each to
build alone. The training bundle holds float32's families (everything a small network's
training step meets) and int64's (labels, indices, counts); names both define get the
int64 member's dtype as a suffix. Kernels only a hot op runs (the unrolled reductions,
the fast elementwise variants) are not members: they build when an op gets hot. Other
dtypes build per family.
"""
from __future__ import annotations

import atexit
import os
import re
import threading

from . import index, launch, linalg, nn, reduce
from .runtime import Runtime

# the packed product an untuned CPU device runs (linalg.DEFAULT_CPU): its panel (rm, rn)
_DEFAULT_PANEL = tuple(int(v) for v in linalg.DEFAULT_CPU.removeprefix("packed").split("x"))


def _members(dt: str) -> list:
    out = [(("elementwise", dt), lambda: launch._family_source(dt)),
           (("reduce-cold", dt, dt), lambda: reduce._cold_source(dt, dt)),
           (("arg", dt), lambda: reduce._arg_family(dt)),
           (("scatter_add", dt), lambda: index._scatter_source(dt))]
    if dt == "float32":
        out += [(("take-words",), index._take_words_source)]
        out += [(("colsum", dt), lambda: reduce._colsum_source(dt)),
                (("matmul-naive", dt), lambda: linalg._naive_source(dt))]
        out.append((("conv-rows", dt), lambda: nn._rows_source(dt)))
        out.append((("matmul-packed", *_DEFAULT_PANEL),
                    lambda: linalg._packed_source(*_DEFAULT_PANEL)))
        out.append((("matmul-pack",), linalg.pack_any_source))
        out += [(("max_pool", dt), lambda: nn._max_pool_source(dt)),
                (("max_pool_backward", dt), lambda: nn._max_pool_backward_source(dt))]
    return out


# float32's and int64's families build as one program: a second build cost ~0.3 s of CPU
# more than its kernels' share (the fixed part). Names both define (take, u0__flat, ...)
# get the later member's dtype as a suffix in the bundle (Runtime._build_bundle).
BUNDLES = {"training": _members("float32") + _members("int64")}
_OF = {key: name for name, members in BUNDLES.items() for key, _ in members}


def bundle_of(key):
    name = _OF.get(key)
    return None if name is None else BUNDLES[name]


# --- compiling ahead on the other core ------------------------------------------------------
# PoCL compiles a kernel at its first launch, one kernel at a time per context (its compiler
# lock is the context's), and keeps what it compiled in its disk cache under the program's
# source hash, which another context building the same source shares (measured: a kernel
# compiled in a second context launched in the first without compiling, 0.001 s against
# ~0.15 s). So once the training bundle is built, a helper thread builds it again in a
# context of its own (a hit in PoCL's cache, ~0.06 s) and launches the kernels a training
# step meets, from the last the step needs to the first, while the step compiles them
# from the first (measured on the demo, load ~2: the run compiled 8 of its 17 kernels, the
# helper 9; epoch 1 with every cache empty 3.7 s median against 4.0 s without the helper,
# 4.9 against 5.0 at load ~3, where the second core is mostly taken).
# Each kernel below, launched as one work-item with every scalar 0 and every buffer a
# 64 KiB scratch one, returns at once (`packed` stores its 6x16 zeros at the scratch's
# start); the helper stops at the first kernel the run has already looked up, and at
# interpreter exit after the kernel it is on. EMBER_OPENCL_COMPILE_AHEAD=0 turns it off.
# The order is the demo's first step (a small CNN classifier: batch take, conv, pool,
# linear, cross-entropy, accuracy count, Adam).
AHEAD = [
    (("take-words",), "take_words"), (("conv-rows", "float32"), "conv_rows"),
    (("matmul-pack",), "pack_any"), (("matmul-packed", *_DEFAULT_PANEL), "packed"),
    (("elementwise", "float32"), "u0__strided3"), (("elementwise", "float32"), "u1__flat"),
    (("elementwise", "float32"), "u2__flat"), (("max_pool", "float32"), "max_pool_pair"),
    (("matmul-naive", "float32"), "naive"), (("reduce-cold", "float32", "float32"), "reduce_cold"),
    (("elementwise", "float32"), "u0__flat"), (("elementwise", "int64"), "u1__flat"),
    (("elementwise", "int64"), "u2__flat"), (("reduce-cold", "int64", "int64"), "reduce_cold"),
    (("scatter_add", "float32"), "gather_scatter"), (("colsum", "float32"), "colsum"),
    (("arg", "float32"), "arg_argmax")]
_SCALAR_BYTES = {"uchar": 1, "char": 1, "short": 2, "int": 4, "uint": 4, "long": 8,
                 "float": 4, "double": 8, "long4": 32, "long8": 64}
_helpers: list = []


def _ahead_enabled(runtime) -> bool:
    if os.environ.get("EMBER_OPENCL_COMPILE_AHEAD", "1").strip().lower() in ("0", "off", "no"):
        return False
    if os.environ.get("POCL_KERNEL_CACHE", "1").strip() == "0":
        return False        # nothing compiled in another context would be found
    return runtime.is_cpu and "Portable Computing Language" in runtime.device.platform.name


def compile_ahead(runtime, key, source: str) -> None:
    """Runtime.bundle_built: start the helper for the training bundle (see AHEAD)."""
    if key not in _OF or _OF[key] != "training" or not _ahead_enabled(runtime):
        return
    stop = threading.Event()
    thread = threading.Thread(target=_ahead, args=(runtime, source, stop), daemon=True,
                              name=f"ember-opencl{runtime.index}-compile-ahead")
    _helpers.append((thread, stop))
    if len(_helpers) == 1:
        atexit.register(_stop_helpers)
    thread.start()


def _stop_helpers() -> None:
    """At exit: each helper stops after the kernel it is compiling (a compile cannot be
    interrupted, and PoCL must not be torn down under it)."""
    for _thread, stop in _helpers:
        stop.set()
    for thread, _ in _helpers:
        thread.join()


def _ahead(runtime, source: str, stop) -> None:
    import numpy as np
    cl = runtime.cl
    try:
        context = cl.Context([runtime.device])
        queue = cl.CommandQueue(context)
        program = cl.Program(context, source).build()
        scratch = cl.Buffer(context, cl.mem_flags.READ_WRITE, 1 << 16)
        signatures = dict(re.findall(r"__kernel\s+void\s+(\w+)\s*\(([^)]*)\)", source))
        for mkey, name in reversed(AHEAD):
            if stop.is_set() or (mkey, name) in runtime._kernels:
                return          # the run has come this far itself: the rest are done
            name = runtime._renamed.get(mkey, {}).get(name, name)
            params = signatures.get(name)
            if params is None:
                continue
            kernel = getattr(program, name)
            for i, param in enumerate(p.strip() for p in params.split(",")):
                if "*" in param:
                    kernel.set_arg(i, scratch)
                else:
                    kernel.set_arg(i, np.zeros(1, np.dtype((np.void,
                                                            _SCALAR_BYTES[param.split()[0]])))[0])
            cl.enqueue_nd_range_kernel(queue, kernel, (1,), (1,))
            queue.finish()
    except Exception:  # noqa: BLE001  (compiling ahead only saves time: the run compiles)
        return


Runtime.bundle_of = staticmethod(bundle_of)
Runtime.bundle_built = staticmethod(compile_ahead)
