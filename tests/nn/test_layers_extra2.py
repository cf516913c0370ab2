"""GLU/SELU/... activations, RMSNorm, 1-d and adaptive-max pooling, gumbel_softmax, PReLU,
EmbeddingBag, ParameterList/ParameterDict against PyTorch, on the CPU and every device."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import device_params, rng, to_numpy

DEVICES = [pytest.param("cpu", id="cpu")] + device_params()


def _close(got, want, what, rtol=1e-7, atol=1e-9):
    if isinstance(got, ember.Tensor):
        got = to_numpy(got.to("cpu"))
    want = want if isinstance(want, np.ndarray) else to_numpy(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def _compare(torch, name, device, t_call, e_call, floats, ints=(), t_mod=None, e_mod=None):
    """t_call(*torch tensors) and e_call(*ember tensors on device) agree: the output, and
    with a random upstream gradient the gradients of every float input and parameter."""
    r = rng(name)
    t_in = [torch.tensor(a, requires_grad=True) for a in floats]
    e_in = [ember.tensor(a, device=device, requires_grad=True) for a in floats]
    t_out = t_call(*t_in, *[torch.tensor(i) for i in ints])
    e_out = e_call(*e_in, *[ember.tensor(i, device=device) for i in ints])
    assert str(e_out.device) == device
    _close(e_out, t_out, f"{name}: forward")
    upstream = r.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream))
    e_out.backward(ember.tensor(upstream, device=device))
    for i, (t, e) in enumerate(zip(t_in, e_in)):
        _close(e.grad, t.grad, f"{name}: grad of input {i}")
    if t_mod is not None:
        t_params = dict(t_mod.named_parameters())
        assert [n for n, _ in e_mod.named_parameters()] == list(t_params)
        for key, p in e_mod.named_parameters():
            _close(p.grad, t_params[key].grad, f"{name}: grad of {key}")


FUNCTIONS = [
    ("glu", lambda F, x: F.glu(x), (2, 3, 6)),
    ("glu:dim", lambda F, x: F.glu(x, dim=1), (2, 6, 3)),
    ("hardswish", lambda F, x: F.hardswish(x * 4), (3, 7)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x * 4), (3, 7)),
    ("selu", lambda F, x: F.selu(x), (3, 7)),
    ("celu", lambda F, x: F.celu(x, alpha=0.6), (3, 7)),
    ("softsign", lambda F, x: F.softsign(x * 3), (3, 7)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x), (3, 7)),
    ("threshold", lambda F, x: F.threshold(x, 0.2, -3.0), (3, 7)),
    ("rms_norm", lambda F, x: F.rms_norm(x, (3, 4)), (2, 3, 4)),
    ("rms_norm:eps", lambda F, x: F.rms_norm(x, (4,), eps=0.5), (2, 3, 4)),
    ("max_pool1d", lambda F, x: F.max_pool1d(x, 3), (2, 3, 10)),
    ("max_pool1d:pad", lambda F, x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), (2, 3, 10)),
    ("max_pool1d:dilation", lambda F, x: F.max_pool1d(x, 2, 1, 0, 3), (3, 9)),
    ("avg_pool1d", lambda F, x: F.avg_pool1d(x, 3), (2, 3, 10)),
    ("avg_pool1d:pad", lambda F, x: F.avg_pool1d(x, 4, 3, 2, True, False), (2, 3, 10)),
    ("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 4), (2, 3, 10)),
    ("adaptive_avg_pool1d:unbatched", lambda F, x: F.adaptive_avg_pool1d(x, 3), (3, 7)),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, (3, 2)), (2, 3, 7, 5)),
    ("adaptive_max_pool2d:even", lambda F, x: F.adaptive_max_pool2d(x, 2), (2, 3, 6, 4)),
    ("adaptive_max_pool2d:none", lambda F, x: F.adaptive_max_pool2d(x, (None, 3)),
     (3, 4, 7)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,shape", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_functional_matches_torch(torch, device, name, fn, shape):
    x = rng(name).standard_normal(shape)
    _compare(torch, name, device, lambda t: fn(torch.nn.functional, t), lambda e: fn(F, e),
             [x])


def test_max_pool1d_indices_match_torch(torch):
    x = rng("max_pool1d indices").standard_normal((2, 3, 11))
    t_out, t_idx = torch.nn.functional.max_pool1d(torch.tensor(x), 3, 2, 1,
                                                  return_indices=True)
    e_out, e_idx = F.max_pool1d(ember.tensor(x), 3, 2, 1, return_indices=True)
    _close(e_out, t_out, "values")
    np.testing.assert_array_equal(to_numpy(e_idx), to_numpy(t_idx))


def _twin(torch, name, *args, **kwargs):
    """torch.nn.name and ember.nn.name in float64; torch's weights randomised (so loading
    them is visible), the ember twin loaded from torch's state_dict."""
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.randn_like(p))
    e = getattr(nn, name)(*args, **kwargs, dtype=ember.float64)
    t_state = t.state_dict()
    assert list(e.state_dict()) == list(t_state)
    assert [tuple(v.shape) for v in e.state_dict().values()] == \
        [tuple(v.shape) for v in t_state.values()]
    result = e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_state.items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    return t, e


