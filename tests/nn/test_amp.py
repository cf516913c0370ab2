"""ember.amp: autocast regions and GradScaler, against torch.amp where torch runs them."""
from __future__ import annotations

import re
import threading
import zlib

import ember
import ember.nn as nn
import numpy as np
import pytest
from ember import amp, plugins
from nn_helpers import copy_weights, device_params, to_numpy


def test_autocast_regions_nest_and_decorate(torch):
    assert ember.autocast is amp.autocast
    assert not torch.is_autocast_enabled("cpu") and not amp.is_autocast_enabled("cpu")
    seen = []

    def state(lib):
        if lib is torch:
            return torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
        return amp.is_autocast_enabled("cpu"), amp.get_autocast_dtype("cpu")

    for lib in (torch, ember):
        log = []
        with lib.autocast("cpu"):
            log.append(state(lib))
            with lib.autocast("cpu", enabled=False):
                log.append(state(lib))
                with lib.autocast(device_type="cpu", dtype=lib.float16):
                    log.append(state(lib))
                log.append(state(lib))
            log.append(state(lib))
        log.append(state(lib))

        @lib.autocast("cpu", dtype=lib.bfloat16)
        def inside(lib=lib):
            return state(lib)
        log.append(inside())
        log.append(state(lib))
        seen.append([(on, str(dtype).replace("torch.", "").replace("ember.", ""))
                     for on, dtype in log])
    assert seen[0] == seen[1]


def test_autocast_is_per_thread_and_checks_its_arguments():
    x = ember.randn(3, 4)
    layer = nn.Linear(4, 2)
    with ember.autocast("cpu"):
        assert amp.is_autocast_enabled("cpu") and not amp.is_autocast_enabled("cuda")
        assert amp.get_autocast_dtype("cpu") is ember.bfloat16
        assert layer(x).dtype is ember.bfloat16
        other = []
        thread = threading.Thread(target=lambda: other.append(
            (amp.is_autocast_enabled("cpu"), layer(x).dtype)))
        thread.start()
        thread.join()
        assert other == [(False, ember.float32)]          # another thread: no region
    with ember.autocast("cpu:0", dtype=ember.float16):
        assert amp.get_autocast_dtype("cpu") is ember.float16
    assert not amp.is_autocast_enabled("cpu") and layer(x).dtype is ember.float32
    # torch.cuda.amp.autocast is deprecated (as torch's), and with no CUDA device it turns
    # itself off with torch's warning
    with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"), \
            pytest.warns(ember.errors.EmberWarning, match="Disabling autocast"), \
            ember.cuda.amp.autocast(dtype=ember.bfloat16):
        assert not amp.is_autocast_enabled("cuda")
    with pytest.raises(ember.EmberError, match="unsupported device_type 'tpu'"):
        ember.autocast("tpu")
    with pytest.raises(ember.EmberError, match="string"):
        ember.autocast(ember.device("cpu"))
    with pytest.warns(ember.errors.EmberWarning, match="Disabling autocast"):
        region = ember.autocast("cpu", dtype=ember.float64)      # torch: bf16/fp16 only
    with region:
        assert not amp.is_autocast_enabled("cpu")
    if not ember.cuda.is_available():                    # torch disables it too
        with pytest.warns(ember.errors.EmberWarning, match="no cuda device"):
            region = ember.autocast("cuda")
        with region:
            assert not amp.is_autocast_enabled("cuda")


# --- autocast's casting policy against torch.autocast on the CPU ----------------------------

