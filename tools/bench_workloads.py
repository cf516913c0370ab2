"""`ember bench --workloads`: where programs spend their time, ember against PyTorch eager
(and NumPy for the elementwise rows), side by side in one process, one thread.

Rows: an LSTM and a GRU (2 layers, hidden 200, sequence 35, batch 20, forward + backward
from a random upstream gradient), conv2d 3x3 (64 -> 64 channels, 16x16, batch 32, forward
+ backward), the MLP 784-256-256-10 (batch 128) and the `ember demo` CNN (batch 32) train
steps (cross-entropy, backward, SGD with momentum) eager and through ember.compile, one
shuffled epoch of a DataLoader over a 4096-item TensorDataset (batch 64, no workers), and
atan2 (float32) and bitwise_and (int64) over 1e6 elements against NumPy.  Every pair starts
from the same weights and data and is checked to agree before it is timed; timing is round
robin (each implementation in turn, shuffled every round) and the figures are medians in
ms.  BLAS and PyTorch run one thread while the table is made (threadpoolctl, then set back).

benchmarks/ holds the longer versions (benchmarks/rnn.py, conv.py, train_step.py with its
NumPy floors, data_loading.py, primitives.py); they build their models from here.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

LR, MOMENTUM = 0.01, 0.9


def median_ms(steps: dict, count: int, warmup: int = 3, faults: dict | None = None) -> dict:
    """Median ms per call of each implementation, timed in turn (round robin) so that a
    change in machine load hits all of them alike.  The order is shuffled every round
    (seeded): a step that runs right after another of the same framework finds its code
    and data in the caches, and in a fixed order "ember loop" (after "ember") measured
    ~5-10% faster than "ember" for that reason alone.

    `faults`, a dict, receives each implementation's minor page faults per timed call
    (getrusage; not on Windows).  They are part of the time and depend on the process's
    heap as much as on the implementation: glibc hands freed memory at the top of the heap
    back to the system, and a step that allocates it again faults on every page (~3 us
    each).  PyTorch's LSTM alone in a fresh process faults ~4,700 times a step (~5 ms of
    ~24); run beside ember, whose long-lived arrays keep that memory mapped, it faults 0
    times or 3,300 times depending on what ran before.  The counts say which it was."""
    try:
        from resource import RUSAGE_SELF, getrusage
    except ImportError:                       # Windows
        getrusage = None
    times: dict = {name: [] for name in steps}
    minor = dict.fromkeys(steps, 0)
    order = list(steps)
    shuffle = random.Random(0).shuffle
    for i in range(count + warmup):
        shuffle(order)
        for name in order:
            step = steps[name]
            before = getrusage(RUSAGE_SELF).ru_minflt if getrusage else 0
            t0 = time.perf_counter()
            step()
            spent = time.perf_counter() - t0
            if i >= warmup:
                times[name].append(spent)
                if getrusage:
                    minor[name] += getrusage(RUSAGE_SELF).ru_minflt - before
    if faults is not None and getrusage:
        faults.update({name: n / count for name, n in minor.items()})
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def _synced(step, device):
    """The step, then a wait for the device's queued work (a no-op on the CPU)."""
    import ember
    if ember.device(device).type == "cpu":
        return step

    def run():
        out = step()
        ember.synchronize(device)
        return out
    return run


def layer_pair(torch, make, x_shape, rng, device="cpu", rtol=1e-4, atol=1e-5):
    """(ember step, torch step): forward + backward of the same layer (make(lib) builds
    it; the torch layer's weights are copied into ember's) on the same input and upstream
    gradient.  One pass of each is compared before the steps are returned."""
    import ember
    import numpy as np
    t_layer = make(torch)
    e_layer = make(ember)
    e_layer.load_state_dict({k: ember.tensor(v.detach().numpy())
                             for k, v in t_layer.state_dict().items()})
    e_layer.to(device)
    x = rng.standard_normal(x_shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, device=device, requires_grad=True)

    def first(out):
        return out[0] if isinstance(out, tuple) else out

    gy = rng.standard_normal(tuple(first(t_layer(tx)).shape)).astype(np.float32)
    tg, eg = torch.tensor(gy), ember.tensor(gy, device=device)

    def e_step():
        out = first(e_layer(ex))
        out.backward(eg)
        return out

    def t_step():
        out = first(t_layer(tx))
        out.backward(tg)
        return out

    np.testing.assert_allclose(e_step().detach().cpu().numpy(), t_step().detach().numpy(),
                               rtol=rtol, atol=atol)
    return _synced(e_step, device), t_step


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(784, 256), lib.nn.ReLU(), lib.nn.Linear(256, 256),
                             lib.nn.ReLU(), lib.nn.Linear(256, 10))


