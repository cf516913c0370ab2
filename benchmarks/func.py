"""Per-sample gradients of torch's tutorial CNN (torch.func's "per-sample-gradients"
tutorial: batch 64, 1x28x28 inputs, conv 32 and 64 channels; --small: the tests' CNN on
1x8x8 inputs, 4 and 8 channels): ember's vmap(grad) against a loop of single-sample backward
passes, ember.compile of the vmapped step, and torch.func.vmap and torch's loop, all in one
process on one BLAS thread each (medians, timed round robin so machine load hits all alike).

    python benchmarks/func.py [--small] [--device opencl:0] [--batch 64] [--repeat 7]

Prints ms per batch and the ratios: ember loop / ember vmap (the issue's >= 5x target) and
ember vmap / torch vmap (within 2x), and torch's own loop / vmap for scale.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from train_step import median_ms, pin_blas_threads  # noqa: E402


def setup(lib, device, batch, small=False):
    nn, F = lib.nn, lib.nn.functional
    c1, c2, hw, flat = (4, 8, 8, 32) if small else (32, 64, 28, 9216)
    hidden = 16 if small else 128

    class SimpleCNN(nn.Module):       # the torch.func per-sample-gradients tutorial's model
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, c1, 3, 1)
            self.conv2 = nn.Conv2d(c1, c2, 3, 1)
            self.fc1 = nn.Linear(flat, hidden)
            self.fc2 = nn.Linear(hidden, 10)

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
        return out

    def loop():
        outs = []
        for i in range(batch):
            loss = F.nll_loss(model(data[i:i + 1]), targets[i:i + 1])
            outs.append(lib.autograd.grad(loss, list(model.parameters())))
        outs[-1][-1].sum().item()
        return outs
    steps = {"vmap": vmapped, "loop": loop}
    if lib.__name__ == "ember":
        compiled = lib.compile(lambda d, t: per_sample(params, buffers, d, t))

        def vmapped_compiled():
            out = compiled(data, targets)
            out["fc2.bias"].sum().item()
            return out
        steps["compiled vmap"] = vmapped_compiled
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--small", action="store_true",
                    help="the tests' small CNN (1x8x8 inputs, 4 and 8 channels)")
    args = ap.parse_args()
    pin_blas_threads(args.threads)
    import ember
    import torch
    torch.set_num_threads(args.threads)
    e = setup(ember, args.device, args.batch, args.small)
    t = setup(torch, "cpu", args.batch, args.small)
    # the compiled step computes what the eager one does
    want, got = e["vmap"](), e["compiled vmap"]()
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-6)
    steps = {f"ember {k}": v for k, v in e.items()}
    steps.update({f"torch {k}": v for k, v in t.items()})
    r = median_ms(steps, args.repeat)
    model = "small CNN (1x8x8)" if args.small else "tutorial CNN (1x28x28)"
    print(f"per-sample gradients, {model}, batch {args.batch}, {args.device}, "
          f"{args.threads} thread(s)")
    for k, v in r.items():
        print(f"  {k:20s} {v:9.1f} ms")
    print(f"  ember loop / ember vmap:          {r['ember loop'] / r['ember vmap']:5.1f}x")
    print(f"  ember loop / ember compiled vmap: "
          f"{r['ember loop'] / r['ember compiled vmap']:5.1f}x")
    print(f"  ember vmap / torch vmap:          {r['ember vmap'] / r['torch vmap']:5.2f}x")
    print(f"  torch loop / torch vmap:          {r['torch loop'] / r['torch vmap']:5.1f}x")


if __name__ == "__main__":
    main()
