"""ember-opencl vs raw NumPy vs a hand-written PyOpenCL kernel, side by side in one run.

- `a*b+c` on 4M float32 elements (NumPy runs two loops; ember defers elementwise ops and
  runs the pair as one generated kernel, 8 elements per work-item with a non-temporal store;
  the hand kernel is the plain fused pass, one element per work-item);
- matmul 512 and 1024 float32 (the hand kernel is the classic 16x16 local-memory tile);
- program build time, reported separately (first build, then a cache hit).

Every timed call starts from the same state (caches scrubbed, worker threads idle) and the
sides are interleaved round by round: see settle() and side_by_side().

Thread counts: NumPy's elementwise loops use one thread, its matmul the BLAS threads;
`--threads N` sets PoCL's (POCL_MAX_PTHREAD_COUNT) and the BLAS's (OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS, MKL_NUM_THREADS) before anything loads, so both sides use N threads.

    python benchmarks/opencl.py [--threads N] [--device opencl:0]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HAND_FMA = """
__kernel void fma3(__global const float* a, __global const float* b, __global const float* c,
                   __global float* out, long n) {
  long i = get_global_id(0);   /* launched over exactly n items: no bounds check */
  out[i] = a[i] * b[i] + c[i];
}"""

HAND_MATMUL = """
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void mm(__global const float* a, __global const float* b, __global float* c, int n) {
  __local float As[TS][TS], Bs[TS][TS];
  int lj = get_local_id(0), li = get_local_id(1);
  int j = get_global_id(0), i = get_global_id(1);
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += TS) {
    As[li][lj] = a[i * n + k0 + lj];
    Bs[li][lj] = b[(k0 + li) * n + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; k++) acc += As[li][k] * Bs[k][lj];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[i * n + j] = acc;
}"""


def settle(scrub) -> None:
    """The same start for every timed call: read a buffer larger than the caches (no dirty
    lines of the previous candidate left to write back at the next one's expense), then
    pause so that BLAS and PoCL worker threads stop spinning (OpenBLAS spins ~0.1 s after
    a call: a PoCL kernel right after a 2-thread NumPy matmul ran at half speed)."""
    scrub.sum()
    time.sleep(0.15)


def side_by_side(cands, scrub, repeat=9) -> list[float]:
    """Median ms of each (fn, sync) candidate, timed in interleaved rounds (the order turns
    each round), each call after settle(). A result is held until after its sync: ember
    computes elementwise results lazily and never computes one that nobody holds."""
    for fn, sync in cands:              # warm-up: builds, pools, caches
        result = fn()
        sync()
        del result
    times = [[] for _ in cands]
    for r in range(repeat):
        for k in range(len(cands)):
            i = (k + r) % len(cands)
            fn, sync = cands[i]
            settle(scrub)
            start = time.perf_counter()
            result = fn()
            sync()
            times[i].append(time.perf_counter() - start)
            del result
    return [statistics.median(t) * 1e3 for t in times]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default="opencl:0")
    args = parser.parse_args(argv)
    if args.threads:
        for var in ("POCL_MAX_PTHREAD_COUNT", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                    "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    import ember
    import numpy as np
    import pyopencl as cl
    dev = ember.device(args.device).concrete()
    backend = dev.backend
    rt = backend.runtime(dev.index)
    info = backend.devices()[dev.index]
    sync = rt.synchronize
    print(f"device {dev}: {info.name} [{info.platform}; {info.version}]")
    print(f"threads: PoCL {os.environ.get('POCL_MAX_PTHREAD_COUNT', 'all cores')}, "
          f"BLAS {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}, "
          f"{os.cpu_count()} cores\n")

    ctx, queue = rt.context, rt.queue
    mf = cl.mem_flags
    tiny = [cl.Buffer(ctx, mf.READ_WRITE, 1024) for _ in range(4)]
    # build time: a fresh program (a unique constant in the code defeats every cache: PoCL
    # keys its kernel cache on the compiled code, not on the text), then a cache hit; PoCL
    # compiles the kernel itself at its first launch (per work-group size): timed apart
    start = time.perf_counter()
    unique = HAND_FMA.replace("a[i] * b[i]", f"a[i] * b[i] * {time.time_ns() % 997 + 2}.0f")
    fresh = cl.Program(ctx, unique).build()
    cold = time.perf_counter() - start
    start = time.perf_counter()
    fresh.fma3(queue, (256,), (256,), *tiny, np.int64(256))
    queue.finish()
    first = time.perf_counter() - start
    start = time.perf_counter()
    fma = cl.Program(ctx, HAND_FMA).build().fma3
    warm = time.perf_counter() - start
    mm = cl.Program(ctx, HAND_MATMUL).build().mm
    print(f"program build: {cold * 1e3:.0f} ms cold + {first * 1e3:.0f} ms at its first launch "
          f"(kernel compile), {warm * 1e3:.0f} ms cached\n")

    rng = np.random.default_rng(0)
    rows = []
    n = 4 * 1024 * 1024
    a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    ea, eb, ec = (ember.tensor(v, device=dev) for v in (a, b, c))
    da, db, dc = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v) for v in (a, b, c))
    dout = cl.Buffer(ctx, mf.READ_WRITE, n * 4)

    def hand():
        fma(queue, (n,), (256,), da, db, dc, dout, np.int64(n))

    check = np.empty(n, np.float32)
    hand()
    cl.enqueue_copy(queue, check, dout)
    assert np.allclose(check, a * b + c, atol=1e-5)
    assert np.allclose((ea * eb + ec).numpy(), a * b + c, atol=1e-5)
    nosync = lambda: None   # noqa: E731
    scrub = np.ones(16 * 1024 * 1024, np.float32)      # 64 MiB
    rows.append(("a*b+c 4M float32", *side_by_side(
        [(lambda: a * b + c, nosync), (lambda: ea * eb + ec, sync), (hand, sync)], scrub,
        15)))

    for m in (512, 1024):
        x, y = (rng.standard_normal((m, m), dtype=np.float32) for _ in range(2))
        ex, ey = ember.tensor(x, device=dev), ember.tensor(y, device=dev)
        dx, dy = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v) for v in (x, y))
        dz = cl.Buffer(ctx, mf.READ_WRITE, m * m * 4)
        ref = x @ y
        assert np.allclose((ex @ ey).numpy(), ref, rtol=1e-3, atol=1e-2)

        def hand_mm(dx=dx, dy=dy, dz=dz, m=m):
            mm(queue, (m, m), (16, 16), dx, dy, dz, np.int32(m))
        t_np, t_ember = side_by_side([(lambda x=x, y=y: x @ y, nosync),
                                      (lambda ex=ex, ey=ey: ex @ ey, sync)], scrub)
        rows.append((f"matmul {m} float32", t_np, t_ember,
                     side_by_side([(hand_mm, sync)], scrub, repeat=3)[0]))

    print(f"{'':20s} {'NumPy':>10s} {'ember':>10s} {'hand':>10s} {'ember/NumPy':>12s} "
          f"{'hand/NumPy':>11s}")
    for name, t_np, t_ember, t_hand in rows:
        print(f"{name:20s} {t_np:8.2f}ms {t_ember:8.2f}ms {t_hand:8.2f}ms "
              f"{t_ember / t_np:11.2f}x {t_hand / t_np:10.2f}x")
    choice = rt.choices.get("matmul")
    if choice:
        times = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in rt.choices["matmul_times"].items())
        how = ("read from the tuning cache, timed by an earlier run"
               if rt.choices.get("matmul_source") == "cache" else "timed once")
        print(f"\nmatmul structure chosen for this device: {choice} ({how}: {times})")


if __name__ == "__main__":
    sys.exit(main())