def _cases():
    """(name, fn(lib, F, t)): t(*shape) makes the next input (float32 values, the same in
    both libraries, in the dtype the test asks for)."""
    eye = lambda L: L.eye(3)  # noqa: E731
    return {
        "matmul": lambda L, F, t: L.matmul(t(3, 4), t(4, 5)),
        "Tensor.@": lambda L, F, t: t(2, 3, 4) @ t(4, 5),
        "mm": lambda L, F, t: L.mm(t(3, 4), t(4, 5)),
        "bmm": lambda L, F, t: L.bmm(t(2, 3, 4), t(2, 4, 5)),
        "addmm": lambda L, F, t: L.addmm(t(3, 5), t(3, 4), t(4, 5)),
        "baddbmm": lambda L, F, t: L.baddbmm(t(2, 3, 5), t(2, 3, 4), t(2, 4, 5)),
        "addbmm": lambda L, F, t: L.addbmm(t(3, 5), t(2, 3, 4), t(2, 4, 5)),
        "addmv": lambda L, F, t: L.addmv(t(3), t(3, 4), t(4)),
        "mv": lambda L, F, t: L.mv(t(3, 4), t(4)),
        "dot": lambda L, F, t: L.dot(t(4), t(4)),
        "inner": lambda L, F, t: L.inner(t(3, 4), t(5, 4)),
        "outer": lambda L, F, t: L.outer(t(3), t(4)),
        "einsum": lambda L, F, t: L.einsum("ij,jk->ik", t(3, 4), t(4, 5)),
        "tensordot": lambda L, F, t: L.tensordot(t(3, 4), t(4, 5), dims=1),
        "multi_dot": lambda L, F, t: L.linalg.multi_dot([t(3, 3), t(3, 3), t(3, 3)]),
        "linear": lambda L, F, t: F.linear(t(3, 4), t(5, 4), t(5)),
        "bilinear": lambda L, F, t: F.bilinear(t(3, 4), t(3, 2), t(5, 4, 2), t(5)),
        "conv1d": lambda L, F, t: F.conv1d(t(1, 2, 8), t(3, 2, 3), t(3)),
        "conv2d": lambda L, F, t: F.conv2d(t(1, 2, 8, 8), t(3, 2, 3, 3), t(3), padding=1),
        "conv_transpose2d": lambda L, F, t: F.conv_transpose2d(t(1, 2, 5, 5), t(2, 3, 3, 3),
                                                               t(3), stride=2),
        "prelu": lambda L, F, t: F.prelu(t(2, 3), t(3)),
        "sdpa": lambda L, F, t: F.scaled_dot_product_attention(t(1, 2, 4, 8), t(1, 2, 4, 8),
                                                               t(1, 2, 4, 8)),
        "mha": lambda L, F, t: L.nn.MultiheadAttention(8, 2)(t(3, 2, 8), t(3, 2, 8),
                                                             t(3, 2, 8))[0],
        "rnn": lambda L, F, t: L.nn.RNN(4, 3)(t(5, 2, 4))[0],
        "gru": lambda L, F, t: L.nn.GRU(4, 3)(t(5, 2, 4))[0],
        "rnn_cell": lambda L, F, t: L.nn.RNNCell(4, 3)(t(2, 4)),
        "lstm_cell": lambda L, F, t: L.nn.LSTMCell(4, 3)(t(2, 4))[0],
        "gru_cell": lambda L, F, t: L.nn.GRUCell(4, 3)(t(2, 4)),
        "softmax": lambda L, F, t: F.softmax(t(3, 4), -1),
        "log_softmax": lambda L, F, t: F.log_softmax(t(3, 4), -1),
        "layer_norm": lambda L, F, t: F.layer_norm(t(3, 4), (4,), t(4), t(4)),
        "group_norm": lambda L, F, t: F.group_norm(t(2, 4, 3), 2, t(4), t(4)),
        "normalize": lambda L, F, t: F.normalize(t(3, 4)),
        "gelu": lambda L, F, t: F.gelu(t(3)),
        "softplus": lambda L, F, t: F.softplus(t(3)),
        "exp": lambda L, F, t: L.exp(t(3)),
        "pow": lambda L, F, t: L.pow(t(3), 2),
        "sum": lambda L, F, t: L.sum(t(3)),
        "mean": lambda L, F, t: L.mean(t(3)),
        "var": lambda L, F, t: L.var(t(3, 4)),
        "prod": lambda L, F, t: L.prod(t(3)),
        "cumsum": lambda L, F, t: L.cumsum(t(3), 0),
        "logsumexp": lambda L, F, t: L.logsumexp(t(3), 0),
        "cdist": lambda L, F, t: L.cdist(t(3, 4), t(2, 4)),
        "dist": lambda L, F, t: L.dist(t(3), t(3)),
        "trace": lambda L, F, t: L.trace(t(3, 3)),
        "kron": lambda L, F, t: L.kron(t(2, 2), t(2, 2)),
        "cross": lambda L, F, t: L.linalg.cross(t(3), t(3)),
        "vecdot": lambda L, F, t: L.linalg.vecdot(t(3), t(3)),
        "matrix_power": lambda L, F, t: L.linalg.matrix_power(t(3, 3), 2),
        "inverse": lambda L, F, t: L.inverse(t(3, 3) + 3 * eye(L)),
        "linalg.inv": lambda L, F, t: L.linalg.inv(t(3, 3) + 3 * eye(L)),
        "linalg.solve": lambda L, F, t: L.linalg.solve(t(3, 3) + 3 * eye(L), t(3)),
        "pinverse": lambda L, F, t: L.pinverse(t(3, 3)),
        "linalg.pinv": lambda L, F, t: L.linalg.pinv(t(3, 3)),
        "svdvals": lambda L, F, t: L.linalg.svd(t(3, 3))[1],
        "qr": lambda L, F, t: L.linalg.qr(t(3, 3))[1],
        "eigvalsh": lambda L, F, t: L.linalg.eigvalsh(2 * eye(L) + 0 * t(3, 3)),
        "mse_loss": lambda L, F, t: F.mse_loss(t(3), t(3)),
        "l1_loss": lambda L, F, t: F.l1_loss(t(3), t(3)),
        "smooth_l1_loss": lambda L, F, t: F.smooth_l1_loss(t(3), t(3)),
        "huber_loss": lambda L, F, t: F.huber_loss(t(3), t(3)),
        "cross_entropy": lambda L, F, t: F.cross_entropy(t(3, 4), L.tensor([0, 1, 2])),
        "nll_loss": lambda L, F, t: F.nll_loss(t(3, 4), L.tensor([0, 1, 2])),
        "binary_cross_entropy": lambda L, F, t: F.binary_cross_entropy(L.sigmoid(t(3)),
                                                                       L.sigmoid(t(3))),
        "bce_with_logits": lambda L, F, t: F.binary_cross_entropy_with_logits(
            t(3), L.sigmoid(t(3))),
        "kl_div": lambda L, F, t: F.kl_div(t(3), t(3), reduction="batchmean"),
        "cosine_similarity": lambda L, F, t: F.cosine_similarity(t(3, 4), t(3, 4)),
        "soft_margin_loss": lambda L, F, t: F.soft_margin_loss(t(3), t(3)),
        "margin_ranking_loss": lambda L, F, t: F.margin_ranking_loss(t(3), t(3), t(3)),
        "poisson_nll_loss": lambda L, F, t: F.poisson_nll_loss(t(3), t(3)),
        "triplet_margin_loss": lambda L, F, t: F.triplet_margin_loss(t(3, 4), t(3, 4),
                                                                     t(3, 4)),
        "hinge_embedding_loss": lambda L, F, t: F.hinge_embedding_loss(t(3), t(3)),
        "multi_margin_loss": lambda L, F, t: F.multi_margin_loss(t(3, 4), L.tensor([0, 1, 2])),
        "cosine_embedding_loss": lambda L, F, t: F.cosine_embedding_loss(
            t(3, 4), t(3, 4), L.tensor([1, -1, 1])),
        "max_pool2d": lambda L, F, t: F.max_pool2d(t(1, 2, 4, 4), 2),
        "avg_pool2d": lambda L, F, t: F.avg_pool2d(t(1, 2, 4, 4), 2),
        "adaptive_avg_pool2d": lambda L, F, t: F.adaptive_avg_pool2d(t(1, 2, 5, 5), 3),
        "interpolate": lambda L, F, t: F.interpolate(t(1, 2, 4, 4), scale_factor=2,
                                                     mode="bilinear"),
        "pad_reflect": lambda L, F, t: F.pad(t(1, 2, 4), (1, 1), mode="reflect"),
        "pad_replicate": lambda L, F, t: F.pad(t(1, 2, 4), (1, 1), mode="replicate"),
        "pad_constant": lambda L, F, t: F.pad(t(1, 2, 4), (1, 1)),
        "cat": lambda L, F, t: L.cat([t(2), t(2).float()]),
        "stack_float64": lambda L, F, t: L.stack([t(2), t(2).double()]),
        "add": lambda L, F, t: t(2) + t(2).float(),
        "where": lambda L, F, t: L.where(t(3) > 0, t(3), t(3)),
        "embedding": lambda L, F, t: F.embedding(L.tensor([0, 1]), t(3, 4)),
        "matmul_float64": lambda L, F, t: L.matmul(t(3, 4).double(), t(4, 5).double()),
    }


