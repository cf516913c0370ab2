"""`ember doctor perf [--json] [--steps N] script.py [args...]`: run a few steps of a program
under ember.profiler and check the tuning checklist with this run's numbers
(ember.profiler.diagnose; core/profiler/checklist.py).

A step ends at each optimizer.step() (or the program's own profile.step()); the program
stops after warmup + steps steps.  Exit status: 0 nothing to fix, 1 findings, 2 the
program failed or could not be found.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys


class _Enough(BaseException):
    """Raised from the step boundary once enough steps ran: ends the user's program."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember doctor perf", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="write the report as JSON")
    p.add_argument("--steps", type=int, default=10, help="steps to measure (default 10)")
    p.add_argument("--warmup", type=int, default=2,
                   help="first steps left out: kernel builds, caches (default 2)")
    p.add_argument("--torch", action="store_true",
                   help="run the program with `import torch` giving ember (ember.torch_alias)")
    p.add_argument("script", help="the program to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def profile_script(path: str, argv=(), steps: int = 10, warmup: int = 2,
                   as_torch: bool = False):
    """Run `path` as __main__ under the profiler until warmup + steps optimizer steps;
    the PerfReport of that run."""
    from ember.profiler import ProfilerActivity, profile
    from ember.profiler.checklist import analyze
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ember doctor perf: no such program {path!r}")
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                   record_shapes=True, profile_memory=True)
    prof._keep_samples = True
    count = [0]

    def boundary():
        prof.step()
        count[0] += 1
        if count[0] >= warmup + steps + 1:
            raise _Enough

    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    if as_torch:
        from ember import torch_alias
        torch_alias.install()
    prof.start()
    prof._rec.on_optimizer_step = boundary
    try:
        runpy.run_path(path, run_name="__main__")
    except _Enough:
        pass
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise
    finally:
        prof.stop()
        sys.argv, sys.path[:] = saved_argv, saved_path
        if as_torch:
            torch_alias.uninstall()
    return analyze(prof.events(), warmup=warmup if count[0] > warmup + 1 else 0)


def main(argv, json_out: bool = False) -> int:
    args = parser().parse_args(argv)
    try:
        report = profile_script(args.script, args.args, args.steps, args.warmup, args.torch)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001  (the user's program failed: say so, exit 2)
        import traceback
        traceback.print_exc()
        print(f"ember doctor perf: {args.script} raised {type(exc).__name__}: {exc}; "
              "fix the program (it fails without the profiler too?) and run again",
              file=sys.stderr)
        return 2
    except SystemExit as exc:
        print(f"ember doctor perf: {args.script} exited with status {exc.code}",
              file=sys.stderr)
        return 2
    if args.json or json_out:
        from .render import write_json
        write_json(report.to_dict())
    else:
        render(report)
    return 1 if report.findings else 0


def render(report) -> None:
    from rich.console import Console
    from rich.table import Table
    console = Console()
    s = report.summary
    console.print(f"[bold]ember doctor perf[/bold]: {report.steps} steps, "
                  f"{report.step_ms:.2f} ms per step; kernels {s['kernel_share']:.0%}, "
                  f"DataLoader {s['dataloader_share']:.0%}, host overhead "
                  f"{s['host_overhead_share']:.0%}; threads {s['threads']} on "
                  f"{s['cores']} cores, load {s['load_average']:.1f}")
    if not report.findings:
        console.print("[green]nothing to fix[/green]: no check of the checklist found a cause")
    for f in report.findings:
        console.print(f"[yellow]{f.check}[/yellow] ({f.share:.0%} of the step): {f.measured}")
        console.print(f"  why: {f.why}")
        console.print(f"  try: [bold]{f.fix}[/bold]")
        console.print(f"  expected: {f.expected_gain}")
    if report.top_ops:
        table = Table(title="slowest ops (host time of the kernel call)")
        for c in ("op", "shapes", "device", "ms/step", "calls/step", "share"):
            table.add_column(c)
        for r in report.top_ops:
            table.add_row(r["op"], r["shapes"], r["device"], f"{r['ms_per_step']:.3f}",
                          f"{r['calls_per_step']:.1f}", f"{r['share']:.0%}")
        console.print(table)
    if report.memory_peak:
        console.print("memory peak: " + ", ".join(f"{d} {n / 2**20:.1f} MiB" for d, n in
                                                  report.memory_peak.items()))
