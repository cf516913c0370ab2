"""Complex numbers through ember's ops (issue 31): values, torch's refusals, gradients of
real losses w.r.t. complex leaves (torch's conjugate Wirtinger convention), gradcheck on
complex inputs, checkpoints and DLPack, on cpu and opencl:0, each against PyTorch."""
from __future__ import annotations

import os

import ember
import numpy as np
import pytest
import torch

DEVICES = ["cpu", "opencl:0"]
RNG = np.random.default_rng(31)
A = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
B = (RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))).astype(np.complex64)
R = RNG.standard_normal((3, 4)).astype(np.float32)


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, ember.Tensor) else \
        t.detach().resolve_conj().numpy()


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos",
         "atan", "asinh", "acosh", "atanh", "sigmoid", "reciprocal", "rsqrt", "expm1",
         "log1p", "square", "log2", "log10", "sgn", "abs", "angle", "conj", "real", "imag",
         "isnan", "isfinite", "neg"]


@pytest.mark.parametrize("device", DEVICES)
def test_unary_ops_match_torch(device):
    e, t = ember.tensor(A, device=device), torch.tensor(A)
    for name in UNARY:
        got, want = getattr(ember, name)(e), getattr(torch, name)(t)
        assert got.dtype.name == str(want.dtype)[6:], name
        np.testing.assert_allclose(_np(got), _np(want), rtol=2e-5, atol=2e-5, err_msg=name)