# where ember's dtype differs from torch's, and why (each case and input kind named)
KNOWN = {
    # torch's GRU and LSTM/GRU cells on the CPU are native kernels that take their weights'
    # dtype from the input; ember's (NATIVE, autocast off inside) promote a bfloat16 input
    # with the float32 weights to float32 as any ember op does
    ("gru", "bfloat16"): "mixed-dtype recurrent layer", ("lstm_cell", "bfloat16"): "same",
    ("gru_cell", "bfloat16"): "same",
    # torch.linalg.vecdot is in torch's lower-precision list; ember's is a composite in
    # core/linalg (sum of products: no matmul for autocast to cast), whose owners decide
    ("vecdot", "float32"): "core/linalg's vecdot is sum(x * y)",
    ("vecdot", "bfloat16"): "same",
}


# layers built inside the case: their initial weights are each library's own random ones,
# so only their output dtype is compared (test_small_model_... compares values)
MODULES = {"mha", "rnn", "gru", "rnn_cell", "lstm_cell", "gru_cell"}


def _run(lib, F, fn, region_dtype, input_dtype):
    count = [0]

    def t(*shape):
        count[0] += 1
        values = np.random.default_rng(count[0]).standard_normal(shape).astype(np.float32)
        x = lib.tensor(values)
        return x if input_dtype == "float32" else x.to(getattr(lib, input_dtype))
    lib.manual_seed(0)
    with lib.autocast("cpu", dtype=getattr(lib, region_dtype)):
        return fn(lib, F, t)


