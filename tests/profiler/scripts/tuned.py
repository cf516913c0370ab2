"""Well tuned: threads within the cores, data in memory, a few large float32 ops a step."""
import os
import time

import ember
from ember import nn

ember.set_num_threads(1)

if __name__ == "__main__":
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512))
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    x = ember.randn(512, 512)
    start = time.perf_counter()
    for _ in range(int(os.environ.get("STEPS", "30"))):
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"{time.perf_counter() - start:.2f} s")
