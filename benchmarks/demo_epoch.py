"""`ember demo` epochs, eager against compiled (ember.compile), on each device given.

One run trains the demo (tools/demo.py: the CNN, Adam, batch 32, 1437 training images and
the test set evaluated each epoch) eagerly, then compiled, from the same seed. The first
epoch of a compiled run captures (two captures, a generic replay, then on OpenCL the
recording of its launches), so the figure is the median epoch from epoch 4 on. Accuracies
are printed to show both train the same. On a shared machine run it a few times: the
epochs of one run vary by +-20%.

    python benchmarks/demo_epoch.py [--devices cpu opencl:0] [--epochs 10] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", nargs="+", default=["cpu", "opencl:0"])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and PoCL threads (default 1)")
    args = parser.parse_args(argv)
    if os.environ.get("OPENBLAS_NUM_THREADS") != str(args.threads):
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "POCL_MAX_PTHREAD_COUNT"):
            os.environ[var] = str(args.threads)
        os.execv(sys.executable, [sys.executable, *sys.argv])
    import ember
    from ember.tools.demo import Config, train
    config = Config(epochs=max(args.epochs, 5))
    print(f"ember demo, {config.epochs} epochs, batch {config.batch_size}, "
          f"{args.threads} thread(s); seconds per epoch, median from epoch 4")
    for device in args.devices:
        try:
            ember.device(device).concrete()
        except Exception as exc:  # noqa: BLE001  (a device this machine lacks: say so)
            print(f"  {device}: not available ({exc})")
            continue
        runs = {}
        for compiled in (False, True):
            result = train(config, device, checkpoint=None, compiled=compiled)
            runs[compiled] = (statistics.median(h.seconds for h in result.history[3:]),
                              result.history[0].seconds, result.test_accuracy)
        (eager, eager_first, eager_acc), (comp, comp_first, comp_acc) = runs[False], runs[True]
        print(f"  {device}: eager {eager:.3f} s, compiled {comp:.3f} s, "
              f"ratio {comp / eager:.2f}x (first epochs {eager_first:.2f} / "
              f"{comp_first:.2f} s; test accuracy {eager_acc:.2%} / {comp_acc:.2%})")


if __name__ == "__main__":
    main()
