"""linalg.lstsq against torch.linalg.lstsq on every device: the solution and its gradients
w.r.t. A and B for a random upstream gradient, and which of residuals / rank /
singular_values each driver fills, with their values; a rank-deficient A gives the
minimum-norm solution and its rank; bad arguments are ember errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
CASES = [((5, 3), (5, 2), None), ((5, 3), (5, 2), "gelsd"), ((2, 5, 3), (2, 5), "gels"),
         ((3, 5), (3, 2), "gelss"), ((2, 6, 4), (1, 6, 3), "gelsy")]


@pytest.mark.parametrize("a_shape,b_shape,driver", CASES, ids=[str(c) for c in CASES])
def test_lstsq_as_torch(device, a_shape, b_shape, driver):
    dt = np.float64 if device == "cpu" else np.float32
    tol = dict(rtol=1e-9, atol=1e-10) if dt == np.float64 else dict(rtol=1e-4, atol=1e-5)
    A, B = RNG.standard_normal(a_shape).astype(dt), RNG.standard_normal(b_shape).astype(dt)
    Ae, Be = (ember.tensor(v, device=device, requires_grad=True) for v in (A, B))
    At, Bt = (torch.tensor(v, requires_grad=True) for v in (A, B))
    re, rt = ember.linalg.lstsq(Ae, Be, driver=driver), torch.linalg.lstsq(At, Bt, driver=driver)
    np.testing.assert_allclose(re.solution.detach().numpy(), rt.solution.detach().numpy(), **tol)
    for field in ("residuals", "rank", "singular_values"):
        e, t = getattr(re, field), getattr(rt, field)
        assert tuple(e.shape) == tuple(t.shape), field
        assert e.dtype.name == str(t.dtype).removeprefix("torch."), field
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), err_msg=field, **tol)
    up = RNG.standard_normal(tuple(rt.solution.shape)).astype(dt)
    (re.solution * ember.tensor(up, device=device)).sum().backward()
    (rt.solution * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(Ae.grad.numpy(), At.grad.numpy(), **tol)
    np.testing.assert_allclose(Be.grad.numpy(), Bt.grad.numpy(), **tol)


def test_rank_deficient_gives_the_minimum_norm_solution():
    A = RNG.standard_normal((6, 2)) @ RNG.standard_normal((2, 4))
    B = RNG.standard_normal((6, 3))
    for driver in ("gelsy", "gelsd"):
        re = ember.linalg.lstsq(ember.tensor(A), ember.tensor(B), driver=driver)
        rt = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
        assert re.rank.item() == rt.rank.item() == 2
        np.testing.assert_allclose(re.solution.numpy(), rt.solution.numpy(), atol=1e-10)
        assert re.residuals.numel() == rt.residuals.numel() == 0   # not full rank


def test_lstsq_refuses_bad_arguments():
    with pytest.raises(ember.EmberError, match="driver"):
        ember.linalg.lstsq(ember.ones(3, 2), ember.ones(3, 1), driver="gesv")
    with pytest.raises(ember.EmberError, match="needs B of shape"):
        ember.linalg.lstsq(ember.ones(3, 2), ember.ones(4, 1))
    with pytest.raises(ember.EmberError, match="at least 2 dimensions"):
        ember.linalg.lstsq(ember.ones(3), ember.ones(3))
