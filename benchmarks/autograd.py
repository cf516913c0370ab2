"""Autograd cost, ember vs PyTorch CPU side by side (one run, medians, ratios).

- a chain of 50 elementwise ops on 32x32 float32 tensors: forward, and forward + backward;
  the backward overhead per node is (forward+backward - forward) / 50;
- one step (forward, backward) of a 3-layer MLP 784-256-256-10 on a batch of 64.

    python benchmarks/autograd.py
"""
from __future__ import annotations

import statistics
import time

import ember
import numpy as np


def median_ms(fn, repeat=30) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def chain(lib, x, grad: bool):
    y = x
    for i in range(25):               # 2 ops per step: 50 nodes
        y = (y * 0.999).tanh() if i % 2 else (y + 0.001).sigmoid()
    if grad:
        y.sum().backward()
    return y


def mlp_step(params, x, target, lib_softmax):
    w1, b1, w2, b2, w3, b3 = params
    h = (x @ w1 + b1).relu()
    h = (h @ w2 + b2).relu()
    out = h @ w3 + b3
    loss = -(lib_softmax(out) * target).sum() / x.shape[0]
    loss.backward()
    return loss


def main() -> None:
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    x32 = rng.standard_normal((32, 32)).astype(np.float32)
    results = {}

    xe = ember.tensor(x32, requires_grad=True)
    results["ember"] = (median_ms(lambda: chain(ember, xe.detach(), False)),
                        median_ms(lambda: chain(ember, xe, True)))
    if torch is not None:
        xt = torch.tensor(x32, requires_grad=True)
        with torch.no_grad():
            pass
        results["torch"] = (median_ms(lambda: chain(torch, xt.detach(), False)),
                            median_ms(lambda: chain(torch, xt, True)))

    sizes = [(784, 256), (256, 256), (256, 10)]
    host = []
    for fan_in, fan_out in sizes:
        host.append(rng.standard_normal((fan_in, fan_out)).astype(np.float32) * 0.05)
        host.append(np.zeros(fan_out, np.float32))
    xb = rng.standard_normal((64, 784)).astype(np.float32)
    tb = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    pe = [ember.tensor(p, requires_grad=True) for p in host]
    step = {"ember": median_ms(lambda: mlp_step(pe, ember.tensor(xb), ember.tensor(tb),
                                                lambda o: o.log_softmax(-1)), 20)}
    if torch is not None:
        pt = [torch.tensor(p, requires_grad=True) for p in host]
        step["torch"] = median_ms(lambda: mlp_step(pt, torch.tensor(xb), torch.tensor(tb),
                                                   lambda o: o.log_softmax(-1)), 20)

    print("50-op elementwise chain, 32x32 float32 (median ms)")
    print(f"{'':8}{'forward':>10}{'fwd+bwd':>10}{'bwd/node us':>13}")
    per_node = {}
    for lib, (fwd, both) in results.items():
        per_node[lib] = (both - fwd) / 50 * 1e3
        print(f"{lib:8}{fwd:10.3f}{both:10.3f}{per_node[lib]:13.2f}")
    if "torch" in results:
        print(f"ember/torch backward cost per node: {per_node['ember'] / per_node['torch']:.2f}x"
              " (target <= 1.5x)")
    print("\n3-layer MLP 784-256-256-10, batch 64, forward+backward (median ms)")
    for lib, ms in step.items():
        print(f"{lib:8}{ms:10.3f}")
    if "torch" in step:
        print(f"ember/torch: {step['ember'] / step['torch']:.2f}x")


if __name__ == "__main__":
    main()
