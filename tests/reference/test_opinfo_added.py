"""Parity with torch for the op_db names ember added (issue 26): what their OpInfo samples
do not reach (the in-place function forms as a set, gradients through fill_/zero_, stft's
round trip, ...), each against torch on every testable device."""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.testing import targets  # noqa: E402

DEVICES = [t.device for t in targets() if not t.problem]
RNG = np.random.default_rng(26)
# torch's in-place function forms whose Tensor method ember lacks
LACKING = {"alpha_dropout_", "as_strided_", "celu_", "conj_physical_", "dropout_",
           "embedding_renorm_", "feature_alpha_dropout_", "feature_dropout_",
           "resize_as_sparse_", "rrelu_", "selu_", "threshold_"}


def _close(t, e, tol=1e-5):
    assert tuple(t.shape) == tuple(e.shape), (tuple(t.shape), tuple(e.shape))
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol)


def test_inplace_function_forms_are_torchs_list():
    torchs = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_")}
    assert sorted(torchs - LACKING) == sorted(
        n for n in ember.__all__ if n.endswith("_") and not n.startswith("_"))
    for name in torchs - LACKING:
        assert getattr(ember, name) is getattr(ember.Tensor, name), name


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args", [("relu_", ()), ("sigmoid_", ()), ("clamp_", (-0.5, 0.5)),
                                       ("square_", ()), ("negative_", ()), ("zero_", ()),
                                       ("fill_", (2.5,)), ("xlogy_", (3.0,))])
def test_inplace_function_form_writes_its_input(device, name, args):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    t, e = torch.tensor(a), ember.tensor(a, device=device)
    to, eo = getattr(torch, name)(t, *args), getattr(ember, name)(e, *args)
    assert eo is e and to is t
    _close(t, e)


@pytest.mark.parametrize("device", DEVICES)
def test_fill_and_zero_gradients(device):
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, device=device,
                                                               requires_grad=True)
    tv = torch.tensor(1.5, requires_grad=True)
    ev = ember.tensor(1.5, device=device, requires_grad=True)
    to, eo = (ta * 2).fill_(tv) * ta, (ea * 2).fill_(ev) * ea
    _close(to, eo)
    to.sum().backward()
    eo.sum().backward()
    _close(ta.grad, ea.grad)
    _close(tv.grad, ev.grad)
    tz, ez = torch.zero_(ta * 3), ember.zero_(ea * 3)
    assert ez.requires_grad and tz.requires_grad
    _close(tz, ez)


