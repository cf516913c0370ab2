"""`ember warmup`: build a device's OpenCL programs ahead of time, with a progress bar.

An OpenCL device compiles each program the first time an op needs it (PoCL: a build per
op family and dtype, then a machine-code compile per kernel at its first launch), which
makes a new user's first epoch slow. This command runs the common families once on small
arrays (elementwise float32/int64/bool math and comparisons, casts, reductions, matmul,
conv and pooling forward and backward, softmax and losses, indexing, scans and sorts) and
one epoch of the demo's CNN (its fused elementwise trees and Adam step included), so that
ember's binary cache (backends/opencl/binaries.py) and the driver's own cache hold them;
later processes then load instead of compiling. Each step reads its result back, so the
launch-time compiles happen here too. Running it again is cheap: everything is cached.
"""
from __future__ import annotations

import argparse
import sys
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="opencl:0",
                        help="the OpenCL device to warm up (default opencl:0)")
    parser.add_argument("--no-demo", action="store_true",
                        help="skip the demo CNN's epoch (only the op families)")
    parser.add_argument("--only", default=None, metavar="FAMILY[,FAMILY...]",
                        help="warm up only these op families: " + ", ".join(FAMILIES))


def _families():
    """(label, function(device)) of the common op families; each reads its result back."""
    import ember
    import ember.nn.functional as F

    def floats(device, *shape):
        return ember.linspace(-2.0, 2.0, steps=_size(shape), device=device).reshape(shape)

    def elementwise_f32(d):
        x, y = floats(d, 4, 33), floats(d, 4, 33).flip(1)
        outs = [x + y, x - y, x * y, x / (y.abs() + 1), -x, x.exp(), (x.abs() + 1).log(),
                x.abs().sqrt(), x.tanh(), x.sigmoid(), x.relu(), ember.maximum(x, y),
                ember.minimum(x, y), x.pow(2), x.sin(), x.cos(), x.clamp(-1, 1),
                ember.where(x > y, x, y)]
        return ember.stack([o.sum() for o in outs]).cpu()

    def compare(d):
        x, y = floats(d, 4, 33), floats(d, 4, 33).flip(1)
        outs = [x == y, x != y, x < y, x <= y, x > y, x >= y]
        return [(o.float().sum(), o.sum(), o.any(), o.all()) for o in outs][-1][0].cpu()

    def integers(d):
        i = ember.arange(132, device=d).reshape(4, 33)
        j = i.flip(1)
        outs = [i + j, i - j, i * j, i // 3, i % 7, -i, i.abs(), ember.maximum(i, j),
                (i == j).long(), (i < j).long(), ember.where(i > j, i, j)]
        return ember.stack([o.sum() for o in outs]).cpu()

    def casts(d):
        x = floats(d, 4, 33)
        return [x.long().float().sum(), x.int().sum(), x.bool().float().sum(),
                x.double().sum() if _fp64(d) else x.sum()][-1].cpu()

    def reductions(d):
        x = floats(d, 6, 40)
        return ember.stack([x.sum(), x.mean(), x.amax(), x.amin(), x.sum(1).sum(),
                            x.mean(0).sum(), x.amax(1).sum(), x.argmax(1).float().sum(),
                            x.argmin(0).float().sum(), x.var(), x.norm()]).cpu()

    def matmul(d):
        outs = []
        for m, k, n in ((1, 128, 10), (32, 128, 10), (64, 64, 64), (29, 144, 16), (7, 3, 5)):
            a, b = floats(d, m, k), floats(d, k, n)
            outs.append((a @ b).sum())
            outs.append((a.t().contiguous().t() @ b).sum())
        return ember.stack(outs).cpu()

    def conv_pool(d):
        x = floats(d, 2, 3, 8, 8).requires_grad_()
        w = floats(d, 4, 3, 3, 3).requires_grad_()
        y = F.max_pool2d(F.relu(F.conv2d(x, w, padding=1)), 2)
        y = F.avg_pool2d(y, 2)
        y.sum().backward()
        return (x.grad.sum() + w.grad.sum()).cpu()

    def softmax_losses(d):
        x = floats(d, 8, 10).requires_grad_()
        target = ember.arange(8, device=d) % 10
        loss = (F.cross_entropy(x, target) + F.mse_loss(x, x.detach() * 0.5)
                + F.softmax(x, 1).sum() + F.log_softmax(x, 1).mean())
        loss.backward()
        return x.grad.sum().cpu()

    def indexing(d):
        x = floats(d, 6, 7)
        idx = ember.tensor([0, 2, 5, 1], device=d)
        out = x[idx].sum() + x.index_select(1, idx).sum()
        out = out + x.gather(1, idx.view(1, 4).expand(6, 4)).sum()
        out = out + ember.zeros(6, 7, device=d).scatter_add(1, idx.view(1, 4).expand(6, 4),
                                                             x[:, :4]).sum()
        return (out + x[x > 0].sum()).cpu()

    def scan_sort(d):
        x = floats(d, 5, 9)
        values, order = x.sort(1)
        return (x.cumsum(1).sum() + values.sum() + order.float().sum()
                + x.flatten().argsort().float().sum()).cpu()

    return {"elementwise": ("elementwise float32", elementwise_f32),
            "compare": ("comparisons and bool", compare),
            "int64": ("elementwise int64", integers), "casts": ("casts", casts),
            "reductions": ("reductions", reductions), "matmul": ("matmul", matmul),
            "conv": ("conv and pooling (+ backward)", conv_pool),
            "losses": ("softmax and losses (+ backward)", softmax_losses),
            "indexing": ("indexing", indexing), "scan": ("scans and sorts", scan_sort)}


