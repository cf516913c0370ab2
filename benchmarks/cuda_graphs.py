"""Train steps on a GPU: ember eager, ember.compile with the generic replay, ember.compile
with CUDA graphs (and fused elementwise kernels), raw CuPy's nothing, PyTorch CUDA eager.

    python benchmarks/cuda_graphs.py [--steps 50] [--device cuda:0] [--json FILE]

Models: the MLP 784-256-256-10 at batch 128, and a wider one 784-2048-2048-10 at batch
512 (where the kernels, not their launches, take the time); one step = forward,
cross-entropy, backward, Adam(capturable=True).  Each implementation is checked against
eager first (losses of 5 steps from the same weights and data), then timed round robin
with a device synchronize per step; medians in ms.  Each compiled variant says whether it
replayed from graphs, and why not where it did not.  Needs a GPU; where none runs it says
so and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
import numpy as np


def build(widths, device, variant):
    ember.manual_seed(0)
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1]).to(device)
    opt = optim.Adam(model.parameters(), lr=1e-3, capturable=True)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    if variant == "eager":
        return step
    return ember.compile(step)


def replay_of(run):
    entries = list(getattr(run, "_entries", {}).values())
    return entries[0].replay if entries else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if not ember.cuda.is_available():
        print("no CUDA device here:", ember.cuda.unavailable_reason().splitlines()[0])
        return
    device = args.device
    sync = ember.cuda.synchronize
    try:
        import torch
        torch_ok = torch.cuda.is_available()
    except ImportError:
        torch, torch_ok = None, False
    report = {}
    for title, widths, batch in (("MLP 784-256-256-10 b=128", (784, 256, 256, 10), 128),
                                 ("MLP 784-2048-2048-10 b=512", (784, 2048, 2048, 10), 512)):
        rng = np.random.default_rng(0)
        xs = [ember.tensor(rng.standard_normal((batch, 784)), dtype=ember.float32,
                           device=device) for _ in range(4)]
        ys = [ember.tensor(rng.integers(0, 10, batch), device=device) for _ in range(4)]
        steps = {}
        for variant, env in (("eager", "1"), ("compiled, generic replay", "0"),
                             ("compiled, CUDA graphs", "1")):
            os.environ["EMBER_CUDA_GRAPHS"] = env
            steps[variant] = build(widths, device, variant)
        losses = {}
        for variant, step in steps.items():
            os.environ["EMBER_CUDA_GRAPHS"] = "0" if "generic" in variant else "1"
            losses[variant] = [float(step(xs[k % 4], ys[k % 4]).item()) for k in range(8)]
        if torch_ok:
            torch.manual_seed(0)
            tl = []
            for a, b in zip(widths, widths[1:]):
                tl += [torch.nn.Linear(a, b), torch.nn.ReLU()]
            tmodel = torch.nn.Sequential(*tl[:-1]).cuda()
            topt = torch.optim.Adam(tmodel.parameters(), lr=1e-3, capturable=True)
            txs = [torch.from_numpy(x.cpu().numpy()).cuda() for x in xs]
            tys = [torch.from_numpy(y.cpu().numpy()).cuda() for y in ys]

            def tstep(x, y, tmodel=tmodel, topt=topt):
                topt.zero_grad()
                loss = torch.nn.functional.cross_entropy(tmodel(x), y)
                loss.backward()
                topt.step()
                return loss.detach()
            steps["torch eager"] = tstep
        times = {name: [] for name in steps}
        for i in range(args.steps + 3):
            for name, step in steps.items():
                os.environ["EMBER_CUDA_GRAPHS"] = "0" if "generic" in name else "1"
                x, y = (txs, tys) if name.startswith("torch") else (xs, ys)
                if name.startswith("torch"):
                    torch.cuda.synchronize()
                else:
                    sync()
                t0 = time.perf_counter()
                step(x[i % 4], y[i % 4])
                if name.startswith("torch"):
                    torch.cuda.synchronize()
                else:
                    sync()
                if i >= 3:
                    times[name].append(time.perf_counter() - t0)
        ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
        print(f"{title}: ms per step (ratio to ember eager)")
        for name, t in ms.items():
            print(f"  {name:<26}{t:9.3f} ms {t / ms['eager']:7.2f}x")
        for name in ("compiled, generic replay", "compiled, CUDA graphs"):
            r = replay_of(steps[name])
            print(f"  {name}: replay {type(r).__name__ if r else None}, "
                  f"why not graphs: {getattr(r, 'why_not', None)}, "
                  f"graph replays {getattr(r, 'replays', 0)}")
        gap = max(abs(a - b) for v in losses.values() for a, b in zip(v, losses["eager"]))
        print(f"  losses of the first 8 steps: max difference to eager {gap:.2e}")
        report[title] = {"ms": ms, "loss_gap": gap, "losses": losses}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
