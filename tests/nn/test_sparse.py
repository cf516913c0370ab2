"""Embedding and EmbeddingBag (nn.sparse) against PyTorch, on the CPU and every device."""
from __future__ import annotations

import ember
import ember.nn as nn
import numpy as np
import pytest
from nn_helpers import (
    check_layer,
    compare,
    copy_weights,
    cpu_and_devices,
    loaded_twin,
    rng,
    to_numpy,
    twin,
)

DEVICES = cpu_and_devices()


def test_embedding_padding_idx(torch):
    t, e = twin(torch, "Embedding", 10, 4, padding_idx=2)
    assert np.all(to_numpy(e.weight)[2] == 0)
    idx = np.array([[1, 2, 3], [2, 9, 1]])
    check_layer(torch, t, e, idx)
    assert np.all(to_numpy(e.weight.grad)[2] == 0)
    assert repr(e) == repr(t)


def test_embedding_max_norm(torch):
    t, e = twin(torch, "Embedding", 6, 3, max_norm=1.0)
    copy_weights(t, e)
    idx = np.array([0, 3, 3, 5])
    t(torch.tensor(idx))
    e(ember.tensor(idx))
    np.testing.assert_allclose(to_numpy(e.weight), to_numpy(t.weight), rtol=1e-6)


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
    t, e = loaded_twin(torch, "EmbeddingBag", 6, 3, **kwargs)
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
    compare(torch, name, device, t_call, e_call, floats, ints, t_mod=t, e_mod=e)


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


def test_errors_name_the_layer():
    with pytest.raises(TypeError, match="embedding: expected an integer index"):
        nn.Embedding(3, 2)(ember.randn(2))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_functional_embedding_bag_matches_torch(torch, mode):
    """F.embedding_bag (torch's functional form; EmbeddingBag calls it): 1-D input with
    offsets (include_last_offset too), 2-D input, padding_idx, per_sample_weights;
    values and the weight's gradient for a random upstream gradient."""
    r = np.random.default_rng(5)
    w = r.standard_normal((7, 3))
    flat, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 6]), np.array([0, 3, 3, 6])
    calls = [dict(input=flat, offsets=offsets), dict(input=flat, offsets=np.append(offsets, 8),
                                                     include_last_offset=True),
             dict(input=flat.reshape(2, 4), padding_idx=4)]
    if mode == "sum":
        calls.append(dict(input=flat, offsets=offsets, per_sample_weights=r.random(8)))
    for call in calls:
        got = {}
        for lib in (torch, ember):
            weight = lib.tensor(w, requires_grad=True)
            kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v
                      for k, v in call.items()}
            out = lib.nn.functional.embedding_bag(weight=weight, mode=mode, **kwargs)
            up = lib.tensor(np.random.default_rng(6).standard_normal(tuple(out.shape)))
            (out * up).sum().backward()
            got[lib.__name__] = (out.detach().numpy(), weight.grad.numpy())
        for a, b in zip(got["ember"], got["torch"]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=str(call))
