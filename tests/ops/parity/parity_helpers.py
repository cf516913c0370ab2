"""What the parity tests (ember against PyTorch, on cpu and opencl:0) share: seeded inputs,
the table of parity rows and its check, and the gradient comparison of single functions."""
from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import ember
import numpy as np
import pytest

TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def seeded(name: str) -> np.random.Generator:
    """A generator seeded from a name (zlib.crc32: the same in every process)."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def to_numpy(t):
    return t.detach().cpu().numpy() if hasattr(t, "cpu") and not isinstance(t, ember.Tensor) \
        else t.detach().to("cpu").numpy()


def check_grad(name, e_fn, t_fn, arrays, device, tol):
    """Random upstream gradient through both; compare every input's gradient.  Run op by
    op (ember.testing's op_by_op: no fused program per gradient tree on OpenCL)."""
    from ember.testing.checks import op_by_op
    with op_by_op(device):
        _check_grad(name, e_fn, t_fn, arrays, device, tol)


def _check_grad(name, e_fn, t_fn, arrays, device, tol):
    import torch
    e_in = [ember.tensor(a, device=device, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_out, t_out = e_fn(*e_in), t_fn(*t_in)
    up = seeded(name + "up").standard_normal(tuple(t_out.shape)).astype(arrays[0].dtype)
    e_out.backward(ember.tensor(up, device=device))
    t_out.backward(torch.tensor(up))
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        np.testing.assert_allclose(to_numpy(e.grad), t.grad.numpy(), **tol, err_msg=f"{name} {i}")


# --- parity rows: fn(T, *tensors) run with T = torch and T = ember ---------------------------
@dataclass(frozen=True)
class Row:
    name: str
    fn: Callable                   # fn(T, *tensors) -> a tensor or a tuple/list of tensors
    specs: tuple                   # one spec per input, see make_inputs
    grad: bool = True              # compare the gradients of the float32 inputs too
    atol: float = 1e-5
    rtol: float = 1e-5
    grad_tol: float = 1e-4         # atol and rtol of the gradients


class Rows(list):
    """The parity rows of one test module, each a pytest.param named by its row."""

    def case(self, name, fn, *specs, **kw) -> None:
        self.append(pytest.param(Row(name, fn, specs, **kw), id=name))


def make_inputs(name, specs):
    """Host arrays for specs (kind, shape, *extra), seeded from the row's name."""
    rng = seeded(name)
    out = []
    for kind, shape, *extra in specs:
        if kind == "f":
            out.append(rng.standard_normal(shape).astype(np.float32))
        elif kind == "p":                       # positive
            out.append(rng.uniform(0.1, 1.0, shape).astype(np.float32))
        elif kind == "t":                       # small integers as floats: ties
            out.append(rng.integers(0, 3, shape).astype(np.float32))
        elif kind == "i":                       # int64 in [0, n), or (lo, hi, dtype)
            lo, hi, dtype = (0, extra[0], np.int64) if len(extra) == 1 else extra
            out.append(rng.integers(lo, hi, shape).astype(dtype))
        elif kind == "b":
            out.append(rng.random(shape) < 0.5)
        elif kind == "v":                       # explicit values
            out.append(np.array(extra[0], dtype=np.float32).reshape(shape))
        elif kind == "perm":                    # a permutation per row along the last dim
            out.append(np.argsort(rng.random(shape), axis=-1).astype(np.int64))
    return out


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


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


def check_parity(row: Row, device: str) -> None:
    """The row's outputs on ember and torch agree, and so do the gradients a random upstream
    gradient gives every float32 input."""
    import torch
    name, fn, grad = row.name, row.fn, row.grad
    arrays = make_inputs(name, row.specs)
    tin = [torch.tensor(a, requires_grad=grad and _grad_able(a)) for a in arrays]
    ein = [_to_ember(a, device).requires_grad_(grad and _grad_able(a)) for a in arrays]
    tout, eout = _flat(fn(torch, *tin)), _flat(fn(ember, *ein))
    assert len(tout) == len(eout)
    for k, (e, t) in enumerate(zip(eout, tout)):
        _compare(e, t, row.atol, row.rtol, f"{name} output {k}")
    if not grad:
        return
    rng = seeded("grad:" + name)
    pairs = [(e, t) for e, t in zip(eout, tout) if t.requires_grad]
    ups = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for _, t in pairs]
    torch.autograd.backward([t for _, t in pairs], [torch.tensor(u) for u in ups])
    ember.autograd.backward([e for e, _ in pairs], [_to_ember(u, device) for u in ups])
    for k, (e, t) in enumerate(zip(ein, tin)):
        if t.requires_grad:
            if t.grad is None:
                assert e.grad is None, f"{name}: input {k} got a gradient torch does not give"
                continue
            _compare(e.grad, t.grad, row.grad_tol, row.grad_tol,
                     f"{name} gradient of input {k}")
