"""MultiheadAttention, the Transformer layers and stacks against PyTorch (float64)."""
from __future__ import annotations

import math

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import check_outputs_and_grads as check
from nn_helpers import device_params, rng, to_ember, to_numpy, train_side_by_side
from nn_helpers import twin64 as twin

# torch warns that its nested-tensor fast path is off for batch_first=False encoders
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


def close(e, t, what, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=rtol, atol=atol, err_msg=what)


def inputs(torch, r, *shapes):
    arrays = [r.standard_normal(s) for s in shapes]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [ember.tensor(a, requires_grad=True) for a in arrays])


MHA = [
    dict(),
    dict(batch_first=True, bias=False),
    dict(kdim=3, vdim=5),
    dict(add_bias_kv=True, add_zero_attn=True),
]


@pytest.mark.parametrize("cfg", MHA, ids=[",".join(f"{k}={v}" for k, v in c.items()) or
                                          "default" for c in MHA])
@pytest.mark.parametrize("masks", ["none", "bool", "float"])
def test_multihead_attention_matches_torch(torch, cfg, masks):
    r = rng(f"mha{cfg}{masks}")
    t, e = twin(torch, "MultiheadAttention", 6, 2, **cfg)
    assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t.state_dict().items()]
    n, length, source = 3, 4, 5
    lead = (lambda s, d: (n, s, d)) if cfg.get("batch_first") else (lambda s, d: (s, n, d))
    t_in, e_in = inputs(torch, r, lead(length, 6), lead(source, cfg.get("kdim", 6)),
                        lead(source, cfg.get("vdim", 6)))
    kwargs_t, kwargs_e = {}, {}
    if masks != "none":
        attn = r.random((length, source)) < 0.3
        attn[:, 0] = False              # no fully masked row: its softmax would be NaN
        pad = np.zeros((n, source), dtype=bool)
        pad[1, -2:] = True
        if masks == "float":
            attn = np.where(attn, -1e4, 0.0) + r.standard_normal((length, source))
            attn = np.broadcast_to(attn, (n * 2, length, source)).copy()
            pad = np.where(pad, -math.inf, 0.0)
        for kw, lib in ((kwargs_t, torch), (kwargs_e, ember)):
            kw.update(attn_mask=lib.tensor(attn), key_padding_mask=lib.tensor(pad))
    for need, average in ((True, True), (True, False), (False, True)):
        t_out = t(*t_in, need_weights=need, average_attn_weights=average, **kwargs_t)
        e_out = e(*e_in, need_weights=need, average_attn_weights=average, **kwargs_e)
        assert (e_out[1] is None) == (not need)
    for x in t_in + e_in:
        x.grad = None
    check(torch, t_out, e_out, t_in, e_in, t, e, r)


def test_multihead_attention_unbatched_and_causal(torch):
    r = rng("mha unbatched")
    t, e = twin(torch, "MultiheadAttention", 4, 2)
    t_in, e_in = inputs(torch, r, (5, 4), (5, 4), (5, 4))
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    e_mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=ember.float64)
    close(e_mask, t_mask, "generate_square_subsequent_mask")
    check(torch, t(*t_in, attn_mask=t_mask), e(*e_in, attn_mask=e_mask), t_in, e_in, t, e, r)


def test_scaled_dot_product_attention_matches_torch(torch):
    r = rng("sdpa")
    tf = torch.nn.functional
    for kwargs in (dict(), dict(is_causal=True), dict(scale=0.3)):
        t_in, e_in = inputs(torch, r, (2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7))
        t_out = tf.scaled_dot_product_attention(*t_in, **kwargs)
        e_out = F.scaled_dot_product_attention(*e_in, **kwargs)
        close(e_out, t_out, str(kwargs))
    keep = r.random((4, 6)) < 0.7
    keep[:, 0] = True
    for mask in (keep, np.where(keep, 0.0, -2.0)):
        close(F.scaled_dot_product_attention(*e_in, attn_mask=ember.tensor(mask)),
              tf.scaled_dot_product_attention(*t_in, attn_mask=torch.tensor(mask)), "mask")


LAYERS = [
    dict(),
    dict(norm_first=True, activation="gelu", batch_first=True),
    dict(activation="tanh-lambda", bias=False, layer_norm_eps=1e-3),
]


def _layer_kwargs(cfg):
    cfg = dict(cfg)
    if cfg.get("activation") == "tanh-lambda":
        cfg["activation"] = lambda x: x.tanh()        # a callable works in both libraries
    return dict(dim_feedforward=7, dropout=0.0, **cfg)


@pytest.mark.parametrize("cfg", LAYERS, ids=["post-norm", "pre-norm-gelu", "callable"])
def test_encoder_layer_matches_torch(torch, cfg):
    r = rng(f"encoder layer{cfg}")
    t, e = twin(torch, "TransformerEncoderLayer", 6, 2, **_layer_kwargs(cfg))
    shape = (2, 5, 6) if cfg.get("batch_first") else (5, 2, 6)
    t_in, e_in = inputs(torch, r, shape)
    pad = np.zeros((2, 5))
    pad[0, -1] = -math.inf          # a float mask like src_mask (torch warns on mixed kinds)
    t_out = t(*t_in, src_mask=torch.nn.Transformer.generate_square_subsequent_mask(
        5, dtype=torch.float64), src_key_padding_mask=torch.tensor(pad))
    e_out = e(*e_in, src_mask=nn.Transformer.generate_square_subsequent_mask(
        5, dtype=ember.float64), src_key_padding_mask=ember.tensor(pad))
    check(torch, [t_out], [e_out], t_in, e_in, t, e, r)