MODULES = [
    ("PReLU", (), {}, (2, 3, 4)),
    ("PReLU", (3,), dict(init=0.1), (2, 3, 4)),
    ("RMSNorm", ((3, 4),), {}, (2, 3, 4)),
    ("RMSNorm", (4,), dict(eps=1e-2, elementwise_affine=False), (2, 3, 4)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,kwargs,shape", MODULES,
                         ids=[f"{m[0]}{m[1]}{m[2]}" for m in MODULES])
def test_parameter_modules_match_torch(torch, device, name, args, kwargs, shape):
    torch.manual_seed(3)
    t, e = _twin(torch, name, *args, **kwargs)
    assert repr(e) == repr(t)
    e.to(device)
    _compare(torch, f"{name}{args}", device, t, e,
             [rng(f"{name}{args}").standard_normal(shape)], t_mod=t, e_mod=e)


def test_parameter_modules_initialise_like_torch(torch):
    np.testing.assert_array_equal(to_numpy(nn.PReLU(4, init=0.3).weight), np.full(4, 0.3,
                                                                                 np.float32))
    np.testing.assert_array_equal(to_numpy(nn.RMSNorm((2, 3)).weight), np.ones((2, 3)))
    assert nn.RMSNorm(3, elementwise_affine=False).weight is None
    x = rng("rms eps").standard_normal((2, 3)).astype(np.float32) * 1e-4
    # eps=None is the dtype's machine epsilon, as in torch
    _close(F.rms_norm(ember.tensor(x), (3,)),
           torch.nn.functional.rms_norm(torch.tensor(x), (3,)), "float32 eps", rtol=1e-6)


STATELESS = [
    ("GLU", (), (2, 4)), ("GLU", (0,), (4, 3)), ("Hardswish", (), (3, 5)),
    ("Hardsigmoid", (), (3, 5)), ("SELU", (), (3, 5)), ("CELU", (0.5,), (3, 5)),
    ("Softsign", (), (3, 5)), ("Tanhshrink", (), (3, 5)), ("Threshold", (0.1, 20.0), (3, 5)),
    ("Softmax2d", (), (2, 3, 2, 2)), ("Softmax2d", (), (3, 2, 2)),
    ("MaxPool1d", (3,), (2, 2, 9)), ("MaxPool1d", (2, 1, 1), (2, 9)),
    ("AvgPool1d", (3,), (2, 2, 9)), ("AvgPool1d", (3, 2, 1), (2, 2, 9)),
    ("AdaptiveAvgPool1d", (4,), (2, 2, 9)), ("AdaptiveMaxPool2d", ((2, 3),), (2, 2, 5, 7)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,shape", STATELESS,
                         ids=[f"{m[0]}{m[1]}" for m in STATELESS])
def test_stateless_modules_match_torch(torch, device, name, args, shape):
    t, e = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict()) == []
    x = rng(f"{name}{args}").standard_normal(shape) * 3
    _compare(torch, f"{name}{args}", device, t, e, [x])


def test_inplace_activations_write_their_input(torch):
    x = rng("inplace").standard_normal((3, 4)) * 4
    for name, args in [("Hardswish", ()), ("Hardsigmoid", ()), ("SELU", ()), ("CELU", (0.5,)),
                       ("Threshold", (0.1, 2.0))]:
        e_in, t_in = ember.tensor(x), torch.tensor(x)
        e_out = getattr(nn, name)(*args, inplace=True)(e_in)
        t_out = getattr(torch.nn, name)(*args, inplace=True)(t_in)
        _close(e_in, t_in, name)
        _close(e_out, t_out, name)


BAGS = [
    ("2d-mean", dict(mode="mean"), "2d", False),
    ("2d-sum-weights", dict(mode="sum"), "2d", True),
    ("2d-max", dict(mode="max"), "2d", False),
    ("1d-mean", dict(mode="mean"), "1d", False),
    ("1d-sum-weights", dict(mode="sum"), "1d", True),
    ("1d-max", dict(mode="max"), "1d", False),
    ("1d-mean-padding", dict(mode="mean", padding_idx=2), "1d", False),
    ("1d-sum-last-offset", dict(mode="sum", include_last_offset=True), "1d", True),
    ("2d-max-padding", dict(mode="max", padding_idx=0), "2d", False),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kwargs,layout,weighted", BAGS, ids=[b[0] for b in BAGS])
def test_embedding_bag_matches_torch(torch, device, name, kwargs, layout, weighted):
    r = rng(name)
    torch.manual_seed(5)
    t, e = _twin(torch, "EmbeddingBag", 6, 3, **kwargs)
    assert repr(e) == repr(t)
    e.to(device)
    if layout == "2d":
        ints = [r.integers(0, 6, (4, 3))]
        if "padding_idx" in kwargs:
            ints[0][1] = 0                       # a bag of padding only gives zeros
    else:
        # bags of 2, 0 (an empty bag gives zeros), 4 and 3 entries
        ints = [r.integers(0, 6, (9,)), np.array([0, 2, 2, 6])]
        if kwargs.get("include_last_offset"):
            ints[1] = np.array([0, 2, 2, 6, 9])
    floats = [r.standard_normal(ints[0].shape)] if weighted else []
    if weighted:
        def t_call(w, *i):
            return t(*i, per_sample_weights=w)

        def e_call(w, *i):
            return e(*i, per_sample_weights=w)
    else:
        t_call, e_call = t, e
    _compare(torch, name, device, t_call, e_call, floats, ints, t_mod=t, e_mod=e)


def test_embedding_bag_errors():
    bag = nn.EmbeddingBag(5, 2)
    with pytest.raises(ember.EmberError, match="per_sample_weights is only supported"):
        bag(ember.tensor([[1, 2]]), per_sample_weights=ember.ones(1, 2))
    with pytest.raises(ember.EmberError, match=r"offsets\[0\] has to be 0"):
        bag(ember.tensor([1, 2, 3]), ember.tensor([1, 2]))
    with pytest.raises(ember.EmberError, match="needs 1-D offsets"):
        bag(ember.tensor([1, 2, 3]))
    with pytest.raises(ember.EmberError, match="offsets has to be None"):
        bag(ember.tensor([[1, 2]]), ember.tensor([0]))
    with pytest.raises(ember.EmberError, match="mode must be"):
        nn.EmbeddingBag(5, 2, mode="median")


def test_parameter_list_matches_torch(torch):
    values = [rng(f"plist{i}").standard_normal((i + 1, 2)) for i in range(3)]
    t = torch.nn.ParameterList([torch.nn.Parameter(torch.tensor(v)) for v in values[:2]])
    e = nn.ParameterList([nn.Parameter(ember.tensor(v)) for v in values[:2]])
    t.append(torch.nn.Parameter(torch.tensor(values[2])))
    e.append(ember.tensor(values[2]))             # a plain tensor becomes a Parameter
    assert len(e) == len(t) == 3
    assert list(e.state_dict()) == list(t.state_dict()) == ["0", "1", "2"]
    assert [n for n, _ in e.named_parameters()] == ["0", "1", "2"]
    assert isinstance(e[2], nn.Parameter) and e[-1] is e[2] and e[2].requires_grad
    assert [tuple(p.shape) for p in e] == [tuple(p.shape) for p in t]
    e.extend([nn.Parameter(ember.zeros(1))])
    e += [nn.Parameter(ember.ones(2))]
    assert len(e) == 5 and len(list(e.parameters())) == 5 and len(e[1:4]) == 3
    # a model holding one: torch's state_dict loads, gradients reach each element
    model_t, model_e = torch.nn.Module(), nn.Module()
    model_t.ws, model_e.ws = t, nn.ParameterList([nn.Parameter(ember.zeros(i + 1, 2))
                                                 for i in range(3)])
    model_e.load_state_dict({k: ember.tensor(v.detach().numpy())
                             for k, v in model_t.state_dict().items()})
    assert list(model_e.state_dict()) == ["ws.0", "ws.1", "ws.2"]
    total = sum((p * p).sum() for p in model_e.ws)
    total.backward()
    for p, v in zip(model_e.ws, values):
        _close(p.grad, 2 * v, "grad")
    with pytest.raises(ember.EmberError, match="out of range"):
        e[7]


def test_parameter_dict_matches_torch(torch):
    a, b = (rng(k).standard_normal((2, 2)) for k in "ab")
    t = torch.nn.ParameterDict({"w": torch.nn.Parameter(torch.tensor(a))})
    e = nn.ParameterDict({"w": nn.Parameter(ember.tensor(a))})
    t["b"] = torch.nn.Parameter(torch.tensor(b))
    e["b"] = ember.tensor(b)
    assert list(e.state_dict()) == list(t.state_dict()) == ["w", "b"]
    assert list(e) == list(e.keys()) == ["w", "b"] and "b" in e and len(e) == 2
    assert isinstance(e["b"], nn.Parameter)
    assert [n for n, _ in e.named_parameters()] == ["w", "b"]
    e.load_state_dict({k: ember.tensor(v.detach().numpy() * 2)
                       for k, v in t.state_dict().items()})
    _close(e["w"], a * 2, "loaded")
    ((e["w"] * e["b"]).sum()).backward()
    _close(e["w"].grad, b * 2, "grad")
    e.update({"c": nn.Parameter(ember.ones(1))})
    assert e.pop("w") is not None and list(e) == ["b", "c"]
    assert e.get("w") is None and len(list(e.parameters())) == 2
    with pytest.raises(KeyError, match="no key 'w'"):
        e["w"]


@pytest.mark.parametrize("device", DEVICES)
def test_parameter_containers_move_to_device(device):
    model = nn.Module()
    model.ws = nn.ParameterList([nn.Parameter(ember.ones(2)), nn.Parameter(ember.ones(3))])
    model.named = nn.ParameterDict({"k": nn.Parameter(ember.ones(2))})
    model.to(device)
    assert [str(p.device) for p in model.parameters()] == [device] * 3
    (model.ws[0] * model.named["k"]).sum().backward()
    _close(model.ws[0].grad, np.ones(2), "grad")


@pytest.mark.parametrize("device", DEVICES)
def test_gumbel_softmax(device):
    logits = ember.tensor(rng("gumbel").standard_normal((4, 5)), device=device,
                          requires_grad=True)
    ember.manual_seed(7)
    soft = F.gumbel_softmax(logits, tau=0.5)
    ember.manual_seed(7)
    again = F.gumbel_softmax(logits.detach().cpu(), tau=0.5)   # the same host stream
    _close(soft, to_numpy(again), "seeded", rtol=1e-12)
    _close(soft.sum(-1), np.ones(4), "rows sum to one")
    ember.manual_seed(7)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    one_hot = np.eye(5)[to_numpy(soft.cpu()).argmax(-1)]
    np.testing.assert_array_equal(to_numpy(hard.cpu()), one_hot)
    # straight-through: the hard sample's gradient is the soft sample's
    upstream = ember.tensor(rng("gumbel upstream").standard_normal((4, 5)), device=device)
    (g_hard,) = ember.autograd.grad(hard, logits, upstream)
    (g_soft,) = ember.autograd.grad(soft, logits, upstream)
    _close(g_hard, to_numpy(g_soft.cpu()), "straight-through", rtol=1e-10)
    ember.manual_seed(8)
    assert not np.array_equal(to_numpy(F.gumbel_softmax(logits).cpu()), to_numpy(soft.cpu()))


def test_gumbel_softmax_samples_the_softmax():
    """argmax of logits + Gumbel noise is a draw from softmax(logits)."""
    p = np.array([0.5, 0.3, 0.15, 0.05])
    logits = ember.tensor(np.log(np.tile(p, (4000, 1))))
    ember.manual_seed(11)
    hard = F.gumbel_softmax(logits, hard=True, dim=1)
    np.testing.assert_allclose(to_numpy(hard).mean(0), p, atol=0.025)
    ember.manual_seed(11)
    columns = F.gumbel_softmax(logits.mT, hard=True, dim=0)     # along another dim
    np.testing.assert_array_equal(to_numpy(columns).sum(0), np.ones(4000))
    np.testing.assert_allclose(to_numpy(columns).mean(1), p, atol=0.025)


def test_errors_name_the_function():
    with pytest.raises(ember.ShapeError, match="glu: halving dimension must be even"):
        F.glu(ember.ones(2, 3))
    with pytest.raises(ember.EmberError, match="return_indices=True is not in ember yet"):
        F.adaptive_max_pool2d(ember.ones(1, 1, 4, 4), 2, return_indices=True)
    with pytest.raises(ember.ShapeError, match="rms_norm: input of shape"):
        F.rms_norm(ember.ones(2, 3), (4,))
    with pytest.raises(ember.ShapeError, match="prelu: weight has 3 values"):
        nn.PReLU(3)(ember.ones(2, 4))
    with pytest.raises(ember.ShapeError, match="max_pool1d: expected a 2-D"):
        F.max_pool1d(ember.ones(2, 2, 2, 2), 2)
    with pytest.raises(ember.ShapeError, match="Softmax2d: expected a 3-D or 4-D"):
        nn.Softmax2d()(ember.ones(2, 2))