LOSSES = {
    "abs_exp": lambda T, z, w, r: (T.exp(z) * z).abs().sum(),
    "real_imag": lambda T, z, w, r: (z * z / (z + 1)).real.sum() + z.sqrt().imag.sum(),
    "view_as_real": lambda T, z, w, r: (T.view_as_real(z.log()) ** 2).sum(),
    "matmul": lambda T, z, w, r: (z @ w).abs().pow(2).sum(),
    "mixed_real": lambda T, z, w, r: ((z * r).tanh() + r * 1j).abs().mean(),
    "reductions": lambda T, z, w, r: (z.prod(1).abs() + z.mean(0).angle().sum()).sum()
    + z.cumsum(1).real.sum(),
    "conj_sgn": lambda T, z, w, r: (z.conj() * z.sgn()).imag.sum()
    + T.linalg.vector_norm(z),
    "polar": lambda T, z, w, r: T.polar(r.abs() + 1, r).mul(z).real.sum(),
    "pow": lambda T, z, w, r: (z ** 2.5 + z ** z.conj()).abs().sum(),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradient_of_a_real_loss_wrt_complex_leaves_is_torchs(name, device):
    fn = LOSSES[name]
    leaves_e = [ember.tensor(a, device=device, requires_grad=True) for a in (A, B, R)]
    leaves_t = [torch.tensor(a, requires_grad=True) for a in (A, B, R)]
    fn(torch, *leaves_t).backward()
    loss = fn(ember, *leaves_e)
    assert loss.dtype is ember.float32
    loss.backward()
    for e, t in zip(leaves_e, leaves_t):
        if t.grad is None:
            assert e.grad is None
            continue
        assert e.grad.dtype.name == str(t.grad.dtype)[6:]
        np.testing.assert_allclose(_np(e.grad), _np(t.grad), rtol=1e-4, atol=1e-4,
                                   err_msg=name)


def test_gradcheck_takes_complex_inputs_as_pairs_of_reals():
    z = ember.tensor(A[0].astype(np.complex128), requires_grad=True)
    r = ember.tensor(R[0].astype(np.float64), requires_grad=True)
    gc = ember.autograd.gradcheck
    assert gc(lambda z: (z * z).exp(), (z,))                       # complex -> complex
    assert gc(lambda z: (z * z).exp().abs(), (z,))                 # complex -> real
    assert gc(lambda z, r: (z.conj() * r).sin() / (z + 3), (z, r))  # mixed inputs
    assert gc(lambda r: ember.polar(r.abs() + 1, r), (r,))          # real -> complex
    # a wrong complex rule is caught: the plain (unconjugated) product rule
    wrong = ember.autograd.Function

    class Bad(wrong):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x                 # torch's rule is g * conj(2x)
    with pytest.raises(ember.errors.AutogradError, match="Jacobian mismatch"):
        gc(Bad.apply, (z,))


REFUSED = {
    "lt": lambda T, z: z < z, "max": lambda T, z: z.max(),
    "maximum": lambda T, z: T.maximum(z, z), "argmax": lambda T, z: z.argmax(),
    "sort": lambda T, z: T.sort(z), "topk": lambda T, z: T.topk(z, 2),
    "sign": lambda T, z: z.sign(), "floor": lambda T, z: z.floor(), "round": lambda T, z: z.round(),
    "relu": lambda T, z: T.relu(z), "clamp": lambda T, z: z.clamp(0, 1),
    "softmax": lambda T, z: z.softmax(0), "erf": lambda T, z: T.erf(z),
    "remainder": lambda T, z: z % z, "atan2": lambda T, z: T.atan2(z, z),
    "trunc": lambda T, z: T.trunc(z), "logit": lambda T, z: T.logit(z),
    "nansum": lambda T, z: T.nansum(z), "unique": lambda T, z: T.unique(z),
    "lt_number": lambda T, z: z < 1j,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_torch_refuses_on_complex_ember_refuses(name, device):
    with pytest.raises(Exception):                    # noqa: B017  (torch's own error)
        REFUSED[name](torch, torch.tensor(A))
    with pytest.raises(ember.EmberError):
        REFUSED[name](ember, ember.tensor(A, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_products_and_linalg(device):
    e, t = ember.tensor(A, device=device), torch.tensor(A)
    m = (A[:, :3] + 3 * np.eye(3)).astype(np.complex64)
    em, tm = ember.tensor(m, device=device), torch.tensor(m)
    pairs = [(e.sum(), t.sum()), (e.sum(1), t.sum(1)), (e.mean(0), t.mean(0)),
             (e.prod(1), t.prod(1)), (e.cumprod(1), t.cumprod(1)), (e.var(1), t.var(1)),
             (e.any(), t.any()), ((e * (e.real > 0)).nonzero(), (t * (t.real > 0)).nonzero()),
             (e @ ember.tensor(B, device=device), t @ torch.tensor(B)),
             (ember.vdot(e[0], e[1]), torch.vdot(t[0], t[1])),
             (ember.linalg.inv(em), torch.linalg.inv(tm)),
             (ember.linalg.det(em), torch.linalg.det(tm)),
             (ember.linalg.solve(em, e), torch.linalg.solve(tm, t)),
             (ember.linalg.norm(e), torch.linalg.norm(t)),
             (ember.linalg.slogdet(em)[1], torch.linalg.slogdet(tm)[1]),
             (ember.linalg.svdvals(e), torch.linalg.svdvals(t)),
             (ember.logsumexp(e, 1), torch.logsumexp(t, 1))]
    for i, (got, want) in enumerate(pairs):
        assert got.dtype.name == str(want.dtype)[6:], i
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-4, atol=1e-4, err_msg=str(i))


def test_conj_is_eager_and_writes_do_not_reach_the_input():
    z = ember.tensor(A)
    c = z.conj()
    assert not c.is_conj() and ember.resolve_conj(c) is c
    c.mul_(0)
    np.testing.assert_array_equal(z.numpy(), A)


def test_checkpoints_and_dlpack(tmp_path):
    z = ember.tensor(A, requires_grad=True)
    w = ember.tensor(A.astype(np.complex128))
    for name, obj in (("a.ember", {"z": z}), ("b.pt", {"z": z, "w": w}),
                      ("c.safetensors", {"z": z.detach()})):
        path = os.path.join(tmp_path, name)
        ember.save(obj, path)
        back = ember.load(path)
        for k, v in obj.items():
            assert back[k].dtype is v.dtype
            np.testing.assert_array_equal(back[k].detach().numpy(), v.detach().numpy())
    assert ember.load(os.path.join(tmp_path, "a.ember"))["z"].requires_grad
    # torch reads ember's checkpoints and ember torch's
    got = torch.load(os.path.join(tmp_path, "b.pt"))
    assert got["w"].dtype == torch.complex128
    path = os.path.join(tmp_path, "t.pt")
    torch.save({"z": torch.tensor(A), "w": torch.tensor(A, dtype=torch.complex128)}, path)
    back = ember.load(path)
    assert back["w"].dtype is ember.complex128
    np.testing.assert_array_equal(back["z"].numpy(), A)
    from safetensors.torch import load_file
    assert load_file(os.path.join(tmp_path, "c.safetensors"))["z"].dtype == torch.complex64
    # DLPack both ways
    np.testing.assert_array_equal(torch.from_dlpack(z.detach()).numpy(), A)
    assert ember.from_dlpack(torch.tensor(A)).dtype is ember.complex64


def test_complex_gradients_of_non_holomorphic_decompositions_are_refused():
    z = ember.tensor(A, requires_grad=True)
    q = ember.linalg.qr(z)[0]
    with pytest.raises(ember.errors.UnsupportedError, match="qr"):
        q.abs().sum().backward()


def test_complex_and_polar_take_out_as_torch():
    re, im = np.array([1.0, -2.0], np.float32), np.array([0.5, 3.0], np.float32)
    for fn in ("complex", "polar"):
        out = ember.empty(2, dtype=ember.complex64)
        got = getattr(ember, fn)(ember.tensor(re), ember.tensor(im), out=out)
        want = getattr(torch, fn)(torch.tensor(re), torch.tensor(im))
        assert got is out
        np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
        for dtype in ("float32", "complex128"):      # torch: RuntimeError, the same cases
            with pytest.raises(ember.EmberError, match=f"{fn}.*out"):
                getattr(ember, fn)(ember.tensor(re), ember.tensor(im),
                                   out=ember.empty(2, dtype=getattr(ember, dtype)))
            with pytest.raises(RuntimeError):
                getattr(torch, fn)(torch.tensor(re), torch.tensor(im),
                                   out=torch.empty(2, dtype=getattr(torch, dtype)))
