"""Lazy modules (nn.lazy, UninitializedParameter/UninitializedBuffer) against PyTorch: the
module before its first call (repr, state_dict), the class it becomes, and then the same
outputs and gradients as torch's plain module with the same weights, on cpu and opencl:0."""
from __future__ import annotations

import copy
import warnings

import ember
import numpy as np
import pytest
from nn_helpers import copy_state, cpu_and_opencl, rng, to_numpy

DEVICES = cpu_and_opencl()

# (class, constructor args, constructor kwargs, input shape)
LAZY = [
    ("LazyLinear", (4,), {}, (3, 5)),
    ("LazyLinear", (2,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (6, 3), {"stride": 2, "groups": 2}, (2, 4, 7, 7)),
    ("LazyConv2d", (5, 3), {"bias": False}, (3, 6, 6)),           # unbatched
    ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (3, 2), {"stride": 2}, (2, 4, 5)),
    ("LazyConvTranspose2d", (4, 3), {"padding": 1, "output_padding": 1, "stride": 2},
     (2, 3, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"affine": False}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"momentum": None}, (3, 2, 4, 4)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 3, 3)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False},
     (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"bias": False}, (2, 2, 3, 3, 3)),
]


def _ids(case):
    name, args, kwargs, _ = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", LAZY, ids=[_ids(c) for c in LAZY])
