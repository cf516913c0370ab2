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

from . import index, launch, linalg, nn, reduce
from .runtime import Runtime


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
        # the packed product an untuned CPU device runs (linalg.DEFAULT_CPU)
        rm, rn = (int(v) for v in linalg.DEFAULT_CPU.removeprefix("packed").split("x"))
        out.append((("matmul-packed", rm, rn), lambda: linalg._packed_source(rm, rn)))
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


Runtime.bundle_of = staticmethod(bundle_of)
