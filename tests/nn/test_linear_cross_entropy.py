"""F.linear_cross_entropy and nn.LinearCrossEntropyOptions against PyTorch on the CPU and
opencl:0: the reference path (bias, class weights, ignore_index, probabilities, K-dim
weights, label smoothing) and the chunked path (torch's chunk sizes, acc_dtype), values and
gradients for random upstream gradients; options torch ignores warn; bad arguments are
ember errors."""
from __future__ import annotations

import itertools

import ember
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl

RNG = np.random.default_rng(13)


def _pair(torch, device, shape, dtype=np.float32, grad=True):
    a = RNG.standard_normal(shape).astype(dtype)
    return (torch.tensor(a, requires_grad=grad),
            ember.tensor(a, device=device, requires_grad=grad))


def _options(lib, **kw):
    if "acc_dtype" in kw:
        kw["acc_dtype"] = getattr(lib, kw["acc_dtype"])
    return lib.nn.LinearCrossEntropyOptions(**kw)


CALLS = [  # batch, in, classes, out_features, keywords, options
    ((7,), 5, 4, (), {}, None),
    ((7,), 5, 4, (), {"reduction": "sum", "bias": True, "weight": True}, None),
    ((6,), 3, 5, (), {"ignore_index": 1, "reduction": "none"}, None),
    ((6,), 3, 5, (), {"probabilities": True, "label_smoothing": 0.2}, None),
    ((4,), 3, 5, (2,), {"bias": True}, None),
    ((), 3, 5, (), {"reduction": "none"}, None),
    ((9,), 4, 6, (), {}, {"batch_chunk_size": 2}),
    ((9,), 4, 6, (), {"weight": True, "ignore_index": 2}, {"batch_chunk_size": 4}),
    ((9,), 4, 6, (), {"reduction": "none", "bias": True}, {"batch_chunk_size": 3}),
    ((9,), 4, 6, (), {"reduction": "sum"}, {"chunking_method": "aspect_ratio"}),
    ((33,), 2, 40, (), {}, {}),
    ((), 4, 6, (), {"bias": True}, {"batch_chunk_size": 1}),
]


@pytest.mark.parametrize("device", cpu_and_opencl())
def test_linear_cross_entropy_matches_torch(torch, device):
    for batch, fin, classes, out, kw, opts in CALLS:
        kw = dict(kw)
        xt, xe = _pair(torch, device, (*batch, fin))
        wt, we = _pair(torch, device, (classes, *out, fin))
        tk, ek = {}, {}
        if kw.pop("bias", False):
            tk["linear_bias"], ek["linear_bias"] = _pair(torch, device, (classes, *out))
        if kw.pop("weight", False):
            w = (RNG.random(classes) + 0.5).astype(np.float32)
            tk["weight"], ek["weight"] = torch.tensor(w), ember.tensor(w, device=device)
        if kw.pop("probabilities", False):
            p = RNG.random((*batch, classes, *out)).astype(np.float32)
            tt, et = torch.tensor(p), ember.tensor(p, device=device)
        else:
            t = RNG.integers(0, classes, (*batch, *out))
            tt, et = torch.tensor(t), ember.tensor(t, device=device)
        if opts is not None:
            tk["options"], ek["options"] = _options(torch, **opts), _options(ember, **opts)
        what = f"{batch} {fin} {classes} {out} {kw} {opts}"
        ot = torch.nn.functional.linear_cross_entropy(xt, wt, tt, **tk, **kw)
        oe = ember.nn.functional.linear_cross_entropy(xe, we, et, **ek, **kw)
        np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=what)
        up = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
        leaves = [(xt, xe), (wt, we)] + ([(tk["linear_bias"], ek["linear_bias"])]
                                         if "linear_bias" in tk else [])
        gt = torch.autograd.grad(ot, [t for t, _ in leaves], torch.tensor(up))
        ge = ember.autograd.grad(oe, [e for _, e in leaves], ember.tensor(up, device=device))
        for a, b in zip(ge, gt):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5,
                                       err_msg=what)


def test_chunk_sizes_are_torchs(torch):
    for (n, fin, classes), kw in itertools.product(
            ((9, 4, 6), (33, 2, 40), (100, 8, 1000), (1, 3, 2), (64, 64, 64)),
            ({}, {"batch_chunk_size": 3}, {"chunking_method": "aspect_ratio"},
             {"chunking_method": "aspect_ratio:4"}, {"chunking_method": None})):
        t = torch.nn.LinearCrossEntropyOptions(**kw)._adjust(n, fin, classes, torch.float32,
                                                             torch.device("cpu"))
        e = ember.nn.LinearCrossEntropyOptions(**kw)._chunk(n, fin, classes, ember.float32)
        assert e == min(t.batch_chunk_size, n), (n, fin, classes, kw)


def test_acc_dtype_computes_the_logits_wider(torch):
    x = RNG.standard_normal((12, 16)).astype(np.float16)
    w = RNG.standard_normal((50, 16)).astype(np.float16)
    t = RNG.integers(0, 50, 12)
    exact = torch.nn.functional.cross_entropy(
        torch.tensor(x, dtype=torch.float64) @ torch.tensor(w, dtype=torch.float64).T,
        torch.tensor(t)).item()
    opts = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=4, acc_dtype=ember.float32)
    wide = ember.nn.functional.linear_cross_entropy(ember.tensor(x), ember.tensor(w),
                                                    ember.tensor(t), options=opts)
    assert wide.dtype is ember.float16
    assert abs(wide.item() - exact) <= 2e-3 * abs(exact)


def test_chunked_backward_can_run_twice():
    x = ember.tensor(RNG.standard_normal((6, 3)).astype(np.float32), requires_grad=True)
    w = ember.tensor(RNG.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    t = ember.tensor(RNG.integers(0, 4, 6))
    loss = ember.nn.functional.linear_cross_entropy(
        x, w, t, options=ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)


def test_options_torch_ignores_warn_and_bad_arguments_are_ember_errors():
    F, Options = ember.nn.functional, ember.nn.LinearCrossEntropyOptions
    x, w, t = ember.ones(2, 3), ember.ones(4, 3), ember.tensor([0, 1])
    with pytest.warns(UserWarning, match="options.. ignored"):
        F.linear_cross_entropy(x, w, t, label_smoothing=0.1, options=Options())
    for call, match in (
            (lambda: F.linear_cross_entropy(ember.ones(2, 3, 3), w, t), "dimensionality 1 or 2"),
            (lambda: F.linear_cross_entropy(x, ember.ones(3), t), "at least 2"),
            (lambda: F.linear_cross_entropy(x, ember.ones(4, 2), t), "in_features"),
            (lambda: F.linear_cross_entropy(x, ember.ones(2, 3), ember.ones(2, 2),
                                            ignore_index=0), "probabilities"),
            (lambda: F.linear_cross_entropy(ember.ones(3), ember.ones(2, 4, 3),
                                            ember.ones(2, 4)), "batched input"),
            (lambda: F.linear_cross_entropy(x, w, t, linear_bias=ember.ones(3)),
             "linear_bias shape"),
            (lambda: F.linear_cross_entropy(x, w, t, options={"batch_chunk_size": 2}),
             "LinearCrossEntropyOptions"),
            (lambda: Options(acc_policy="fast"), "acc_policy"),
            (lambda: Options(chunking_method="rows"), "chunking_method"),
            (lambda: Options(batch_chunk_size=0), "batch_chunk_size"),
            (lambda: Options(acc_dtype=ember.int32), "acc_dtype")):
        with pytest.raises(ember.EmberError, match=match):
            call()
