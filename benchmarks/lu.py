"""The LU and L D L^T families (linalg.lu_factor, lu, lu_solve, lu_unpack, ldl_factor) on cpu
and opencl:0 against PyTorch, one thread: median ms per call, timed round robin, and the
ratio to torch.

    python benchmarks/lu.py [--steps 15] [--devices cpu opencl:0]

Shapes: 8x8, 64x64, 256x256 and a batch (32, 16, 16), float32; lu_solve with 4 right-hand
sides.  OpenCL times include a synchronize.  Nothing here is asserted: the tests check the
values (tests/ops/parity/test_lu.py, test_ldl.py).

Figures (2026-12-03, the 2-core shared development machine at load 2.5-4, torch 2.13 on
MKL, SciPy 1.17 on OpenBLAS; median ms, ratio to torch; before = per-column kernels over the
whole matrix, elimination run twice, lu_solve through two general solves):

    cpu           lu_factor           lu                 lu_solve         ldl_factor
    8x8           6.20 -> 0.16 (11x)  6.46 -> 0.45 (18x) 0.72 -> 0.09     1.09 -> 0.24
    64x64         39.5 -> 0.20 (3.7x) 41.3 -> 0.60       6.35 -> 0.11     14.5 -> 0.30
    256x256       696  -> 1.22 (2.5x) 777  -> 2.69       20.1 -> 0.33     88.0 -> 3.28 (2.7x)
    (32, 16, 16)  16.8 -> 0.54 (4.2x) 17.4 -> 1.16       1.18 -> 0.49     33.0 -> 1.05

    opencl:0      lu_factor           lu_solve           ldl_factor
    8x8           14.1 -> 2.58        3.78 -> 0.90       4.67 -> 5.34
    64x64         23.6 -> 4.75        5.12 -> 2.39       9.04 -> 5.59
    256x256       594  -> 21.6        18.0 -> 6.04       53.0 -> 36.8
    (32, 16, 16)  12.6 -> 7.67        8.39 -> 6.31       41.7 -> 24.4

The CPU's factors come from LAPACK (scipy.linalg.lapack getrf/getrs, sytrf/sytrs); what is
left at small sizes is ember's per-op overhead (lu_factor is one kernel and 5 view and cast
ops; lu and lu_unpack build P, L and U from about 12).  opencl:0 runs array_api's kernels
on the host (blocked getrf: one matmul per 32-column panel; sytf2 one Python step per
column of each matrix).
"""
from __future__ import annotations

import argparse

from train_step import median_ms, pin_blas_threads

SHAPES = ((8, 8), (64, 64), (256, 256), (32, 16, 16))


def _cases(ember, torch, rng, dev, shape) -> dict:
    """name -> (ember call, torch call) on float32 inputs of one shape."""
    import numpy as np
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal((*shape[:-1], 4)).astype(np.float32)
    s = a + np.swapaxes(a, -1, -2)
    ta, tb, ts = (torch.from_numpy(x) for x in (a, b, s))
    ea, eb, es = (ember.tensor(x, device=dev) for x in (a, b, s))
    tlu, tpiv = torch.linalg.lu_factor(ta)
    elu, epiv = ember.linalg.lu_factor(ea)

    def synced(f):
        def call():
            out = f()
            ember.synchronize(dev)
            return out
        return call
    return {
        "lu_factor": (synced(lambda: ember.linalg.lu_factor(ea)),
                      lambda: torch.linalg.lu_factor(ta)),
        "lu": (synced(lambda: ember.linalg.lu(ea)), lambda: torch.linalg.lu(ta)),
        "lu_solve": (synced(lambda: ember.linalg.lu_solve(elu, epiv, eb)),
                     lambda: torch.linalg.lu_solve(tlu, tpiv, tb)),
        "lu_unpack": (synced(lambda: ember.lu_unpack(elu, epiv)),
                      lambda: torch.lu_unpack(tlu, tpiv)),
        "ldl_factor": (synced(lambda: ember.linalg.ldl_factor(es)),
                       lambda: torch.linalg.ldl_factor(ts)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--devices", nargs="*", default=["cpu", "opencl:0"])
    args = parser.parse_args(argv)
    pin_blas_threads(args.threads)
    import ember
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"median ms of {args.steps} calls, {args.threads} thread(s) (ratio to torch)")
    for dev in args.devices:
        try:
            ember.zeros(1, device=dev)
        except ember.EmberError as exc:
            print(f"{dev}: skipped ({exc})")
            continue
        for shape in SHAPES:
            for name, (e, t) in _cases(ember, torch, rng, dev, shape).items():
                ms = median_ms({"ember": e, "torch": t}, args.steps)
                print(f"{dev:9} {name:10} {str(shape):13} ember {ms['ember']:8.3f}  "
                      f"torch {ms['torch']:7.3f}  ({ms['ember'] / ms['torch']:5.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