def _ulps(dtype_name: str) -> float:
    return {"bfloat16": 2.0 ** -7, "float16": 2.0 ** -10}.get(dtype_name, 2.0 ** -20)


@pytest.mark.filterwarnings("ignore::UserWarning")      # torch's kl_div/MHA notes
@pytest.mark.parametrize("region", ["bfloat16", "float16"])
def test_autocast_policy_matches_torch_on_cpu(torch, region):
    """Every case's output dtype is torch.autocast's (float32 and bfloat16 inputs); the
    values agree within a few units in the last place of the lower dtype."""
    import torch.nn.functional as TF
    wrong, checked = [], 0
    for name, fn in _cases().items():
        for inputs in ("float32", "bfloat16"):
            try:
                want = _run(torch, TF, fn, region, inputs)
            except RuntimeError:
                continue          # torch has no such kernel in this dtype (bfloat16 linalg)
            got = _run(ember, ember.nn.functional, fn, region, inputs)
            t_dtype = str(want.dtype).removeprefix("torch.")
            if got.dtype.name != t_dtype:
                if (name, inputs) not in KNOWN:
                    wrong.append(f"{name} ({inputs} inputs): torch {t_dtype}, ember "
                                 f"{got.dtype.name}")
                continue
            checked += 1
            if name in MODULES:
                continue
            scale = max(1.0, float(np.abs(want.double().detach().numpy()).max()))
            tol = 8 * max(_ulps(t_dtype), _ulps(region) if t_dtype == "float32" else 0) * scale
            np.testing.assert_allclose(got.double().detach().numpy(),
                                       want.double().detach().numpy(), rtol=0, atol=tol,
                                       err_msg=f"{name} ({inputs} inputs, {region} region)")
    assert wrong == []
    assert checked > 150


