"""Margin and embedding losses (nn.margin_loss) against PyTorch on every device."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember.errors import EmberTypeError
from nn_helpers import compare_modules, cpu_and_devices, rng, to_numpy

DEVICES = cpu_and_devices()
REDUCTIONS = ["mean", "sum", "none"]


def _signs(r, shape):
    return np.where(r.random(shape) < 0.5, -1.0, 1.0)


# name: (module kwargs, inputs from a generator, which inputs get gradients); targets that
# are labels (signs, class indices, counts) never do, as in the programs that use them
CASES = {
    "TripletMarginLoss": (dict(margin=1.0), lambda r: [
        r.standard_normal((6, 5)) for _ in range(3)], (0, 1, 2)),
    "TripletMarginLoss:swap_p1": (dict(margin=0.5, p=1, swap=True), lambda r: [
        r.standard_normal((6, 5)) for _ in range(3)], (0, 1, 2)),
    "MarginRankingLoss": (dict(margin=0.3), lambda r: [
        r.standard_normal(7), r.standard_normal(7), _signs(r, 7)], (0, 1)),
    "HingeEmbeddingLoss": (dict(margin=0.8), lambda r: [
        np.abs(r.standard_normal((4, 3))), _signs(r, (4, 3))], (0,)),
    "SoftMarginLoss": ({}, lambda r: [r.standard_normal((4, 3)), _signs(r, (4, 3))], (0,)),
    "CosineEmbeddingLoss": (dict(margin=0.2), lambda r: [
        r.standard_normal((6, 4)), r.standard_normal((6, 4)), _signs(r, 6)], (0, 1)),
    "MultiMarginLoss": ({}, lambda r: [r.standard_normal((6, 4)), r.integers(0, 4, 6)],
                        (0,)),
    "MultiMarginLoss:p2_weight": (dict(p=2, margin=0.7, weight=True), lambda r: [
        r.standard_normal((6, 4)), r.integers(0, 4, 6)], (0,)),
    "MultiLabelSoftMarginLoss": ({}, lambda r: [
        r.standard_normal((5, 4)), (r.random((5, 4)) < 0.5).astype(np.float64)], (0,)),
    "MultiLabelSoftMarginLoss:weight": (dict(weight=True), lambda r: [
        r.standard_normal((5, 4)), (r.random((5, 4)) < 0.5).astype(np.float64)], (0,)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_loss_matches_torch(torch, case, reduction, device):
    kwargs, make, grads = CASES[case]
    name = case.split(":")[0]
    r = rng(f"{case}{reduction}")
    arrays = make(r)
    t_kwargs, e_kwargs = dict(kwargs, reduction=reduction), dict(kwargs, reduction=reduction)
    if kwargs.get("weight"):
        w = r.random(arrays[0].shape[-1]) + 0.5
        t_kwargs["weight"], e_kwargs["weight"] = torch.tensor(w), ember.tensor(w, device=device)
    t_mod, e_mod = getattr(torch.nn, name)(**t_kwargs), getattr(nn, name)(**e_kwargs)
    compare_modules(torch, t_mod, e_mod, arrays, grads, f"{case}{reduction}", device)
    if kwargs.get("weight"):
        assert list(e_mod.state_dict()) == list(t_mod.state_dict()) == ["weight"]


def test_user_code_forms(torch):
    """The calls programs make; ember's legacy keywords against torch's reduction= (torch
    warns on the legacy ones)."""
    r = rng("user code")
    a, b, c = (r.standard_normal((8, 16)) for _ in range(3))
    tf, ta, tb, tc = torch.nn.functional, *(torch.tensor(v) for v in (a, b, c))
    ea, eb, ec = (ember.tensor(v) for v in (a, b, c))
    pairs = [
        (tf.triplet_margin_loss(ta, tb, tc, reduction="sum"),
         F.triplet_margin_loss(ea, eb, ec, size_average=False)),
        (tf.multilabel_soft_margin_loss(ta, (tb > 0).double()),
         F.multilabel_soft_margin_loss(ea, (eb > 0).double())),
        (tf.multi_margin_loss(ta[0], torch.tensor(3), reduction="none"),
         F.multi_margin_loss(ea[0], ember.tensor(3), reduction="none")),
    ]
    for t, e in pairs:
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-9, atol=1e-12)


def test_errors():
    x = ember.zeros(4, 3)
    with pytest.raises(ember.EmberError, match="reduction must be one of"):
        F.soft_margin_loss(x, x, reduction="avg")
    with pytest.raises(ember.EmberError, match="margin must be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(ember.ShapeError, match="all 1-D"):
        F.triplet_margin_loss(x, x, x[0])
    with pytest.raises(ember.ShapeError, match="same number of dims"):
        F.margin_ranking_loss(x, x, x[0])
    with pytest.raises(ember.EmberError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ember.EmberError, match=r"target 3 is out of bounds"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 2, 3]))
    with pytest.raises(EmberTypeError, match="integer"):
        F.multi_margin_loss(x, ember.zeros(4))
    with pytest.raises(ember.ShapeError, match="1-D target expects 2-D inputs"):
        F.cosine_embedding_loss(x[0], x[0], ember.ones(4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_torch(torch, reduction):
    """Targets list each row's classes up to the first -1 (later entries ignored), values
    and gradients as torch's, 1-D and 2-D; an index out of range is an ember error."""
    r = np.random.default_rng(3)
    x = r.standard_normal((4, 5))
    t = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 2, 3, 4], [4, -1, 2, 0, 1]])
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    le = ember.nn.MultiLabelMarginLoss(reduction=reduction)(xe, ember.tensor(t))
    lt = torch.nn.MultiLabelMarginLoss(reduction=reduction)(xt, torch.tensor(t))
    up = r.standard_normal(tuple(lt.shape))
    (le * ember.tensor(up)).sum().backward()
    (lt * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)
    one = ember.nn.functional.multilabel_margin_loss(ember.tensor(x[0]), ember.tensor(t[0]))
    ref = torch.nn.functional.multilabel_margin_loss(torch.tensor(x[0]), torch.tensor(t[0]))
    assert abs(one.item() - ref.item()) < 1e-12
    for bad in ([[7, -1, 0, 0, 0]], [[1, -1, 9, 0, 0]]):         # torch checks every entry
        with pytest.raises(ember.EmberError, match="outside"):
            ember.nn.functional.multilabel_margin_loss(ember.tensor(x[:1]), ember.tensor(bad))
        with pytest.raises(RuntimeError):
            torch.nn.functional.multilabel_margin_loss(torch.tensor(x[:1]), torch.tensor(bad))


def test_triplet_margin_with_distance_loss_matches_torch(torch):
    r = np.random.default_rng(4)
    a, p, n = (r.standard_normal((6, 3)) for _ in range(3))
    got = {}
    for lib in (torch, ember):
        ts = [lib.tensor(v, requires_grad=True) for v in (a, p, n)]
        l1 = lib.nn.functional.triplet_margin_with_distance_loss(
            *ts, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=0.5, swap=True)
        l2 = lib.nn.TripletMarginWithDistanceLoss(reduction="sum")(*ts)
        (l1 + l2).backward()
        got[lib.__name__] = [l1.item(), l2.item()] + [t.grad.numpy() for t in ts]
    for x, y in zip(got["ember"], got["torch"]):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
    with pytest.raises(ember.EmberError, match="same number of dimensions"):
        ember.nn.functional.triplet_margin_with_distance_loss(ember.ones(3), ember.ones(2, 3),
                                                              ember.ones(3))
