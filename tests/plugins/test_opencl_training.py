"""On opencl:0: gradients of composites match the CPU's, nothing falls back to the CPU, and
a short training run reaches the CPU's numbers."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import dispatch, nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _composites():
    """name -> (function of tensors, host inputs); each uses many primitives and their VJPs."""
    rng = np.random.default_rng(0)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)      # noqa: E731
    labels = np.array([3, 0, 4, 4, 1], dtype=np.int64)
    return {
        "cross_entropy": (lambda x: F.cross_entropy(x, ember.tensor(labels, device=x.device)),
                          [f(5, 6)]),
        "log_softmax_logsumexp": (lambda x: (F.log_softmax(x, 1) * F.softmax(x, 0)).sum()
                                  + ember.logsumexp(x, 1).sum(), [f(4, 7)]),
        "layer_norm_gelu": (lambda x, w: F.gelu(F.layer_norm(x, (6,), weight=w)).var(),
                            [f(3, 6), f(6)]),
        "conv_pool": (lambda x, w: F.max_pool2d(F.conv2d(x, w, padding=1, stride=1), 2)
                      .tanh().sum(), [f(2, 3, 6, 6), f(4, 3, 3, 3)]),
        "embedding_gather": (lambda w: (F.embedding(ember.tensor([[1, 1], [4, 1]],
                                                                 device=w.device), w) ** 2)
                             .mean() + ember.gather(w, 1, ember.tensor(
                                 [[0], [2], [2], [1], [0]], device=w.device)).sum(),
                             [f(5, 3)]),
        "matmul_broadcast": (lambda a, b: (a @ b).sigmoid().amax(dim=(0, 2)).sum(),
                             [f(2, 1, 4, 5), f(3, 5, 2)]),
        "index_and_cat": (lambda x: ember.cat([x[:, ::2], x[[2, 0, 2]].flip(1)], 1)
                          .clamp(-0.5, 0.5).prod(), [f(3, 4)]),
    }


COMPOSITES = _composites()


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_gradients_match_cpu(opencl_device, name):
    fn, hosts = COMPOSITES[name]
    grads = {}
    for device in ("cpu", opencl_device):
        inputs = [ember.tensor(h, device=device, requires_grad=True) for h in hosts]
        with ember.fallback("error"):
            out = fn(*inputs)
            out.backward()
        grads[device] = [out.detach().numpy()] + [t.grad.numpy() for t in inputs]
    for got, want in zip(grads[opencl_device], grads["cpu"]):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", ["cross_entropy", "conv_pool", "index_and_cat"])
def test_gradcheck_on_device(opencl_device, name):
    caps = ember.device(opencl_device).backend.capabilities(0).dtypes
    if "float64" not in caps:
        pytest.skip("this OpenCL device has no float64 for finite differences")
    fn, hosts = COMPOSITES[name]
    inputs = tuple(ember.tensor(h.astype(np.float64), device=opencl_device, requires_grad=True)
                   for h in hosts)
    with ember.fallback("error"):
        assert gradcheck(fn, inputs)


def _digits():
    from importlib import resources
    with resources.files("ember.data").joinpath("digits.npz").open("rb") as fh:
        data = np.load(fh)
        images, labels = data["images"], data["labels"]
    x = (images.reshape(len(images), -1) / 16.0).astype(np.float32)
    return x[:512], labels[:512].astype(np.int64)


def _train(device, steps=40):
    """A 64-32-10 MLP with manual SGD; returns the losses, final accuracy and weights."""
    x_host, y_host = _digits()
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((64, 32)).astype(np.float32) * 0.2, np.zeros(32, np.float32),
              rng.standard_normal((32, 10)).astype(np.float32) * 0.2, np.zeros(10, np.float32)]
    w1, b1, w2, b2 = (ember.tensor(p, device=device, requires_grad=True) for p in params)
    x, y = ember.tensor(x_host, device=device), ember.tensor(y_host, device=device)
    losses = []
    for step in range(steps):
        batch = slice((step * 128) % 512, (step * 128) % 512 + 128)
        logits = (x[batch] @ w1 + b1).relu() @ w2 + b2
        loss = F.cross_entropy(logits, y[batch])
        loss.backward()
        with ember.no_grad():
            for p in (w1, b1, w2, b2):
                p -= 0.5 * p.grad
                p.grad = None
        losses.append(loss.item())
    with ember.no_grad():
        accuracy = ((x @ w1 + b1).relu() @ w2 + b2).argmax(1).eq(y).float().mean().item()
    return np.array(losses), accuracy, [p.detach().numpy() for p in (w1, b1, w2, b2)]


def test_training_run_matches_cpu(opencl_device):
    dispatch.fallback_counts.clear()
    with ember.fallback("error"):
        losses, accuracy, weights = _train(opencl_device)
    cpu_losses, cpu_accuracy, cpu_weights = _train("cpu")
    assert losses[-1] < 0.5 * losses[0]                 # it learns
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-3, atol=1e-4)
    assert abs(accuracy - cpu_accuracy) <= 2 / 512
    for got, want in zip(weights, cpu_weights):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
    assert not [k for k in dispatch.fallback_counts if k[1] == "opencl"]


def test_module_training_with_optimizer(opencl_device):
    """nn.Module + optimizer on opencl:0 follow the CPU step for step."""
    def run(device):
        ember.manual_seed(3)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(64, 10)).to(device)
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x_host, y_host = _digits()
        x = ember.tensor(x_host[:64].reshape(64, 1, 8, 8), device=device)
        y = ember.tensor(y_host[:64], device=device)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    with ember.fallback("error"):
        got = run(opencl_device)
    np.testing.assert_allclose(got, run("cpu"), rtol=1e-3, atol=1e-4)