def test_policy_tables_name_real_seams():
    """An op table entry is a declared op (cast where it dispatches); every other entry is
    a function that hands itself to amp_policy.call under its own name."""
    from pathlib import Path

    from ember import amp_policy
    from ember.ops._op import REGISTRY
    assert amp_policy.OPS <= set(REGISTRY)
    source = "\n".join(p.read_text() for p in Path(amp_policy.__file__).parent.rglob("*.py"))
    for name in (set(amp_policy.CPU) | set(amp_policy.GPU)) - amp_policy.OPS:
        assert re.search(rf'amp_policy\.call\(\s*"{name}"', source), name
        assert f'amp_policy.on("{name}")' in source, name


def _small_model(lib, weights):
    conv, lin = lib.nn.Conv2d(3, 4, 3), lib.nn.Linear(4 * 6 * 6, 5)
    with lib.no_grad():
        for p, w in zip((conv.weight, conv.bias, lin.weight, lin.bias), weights):
            p.copy_(lib.tensor(w))
    return conv, lin


@pytest.mark.parametrize("region", ["bfloat16", "float16"])
def test_small_model_under_autocast_matches_torch(torch, region):
    r = np.random.default_rng(zlib.crc32(b"autocast model"))
    weights = [r.standard_normal(s).astype(np.float32) * 0.2 for s in
               ((4, 3, 3, 3), (4,), (5, 144), (5,))]
    x_np = r.standard_normal((2, 3, 8, 8)).astype(np.float32)
    target = [1, 3]
    seen = []
    for lib in (torch, ember):
        conv, lin = _small_model(lib, weights)
        x = lib.tensor(x_np, requires_grad=True)
        with lib.autocast("cpu", dtype=getattr(lib, region)):
            h = conv(x)
            a = lib.relu(h)
            y = lin(a.flatten(1))
            p = lib.softmax(y, -1)
            loss = lib.nn.functional.cross_entropy(y, lib.tensor(target))
        loss.backward()
        dtypes = [str(v.dtype).split(".")[-1] for v in (h, a, y, p, loss, x.grad,
                                                         conv.weight.grad, lin.bias.grad)]
        seen.append((dtypes, [v.detach().double().numpy() for v in
                              (y, p, loss, x.grad, conv.weight.grad, lin.weight.grad)]))
    assert seen[1][0] == seen[0][0]
    assert seen[0][0] == [region] * 4 + ["float32"] * 4     # as torch's lists say
    for got, want, what in zip(seen[1][1], seen[0][1], ("y", "p", "loss", "x.grad",
                                                        "conv.weight.grad", "lin.weight.grad")):
        tol = 8 * _ulps(region) * max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=what)


def test_nested_and_disabled_regions_cast_as_torch(torch):
    r = np.random.default_rng(3)
    x_np, w_np = r.standard_normal((2, 4)).astype(np.float32), r.standard_normal((3, 4))
    seen = []
    for lib in (torch, ember):
        x, w = lib.tensor(x_np), lib.tensor(w_np.astype(np.float32))
        log = []
        with lib.autocast("cpu"):
            log.append(lib.nn.functional.linear(x, w))
            with lib.autocast("cpu", enabled=False):
                log.append(lib.nn.functional.linear(x, w))
                with lib.autocast("cpu", dtype=lib.float16):
                    log.append(lib.nn.functional.linear(x, w))
                log.append(lib.mm(x, w.T))
            log.append(lib.mm(x, w.T))

        @lib.autocast("cpu", dtype=lib.float16)
        def inside(x, w):
            return x @ w.T
        log.append(inside(x, w))
        log.append(x @ w.T)
        seen.append([str(v.dtype).split(".")[-1] for v in log])
    assert seen[1] == seen[0] == ["bfloat16", "float32", "float16", "float32", "bfloat16",
                                  "float16", "float32"]


