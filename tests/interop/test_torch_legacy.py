"""The legacy PyTorch API public code still uses, against PyTorch itself: Variable (volatile=
warns, as torch), Tensor.new, torch.cuda.FloatTensor & co, set_default_tensor_type, the
deprecated spellings (clip_grad_norm, nn.init.normal, grad(only_inputs=)), resize_ and
friends, index_copy_ / put, torch.cuda.amp's classes and memory counters, and tensors made
from nested lists that hold tensors (torch's shape and dtype rules, its errors).  Values,
dtypes, gradients, warning categories and texts are compared with the same call in torch."""
from __future__ import annotations

import inspect
import warnings

import ember
import numpy as np
import pytest


def _np(t):
    return t.detach().cpu().numpy()


def _run(lib, fn):
    """fn(lib) -> ("ok", result, warnings) or ("error", exception type, warnings)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn(lib))
        except Exception as exc:  # noqa: BLE001  (compared below)
            out = ("error", exc)
    return out + ([(w.category, str(w.message).split(" (Triggered internally")[0])
                   for w in seen],)


def _same_warnings(ours, theirs):
    assert [str(m) for _, m in ours] == [str(m) for _, m in theirs]
    for (mine, _), (torch_cat, _) in zip(ours, theirs):
        assert issubclass(mine, torch_cat)


# -- torch.autograd.Variable --------------------------------------------------------------

VARIABLE = {
    "plain": lambda L, x: L.autograd.Variable(x),
    "requires_grad": lambda L, x: L.autograd.Variable(x, requires_grad=True),
    "positional": lambda L, x: L.autograd.Variable(x, True),
    "int_flag": lambda L, x: L.autograd.Variable(x, requires_grad=1),
    "volatile": lambda L, x: L.autograd.Variable(x, volatile=True),
    "volatile_false": lambda L, x: L.autograd.Variable(x, volatile=False),
    "data_keyword": lambda L, x: L.autograd.Variable(data=x),
    "empty": lambda L, x: L.autograd.Variable(),
    "from_non_leaf": lambda L, x: L.autograd.Variable(x * 2),
}


@pytest.mark.parametrize("case", list(VARIABLE))
def test_variable_is_a_tensor_as_in_torch(torch, case):
    data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    results = {}
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        results[lib.__name__] = _run(lib, lambda L, x=x: VARIABLE[case](L, x))
    (kind_t, t, warn_t), (kind_e, e, warn_e) = results["torch"], results["ember"]
    assert kind_t == kind_e == "ok"
    assert type(e) is ember.Tensor and type(t) is torch.Tensor
    np.testing.assert_array_equal(_np(e), _np(t))
    assert (e.requires_grad, e.grad_fn is None, e.dtype.name) == (
        t.requires_grad, t.grad_fn is None, str(t.dtype).split(".")[1])
    _same_warnings(warn_e, warn_t)
    assert isinstance(e, ember.autograd.Variable) and isinstance(t, torch.autograd.Variable)


def test_variable_shares_memory_and_carries_gradients(torch):
    for lib in (torch, ember):
        x = lib.ones(3)
        v = lib.autograd.Variable(x, requires_grad=True)
        x.add_(1.0)                                # the same memory, as x.detach()
        (v * v).sum().backward()
        np.testing.assert_array_equal(_np(v.grad), [4.0, 4.0, 4.0])


@pytest.mark.filterwarnings("ignore:volatile was removed")
@pytest.mark.parametrize("call,torch_error", [
    (lambda L: L.autograd.Variable([1.0, 2.0]), TypeError),
    (lambda L: L.autograd.Variable(L.ones(2), volatile=True, requires_grad=True), ValueError),
    (lambda L: L.autograd.Variable(L.ones(2), requires_grad="yes"), TypeError),
    (lambda L: L.autograd.Variable(L.ones(2, dtype=L.int64), requires_grad=True),
     (RuntimeError, TypeError)),
])
def test_variable_errors(torch, call, torch_error):
    with pytest.raises(torch_error):
        call(torch)
    with pytest.raises(ember.EmberError) as info:
        call(ember)
    assert isinstance(info.value, torch_error)


# -- Tensor.new -------------------------------------------------------------------------------

NEW_DATA = {                     # torch gives these values: compare them
    "list": lambda L, x: x.new([1, 2]),
    "tuple_is_data": lambda L, x: x.new((2, 3)),
    "nested": lambda L, x: x.new([[1.5, 2.5]]),
    "bools": lambda L, x: x.new([True, False]),
    "empty": lambda L, x: x.new(),
    "zero_size": lambda L, x: x.new(0),
    "same_tensor": lambda L, x: x.new(L.ones(2)),
    "numpy": lambda L, x: x.new(np.ones(3)),
    "long_from_floats": lambda L, x: x.long().new([1.7, -2.5]),
    "tensor_in_list": lambda L, x: x.new([L.tensor(1.0), 2]),
}
NEW_SIZES = {                    # torch leaves these uninitialised: compare shape and dtype
    "sizes": lambda L, x: x.new(2, 3),
    "size_object": lambda L, x: x.new(L.Size([2, 3])),
    "size_keyword": lambda L, x: x.new(size=(4,)),
    "device": lambda L, x: x.new(2, device="cpu"),
    "int_tensor": lambda L, x: x.int().new(5),
}


@pytest.mark.parametrize("case", list(NEW_DATA) + list(NEW_SIZES))
def test_tensor_new_as_torch(torch, case):
    fn = NEW_DATA.get(case) or NEW_SIZES[case]
    t = fn(torch, torch.ones(2, 3))
    e = fn(ember, ember.ones(2, 3))
    assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype).split(".")[1]
    if case in NEW_DATA:
        np.testing.assert_array_equal(_np(e), _np(t))
    else:
        assert not _np(e).any()                 # ember's new memory is zeros


@pytest.mark.parametrize("call,torch_error", [
    (lambda L: L.ones(2).new(2.5), TypeError),
    (lambda L: L.ones(2).new(2, [3]), TypeError),
    (lambda L: L.ones(2).new(L.ones(2, dtype=L.int64)), TypeError),
    (lambda L: L.ones(2).new(2, requires_grad=True), TypeError),
    (lambda L: L.ones(2).new([[1], [2, 3]]), ValueError),
    (lambda L: L.ones(2).int().new([2 ** 40]), (RuntimeError, OverflowError)),
])
def test_tensor_new_errors(torch, call, torch_error):
    with pytest.raises(torch_error):
        call(torch)
    with pytest.raises(torch_error):
        call(ember)


# -- torch.cuda legacy types, amp classes, memory counters ---------------------------------

def test_cuda_tensor_types_as_torch_without_cuda(torch):
    assert inspect.isclass(ember.cuda.FloatTensor) and inspect.isclass(torch.cuda.FloatTensor)
    for lib in (torch, ember):
        cpu = lib.ones(2)
        assert not isinstance(cpu, lib.cuda.FloatTensor) and isinstance(cpu, lib.FloatTensor)
        assert not isinstance(cpu.long(), lib.cuda.LongTensor)
    if ember.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the CPU-only behaviour is not what runs")
    for name in ("FloatTensor", "LongTensor", "HalfTensor"):
        with pytest.raises(TypeError, match=f"type torch.cuda.{name} not available"):
            getattr(torch.cuda, name)(2)
        with pytest.raises(ember.EmberError, match=f"type torch.cuda.{name} not available"):
            getattr(ember.cuda, name)([1.0])
    assert ember.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    assert ember.cuda.max_memory_reserved() == 0
    ember.cuda.reset_peak_memory_stats()         # nothing to reset without a GPU


def test_cuda_keyword_non_blocking(torch):
    params = inspect.signature(ember.Tensor.cuda).parameters
    assert list(params)[1:] == ["device", "non_blocking", "memory_format"]
    if ember.cuda.is_available():
        x = ember.ones(2).cuda(non_blocking=True)
        assert x.device.type == "cuda"
    else:
        with pytest.raises(ember.DeviceUnavailableError):
            ember.ones(2).cuda(non_blocking=True)


def test_cuda_amp_names_are_classes_as_in_torch(torch):
    for lib in (torch, ember):
        amp = lib.cuda.amp
        assert inspect.isclass(amp.autocast) and inspect.isclass(amp.GradScaler)
        assert amp.autocast is lib.cuda.amp.autocast              # one class, every access
        assert issubclass(amp.autocast, lib.amp.autocast)
        assert issubclass(amp.GradScaler, lib.amp.GradScaler)

        with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"):
            class Mine(amp.autocast):                  # subclassable (torch warns here too)
                pass
        results = {}
        for name in ("autocast", "GradScaler"):
            results[name] = _run(lib, lambda L, n=name: getattr(L.cuda.amp, n)(
                enabled=False))
        for name, (kind, obj, seen) in results.items():
            assert kind == "ok", obj
            assert isinstance(obj, getattr(lib.amp, name))
            future = [str(m) for c, m in seen if issubclass(c, FutureWarning)]
            assert future == [f"`torch.cuda.amp.{name}(args...)` is deprecated. Please use "
                              f"`torch.amp.{name}('cuda', args...)` instead."]
        kind, mine, seen = _run(lib, lambda L: Mine(enabled=False))
        assert kind == "ok" and isinstance(mine, amp.autocast)
        assert not [m for c, m in seen if issubclass(c, FutureWarning)]   # as torch's
        with pytest.warns(FutureWarning):
            @amp.autocast(enabled=False)
            def double(v):
                return v * 2
        assert double(3) == 6                                     # a decorator
        with pytest.warns(FutureWarning), amp.autocast(enabled=False):
            pass                                                  # a context manager


# -- set_default_tensor_type and the deprecated spellings ------------------------------------

@pytest.mark.parametrize("arg", ["DoubleTensor", "'torch.FloatTensor'", "LongTensor",
                                 "float64", "'torch.IntTensor'"])
def test_set_default_tensor_type_as_torch(torch, arg):
    results = {}
    for lib in (torch, ember):
        value = eval(arg) if arg.startswith("'") else getattr(lib, arg)
        try:
            results[lib.__name__] = _run(lib, lambda L, v=value: (
                L.set_default_tensor_type(v), str(L.get_default_dtype()).split(".")[1])[1])
        finally:
            lib.set_default_dtype(lib.float32)
    (kind_t, t, warn_t), (kind_e, e, warn_e) = results["torch"], results["ember"]
    assert kind_t == kind_e
    if kind_t == "ok":
        assert t == e
    else:
        assert isinstance(e, type(t)) and isinstance(e, ember.EmberError)
    # torch warns once per process (TORCH_WARN_ONCE); ember on every call
    warn_t = [(UserWarning, m) for _, m in warn_t]
    assert [m for _, m in warn_e] == ["torch.set_default_tensor_type() is deprecated as of "
                                      "PyTorch 2.1, please use torch.set_default_dtype() and "
                                      "torch.set_default_device() as alternatives."]
    assert warn_t in ([], [(UserWarning, m) for _, m in warn_e])
    assert issubclass(warn_e[0][0], UserWarning)


DEPRECATED = {
    "clip_grad_norm": lambda L: L.nn.utils.clip_grad_norm(
        [_grad_param(L)], 1.0, norm_type=2.0),
    **{f"init.{name}": (lambda n: lambda L: getattr(L.nn.init, n)(
        L.ones(3, 4), *([2.0] if n == "constant" else [])))(name)
       for name in ("normal", "uniform", "constant", "xavier_uniform", "xavier_normal",
                    "kaiming_uniform", "kaiming_normal", "orthogonal")},
    "grad_only_inputs": lambda L: L.autograd.grad(
        (_grad_param(L) * 3).sum(), _grad_param.last, only_inputs=False)[0],
    "grad_only_inputs_true": lambda L: L.autograd.grad(
        (_grad_param(L) * 3).sum(), _grad_param.last, only_inputs=True)[0],
}


def _grad_param(L):
    p = L.nn.Parameter(L.tensor([3.0, 4.0]))
    p.grad = L.tensor([3.0, 4.0])
    _grad_param.last = p
    return p


@pytest.mark.parametrize("case", list(DEPRECATED))
def test_deprecated_spellings_warn_as_torch(torch, case):
    (kind_t, t, warn_t), (kind_e, e, warn_e) = (_run(lib, DEPRECATED[case])
                                                for lib in (torch, ember))
    assert kind_t == kind_e == "ok"
    assert tuple(e.shape) == tuple(t.shape)
    if not case.startswith("init.") or case == "init.constant":       # not random
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-6)
    _same_warnings(warn_e, warn_t)


# -- resize_, resize_as_, resize; index_copy, put; share_memory_, view_as_real, name ---------

RESIZE = {
    "shrink": lambda L: L.arange(6.0).reshape(2, 3).resize_(2, 2),
    "same_numel": lambda L: L.arange(6.0).reshape(2, 3).resize_((3, 2)),
    "as": lambda L: L.arange(4.0).resize_as_(L.ones(2, 2)),
    "deprecated_resize": lambda L: L.arange(6.0).reshape(2, 3).resize(3, 2),
    "grow": lambda L: L.arange(3.0).resize_(2, 3),
}


@pytest.mark.parametrize("case", list(RESIZE))
def test_resize_as_torch(torch, case):
    (kind_t, t, warn_t), (kind_e, e, warn_e) = (_run(lib, RESIZE[case])
                                                for lib in (torch, ember))
    assert kind_t == kind_e == "ok"
    assert tuple(e.shape) == tuple(t.shape)
    kept = 3 if case == "grow" else t.numel()        # torch leaves the new ones unset
    np.testing.assert_array_equal(_np(e).reshape(-1)[:kept], _np(t).reshape(-1)[:kept])
    if case == "grow":
        assert not _np(e).reshape(-1)[kept:].any()
    _same_warnings(warn_e, warn_t)


def test_resize_errors_as_torch(torch):
    for lib, error in ((torch, RuntimeError), (ember, ember.errors.AutogradError)):
        with pytest.raises(error, match="cannot resize variables that require grad"):
            lib.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="requested resize to 3"), \
            pytest.warns(UserWarning):
        torch.ones(2).resize(3)
    with pytest.raises(ValueError, match="requested resize to 3"), \
            pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        ember.ones(2).resize(3)


INDEX_WRITES = {
    "index_copy": lambda L, x, s: x.index_copy(1, L.tensor([2, 0]), s),
    "index_copy_fn": lambda L, x, s: L.index_copy(x, 0, L.tensor([1]), s[:1, :].T[:1]
                                                  .expand(1, 3)),
    "index_copy_": lambda L, x, s: (x * 1).index_copy_(1, L.tensor([1, 2]), s),
    "put": lambda L, x, s: x.put(L.tensor([0, 5, 3]), L.cat([s[:, 0], s[0, 1:]])),
    "put_accumulate": lambda L, x, s: L.put(x, L.tensor([4, 4]), s[0], accumulate=True),
    "put_": lambda L, x, s: (x * 1).put_(L.tensor([1, 2]), s[1]),
}


@pytest.mark.parametrize("case", list(INDEX_WRITES))
def test_index_copy_and_put_as_torch(torch, case):
    rng = np.random.default_rng(5)
    xv, sv, up = rng.standard_normal((2, 3)), rng.standard_normal((2, 2)), None
    got = {}
    for lib in (torch, ember):
        x = lib.tensor(xv, requires_grad=True)
        s = lib.tensor(sv, requires_grad=True)
        out = INDEX_WRITES[case](lib, x, s)
        up = rng.standard_normal(tuple(out.shape)) if up is None else up
        out.backward(lib.tensor(up))
        got[lib.__name__] = [_np(out), _np(x.grad), _np(s.grad)]
    for e, t in zip(got["ember"], got["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_index_copy_and_put_errors(torch):
    for lib in (torch, ember):
        with pytest.raises(IndexError):
            lib.ones(2, 2).put(lib.tensor([4]), lib.tensor([5.0]))
        with pytest.raises((IndexError, RuntimeError, ValueError)):
            lib.zeros(3, 2).index_copy(0, lib.tensor([0, 1]), lib.ones(3, 2))


def test_share_memory_view_as_real_and_name(torch):
    assert not torch.ones(2).is_shared() and not ember.ones(2).is_shared()
    with pytest.raises(ember.errors.NotInEmberError, match="no shared-memory tensors"):
        ember.ones(2).share_memory_()
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="view_as_real is only supported for complex"):
            lib.view_as_real(lib.ones(2))
        assert lib.ones(2).name is None
        with pytest.raises(AttributeError):
            lib.ones(2).name = "x"


# -- tensors from nested lists that hold tensors ---------------------------------------------

NESTED = {
    "zero_d": lambda L: L.tensor([L.tensor(1.0), L.tensor(2.0)]),
    "one_element": lambda L: L.tensor([L.ones(1), L.ones(1, 1) * 3]),
    "nested_one_element": lambda L: L.tensor([[L.ones(1)], [L.zeros(1)]]),
    "mixed_rows": lambda L: L.tensor([[L.tensor(1.0), L.tensor(2.0)], [3.0, 4.0]]),
    "int32_tensor": lambda L: L.tensor([L.tensor(1, dtype=L.int32)]),
    "int32_and_int": lambda L: L.tensor([L.tensor(1, dtype=L.int32), 2]),
    "float64_and_float": lambda L: L.tensor([L.tensor(1.0, dtype=L.float64), 1.5]),
    "float16_and_int": lambda L: L.tensor([L.tensor(1.0, dtype=L.float16), 1]),
    "bool_and_int": lambda L: L.tensor([L.tensor(True), 2]),
    "bools": lambda L: L.tensor([L.tensor(True), L.tensor(False)]),
    "uint8_and_big": lambda L: L.tensor([L.tensor(1, dtype=L.uint8), 300]),
    "int64_and_int32": lambda L: L.tensor([L.tensor(1), L.tensor(2, dtype=L.int32)]),
    "numpy_scalar": lambda L: L.tensor([L.tensor(1.0), np.float64(2.0)]),
    "tuple": lambda L: L.tensor((L.tensor(1.0), L.tensor(2.0))),
    "indexed": lambda L: L.tensor([L.arange(3.0)[i] for i in range(3)]),
    "as_tensor": lambda L: L.as_tensor([L.tensor(1.0), L.tensor(2.0)]),
    "legacy_Tensor": lambda L: L.Tensor([L.tensor(1), 2]),
    "requires_grad_element": lambda L: L.tensor([L.tensor(1.0, requires_grad=True)]),
    # errors: torch's types
    "vectors": lambda L: L.tensor([L.ones(2), L.ones(2)]),
    "vector_and_list": lambda L: L.tensor([L.ones(2), [1.0, 2.0]]),
    "empty_tensor": lambda L: L.tensor([L.zeros(0)]),
    "float_into_long": lambda L: L.tensor([L.tensor(2.5), 1], dtype=L.int64),
    "legacy_long": lambda L: L.LongTensor([L.tensor(1.5)]),
    "ragged": lambda L: L.tensor([[L.tensor(1.0), L.tensor(2.0)], [3.0]]),
}


@pytest.mark.parametrize("case", list(NESTED))
def test_nested_sequences_with_tensors_as_torch(torch, case):
    """A tensor inside a list is one number (a one-element tensor of any shape), never a
    nested list: no silent extra dimension; the dtype is every element's, promoted."""
    (kind_t, t, warn_t), (kind_e, e, warn_e) = (_run(lib, NESTED[case])
                                                for lib in (torch, ember))
    assert kind_e == kind_t, (t, e)
    if kind_t == "ok":
        assert tuple(e.shape) == tuple(t.shape)
        assert e.dtype.name == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(_np(e), _np(t))
    else:
        assert isinstance(e, ember.EmberError) and isinstance(e, type(t)), (t, e)
        if "one element" in str(t):
            assert "only one element tensors can be converted to Python scalars" in str(e)
    _same_warnings(warn_e, warn_t)


