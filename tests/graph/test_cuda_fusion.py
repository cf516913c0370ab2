"""The elementwise fusion CuPy's ember.compile uses (backends/cupy/fusion.py), without a GPU:

- the rewrite (which trees fuse, what they read, where they run) on the 'fixedmem' NumPy
  device of test_static_replay.py, each tree run by its own unfused kernels: training
  must stay bit-identical to eager, and trees must not span effects or swallow results;
- the CUDA C each tree renders, compiled and run as OpenCL C on PoCL (the body uses only C
  both accept), against the unfused NumPy kernels, NaN and infinities included: exact for
  arithmetic, comparisons and selects, within a few ulps where a libm function is called
  (PoCL's exp is not NumPy's).

- the same C as CuPy compiles it, through NVRTC (the pip wheel runs without a GPU), in a
  wrapper declaring what CuPy's ElementwiseKernel declares (const inputs, `out` a
  reference), with the options fusion.py passes.

On a GPU, test_cuda_graphs.py runs the real kernels (FusedKernel compares each with the
unfused kernels on its first call).
"""
from __future__ import annotations

import zlib

import ember
import numpy as np
import pytest
from ember.backends.cupy import fusion
from ember.backends.cupy.graphs import replay_for
from ember.graph.replay import needed
from ember.testing import devices_under_test
from test_compile import MODELS, _train
from test_static_replay import FixedMemoryBackend, FixedMemoryGraphs, registered, same

OPENCL = [d for d, why in devices_under_test() if why is None and d.startswith("opencl")][:1]


class FusingBackend(FixedMemoryBackend):
    """fixedmem with CuPy's compile_graph (graphs.replay_for): rewrite, then fixed-memory
    replay, each tree run by its own unfused kernels."""

    def __init__(self):
        super().__init__()
        self.rewritten: list = []

    def compile_graph(self, graph):
        replay = replay_for(graph, FixedMemoryGraphs(), fusion.unfused_kernel)
        self.rewritten.append((graph, replay.graph))
        self.replays.append(replay)
        return replay


@pytest.fixture
def fusing():
    with registered(FusingBackend()) as backend:
        yield backend


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fused_training_equals_eager(name, fusing):
    eager = _train(name, "fixedmem", False)
    compiled = _train(name, "fixedmem", True)
    (replay,) = fusing.replays
    assert replay.why_not is None and replay.replays >= 15
    same(eager, compiled)
    (graph, g), = fusing.rewritten
    fused = [n for n in g.nodes if n.name == "fused_elementwise"]
    assert fused, "nothing fused"
    before, after = len(needed(graph)), len(g.nodes)
    assert after == before - sum(len(n.meta["fused"]) - 1 for n in fused)


def test_trees_never_span_effects_nor_swallow_results(fusing):
    w = ember.ones(4, device="fixedmem")

    def f(x):
        y = (x * 2).exp()            # one tree: mul -> exp
        w.add_(1)                    # an effect: what follows reads the new w
        z = (y + w).tanh()           # another tree, from y (read once) and w
        a = (x - 1).abs()            # a is a result: its tree ends at it
        return z, a, (a * 3).neg()
    run = ember.compile(f)
    x = ember.tensor(np.linspace(-1, 1, 4), dtype=ember.float32, device="fixedmem")
    w0 = w.numpy().copy()
    outs = [[t.numpy().copy() for t in run(x)] for _ in range(6)]
    (graph, g), = fusing.rewritten
    trees = [n.meta["fused"] for n in g.nodes if n.name == "fused_elementwise"]
    assert ["mul", "exp"] in trees and ["sub", "abs"] in trees and ["mul", "neg"] in trees
    assert not any("add" in t and "mul" in t for t in trees)
    xs = x.numpy()
    for k, (z, a, b) in enumerate(outs):
        wk = w0 + k + 1
        np.testing.assert_allclose(z, np.tanh(np.exp(xs * 2) + wk), rtol=1e-6)
        np.testing.assert_array_equal(a, np.abs(xs - 1))
        np.testing.assert_array_equal(b, -(np.abs(xs - 1) * 3))


# --- the rendered CUDA C, run as OpenCL C on PoCL ----------------------------------------

_LOCAL = {"float32": "float", "float64": "double", "bool": "bool", "int32": "int",
          "int64": "long"}