def _casts_in(fn) -> int:
    """How many casts to bfloat16 fn runs (dispatch's hook sees every kernel call; the CPU
    backend's own bfloat16 -> float32 casts, to compute in float32, are not counted)."""
    from ember import dispatch
    count = [0]

    def hook(op, device, kernel, natives, attrs, inputs, result):
        count[0] += op.name == "cast" and attrs.get("dtype") is ember.bfloat16
    dispatch.add_hook("count-casts", hook)
    try:
        fn()
    finally:
        dispatch.remove_hook("count-casts")
    return count[0]


def test_weight_casts_are_cached_inside_a_region():
    layer = nn.Linear(4, 3)
    x = ember.randn(2, 4)

    def two_calls(**kw):
        def run():
            with ember.autocast("cpu", **kw):
                a, b = layer(x), layer(x)
                assert a.dtype is b.dtype is ember.bfloat16
        return run
    # x is cast at each call; weight and bias (float32 leaves that require grad) once
    assert _casts_in(two_calls()) == 3 + 1
    assert _casts_in(two_calls()) == 4               # the cache went with the region
    assert _casts_in(two_calls(cache_enabled=False)) == 3 + 3
    with ember.no_grad():                            # nothing recorded: nothing cached
        assert _casts_in(two_calls()) == 6

    def written_between():
        with ember.autocast("cpu"):
            layer(x)
            with ember.no_grad():
                layer.weight.mul_(1.0)               # a new version: cast again
            layer(x)
    assert _casts_in(written_between) == 3 + 2
    # both uses of the cached cast carry the gradient back to the float32 weight
    with ember.autocast("cpu"):
        loss = (layer(x).float().sum() + layer(x).float().sum())
    loss.backward()
    assert layer.weight.grad.dtype is ember.float32
    # the product ran on x cast to bfloat16: the expected sum is of those values (of x's
    # own, a column summing near zero differs by more than 2% through the cast alone)
    x16 = to_numpy(x.to(ember.bfloat16).float())
    np.testing.assert_allclose(to_numpy(layer.weight.grad),
                               2 * np.tile(x16.sum(0), (3, 1)), rtol=2e-2)