# -- keywords torch's argument parser takes, visible to inspect ------------------------------

def test_spelled_keywords_are_in_the_signatures():
    assert "size" in inspect.signature(ember.rand).parameters
    assert "size" in inspect.signature(ember.zeros).parameters
    params = inspect.signature(ember.Tensor.sum).parameters
    assert "axis" in params and "keepdims" in params
    assert "axis" in inspect.signature(ember.Tensor.argmax).parameters
    assert ember.rand(size=(2, 3)).shape == (2, 3)
    assert ember.ones(2, 3).sum(axis=0, keepdims=True).shape == (1, 3)
    assert ember.ones(2, 3).argmax(axis=1).shape == (2,)


@pytest.mark.parametrize("device", [str(d) for d in ember.devices()])
def test_nested_tensors_on_any_device_are_numbers(device):
    """Elements on another device count as their numbers, as torch reads CUDA elements: the
    result is on `device=` (the CPU by default), never a nested tensor, never in a graph."""
    a = ember.tensor(1.5, device=device, requires_grad=True)
    b = ember.tensor([2.5], device=device)
    for make in (ember.tensor, ember.as_tensor):
        with pytest.warns(UserWarning, match="requires_grad=True to a scalar"):   # as torch
            out = make([a, b, 3])
        assert (out.tolist(), tuple(out.shape), out.dtype, str(out.device)) == \
            ([1.5, 2.5, 3.0], (3,), ember.float32, "cpu")
        assert not out.requires_grad
    placed = ember.tensor([[a.detach()], [b]], device=device)
    assert placed.tolist() == [[1.5], [2.5]] and str(placed.device) == device
    new = ember.ones(1, device=device).new_tensor([a.detach(), 2])
    assert new.tolist() == [1.5, 2.0] and str(new.device) == device
    with pytest.raises(ValueError, match="only one element tensors can be converted"):
        ember.tensor([ember.ones(2, device=device)])
