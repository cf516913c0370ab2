"""RNN, LSTM, GRU, their cells and packed sequences against PyTorch (float64), and on devices."""
from __future__ import annotations

import ember
import ember.nn as nn
import numpy as np
import pytest
from ember.nn.utils import rnn as rnn_utils
from nn_helpers import check_outputs_and_grads as check_states
from nn_helpers import copy_weights, device_params, rng, to_ember, to_numpy, train_side_by_side
from nn_helpers import twin64 as twin


def close(e, t, what, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=rtol, atol=atol, err_msg=what)


def pair(torch, array, requires_grad=True):
    return (torch.tensor(array, requires_grad=requires_grad),
            ember.tensor(array, requires_grad=requires_grad))


LAYERS = [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, batch_first=True, proj_size=3)),
    ("LSTM", dict(bias=False, bidirectional=True, proj_size=2)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False)),
    ("RNN", dict(num_layers=2, nonlinearity="relu", bidirectional=True)),
    ("RNN", dict(num_layers=3, batch_first=True)),
]


@pytest.mark.parametrize("name,cfg", LAYERS,
                         ids=[f"{n}-" + ",".join(f"{k}={v}" for k, v in c.items())
                              for n, c in LAYERS])
def test_layer_matches_torch(torch, name, cfg):
    r = rng(f"{name}{cfg}")
    t, e = twin(torch, name, 4, 5, **cfg)
    assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t.state_dict().items()]
    assert repr(e) == repr(t)
    directions = 2 if cfg.get("bidirectional") else 1
    layers = cfg.get("num_layers", 1) * directions
    out_size = cfg.get("proj_size", 0) or 5
    shape = (3, 6, 4) if cfg.get("batch_first") else (6, 3, 4)
    tx, ex = pair(torch, r.standard_normal(shape))
    th, eh = pair(torch, r.standard_normal((layers, 3, out_size)))
    if name == "LSTM":
        tc, ec = pair(torch, r.standard_normal((layers, 3, 5)))
        t_out, (t_h, t_c) = t(tx, (th, tc))
        e_out, (e_h, e_c) = e(ex, (eh, ec))
        check_states(torch, (t_out, t_h, t_c), (e_out, e_h, e_c), (tx, th, tc),
                     (ex, eh, ec), t, e, r)
    else:
        t_out, t_h = t(tx, th)
        e_out, e_h = e(ex, eh)
        check_states(torch, (t_out, t_h), (e_out, e_h), (tx, th), (ex, eh), t, e, r)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_unbatched_input_and_default_state(torch, name):
    r = rng("unbatched" + name)
    t, e = twin(torch, name, 3, 4, num_layers=2)
    tx, ex = pair(torch, r.standard_normal((5, 3)))
    t_out, t_hidden = t(tx)
    e_out, e_hidden = e(ex)
    t_states = t_hidden if name == "LSTM" else (t_hidden,)
    e_states = e_hidden if name == "LSTM" else (e_hidden,)
    assert tuple(e_out.shape) == (5, 4) and all(tuple(s.shape) == (2, 4) for s in e_states)
    check_states(torch, (t_out, *t_states), (e_out, *e_states), (tx,), (ex,), t, e, r)


def test_state_dicts_load_both_ways(torch):
    t = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    e = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    back = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    back.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in e.state_dict().items()})
    for k, v in back.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), t.state_dict()[k].numpy(), err_msg=k)
    assert e._flat_weights_names == t._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in e.all_weights] == [
        [tuple(w.shape) for w in ws] for ws in t.all_weights]
    e.flatten_parameters()          # a no-op, as programs call it after .to(device)


