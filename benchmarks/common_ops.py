"""Per-call time of the tensor operations programs call all the time, on small tensors:
ember against PyTorch eager (1 thread), side by side in one run.

`ember bench` times three ops (a + b, a @ b, a.sum()) at three sizes; this is the long
list at one size (32x32 float32, a 32-vector, a (32, 10) batch of logits), where what a
call costs besides its kernel is most of its time: reductions with and without dims,
softmax and log_softmax, shape ops (view, reshape, flatten, unsqueeze, size), indexing,
std/var/norm, activations.  Medians of --repeat runs in microseconds, then ember/torch;
rows sorted by that ratio, worst first, so the list says what to work on next.

    python benchmarks/common_ops.py [--repeat 5] [--number 20000]
"""
from __future__ import annotations

import argparse
import statistics
import timeit

import ember
import numpy as np

OPS = [
    "X + Y", "X * 2", "X @ Y", "X.T @ Y", "X.sum()", "X.sum(0)", "X.sum(dim=1)", "X.mean()",
    "X.mean(1, keepdim=True)", "X.max()", "X.amax(1)", "X.max(1)", "X.argmax()",
    "X.argmax(1)", "X.std()", "X.var(0)", "X.norm()", "L.softmax(1)", "L.log_softmax(1)",
    "X.relu()", "X.sigmoid()", "X.tanh()", "X.exp()", "X.abs()", "X.clamp(0, 1)",
    "X.view(1024)", "X.view(-1)", "X.reshape(-1)", "X.flatten()", "X.unsqueeze(0)",
    "X.squeeze()", "X.t()", "X.transpose(0, 1)", "X.permute(1, 0)", "X.contiguous()",
    "X.clone()", "X.detach()", "X.size(0)", "X.shape[0]", "X[0]", "X[:, 1]", "X[1:5]",
    "X[V > 0]", "X.cumsum(0)", "X.max().item()", "X.float()", "X.to(X.dtype)",
    "ember_cat", "ember_stack", "X.eq(Y).sum()", "(L.argmax(1) == T).float().mean()",
]


def _envs(lib, rng):
    f32 = np.float32
    x = rng.standard_normal((32, 32)).astype(f32)
    y = rng.standard_normal((32, 32)).astype(f32)
    v = rng.standard_normal(32).astype(f32)
    logits = rng.standard_normal((32, 10)).astype(f32)
    target = rng.integers(0, 10, 32)
    t = lib.tensor
    return {"X": t(x), "Y": t(y), "V": t(v), "L": t(logits), "T": t(target), "lib": lib}


def _stmt(op: str) -> str:
    if op == "ember_cat":
        return "lib.cat([X, Y])"
    if op == "ember_stack":
        return "lib.stack([X, Y])"
    return op


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    envs = {"ember": _envs(ember, rng), "torch": _envs(torch, np.random.default_rng(0))}
    rows = []
    for op in OPS:
        us = {}
        for name, env in envs.items():
            timer = timeit.Timer(_stmt(op), globals=env)
            timer.timeit(100)
            us[name] = statistics.median(timer.repeat(args.repeat, args.number)) / \
                args.number * 1e6
        rows.append((op.replace("ember_", "lib."), us["ember"], us["torch"]))
    print(f"per call, 32x32 float32 (logits L: 32x10), median of {args.repeat}; "
          f"ember {ember.__version__}, PyTorch {torch.__version__}, 1 thread")
    print(f"{'op':<36}{'ember us':>10}{'torch us':>10}{'ember/torch':>13}")
    for op, e, t in sorted(rows, key=lambda r: -r[1] / r[2]):
        print(f"{op:<36}{e:>10.2f}{t:>10.2f}{e / t:>13.2f}")


if __name__ == "__main__":
    main()
