"""FullyShardedDataParallel against DistributedDataParallel: memory per rank and step time.

1. memory (N = 1, 2, 4 local processes): a transformer stack (token embedding, `--layers`
   pre-norm blocks of width `--d`, attention and a 4x MLP, a vocabulary head), Adam.  Each
   rank traces every NumPy allocation from before the model is built (tracemalloc: ember's
   CPU tensors are NumPy arrays), runs one step (Adam's state appears), resets the peak
   and runs a second step: the peak of that step is what the rank holds at most while
   training: parameters, gradients, Adam's two moments, DDP's buckets or FSDP's gathered
   unit and flat gradient, and the activations of a small batch (2 x 16 tokens, a few MB
   next to the weights).  DDP and FSDP (FULL_SHARD, one unit per block) in separate jobs.
2. time (N = 2, and each of --time-ranks): DDP and FSDP steps (forward, cross-entropy,
   backward, Adam) of the same model in the same job, interleaved in rounds; the median
   step of each and the ratio.  Overlap: FSDP's `stats()` gives the time its steps spent
   blocked on collectives, with backward prefetch (the default) and without
   (backward_prefetch=None: each unit's gather starts when its backward needs it); what
   prefetching takes off the blocked time is communication hidden behind compute.

    python benchmarks/fsdp.py [--d 640 --layers 10 --vocab 8192] [--skip-time]
    (each measurement starts its own `ember run -n N` job)
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc


def build(args):
    import ember
    import ember.nn as nn
    import ember.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d: int, heads: int):
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, d = x.shape
            h = self.norm1(x)

            def split(y):
                return y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
            a = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)),
                                               split(self.v(h)), is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
            return x + self.down(F.gelu(self.up(self.norm2(x))))

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(args.vocab, args.d)
            self.blocks = nn.ModuleList([Block(args.d, 8) for _ in range(args.layers)])
            self.norm = nn.LayerNorm(args.d)
            self.head = nn.Linear(args.d, args.vocab)

        def forward(self, tokens):
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))

    ember.manual_seed(0)
    return Stack(), Block


def wrap(kind: str, model, block, units: str = "blocks"):
    if kind == "ddp":
        from ember.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model)
    from ember.distributed.fsdp import FullyShardedDataParallel, ModuleWrapPolicy
    options = {"backward_prefetch": None} if kind == "fsdp_noprefetch" else {}
    policy = ModuleWrapPolicy({block})
    if units == "all":            # the embedding and the head as units of their own too
        def policy(module, recurse, nonwrapped_numel):
            return recurse or isinstance(module, block) or module is model.embed \
                or module is model.head
    return FullyShardedDataParallel(model, auto_wrap_policy=policy, **options)


def step_fn(args, model, opt):
    import ember
    import ember.nn.functional as F
    import numpy as np
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.integers(0, args.vocab, (args.batch, args.tokens)))
    y = ember.tensor(rng.integers(0, args.vocab, (args.batch, args.tokens)))

    def step():
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, args.vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def worker_memory(args) -> dict:
    import ember
    import ember.distributed as dist
    from ember.distributed.group import world
    dist.init_process_group(timeout=900)
    tracemalloc.start()
    model, block = build(args)
    params = sum(p.numel() for p in model.parameters())
    wrapped = wrap(args.kind, model, block, args.units)
    opt = ember.optim.Adam(wrapped.parameters(), lr=1e-4)
    step = step_fn(args, wrapped, opt)
    step()
    gc.collect()
    tracemalloc.reset_peak()
    held = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peaks = [json.loads(b) for b in world().allgather_bytes(
        json.dumps([peak, held]).encode())]
    return {"kind": args.kind, "n": dist.get_world_size(), "params": params,
            "peak": max(p for p, _ in peaks), "held": max(h for _, h in peaks)}


def worker_time(args) -> dict:
    import ember
    import ember.distributed as dist
    from ember.distributed.group import world
    dist.init_process_group(timeout=900)
    steps = {}
    kinds = ("ddp", "fsdp", "fsdp_noprefetch")
    for kind in kinds:
        model, block = build(args)
        wrapped = wrap(kind, model, block)
        opt = ember.optim.Adam(wrapped.parameters(), lr=1e-4)
        steps[kind] = (wrapped, step_fn(args, wrapped, opt))
        steps[kind][1]()                  # warm: Adam's state, first-iteration order
    times = {k: [] for k in kinds}
    waited = {k: steps[k][0].stats()["wait_s"] for k in kinds[1:]}
    for r in range(args.rounds):
        for kind in (kinds if r % 2 == 0 else kinds[::-1]):
            for _ in range(args.steps):
                dist.barrier()
                t0 = time.perf_counter()
                steps[kind][1]()
                times[kind].append(time.perf_counter() - t0)
    waited = {k: (steps[k][0].stats()["wait_s"] - waited[k]) / len(times[k])
              for k in kinds[1:]}
    slowest = [json.loads(b) for b in world().allgather_bytes(
        json.dumps(times).encode())]
    # a step takes as long as its slowest rank
    merged = {k: [max(s[k][i] for s in slowest) for i in range(len(times[k]))]
              for k in times}
    return {"n": dist.get_world_size(), "ddp": statistics.median(merged["ddp"]),
            "fsdp": statistics.median(merged["fsdp"]),
            "fsdp_noprefetch": statistics.median(merged["fsdp_noprefetch"]),
            "wait": waited,
            "pairs": [f / d for f, d in zip(merged["fsdp"], merged["ddp"])]}


def launch(n: int, extra: list[str]) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-m", "ember.tools.cli", "run", "-n", str(n),
                          __file__, *extra], env=env, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise SystemExit(f"job {extra} on {n} ranks failed:\n{out.stdout}\n{out.stderr}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=640)
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--time-ranks", type=int, nargs="+", default=[2])
    parser.add_argument("--units", choices=["blocks", "all"], default="blocks",
                        help="FSDP units: one per block (the embedding and head stay in the "
                             "root unit), or also the embedding and the head (memory)")
    parser.add_argument("--skip-time", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--worker", choices=["memory", "time"])
    parser.add_argument("--kind", choices=["ddp", "fsdp"], default="fsdp")
    args = parser.parse_args()
    if args.worker:
        result = worker_memory(args) if args.worker == "memory" else worker_time(args)
        import ember.distributed as dist
        if dist.get_rank() == 0:
            print("RESULT " + json.dumps(result), flush=True)
        return 0
    shape = ["--d", str(args.d), "--layers", str(args.layers), "--vocab", str(args.vocab),
             "--batch", str(args.batch), "--tokens", str(args.tokens)]
    if not args.skip_memory:
        rows = {}
        for n in args.ranks:
            for kind in ("ddp", "fsdp"):
                rows[(kind, n)] = launch(n, ["--worker", "memory", "--kind", kind,
                                             "--units", args.units, *shape])
        params = rows[("ddp", args.ranks[0])]["params"]
        print(f"memory: transformer stack of {params / 1e6:.1f} M parameters "
              f"({params * 4 / 2**20:.0f} MiB in float32), Adam, FSDP units: {args.units}; "
              "peak traced bytes per rank during a training step")
        print(f"{'N':>3} {'DDP MiB':>9} {'FSDP MiB':>9} {'FSDP/DDP':>9} "
              f"{'FSDP held between steps':>24}")
        for n in args.ranks:
            d, f = rows[("ddp", n)], rows[("fsdp", n)]
            print(f"{n:>3} {d['peak'] / 2**20:9.0f} {f['peak'] / 2**20:9.0f} "
                  f"{f['peak'] / d['peak']:9.2f} {f['held'] / 2**20:20.0f} MiB")
    for n in () if args.skip_time else args.time_ranks:
        t = launch(n, ["--worker", "time", "--rounds", str(args.rounds), "--steps",
                       str(args.steps), *shape])
        print(f"time at N={n} (median of {len(t['pairs'])} steps each, interleaved): DDP "
              f"{t['ddp'] * 1e3:.0f} ms/step, FSDP {t['fsdp'] * 1e3:.0f} ms/step, ratio "
              f"{t['fsdp'] / t['ddp']:.2f} (median of paired ratios "
              f"{statistics.median(t['pairs']):.2f})")
        print(f"  FSDP blocked on collectives: {t['wait']['fsdp'] * 1e3:.0f} ms/step with "
              f"backward prefetch, {t['wait']['fsdp_noprefetch'] * 1e3:.0f} ms/step without "
              f"({t['fsdp_noprefetch'] * 1e3:.0f} ms/step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
