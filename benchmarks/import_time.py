"""`import ember` against `import numpy` and `import torch`: fresh interpreters, medians.

The budget is 0.25 s including NumPy, with no plugin and no heavy library imported
(tests/unit/test_tensor.py checks the second part; the time is measured here, not asserted):

    python benchmarks/import_time.py [--repeat 7]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys

CODE = "import time; t = time.perf_counter(); import {m}; print(time.perf_counter() - t)"


def measure(module: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", CODE.format(m=module)], check=True,
                             capture_output=True, text=True)
        times.append(float(out.stdout))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    base = measure("numpy", args.repeat)
    print(f"{'module':<8} {'median s':>9} {'/ numpy':>8}")
    for module in ("numpy", "ember", "torch"):
        if importlib.util.find_spec(module) is None:
            print(f"{module:<8} {'not installed':>18}")
            continue
        t = measure(module, args.repeat)
        print(f"{module:<8} {t:9.3f} {t / base:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
