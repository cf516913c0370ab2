"""The backend contract: one dispatch tail, declared kernels, per-thread modes, views.

Every kernel call passes one tail (observers see softmax, in-place ops, setitem and fused
gradient kernels); every kernel name is declared with a signature that the shipped kernel
tables fit; grad mode, the fallback policy and the device context are per thread; and on a
backend whose movement kernels return copies (a NumPy copier, immutable arrays boxed for
`assign`), no write through a view is lost and no copy aliases its input.
"""
from __future__ import annotations

import inspect
import json
import re
import threading

import ember
import numpy as np
import pytest
from ember import dispatch, plugins
from ember.backends import array_api
from ember.ops import KERNELS, OPS, REGISTRY
from noview_backends import CopyingBackend, FrozenBackend, NumpyBackend, installed


@pytest.fixture
def events():
    ember.ones(1) + 1        # load the CPU plugin first: loading resets the observers
    seen = []
    dispatch.set_observers([lambda name, dev, out: seen.append(name)])
    try:
        yield seen
    finally:
        dispatch.set_observers([])


def test_observers_see_every_kernel_call(events):
    x = ember.randn(4, 5)
    ember.softmax(x, dim=1)
    assert events == ["softmax"]
    y = ember.zeros(4, 5)
    events.clear()
    y.add_(x)
    y += 1.0
    y.mul_(2.0)
    assert events == ["add_", "add_", "mul_"]
    events.clear()
    y[0] = 1.0
    y[1:3, ::2] = x[1:3, ::2]
    assert events.count("assign") == 2 and "slice" in events
    events.clear()
    w = ember.randn(3, 4, requires_grad=True)
    (w.tanh().sigmoid().relu() * 2).sum().backward()
    for name in ("tanh_backward", "sigmoid_backward", "relu_backward"):
        assert name in events, (name, events)
    events.clear()
    img = ember.randn(1, 2, 4, 4, requires_grad=True)
    ember.nn.functional.max_pool2d(img, 2).sum().backward()
    assert "max_pool2d" in events and "max_pool2d_backward" in events


def test_casts_and_creation_pass_the_tail(events):
    ember.ones(3, dtype=ember.int32) + ember.ones(3)         # int32 promoted to float32
    assert events == ["full", "full", "cast", "add"]
    events.clear()
    ember.arange(5)
    assert events == ["arange"]


class _RaisingBackend(NumpyBackend):
    """CPU kernels, except 'exp' raises TypeError and 'sqrt' ValueError."""

    name = "raiser"
    views = "strided"

    def __init__(self):
        super().__init__()

        def bad_type(x):
            raise TypeError("no such loop")

        def bad_value(x):
            raise ValueError("bad value")
        self.kernels["exp"] = bad_type
        self.kernels["sqrt"] = bad_value


@pytest.fixture
def raiser():
    plugins._backends["raiser"] = _RaisingBackend()
    try:
        yield "raiser:0"
    finally:
        for i in (None, 0):
            ember.Device("raiser", i)._unbind()
        plugins._backends.pop("raiser", None)


def test_kernel_errors_are_one_catchable_family(raiser):
    x = ember.ones(3, device=raiser)
    for call in (lambda: x.exp(),                      # the unary fast path
                 lambda: ember.ops.UNARY["exp"](x.to(ember.float64)),
                 lambda: x.to(ember.int64).exp()):     # run(): promoted to float first
        with pytest.raises(ember.KernelError) as info:
            call()
        assert isinstance(info.value, TypeError) and "exp failed on raiser:0" in str(info.value)
    with pytest.raises(ember.KernelError) as info:
        x.sqrt()
    assert isinstance(info.value, ValueError)
    # a kernel failing on inputs the op refuses reports the op's own check
    with pytest.raises(ember.ShapeError, match="do not broadcast"):
        ember.ones(3) + ember.ones(4)


