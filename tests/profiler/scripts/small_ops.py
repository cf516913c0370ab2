"""Slow on purpose: a step of many tiny ops, dispatched one by one from Python
(`--fixed`: the step under ember.compile)."""
import os
import sys
import time

import ember
from ember import nn

if __name__ == "__main__":
    ember.manual_seed(0)
    layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(12)])
    opt = ember.optim.SGD(layers.parameters(), lr=0.01)
    x = ember.randn(2, 4)

    def step(x):
        h = x
        for layer in layers:
            h = ember.tanh(layer(h)) * 0.5 + h
        loss = h.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if "--fixed" in sys.argv:
        step = ember.compile(step)
    start = time.perf_counter()
    for _ in range(int(os.environ.get("STEPS", "200"))):
        step(x)
    print(f"{time.perf_counter() - start:.2f} s")
