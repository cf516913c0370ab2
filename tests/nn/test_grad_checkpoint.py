"""ember.utils.checkpoint: the same gradients as without it, by recomputing, on the CPU and
opencl:0."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl, rng, to_numpy

DEVICES = cpu_and_opencl()


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_gradients_equal_plain(device):
    from ember.utils.checkpoint import checkpoint, checkpoint_sequential
    assert ember.utils.checkpoint.checkpoint is checkpoint      # torch.utils.checkpoint...
    nn = ember.nn
    ember.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Dropout(0.5), nn.Linear(6, 3),
                          nn.ReLU(), nn.Linear(3, 2)).to(device)
    x = ember.tensor(rng("ckpt").standard_normal((5, 4)), dtype=ember.float32,
                     device=device, requires_grad=True)

    def grads(run):
        model.zero_grad()
        x.grad = None
        ember.manual_seed(11)        # the same dropout mask in every variant
        run().square().sum().backward()
        return [to_numpy(p.grad) for p in model.parameters()] + [to_numpy(x.grad)]

    plain = grads(lambda: model(x))
    for variant in (lambda: checkpoint(model, x, use_reentrant=False),
                    lambda: checkpoint(lambda t, scale: model(t) * scale, x, 1.0,
                                       use_reentrant=True),
                    lambda: checkpoint_sequential(model, 3, x, use_reentrant=False)):
        for a, b in zip(grads(variant), plain):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # an input that needs no grad: the parameters inside still get theirs
    model.zero_grad()
    checkpoint(model, x.detach(), use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_checkpoint_recomputes_instead_of_keeping():
    from ember.utils.checkpoint import checkpoint
    calls = []

    def f(t):
        calls.append(1)
        return (t.sin() * 2).exp()

    x = ember.tensor([0.1, 0.2], requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2       # the backward ran the function again
    expected = np.exp(2 * np.sin([0.1, 0.2])) * 2 * np.cos([0.1, 0.2])
    np.testing.assert_allclose(to_numpy(x.grad), expected, rtol=1e-6)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(f, x)
    with pytest.raises(ember.EmberError, match="must return a Tensor"):
        checkpoint(lambda t: 3, x, use_reentrant=False)