def cnn(lib):
    """The `ember demo` CNN on 1x8x8 images."""
    n = lib.nn
    return n.Sequential(n.Conv2d(1, 16, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                        n.Conv2d(16, 32, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                        n.Flatten(), n.Linear(128, 10))


def framework_step(lib, model, x, y, wrap=None, foreach=None):
    """One train step of `model` in library `lib` (ember or torch): zero_grad, forward,
    cross-entropy, backward, SGD with momentum; `wrap` (ember.compile, torch.compile)
    wraps the whole step."""
    optimizer = lib.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, foreach=foreach)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()
    return step if wrap is None else wrap(step)


def train_steps(torch, name, rng, device="cpu"):
    """{"ember", "ember.compile", "torch"}: one train step of the MLP (batch 128) or the
    demo CNN (batch 32), all from the same weights and data; the first step's losses and
    updated weights are compared before the steps are returned."""
    import ember
    import numpy as np
    make, batch, x_shape = (mlp, 128, (128, 784)) if name == "mlp" else (cnn, 32, (32, 1, 8, 8))
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = rng.integers(0, 10, batch)
    t_model = make(torch)
    state = {k: ember.tensor(v.detach().numpy()) for k, v in t_model.state_dict().items()}
    eager, compiled = make(ember), make(ember)
    for model in (eager, compiled):
        model.load_state_dict(state)
        model.to(device)
    ex, ey = ember.tensor(x, device=device), ember.tensor(y, device=device)
    steps = {"ember": framework_step(ember, eager, ex, ey),
             "ember.compile": framework_step(ember, compiled, ex, ey, wrap=ember.compile),
             "torch": framework_step(torch, t_model, torch.tensor(x), torch.tensor(y))}
    losses = {k: float(s().cpu().numpy()) if k != "torch" else float(s()) for k, s in steps.items()}
    want = [p.detach().numpy() for p in t_model.parameters()]
    for k, model in (("ember", eager), ("ember.compile", compiled)):
        if abs(losses[k] - losses["torch"]) > 1e-4 * max(1.0, abs(losses["torch"])):
            raise AssertionError(f"{name}: {k}'s loss {losses[k]} != torch's {losses['torch']}")
        for p, w in zip(model.parameters(), want):
            np.testing.assert_allclose(p.detach().cpu().numpy(), w, rtol=1e-4, atol=1e-5)
    return {k: (s if k == "torch" else _synced(s, device)) for k, s in steps.items()}


def loader_pair(torch, rng, items=4096, batch=64):
    """(ember epoch, torch epoch): one shuffled epoch of a DataLoader over the same
    in-memory TensorDataset (28x28 float32 images, int64 labels), no workers.  The first
    batches in order are compared before the epochs are returned."""
    import ember
    import numpy as np
    from ember.utils.data import DataLoader, TensorDataset
    x = rng.standard_normal((items, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, items)
    e_set = TensorDataset(ember.tensor(x), ember.tensor(y))
    t_set = torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y))
    for (ea, eb), (ta, tb) in zip(DataLoader(e_set, batch_size=batch),
                                  torch.utils.data.DataLoader(t_set, batch_size=batch)):
        np.testing.assert_array_equal(ea.numpy(), ta.numpy())
        np.testing.assert_array_equal(eb.numpy(), tb.numpy())
        break
    e_loader = DataLoader(e_set, batch_size=batch, shuffle=True)
    t_loader = torch.utils.data.DataLoader(t_set, batch_size=batch, shuffle=True)

    def epoch(loader):
        def run():
            for _ in loader:
                pass
        return run
    return epoch(e_loader), epoch(t_loader)