@pytest.mark.parametrize("cfg", LAYERS, ids=["post-norm", "pre-norm-gelu", "callable"])
def test_decoder_layer_matches_torch(torch, cfg):
    r = rng(f"decoder layer{cfg}")
    t, e = twin(torch, "TransformerDecoderLayer", 6, 3, **_layer_kwargs(cfg))
    first = cfg.get("batch_first")
    t_in, e_in = inputs(torch, r, (2, 4, 6) if first else (4, 2, 6),
                        (2, 5, 6) if first else (5, 2, 6))
    memory_pad = np.zeros((2, 5), dtype=bool)
    memory_pad[1, -2:] = True
    t_out = t(*t_in, tgt_is_causal=True,
              tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(
                  4, dtype=torch.float64),
              memory_key_padding_mask=torch.tensor(memory_pad))
    e_out = e(*e_in, tgt_is_causal=True,
              tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64),
              memory_key_padding_mask=ember.tensor(memory_pad))
    check(torch, [t_out], [e_out], t_in, e_in, t, e, r)


def test_transformer_matches_torch_and_state_dicts_load_both_ways(torch):
    r = rng("transformer")
    kw = dict(d_model=6, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
              dim_feedforward=8, dropout=0.0)
    t, e = twin(torch, "Transformer", **kw)
    assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t.state_dict().items()]
    back = torch.nn.Transformer(**kw).double()
    back.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in e.state_dict().items()})
    t_in, e_in = inputs(torch, r, (5, 2, 6), (3, 2, 6))
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
    e_mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
    check(torch, [back(*t_in, tgt_mask=t_mask)], [e(*e_in, tgt_mask=e_mask)], t_in, e_in,
          back, e, r)
    fresh = nn.Transformer(**kw)                 # xavier-uniform matrices, as torch's
    w = to_numpy(fresh.encoder.layers[0].linear1.weight)
    assert np.abs(w).max() <= math.sqrt(6 / (6 + 8)) and w.std() > 0.1
    with pytest.raises(ember.ShapeError, match="batch number"):
        e(ember.zeros(5, 2, 6, dtype=ember.float64), ember.zeros(3, 1, 6, dtype=ember.float64))


def test_word_language_model_transformer_trains_like_torch(torch):
    """The word language model's TransformerModel in miniature: an nn.Transformer
    subclass that uses its encoder with a causal mask, trained a few SGD steps."""
    r = rng("word lm transformer")

    def build(lib):
        mod = lib.nn

        class TransformerModel(mod.Transformer):
            def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
                super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                 num_encoder_layers=nlayers, dropout=0.0)
                self.input_emb = mod.Embedding(ntoken, ninp)
                self.decoder = mod.Linear(ninp, ntoken)
                self.ninp = ninp

            def forward(self, src):
                mask = mod.Transformer.generate_square_subsequent_mask(len(src)).to(
                    lib.float64)
                src = self.input_emb(src) * math.sqrt(self.ninp)
                out = self.encoder(src, mask=mask)
                return mod.functional.log_softmax(self.decoder(out), dim=-1)

        return TransformerModel(13, 6, 2, 8, 2).double()

    t_model, e_model = build(torch), build(ember)
    e_model.load_state_dict({k: to_ember(v) for k, v in t_model.state_dict().items()})
    tokens = r.integers(0, 13, size=(3, 6, 2))

    def loss_fn(lib, model, batch):
        out = model(lib.tensor(batch[:-1])).reshape(-1, 13)
        return lib.nn.functional.nll_loss(out, lib.tensor(batch[1:]).reshape(-1))
    losses = train_side_by_side(torch, (t_model, e_model), "SGD", tokens, loss_fn, lr=0.5)
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-9)


def test_dropout_and_errors():
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.5)
    x = ember.randn(3, 2, 4)
    assert not np.allclose(to_numpy(layer(x)), to_numpy(layer(x)))
    layer.eval()
    np.testing.assert_array_equal(to_numpy(layer(x)), to_numpy(layer(x)))
    with pytest.raises(ember.EmberError, match="relu/gelu, not swish"):
        nn.TransformerEncoderLayer(4, 2, activation="swish")
    stack = nn.TransformerEncoder(layer, 3)
    assert len(stack.layers) == 3 and stack.layers[0] is not stack.layers[1]
    assert stack.layers[0].linear1.weight is not stack.layers[1].linear1.weight


@pytest.mark.parametrize("device", device_params())
def test_transformer_on_device(device):
    r = rng("transformer device")
    ember.manual_seed(3)
    cpu = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                         dim_feedforward=6, dropout=0.0)
    dev = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                         dim_feedforward=6, dropout=0.0)
    dev.load_state_dict(cpu.state_dict())
    dev.to(device)
    src = r.standard_normal((5, 2, 4)).astype(np.float32)
    tgt = r.standard_normal((3, 2, 4)).astype(np.float32)
    results = []
    for m, where in ((cpu, "cpu"), (dev, device)):
        mask = nn.Transformer.generate_square_subsequent_mask(3, device=where)
        out = m(ember.tensor(src, device=where), ember.tensor(tgt, device=where),
                tgt_mask=mask)
        out.sum().backward()
        results.append((out, m.encoder.layers[0].self_attn.in_proj_weight.grad))
    for a, b in zip(*results):
        np.testing.assert_allclose(to_numpy(b.to("cpu")), to_numpy(a), rtol=1e-4, atol=1e-5)
