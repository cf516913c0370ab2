"""Slow on purpose: float16 autocast on the CPU (`--fixed`: the same step in float32)."""
import os
import sys
import time

import ember
from ember import nn

ember.set_num_threads(1)

if __name__ == "__main__":
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 128))
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    x = ember.randn(64, 128)
    fixed = "--fixed" in sys.argv
    start = time.perf_counter()
    for _ in range(int(os.environ.get("STEPS", "30"))):
        with ember.autocast("cpu", dtype=ember.float16, enabled=not fixed):
            loss = model(x).float().square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"{time.perf_counter() - start:.2f} s")