def elementwise_pair(name, rng, device="cpu", size=1_000_000):
    """(ember call, NumPy call) of atan2 (float32) or bitwise_and (int64) over `size`
    elements, compared before they are returned."""
    import ember
    import numpy as np
    if name == "atan2":
        a = rng.standard_normal(size).astype(np.float32)
        b = rng.standard_normal(size).astype(np.float32)
        np_fn, em_fn = np.arctan2, ember.atan2
    else:
        a = rng.integers(-2**62, 2**62, size, dtype=np.int64)
        b = rng.integers(-2**62, 2**62, size, dtype=np.int64)
        np_fn, em_fn = np.bitwise_and, ember.bitwise_and
    ea, eb = ember.tensor(a, device=device), ember.tensor(b, device=device)
    np.testing.assert_allclose(em_fn(ea, eb).cpu().numpy(), np_fn(a, b), rtol=1e-6, atol=1e-6)
    return _synced(lambda: em_fn(ea, eb), device), (lambda: np_fn(a, b))


def rows(torch, device="cpu", rounds=7, warmup=3):
    """[(workload, ember ms, reference ms, reference name, ember's and the reference's
    page faults per call (None where not counted))] for every row of the table: medians of
    `rounds` timed calls each, after `warmup` untimed ones."""
    import numpy as np
    rng = np.random.default_rng(0)
    out = []

    def timed(label, pair, ref):
        faults: dict = {}
        ms = median_ms({"ember": pair[0], ref: pair[1]}, rounds, warmup, faults)
        out.append((label, ms["ember"], ms[ref], ref, faults.get("ember"), faults.get(ref)))

    for kind in ("LSTM", "GRU"):
        pair = layer_pair(torch, lambda lib, kind=kind: getattr(lib.nn, kind)(200, 200, 2),
                          (35, 20, 200), rng, device)
        timed(f"{kind} 2x200, seq 35, batch 20", pair, "torch")
    pair = layer_pair(torch, lambda lib: lib.nn.Conv2d(64, 64, 3, padding=1),
                      (32, 64, 16, 16), rng, device, rtol=1e-3, atol=1e-4)
    timed("conv2d 3x3 64->64 16x16 b32", pair, "torch")
    for name, label in (("mlp", "MLP 784-256-256-10 step, b128"), ("cnn", "demo CNN step, b32")):
        steps = train_steps(torch, name, rng, device)
        faults: dict = {}
        ms = median_ms(steps, rounds, warmup, faults)
        compiled = label.replace(" step", " step compiled")
        for key, name in (("ember", label), ("ember.compile", compiled)):
            out.append((name, ms[key], ms["torch"], "torch", faults.get(key),
                        faults.get("torch")))
    # the loader's data stays on the host, as programs keep it (batches move afterwards)
    timed("DataLoader TensorDataset 4096, b64", loader_pair(torch, rng), "torch")
    timed("atan2 1e6 float32", elementwise_pair("atan2", rng, device), "numpy")
    timed("bitwise_and 1e6 int64", elementwise_pair("bitwise_and", rng, device), "numpy")
    return out


def run(args: argparse.Namespace) -> int:
    """Print the workload table; returns 0 (1 without PyTorch, which every row but the
    elementwise ones compares against)."""
    import ember
    try:
        import torch
    except ImportError:
        print("ember bench --workloads compares with PyTorch: pip install torch "
              "(or ember[compare])")
        return 1
    from threadpoolctl import threadpool_limits
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            table = rows(torch, args.device, rounds=1 if args.quick else args.repeat,
                         warmup=1 if args.quick else 3)
    finally:
        torch.set_num_threads(threads)
    print(f"device={args.device}  (median ms per call; BLAS and PyTorch 1 thread; "
          f"ember {ember.__version__}, PyTorch {torch.__version__})")
    print(f"{'workload':<40}{'ember ms':>10}{'ref ms':>10}  {'ref':<6}{'ember/ref':>10}"
          f"{'faults/call':>16}")
    for label, e_ms, r_ms, ref, e_faults, r_faults in table:
        faults = "" if e_faults is None else f"{e_faults:>8.0f}{r_faults:>8.0f}"
        print(f"{label:<40}{e_ms:>10.3f}{r_ms:>10.3f}  {ref:<6}{e_ms / r_ms:>10.2f}{faults}")
    print("faults/call: minor page faults per call, ember then the reference (memory the "
          "process\nhanded back and touches again, ~3 us each; see median_ms in "
          "ember/tools/bench_workloads.py)")
    return 0
