"""torch.* names of the nn family (torch.conv2d, torch.layer_norm, torch.embedding,
torch.kl_div with its integer reduction, torch.hann_window, ...), found by listing dir(torch)
against ember: each called as torch's signature has it, on torch and on ember, forward values
and (where differentiable) the input's gradient for a random upstream gradient."""
from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from nn_helpers import device_params

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X4 = R.standard_normal((2, 3, 6, 5)).astype(np.float32)
X3 = R.standard_normal((2, 3, 7)).astype(np.float32)
W = R.standard_normal((4, 3, 3, 3)).astype(np.float32)
V = R.standard_normal((5, 4)).astype(np.float32)
P = (R.random((4, 6)) + 0.1).astype(np.float32)

# (expression, differentiable): T is torch or ember, x4/x3/w/v/p the arrays as tensors
CASES = [
    ("T.conv2d(x4, w, None, 1, 1)", True), ("T.conv1d(x3, w[:, :, 0], None, 2)", True),
    ("T.conv_transpose2d(x4, w.transpose(0, 1), None, 2)", True),
    ("T.avg_pool1d(x3, 2)", True), ("T.adaptive_avg_pool1d(x3, 3)", True),
    ("T.max_pool1d(x3, 2)", True), ("T.max_pool2d(x4, 2, (), 0, 1, True)", True),
    ("T.max_pool3d(x4.unsqueeze(0), 2)", True),
    ("T.celu(x4, 0.5)", True), ("T.selu(x4)", True), ("T.threshold(x4, 0.1, -2.0)", True),
    ("T.hardshrink(x4, 0.3)", True), ("T.rrelu(x4, 0.1, 0.3, False)", True),
    ("T.prelu(x4, T.full((3,), 0.2))", True), ("T.pixel_shuffle(x4[:, :1].repeat(1, 4, 1, 1), 2)",
                                                True),
    ("T.pixel_unshuffle(x4[..., :4], 2)", True), ("T.channel_shuffle(x4, 3)", False),
    ("T.layer_norm(x4, (6, 5), None, None, 1e-5, True)", True),
    ("T.group_norm(x4, 3, None, None, 1e-5, True)", True),
    ("T.rms_norm(x4, (5,))", True),
    ("T.batch_norm(x4, None, None, T.zeros(3), T.ones(3), True, 0.1, 1e-5, True)", True),
    ("T.instance_norm(x4, None, None, None, None, True, 0.1, 1e-5, True)", True),
    ("T.embedding(v, T.tensor([[0, 2], [4, 1]]), 2)", True),
    ("T.cosine_similarity(x4, x4.flip(0))", True), ("T.pairwise_distance(x4[0, 0], x4[1, 0])",
                                                     True),
    ("T.pdist(v)", True), ("T.bilinear(v, v, T.ones(2, 4, 4), None)", True),
    ("T.kl_div(p.log(), p.flip(0), 1)", True), ("T.kl_div(p.log(), p.log(), 2, log_target=True)",
                                                 True),
    ("T.binary_cross_entropy_with_logits(v, (v > 0).float(), None, None, 0)", True),
    ("T.margin_ranking_loss(v[0], v[1], T.tensor([1., -1., 1., 1.]), 0.1, 2)", True),
    ("T.hinge_embedding_loss(v, T.ones(5, 4), 1.0, 1)", True),
    ("T.cosine_embedding_loss(v[:2], v[2:4], T.tensor([1., -1.]), 0.0, 1)", True),
    ("T.triplet_margin_loss(v[0:2], v[2:4], v[3:5], 1.0, 2.0, 1e-6, False, 1)", True),
    ("T.poisson_nll_loss(v, p[:5, :4] if False else v.abs(), True, False, 1e-8, 1)", True),
    ("T.absolute(x4)", True), ("T.negative(x4)", True), ("T.moveaxis(x4, 0, -1)", True),
    ("T.adjoint(v)", True), ("T.is_same_size(v, v)", False), ("T.is_signed(v)", False),
    ("T.alpha_dropout(x4, 0.0, False)", True), ("T.feature_alpha_dropout(x4, 0.0, True)", True),
    ("T.hann_window(8)", False), ("T.hann_window(9, False, dtype=T.float64)", False),
    ("T.hamming_window(10)", False), ("T.hamming_window(7, True, 0.5, 0.4)", False),
    ("T.blackman_window(12)", False), ("T.bartlett_window(8)", False),
    ("T.bartlett_window(7, periodic=False)", False), ("T.kaiser_window(10)", False),
    ("T.kaiser_window(9, False, 5.0)", False), ("T.hann_window(1)", False),
    ("T.hann_window(0)", False), ("T.range(1, 4)", False), ("T.range(0, 1, 0.25)", False),
]


def _run(lib, expr, device):
    arrays = dict(x4=X4, x3=X3, w=W, v=V, p=P)
    if lib is torch:
        env = {k: torch.tensor(a, requires_grad=True) for k, a in arrays.items()}
    else:
        env = {k: ember.tensor(a, requires_grad=True, device=device)
               for k, a in arrays.items()}
    env["T"] = lib
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if lib is torch:
            out = eval(expr, env)                                   # noqa: S307
        else:
            with ember.device(device):
                out = eval(expr, env)                               # noqa: S307
    return out, env


@pytest.mark.parametrize("device", ["cpu", *device_params()])
@pytest.mark.parametrize("expr,grad", CASES)
def test_torch_level_name_matches_torch(expr, grad, device):
    want, tenv = _run(torch, expr, device)
    got, eenv = _run(ember, expr, device)
    if isinstance(want, bool):
        assert got == want
        return
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    if grad:
        g = R.standard_normal(tuple(want.shape)).astype(np.float32)
        want.backward(torch.tensor(g))
        got.backward(ember.tensor(g, device=device))
        for k in ("x4", "x3", "w", "v", "p"):
            t, e = tenv[k].grad, eenv[k].grad
            assert (t is None) == (e is None), k
            if t is not None:
                np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-3, atol=1e-4,
                                           err_msg=k)


def test_integer_reduction_codes_are_checked():
    with pytest.raises(ValueError, match="reduction"):
        ember.kl_div(ember.zeros(2), ember.zeros(2), 3)