@contextlib.contextmanager
def _torch_warns_once():
    """torch's stft warnings come once a process (TORCH_WARN_ONCE): not checked on its side"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _signal(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", [
    dict(n_fft=16, hop_length=4),
    dict(n_fft=16, hop_length=5, win_length=12),
    dict(n_fft=16, hop_length=4, center=False),
    dict(n_fft=12, hop_length=3, normalized=True, pad_mode="constant"),
    dict(n_fft=16, hop_length=4, onesided=False),
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_stft_istft_round_trip_and_window_gradient(device, kw):
    a = _signal((2, 64))
    w = (np.hanning(kw.get("win_length", kw["n_fft"]) + 2)[1:-1]).astype(np.float32)
    tw, ew = torch.tensor(w, requires_grad=True), ember.tensor(w, device=device,
                                                                requires_grad=True)
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, device=device,
                                                                requires_grad=True)
    ts = torch.stft(ta, window=tw, return_complex=True, **kw)
    es = ember.stft(ea, window=ew, return_complex=True, **kw)
    _close(ts, es, 1e-4)
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    ty = torch.istft(ts, window=tw, length=64, **ikw)
    ey = ember.istft(es, window=ew, length=64, **ikw)
    _close(ty, ey, 1e-4)
    if kw.get("center", True):      # the frames cover every sample: the round trip holds
        np.testing.assert_allclose(ey.detach().cpu().numpy(), a, rtol=1e-4, atol=1e-4)
    up = _signal((2, 64))
    ty.backward(torch.tensor(up))
    ey.backward(ember.tensor(up, device=device))
    _close(ta.grad, ea.grad, 1e-4)
    _close(tw.grad, ew.grad, 1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_stft_complex_input_and_real_form(device):
    a = _signal((50,)) + 1j * _signal((50,))
    with _torch_warns_once():
        t = torch.stft(torch.tensor(a.astype(np.complex64)), 8)
    with pytest.warns(ember.errors.EmberWarning, match="window"):
        e = ember.stft(ember.tensor(a.astype(np.complex64), device=device), 8)
    _close(t, e, 1e-4)
    r = _signal((50,))
    ones = dict(window=torch.ones(8)), dict(window=ember.ones(8, device=device))
    with _torch_warns_once():
        t = torch.stft(torch.tensor(r), 8, return_complex=False, **ones[0])
    with pytest.warns(ember.errors.EmberWarning, match="return_complex=False"):
        e = ember.stft(ember.tensor(r, device=device), 8, return_complex=False, **ones[1])
    _close(t, e, 1e-4)
    e = ember.tensor(r, device=device).stft(8, return_complex=True, **ones[1])
    _close(torch.tensor(r).stft(8, return_complex=True, **ones[0]), e, 1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_istft_length_beyond_the_frames_pads_with_zeros(device):
    a = _signal((9, 6)) + 1j * _signal((9, 6))
    with _torch_warns_once():
        t = torch.istft(torch.tensor(a.astype(np.complex64)), 16, hop_length=4,
                        center=False, length=40, window=torch.ones(16))
    with pytest.warns(ember.errors.EmberWarning, match="shorter"):
        e = ember.istft(ember.tensor(a.astype(np.complex64), device=device), 16,
                        hop_length=4, center=False, length=40,
                        window=ember.ones(16, device=device))
    _close(t, e, 1e-4)


@pytest.mark.parametrize("call,match", [
    (lambda T, x: T.stft(x, 8), "return_complex"),
    (lambda T, x: T.stft(x, 8, hop_length=0, return_complex=True), "hop_length"),
    (lambda T, x: T.stft(x, 8, win_length=9, return_complex=True), "win_length"),
    (lambda T, x: T.stft(x, 8, window=T.ones(5), return_complex=True), "window"),
    (lambda T, x: T.stft(x.reshape(1, 2, 10), 8, return_complex=True), "1-D or 2-D"),
    (lambda T, x: T.stft(x + 0j, 8, onesided=True), "onesided"),
    (lambda T, x: T.stft(x, 8, align_to_window=True, return_complex=True), "align_to_window"),
    (lambda T, x: T.istft(x, 8), "complex"),
    (lambda T, x: T.istft(T.stft(x, 8, return_complex=True), 10), "frequency"),
    (lambda T, x: T.istft(T.stft(x, 8, return_complex=True), 8, window=T.zeros(8)),
     "overlap"),
])
@pytest.mark.filterwarnings("ignore:.*window:UserWarning")
def test_stft_istft_errors_where_torch_raises(call, match):
    a = _signal((20,))
    with pytest.raises(RuntimeError):
        call(torch, torch.tensor(a))
    with pytest.raises(ember.EmberError, match=match):
        call(ember, ember.tensor(a))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", [
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 1, 3), padding=(0, 1, 1), dilation=(2, 1, 1), groups=2),
    dict(stride=3, output_padding=(2, 0, 1), dilation=(1, 2, 1)),
], ids=str)
def test_conv_transpose3d_values_and_gradients(device, kw):
    a = RNG.standard_normal((2, 4, 3, 4, 3)).astype(np.float32)
    wt = RNG.standard_normal((4, 6 // kw.get("groups", 1), 2, 3, 2)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    ts = [torch.tensor(v, requires_grad=True) for v in (a, wt, b)]
    es = [ember.tensor(v, device=device, requires_grad=True) for v in (a, wt, b)]
    to = torch.nn.functional.conv_transpose3d(*ts, **kw)
    eo = ember.nn.functional.conv_transpose3d(*es, **kw)
    _close(to, eo, 1e-4)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    eo.backward(ember.tensor(up, device=device))
    for t, e in zip(ts, es):
        _close(t.grad, e.grad, 1e-3)


def test_conv_transpose3d_module_output_size():
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1)
    em = ember.nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})
    a = RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    to = tm(torch.tensor(a), output_size=(6, 8, 10))
    eo = em(ember.tensor(a), output_size=(6, 8, 10))
    _close(to, eo, 1e-4)
    with pytest.raises(ember.EmberError, match="output size"):
        em(ember.tensor(a), output_size=(9, 8, 10))


def _mha_case(batched, separate, mask, extra):
    """torch's and ember's arguments of one multi_head_attention_forward call."""
    e, h, n, length, source = 4, 2, 2, 3, 5
    lead = (n,) if batched else ()
    r = np.random.default_rng(len(str((batched, separate, mask, extra))))

    def arr(*shape):
        return r.standard_normal(shape).astype(np.float32)
    arrays = dict(query=arr(length, *lead, e), key=arr(source, *lead, e),
                  value=arr(source, *lead, e), in_proj_bias=arr(3 * e),
                  out_proj_weight=arr(e, e), out_proj_bias=arr(e))
    if separate:
        arrays.update(q_proj_weight=arr(e, e), k_proj_weight=arr(e, e), v_proj_weight=arr(e, e))
    else:
        arrays["in_proj_weight"] = arr(3 * e, e)
    if extra.get("bias_kv"):
        arrays.update(bias_k=arr(1, 1, e), bias_v=arr(1, 1, e))
    masks = {}
    if mask == "2d":
        masks["attn_mask"] = arr(length, source)
    elif mask == "3d":
        masks["attn_mask"] = arr((n if batched else 1) * h, length, source)
    elif mask == "bool":
        masks["attn_mask"] = r.random((length, source)) < 0.3
    if extra.get("padding"):        # of the attn_mask's kind (torch warns where they differ)
        pad = np.zeros(lead + (source,), bool)
        pad[..., -1] = True
        masks["key_padding_mask"] = pad if mask in (None, "bool") else np.where(
            pad, -np.inf, 0).astype(np.float32)
    flags = dict(embed_dim_to_check=e, num_heads=h, add_zero_attn=extra.get("zero", False),
                 dropout_p=0.0, use_separate_proj_weight=separate,
                 need_weights=extra.get("need_weights", True),
                 average_attn_weights=extra.get("average", True))
    return arrays, masks, flags


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batched,separate,mask,extra", [
    (True, False, None, {}),
    (False, False, "2d", {}),
    (True, True, "3d", {"average": False}),
    (True, False, "bool", {"padding": True}),
    (False, True, None, {"bias_kv": True, "zero": True}),
    (True, False, "2d", {"bias_kv": True, "padding": True, "zero": True}),
    (True, False, "2d", {"need_weights": False}),
    (False, False, "bool", {"need_weights": False, "padding": True}),
], ids=str)
def test_multi_head_attention_forward_values_and_gradients(device, batched, separate, mask,
                                                            extra):
    arrays, masks, flags = _mha_case(batched, separate, mask, extra)
    ts = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    es = {k: ember.tensor(v, device=device, requires_grad=True) for k, v in arrays.items()}
    tm = {k: torch.tensor(v) for k, v in masks.items()}
    em = {k: ember.tensor(v, device=device) for k, v in masks.items()}

    def call(F, t, m):
        return F.multi_head_attention_forward(
            t["query"], t["key"], t["value"], flags["embed_dim_to_check"], flags["num_heads"],
            t.get("in_proj_weight"), t["in_proj_bias"], t.get("bias_k"), t.get("bias_v"),
            flags["add_zero_attn"], flags["dropout_p"], t["out_proj_weight"],
            t["out_proj_bias"], training=True, need_weights=flags["need_weights"],
            use_separate_proj_weight=flags["use_separate_proj_weight"],
            q_proj_weight=t.get("q_proj_weight"), k_proj_weight=t.get("k_proj_weight"),
            v_proj_weight=t.get("v_proj_weight"),
            average_attn_weights=flags["average_attn_weights"], **m)
    (to, tw), (eo, ew) = call(torch.nn.functional, ts, tm), call(ember.nn.functional, es, em)
    _close(to, eo, 1e-4)
    assert (tw is None) == (ew is None)
    if tw is not None:
        _close(tw, ew, 1e-4)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    eo.backward(ember.tensor(up, device=device))
    for k in ts:
        _close(ts[k].grad, es[k].grad, 1e-3)


def test_multi_head_attention_forward_errors_where_torch_raises():
    arrays, masks, flags = _mha_case(True, False, None, {})
    a = {k: ember.tensor(v) for k, v in arrays.items()}
    F = ember.nn.functional
    args = (a["in_proj_weight"], a["in_proj_bias"], None, None, False, 0.0,
            a["out_proj_weight"], a["out_proj_bias"])
    with pytest.raises(ember.EmberError, match="embedding dim"):
        F.multi_head_attention_forward(a["query"], a["key"], a["value"], 8, 2, *args)
    with pytest.raises(ember.EmberError, match="is_causal"):
        F.multi_head_attention_forward(a["query"], a["key"], a["value"], 4, 2, *args,
                                       is_causal=True)
    with pytest.raises(ember.EmberError, match="2-D attn_mask"):
        F.multi_head_attention_forward(a["query"], a["key"], a["value"], 4, 2, *args,
                                       attn_mask=ember.zeros(3, 4))


def test_multi_head_attention_forward_warns_of_mixed_mask_dtypes():
    arrays, masks, flags = _mha_case(True, False, "2d", {})
    a = {k: ember.tensor(v) for k, v in arrays.items()}
    with pytest.warns(ember.errors.EmberWarning, match="different dtypes"):
        ember.nn.functional.multi_head_attention_forward(
            a["query"], a["key"], a["value"], 4, 2, a["in_proj_weight"], a["in_proj_bias"],
            None, None, False, 0.0, a["out_proj_weight"], a["out_proj_bias"],
            attn_mask=ember.tensor(masks["attn_mask"]),
            key_padding_mask=ember.zeros(2, 5, dtype=ember.bool))


def _ctc_case(seed):
    r = np.random.default_rng(seed)
    steps, n, classes = 8, 3, 5
    lp = torch.tensor(r.standard_normal((steps, n, classes))).log_softmax(2).float().numpy()
    targets = r.integers(1, classes, (n, 4))
    targets[0, 1] = targets[0, 0]          # a repeated label needs a blank between
    return lp, targets


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_ctc_loss_reductions_and_gradients(device, reduction, layout):
    lp, targets = _ctc_case(7)
    target_lengths, input_lengths = [4, 2, 0], [8, 6, 5]
    if layout == "concatenated":
        targets = np.concatenate([targets[i, :t] for i, t in enumerate(target_lengths)])
    tl, el = torch.tensor(lp, requires_grad=True), ember.tensor(lp, device=device,
                                                                requires_grad=True)
    t = torch.nn.functional.ctc_loss(tl, torch.tensor(targets), torch.tensor(input_lengths),
                                     torch.tensor(target_lengths), reduction=reduction)
    e = ember.nn.functional.ctc_loss(el, ember.tensor(targets, device=device), input_lengths,
                                     target_lengths, reduction=reduction)
    _close(t, e, 1e-5)
    up = RNG.standard_normal(tuple(t.shape)).astype(np.float32)
    t.backward(torch.tensor(up))
    e.backward(ember.tensor(up, device=device))
    _close(tl.grad, el.grad, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_ctc_loss_zero_infinity_unbatched_and_module(device):
    lp, targets = _ctc_case(8)
    lengths = dict(input_lengths=(8, 2, 5), target_lengths=(4, 3, 1))  # entry 1 cannot align
    for zero in (False, True):
        t = torch.nn.CTCLoss(reduction="none", zero_infinity=zero)(
            torch.tensor(lp), torch.tensor(targets), *lengths.values())
        e = ember.nn.CTCLoss(reduction="none", zero_infinity=zero)(
            ember.tensor(lp, device=device), ember.tensor(targets, device=device),
            *lengths.values())
        _close(t, e)
    el = ember.tensor(lp, device=device, requires_grad=True)
    ember.nn.functional.ctc_loss(el, ember.tensor(targets, device=device), zero_infinity=True,
                                 **lengths).sum().backward()
    assert float(el.grad[:, 1].abs().sum()) == 0.0       # the infinite loss's gradient
    t = torch.nn.functional.ctc_loss(torch.tensor(lp[:, 0]), torch.tensor(targets[0]),
                                     torch.tensor(8), torch.tensor(4), reduction="none")
    e = ember.nn.functional.ctc_loss(ember.tensor(lp[:, 0], device=device),
                                     ember.tensor(targets[0], device=device), 8, 4,
                                     reduction="none")
    _close(t, e)


@pytest.mark.parametrize("kw,match", [
    (dict(blank=5), "blank"),
    (dict(input_lengths=(9, 8, 8)), "input_lengths"),
    (dict(target_lengths=(5, 1, 1)), "targets"),
    (dict(reduction="max"), "reduction"),
])
def test_ctc_loss_errors_where_torch_raises(kw, match):
    lp, targets = _ctc_case(9)
    args = {"input_lengths": (8, 8, 8), "target_lengths": (4, 1, 1), **kw}
    with pytest.raises(RuntimeError if "reduction" not in kw else ValueError):
        torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor(targets), **args)
    with pytest.raises(ember.EmberError, match=match):
        ember.nn.functional.ctc_loss(ember.tensor(lp), ember.tensor(targets), **args)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_static_constant_pad_nd_empty_strided(device):
    a = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    for size in (0, 2, 5):
        t = torch.nonzero_static(torch.tensor(a), size=size, fill_value=-7)
        e = ember.nonzero_static(ember.tensor(a, device=device), size=size, fill_value=-7)
        np.testing.assert_array_equal(e.cpu().numpy(), t.numpy())
    t = torch.constant_pad_nd(torch.tensor(a, requires_grad=True), (1, -1, 2, 0), 2.5)
    e = ember.constant_pad_nd(ember.tensor(a, device=device), (1, -1, 2, 0), 2.5)
    _close(t, e)
    e = ember.empty_strided((2, 3), (1, 2), device=device, dtype=ember.float64)
    assert tuple(e.shape) == (2, 3) and e.dtype == ember.float64
    assert tuple(e.new_empty_strided((4,), (1,)).shape) == (4,)
    with pytest.raises(ember.EmberError, match="one stride per dim"):
        ember.empty_strided((2, 3), (1,))


@pytest.mark.parametrize("device", DEVICES)
def test_empty_permuted_lays_dims_out_as_torch(device):
    """torch.empty_permuted: the logical shape, torch's strides (the physical order named by
    physical_layout), a leaf that may require grad; torch's three refusals."""
    for size, layout in (((2, 3, 4, 5), (0, 2, 3, 1)), ((1, 3, 5), (2, 0, 1)), ((), ()),
                         ((4, 2), (1, 0))):
        t = torch.empty_permuted(size, layout)
        e = ember.empty_permuted(size, layout, device=device, dtype=ember.float64,
                                 requires_grad=True)
        assert tuple(e.shape) == tuple(t.shape) and e.dtype == ember.float64
        assert e.stride() == t.stride() and e.is_leaf and e.requires_grad
    for size, layout, match in (((2,), (0, 1), "Number of dimensions"),
                                ((2,), (3,), "out of range"), ((2, 3), (-1, 0), "out of range"),
                                ((2, 3), (0, 0), "Duplicate")):
        with pytest.raises(ember.EmberError, match=match):
            ember.empty_permuted(size, layout, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_inplace_and_integers(device, reduce, include_self):
    a = RNG.integers(-5, 6, (4, 3))
    src = RNG.integers(-5, 6, (4, 5))
    index = np.array([0, 2, 0, 1, 0])
    with _torch_warns_once():       # torch's "index_reduce() is in beta"
        t = torch.tensor(a).index_reduce_(1, torch.tensor(index), torch.tensor(src), reduce,
                                          include_self=include_self)
    e = ember.tensor(a, device=device)
    out = e.index_reduce_(1, ember.tensor(index, device=device),
                          ember.tensor(src, device=device), reduce, include_self=include_self)
    assert out is e
    np.testing.assert_array_equal(e.cpu().numpy(), t.numpy())
    with pytest.raises(ember.EmberError, match="reduce"):
        e.index_reduce(1, ember.tensor(index, device=device), ember.tensor(src, device=device),
                       "sum")


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_int_input_coordinates_and_gradients(device):
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    x = np.cumsum(RNG.random(5) + 0.5).astype(np.float32)
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, device=device,
                                                                requires_grad=True)
    for order in (1, 2):
        t = torch.gradient(ta, spacing=(torch.tensor(x),), dim=1, edge_order=order)
        e = ember.gradient(ea, spacing=(ember.tensor(x, device=device),), dim=1,
                           edge_order=order)
        _close(t[0], e[0], 1e-4)
        t[0].sum().backward()
        e[0].sum().backward()
        _close(ta.grad, ea.grad, 1e-4)
    t = torch.gradient(torch.tensor([1, 2, 4, 7]), spacing=2)
    e = ember.gradient(ember.tensor([1, 2, 4, 7], device=device), spacing=2)
    assert e[0].dtype == ember.float32
    _close(t[0], e[0])
    with pytest.raises(ember.EmberError, match="spacing"):
        ember.gradient(ember.tensor(a, device=device), spacing=[0.1], dim=[1, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_histogram_and_histogramdd_options(device):
    a = np.array([0.0, 1.0, 2.0, 3.0, 3.0, np.nan, 2.5], np.float32)
    w = RNG.random(7).astype(np.float32)
    for kw in (dict(bins=3), dict(bins=3, range=(1.0, 2.0)), dict(bins=4, density=True)):
        t = torch.histogram(torch.tensor(a[:5]), **kw)
        e = ember.histogram(ember.tensor(a[:5], device=device), **kw)
        _close(t.hist, e.hist)
        _close(t.bin_edges, e.bin_edges)
    edges = np.array([0.0, 1.0, 3.0], np.float32)
    t = torch.histogram(torch.tensor(a), torch.tensor(edges), weight=torch.tensor(w),
                        density=True)
    e = ember.tensor(a, device=device).histogram(ember.tensor(edges, device=device),
                                                 weight=ember.tensor(w, device=device),
                                                 density=True)
    _close(t.hist, e.hist)
    pts = RNG.standard_normal((20, 2)).astype(np.float32)
    t = torch.histogramdd(torch.tensor(pts), [3, 4], range=[-1.0, 1.0, -2.0, 2.0])
    e = ember.histogramdd(ember.tensor(pts, device=device), [3, 4],
                          range=[-1.0, 1.0, -2.0, 2.0])
    _close(t.hist, e.hist)
    for te, ee in zip(t.bin_edges, e.bin_edges):
        _close(te, ee)
    with pytest.raises(ember.EmberError, match="floating"):
        ember.histogram(ember.tensor([1, 2], device=device), 3)


@pytest.mark.parametrize("device", DEVICES)
def test_masked_reductions_with_fully_masked_rows(device):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    m = np.array([[True, False, True, True], [False] * 4, [True] * 4])
    ta, tm = torch.tensor(a, requires_grad=True), torch.tensor(m)
    ea, em = ember.tensor(a, device=device, requires_grad=True), ember.tensor(m, device=device)
    cases = [("var", dict(dim=1, correction=0)), ("std", dict(dim=1)),
             ("median", dict(dim=1)), ("norm", dict(ord=-math.inf, dim=1)),
             ("norm", dict(ord=1.5, dim=1, keepdim=True)), ("normalize", dict(ord=2, dim=1))]
    for name, kw in cases:
        with _torch_warns_once():    # torch.masked's prototype warning
            t = getattr(torch.masked, name)(ta, mask=tm, **kw)
        e = getattr(ember.masked, name)(ea, mask=em, **kw)
        np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=name)
    with _torch_warns_once():
        t = torch.masked.logaddexp(ta, ta * 2, input_mask=tm, other_mask=~tm)
    e = ember.masked.logaddexp(ea, ea * 2, input_mask=em, other_mask=~em)
    _close(t, e)
    t.sum().backward()
    e.sum().backward()
    _close(ta.grad, ea.grad)
    with pytest.raises(ember.EmberError, match="fully masked"):
        ember.masked.median(ember.tensor([[1, 2], [3, 4]], device=device),
                            mask=ember.tensor([[True, True], [False, False]], device=device))
