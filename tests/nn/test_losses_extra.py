"""Distances and the margin and likelihood losses against PyTorch on every device."""
from __future__ import annotations

import math

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember.errors import EmberIndexError, EmberTypeError
from nn_helpers import device_params, rng, to_numpy

DEVICES = [pytest.param("cpu", id="cpu"), *device_params()]
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
    "PoissonNLLLoss": ({}, lambda r: [r.standard_normal((4, 3)),
                                      r.integers(0, 6, (4, 3)).astype(np.float64)], (0,)),
    "PoissonNLLLoss:full_linear": (dict(log_input=False, full=True), lambda r: [
        r.random((4, 3)) + 0.1, r.integers(0, 6, (4, 3)).astype(np.float64)], (0,)),
    "GaussianNLLLoss": (dict(full=True), lambda r: [
        r.standard_normal((5, 3)), r.standard_normal((5, 3)), r.random((5, 3)) + 0.1],
        (0, 1, 2)),
    "GaussianNLLLoss:homoscedastic": ({}, lambda r: [
        r.standard_normal((5, 3)), r.standard_normal((5, 3)), r.random(5) + 0.1], (0, 2)),
    "MultiMarginLoss": ({}, lambda r: [r.standard_normal((6, 4)), r.integers(0, 4, 6)],
                        (0,)),
    "MultiMarginLoss:p2_weight": (dict(p=2, margin=0.7, weight=True), lambda r: [
        r.standard_normal((6, 4)), r.integers(0, 4, 6)], (0,)),
    "MultiLabelSoftMarginLoss": ({}, lambda r: [
        r.standard_normal((5, 4)), (r.random((5, 4)) < 0.5).astype(np.float64)], (0,)),
    "MultiLabelSoftMarginLoss:weight": (dict(weight=True), lambda r: [
        r.standard_normal((5, 4)), (r.random((5, 4)) < 0.5).astype(np.float64)], (0,)),
}


def _check(torch, t_mod, e_mod, arrays, grads, name, device):
    """Outputs, then the gradients of the chosen inputs under one random upstream gradient."""
    t_args = [torch.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    e_args = [ember.tensor(a, device=device, requires_grad=i in grads)
              for i, a in enumerate(arrays)]
    t_out, e_out = t_mod(*t_args), e_mod(*e_args)
    assert tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(to_numpy(e_out.to("cpu")), to_numpy(t_out), rtol=1e-9,
                               atol=1e-12, err_msg="forward")
    upstream = rng(name + "upstream").standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream))
    e_out.backward(ember.tensor(upstream, device=device))
    for i in grads:
        np.testing.assert_allclose(to_numpy(e_args[i].grad.to("cpu")),
                                   to_numpy(t_args[i].grad), rtol=1e-8, atol=1e-11,
                                   err_msg=f"grad of input {i}")


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
    _check(torch, t_mod, e_mod, arrays, grads, f"{case}{reduction}", device)
    if kwargs.get("weight"):
        assert list(e_mod.state_dict()) == list(t_mod.state_dict()) == ["weight"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kwargs,shapes", [
    ("CosineSimilarity", {}, [(4, 5), (4, 5)]),
    ("CosineSimilarity", dict(dim=-1, eps=1e-6), [(3, 1, 5), (1, 4, 5)]),
    ("PairwiseDistance", {}, [(4, 5), (4, 5)]),
    ("PairwiseDistance", dict(p=1.0, keepdim=True), [(4, 5), (5,)]),
    ("PairwiseDistance", dict(p=3.0), [(4, 5), (4, 5)]),
    ("PairwiseDistance", dict(p=math.inf), [(4, 5), (4, 5)]),
])
def test_distance_matches_torch(torch, name, kwargs, shapes, device):
    r = rng(f"{name}{kwargs}")
    arrays = [r.standard_normal(s) for s in shapes]
    _check(torch, getattr(torch.nn, name)(**kwargs), getattr(nn, name)(**kwargs), arrays,
           (0, 1), f"{name}{kwargs}", device)


def test_user_code_forms(torch):
    """The calls programs make; ember's legacy keywords against torch's reduction= (torch
    warns on the legacy ones)."""
    r = rng("user code")
    a, b, c = (r.standard_normal((8, 16)) for _ in range(3))
    tf, ta, tb, tc = torch.nn.functional, *(torch.tensor(v) for v in (a, b, c))
    ea, eb, ec = (ember.tensor(v) for v in (a, b, c))
    pairs = [
        (tf.cosine_similarity(ta, tb, dim=1), F.cosine_similarity(ea, eb, dim=1)),
        (tf.pairwise_distance(ta, tb), F.pairwise_distance(ea, eb)),
        (tf.triplet_margin_loss(ta, tb, tc, reduction="sum"),
         F.triplet_margin_loss(ea, eb, ec, size_average=False)),
        (tf.gaussian_nll_loss(ta, tb, 0.5), F.gaussian_nll_loss(ea, eb, 0.5)),
        (tf.poisson_nll_loss(ta, tb.abs(), reduction="none"),
         F.poisson_nll_loss(ea, eb.abs(), reduce=False)),
        (tf.multilabel_soft_margin_loss(ta, (tb > 0).double()),
         F.multilabel_soft_margin_loss(ea, (eb > 0).double())),
        (tf.multi_margin_loss(ta[0], torch.tensor(3), reduction="none"),
         F.multi_margin_loss(ea[0], ember.tensor(3), reduction="none")),
    ]
    for t, e in pairs:
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-9, atol=1e-12)
    # a zero vector: the norm is clamped to eps (a finite gradient, no NaN), as in torch
    tz = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    ez = ember.zeros(2, 3, dtype=ember.float64, requires_grad=True)
    tf.cosine_similarity(tz, ta[:2, :3]).sum().backward()
    F.cosine_similarity(ez, ea[:2, :3]).sum().backward()
    np.testing.assert_allclose(to_numpy(ez.grad), to_numpy(tz.grad), rtol=1e-9)


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
    with pytest.raises(ember.ShapeError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, ember.ones(3, 2))
    with pytest.raises(ember.EmberError, match="negative"):
        F.gaussian_nll_loss(x, x, -ember.ones(4, 3))
    with pytest.raises(EmberTypeError, match="floating point"):
        F.cosine_similarity(ember.zeros(2, 3, dtype=ember.int64), x[:2])
    with pytest.raises(EmberIndexError, match="dim 2 is out of range"):
        F.cosine_similarity(x, x, dim=2)
