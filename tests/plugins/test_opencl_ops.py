"""OpenCL kernel structures against the CPU backend: chunked and unrolled reductions, the
multi-work-group nonzero, the tuned matmul blocks, the CPU- and GPU-device variants of
unfold/fold, and the dtype capability rules.

Every op on every dtype, layout and edge value is the conformance suite's (ember.testing,
run for opencl:0 by tests/ops); these are the sizes and device variants it does not reach."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.testing.checks import place

FLOATS = ("float32", "float64")
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5, -1.0, 3.0, 1e-30])


def host(kind: str, shape, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "f":
        a = rng.standard_normal(shape) * 2
    elif kind == "p":
        a = rng.uniform(0.1, 3.0, shape)
    elif kind == "i":
        a = rng.integers(-6, 7, shape)
    elif kind == "n":                  # non-zero integers of both signs: divisors
        a = rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)
    elif kind == "e":                  # small non-negative exponents
        a = rng.integers(0, 4, shape)
    elif kind == "b":
        a = rng.random(shape) < 0.5
    elif kind == "s":
        a = np.resize(SPECIAL, shape)
    else:
        raise ValueError(kind)
    if dtype == "uint8" and kind in ("i", "n"):
        a = np.abs(a)
    return np.asarray(a).astype(ember.dtypes.get_dtype(dtype).np)


def same(got, want, rtol=1e-5, atol=1e-6, where=""):
    got, want = (list(v) if isinstance(v, (tuple, list)) else [v] for v in (got, want))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.device).startswith("opencl"), f"{where}: result on {g.device}"
        assert g.dtype is w.dtype, f"{where}: dtype {g.dtype}, expected {w.dtype}"
        assert tuple(g.shape) == tuple(w.shape), f"{where}: shape {g.shape} vs {w.shape}"
        gh, wh = g.detach().numpy(), w.detach().numpy()
        assert gh.dtype == wh.dtype
        if g.dtype.is_floating_point:
            np.testing.assert_allclose(gh, wh, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(gh, wh, err_msg=where)


def check(device, fn, inputs, layouts=("contiguous", "strided", "transposed"), **tol):
    """fn on CPU tensors vs fn on opencl tensors built from the same host arrays."""
    with np.errstate(all="ignore"):   # the CPU reference warns on cos(inf) and the like
        want = fn(*[ember.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs])
    for layout in layouts:
        got = fn(*[place(a, layout, device) if isinstance(a, np.ndarray) else a
                   for a in inputs])
        same(got, want, where=layout, **tol)


def test_reduction_edges(opencl_device):
    big = host("f", (300_000,), "float32")            # chunked: two passes
    check(opencl_device, lambda t: t.sum(), [big], layouts=("contiguous", "strided"),
          rtol=1e-4, atol=1e-3)
    check(opencl_device, lambda t: t.amax(), [big], layouts=("contiguous",))
    check(opencl_device, lambda t: (t.sum(0), t.amin(1)), [host("f", (3000, 7), "float32")],
          layouts=("contiguous", "transposed"), rtol=1e-4, atol=1e-4)
    nan = host("s", (4, 12), "float32")
    for op in ("amax", "amin", "argmax", "argmin", "sum"):
        check(opencl_device, lambda t, o=op: getattr(ember, o)(t, 1), [nan],
              layouts=("contiguous",))
    for n in (7, 8, 9, 23, 64):      # the unrolled accumulators: NaN and extremes in any lane
        for pos in {0, 3, n - 1, n // 2}:
            row = host("f", (3, n), "float32")
            row[1, pos], row[2, pos] = np.nan, 1e30
            for op in ("amax", "amin", "sum", "prod", "any", "all"):
                check(opencl_device, lambda t, o=op: getattr(ember, o)(t, 1), [row],
                      layouts=("contiguous", "transposed", "strided"), rtol=1e-5)
    ints = host("i", (5, 37), "int32")
    ints[2, 17] = np.iinfo(np.int32).max      # wraps, as on the CPU
    check(opencl_device, lambda t: (t.sum(1), t.prod(1), t.amax(0), t.amin(1)), [ints],
          layouts=("contiguous", "strided"))
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], dtype=np.int64)
    check(opencl_device, lambda t: (t.argmax(1), t.argmin(1)), [ties], layouts=("contiguous",))
    empty = host("f", (0, 3), "float32")
    for op in ("sum", "prod", "any", "all"):
        check(opencl_device, lambda t, o=op: (getattr(ember, o)(t, 0), getattr(ember, o)(t)),
              [empty], layouts=("contiguous",))
    zero_d = np.array(2.5, dtype=np.float32)
    check(opencl_device, lambda t: (t.sum(), t.prod(), t.amax(), t.argmax()),
          [zero_d], layouts=("contiguous",))
    t = ember.tensor(zero_d, device=opencl_device)
    assert t.any().numpy().dtype == np.bool_ and t.any().item() is True
    assert t.all(0).item() is True and (t * 0).all().item() is False



def test_nonzero(opencl_device):
    for shape in [(7, 5), (3000,), (2, 0, 3), ()]:
        x = host("i", shape, "int32") if shape else np.array(3, np.int32)
        x = np.where(np.abs(x) > 3, x, 0).astype(np.int32)
        check(opencl_device, lambda t: ember.nonzero(t), [x], layouts=("contiguous",
                                                                        "strided"))
    check(opencl_device, lambda t: ember.nonzero(t), [np.array(0.0, np.float32)],
          layouts=("contiguous",))



@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int64"))
def test_matmul(opencl_device, dtype):
    kind = "f" if dtype in FLOATS else "i"
    tol = dict(rtol=2e-4, atol=2e-4)
    shapes = [((5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,)), ((7,), (7,)),
              ((2, 1, 5, 7), (3, 7, 4)), ((3, 5, 7), (7, 4)), ((0, 7), (7, 3)),
              ((4, 0), (0, 3))]
    if dtype == "float32":            # the tuned kernels: exact blocks and padded edges
        shapes += [((256, 128), (128, 96)), ((130, 70), (70, 45)), ((3, 70, 65), (65, 33)),
                   ((2, 70, 65), (2, 65, 33))]
    for a, b in shapes:
        check(opencl_device, ember.matmul, [host(kind, a, dtype, 1), host(kind, b, dtype, 2)],
              layouts=("contiguous", "transposed"), **tol)
    if dtype == "float32":            # B's panels as vectors: aligned rows, a partial block
        wide_a, wide_b = host(kind, (3, 96, 80), dtype, 3), host(kind, (3, 80, 64), dtype, 4)
        for n in (64, 40, 7):
            want = ember.tensor(wide_a) @ ember.tensor(wide_b)[..., :n]
            got = (ember.tensor(wide_a, device=opencl_device)
                   @ ember.tensor(wide_b, device=opencl_device)[..., :n])
            same(got, want, where=f"B = wide[..., :{n}]", **tol)


@pytest.mark.parametrize("params", [
    dict(kernel_size=3), dict(kernel_size=(2, 3), stride=2, padding=1),
    dict(kernel_size=2, dilation=2, padding=(0, 1), stride=(1, 2))])
@pytest.mark.parametrize("kind", ["cpu-device kernels", "gpu-device kernels"])
def test_unfold_fold(opencl_device, params, kind, monkeypatch):
    if kind.startswith("gpu"):       # the per-element kernels GPUs get, run on PoCL
        rt = ember.device(opencl_device).concrete().backend.runtime(0)
        monkeypatch.setattr(rt, "is_cpu", False)
    x = host("f", (2, 3, 7, 8), "float32")
    check(opencl_device, lambda t: ember.ops.unfold(t, **params), [x])
    cols = ember.ops.unfold(ember.tensor(x), **params).numpy()
    check(opencl_device, lambda t: ember.ops.fold(t, (7, 8), **params), [cols])


def test_gpu_device_variants_run_on_pocl(opencl_device, monkeypatch):
    """Kernel choices made for GPU devices (no non-temporal stores, the local-memory
    matmul tile for float64), exercised on PoCL by calling it a GPU."""
    rt = ember.device(opencl_device).concrete().backend.runtime(0)
    monkeypatch.setattr(rt, "is_cpu", False)
    big = host("f", (1 << 20,), "float32")
    check(opencl_device, lambda t: t * 2 + 1, [big], layouts=("contiguous",))
    if "float64" in ember.device(opencl_device).backend.capabilities(0).dtypes:
        a, b = host("f", (70, 65), "float64", 1), host("f", (65, 90), "float64", 2)
        check(opencl_device, ember.matmul, [a, b], layouts=("contiguous", "transposed"),
              rtol=1e-10, atol=1e-10)



def test_every_primitive_has_a_kernel(opencl_device):
    table = ember.device(opencl_device).kernels
    missing = sorted(set(ember.ops.OPS) - set(table))
    assert not missing, f"the OpenCL backend has no kernel for {missing}"


def test_dtype_capabilities(opencl_device):
    dev = ember.device(opencl_device)
    info = dev.backend.devices()[dev.index]
    caps = dev.backend.capabilities(dev.index).dtypes
    assert "bfloat16" not in caps
    assert ("float64" in caps) == info.fp64 and ("float16" in caps) == info.fp16
    with pytest.raises(ember.DtypeNotSupportedError, match="bfloat16"):
        ember.ones(3, dtype=ember.bfloat16, device=opencl_device)
    x = ember.ones(3, device=opencl_device)
    with pytest.raises(ember.DtypeNotSupportedError, match="opencl"):
        x.to(ember.bfloat16)
    if not info.fp16:
        with pytest.raises(ember.DtypeNotSupportedError, match="float16"):
            x.half()
    if not info.fp64:
        with pytest.raises(ember.DtypeNotSupportedError, match="float64"):
            x.double()
    # a Python float never promotes a float32 tensor to float64
    assert (x * 0.1).dtype is ember.float32 and (x + 1e300).dtype is ember.float32
