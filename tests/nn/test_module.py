"""Module, Parameter and containers, compared with torch.nn where it is installed."""
from __future__ import annotations

import copy

import ember
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from nn_helpers import copy_weights, to_numpy


def _net(lib):
    n = lib.nn

    class Net(n.Module):
        def __init__(self):
            super().__init__()
            self.features = n.Sequential(n.Conv2d(1, 4, 3), n.BatchNorm2d(4), n.ReLU(),
                                         n.MaxPool2d(2))
            self.heads = n.ModuleList([n.Linear(16, 8), n.Linear(8, 3)])
            self.extra = n.ModuleDict({"drop": n.Dropout(0.1), "act": n.GELU()})
            self.scale = n.Parameter(lib.ones(3))
            self.register_buffer("offset", lib.zeros(3))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

        def forward(self, x):
            x = self.features(x).flatten(1)
            x = self.extra["act"](self.heads[0](x))
            return self.heads[1](self.extra["drop"](x)) * self.scale + self.offset
    return Net()


def test_registration_and_traversal_match_torch(torch):
    t, e = _net(torch), _net(ember)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert "scratch" not in e.state_dict()
    for (name, p), (_, q) in zip(e.named_parameters(), t.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), name
    assert repr(e) == repr(t)
    assert e.get_submodule("heads.1") is e.heads[1]
    assert e.get_parameter("features.0.weight") is e.features[0].weight
    assert e.get_buffer("features.1.running_mean") is e.features[1].running_mean


def test_state_dict_round_trip_with_torch(torch):
    t, e = _net(torch), _net(ember)
    copy_weights(t, e)
    t.eval()
    e.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(to_numpy(e(ember.tensor(x))), to_numpy(t(torch.tensor(x))),
                               rtol=1e-5, atol=1e-6)


def test_parameter_is_a_flagged_tensor_on_the_fast_paths():
    base = ember.tensor([0.5, -1.25, 2.0, -0.5])   # exact in float32: 2x+1 has no rounding
    p = nn.Parameter(base)
    assert type(p) is ember.Tensor and ember.is_tensor(p)
    assert isinstance(p, nn.Parameter) and not isinstance(base, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert not isinstance(p.detach(), nn.Parameter) and not isinstance(p * 2, nn.Parameter)
    np.testing.assert_array_equal(to_numpy(p), to_numpy(base))      # storage is shared
    y = (p * p + p).sum()            # same-shape binary fast path, then a reduction
    y.backward()
    np.testing.assert_array_equal(to_numpy(p.grad), 2 * to_numpy(base) + 1)
    assert not nn.Parameter(ember.ones(2), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="only floating point"):
        nn.Parameter(ember.tensor([1, 2]))
    with pytest.raises(TypeError, match="expected a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_assignment_rules():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match="cannot assign a Tensor as parameter 'weight'"):
        m.weight = ember.randn(3, 2)
    m.bias = None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    m.bias = nn.Parameter(ember.zeros(3))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    m.note = "plain attribute"
    assert m.note == "plain attribute" and "note" not in dict(m.named_parameters())
    m.sub = nn.ReLU()
    assert list(dict(m.named_children())) == ["sub"]
    del m.sub
    assert list(m.children()) == []
    m.stat = nn.Buffer(ember.ones(1), persistent=False)
    assert "stat" in dict(m.named_buffers()) and "stat" not in m.state_dict()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        _ = m.nothing

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))
    with pytest.raises(TypeError, match=r"before Module.__init__\(\)"):
        Forgot()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_to_dtype_keeps_parameter_identity_and_optimizer_works():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    weight = m[0].weight
    opt = optim.SGD(m.parameters(), lr=0.1)
    m(ember.randn(5, 3)).sum().backward()
    assert m.double() is m
    assert m[0].weight is weight and weight.dtype == ember.float64
    assert weight.grad.dtype == ember.float64
    assert m[1].running_mean.dtype == ember.float64
    assert m[1].num_batches_tracked.dtype == ember.int64       # integers keep their dtype
    before = to_numpy(weight).copy()
    opt.step()
    assert not np.allclose(to_numpy(weight), before)
    m.float()
    assert m[0].weight is weight and weight.dtype == ember.float32
    m.to("cpu", ember.float64).to(dtype=ember.float32).cpu()
    assert weight.dtype == ember.float32
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(ember.int64)


