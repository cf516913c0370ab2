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
    # any output, as torch's (neither mode asks for tensors)
    for reentrant in (False, True):
        assert checkpoint(lambda t: 3, x, use_reentrant=reentrant) == 3
        out, five = checkpoint(lambda t: (t * 2, 5), x, use_reentrant=reentrant)
        assert five == 5 and out.requires_grad


def test_requires_grad_and_gradients_as_torch_in_both_modes(torch):
    """use_reentrant=False: the output requires grad as without checkpointing (parameters
    inside count); True: only when a tensor input does (torch warns, and the parameters
    inside get no gradient).  Gradients of the parameters equal torch's in every case."""
    import torch.utils.checkpoint as tc
    from ember.utils.checkpoint import checkpoint
    e_lin, t_lin = ember.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    e_lin.load_state_dict({k: ember.tensor(v.detach().numpy())
                           for k, v in t_lin.state_dict().items()})
    x = rng("ckpt-rg").standard_normal((4, 3)).astype(np.float32)
    for reentrant in (False, True):
        for input_grad in (False, True):
            ex = ember.tensor(x, requires_grad=input_grad)
            tx = torch.tensor(x, requires_grad=input_grad)
            e_lin.zero_grad(), t_lin.zero_grad()
            with warnings_as_list() as caught:
                eo = checkpoint(lambda t: e_lin(t).tanh(), ex, use_reentrant=reentrant)
                to = tc.checkpoint(lambda t: t_lin(t).tanh(), tx, use_reentrant=reentrant)
            assert eo.requires_grad == to.requires_grad, (reentrant, input_grad)
            warned = [str(w.message) for w in caught
                      if "None of the inputs have requires_grad" in str(w.message)]
            assert len(warned) == (2 if reentrant and not input_grad else 0)   # both warn
            if to.requires_grad:
                g = rng("ckpt-g").standard_normal((4, 2)).astype(np.float32)
                eo.backward(ember.tensor(g))
                to.backward(torch.tensor(g))
                np.testing.assert_allclose(to_numpy(e_lin.weight.grad),
                                           t_lin.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
                if input_grad:
                    np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(),
                                               rtol=1e-5, atol=1e-6)


class warnings_as_list:
    def __enter__(self):
        import warnings
        self.inner = warnings.catch_warnings(record=True)
        caught = self.inner.__enter__()
        warnings.simplefilter("always")
        return caught

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)


def test_determinism_check_and_its_settings():
    from ember.utils.checkpoint import CheckpointError, checkpoint
    x = ember.tensor([0.3, 0.6, 0.9], requires_grad=True)
    sizes = iter([3, 2])

    def changing(t):                 # the recomputation saves a tensor of another shape
        return t.sin()[:next(sizes)].exp()

    y = checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata than during the forward"):
        y.sum().backward()
    assert isinstance(CheckpointError("x"), RuntimeError)
    runs = iter([False, True])

    def longer(t):                   # the recomputation saves one tensor more, at the end
        y = t.sin().exp()
        if next(runs):
            y.cos()
        return y

    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        checkpoint(longer, x, use_reentrant=False).sum().backward()
    runs = iter([False, True])
    x.grad = None
    checkpoint(longer, x, use_reentrant=False, determinism_check="none").sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), np.exp(np.sin([0.3, 0.6, 0.9])) *
                               np.cos([0.3, 0.6, 0.9]), rtol=1e-6)    # not checked: used
    with pytest.raises(ValueError, match=r"should be one of \['default', 'none'\]"):
        checkpoint(changing, x, use_reentrant=False, determinism_check="bogus")
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(changing, x, use_reentrant=True, debug=True)
    with pytest.raises(ember.errors.NotInEmberError, match="debug=True"):
        checkpoint(changing, x, use_reentrant=False, debug=True)


@pytest.mark.parametrize("device", DEVICES)
def test_nested_and_retained_graphs(device):
    from ember.utils.checkpoint import checkpoint
    x = ember.tensor(rng("ckpt-n").standard_normal((3, 4)), dtype=ember.float32,
                     device=device, requires_grad=True)

    def inner(t):
        return (t * t).sin()

    def outer(t):
        return checkpoint(inner, t.exp(), use_reentrant=False).tanh()

    inner(x.exp()).tanh().sum().backward()           # without checkpointing
    want = to_numpy(x.grad)
    x.grad = None
    y = checkpoint(outer, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(to_numpy(x.grad), want, rtol=1e-5, atol=1e-6)
    y.backward()                     # a second pass through the retained graph
    np.testing.assert_allclose(to_numpy(x.grad), 2 * want, rtol=1e-5, atol=1e-6)