def _custom_function_log(lib, torch) -> list:
    """What custom_fwd/custom_bwd make of autocast: enabled flags and dtypes seen inside."""
    log = []

    def enabled():
        return (lib.is_autocast_enabled("cpu") if lib is torch
                else amp.is_autocast_enabled("cpu"))

    class Double(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
        def forward(ctx, a, b):
            log.append(("fwd", enabled(), str(a.dtype), str(b.dtype)))
            return (a @ b) * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            log.append(("bwd", enabled()))
            return g * 2, g * 2

    class Plain(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            log.append(("plain fwd", enabled(), str(a.dtype)))
            return a * 1

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            log.append(("plain bwd", enabled()))
            return g

    a = lib.ones(2, 2, requires_grad=True)
    b = lib.ones(2, 2, dtype=lib.bfloat16)
    with lib.autocast("cpu"):
        out = Double.apply(a, b)
        log.append(("out", str(out.dtype)))
        y = Plain.apply(a.bfloat16())
    (out.sum() + y.float().sum()).backward()
    return [tuple(str(v).split(".")[-1] for v in entry) for entry in log]


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_the_region(torch):
    want = _custom_function_log(torch, torch)
    assert _custom_function_log(ember, torch) == want
    assert ("fwd", "False", "float32", "float32") in want       # cast, autocast off inside
    assert ("plain bwd", "True") in want                         # the forward's region


def test_opencl_autocast_without_half_precision_is_disabled_as_torch_does():
    if not plugins.device_count("opencl"):
        pytest.skip("no OpenCL device")
    caps = plugins.backend_for("opencl").capabilities(0).dtypes
    if "float16" in caps:
        layer = nn.Linear(4, 3).to("opencl")
        with ember.autocast("opencl"):
            x = ember.randn(2, 4, device="opencl")
            assert layer(x).dtype is ember.float16
            assert ember.softmax(layer(x), -1).dtype is ember.float32     # CUDA's list
            with pytest.raises(ember.errors.AutocastError, match="unsafe to autocast"):
                ember.nn.functional.binary_cross_entropy(ember.sigmoid(x), ember.sigmoid(x))
    else:
        with pytest.warns(ember.errors.EmberWarning, match="does not support float16"):
            region = ember.autocast("opencl")
        layer = nn.Linear(4, 3).to("opencl")
        with region:
            assert not amp.is_autocast_enabled("opencl")
            assert layer(ember.randn(2, 4, device="opencl")).dtype is ember.float32


def _train(lib, scaler_cls, weights, data, steps, bad_steps, clip, **scaler_kwargs):
    """A Linear model trained with SGD through a GradScaler; on bad_steps the loss is
    made inf, so the step must be skipped and the scale backed off."""
    layer = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(weights[0]))
        layer.bias.copy_(lib.tensor(weights[1]))
    opt = lib.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    scaler = scaler_cls("cpu", **scaler_kwargs)
    x, y = lib.tensor(data[0]), lib.tensor(data[1])
    log = []
    for step in range(steps):
        opt.zero_grad()
        loss = ((layer(x) - y) ** 2).mean()
        if step in bad_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(layer.parameters(), 0.5)
        scaler.step(opt)
        scaler.update()
        log.append((scaler.get_scale(), to_numpy(layer.weight).copy(),
                    to_numpy(layer.bias).copy()))
    return log, scaler


# NumPy warns about the inf/NaN the skipped steps compute on purpose (PyTorch is silent)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("clip", [False, True], ids=["plain", "unscale-and-clip"])
def test_grad_scaler_matches_torch(torch, clip):
    r = np.random.default_rng(zlib.crc32(b"grad scaler"))
    weights = (r.standard_normal((2, 3)), r.standard_normal(2))
    data = (r.standard_normal((8, 3)), r.standard_normal((8, 2)))
    kw = dict(init_scale=2.0 ** 4, growth_interval=2)
    t_log, t_scaler = _train(torch, torch.amp.GradScaler, weights, data, 7, {2, 3}, clip, **kw)
    e_log, e_scaler = _train(ember, amp.GradScaler, weights, data, 7, {2, 3}, clip, **kw)
    for i, (a, b) in enumerate(zip(e_log, t_log)):
        assert a[0] == b[0], f"scale after step {i}"
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, err_msg=f"weight after step {i}")
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12, err_msg=f"bias after step {i}")
    assert e_scaler.state_dict() == t_scaler.state_dict()
    fresh = amp.GradScaler("cpu")
    fresh.load_state_dict(t_scaler.state_dict())
    assert fresh.state_dict() == e_scaler.state_dict()