def test_init_is_torchs_uniform():
    ember.manual_seed(0)
    e = nn.GRU(3, 16, num_layers=2)
    bound = 1 / 16 ** 0.5
    for name, p in e.named_parameters():
        values = to_numpy(p)
        assert np.abs(values).max() <= bound and values.std() > bound / 4, name


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(torch, name):
    r = rng(name)
    kwargs = dict(nonlinearity="relu") if name == "RNNCell" else {}
    t, e = twin(torch, name, 3, 4, **kwargs)
    assert repr(e) == repr(t)
    tx, ex = pair(torch, r.standard_normal((2, 3)))
    th, eh = pair(torch, r.standard_normal((2, 4)))
    if name == "LSTMCell":
        tc, ec = pair(torch, r.standard_normal((2, 4)))
        check_states(torch, t(tx, (th, tc)), e(ex, (eh, ec)), (tx, th, tc), (ex, eh, ec),
                     t, e, r)
        t_one, e_one = t(tx[0]), e(ex[0])           # unbatched, zero state
    else:
        check_states(torch, (t(tx, th),), (e(ex, eh),), (tx, th), (ex, eh), t, e, r)
        t_one, e_one = (t(tx[0]),), (e(ex[0]),)
    for a, b in zip(e_one, t_one):
        assert tuple(a.shape) == (4,)
        close(a, b, "unbatched")


def test_time_sequence_cells_train_like_torch(torch):
    """time_sequence_prediction's model: two LSTMCells and a Linear over split steps,
    trained with LBFGS (closure) from the same initial weights."""
    r = rng("time sequence")
    data = np.sin(np.arange(24).reshape(3, 8) / 3.0 + r.standard_normal((3, 1)))

    def model(mod):
        return (mod.LSTMCell(1, 6), mod.LSTMCell(6, 6), mod.Linear(6, 1))

    t_mods, e_mods = model(torch.nn), model(nn)
    for t, e in zip(t_mods, e_mods):
        t.double()
        e.double()
        copy_weights(t, e)

    def run(lib, mods, x):
        c1, c2, lin = mods
        h = [lib.zeros(x.shape[0], 6, dtype=lib.float64) for _ in range(4)]
        outs = []
        for step in x.split(1, dim=1):
            h[0], h[1] = c1(step, (h[0], h[1]))
            h[2], h[3] = c2(h[0], (h[2], h[3]))
            outs.append(lin(h[2]))
        return lib.cat(outs, dim=1)

    losses = {}
    for lib, mods in ((torch, t_mods), (ember, e_mods)):
        opt = lib.optim.LBFGS([p for m in mods for p in m.parameters()], lr=0.8, max_iter=4)
        x, y = lib.tensor(data[:, :-1]), lib.tensor(data[:, 1:])
        losses[lib.__name__] = []

        def closure(lib=lib, mods=mods, opt=opt, x=x, y=y):
            opt.zero_grad()
            loss = ((run(lib, mods, x) - y) ** 2).mean()
            loss.backward()
            losses[lib.__name__].append(float(loss.item()))
            return loss
        for _ in range(2):
            opt.step(closure)
    assert len(losses["ember"]) == len(losses["torch"])
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-8)


def test_language_model_trains_like_torch(torch):
    """The word language model's shape in miniature: Embedding, 2-layer LSTM, Linear,
    cross-entropy, clipped SGD, the hidden state carried (detached) between batches."""
    r = rng("language model")
    tokens = r.integers(0, 11, size=(4, 7, 3))

    def model(mod):
        return mod.ModuleList([mod.Embedding(11, 5), mod.LSTM(5, 6, 2), mod.Linear(6, 11)])

    t_model, e_model = model(torch.nn).double(), model(nn).double()
    copy_weights(t_model, e_model)

    def loss_fn(lib, m, batch):
        hidden = getattr(m, "hidden", None)
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden)
        out, m.hidden = m[1](m[0](lib.tensor(batch[:-1])), hidden)
        return lib.nn.functional.cross_entropy(m[2](out).reshape(-1, 11),
                                               lib.tensor(batch[1:]).reshape(-1))
    losses = train_side_by_side(torch, (t_model, e_model), "SGD", tokens, loss_fn, clip=0.25,
                                lr=2.0)
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-10)


# -- packed sequences ----------------------------------------------------------------------

