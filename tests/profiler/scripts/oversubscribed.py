"""Slow on purpose: BLAS told to use 4x the cores (`--fixed`: one thread per free core)."""
import os
import sys
import time

import ember
from ember import nn

cores = len(os.sched_getaffinity(0))
if "--fixed" in sys.argv:
    load = max(0.0, os.getloadavg()[0] - 1)
    ember.set_num_threads(max(1, min(cores, int(cores - load + 0.5))))
else:
    ember.set_num_threads(4 * cores)

if __name__ == "__main__":
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(384, 384), nn.ReLU(), nn.Linear(384, 384))
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    x = ember.randn(256, 384)
    start = time.perf_counter()
    for _ in range(int(os.environ.get("STEPS", "30"))):
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"{time.perf_counter() - start:.2f} s")