def test_declarations_are_complete_and_printed(capsys):
    from ember.tools import cli
    assert cli.main(["ops", "--json", "--device", "cpu"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = {d["name"] for d in data["declarations"]}
    assert names == set(REGISTRY)
    for d in data["declarations"]:
        assert d["doc"] and d["signature"]["text"] is not None, d["name"]
        assert d["required"] == (d["name"] in OPS)
        if d["kind"] in ("gradient", "inplace"):
            assert d["serves"] in REGISTRY, d["name"]
        if d["kind"] in ("composite", "gradient"):
            assert d["has_decomposition"], d["name"]
    assert {"linear", "relu", "softmax", "max_pool2d", "tanh_backward", "sigmoid_backward",
            "relu_backward", "max_pool2d_backward", "add_", "sub_", "mul_", "div_"} <= set(KERNELS)
    assert set(data["backends"]["cpu"]["kernels"]) <= names


def _placeholders(op, optional: bool):
    sig = op.sig
    args = [object() for i in sig["inputs"] if optional or not i["optional"]]
    if sig["variadic"]:
        args += [object(), object()]
    return args, {name: object() for name in sig["attrs"]}


def _tables():
    from ember.backends.cpu import CPUBackend
    from ember.backends.opencl import OpenCLBackend
    tables = {"cpu": CPUBackend().kernels, "opencl": OpenCLBackend().kernels,
              "array_api(numpy)": {**array_api.kernels(np), **array_api.numpy_extras(np)}}
    return tables


@pytest.mark.parametrize("backend", sorted(_tables()))
def test_shipped_kernels_fit_their_declarations(backend):
    """Every kernel name is declared, every primitive is present, and each kernel accepts
    its declared inputs and attributes (by inspect.signature, or a ufunc's nin)."""
    table = _tables()[backend]
    assert set(table) <= set(REGISTRY), sorted(set(table) - set(REGISTRY))
    assert set(OPS) <= set(table), sorted(set(OPS) - set(table))
    for name, kernel in table.items():
        op = REGISTRY[name]
        nin = getattr(kernel, "nin", None)
        if nin is not None:                             # a NumPy ufunc
            assert nin == len(op.sig["inputs"]) and not op.sig["attrs"], name
            continue
        try:
            sig = inspect.signature(kernel)
        except (TypeError, ValueError):
            continue                                    # a builtin without a signature
        for optional in (False, True):
            args, attrs = _placeholders(op, optional)
            try:
                sig.bind(*args, **attrs)
            except TypeError as exc:
                raise AssertionError(f"{backend} kernel {name!r} does not fit its declaration "
                                     f"({op.sig['text']}): {exc}") from None


def test_public_namespace_is_curated():
    for leak in ("annotations", "OPS", "Op", "UNARY", "BINARY", "getitem", "setitem",
                 "bernoulli_mask", "from_host", "take_along"):
        assert leak not in ember.__all__, leak
        assert not hasattr(ember, leak), leak
    assert all(hasattr(ember, name) for name in ember.__all__)
    assert {"exp", "add", "eq", "where", "matmul", "Tensor", "no_grad", "KernelError"} <= set(
        ember.__all__)


# --- per-thread modes ----------------------------------------------------------------

def _in_thread(fn):
    out, errors = [], []

    def body():
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001  (reported in the main thread)
            errors.append(exc)
    t = threading.Thread(target=body)
    return t, out, errors


def test_no_grad_in_one_thread_leaves_the_other_recording():
    inside, release = threading.Event(), threading.Event()

    def other():
        with ember.no_grad():
            inside.set()
            release.wait(10)
            return ember.is_grad_enabled(), (ember.ones(2, requires_grad=True) * 2).requires_grad
    t, out, errors = _in_thread(other)
    t.start()
    assert inside.wait(10)
    try:
        assert ember.is_grad_enabled()                      # the main thread still records
        y = ember.ones(2, requires_grad=True) * 2
        assert y.requires_grad and y.grad_fn is not None
    finally:
        release.set()
        t.join(10)
    assert not errors and out == [(False, False)]
    assert ember.is_grad_enabled()


def test_backward_in_one_thread_does_not_switch_grad_off_in_another():
    started, release = threading.Event(), threading.Event()
    w = ember.ones(3, requires_grad=True)

    def hook(g):
        started.set()             # inside the engine: grad mode is off in this thread
        release.wait(10)
        return g
    w.register_hook(hook)

    def other():
        (w * 3).sum().backward()
        return w.grad.tolist()
    t, out, errors = _in_thread(other)
    t.start()
    assert started.wait(10)
    try:
        assert ember.is_grad_enabled()
        assert (ember.ones(2, requires_grad=True) + 1).grad_fn is not None
    finally:
        release.set()
        t.join(10)
    assert not errors and out == [[3.0, 3.0, 3.0]]


def test_device_and_fallback_contexts_are_per_thread(aux):
    inside, release = threading.Event(), threading.Event()

    def other():
        with ember.device("aux:1"), ember.fallback("allow"):
            inside.set()
            release.wait(10)
            return str(ember.zeros(1).device), dispatch.get_fallback()
    t, out, errors = _in_thread(other)
    t.start()
    assert inside.wait(10)
    try:
        assert str(ember.zeros(1).device) == "cpu"
        assert dispatch.get_fallback() == "error"
        with pytest.raises(ember.KernelNotFoundError):     # 'erf' is missing on aux
            ember.ones(2, device="aux:0").erf()
    finally:
        release.set()
        t.join(10)
    assert not errors and out == [("aux:1", "allow")]


def test_two_threads_training_at_once():
    """Two models trained in two threads at once give what each gives alone."""
    def train(seed):
        rng = np.random.default_rng(seed)
        x = ember.tensor(rng.standard_normal((16, 4)), dtype=ember.float32)
        y = ember.tensor(rng.standard_normal((16, 1)), dtype=ember.float32)
        w = ember.tensor(rng.standard_normal((4, 1)) * 0.1, dtype=ember.float32,
                         requires_grad=True)
        losses = []
        for _ in range(60):
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            with ember.no_grad():
                w -= w.grad * 0.1
                w.grad = None
            losses.append(loss.item())
        return losses
    alone = [train(1), train(2)]
    threads = [_in_thread(lambda s=s: train(s)) for s in (1, 2)]
    for t, _, _ in threads:
        t.start()
    for t, _, _ in threads:
        t.join(60)
    for (_, out, errors), want in zip(threads, alone):
        assert not errors and out == [want]


# --- views on a backend whose movement kernels copy ----------------------------------------

@pytest.fixture(params=["cpu", "copier", "frozen"])
def dev(request):
    """The CPU, a NumPy copier and a backend over immutable arrays (views = "none")."""
    if request.param == "cpu":
        yield "cpu"
        return
    with installed({"copier": CopyingBackend, "frozen": FrozenBackend}[request.param]()) as d:
        yield d


def _same(dev, fn):
    """fn(make) on dev and on NumPy arrays give the same final arrays."""
    got = fn(lambda a: ember.tensor(a, device=dev), ember)
    want = fn(lambda a: np.array(a, copy=True), None)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy() if isinstance(g, ember.Tensor) else g, w)


def test_writes_through_views_are_never_lost(dev):
    base = np.arange(12.0).reshape(3, 4)

    def setitem_negative_step(make, e):
        x = make(base)
        y = x[:, ::-1]
        y[0] = -1.0
        return x, y

    def inplace_on_reversed_view(make, e):
        x = make(base)
        v = x[::-1]
        v += 1
        return x, v

    def inplace_through_view_of_view(make, e):
        x = make(base)
        v = x[1:, ::2]
        w = v[:, 1]
        w *= 10
        return x, v, w

    def base_write_reaches_views(make, e):
        x = make(base)
        v = x[::2, 1:3]
        t = x.T
        x[0, 1] = 100.0
        x += 1
        return x, v, t

    def permuted_and_reshaped(make, e):
        x = make(base)
        t = x.T
        t[0] = 7.0                       # column 0 of x
        r = x.reshape(12)
        r[5] = -5.0
        return x, t, r

    for case in (setitem_negative_step, inplace_on_reversed_view, inplace_through_view_of_view,
                 base_write_reaches_views, permuted_and_reshaped):
        _same(dev, case)


def test_results_that_must_not_alias(dev):
    x = ember.tensor(np.arange(6.0), device=dev)
    for make in (lambda t: t.flip(0), lambda t: t.clone(), lambda t: t[::2].contiguous(),
                 lambda t: t.reshape(2, 3).T.reshape(6),       # a reshape that copies
                 lambda t: t[:3].reshape(1, 3).expand(2, 3).reshape(6)):
        out = make(x)
        out += 1
        np.testing.assert_array_equal(x.numpy(), np.arange(6.0))
    s = ember.tensor(3.0, device=dev)          # a reduction over no axis is still a copy
    r = s.sum()
    r += 1
    assert s.item() == 3.0 and r.item() == 4.0


def test_writing_into_an_expanded_view_is_refused(dev):
    """Several elements share one memory location: an error on a strided backend (the
    kernel) and on a copying one (the write-back), never a silent partial write."""
    x = ember.ones(1, 3, device=dev)
    e = x.expand(4, 3)
    with pytest.raises(ember.EmberError, match="expanded view"):
        e += 1
    assert x.numpy().tolist() == [[1.0, 1.0, 1.0]]
    e[2] = ember.tensor([1.0, 2.0, 3.0], device=dev)     # one row: no overlap, x written
    e[1:2, ::2] *= 10
    assert x.numpy().tolist() == [[10.0, 2.0, 30.0]]


# --- EMBER_CHECK_KERNELS ------------------------------------------------------------------

@pytest.fixture
def checking():
    dispatch.check_kernels(True)
    try:
        yield
    finally:
        dispatch.check_kernels(False)


def test_checked_kernels_pass_on_the_cpu(checking):
    x = ember.randn(3, 4, requires_grad=True)
    y = (x.exp() * 2 + x.T.T).sum(dim=1, keepdim=True)
    z = ember.softmax(x, dim=0) @ ember.randn(4, 2)
    (y.sum() + z.sum() + ember.tensor(2.0).sum()).backward()
    x[1:, ::-1].argmax(dim=1)
    ember.cat([x, x], 0).flip(0)[::2].contiguous()
    ember.ones(2, 3, dtype=ember.int32) // 2


def test_checked_kernels_name_the_op_and_the_backend(raiser, checking):
    backend = plugins._backends["raiser"]
    backend.kernels["neg"] = lambda x: (-x).astype(np.float64)        # the wrong dtype
    backend.kernels["sin"] = lambda x: np.sin(x)[:1]                   # the wrong shape
    backend.kernels["cos"] = lambda x: x                               # an input's memory
    backend.kernels["abs"] = lambda x: float(np.abs(x).sum())          # not an array
    x = ember.ones(3, device=raiser)
    for call, what in ((lambda: -x, "float64 data"), (lambda: x.sin(), "shape (1,)"),
                       (lambda: x.cos(), "input's memory"), (lambda: x.abs(), "float")):
        with pytest.raises(ember.KernelError,
                           match=r"on raiser:0 \(backend 'raiser'\).*" + re.escape(what)):
            call()
