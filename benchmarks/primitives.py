"""atan2, the bit operations, unique and topk on ember (cpu and opencl:0) against NumPy and
PyTorch, in one run, one thread each: medians of calls timed in turn, ratios to NumPy.

    python benchmarks/primitives.py [--size 1000000] [--repeat 15] [--devices cpu,opencl:0]
                                    [--decompositions]

Inputs are 1-d of --size elements (the first row, an int64 add, is each backend's
floor for one elementwise pass): float32 for atan2 and topk (k = 10), int64 for the bit
operations (shifts by 0..63) and unique (values below size / 10: many repeats).  OpenCL
times include a synchronize (the result is waited for) and not the copy to the device.
Nothing here is asserted: tests check values (the conformance rows of each op).
--decompositions adds a column: each declared kernel's decomposition on the CPU (what a
device without the kernel runs, and what every device ran before the kernels existed).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "POCL_MAX_PTHREAD_COUNT"):
    os.environ.setdefault(_var, "1")


def medians_ms(fns: dict, repeat: int) -> dict:
    """Median ms of each function, called in turn (round robin) after one warm-up call
    each, so that a change in machine load hits all of them alike."""
    for fn in fns.values():
        fn()                                       # builds kernels, fills pools
    times: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def cases(np, rng, size):
    """op -> (arguments as host arrays, NumPy's function, a function of a namespace
    (ember or torch) and its tensors)."""
    y, x = (rng.standard_normal(size).astype(np.float32) for _ in range(2))
    a = rng.integers(-2 ** 62, 2 ** 62, size, dtype=np.int64)
    b = rng.integers(-2 ** 62, 2 ** 62, size, dtype=np.int64)
    s = rng.integers(0, 64, size, dtype=np.int64)
    u = rng.integers(0, max(size // 10, 1), size, dtype=np.int64)

    def np_topk(v, k=10):
        part = np.argpartition(-v, k)[:k]
        return part[np.argsort(-v[part], kind="stable")]
    return {
        # the floor of one elementwise pass on each backend, for the rows below
        "add (int64)": ((a, b), np.add, lambda E, a, b: a + b),
        "atan2": ((y, x), np.arctan2, lambda E, y, x: E.atan2(y, x)),
        "bitwise_and": ((a, b), np.bitwise_and, lambda E, a, b: a & b),
        "bitwise_or": ((a, b), np.bitwise_or, lambda E, a, b: a | b),
        "bitwise_xor": ((a, b), np.bitwise_xor, lambda E, a, b: a ^ b),
        "bitwise_not": ((a,), np.invert, lambda E, a: ~a),
        "left_shift": ((a, s), np.left_shift, lambda E, a, s: a << s),
        "right_shift": ((a, s), np.right_shift, lambda E, a, s: a >> s),
        "unique": ((u,), np.unique, lambda E, u: E.unique(u)),
        "topk(10)": ((y,), np_topk, lambda E, y: E.topk(y, 10)),
    }


def decompositions(ember):
    """op -> the same call through the op's decomposition (ember ops, no kernel of its own)."""
    from ember.ops import bitwise as B
    from ember.ops import sorting
    from ember.ops.special import _atan2_forward
    return {
        "atan2": lambda y, x: _atan2_forward(y, x),
        "bitwise_and": lambda a, b: B.bytewise("and", a, b),
        "bitwise_or": lambda a, b: B.bytewise("or", a, b),
        "bitwise_xor": lambda a, b: B.bytewise("xor", a, b),
        "bitwise_not": B.invert,
        "left_shift": B.left_shift,
        "right_shift": B.right_shift,
        "unique": lambda u: sorting._unique_sorted(u, u, False, False),
        "topk(10)": lambda y: sorting._topk_decompose(y, axis=0, k=10, largest=True),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--devices", default="cpu,opencl:0")
    parser.add_argument("--decompositions", action="store_true",
                        help="also time each op's decomposition on the CPU")
    args = parser.parse_args(argv)
    import ember
    import numpy as np
    rng = np.random.default_rng(0)
    table = cases(np, rng, args.size)
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    devices = []
    for dev in args.devices.split(","):
        try:
            ember.tensor([1.0], device=dev)
            devices.append(dev)
        except ember.EmberError as exc:
            print(f"{dev}: skipped ({exc})")
    columns = ["numpy"] + (["torch"] if torch else []) + [f"ember {d}" for d in devices]
    slow = decompositions(ember) if args.decompositions else {}
    if slow:
        columns.append("decomposed cpu")
    print(f"size {args.size}, 1 thread; median ms of {args.repeat} (ratio to NumPy); "
          f"ember {ember.__version__}, NumPy {np.__version__}"
          + (f", PyTorch {torch.__version__}" if torch else ""))
    print(f"{'op':<14}" + "".join(f"{c:>22}" for c in columns))
    for op, (arrays, np_fn, fn) in table.items():
        fns = {"numpy": lambda np_fn=np_fn, arrays=arrays: np_fn(*arrays)}
        if torch:
            tt = [torch.from_numpy(v) for v in arrays]
            fns["torch"] = lambda tt=tt, fn=fn: fn(torch, *tt)
        for dev in devices:
            et = [ember.tensor(v, device=dev) for v in arrays]

            def call(et=et, dev=dev, fn=fn):
                out = fn(ember, *et)
                ember.synchronize(dev)
                return out
            fns[f"ember {dev}"] = call
        if op in slow:
            ct = [ember.tensor(v) for v in arrays]
            fns["decomposed cpu"] = (lambda ct=ct, d=slow[op]: d(*ct))
        ms = medians_ms(fns, args.repeat)
        base = ms["numpy"]
        print(f"{op:<14}" + "".join(
            f"{ms[c]:>12.3f} ({ms[c] / base:5.1f}x)" if c in ms else f"{'-':>22}"
            for c in columns), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
