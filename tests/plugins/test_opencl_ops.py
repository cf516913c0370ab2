"""Every primitive on opencl:0 against the CPU backend: dtypes, shapes, broadcasting,
non-contiguous views, empty and 0-d tensors, special values, and the dtype capability rules."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.nn import functional as F

FLOATS = ("float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
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


def place(a: np.ndarray, layout: str, device: str):
    """A tensor holding `a` on device, stored as `layout` (views are real strided views)."""
    if layout == "contiguous" or a.ndim == 0:
        return ember.tensor(a, device=device)
    if layout == "strided":            # every other element of a wider buffer
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1] + 1,), a.dtype)
        wide[..., 1::2] = a
        return ember.tensor(wide, device=device)[..., 1::2]
    if layout == "transposed" and a.ndim >= 2:
        return ember.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)),
                            device=device).transpose(-1, -2)
    if layout == "reversed":           # negative strides
        return ember.tensor(np.ascontiguousarray(a[..., ::-1]), device=device)[..., ::-1]
    return ember.tensor(a, device=device)


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


UNARY_FLOAT = {"exp": "f", "log": "p", "log1p": "p", "expm1": "f", "sqrt": "p", "rsqrt": "p",
               "sin": "f", "cos": "f", "tanh": "f", "sigmoid": "f", "erf": "f",
               "reciprocal": "p", "floor": "f", "ceil": "f", "round": "s", "abs": "f",
               "neg": "f", "sign": "s", "isnan": "s", "isinf": "s", "isfinite": "s",
               "logical_not": "s"}
UNARY_INT = ("abs", "neg", "sign", "floor", "ceil", "round", "logical_not", "isnan", "isinf",
             "isfinite")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY_FLOAT))
def test_unary_float(opencl_device, op, dtype):
    fn = getattr(ember, op)
    check(opencl_device, fn, [host(UNARY_FLOAT[op], (6, 5), dtype)])
    if UNARY_FLOAT[op] != "s":
        check(opencl_device, fn, [host("s", (12,), dtype)], layouts=("contiguous",))


@pytest.mark.parametrize("dtype", ("uint8", "int8", "int64", "bool"))
def test_unary_int_and_bool(opencl_device, dtype):
    for op in UNARY_INT:
        if dtype == "bool" and op in ("neg", "sign", "floor", "ceil", "round"):
            continue                   # PyTorch refuses neg; the CPU's NumPy lacks the rest
        check(opencl_device, getattr(ember, op), [host("b" if dtype == "bool" else "i",
                                                       (4, 6), dtype)])
    if dtype == "bool":               # identities on bool, as PyTorch
        b = host("b", (4, 6), "bool")
        t = place(b, "strided", opencl_device)
        for op in ("sign", "floor", "ceil", "round", "abs"):
            out = getattr(ember, op)(t)
            assert out.dtype is ember.bool
            np.testing.assert_array_equal(out.numpy(), b)
    # float ops on integers compute in the default float, as PyTorch
    check(opencl_device, ember.exp, [host("i", (3, 4), dtype)], layouts=("contiguous",))


BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder",
          "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
          "logical_xor")


def _operands(op, dtype):
    if dtype == "bool":
        return "b", "b"
    if op == "pow":
        return ("p", "f") if dtype in FLOATS else ("i", "e")
    if op in ("div", "remainder", "floor_divide"):
        return ("f", "n") if dtype in FLOATS else ("i", "n")
    return ("f", "f") if dtype in FLOATS else ("i", "i")


@pytest.mark.parametrize("dtype", FLOATS + ("int32", "int64", "uint8"))
@pytest.mark.parametrize("op", BINARY)
def test_binary(opencl_device, op, dtype):
    fn = getattr(ember, op)
    kx, ky = _operands(op, dtype)
    x, y = host(kx, (3, 4, 5), dtype, 1), host(ky, (3, 4, 5), dtype, 2)
    if op == "pow" and dtype == "uint8":
        x = x % 3
    check(opencl_device, fn, [x, y], rtol=1e-5 if op != "pow" else 1e-4)
    # broadcasting across both operands, and Python scalars on either side
    check(opencl_device, fn, [x[:, :1], y[0]], layouts=("contiguous", "reversed"))
    scalar = 2 if dtype not in FLOATS else 1.5
    check(opencl_device, lambda a: fn(a, scalar), [x], layouts=("contiguous", "strided"))
    if dtype != "uint8" or op not in ("sub",):
        check(opencl_device, lambda a: fn(scalar, a), [y], layouts=("contiguous",))


@pytest.mark.parametrize("op", ("add", "mul", "maximum", "eq", "logical_xor"))
def test_binary_bool(opencl_device, op):
    check(opencl_device, getattr(ember, op), [host("b", (5, 4), "bool", 1),
                                              host("b", (5, 4), "bool", 2)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_division_edges(opencl_device, dtype):
    # zero divisors, signed zeros, infinities: NumPy's divmod rules, exactly
    x = np.resize(SPECIAL, (12, 12)).astype(dtype)
    y = np.resize(SPECIAL, (12, 12)).T.astype(dtype)
    for op in ("div", "remainder", "floor_divide", "maximum", "minimum", "pow"):
        check(opencl_device, getattr(ember, op), [x, y], layouts=("contiguous",))


def test_integer_division_edges(opencl_device):
    x = np.array([7, -7, 7, -7, 0, 5, -9223372036854775808], dtype=np.int64)
    y = np.array([2, 2, -2, -2, 3, 1, 1], dtype=np.int64)
    for op in ("remainder", "floor_divide"):
        check(opencl_device, getattr(ember, op), [x, y], layouts=("contiguous",))


def test_empty_and_zero_dim(opencl_device):
    for a, b in [((0, 4), (4,)), ((), ()), ((), (3, 2)), ((2, 0, 3), (1, 1, 3))]:
        x, y = host("f", a, "float32", 1), host("f", b, "float32", 2)
        check(opencl_device, ember.add, [x, y], layouts=("contiguous",))
        check(opencl_device, ember.lt, [x, y], layouts=("contiguous",))
        check(opencl_device, lambda t: t.exp(), [x], layouts=("contiguous",))
    # a 0-d CPU tensor goes with an opencl tensor, like a scalar
    t = place(host("f", (3,), "float32"), "contiguous", opencl_device)
    same(t * ember.tensor(2.0), ember.tensor(host("f", (3,), "float32")) * 2.0)


def test_where(opencl_device):
    c = host("b", (4, 1, 5), "bool")
    x, y = host("f", (3, 5), "float32", 1), host("f", (4, 3, 1), "float32", 2)
    check(opencl_device, ember.where, [c, x, y])
    check(opencl_device, lambda c_, x_: ember.where(c_, x_, 0.0), [c, x])
    check(opencl_device, lambda c_, y_: ember.where(c_, -1.5, y_), [c, y])
    # two scalar branches: the promoted scalar dtype (the default float)
    got = ember.where(place(c, "strided", opencl_device), 1.0, 2.0)
    assert got.dtype is ember.float32
    np.testing.assert_array_equal(got.numpy(), np.where(c, 1.0, 2.0).astype(np.float32))
    check(opencl_device, ember.where, [c, host("i", (5,), "int64"), host("i", (3, 5),
                                                                        "int64")])


CAST_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64")


@pytest.mark.parametrize("src", CAST_DTYPES)
def test_cast(opencl_device, src):
    a = host("b" if src == "bool" else "i" if src not in FLOATS else "f", (3, 4), src)
    if src in FLOATS:
        a = (a * 20).astype(src)       # in range of every integer target
    for dst in CAST_DTYPES:
        if dst == "uint8" and src in FLOATS:
            continue                   # negative float -> uint8 is undefined in C and NumPy
        check(opencl_device, lambda t, d=dst: t.to(getattr(ember, d)), [a],
              layouts=("contiguous", "transposed"))


REDUCE_AXES = [None, 0, 1, (0, 2), (1, 2), -1]


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int64", "bool"))
def test_reductions(opencl_device, dtype):
    kind = "b" if dtype == "bool" else "i" if dtype in INTS else "f"
    x = host(kind, (4, 5, 6), dtype)
    for axes in REDUCE_AXES:
        for keep in (False, True):
            for op in ("sum", "prod", "amax", "amin", "any", "all"):
                if op in ("amax", "amin") and dtype == "bool":
                    continue
                fn = getattr(ember, op)
                check(opencl_device, lambda t, f=fn, a=axes, k=keep: f(t, a, k), [x],
                      layouts=("contiguous", "transposed"), rtol=1e-5)
    for dim in (None, 0, 2):
        for op in ("argmax", "argmin"):
            if dtype == "bool":
                continue
            check(opencl_device, lambda t, o=op, d=dim: getattr(ember, o)(t, d), [x],
                  layouts=("contiguous", "strided"))
            check(opencl_device, lambda t, o=op: getattr(ember, o)(t, 1, True), [x],
                  layouts=("contiguous",))


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


def test_movement(opencl_device):
    x = host("f", (4, 5, 6), "float32")
    check(opencl_device, lambda t: t.reshape(20, 6), [x])
    check(opencl_device, lambda t: t.reshape(-1), [x])
    check(opencl_device, lambda t: t.permute(2, 0, 1) + 0, [x])
    check(opencl_device, lambda t: t[:, :1].expand(4, 3, 6) * 1, [x])
    check(opencl_device, lambda t: t[1:4:2, ::-2, 5:0:-3], [x])
    check(opencl_device, lambda t: t[::-1, 2], [x])
    check(opencl_device, lambda t: t.flip((0, 2)), [x])
    check(opencl_device, lambda t: F.pad(t, (1, 2, 0, 3), value=-1.5), [x])
    check(opencl_device, lambda a, b: ember.cat([a, b, a], 1), [x, host("f", (4, 2, 6),
                                                                         "float32")])
    check(opencl_device, lambda a, b: ember.cat([a, b], 0),
          [host("i", (2, 3), "int32"), host("f", (1, 3), "float64")], layouts=("contiguous",))
    check(opencl_device, lambda t: t.contiguous(), [x])
    check(opencl_device, lambda t: t.clone().reshape(6, 20), [x])
    check(opencl_device, lambda a, b: ember.ops.slice_scatter(
        a, b, (slice(0, 4, 2), slice(0, 5), slice(5, None, -2))), [x, host("f", (2, 5, 3),
                                                                           "float32")])


def test_views_are_views(opencl_device):
    base = ember.zeros(4, 6, device=opencl_device)
    view = base[1:3, ::2]
    view[...] = 7.0                    # assign writes through the strided view
    want = np.zeros((4, 6), np.float32)
    want[1:3, ::2] = 7.0
    np.testing.assert_array_equal(base.numpy(), want)
    flipped = base.flip(0)             # flip copies, as in PyTorch
    flipped[0] = 1.0
    np.testing.assert_array_equal(base.numpy(), want)


def test_setitem(opencl_device):
    def run(device):
        x = ember.arange(24, dtype=ember.float32, device=device).reshape(4, 6)
        x[1:, 1:] = x[:-1, :-1]           # overlapping source and target
        x[:, ::-1] = x.clone()
        x[1] = 5.0
        x[:, 2:5:2] = ember.tensor([[-1.0, -2.0]], device=device)
        x[ember.tensor([0, 3, 0], device=device)] = ember.tensor(
            [[1.0] * 6, [2.0] * 6, [3.0] * 6], device=device)    # repeated: last write wins
        x[x > 20] = 0.0
        t = x.T
        t[0] = 9.0
        return x
    same(run(opencl_device), run("cpu"))


def test_indexing(opencl_device):
    x = host("f", (5, 4, 3), "float32")
    idx = np.array([4, 0, 4, 2, 4], dtype=np.int64)
    check(opencl_device, lambda t, i: ember.index_select(t, 0, i), [x, idx])
    check(opencl_device, lambda t, i: ember.take_along(t, i, 1), [x, np.array([[3, 0], [3, 3]])])
    check(opencl_device, lambda t, i: ember.take_along(t, i, 2), [x, np.array([2, 2, -1])],
          layouts=("contiguous",))
    g = np.random.default_rng(0).integers(0, 4, (5, 2, 3))
    check(opencl_device, lambda t, i: ember.gather(t, 1, i), [x, g])
    check(opencl_device, lambda t, i: t[i, 1:, ::2], [x, np.array([1, 1, 0])],
          layouts=("contiguous", "strided"))
    check(opencl_device, lambda t: t[t > 0.5], [x], layouts=("contiguous", "transposed"))
    for dtype in ("float32", "float64", "int64", "int32"):
        kind = "f" if dtype in FLOATS else "i"
        base, src = host(kind, (5, 4, 3), dtype, 1), host(kind, (5, 4, 3), dtype, 2)
        rep = np.random.default_rng(1).integers(0, 4, (5, 4, 3))   # many repeats
        check(opencl_device, lambda b, i, s: ember.scatter_add(b, 1, i, s),
              [base, rep, src], rtol=1e-6)
        check(opencl_device, lambda b, i, s: ember.index_add(b, 0, i, s),
              [base, idx, host(kind, (5, 4, 3), dtype, 3)], rtol=1e-6)
        check(opencl_device, lambda b, i, s: ember.index_add(b, 2, i, s),
              [base, np.array([[0, 2], [2, 2]]), host(kind, (5, 4, 2, 2), dtype, 4)],
              layouts=("contiguous",), rtol=1e-6)


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


def test_creation(opencl_device):
    for dtype in CAST_DTYPES:
        d = getattr(ember, dtype if dtype != "bool" else "bool")
        same(ember.full((2, 3), 1, dtype=d, device=opencl_device), ember.full((2, 3), 1,
                                                                                 dtype=d))
        same(ember.zeros(0, 3, dtype=d, device=opencl_device), ember.zeros(0, 3, dtype=d))
    for args, kw in [((10,), {}), ((2, 11, 3), {}), ((0.5, 3.0, 0.25), {}), ((5, 1, -1), {}),
                     ((3,), {"dtype": ember.float64}), ((0,), {})]:
        same(ember.arange(*args, device=opencl_device, **kw), ember.arange(*args, **kw))
    same(ember.full((), 2.5, device=opencl_device), ember.full((), 2.5))


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