FAMILIES = ("elementwise", "compare", "int64", "casts", "reductions", "matmul", "conv",
            "losses", "indexing", "scan")


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _fp64(device) -> bool:
    import ember
    try:
        ember.zeros(1, dtype=ember.float64, device=device)
        return True
    except Exception:  # noqa: BLE001  (a device without doubles: nothing to warm)
        return False


def _opencl_runtime(device):
    """The OpenCL Runtime behind `device` (for its build counters), or None."""
    try:
        backend = device.concrete().backend
        return backend.runtime(device.index) if hasattr(backend, "runtime") else None
    except Exception:  # noqa: BLE001  (counters are decoration)
        return None


class _Epoch:
    """A demo Reporter that moves the warmup bar within the demo's epoch."""

    def __init__(self, progress, task):
        self.progress, self.task = progress, task

    def epoch_started(self, epoch, epochs, batches):
        self.progress.update(self.task, total=batches + 1)

    def batch_done(self, loss):
        self.progress.update(self.task, advance=1)

    def epoch_done(self, stats, epochs):
        self.progress.update(self.task, advance=1)


def run(args: argparse.Namespace) -> int:
    import os

    import ember
    from rich.console import Console

    console = Console(stderr=False)
    chosen = FAMILIES if args.only is None else tuple(
        f.strip() for f in args.only.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown or not chosen:
        print(f"ember warmup: --only {args.only!r}: unknown family "
              f"{', '.join(map(repr, unknown)) or '(none given)'}; expected a comma-separated "
              f"list of {', '.join(FAMILIES)}", file=sys.stderr)
        return 2
    saved = {k: os.environ.get(k) for k in ("EMBER_OPENCL_NOTICE", "EMBER_OPENCL_STORE_ALL",
                                            "EMBER_OPENCL_TUNE_AFTER")}
    # set before the device is first used: the probe below already builds a program (the
    # float32 elementwise one, which then went unstored)
    os.environ["EMBER_OPENCL_NOTICE"] = "0"          # the bar says what is happening
    os.environ["EMBER_OPENCL_STORE_ALL"] = "1"       # every program into ember's cache
    # what an ordinary run does only once it pays, done now: matmul's structures timed (the
    # choice saved), and every fused tree met twice built (so later runs load them)
    os.environ["EMBER_OPENCL_TUNE_AFTER"] = "0"
    rt = fuse_after = None
    try:
        try:
            device = ember.device(args.device)
            if device.type != "opencl":
                raise ValueError(f"{args.device} is a {device.type} device")
            ember.zeros(1, device=device).cpu()
        except Exception as exc:  # noqa: BLE001  (reported as a usage error below)
            print(f"ember warmup: cannot use device {args.device!r} ({exc}); expected an "
                  "available OpenCL device such as opencl:0 (see `ember devices`)",
                  file=sys.stderr)
            return 2
        rt = _opencl_runtime(device)
        if rt is not None:
            fuse_after, rt.fuse_after = rt.fuse_after, 0.0
        return _warm(args, device, chosen, console)
    finally:
        if rt is not None:
            rt.fuse_after = fuse_after
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _warm(args, device, chosen, console) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    table = _families()
    families = [table[name] for name in chosen]
    start = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        whole = progress.add_task(f"warming up {device}", total=len(families) + (
            0 if args.no_demo else 1))
        for label, work in families:
            progress.update(whole, description=f"warming up {device}: {label}")
            work(device)
            progress.update(whole, advance=1)
        if not args.no_demo:
            from .demo import Config, train
            progress.update(whole, description=f"warming up {device}: the demo's CNN")
            inner = progress.add_task("  one epoch of `ember demo`", total=1)
            train(Config(epochs=1), device, reporter=_Epoch(progress, inner))
            progress.remove_task(inner)
            progress.update(whole, advance=1)
    rt = _opencl_runtime(device)
    built = (f": {rt.builds} programs ({rt.cached_builds} already in ember's cache), "
             f"{rt.build_seconds:.1f} s building" if rt is not None else "")
    console.print(f"warmed up {device} in {time.perf_counter() - start:.1f} s{built}",
                  markup=False)
    return 0