def test_grad_scaler_errors_and_disabled(torch):
    layer = nn.Linear(2, 1)
    opt = ember.optim.SGD(layer.parameters(), lr=0.1)
    scaler = amp.GradScaler("cpu")
    assert scaler.scale([ember.ones(1), (ember.ones(2),)])[1][0].tolist() == [65536.0] * 2
    scaler.scale(layer(ember.ones(3, 2)).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(ember.EmberError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(ember.EmberError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(ember.EmberError, match="Closure"):
        scaler.step(opt, closure=lambda: None)
    scaler.update(2.0 ** 10)
    assert scaler.get_scale() == 1024.0
    off = amp.GradScaler("cpu", enabled=False)
    loss = layer(ember.ones(1, 2)).sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ember.EmberError, match="growth_factor"):
        amp.GradScaler("cpu", growth_factor=0.5)
    if not ember.cuda.is_available():        # both libraries disable a CUDA scaler here
        with pytest.warns(ember.errors.EmberWarning, match="Disabling"), \
                pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
            assert not ember.cuda.amp.GradScaler().is_enabled()
        if not torch.cuda.is_available():
            with pytest.warns(UserWarning):
                assert not torch.amp.GradScaler("cuda").is_enabled()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("device", device_params())
def test_grad_scaler_on_device(device):
    ember.manual_seed(5)
    cpu, dev = nn.Linear(3, 2), nn.Linear(3, 2)
    copy_weights(cpu, dev)
    dev.to(device)
    x = ember.randn(4, 3)
    results = []
    for m, where in ((cpu, "cpu"), (dev, device)):
        opt = ember.optim.SGD(m.parameters(), lr=0.1)
        scaler = amp.GradScaler(where.split(":")[0], init_scale=8.0, growth_interval=1)
        for step in range(3):
            opt.zero_grad()
            loss = m(x.to(where)).square().mean() * (float("nan") if step == 1 else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        results.append((scaler.get_scale(), to_numpy(m.weight.to("cpu"))))
    assert results[0][0] == results[1][0] == 16.0      # grew, backed off, grew
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)


def _mixed_precision_run(lib, weights, data, steps):
    """torch's recipe: forward under autocast(float16), the scaled loss backward, then
    scaler.step/update; the first scales overflow float16 gradients (inf), so those steps
    are skipped and the scale backs off."""
    model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4))
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    scaler = (lib.amp.GradScaler if lib is not ember else amp.GradScaler)(
        "cpu", init_scale=2.0 ** 20, growth_interval=3)
    x, y = lib.tensor(data[0]), lib.tensor(data[1])
    log = []
    for _ in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            out = model(x)
            loss = lib.nn.functional.mse_loss(out, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        log.append((str(out.dtype).split(".")[-1], str(loss.dtype).split(".")[-1],
                    scaler.get_scale(), float(loss.detach())))
    return log, [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_mixed_precision_training_with_grad_scaler_matches_torch(torch):
    r = np.random.default_rng(zlib.crc32(b"mixed precision"))
    weights = [r.standard_normal(s).astype(np.float32) * 0.3
               for s in ((16, 8), (16,), (4, 16), (4,))]
    data = (r.standard_normal((32, 8)).astype(np.float32),
            r.standard_normal((32, 4)).astype(np.float32))
    t_log, t_params = _mixed_precision_run(torch, weights, data, 10)
    e_log, e_params = _mixed_precision_run(ember, weights, data, 10)
    assert [s[:3] for s in e_log] == [s[:3] for s in t_log]     # dtypes, skips, scales
    assert t_log[0][2] < 2.0 ** 20                               # float16 overflowed
    np.testing.assert_allclose([s[3] for s in e_log], [s[3] for s in t_log], rtol=5e-3)
    for got, want in zip(e_params, t_params):
        np.testing.assert_allclose(got, want, rtol=0, atol=5e-3)


def test_cpu_float16_products_are_float32_products_rounded(torch):
    # float16 linear: float32 BLAS, rounded once; matmul: NumPy's float16 loops, which
    # accumulate in float32 too; both are torch's CPU float16 products up to the order
    r = np.random.default_rng(11)
    a, b, bias = (r.standard_normal(s).astype(np.float16) for s in ((33, 70), (70, 20), (20,)))
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    lin = ember.nn.functional.linear(ember.tensor(a), ember.tensor(b.T.copy()),
                                     ember.tensor(bias))
    assert lin.dtype is ember.float16
    want_lin = (a.astype(np.float32) @ b.astype(np.float32) + bias).astype(np.float16)
    np.testing.assert_array_equal(to_numpy(lin), want_lin)
    got = ember.tensor(a) @ ember.tensor(b)
    t = torch.tensor(a) @ torch.tensor(b)
    ulp = 2.0 ** -10 * np.abs(want.astype(np.float32)).max()
    for other in (want, t.numpy()):
        np.testing.assert_allclose(to_numpy(got).astype(np.float32),
                                   other.astype(np.float32), rtol=0, atol=2 * ulp)
    ones = ember.ones(1, 4096, dtype=ember.float16) @ ember.ones(4096, 1, dtype=ember.float16)
    assert ones.item() == 4096.0               # a float16 accumulator would stop at 2048


def test_a_weight_cached_in_one_dtype_is_cast_again_for_another():
    layer = nn.Linear(4, 3)
    x = ember.randn(2, 4)
    with ember.autocast("cpu"):
        assert layer(x).dtype is ember.bfloat16            # caches the bfloat16 weight
        with ember.autocast("cpu", dtype=ember.float16):
            assert layer(x).dtype is ember.float16         # not the cached bfloat16 one
        assert layer(x).dtype is ember.bfloat16
