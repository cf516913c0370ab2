"""Per-sample gradients of torch's tutorial CNN (batch 64, 1x28x28 inputs; --small: the
tests' CNN on 1x8x8): ember's
vmap(grad) against a loop of single-sample backward passes, and against torch.func.vmap,
one thread each, same run (medians).

    python benchmarks/func_per_sample_grads.py [--device opencl:0] [--batch 64]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def median_ms(fn, repeat=7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def setup(lib, device, batch, small=False):
    nn, F = lib.nn, lib.nn.functional
    c1, c2, hw, flat = (4, 8, 8, 32) if small else (32, 64, 28, 9216)

    class SimpleCNN(nn.Module):       # the torch.func per-sample-gradients tutorial's model
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, c1, 3, 1)
            self.conv2 = nn.Conv2d(c1, c2, 3, 1)
            self.fc1 = nn.Linear(flat, 128 if not small else 16)
            self.fc2 = nn.Linear(128 if not small else 16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    rng = np.random.default_rng(0)
    model = SimpleCNN().to(device)
    data = lib.tensor(rng.standard_normal((batch, 1, hw, hw)).astype(np.float32),
                      device=device)
    targets = lib.tensor(rng.integers(0, 10, batch), device=device)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = lib.func.functional_call(model, (params, buffers),
                                               (sample.unsqueeze(0),))
        return F.nll_loss(predictions, target.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(compute_loss), in_dims=(None, None, 0, 0))

    def vmapped():
        out = per_sample(params, buffers, data, targets)
        out["fc2.bias"].sum().item()          # wait for the device

    def loop():
        outs = []
        for i in range(batch):
            loss = F.nll_loss(model(data[i:i + 1]), targets[i:i + 1])
            outs.append(lib.autograd.grad(loss, list(model.parameters())))
        outs[-1][-1].sum().item()
    return vmapped, loop


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--small", action="store_true",
                    help="the tests' small CNN (1x8x8 inputs, 4 and 8 channels)")
    args = ap.parse_args()
    import ember
    import torch
    torch.set_num_threads(1)
    ev, el = setup(ember, args.device, args.batch, args.small)
    tv, tl = setup(torch, "cpu", args.batch, args.small)
    r = {"ember vmap": median_ms(ev), "ember loop": median_ms(el),
         "torch vmap (1 thread)": median_ms(tv), "torch loop (1 thread)": median_ms(tl)}
    for k, v in r.items():
        print(f"{k:24s} {v:9.1f} ms")
    print(f"ember loop / ember vmap: {r['ember loop'] / r['ember vmap']:.1f}x; "
          f"ember vmap / torch vmap: {r['ember vmap'] / r['torch vmap (1 thread)']:.2f}x")


if __name__ == "__main__":
    main()
