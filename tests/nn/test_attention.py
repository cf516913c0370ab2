"""MultiheadAttention and scaled_dot_product_attention (nn.attention) against PyTorch."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember.autograd import gradcheck
from nn_helpers import check_layer, to_numpy, twin

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True), dict(bias=False),
                                 dict(kdim=3, vdim=5), dict(add_bias_kv=True,
                                                            add_zero_attn=True)])
def test_multihead_attention(torch, cfg):
    t, e = twin(torch, "MultiheadAttention", 8, 2, **cfg)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    q = randn(4, 3, 8)
    k = randn(6, 3, cfg.get("kdim", 8))
    v = randn(6, 3, cfg.get("vdim", 8))
    if cfg.get("batch_first"):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    check_layer(torch, t, e, q, k, v)
    tq, tk, tv = (torch.tensor(a) for a in (q, k, v))
    eq, ek, ev = (ember.tensor(a) for a in (q, k, v))
    _, tw = t(tq, tk, tv, average_attn_weights=False)
    _, ew = e(eq, ek, ev, average_attn_weights=False)
    np.testing.assert_allclose(to_numpy(ew), to_numpy(tw), rtol=1e-7, atol=1e-9)


def test_multihead_attention_masks(torch):
    t, e = twin(torch, "MultiheadAttention", 8, 4, batch_first=True)
    x = randn(2, 5, 8)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    padding = np.array([[False] * 5, [False, False, False, True, True]])
    check_layer(torch, t, e, x, x, x,
                kwargs=dict(attn_mask=None, key_padding_mask=None, is_causal=False))
    t_out, _ = t(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(causal),
                 key_padding_mask=torch.tensor(padding))
    e_out, _ = e(*(ember.tensor(x),) * 3, attn_mask=ember.tensor(causal),
                 key_padding_mask=ember.tensor(padding))
    np.testing.assert_allclose(to_numpy(e_out), to_numpy(t_out), rtol=1e-7, atol=1e-9)
    e_causal, _ = e(*(ember.tensor(x),) * 3, is_causal=True)
    t_causal, _ = t(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(causal), is_causal=True)
    np.testing.assert_allclose(to_numpy(e_causal), to_numpy(t_causal), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("cfg", [dict(), dict(is_causal=True), dict(scale=0.3),
                                 dict(mask="bool"), dict(mask="float"),
                                 dict(enable_gqa=True)])
def test_scaled_dot_product_attention(torch, cfg):
    q, k, v = randn(2, 4, 5, 3), randn(2, 4 if not cfg.get("enable_gqa") else 2, 7, 3), None
    v = randn(*k.shape[:-1], 6)
    kwargs = {key: val for key, val in cfg.items() if key != "mask"}
    mask = None
    if cfg.get("mask") == "bool":
        mask = RNG.random((5, 7)) > 0.3
        mask[:, 0] = True
    elif cfg.get("mask") == "float":
        mask = randn(5, 7)
    tt = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    ee = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
    t_out = torch.nn.functional.scaled_dot_product_attention(
        *tt, attn_mask=None if mask is None else torch.tensor(mask), **kwargs)
    e_out = F.scaled_dot_product_attention(
        *ee, attn_mask=None if mask is None else ember.tensor(mask), **kwargs)
    np.testing.assert_allclose(to_numpy(e_out), to_numpy(t_out), rtol=1e-7, atol=1e-9)
    t_out.sum().backward()
    e_out.sum().backward()
    for t, e in zip(tt, ee):
        np.testing.assert_allclose(to_numpy(e.grad), to_numpy(t.grad), rtol=1e-7, atol=1e-9)


GRADCHECK = [
    ("sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [(1, 3, 2), (1, 3, 2), (1, 3, 2)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, shapes):
    inputs = [ember.tensor(randn(*s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, inputs)


def test_errors_name_the_layer():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
