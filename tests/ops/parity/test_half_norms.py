"""Norms of float16 and bfloat16 tensors accumulate in float32 and round once, as torch's:
summing squares in float16 overflows past |x| = 256, and every norm of [300, 400, -200]
was inf (F.normalize and rms_norm gave zeros, clip_grad_norm_ inf) until the float16 OpInfo
probe (`python -m ember.testing --torch-reference --dtype float16`) found it.  The OpenCL
devices here have neither dtype (DtypeNotSupportedError), so this runs on the CPU."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

VALUES = [[300.0, 400.0, -200.0], [0.5, -1.25, 2.0]]


def _pair(dtype: str):
    return (ember.tensor(VALUES, dtype=getattr(ember, dtype)),
            torch.tensor(VALUES, dtype=getattr(torch, dtype)))


def _same(got, want, ulps: int = 0):
    """Equal dtypes and values (within `ulps` units in the last place of the dtype)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    a, b = got.float().detach().numpy(), want.float().detach().numpy()
    if not ulps:
        np.testing.assert_array_equal(a, b)
        return
    eps = float(ember.finfo(got.dtype).eps)
    np.testing.assert_allclose(a, b, rtol=ulps * eps, atol=0)


CALLS = {
    "linalg.vector_norm": lambda m, x: m.linalg.vector_norm(x, dim=1),
    "linalg.vector_norm(ord=3)": lambda m, x: m.linalg.vector_norm(x, 3, dim=1),
    "linalg.norm": lambda m, x: m.linalg.norm(x),
    "norm": lambda m, x: m.norm(x),
    "Tensor.norm(dim=1)": lambda m, x: x.norm(dim=1),
    "dist": lambda m, x: m.dist(x, x * 0),
    "F.normalize": lambda m, x: m.nn.functional.normalize(x, dim=1),
    "F.rms_norm": lambda m, x: m.nn.functional.rms_norm(x, (3,)),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_half_norms_equal_torch(name, dtype):
    e, t = _pair(dtype)
    # rms_norm's last multiply rounds differently from torch's fused kernel by one bfloat16
    # ulp on one element; the others are the same bits
    _same(CALLS[name](ember, e), CALLS[name](torch, t), 1 if name == "F.rms_norm" else 0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_gradients_clip_as_torch(dtype):
    e, t = _pair(dtype)
    grads = []
    for m, x in ((ember, e), (torch, t)):
        params = [m.nn.Parameter(x.clone()), m.nn.Parameter(x[0].clone())]
        params[0].grad, params[1].grad = x.clone(), x[0] * 2
        total = m.nn.utils.clip_grad_norm_(params, 1.0)
        grads.append((total, [p.grad for p in params]))
    (e_total, e_grads), (t_total, t_grads) = grads
    _same(e_total, t_total)
    for g, h in zip(e_grads, t_grads):
        _same(g, h)
    # the gradient of rms_norm through the float32 computation, rounded as torch's
    eh = ember.tensor([[3.0, 4.0, -5.0]], dtype=getattr(ember, dtype), requires_grad=True)
    th = torch.tensor([[3.0, 4.0, -5.0]], dtype=getattr(torch, dtype), requires_grad=True)
    w = [[0.5, -1.0, 2.0]]
    (ember.nn.functional.rms_norm(eh, (3,)) * ember.tensor(w)).sum().backward()
    (torch.nn.functional.rms_norm(th, (3,)) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(eh.grad.float().numpy(), th.grad.float().numpy(), rtol=1e-2,
                               atol=1e-3)
