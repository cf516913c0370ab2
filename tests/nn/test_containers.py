"""ParameterList and ParameterDict (nn.containers) against PyTorch, on the CPU and every
device (Sequential, ModuleList and ModuleDict: test_module.py)."""
from __future__ import annotations

import ember
import ember.nn as nn
import numpy as np
import pytest
from nn_helpers import close, cpu_and_devices, rng

DEVICES = cpu_and_devices()


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
        close(p.grad, 2 * v, "grad")
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
    close(e["w"], a * 2, "loaded")
    ((e["w"] * e["b"]).sum()).backward()
    close(e["w"].grad, b * 2, "grad")
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
    close(model.ws[0].grad, np.ones(2), "grad")
