"""PyTorch's tensor functions on ember, against PyTorch itself: forward values and
gradients (with a random upstream gradient), on the CPU and on opencl:0."""
from __future__ import annotations

import math
import zlib

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DEVICES = ["cpu", "opencl:0"]


def _device(name):
    if name != "cpu":
        dev = ember.Device(name.split(":")[0])
        try:
            dev.concrete()
        except ember.EmberError as exc:
            pytest.skip(f"{name}: {exc}")
    return name


@pytest.fixture(params=DEVICES)
def device(request):
    return _device(request.param)


def _inputs(name, specs):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    out = []
    for spec in specs:
        kind, shape = spec[0], spec[1]
        if kind == "f":
            out.append(rng.standard_normal(shape).astype(np.float32))
        elif kind == "p":                       # positive
            out.append(rng.uniform(0.1, 1.0, shape).astype(np.float32))
        elif kind == "t":                       # small integers as floats: ties
            out.append(rng.integers(0, 3, shape).astype(np.float32))
        elif kind == "i":
            out.append(rng.integers(0, spec[2], shape).astype(np.int64))
        elif kind == "b":
            out.append(rng.random(shape) < 0.5)
        elif kind == "v":                       # explicit values
            out.append(np.array(spec[2], dtype=np.float32).reshape(shape))
        elif kind == "perm":                    # a permutation per row along the last dim
            out.append(np.argsort(rng.random(shape), axis=-1).astype(np.int64))
    return out


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


C = []


def case(name, fn, *specs, grad=True, atol=1e-5, rtol=1e-5):
    C.append(pytest.param(name, fn, specs, grad, atol, rtol, id=name))


# products
case("mm", lambda T, a, b: T.mm(a, b), ("f", (3, 4)), ("f", (4, 5)))
case("bmm", lambda T, a, b: T.bmm(a, b), ("f", (2, 3, 4)), ("f", (2, 4, 5)))
case("mv", lambda T, a, b: T.mv(a, b), ("f", (3, 4)), ("f", (4,)))
case("dot_outer", lambda T, a, b: (T.dot(a, b), T.outer(a, b), a.outer(b)),
     ("f", (4,)), ("f", (4,)))
case("addmm", lambda T, c, a, b: (T.addmm(c, a, b), T.addmm(c, a, b, beta=0.5, alpha=2.0),
                                  c.addmm(a, b)), ("f", (3, 5)), ("f", (3, 4)), ("f", (4, 5)))
case("baddbmm", lambda T, c, a, b: T.baddbmm(c, a, b, alpha=0.5), ("f", (2, 3, 5)),
     ("f", (2, 3, 4)), ("f", (2, 4, 5)))
case("einsum:matmul", lambda T, a, b: (T.einsum("ij,jk->ik", a, b), T.einsum("ij,jk", a, b)),
     ("f", (3, 4)), ("f", (4, 5)))
case("einsum:batched", lambda T, a, b: T.einsum("bhqd,bhkd->bhqk", a, b),
     ("f", (2, 3, 4, 5)), ("f", (2, 3, 6, 5)))
case("einsum:ellipsis", lambda T, a, b: (T.einsum("...ij,...jk->...ik", a, b),
                                         T.einsum("...i,...i", a[..., 0, :], b[..., 0])),
     ("f", (2, 3, 4)), ("f", (1, 4, 4)))
case("einsum:diagonal_trace", lambda T, a: (T.einsum("ii->i", a), T.einsum("ii", a),
                                            T.einsum("ij->ji", a), T.einsum("ij->", a)),
     ("f", (4, 4)))
case("einsum:three", lambda T, a, b, c: T.einsum("i,ij,j->", a, b, c), ("f", (3,)),
     ("f", (3, 4)), ("f", (4,)))
case("einsum:outer_list", lambda T, a, b: T.einsum("i,j->ij", [a, b]), ("f", (3,)),
     ("f", (4,)))
