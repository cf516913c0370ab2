"""Per-op dispatcher overhead: one op on tiny, small and large tensors, side by side.

Raw NumPy, ember, ember with a graph recorded (requires_grad), and PyTorch eager CPU (when
installed), one run, medians in microseconds and ratios.  The same as `ember bench`:

    python benchmarks/overhead.py [--device cpu] [--repeat 7]
"""
from __future__ import annotations

import argparse
import sys

from ember.tools import bench

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench.add_arguments(parser)
    sys.exit(bench.run(parser.parse_args()))
