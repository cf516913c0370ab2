"""ember.distributed on 2 local processes: all_reduce against raw mpi4py, and a DDP step.

1. all_reduce of 4 KB, 4 MB and 64 MB of float32: ember's `all_reduce` (nonblocking
   Iallreduce, polled against the timeout) against mpi4py's blocking `Allreduce`, on the
   same NumPy buffer, in interleaved rounds; the best round of each, as algorithm
   bandwidth (bytes / time) and the ratio ember / raw.  ember runs twice: as shipped,
   where every collective first checks that the ranks agree on dtype, shape and op
   (ember.distributed.check), and with that check switched off (the group's `verify`),
   to show what the check costs.
2. A training step (forward, cross-entropy, backward, SGD) of an MLP 784-1024-1024-10 on
   a global batch of 128: one process on the whole batch, against DDP on 2 processes with
   64 each (with and without the check, interleaved).  Overlap: backward with DDP (its
   buckets all-reduced while backward runs) against the same backward without
   communication (no_sync), and the time the same gradients take to all-reduce on their
   own after backward: the part of that time backward hides is the overlap.

The check's cost is the median, over the rounds (steps for DDP), of each round's time with
the check over the same round's time without it: rounds run back to back, so that a
machine shared with other work slows both alike.  Where other work shares the cores, a
rank waits for the other to be scheduled at every exchange, and that wait drowns a cost
of a few percent; so the check's own latency is also measured apart, from the fastest
10% of single 4 KB calls with and without it, and set against the best 4 MB and 64 MB
times.

    python benchmarks/distributed.py [--rounds 5]      (starts itself with ember run -n 2)
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

SIZES = {"4 KB": 1024, "4 MB": 1 << 20, "64 MB": 16 << 20}
REPEATS = {"4 KB": 2000, "4 MB": 40, "64 MB": 4}


def allreduce_rounds(rounds: int) -> list:
    import ember
    import ember.distributed as dist
    import numpy as np
    from ember.distributed.group import world
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    group = world()
    rows = []
    for label, n in SIZES.items():
        buf = np.ones(n, dtype=np.float32)
        t = ember.from_numpy(buf)          # the same memory: both reduce it in place
        times: dict = {"raw": [], "unchecked": [], "ember": []}
        for i in range(rounds):
            for side in (list(times) if i % 2 == 0 else list(times)[::-1]):
                group.verify = side != "unchecked"
                comm.Barrier()
                start = time.perf_counter()
                for _ in range(REPEATS[label]):
                    if side == "raw":
                        comm.Allreduce(MPI.IN_PLACE, buf)
                    else:
                        dist.all_reduce(t)
                times[side].append((time.perf_counter() - start) / REPEATS[label])
        group.verify = True
        cost = statistics.median(a / b - 1 for a, b in zip(times["ember"], times["unchecked"]))
        rows.append((label, n * 4, min(times["raw"]), min(times["unchecked"]),
                     min(times["ember"]), cost))
    return rows, check_latency(group, rounds)


def check_latency(group, rounds: int, calls: int = 1000) -> float:
    """The check's own latency: single 4 KB all_reduces with and without it, alternating;
    the difference of the means of each side's fastest 10% (the calls no other process
    interrupted)."""
    import ember
    import ember.distributed as dist
    import numpy as np
    t = ember.from_numpy(np.ones(1024, dtype=np.float32))
    times: dict = {True: [], False: []}
    for i in range(calls * rounds // 5):
        for verify in ((True, False) if i % 2 else (False, True)):
            group.verify = verify
            start = time.perf_counter()
            dist.all_reduce(t)
            times[verify].append(time.perf_counter() - start)
    group.verify = True
    fastest = {k: sorted(v)[:max(1, len(v) // 10)] for k, v in times.items()}
    return statistics.mean(fastest[True]) - statistics.mean(fastest[False])


def ddp_rounds(rounds: int, steps: int, bucket_mb: float) -> dict:
    import ember
    import ember.distributed as dist
    import ember.nn as nn
    import ember.optim
    import numpy as np
    from ember.distributed.group import world
    from ember.nn.parallel import DistributedDataParallel
    rank, size = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 10, 128))
    loss_fn = nn.CrossEntropyLoss()

    def mlp():
        ember.manual_seed(0)
        return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10))

    single, local = mlp(), mlp()
    ddp = DistributedDataParallel(mlp(), bucket_cap_mb=bucket_mb)
    opt_single = ember.optim.SGD(single.parameters(), lr=0.01)
    opt_ddp = ember.optim.SGD(ddp.parameters(), lr=0.01)
    b = 128 // size
    xs, ys = x[rank * b:(rank + 1) * b], y[rank * b:(rank + 1) * b]
    grads = [p for p in local.parameters()]
    times: dict = {k: [] for k in ("single", "ddp", "ddp_unchecked", "bwd_ddp", "bwd_local",
                                   "comm")}
    group = world()

    def timed(fn):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    def step_single():
        loss = loss_fn(single(x), y)
        opt_single.zero_grad()
        loss.backward()
        opt_single.step()

    def step_ddp():
        loss = loss_fn(ddp(xs), ys)
        opt_ddp.zero_grad()
        loss.backward()
        opt_ddp.step()

    def backward_ddp():
        loss = loss_fn(ddp(xs), ys)
        ddp.zero_grad()
        return timed(loss.backward)

    def backward_local():
        with ddp.no_sync():
            loss = loss_fn(ddp(xs), ys)
        ddp.zero_grad()
        return timed(loss.backward)

    def communicate():
        flat = ember.cat([p.detach().reshape(-1) for p in grads])
        dist.all_reduce(flat)

    for _ in range(rounds):
        for step in range(steps):
            for verify in ((True, False) if step % 2 else (False, True)):
                group.verify = verify
                dist.barrier()
                times["ddp" if verify else "ddp_unchecked"].append(timed(step_ddp))
            group.verify = True
            dist.barrier()
            times["bwd_ddp"].append(backward_ddp())
            dist.barrier()
            times["bwd_local"].append(backward_local())
            dist.barrier()
            times["comm"].append(timed(communicate))
            dist.barrier()
            if rank == 0:                       # one process on the whole batch, alone
                times["single"].append(timed(step_single))
            dist.barrier()
    out = {k: statistics.median(v) if v else float("nan") for k, v in times.items()}
    out["check_cost"] = statistics.median(a / b - 1 for a, b in zip(times["ddp"],
                                                                     times["ddp_unchecked"]))
    return out


def report(rows, latency: float, ddp, bucket_mb: float) -> None:
    print("ember.distributed on 2 processes (MPICH over shared memory), 1 BLAS thread each")
    print(f"{'all_reduce':>12} {'raw mpi4py':>14} {'ember':>14} {'ember/raw':>10} "
          f"{'no check':>14} {'the check costs':>16}")
    def rate(nbytes, s):
        return f"{nbytes / s / 1e9:7.2f} GB/s" if nbytes >= 1 << 20 else f"{s * 1e6:7.1f} us"
    for label, nbytes, raw, unchecked, ours, cost in rows:
        print(f"{label:>12} {rate(nbytes, raw):>14} {rate(nbytes, ours):>14} "
              f"{raw / ours:9.2f}x {rate(nbytes, unchecked):>14} {cost:+15.1%}")
    print("(best rounds; throughput ratio: 1.00x is raw MPI's speed; for 4 KB the time per "
          "call.\n 'no check': ember with the group's signature check switched off; the check "
          "costs: median of the paired rounds)")
    share = ", ".join(f"{latency / ours:.2%} of a {label} call" for label, _, _, _, ours, _
                      in rows if label != "4 KB")
    print(f"the check's own latency (fastest 10% of single 4 KB calls, with - without): "
          f"{latency * 1e6:.1f} us; {share}")
    print()
    ms = {k: v * 1e3 for k, v in ddp.items() if k != "check_cost"}
    hidden = ms["comm"] - (ms["bwd_ddp"] - ms["bwd_local"])
    share = max(0.0, min(1.0, hidden / ms["comm"])) if ms["comm"] > 0 else float("nan")
    print("DDP step, MLP 784-1024-1024-10 (1.86 M parameters, 7.4 MB of gradients), "
          f"global batch 128, buckets of {bucket_mb:g} MB")
    print(f"  1 process, batch 128:          {ms['single']:8.2f} ms/step")
    print(f"  2 processes (DDP), 64 each:     {ms['ddp']:8.2f} ms/step "
          f"({ms['single'] / ms['ddp']:.2f}x the single process's speed)")
    print(f"  the same without the check:     {ms['ddp_unchecked']:8.2f} ms/step "
          f"(the check costs {ddp['check_cost']:+.1%}, median of paired steps)")
    print(f"  backward without communication: {ms['bwd_local']:8.2f} ms")
    print(f"  backward with DDP's all-reduce: {ms['bwd_ddp']:8.2f} ms")
    print(f"  the same gradients all-reduced after backward: {ms['comm']:6.2f} ms; "
          f"hidden by backward: {share:.0%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5, help="DDP steps per round")
    parser.add_argument("--bucket-mb", type=float, default=25.0,
                        help="DDP's bucket_cap_mb (default 25, as PyTorch)")
    args = parser.parse_args()
    from ember.distributed.group import launch_env
    if launch_env() is None:
        import subprocess
        env = dict(os.environ, OMP_NUM_THREADS="1")
        return subprocess.call([sys.executable, "-m", "ember.tools.cli", "run", "-n", "2",
                                __file__, *sys.argv[1:]], env=env)
    import ember.distributed as dist
    dist.init_process_group(timeout=300)
    rows, latency = allreduce_rounds(args.rounds)
    ddp = ddp_rounds(args.rounds, args.steps, args.bucket_mb)
    if dist.get_rank() == 0:
        report(rows, latency, ddp, args.bucket_mb)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