# triangles, diagonals
case("tril_triu", lambda T, a: (T.tril(a), T.triu(a, 1), a.tril(-1), T.triu(a, -2)),
     ("f", (2, 4, 5)))
case("diag", lambda T, a, v: (T.diag(a), T.diag(a, 1), T.diag(v), T.diag(v, -2),
                              a.diagonal(), T.diagonal(a, -1), T.trace(a)),
     ("f", (4, 5)), ("f", (3,)))
case("diagonal:dims", lambda T, a: (T.diagonal(a, 0, 0, 2), T.diagonal(a, 1, -1, 0)),
     ("f", (3, 2, 4)))
case("diag_embed", lambda T, a: (T.diag_embed(a), T.diag_embed(a, 1), T.diag_embed(a, -1, 0, 2)),
     ("f", (2, 3)))
# movement
case("roll", lambda T, a: (T.roll(a, 1), T.roll(a, -2, 1), a.roll((1, 2), (0, 2))),
     ("f", (3, 4, 5)))
case("narrow_select_unbind", lambda T, a: (a.narrow(1, 1, 2), T.narrow(a, -1, 0, 3),
                                           a.select(0, -1), *a.unbind(1)), ("f", (3, 4, 5)))
case("repeat", lambda T, a: (a.repeat(2, 3), a.repeat(2, 1, 1), T.tile(a, (2,))),
     ("f", (3, 4)))
case("repeat_interleave", lambda T, a, r: (
    T.repeat_interleave(a, 2), a.repeat_interleave(3, dim=1),
    T.repeat_interleave(a, r, dim=0), T.repeat_interleave(r)), ("f", (3, 2)), ("i", (3,), 3))
case("broadcast", lambda T, a: (T.broadcast_to(a, (2, 3, 4)), a.broadcast_to((3, 4)),
                                *T.broadcast_tensors(a, a[:1])), ("f", (3, 1)))
case("unflatten_flatten", lambda T, a: (a.unflatten(1, (2, -1)), T.unflatten(a, 0, (1, 3)),
                                        T.flatten(a, 1)), ("f", (3, 6)))
case("cross", lambda T, a, b: (T.cross(a, b, dim=1), T.linalg.cross(a, b)), ("f", (4, 3)),
     ("f", (4, 3)))
case("unfold_windows", lambda T, a: (a.unfold(1, 3, 2), a.unfold(0, 2, 1)), ("f", (4, 7)))
# sorting and scans
case("sort", lambda T, a: (*T.sort(a), *a.sort(0, descending=True), T.argsort(a, 1)),
     ("t", (4, 6)))
case("sort:nan", lambda T, a: (*T.sort(a), *T.sort(a, descending=True)),
     ("v", (2, 4), (1.0, math.nan, -1.0, math.nan, math.inf, 0.5, math.nan, -math.inf)))
case("topk", lambda T, a: (*T.topk(a, 3), *a.topk(2, 0, largest=False)), ("f", (5, 6)))
case("median_kthvalue", lambda T, a: (T.median(a), *a.median(1), *T.kthvalue(a, 2, 0)),
     ("f", (5, 4)))
case("cumsum_cumprod", lambda T, a: (T.cumsum(a, 1), a.cumsum(0), T.cumprod(a, 1),
                                     a.cumprod(-1)), ("f", (3, 5)))
case("cumprod:zeros", lambda T, a: T.cumprod(a, 1),
     ("v", (3, 4), (1.5, 0.0, 2.0, 3.0, 0.0, 0.0, 2.0, -1.0, 2.0, -0.5, 3.0, 0.0)))
case("cumsum:long_lines", lambda T, a: (T.cumsum(a, 1), T.cumsum(a.mT, 1)),
     ("f", (3, 300)), atol=1e-4)
case("logcumsumexp", lambda T, a: T.logcumsumexp(a, 1), ("f", (3, 5)))
# norms and comparisons
case("norm", lambda T, a: (a.norm(), T.norm(a, 2, 1), a.norm(1, 0, keepdim=True),
                           a.norm(float("inf"), 1), T.norm(a, p="fro"), a.norm(3, 1),
                           a.norm(dim=(0, 1))), ("f", (3, 4)))