def test_lazy_module_as_torch(torch, case, device):
    name, args, kwargs, shape = case
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    e = getattr(ember.nn, name)(*args, **kwargs).double().to(device)
    # before the first call: the repr, the uninitialized tensors and the state_dict
    assert repr(e) == repr(t)
    assert type(e).__name__ == name
    assert e.has_uninitialized_params() == t.has_uninitialized_params() == (
        bool(kwargs.get("affine", True) or kwargs.get("track_running_stats", True)))
    t_state, e_state = t.state_dict(), e.state_dict()
    assert list(e_state) == list(t_state)
    assert [repr(v) for v in e_state.values() if ember.nn.parameter.is_lazy(v)] == \
        [repr(v) for v in t_state.values() if torch.nn.parameter.is_lazy(v)]
    assert [type(p).__name__ for p in e.parameters()] == \
        [type(p).__name__ for p in t.parameters()]
    # the first call infers the shapes and makes the module its plain class
    r = rng(_ids(case) + device)
    x = r.standard_normal(shape)
    with warnings.catch_warnings():
        # the instance norm without parameters keeps num_features=0 (torch warns)
        warnings.simplefilter("ignore")
        t(torch.tensor(x))
        e(ember.tensor(x, device=device))
    assert type(e).__name__ == type(t).__name__ == name[len("Lazy"):]
    assert isinstance(e, getattr(ember.nn, name[len("Lazy"):]))
    assert repr(e) == repr(t)
    assert not any(ember.nn.parameter.is_lazy(v) for v in e.state_dict().values())
    assert {k: tuple(v.shape) for k, v in e.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert all(type(p) is ember.Tensor and isinstance(p, ember.nn.Parameter)
               for p in e.parameters())
    assert all(str(v.device) == device for v in e.state_dict().values())
    # then, with torch's weights, the same outputs and gradients
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.randn_like(p))
    copy_state(t, e, device)
    x2 = r.standard_normal(shape)
    tx = torch.tensor(x2, requires_grad=True)
    ex = ember.tensor(x2, device=device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout, eout = t(tx), e(ex)
    np.testing.assert_allclose(to_numpy(eout.to("cpu")), to_numpy(tout), rtol=1e-9,
                               atol=1e-11, err_msg="forward")
    upstream = r.standard_normal(tuple(tout.shape))
    tout.backward(torch.tensor(upstream))
    eout.backward(ember.tensor(upstream, device=device))
    np.testing.assert_allclose(to_numpy(ex.grad.to("cpu")), to_numpy(tx.grad), rtol=1e-8,
                               atol=1e-10, err_msg="grad of the input")
    t_params = dict(t.named_parameters())
    assert [k for k, _ in e.named_parameters()] == list(t_params)
    for key, p in e.named_parameters():
        np.testing.assert_allclose(to_numpy(p.grad.to("cpu")), to_numpy(t_params[key].grad),
                                   rtol=1e-8, atol=1e-10, err_msg=f"grad of {key}")
    for key, b in t.named_buffers():       # running statistics updated as torch's
        np.testing.assert_allclose(to_numpy(e.get_buffer(key).to("cpu")), to_numpy(b),
                                   rtol=1e-9, atol=1e-11, err_msg=key)


def test_initialization_follows_torch_bounds(torch):
    # the values are drawn at the first call by the plain class's reset_parameters
    lin = ember.nn.LazyLinear(64)
    lin(ember.ones(2, 16))
    bound = 1 / np.sqrt(16)
    assert np.abs(to_numpy(lin.weight)).max() <= bound
    assert np.abs(to_numpy(lin.bias)).max() <= bound
    assert np.abs(to_numpy(lin.weight)).max() > bound / 2
    bn = ember.nn.LazyBatchNorm1d()
    bn.eval()
    bn(ember.ones(2, 3))
    assert to_numpy(bn.weight).tolist() == [1, 1, 1] and to_numpy(bn.bias).tolist() == [0] * 3
    assert to_numpy(bn.running_var).tolist() == [1, 1, 1]


def test_uninitialized_tensors_refuse_use(torch):
    t_p, e_p = torch.nn.UninitializedParameter(), ember.nn.UninitializedParameter()
    assert repr(e_p) == repr(t_p) == "<UninitializedParameter>"
    assert repr(ember.nn.UninitializedBuffer()) == "<UninitializedBuffer>"
    assert isinstance(e_p, ember.nn.Parameter) and isinstance(t_p, torch.nn.Parameter)
    assert ember.nn.parameter.is_lazy(e_p) and not ember.nn.parameter.is_lazy(ember.ones(1))
    assert e_p.requires_grad and e_p.dtype == ember.float32 and e_p.grad is None
    assert not ember.nn.UninitializedBuffer().requires_grad
    assert tuple(e_p.size()) == tuple(t_p.size()) == (0,)
    assert e_p.is_floating_point()
    for use in (lambda p: p + 1, lambda p: p.sum(), lambda p: p.numel(), lambda p: p[0],
                lambda p: p * p, lambda p: p.requires_grad_(False)):
        with pytest.raises(ValueError, match="uninitialized parameter"):
            use(t_p)
        with pytest.raises(ValueError, match="uninitialized parameter"):
            use(e_p)
    # an ember function refuses it at its first read of the tensor: its data (ValueError,
    # torch's type) or its shape (RuntimeError, torch's for .shape); torch's functions
    # always raise the ValueError (its __torch_function__ sees the call first)
    with pytest.raises((ValueError, RuntimeError), match="uninitialized parameter"):
        ember.nn.functional.linear(ember.ones(2, 3), e_p)
    with pytest.raises((ValueError, RuntimeError), match="uninitialized parameter"):
        ember.matmul(ember.ones(2, 3), e_p)
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        _ = t_p.shape
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        _ = e_p.shape
    with pytest.raises(RuntimeError, match="Can't share memory"):
        e_p.share_memory_()
    # materialize: the same object becomes a plain Parameter of that shape
    same = e_p
    e_p.materialize((2, 3), dtype=ember.float64)
    assert same is e_p and type(e_p) is ember.Tensor and isinstance(e_p, ember.nn.Parameter)
    assert tuple(e_p.shape) == (2, 3) and e_p.dtype == ember.float64 and e_p.requires_grad
    assert float((e_p + 1).sum()) == 6.0


def test_load_state_dict_before_initialization(torch):
    src = ember.nn.Linear(3, 4)
    lazy = ember.nn.LazyLinear(4)
    tlazy = torch.nn.LazyLinear(4)
    assert str(lazy.load_state_dict(src.state_dict())) == \
        str(tlazy.load_state_dict(torch.nn.Linear(3, 4).state_dict()))
    # materialized to the loaded shapes; the module stays lazy until its first call, as
    # torch's, and that call keeps the loaded values
    assert type(lazy).__name__ == type(tlazy).__name__ == "LazyLinear"
    assert not lazy.has_uninitialized_params() and not tlazy.has_uninitialized_params()
    assert repr(lazy) == repr(tlazy)
    x = ember.randn(2, 3)
    np.testing.assert_allclose(to_numpy(lazy(x)), to_numpy(src(x)), rtol=1e-6)
    assert type(lazy) is ember.nn.Linear
    # uninitialized into uninitialized: nothing to copy, all keys match
    other = ember.nn.LazyBatchNorm2d()
    result = other.load_state_dict(ember.nn.LazyBatchNorm2d().state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert other.has_uninitialized_params()
    # uninitialized into initialized: torch's error
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        torch.nn.Linear(3, 4).load_state_dict(torch.nn.LazyLinear(4).state_dict())
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        ember.nn.Linear(3, 4).load_state_dict(ember.nn.LazyLinear(4).state_dict())


def test_nested_lazy_model_and_optimizer(torch):
    model = ember.nn.Sequential(ember.nn.LazyConv2d(4, 3), ember.nn.LazyBatchNorm2d(),
                                ember.nn.ReLU(), ember.nn.Flatten(), ember.nn.LazyLinear(2))
    tmodel = torch.nn.Sequential(torch.nn.LazyConv2d(4, 3), torch.nn.LazyBatchNorm2d(),
                                 torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.LazyLinear(2))
    assert repr(model) == repr(tmodel)
    assert list(model.state_dict()) == list(tmodel.state_dict())
    # torch's optimizers take the uninitialized parameters; the first forward makes them
    # tensors in place, so the optimizer then updates them
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    torch.optim.SGD(tmodel.parameters(), lr=0.1)
    opt.step()                                  # nothing has a gradient yet
    x = ember.randn(2, 3, 6, 6)
    model(x).sum().backward()
    tmodel(torch.randn(2, 3, 6, 6))
    assert repr(model) == repr(tmodel)
    before = [p.detach().clone() for p in model.parameters()]
    opt.step()
    for b, p in zip(before, model.parameters()):
        assert np.allclose(to_numpy(b - 0.1 * p.grad), to_numpy(p))
    assert not np.allclose(to_numpy(before[-2]), to_numpy(model[4].weight))


def test_to_dtype_before_initialization_and_deepcopy(torch):
    lazy = ember.nn.LazyLinear(3).double()
    assert lazy.weight.dtype == ember.float64 and ember.nn.parameter.is_lazy(lazy.weight)
    twin = copy.deepcopy(lazy)
    assert repr(twin) == repr(lazy) and twin.weight is not lazy.weight
    assert ember.nn.parameter.is_lazy(twin.weight) and twin.weight.dtype == ember.float64
    twin(ember.ones(2, 5, dtype=ember.float64))
    assert tuple(twin.weight.shape) == (3, 5) and lazy.has_uninitialized_params()


def test_custom_lazy_module(torch):
    from ember.nn.lazy import LazyModuleMixin

    class Scale(LazyModuleMixin, ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = ember.nn.UninitializedParameter()

        def initialize_parameters(self, x):
            self.scale.materialize((x.shape[-1],))
            with ember.no_grad():
                self.scale.fill_(2.0)

        def forward(self, x):
            return x * self.scale

    m = Scale()
    assert m.has_uninitialized_params()
    assert to_numpy(m(ember.ones(2, 3))).tolist() == [[2.0] * 3] * 2
    assert type(m) is Scale and not m.has_uninitialized_params()   # cls_to_become None

    class Broken(LazyModuleMixin, ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = ember.nn.UninitializedParameter()

        def initialize_parameters(self, x):
            pass

        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="has not been fully initialized"):
        Broken()(ember.ones(1))


def test_to_empty(torch):
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    with ember.no_grad():
        for p in model.parameters():
            p.fill_(5.0)
    weight = model[0].weight
    assert model.to_empty(device="cpu") is model
    assert model[0].weight is weight                      # the same Parameter
    assert [tuple(t.shape) for t in model.state_dict().values()] == \
        [tuple(t.shape) for t in torch.nn.Sequential(torch.nn.Linear(3, 4),
                                                     torch.nn.BatchNorm1d(4))
         .to_empty(device="cpu").state_dict().values()]
    assert model[1].num_batches_tracked.dtype == ember.int64
    # recurse=False: only the module's own tensors
    outer = ember.nn.Linear(2, 2)
    outer.child = ember.nn.Linear(2, 2)
    with ember.no_grad():
        outer.child.weight.fill_(7.0)
    outer.to_empty(device="cpu", recurse=False)
    assert to_numpy(outer.child.weight).tolist() == [[7.0, 7.0]] * 2
    with pytest.raises(TypeError):
        outer.to_empty("cpu")                            # device is keyword-only, as torch's
    with pytest.raises(ValueError, match="uninitialized parameter"):
        torch.nn.LazyLinear(2).to_empty(device="cpu")
    with pytest.raises(ValueError, match="uninitialized parameter"):
        ember.nn.LazyLinear(2).to_empty(device="cpu")


@pytest.mark.parametrize("device", DEVICES)
def test_to_empty_moves_to_device(device):
    model = ember.nn.Linear(3, 2)
    model.to_empty(device=device)
    assert all(str(t.device) == device for t in model.state_dict().values())
    assert tuple(model(ember.ones(1, 3, device=device)).shape) == (1, 2)


def test_torch_import_paths():
    from ember.torch_alias import resolve
    assert resolve("torch.nn.modules.lazy").LazyModuleMixin is \
        ember.nn.lazy.LazyModuleMixin
    assert resolve("torch.nn.parameter").UninitializedParameter is \
        ember.nn.UninitializedParameter
    assert resolve("torch.nn.parameter").is_lazy is ember.nn.parameter.is_lazy
    assert resolve("torch.nn.modules.linear").NonDynamicallyQuantizableLinear is \
        ember.nn.linear.NonDynamicallyQuantizableLinear
    assert type(ember.nn.MultiheadAttention(4, 2).out_proj).__name__ == \
        "NonDynamicallyQuantizableLinear"
