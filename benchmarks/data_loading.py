"""DataLoader over in-memory datasets: one epoch of ember's loader against PyTorch's.

No workers (the per-batch path itself), 4096 MNIST-shaped samples (1x28x28 float32 and an
int64 label), shuffled.  The datasets, side by side with the same arrays:
- TensorDataset, batch 1 (DataLoader's default) and batch 64;
- a list of (image, label) tuples of tensors, batch 64 (collated per item);
- a list of image tensors, batch 64;
- a map-style Dataset class whose __getitem__ indexes two tensors, batch 64.
Each epoch's batches are checked against PyTorch's (same order from a SequentialSampler
pass) before timing.  Medians of whole epochs in ms, and ember's time as a multiple of
PyTorch's.

    python benchmarks/data_loading.py [--epochs 5] [--threads 1] [--items 4096] [--profile]

--threads sets the BLAS and PyTorch thread count (1 by default).  --profile runs cProfile
over one ember epoch of each dataset and prints the 12 heaviest functions.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats

import ember
import numpy as np
from ember.utils.data import DataLoader, TensorDataset

# round-robin medians and the BLAS thread pinning, shared with train_step.py
from train_step import median_ms, pin_blas_threads


class Pairs:
    """A map-style dataset as users write them: __getitem__ indexes two tensors."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def datasets(torch, x, y):
    """name -> (batch size, ember dataset, torch dataset)."""
    ex, ey, tx, ty = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
    n = len(x)
    return {
        "TensorDataset, batch 1": (1, TensorDataset(ex, ey),
                                   torch.utils.data.TensorDataset(tx, ty)),
        "TensorDataset, batch 64": (64, TensorDataset(ex, ey),
                                    torch.utils.data.TensorDataset(tx, ty)),
        "list of (x, y) tensors, batch 64": (64, [(ex[i], ey[i]) for i in range(n)],
                                             [(tx[i], ty[i]) for i in range(n)]),
        "list of tensors, batch 64": (64, [ex[i] for i in range(n)],
                                      [tx[i] for i in range(n)]),
        "Dataset class, batch 64": (64, Pairs(ex, ey), Pairs(tx, ty)),
    }


def _flat(batch):
    return batch if isinstance(batch, (list, tuple)) else [batch]


def check(torch, e_set, t_set, batch):
    """The same batches (sequential order) from both loaders."""
    e_batches = list(DataLoader(e_set, batch_size=batch))
    t_batches = list(torch.utils.data.DataLoader(t_set, batch_size=batch))
    assert len(e_batches) == len(t_batches)
    for e, t in zip(e_batches[:3] + e_batches[-1:], t_batches[:3] + t_batches[-1:]):
        for a, b in zip(_flat(e), _flat(t)):
            assert a.dtype.itemsize == b.dtype.itemsize
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs per loader")
    parser.add_argument("--threads", type=int, default=1, help="BLAS and PyTorch threads")
    parser.add_argument("--items", type=int, default=4096)
    parser.add_argument("--profile", action="store_true", help="profile ember's epochs")
    args = parser.parse_args()
    pin_blas_threads(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.items, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, args.items)
    print(f"one shuffled epoch of {args.items} samples, no workers; median of {args.epochs}, "
          f"{args.threads} thread(s); ember {ember.__version__}, PyTorch {torch.__version__}")
    print(f"{'dataset':<36}{'ember ms':>10}{'torch ms':>10}{'ember/torch':>13}")
    for name, (batch, e_set, t_set) in datasets(torch, x, y).items():
        check(torch, e_set, t_set, batch)
        e_loader = DataLoader(e_set, batch_size=batch, shuffle=True)
        t_loader = torch.utils.data.DataLoader(t_set, batch_size=batch, shuffle=True)

        def e_epoch(loader=e_loader):
            for _ in loader:
                pass

        def t_epoch(loader=t_loader):
            for _ in loader:
                pass

        ms = median_ms({"ember": e_epoch, "torch": t_epoch}, args.epochs)
        print(f"{name:<36}{ms['ember']:>10.1f}{ms['torch']:>10.1f}"
              f"{ms['ember'] / ms['torch']:>13.2f}", flush=True)
        if args.profile:
            prof = cProfile.Profile()
            prof.runcall(e_epoch)
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
