"""Slow on purpose: every sample costs ~2 ms of Python in __getitem__ and the loader has
no workers (`--fixed`: num_workers=2, persistent)."""
import sys
import time

import ember
from ember import nn
from ember.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Slow(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        time.sleep(0.002)                        # decoding / augmenting a sample
        return ember.full((16,), float(i % 7)), i % 2


if __name__ == "__main__":
    ember.manual_seed(0)
    model = nn.Linear(16, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Slow(), batch_size=8, num_workers=2 if FIXED else 0,
                        persistent_workers=FIXED)
    start = time.perf_counter()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {time.perf_counter() - start:.2f} s")