def test_train_eval_zero_grad_requires_grad():
    m = _net(ember)
    assert m.training and all(c.training for c in m.modules())
    m.eval()
    assert not any(c.training for c in m.modules())
    m.train()
    assert all(c.training for c in m.modules())
    with pytest.raises(TypeError, match="bool"):
        m.train("yes")
    m(ember.randn(2, 1, 6, 6)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(np.all(to_numpy(p.grad) == 0) for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    post = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    first = m.register_forward_hook(lambda mod, args, out: calls.append("first"),
                                    prepend=True)
    out = m(ember.ones(1, 2))
    np.testing.assert_allclose(to_numpy(out), to_numpy(m.bias.detach()).reshape(1, 2) + 1,
                               rtol=1e-6)
    assert calls == ["first", "post"]
    pre.remove()
    post.remove()
    first.remove()
    np.testing.assert_allclose(to_numpy(m(ember.zeros(1, 2))),
                               to_numpy(m.bias.detach()).reshape(1, 2), rtol=1e-6)

    def with_kwargs(mod, args, kwargs):
        return (args[0] + 1,), kwargs
    expected = to_numpy(m(ember.ones(1, 2)))
    with m.register_forward_pre_hook(with_kwargs, with_kwargs=True):
        np.testing.assert_allclose(to_numpy(m(ember.zeros(1, 2))), expected, rtol=1e-6)
    assert not m._forward_pre_hooks


def test_load_state_dict_reports_every_problem_and_writes_nothing():
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    before = {k: to_numpy(v).copy() for k, v in m.state_dict().items()}
    bad = {"0.weight": ember.zeros(4, 3), "0.bias": ember.zeros(5),
           "1.weight": ember.zeros(2, 4), "2.weight": ember.zeros(1)}
    with pytest.raises(nn.StateDictError) as info:
        m.load_state_dict(bad)
    msg = str(info.value)
    assert 'Missing key(s) in state_dict: "1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "2.weight"' in msg
    assert "size mismatch for 0.bias: copying a param with shape [5]" in msg
    assert isinstance(info.value, RuntimeError)
    for key, value in m.state_dict().items():
        np.testing.assert_array_equal(to_numpy(value), before[key])
    del bad["0.bias"]
    result = m.load_state_dict(bad, strict=False)
    assert result.missing_keys == ["0.bias", "1.bias"] and result.unexpected_keys == ["2.weight"]
    assert np.all(to_numpy(m[0].weight) == 0)
    assert repr(m.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
    new = ember.full((2, 4), 3.0)
    m.load_state_dict({**m.state_dict(), "1.weight": new}, assign=True)
    assert isinstance(m[1].weight, nn.Parameter) and m[1].weight.requires_grad
    np.testing.assert_array_equal(to_numpy(m[1].weight), to_numpy(new))


def test_state_dict_shares_storage_and_casts_on_load():
    m = nn.Linear(2, 2).double()
    sd = m.state_dict()
    assert not sd["weight"].requires_grad
    m.load_state_dict({"weight": ember.ones(2, 2), "bias": ember.zeros(2)})
    assert m.weight.dtype == ember.float64 and np.all(to_numpy(m.weight) == 1)
    np.testing.assert_array_equal(to_numpy(sd["weight"]), 1)     # the same storage


def test_deepcopy_makes_independent_parameters():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    m(ember.randn(4, 2)).sum().backward()
    c = copy.deepcopy(m)
    assert c[0].weight is not m[0].weight and isinstance(c[0].weight, nn.Parameter)
    np.testing.assert_array_equal(to_numpy(c[0].weight), to_numpy(m[0].weight))
    np.testing.assert_array_equal(to_numpy(c[0].weight.grad), to_numpy(m[0].weight.grad))
    with ember.no_grad():
        c[0].weight.add_(1.0)
    assert not np.allclose(to_numpy(c[0].weight), to_numpy(m[0].weight))


def test_shared_parameters_are_listed_once():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(m.parameters())) == 2
    assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    visited = []
    m.apply(lambda mod: visited.append(type(mod).__name__))
    assert visited == ["Linear", "ReLU", "Sequential"]


def test_containers(torch):
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    seq.append(nn.Sigmoid())
    seq.insert(0, nn.Identity())
    assert [type(s).__name__ for s in seq] == ["Identity", "Linear", "ReLU", "Linear",
                                               "Sigmoid"]
    del seq[0]
    assert list(dict(seq.named_children())) == ["0", "1", "2", "3"]
    assert tuple(seq(ember.randn(5, 2)).shape) == (5, 1)
    with pytest.raises(IndexError, match="out of range"):
        seq[10]
    layers = nn.ModuleList([nn.Linear(1, 1)])
    layers += [nn.ReLU()]
    layers.append(nn.Tanh())
    assert len(layers) == 3 and len(list(layers.parameters())) == 2
    d = nn.ModuleDict({"a": nn.ReLU()})
    d["b"] = nn.Linear(1, 1)
    assert list(d.keys()) == ["a", "b"] and "b" in d and len(list(d.parameters())) == 2
    assert d.pop("a").__class__ is nn.ReLU and list(d) == ["b"]
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ModuleList([torch.nn.ReLU()]),
                            torch.nn.ModuleDict({"x": torch.nn.Tanh()}))
    e = nn.Sequential(nn.Linear(2, 3), nn.ModuleList([nn.ReLU()]),
                      nn.ModuleDict({"x": nn.Tanh()}))
    assert repr(e) == repr(t)


def test_share_memory_is_share_memory_of_each_tensor():
    """Module.share_memory() is Tensor.share_memory_() on every tensor, as torch's: ember has
    no shared-memory tensors, so both refuse the same way (never a silent no-op)."""
    from ember.errors import NotInEmberError
    model = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(NotInEmberError, match="no shared-memory tensors") as module_error:
        model.share_memory()
    with pytest.raises(NotInEmberError) as tensor_error:
        model[0].weight.share_memory_()
    assert str(module_error.value) == str(tensor_error.value)
    with pytest.raises(NotInEmberError):
        nn.BatchNorm1d(2, affine=False).share_memory()          # buffers only
    empty = nn.Sequential(nn.ReLU())
    assert empty.share_memory() is empty