case("norm:zero_vector", lambda T, a: (a * 0).norm(2, 1), ("f", (3, 4)))
case("linalg_norm", lambda T, a: (T.linalg.norm(a), T.linalg.norm(a, dim=1),
                                  T.linalg.norm(a, "fro"), T.linalg.norm(a, float("inf")),
                                  T.linalg.norm(a, 1), T.linalg.vector_norm(a, 1, (0, 1)),
                                  T.linalg.matrix_norm(a)), ("f", (3, 4)))
case("isclose_allclose", lambda T, a: (T.isclose(a, a + 1e-7), T.isclose(a, a * 1.1),
                                       a.isclose(a + 1, atol=2.0)), ("f", (3, 4)), grad=False)
# indexing
case("scatter", lambda T, a, i, s, j: (T.scatter(a, 1, i, s), a.scatter(1, i, 2.5),
                                       T.scatter(a, 0, j, s[:1, :3])),
     ("f", (3, 4)), ("perm", (3, 4)), ("f", (3, 4)), ("perm", (1, 3)))
case("index_fill", lambda T, a, i: (a.index_fill(1, i, -1.0), T.index_fill(a, 0, i[:1], 2.0)),
     ("f", (3, 4)), ("i", (2,), 3))
case("masked_fill_select", lambda T, a, m: (a.masked_fill(m, 0.5), T.masked_select(a, m),
                                            a.masked_fill(m, T.tensor(-1.0))),
     ("f", (3, 4)), ("b", (3, 4)))
case("gather", lambda T, a, i, j: (a.gather(1, i), T.gather(a, 0, j)),
     ("f", (3, 4)), ("perm", (3, 4)), ("i", (2, 4), 3))
case("nan_to_num", lambda T, a: T.nan_to_num(a, nan=1.0, posinf=5.0, neginf=-5.0),
     ("v", (4,), (math.nan, math.inf, -math.inf, 2.0)))
case("amax_amin_logsumexp", lambda T, a: (a.amax(1), T.amin(a, 0), T.logsumexp(a, 1),
                                          *a.max(1)), ("f", (3, 4)))


def _to_ember(a, device):
    return ember.tensor(a, device=device)


def _grad_able(a):
    return a.dtype == np.float32


def _compare(got, want, atol, rtol, what):
    got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
    want = want.detach().numpy()
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert str(got.dtype) == str(want.dtype), (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=what)


@pytest.mark.parametrize("name, fn, specs, grad, atol, rtol", C)
def test_parity(name, fn, specs, grad, atol, rtol, device):
    arrays = _inputs(name, specs)
    tin = [torch.tensor(a, requires_grad=grad and _grad_able(a)) for a in arrays]
    ein = [_to_ember(a, device).requires_grad_(grad and _grad_able(a)) for a in arrays]
    tout, eout = _flat(fn(torch, *tin)), _flat(fn(ember, *ein))
    assert len(tout) == len(eout)
    for k, (e, t) in enumerate(zip(eout, tout)):
        _compare(e, t, atol, rtol, f"{name} output {k}")
    if not grad:
        return
    rng = np.random.default_rng(zlib.crc32(("grad:" + name).encode()))
    pairs = [(e, t) for e, t in zip(eout, tout) if t.requires_grad]
    ups = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for _, t in pairs]
    torch.autograd.backward([t for _, t in pairs], [torch.tensor(u) for u in ups])
    ember.autograd.backward([e for e, _ in pairs], [_to_ember(u, device) for u in ups])
    for k, (e, t) in enumerate(zip(ein, tin)):
        if t.requires_grad:
            if t.grad is None:
                assert e.grad is None, f"{name}: input {k} got a gradient torch does not give"
                continue
            _compare(e.grad, t.grad, 1e-4, 1e-4, f"{name} gradient of input {k}")
