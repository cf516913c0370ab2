"""Index functions with negative and out-of-range indices, and scatter_reduce over every
reduce mode and dtype, against PyTorch on cpu and opencl:0 (docs/semantics.md,
negative_indices_where_pytorch_takes_them).

The cases are generated: every function below, along each dim of a (3, 4) input, with each
index of the edge list (-size - 1, -size, -1, 0, size - 1, size) placed among valid ones.
ember must raise an IndexError exactly where PyTorch raises, and give PyTorch's values
elsewhere; the one decided difference is take_along_dim with a dim, which PyTorch wraps
modulo the size (silently reading element 0 for index 4) and ember refuses."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def _index(dim, bad):
    """A (3, 4)-shaped gather index along dim, valid except one entry, and a 1-D one."""
    size = X.shape[dim]
    full = np.zeros((3, 4), np.int64) + np.arange(4 if dim else 3).reshape(
        (1, 4) if dim else (3, 1)) % size
    full[1, 2] = bad
    return full, np.array([0, bad, size - 1], np.int64)


# name -> fn(T, x, dim, index2d, index1d), the same code on torch and ember
FUNCTIONS = {
    "gather": lambda T, x, d, i, v: T.gather(x, d, i),
    "scatter": lambda T, x, d, i, v: T.scatter(x, d, i, x * 10),
    "scatter_value": lambda T, x, d, i, v: T.scatter(x, d, i, 5.0),
    "scatter_add": lambda T, x, d, i, v: T.scatter_add(x, d, i, x),
    "scatter_reduce_sum": lambda T, x, d, i, v: T.scatter_reduce(x, d, i, x, "sum"),
    "scatter_reduce_mean": lambda T, x, d, i, v: T.scatter_reduce(x, d, i, x, "mean",
                                                                  include_self=False),
    "scatter_reduce_prod": lambda T, x, d, i, v: T.scatter_reduce(x, d, i, x, "prod"),
    "scatter_reduce_amax": lambda T, x, d, i, v: T.scatter_reduce(x, d, i, x, "amax"),
    "scatter_reduce_amin": lambda T, x, d, i, v: T.scatter_reduce(x, d, i, x, "amin"),
    "index_add": lambda T, x, d, i, v: T.index_add(x, d, v, T.ones_like(
        x.index_select(d, v.clamp(0, x.shape[d] - 1)))),
    "index_select": lambda T, x, d, i, v: T.index_select(x, d, v),
    "index_fill": lambda T, x, d, i, v: T.index_fill(x, d, v, -1.0),
    "take": lambda T, x, d, i, v: T.take(x, v * (d + 1)),
    "take_along_dim": lambda T, x, d, i, v: T.take_along_dim(x, i, d),
    "take_along_dim_flat": lambda T, x, d, i, v: T.take_along_dim(x, v),
    "getitem": lambda T, x, d, i, v: x[(slice(None),) * d + (v,)],
    "index_put": lambda T, x, d, i, v: T.index_put(
        x, (v,) if d == 0 else (T.zeros_like(v), v), x[0, 1]),
    "index_put_accumulate": lambda T, x, d, i, v: T.index_put(
        x, (v,) if d == 0 else (T.zeros_like(v), v), x[0, 1], accumulate=True),
    "embedding": lambda T, x, d, i, v: (T.nn.functional.embedding(v, x.T) if d
                                        else T.nn.functional.embedding(v, x)),
}
# PyTorch reads take_along_dim(x, i, dim) at i modulo the size: ember raises past
# [-size, size) instead (docs/semantics.md)
DECIDED = {"take_along_dim": lambda bad, size: not -size <= bad < size}


def _edges(size):
    return [-size - 1, -size, -1, 0, size - 1, size]


def _run(fn, T, x, d, i, v, device=None):
    if T is torch:
        return fn(torch, torch.tensor(x), d, torch.tensor(i), torch.tensor(v))
    return fn(ember, ember.tensor(x, device=device), d, ember.tensor(i, device=device),
              ember.tensor(v, device=device))


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_indices_as_torch(name, device):
    fn = FUNCTIONS[name]
    for d in (0, 1):
        size = X.shape[d]
        for bad in _edges(size):
            i, v = _index(d, bad)
            what = f"{name} along dim {d} with index {bad} (size {size}) on {device}"
            try:
                want = _run(fn, torch, X, d, i, v).numpy()
            except (IndexError, RuntimeError):
                want = None
            if want is None or DECIDED.get(name, lambda *_: False)(bad, size):
                with pytest.raises(IndexError) as got:
                    _run(fn, ember, X, d, i, v, device)
                assert isinstance(got.value, ember.EmberError), f"{what}: {got.value!r}"
                assert str(bad) in str(got.value) or "does not fit" in str(got.value), \
                    f"{what}: {got.value}"
                continue
            got = _run(fn, ember, X, d, i, v, device)
            assert got.dtype.name == str(want.dtype), what
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=what)


REDUCE_DTYPES = ("int64", "int32", "uint8", "int8", "float32", "float64", "bool")


@pytest.mark.parametrize("dtype", REDUCE_DTYPES)
def test_scatter_reduce_modes_and_dtypes_as_torch(dtype, device):
    """Every reduce mode, with and without the input, on random targets with repeats
    (and targets no source reaches): dtype and values as PyTorch's, or its refusal.  Other
    devices than the CPU run one dtype per kind (each dtype builds its own kernels)."""
    if device != "cpu" and dtype not in ("int64", "float32", "bool"):
        pytest.skip("one dtype per kind off the CPU")
    rng = seeded(f"scatter_reduce {dtype}")
    lo = 0 if dtype in ("uint8", "bool") else -9
    x = rng.integers(lo, 10, (3, 5))
    src = rng.integers(lo, 10, (3, 7))
    index = rng.integers(0, 4, (3, 7))          # target 4 of each row is never written
    if dtype == "bool":
        x, src = x % 2, src % 2
    for dim_index, dim in ((index, 1), (index[:, :5].T % 3, 0)):
        s = src[:, :5].T if dim == 0 else src
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                what = f"scatter_reduce({reduce}, include_self={include_self}, dim={dim}) " \
                       f"of {dtype} on {device}"
                tx = torch.tensor(x).to(getattr(torch, dtype))
                ts = torch.tensor(s).to(getattr(torch, dtype))
                try:
                    want = torch.scatter_reduce(tx, dim, torch.tensor(dim_index), ts, reduce,
                                                include_self=include_self).numpy()
                except (NotImplementedError, RuntimeError):
                    want = None
                ex = ember.tensor(x, device=device).to(getattr(ember, dtype))
                es = ember.tensor(s, device=device).to(getattr(ember, dtype))
                ei = ember.tensor(dim_index, device=device)
                if want is None:
                    with pytest.raises(ember.EmberError):
                        ember.scatter_reduce(ex, dim, ei, es, reduce,
                                             include_self=include_self)
                    continue
                got = ember.scatter_reduce(ex, dim, ei, es, reduce, include_self=include_self)
                assert got.dtype.name == str(want.dtype), \
                    f"{what}: dtype {got.dtype.name}, PyTorch {want.dtype}"
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=what)


def test_index_check_in_a_captured_graph(device):
    """A compiled gather refuses -1 at every replay, as eager does; a compiled x[i] takes
    it (the rule lives in the check node's name, so exports replay it too)."""
    gather = ember.compile(lambda x, i: ember.gather(x, 0, i))
    read = ember.compile(lambda x, i: x[i])
    x = ember.arange(4.0, device=device)
    ok, neg = ember.tensor([1, 3], device=device), ember.tensor([1, -1], device=device)
    for _ in range(2):
        assert gather(x, ok).tolist() == [1.0, 3.0]
        with pytest.raises(IndexError, match="index -1 is out of bounds"):
            gather(x, neg)
        assert read(x, neg).tolist() == [1.0, 3.0]
