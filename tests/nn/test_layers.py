"""Layers against PyTorch: forward, input and parameter gradients (float64), gradcheck."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember.autograd import gradcheck
from nn_helpers import check_layer, copy_weights, to_numpy

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape)


def twin(torch, name, *args, **kwargs):
    """The same layer built by torch.nn and ember.nn, both float64."""
    return (getattr(torch.nn, name)(*args, **kwargs).double(),
            getattr(nn, name)(*args, **kwargs).double())


@pytest.mark.parametrize("bias", [True, False])
def test_linear(torch, bias):
    t, e = twin(torch, "Linear", 7, 5, bias=bias)
    check_layer(torch, t, e, randn(4, 3, 7))
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]


CONV2D = [
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1),
    dict(in_channels=2, out_channels=4, kernel_size=(3, 2), dilation=(2, 1), padding=(2, 0)),
    dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding="same"),
    dict(in_channels=2, out_channels=2, kernel_size=4, padding="same", bias=False),
    dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, stride=(1, 2)),
]


# torch warns that it copies the input for even 'same' kernels; that is torch's business
@pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
@pytest.mark.parametrize("cfg", CONV2D, ids=lambda c: ",".join(f"{k}={v}"
                                                               for k, v in c.items()))
def test_conv2d(torch, cfg):
    t, e = twin(torch, "Conv2d", **cfg)
    check_layer(torch, t, e, randn(2, cfg["in_channels"], 9, 8))


def test_conv2d_unbatched_and_repr(torch):
    t, e = twin(torch, "Conv2d", 2, 3, 3, stride=2, padding=1, groups=1, bias=False)
    check_layer(torch, t, e, randn(2, 7, 7))
    assert repr(e) == repr(t)


@pytest.mark.parametrize("cfg", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=2),
                                 dict(kernel_size=5, padding="same", dilation=2),
                                 dict(kernel_size=3, groups=2)])
def test_conv1d(torch, cfg):
    t, e = twin(torch, "Conv1d", 4, 6, **cfg)
    check_layer(torch, t, e, randn(3, 4, 11))


@pytest.mark.parametrize("cfg", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1,
                                                              output_padding=1),
                                 dict(kernel_size=(2, 3), stride=(2, 1), dilation=(1, 2)),
                                 dict(kernel_size=3, groups=2, stride=2, bias=False)])
def test_conv_transpose2d(torch, cfg):
    t, e = twin(torch, "ConvTranspose2d", 4, 6, **cfg)
    check_layer(torch, t, e, randn(2, 4, 5, 6))
    assert repr(e) == repr(t)


def test_conv_transpose2d_output_size(torch):
    t, e = twin(torch, "ConvTranspose2d", 2, 3, 3, stride=2, padding=1)
    check_layer(torch, t, e, randn(1, 2, 4, 4), kwargs=dict(output_size=(8, 8)))


@pytest.mark.parametrize("cfg", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                 dict(kernel_size=3, stride=2, ceil_mode=True),
                                 dict(kernel_size=(2, 3), stride=1, dilation=2)])
def test_max_pool2d(torch, cfg):
    t, e = twin(torch, "MaxPool2d", **cfg)
    check_layer(torch, t, e, randn(2, 3, 9, 8))
    assert repr(e) == repr(t)


def test_max_pool2d_ties_go_to_the_first_maximum(torch):
    x = np.zeros((1, 1, 4, 4))
    t, e = twin(torch, "MaxPool2d", 2)
    check_layer(torch, t, e, x)


def test_max_pool2d_return_indices(torch):
    x = randn(2, 3, 7, 6)
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    ev, ei = F.max_pool2d(ember.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_allclose(to_numpy(ev), to_numpy(tv))
    np.testing.assert_array_equal(to_numpy(ei), to_numpy(ti))


@pytest.mark.parametrize("cfg", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                 dict(kernel_size=3, stride=2, padding=1,
                                      count_include_pad=False),
                                 dict(kernel_size=3, stride=2, ceil_mode=True),
                                 dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False),
                                 dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(torch, cfg):
    t, e = twin(torch, "AvgPool2d", **cfg)
    check_layer(torch, t, e, randn(2, 3, 9, 8))


@pytest.mark.parametrize("size", [1, (3, 4), (5, 3), (None, 2)])
def test_adaptive_avg_pool2d(torch, size):
    t, e = twin(torch, "AdaptiveAvgPool2d", size)
    check_layer(torch, t, e, randn(2, 3, 9, 8))


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (6, 4, 5)),
                                        ("BatchNorm2d", (4, 4, 3, 5))])
def test_batch_norm_train_then_eval(torch, name, shape, momentum):
    t, e = twin(torch, name, 4, momentum=momentum)
    for step in range(3):
        check_layer(torch, t, e, randn(*shape) * 2 + 1, seed=step)
        copy_weights(t, e)
    for key, value in t.state_dict().items():
        np.testing.assert_allclose(to_numpy(e.state_dict()[key]), to_numpy(value),
                                   err_msg=key)
    assert int(e.num_batches_tracked.item()) == 3 and e.num_batches_tracked.dtype == ember.int64
    t.eval()
    e.eval()
    check_layer(torch, t, e, randn(*shape))
    assert repr(e) == repr(t)


def test_batch_norm_without_affine_or_stats(torch):
    t, e = twin(torch, "BatchNorm2d", 3, affine=False, track_running_stats=False)
    check_layer(torch, t, e, randn(4, 3, 2, 2))
    t.eval()
    e.eval()
    check_layer(torch, t, e, randn(4, 3, 2, 2))
    assert list(e.state_dict()) == list(t.state_dict()) == []


@pytest.mark.parametrize("shape,normalized", [((4, 6), 6), ((2, 3, 4, 5), (4, 5))])
def test_layer_norm(torch, shape, normalized):
    t, e = twin(torch, "LayerNorm", normalized)
    with torch.no_grad():
        t.weight.normal_()
        t.bias.normal_()
    check_layer(torch, t, e, randn(*shape))
    assert repr(e) == repr(t)


def test_group_norm(torch):
    t, e = twin(torch, "GroupNorm", 3, 6)
    with torch.no_grad():
        t.weight.normal_()
        t.bias.normal_()
    check_layer(torch, t, e, randn(2, 6, 4, 3))
    assert repr(e) == repr(t)


def test_embedding_padding_idx(torch):
    t, e = twin(torch, "Embedding", 10, 4, padding_idx=2)
    assert np.all(to_numpy(e.weight)[2] == 0)
    idx = np.array([[1, 2, 3], [2, 9, 1]])
    check_layer(torch, t, e, idx)
    assert np.all(to_numpy(e.weight.grad)[2] == 0)
    assert repr(e) == repr(t)


def test_embedding_max_norm(torch):
    t, e = twin(torch, "Embedding", 6, 3, max_norm=1.0)
    copy_weights(t, e)
    idx = np.array([0, 3, 3, 5])
    t(torch.tensor(idx))
    e(ember.tensor(idx))
    np.testing.assert_allclose(to_numpy(e.weight), to_numpy(t.weight), rtol=1e-6)


ACTIVATIONS = [("ReLU", {}), ("LeakyReLU", dict(negative_slope=0.2)), ("GELU", {}),
               ("GELU", dict(approximate="tanh")), ("SiLU", {}), ("Tanh", {}),
               ("Sigmoid", {}), ("Softmax", dict(dim=1)), ("LogSoftmax", dict(dim=-1)),
               ("ELU", {}), ("Softplus", dict(beta=2.0)), ("Mish", {}), ("Hardtanh", {}),
               ("ReLU6", {}), ("LogSigmoid", {}), ("Softmin", dict(dim=0))]


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activations(torch, name, kwargs):
    t, e = twin(torch, name, **kwargs)
    check_layer(torch, t, e, randn(3, 5) * 4)
    assert repr(e) == repr(t)


def test_flatten_identity_unflatten(torch):
    for name, args in [("Flatten", ()), ("Identity", ()), ("Unflatten", (1, (2, 6)))]:
        t, e = twin(torch, name, *args)
        check_layer(torch, t, e, randn(2, 12, 3) if name != "Flatten" else randn(2, 3, 4))
        assert repr(e) == repr(t)


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


def test_dropout_statistics_and_eval():
    ember.manual_seed(3)
    drop = nn.Dropout(0.25)
    x = ember.ones(200, 200, requires_grad=True)
    y = drop(x)
    kept = to_numpy(y) != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(to_numpy(y)[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad) != 0, kept)
    drop.eval()
    assert drop(x) is x
    ember.manual_seed(3)
    again = nn.Dropout(0.25)(ember.ones(200, 200))
    np.testing.assert_array_equal(to_numpy(again), to_numpy(y))   # seeded: reproducible
    channels = to_numpy(nn.Dropout2d(0.5)(ember.ones(4, 50, 3, 3)))
    assert np.all(channels.reshape(4, 50, 9).std(-1) == 0)        # whole channels


GRADCHECK = [
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
     [(1, 4, 5, 5), (2, 2, 3, 3), (2,)]),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1,
                                                        output_padding=1),
     [(1, 2, 3, 3), (2, 3, 3, 3)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                          count_include_pad=False), [(1, 2, 5, 5)]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     [(4, 3, 2), (3,), (3,)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    ("group_norm", lambda x: F.group_norm(x, 2), [(2, 4, 3)]),
    ("sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [(1, 3, 2), (1, 3, 2), (1, 3, 2)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, shapes):
    inputs = [ember.tensor(randn(*s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, inputs)


def test_layer_errors_name_the_layer():
    with pytest.raises(ember.ShapeError, match="conv2d.*channels"):
        nn.Conv2d(3, 4, 3)(ember.randn(1, 2, 5, 5))
    with pytest.raises(ember.ShapeError, match="larger than the padded input"):
        nn.Conv2d(1, 1, 7)(ember.randn(1, 1, 5, 5))
    with pytest.raises(ValueError, match="Conv2d.*divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ember.ShapeError, match="BatchNorm2d: expected a 4-D input"):
        nn.BatchNorm2d(3)(ember.randn(2, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(ember.randn(1, 3))
    with pytest.raises(ember.ShapeError, match="layer_norm"):
        nn.LayerNorm(5)(ember.randn(2, 4))
    with pytest.raises(TypeError, match="embedding: expected an integer index"):
        nn.Embedding(3, 2)(ember.randn(2))
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="pad should be at most half"):
        nn.MaxPool2d(2, padding=2)(ember.randn(1, 1, 4, 4))
    for exc in (ember.ShapeError, ValueError, TypeError):
        assert issubclass(exc, Exception)
    assert issubclass(ember.ShapeError, ember.EmberError)
