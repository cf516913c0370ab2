"""ember on CUDA vs raw CuPy vs PyTorch CUDA: a large float32 matmul and the per-op overhead.

    python benchmarks/cuda_matmul.py [--size 4096] [--repeat 20] [--json out.json]

Targets (issue 6): ember's matmul at >= 0.95x raw CuPy's throughput; ember's per-op
overhead (a tiny add, launch included) within 2x of PyTorch CUDA's.  Reported, never
asserted.  None of the three uses TF32 by default, so the matmuls do the same arithmetic.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable


def _median_ms(step: Callable[[], object], sync: Callable[[], None], repeat: int) -> float:
    """Median wall time of one synchronised step, after warm-up (cuBLAS picks its kernel)."""
    for _ in range(3):
        step()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _per_op_us(step: Callable[[], object], sync: Callable[[], None], count: int) -> float:
    """Average time per tiny op when many are issued back to back (the framework's cost)."""
    for _ in range(100):
        step()
    sync()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(count):
            step()
        sync()
        best = min(best, (time.perf_counter() - start) / count)
    return best * 1e6


def run(size: int, repeat: int, ops: int) -> dict:
    import ember
    if not ember.cuda.is_available():
        raise SystemExit(f"cuda_matmul: no CUDA/ROCm device: {ember.cuda.unavailable_reason()}")
    import cupy
    import numpy as np

    rng = np.random.default_rng(0)
    host_a = rng.standard_normal((size, size), dtype=np.float32)
    host_b = rng.standard_normal((size, size), dtype=np.float32)
    flops = 2.0 * size ** 3
    rows: dict[str, dict] = {}

    a, b = ember.tensor(host_a, device="cuda"), ember.tensor(host_b, device="cuda")
    x = ember.ones(16, device="cuda")
    rows["ember"] = {"matmul_ms": _median_ms(lambda: a @ b, ember.cuda.synchronize, repeat),
                     "add_us": _per_op_us(lambda: x + x, ember.cuda.synchronize, ops)}
    ca, cb, cx = cupy.asarray(host_a), cupy.asarray(host_b), cupy.ones(16, dtype=cupy.float32)
    sync = cupy.cuda.get_current_stream().synchronize
    rows["cupy"] = {"matmul_ms": _median_ms(lambda: ca @ cb, sync, repeat),
                    "add_us": _per_op_us(lambda: cx + cx, sync, ops)}
    try:
        import torch
        cuda_ok = torch.cuda.is_available()
    except ImportError:
        cuda_ok = False
    if cuda_ok:
        ta, tb = torch.from_numpy(host_a).cuda(), torch.from_numpy(host_b).cuda()
        tx = torch.ones(16, device="cuda")
        rows["torch"] = {"matmul_ms": _median_ms(lambda: ta @ tb, torch.cuda.synchronize, repeat),
                         "add_us": _per_op_us(lambda: tx + tx, torch.cuda.synchronize, ops)}
        # agreement, so a fast wrong answer cannot pass as a result
        diff = float(abs((a @ b).cpu().numpy() - (ta @ tb).cpu().numpy()).max())
    else:
        diff = float(abs((a @ b).cpu().numpy() - cupy.asnumpy(ca @ cb)).max())
    for row in rows.values():
        row["tflops"] = flops / (row["matmul_ms"] * 1e-3) / 1e12
    report = {"size": size, "repeat": repeat, "device": ember.cuda.get_device_name(0),
              "rows": rows, "max_abs_diff": diff,
              "matmul_ember_vs_cupy": rows["cupy"]["matmul_ms"] / rows["ember"]["matmul_ms"]}
    if "torch" in rows:
        report["add_ember_over_torch"] = rows["ember"]["add_us"] / rows["torch"]["add_us"]
    return report


def render(report: dict) -> str:
    lines = [(f"{report['size']}x{report['size']} float32 matmul on {report['device']} "
             f"(median of {report['repeat']})"),
             f"{'':8}{'matmul ms':>12}{'TFLOP/s':>10}{'tiny add us':>14}"]
    for name, row in report["rows"].items():
        lines.append(f"{name:8}{row['matmul_ms']:12.3f}{row['tflops']:10.2f}{row['add_us']:14.2f}")
    lines.append(f"matmul throughput ember/cupy: {report['matmul_ember_vs_cupy']:.3f} "
                 "(target >= 0.95)")
    if "add_ember_over_torch" in report:
        lines.append(f"per-op overhead ember/torch: {report['add_ember_over_torch']:.2f}x "
                     "(target <= 2)")
    else:
        lines.append("PyTorch CUDA not present: no per-op comparison with it")
    lines.append(f"max |ember - reference| over the product: {report['max_abs_diff']:.3g}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--ops", type=int, default=5000, help="tiny adds per overhead sample")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    report = run(args.size, args.repeat, args.ops)
    print(render(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