def test_packed_bidirectional_lstm_matches_torch(torch):
    r = rng("packed")
    lengths = [3, 5, 2, 4]
    t, e = twin(torch, "LSTM", 2, 3, num_layers=2, bidirectional=True, batch_first=True)
    tx, ex = pair(torch, r.standard_normal((4, 5, 2)))
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=True,
                                                 enforce_sorted=False)
    ep = nn.utils.rnn.pack_padded_sequence(ex, lengths, batch_first=True,
                                           enforce_sorted=False)
    close(ep.data, tp.data, "packed data")
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert ep.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert ep.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    t_out, (t_h, t_c) = t(tp)
    e_out, (e_h, e_c) = e(ep)
    assert isinstance(e_out, rnn_utils.PackedSequence)
    t_pad, t_len = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=True,
                                                          total_length=6)
    e_pad, e_len = nn.utils.rnn.pad_packed_sequence(e_out, batch_first=True, total_length=6)
    assert e_len.tolist() == t_len.tolist() == lengths
    check_states(torch, (t_pad, t_h, t_c), (e_pad, e_h, e_c), (tx,), (ex,), t, e, r)


@pytest.mark.parametrize("name", ["GRU", "RNN"])
def test_packed_sorted_gru_rnn_with_state(torch, name):
    r = rng("packed" + name)
    t, e = twin(torch, name, 2, 3, bidirectional=True)
    tx, ex = pair(torch, r.standard_normal((4, 3, 2)))
    th, eh = pair(torch, r.standard_normal((2, 3, 3)))
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, [4, 4, 1])
    ep = nn.utils.rnn.pack_padded_sequence(ex, ember.tensor([4, 4, 1]))
    t_out, t_h = t(tp, th)
    e_out, e_h = e(ep, eh)
    assert e_out.sorted_indices is None
    t_pad, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out, padding_value=-1.0)
    e_pad, _ = nn.utils.rnn.pad_packed_sequence(e_out, padding_value=-1.0)
    check_states(torch, (t_pad, t_h), (e_pad, e_h), (tx, th), (ex, eh), t, e, r)


def test_pad_and_pack_sequence(torch):
    r = rng("pad_sequence")
    arrays = [r.standard_normal((n, 2)) for n in (2, 4, 3)]
    t_seqs = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_seqs = [ember.tensor(a, requires_grad=True) for a in arrays]
    for kw in (dict(), dict(batch_first=True, padding_value=7.0),
               dict(batch_first=True, padding_side="left")):
        close(nn.utils.rnn.pad_sequence(e_seqs, **kw),
              torch.nn.utils.rnn.pad_sequence(t_seqs, **kw), str(kw))
    tp = torch.nn.utils.rnn.pack_sequence(t_seqs, enforce_sorted=False)
    ep = nn.utils.rnn.pack_sequence(e_seqs, enforce_sorted=False)
    close(ep.data, tp.data, "pack_sequence")
    g = r.standard_normal(tuple(tp.data.shape))
    tp.data.backward(torch.tensor(g))
    ep.data.backward(ember.tensor(g))
    for a, b in zip(e_seqs, t_seqs):
        close(a.grad, b.grad, "grad through pack_sequence")
    for a, b in zip(nn.utils.rnn.unpack_sequence(ep), torch.nn.utils.rnn.unpack_sequence(tp)):
        close(a, b, "unpack_sequence")


def test_packing_errors():
    x = ember.zeros(4, 3, 2)
    with pytest.raises(ember.EmberError, match="enforce_sorted"):
        nn.utils.rnn.pack_padded_sequence(x, [1, 3, 2])
    with pytest.raises(ember.EmberError, match="greater than 0"):
        nn.utils.rnn.pack_padded_sequence(x, [3, 0, 0])
    with pytest.raises(ember.EmberError, match="2 sequences"):
        nn.utils.rnn.pack_padded_sequence(x, [3, 2])
    packed = nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1])
    with pytest.raises(ember.EmberError, match="total_length"):
        nn.utils.rnn.pad_packed_sequence(packed, total_length=3)