_BUFFER = {"float32": "float", "float64": "double", "bool": "uchar", "int32": "int",
           "int64": "long"}
_LIBM = {"exp", "log", "sqrt", "tanh", "sin", "cos", "tan", "log1p", "expm1", "sigmoid",
         "rsqrt"}


def _kernel_source(name, externals, out_value, body) -> str:
    params, loads = [], []
    for k, v in enumerate(externals):
        d = v.dtype.name
        params.append(f"__global const {_BUFFER[d]}* a{k}p")
        loads.append(f"{_LOCAL[d]} a{k} = " + (f"a{k}p[i] != 0;" if d == "bool" else
                                               f"a{k}p[i];"))
    od = out_value.dtype.name
    return (f"__kernel void {name}({', '.join(params)}, __global {_BUFFER[od]}* outp) {{\n"
            "size_t i = get_global_id(0);\n" + "\n".join(loads) +
            f"\n{_LOCAL[od]} out;\n{body}\noutp[i] = out;\n}}\n")


def _build_on_pocl(cases):
    """One OpenCL program holding a kernel `fused<k>` per (members, externals) case: one
    build for all of them (a build per kernel cost ~0.27 s each, 88 of them)."""
    import pyopencl as cl
    rt = ember.device(OPENCL[0]).backend.runtime(0)
    source = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
              "#pragma OPENCL FP_CONTRACT OFF\n" + fusion.PREAMBLE +
              "".join(_kernel_source(f"fused{k}", externals, members[-1].out,
                                     fusion.render(members)[3])
                      for k, (members, externals) in enumerate(cases)))
    program = cl.Program(rt.context, source).build(
        options=["-cl-fp32-correctly-rounded-divide-sqrt"])
    return rt, program


def _run_on_pocl(rt, kernel, out_value, arrays):
    import pyopencl as cl
    od = out_value.dtype.name
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    mf = cl.mem_flags
    bufs = []
    for a in arrays:
        host = np.ascontiguousarray(np.broadcast_to(a, shape))
        host = host.astype(np.uint8) if host.dtype == np.bool_ else host
        bufs.append(cl.Buffer(rt.context, mf.READ_ONLY | mf.COPY_HOST_PTR,
                              hostbuf=host if host.size else np.zeros(1, host.dtype)))
    odt = np.uint8 if od == "bool" else np.dtype(od)
    out = np.empty(shape, odt)
    obuf = cl.Buffer(rt.context, mf.WRITE_ONLY, max(out.nbytes, 1))
    kernel(rt.queue, (max(out.size, 1),), None, *bufs, obuf)
    cl.enqueue_copy(rt.queue, out, obuf)
    return out.astype(bool) if od == "bool" else out


def _values(rng, v):
    d = v.dtype.name
    shape = v.shape
    if d == "bool":
        return rng.random(shape) < 0.5
    if d in ("int32", "int64"):
        return rng.integers(-5, 5, shape).astype(d)
    x = (rng.standard_normal(shape) * 3).astype(d)
    flat = x.reshape(-1)
    if flat.size >= 8:                 # the special values every float op must pass through
        flat[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-38]
        rng.shuffle(flat)
    return x


def _every_op(x, y, n):
    """A program whose trees hold every kind of node the fusion takes."""
    # ops.minimum: the primitive with a number (torch.minimum, and ember.minimum, refuse one)
    a = ember.maximum(x, y * 0.5) - ember.ops.minimum(x, 1.5)
    b = ember.sigmoid(a).sqrt() + (x.abs() + 1).log1p()
    c = ember.where(ember.logical_and(x > y, n > 2), b, -a.expm1())
    d = (c.sin() * c.cos() + (y * 0.1).tan()) * (x * x + 1).rsqrt() + y.reciprocal()
    e = (x.double() * 2 + 1).float() + (x != 0.25).float() + n.float() * 0.5
    f = ember.logical_not(ember.logical_or(x <= 0.5, y >= -0.5))
    g = ember.where(x < 0, (x - 1).exp(), 2.5) / (y.log() - 3)
    return d + e, f, ember.relu(x) * y + g


