"""nn.utils' norm helpers, fusion, skip_init and memory-format conversion against torch."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _same_weights(t_mod, e_mod):
    with ember.no_grad():
        for (_name, p), (_, q) in zip(t_mod.state_dict().items(), e_mod.state_dict().items()):
            q.copy_(ember.tensor(p.detach().numpy()))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, float("inf")])
def test_total_norm_and_clipping_with_it_as_torch(norm_type):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5,), (2, 2, 2))]
    results = []
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.zeros(a.shape)) for a in arrays]
        for p, a in zip(ps, arrays):
            p.grad = lib.tensor(a)
        total = lib.nn.utils.get_total_norm([p.grad for p in ps], norm_type)
        lib.nn.utils.clip_grads_with_norm_(ps, 0.5, total)
        results.append([float(total)] + [p.grad.numpy().copy() for p in ps])
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    for e, t in zip(results[1][1:], results[0][1:]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "linear"])
def test_batch_norm_folding_as_torch(kind):
    x = np.random.default_rng(1).standard_normal((2, 4, 5, 5)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        nn = lib.nn
        if kind == "linear":
            layer, bn, data = nn.Linear(6, 3), nn.BatchNorm1d(3), x[:, 0, 0, :1].repeat(6, 1)
        elif kind == "conv":
            layer, bn, data = nn.Conv2d(4, 3, 3), nn.BatchNorm2d(3), x
        else:
            layer, bn, data = nn.ConvTranspose2d(4, 3, 2, stride=2), nn.BatchNorm2d(3), x
        outs.append((layer, bn, data))
    (tl, tb, data), (el, eb, _) = outs
    _same_weights(tl, el)
    with torch.no_grad():
        tb.running_mean.uniform_(-1, 1)
        tb.running_var.uniform_(0.5, 2)
        tb.weight.uniform_(0.5, 1.5)
        tb.bias.uniform_(-1, 1)
    _same_weights(tb, eb)
    got = []
    for lib, layer, bn in ((torch, tl, tb), (ember, el, eb)):
        layer.eval()
        bn.eval()
        U = lib.nn.utils
        if kind == "linear":
            fused = U.fusion.fuse_linear_bn_eval(layer, bn)
        else:
            fused = U.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv_transpose")
        inp = lib.tensor(data)
        got.append((fused(inp).detach().numpy(), bn(layer(inp)).detach().numpy(),
                    sorted(n for n, _ in fused.named_parameters())))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1][0], got[1][1], rtol=1e-4, atol=1e-5)
    assert got[1][2] == got[0][2]
    el.train()
    with pytest.raises(ember.errors.EmberValueError, match="eval"):
        ember.nn.utils.fuse_conv_bn_eval(el, eb) if kind != "linear" else \
            ember.nn.utils.fuse_linear_bn_eval(el, eb)


def test_skip_init_and_memory_format_as_torch():
    for lib in (torch, ember):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 4, 3, bias=False)
        assert tuple(m.weight.shape) == (3, 4) and m.bias is None
        with pytest.raises((RuntimeError, ember.errors.EmberValueError), match="device"):
            lib.nn.utils.skip_init(lib.nn.ReLU)
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.ReLU(),
                                lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)))
        out = lib.nn.utils.convert_conv2d_weight_memory_format(net, lib.channels_last)
        assert out is net
        assert net[0].weight.is_contiguous(memory_format=lib.channels_last)
        assert net[2][0].weight.is_contiguous(memory_format=lib.channels_last)