def test_layer_errors():
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ember.ShapeError, match="Expected input to be 2D or 3D, got 4D"):
        lstm(ember.zeros(1, 2, 3, 3))
    with pytest.raises(ember.ShapeError, match="sequence length to be larger than 0"):
        lstm(ember.zeros(0, 2, 3))
    with pytest.raises(ember.ShapeError, match="Expected 3, got 5"):
        lstm(ember.zeros(2, 2, 5))
    with pytest.raises(ember.ShapeError, match=r"Expected hidden\[1\] size \(2, 2, 4\)"):
        lstm(ember.zeros(2, 2, 3), (ember.zeros(2, 2, 4), ember.zeros(2, 3, 4)))
    with pytest.raises(ember.EmberError, match="tuple"):
        lstm(ember.zeros(2, 2, 3), ember.zeros(2, 2, 4))
    with pytest.raises(ember.ShapeError, match="hx should also be 2-D"):
        nn.GRU(3, 4)(ember.zeros(2, 3), ember.zeros(1, 1, 4))
    with pytest.raises(ember.EmberError, match="only supported for LSTM"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(ember.EmberError, match="smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ember.EmberError, match="Unknown nonlinearity 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ember.EmberError, match="range"):
        nn.LSTM(3, 4, 2, dropout=1.5)
    with pytest.warns(ember.errors.EmberWarning, match="num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)
    with pytest.raises(ember.ShapeError, match="1D or 2D"):
        nn.LSTMCell(3, 4)(ember.zeros(1, 2, 3))
    with pytest.raises(ember.EmberError, match=r"tuple \(h_0, c_0\)"):
        nn.LSTMCell(3, 4)(ember.zeros(2, 3), ember.zeros(2, 4))


def test_dropout_between_layers_only_in_training():
    ember.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = ember.randn(5, 2, 3)
    a, b = lstm(x)[0], lstm(x)[0]
    assert not np.allclose(to_numpy(a), to_numpy(b))       # a fresh mask per call
    lstm.eval()
    np.testing.assert_array_equal(to_numpy(lstm(x)[0]), to_numpy(lstm(x)[0]))


@pytest.mark.parametrize("device", device_params())
def test_recurrent_layers_on_device(device):
    r = rng("device rnn")
    x = r.standard_normal((5, 2, 3)).astype(np.float32)
    g = r.standard_normal((5, 2, 8)).astype(np.float32)
    for name in ("LSTM", "GRU", "RNN"):
        ember.manual_seed(1)
        cpu = getattr(nn, name)(3, 4, bidirectional=True)
        dev = getattr(nn, name)(3, 4, bidirectional=True)
        dev.load_state_dict(cpu.state_dict())
        dev.to(device)
        results = []
        for m, where in ((cpu, "cpu"), (dev, device)):
            xs = ember.tensor(x, device=where, requires_grad=True)
            packed = nn.utils.rnn.pack_padded_sequence(xs, [5, 3])
            out, _ = m(packed)
            padded, _ = nn.utils.rnn.pad_packed_sequence(out)
            assert str(padded.device) == where
            padded.backward(ember.tensor(g, device=where))
            results.append((padded, xs.grad, m.weight_hh_l0_reverse.grad))
        for a, b in zip(*results):
            np.testing.assert_allclose(to_numpy(b.to("cpu")), to_numpy(a), rtol=1e-4,
                                       atol=1e-5, err_msg=name)
    cell = nn.GRUCell(3, 4).to(device)
    assert str(cell(ember.tensor(x[0], device=device)).device) == device


@pytest.mark.parametrize("kind, cell, calls", [("LSTM", "lstm_sequence", 2),
                                               ("GRU", "gru_sequence", 2)])
def test_each_step_is_one_cell_kernel_and_one_gradient_kernel(kind, cell, calls):
    """The gate arithmetic of a step runs as one declared kernel forward and one backward
    (ops/rnn.py), not as a dozen elementwise ops; on the CPU a layer's whole sequence is
    one kernel call each way (lstm_sequence, gru_sequence); the values stay torch's."""
    from ember import dispatch
    torch = pytest.importorskip("torch")
    t_layer = getattr(torch.nn, kind)(3, 4, 2)
    layer = getattr(nn, kind)(3, 4, 2)
    layer.load_state_dict({k: ember.tensor(v.detach().numpy())
                           for k, v in t_layer.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    names = []
    dispatch.add_hook("count-cells", lambda op, *rest: names.append(op.name))
    try:
        ex = ember.tensor(x, requires_grad=True)
        out, _ = layer(ex)
        out.sum().backward()
    finally:
        dispatch.remove_hook("count-cells")
    assert names.count(cell) == calls and names.count(cell + "_backward") == calls
    assert "sigmoid" not in names and "tanh" not in names
    assert "lstm_cell" not in names and "gru_cell" not in names
    tx = torch.tensor(x, requires_grad=True)
    t_out, _ = t_layer(tx)
    t_out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_the_recurrent_weight_gradient_is_one_matmul_over_all_steps(kind):
    """Backward through a layer of equal-length sequences takes d W_hh in one product
    after the loop (per step only d h_prev = d gates @ W_hh remains), and still
    differentiates again (create_graph) as torch does."""
    from ember import dispatch
    torch = pytest.importorskip("torch")
    t_layer = getattr(torch.nn, kind)(3, 4, 2)
    layer = getattr(nn, kind)(3, 4, 2)
    layer.load_state_dict({k: ember.tensor(v.detach().numpy())
                           for k, v in t_layer.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((6, 2, 3)).astype(np.float32)
    ex = ember.tensor(x, requires_grad=True)
    out, _ = layer(ex)
    names = []
    dispatch.add_hook("count-matmuls", lambda op, *rest: names.append(op.name))
    try:
        out.sum().backward()
    finally:
        dispatch.remove_hook("count-matmuls")
    # 6 steps x 2 layers of d h_prev, one d W_hh per layer, one d W_ih and d x per layer
    # (linear's): 12 + 2 + 4 (per step and per-step weight products would be 24 + 4)
    assert names.count("matmul") + names.count("linear") <= 18, names.count("matmul")
    tx = torch.tensor(x, requires_grad=True)
    t_out, _ = t_layer(tx)
    t_out.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (name, p), q in zip(layer.named_parameters(), t_layer.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    # double backward: the gradient of sum(d out / d x ^ 2) with respect to W_hh
    ex2, tx2 = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    layer.zero_grad()
    (g,) = ember.autograd.grad(layer(ex2)[0].sum(), [ex2], create_graph=True)
    (g * g).sum().backward()
    t_layer.zero_grad()
    (tg,) = torch.autograd.grad(t_layer(tx2)[0].sum(), [tx2], create_graph=True)
    (tg * tg).sum().backward()
    np.testing.assert_allclose(layer.weight_hh_l0.grad.numpy(),
                               t_layer.weight_hh_l0.grad.numpy(), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_sequence_kernel_matches_its_decomposition(reverse):
    """The CPU's whole-sequence LSTM kernels (forward and gradient) give what the declared
    decompositions give: the path of every device without the kernels (ops/rnn.py)."""
    from ember.dispatch import run
    from ember.ops.rnn import lstm_sequence_backward_op, lstm_sequence_op
    r = rng(f"lstm sequence {reverse}")
    steps, rows, n = 4, 3, 5

    def t(*shape):
        return ember.tensor(r.standard_normal(shape))      # float64: exact comparison
    gi, h0, c0, w = t(steps * rows, 4 * n), t(rows, n), t(rows, n), t(n, 4 * n)
    attrs = dict(steps=steps, reverse=reverse)
    y = run(lstm_sequence_op, gi, h0, c0, w, **attrs)
    close(y, lstm_sequence_op.decompose(gi, h0, c0, w, **attrs), "forward")
    grads = (t(steps * rows, n), t(rows, n), t(rows, n), y, h0, c0, w)
    d = run(lstm_sequence_backward_op, *grads, **attrs)
    assert tuple(d.shape) == (steps * rows + rows + n, 4 * n)
    close(d, lstm_sequence_backward_op.decompose(*grads, **attrs), "backward")


@pytest.mark.parametrize("reverse", [False, True])
def test_gru_sequence_kernel_matches_its_decomposition(reverse):
    """gru_sequence likewise: the CPU's kernels against the declared decompositions."""
    from ember.dispatch import run
    from ember.ops.rnn import gru_sequence_backward_op, gru_sequence_op
    r = rng(f"gru sequence {reverse}")
    steps, rows, n = 4, 3, 5

    def t(*shape):
        return ember.tensor(r.standard_normal(shape))
    gi, h0, w, b = t(steps * rows, 3 * n), t(rows, n), t(n, 3 * n), t(3 * n)
    attrs = dict(steps=steps, reverse=reverse)
    y = run(gru_sequence_op, gi, h0, w, b, **attrs)
    close(y, gru_sequence_op.decompose(gi, h0, w, b, **attrs), "forward")
    grads = (t(steps * rows, n), t(rows, n), y, h0, w)
    d = run(gru_sequence_backward_op, *grads, **attrs)
    assert tuple(d.shape) == (2 * steps * rows + rows + n + 1, 3 * n)
    close(d, gru_sequence_backward_op.decompose(*grads, **attrs), "backward")


def test_lstm_training_steps_that_keep_results_alive_match_torch(torch):
    """Large enough for the CPU kernels' and linear's results to be recycled
    (backends/cpu/spares.py): each step's outputs and input gradients, kept alive into
    the next steps, stay what torch gives, and the weights' gradients too."""
    r = np.random.default_rng(7)
    t_layer = torch.nn.LSTM(64, 64, 2).double()
    e_layer = nn.LSTM(64, 64, 2, dtype=ember.float64)
    e_layer.load_state_dict({k: ember.tensor(v.detach().numpy())
                             for k, v in t_layer.state_dict().items()})
    kept = []
    for _ in range(3):
        x = r.standard_normal((30, 16, 64))
        tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
        t_out, _ = t_layer(tx)
        e_out, _ = e_layer(ex)
        t_out.sum().backward()
        e_out.sum().backward()
        kept.append((e_out, t_out.detach().numpy(), ex.grad, tx.grad.numpy()))
        for e, t, eg, tg in kept:
            np.testing.assert_allclose(e.detach().numpy(), t, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(eg.numpy(), tg, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(e_layer.weight_hh_l0.grad.numpy(),
                               t_layer.weight_hh_l0.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_equal_length_layers_on_device(kind, device):
    """Equal-length sequences take the whole-sequence path (lstm_sequence, gru_sequence):
    a device without their kernels runs the decompositions, with the CPU's values and
    gradients."""
    r = rng("equal lstm device")
    x = r.standard_normal((4, 2, 3)).astype(np.float32)
    g = r.standard_normal((4, 2, 8)).astype(np.float32)
    ember.manual_seed(2)
    cpu = getattr(nn, kind)(3, 4, 2, bidirectional=True)
    dev = getattr(nn, kind)(3, 4, 2, bidirectional=True)
    dev.load_state_dict(cpu.state_dict())
    dev.to(device)
    results = []
    for m, where in ((cpu, "cpu"), (dev, device)):
        xs = ember.tensor(x, device=where, requires_grad=True)
        out, state = m(xs)
        last = state[1] if kind == "LSTM" else state
        (out * ember.tensor(g, device=where)).sum().backward(retain_graph=True)
        last.sum().backward()
        results.append((out, last, xs.grad, m.weight_hh_l1_reverse.grad, m.bias_ih_l0.grad,
                        m.bias_hh_l0.grad))
    for a, b in zip(*results):
        np.testing.assert_allclose(to_numpy(b.to("cpu")), to_numpy(a), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_per_sample_gradients_of_a_layer_under_vmap(kind):
    """vmap(grad) over a layer's whole-sequence ops: the samples join each step's rows
    forward, the gradient runs once per sample (its d W_hh is per sample), no fallback
    warning, and each sample's gradients are those of its own backward."""
    import warnings

    from ember.func import functional_call, grad, vmap
    ember.manual_seed(3)
    m = getattr(nn, kind)(3, 4, 1)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, x):
        return functional_call(m, p, (x.unsqueeze(1),))[0].pow(2).sum()
    xs = ember.tensor(rng(f"vmap {kind}").standard_normal((3, 5, 3)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vmap(grad(loss), in_dims=(None, 0))(params, xs)
    for k in range(3):
        want = grad(loss)(params, xs[k])
        for name in params:
            np.testing.assert_allclose(got[name][k].numpy(), want[name].numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=name)