def _trees():
    """Every tree the four models' compiled train steps fuse on a CuPy-shaped table, and
    _every_op's."""
    with registered(FusingBackend()) as backend:
        for name in sorted(MODELS):
            _train(name, "fixedmem", True)
        run = ember.compile(_every_op)
        rng = np.random.default_rng(0)
        for _ in range(3):
            run(*(ember.tensor(rng.standard_normal((4, 8)), dtype=ember.float32,
                               device="fixedmem") for _ in range(2)),
                ember.tensor(rng.integers(0, 5, (4, 8)), device="fixedmem"))
    found = {}
    for graph, _ in backend.rewritten:
        for members in fusion.groups(graph, needed(graph)):
            externals, _, _, body = fusion.render(members)
            found.setdefault(body, (members, externals))
    return list(found.values())


@pytest.mark.skipif(not OPENCL, reason="no OpenCL device under test")
def test_rendered_kernels_compute_what_the_unfused_kernels_do():
    with np.errstate(all="ignore"):
        trees = _trees()
    taken = {n.name for members, _ in trees for n in members}
    every = set(fusion.UNARY) | set(fusion.BINARY) | {"sigmoid", "where", "cast", "gt", "lt",
                                                      "le", "ge", "ne", "logical_and",
                                                      "logical_or", "logical_not"}
    assert every <= taken, sorted(every - taken)
    rng = np.random.default_rng(zlib.crc32(b"fusion"))
    # each tree whole, then each of its nodes alone (in a tree, a later node can hide an
    # earlier one's nan: maximum's, under a minimum's nan)
    singles = {}
    for members, _ in trees:
        for n in members:
            externals, _, _, body = fusion.render([n])
            singles.setdefault(body, ([n], externals))
    cases = trees + list(singles.values())
    rt, program = _build_on_pocl(cases)
    for k, (members, externals) in enumerate(cases):
        arrays = [_values(rng, v) for v in externals]
        with np.errstate(all="ignore"):
            want = np.asarray(fusion.unfused_kernel(members, externals)(*arrays))
        _, _, _, body = fusion.render(members)
        got = _run_on_pocl(rt, getattr(program, f"fused{k}"), members[-1].out, arrays)
        assert got.dtype == want.dtype and got.shape == want.shape, body
        names = {n.name for n in members}
        if names & _LIBM:
            np.testing.assert_allclose(got, want, rtol=4e-6, atol=1e-30, err_msg=body)
        else:
            np.testing.assert_array_equal(got, want, err_msg=body)


# --- and through NVRTC, as CuPy compiles it ------------------------------------------------

_CUDA = {"float32": "float", "float64": "double", "bool": "bool", "int32": "int",
         "int64": "long long"}


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc
        nvrtc.getVersion()
        return nvrtc
    except Exception as exc:        # noqa: BLE001  (no NVRTC library: say why)
        pytest.skip(f"NVRTC is not loadable here ({type(exc).__name__}: {exc})")


def test_rendered_kernels_compile_with_nvrtc():
    nvrtc = _nvrtc()
    with np.errstate(all="ignore"):
        trees = _trees()
    sources = []
    for members, externals in trees:
        _, in_params, out_params, body = fusion.render(members)
        od = members[-1].out.dtype.name
        params = [f"const {_CUDA[v.dtype.name]}* _raw_a{k}" for k, v in enumerate(externals)]
        loads = [f"const {_CUDA[v.dtype.name]} a{k} = _raw_a{k}[i];"
                 for k, v in enumerate(externals)]
        sources.append(
            fusion.PREAMBLE + f'extern "C" __global__ void ember_fused('
            f"{', '.join(params)}, {_CUDA[od]}* _raw_out, long long n) {{\n"
            "for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; "
            "i += (long long)blockDim.x * gridDim.x) {\n" + "\n".join(loads) +
            f"\n{_CUDA[od]} &out = _raw_out[i];\n{body}\n}}\n}}\n")
    for source in sources:
        prog = nvrtc.createProgram(source, "ember_fused.cu", [], [])
        try:
            nvrtc.compileProgram(prog, ["--fmad=false", "-arch=compute_90", "--std=c++17"])
        except Exception as exc:     # noqa: BLE001
            pytest.fail(f"NVRTC: {exc}\n{nvrtc.getProgramLog(prog)}\n{source}")
        assert b".entry ember_fused" in nvrtc.getPTX(prog)
