"""`python -m ember.testing --report`: the suite run without pytest, summarised per op
family and per device, for plugin authors (`--json` for machines)."""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass

from .checks import Unsupported
from .suite import Check, all_checks, targets


@dataclass(frozen=True)
class Result:
    device: str
    family: str
    name: str
    status: str                   # passed | failed | skipped
    message: str = ""
    seconds: float = 0.0


def run_check(check: Check, device: str) -> Result:
    """One check on one device; never raises."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check.run(device)
    except Unsupported as exc:
        return Result(device, check.family, check.name, "skipped", str(exc),
                      time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001  (a failure of the backend under test)
        text = str(exc).strip() or traceback.format_exc(limit=2)
        return Result(device, check.family, check.name, "failed",
                      f"{type(exc).__name__}: {text}", time.perf_counter() - start)
    return Result(device, check.family, check.name, "passed", "", time.perf_counter() - start)


def run_suite(devices=None, families=None) -> tuple[list[Result], list[Result]]:
    """(results, problems): every check on every device, and one result per device type
    that could not be tested."""
    found = targets(devices)
    problems = [Result(t.device, "devices", "load", "failed" if t.fatal else "skipped",
                       t.problem) for t in found if t.problem]
    checks = [c for c in all_checks() if families is None or c.family in families]
    results = []
    for t in found:
        if t.problem:
            continue
        cpu = t.device.split(":")[0] == "cpu"
        results += [run_check(c, t.device) for c in checks if c.cpu or not cpu]
    return results, problems


def table(results: list[Result], problems: list[Result]) -> str:
    """A text table: one row per family, one column per device: passed/total (skips
    are not counted), then every failure with its first line."""
    devices = sorted({r.device for r in results})
    families = sorted({r.family for r in results})
    width = max([len(f) for f in families] + [8])
    cols = [max(len(d), 9) for d in devices]
    lines = ["family".ljust(width) + "  " + "  ".join(d.rjust(c) for d, c in zip(devices, cols))]
    for fam in families:
        cells = []
        for d, c in zip(devices, cols):
            rs = [r for r in results if r.family == fam and r.device == d and
                  r.status != "skipped"]
            bad = sum(r.status == "failed" for r in rs)
            cell = f"{len(rs) - bad}/{len(rs)}" + (" X" if bad else "") if rs else "-"
            cells.append(cell.rjust(c))
        lines.append(fam.ljust(width) + "  " + "  ".join(cells))
    for d in devices:
        rs = [r for r in results if r.device == d]
        n = {s: sum(r.status == s for r in rs) for s in ("passed", "failed", "skipped")}
        lines.append(f"{d}: {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped")
    failures = [r for r in results if r.status == "failed"]
    if failures:
        lines.append("\nfailures:")
        lines += [f"  {r.device} {r.name} [{r.family}]: {r.message.splitlines()[0][:200]}"
                  for r in failures]
    for p in problems:
        lines.append(f"\n{p.device} not tested ({p.status}): {p.message}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ember.testing",
        description="The ember conformance suite: every row, rule and random program on "
                    "every device (or the ones named).")
    parser.add_argument("--report", action="store_true",
                        help="run the suite and print pass/fail per op family and device")
    parser.add_argument("--device", action="append", help="a device to test (repeatable)")
    parser.add_argument("--family", action="append", help="only these families (repeatable)")
    parser.add_argument("--json", action="store_true", help="print every result as JSON")
    parser.add_argument("--torch-reference", action="store_true",
                        help="run PyTorch's OpInfo and ModuleInfo samples (needs torch and "
                             "expecttest) and print names present, names fully right and "
                             "samples right per device, with the failures grouped")
    parser.add_argument("--max-samples", type=int, default=None,
                        help="with --torch-reference: at most this many samples per op")
    parser.add_argument("--op", action="append",
                        help="with --torch-reference: only these op_db names (repeatable)")
    parser.add_argument("--reference-inputs", action="store_true",
                        help="with --torch-reference: the OpInfos' reference_inputs "
                             "(a superset of sample_inputs) where they have them")
    parser.add_argument("--dtype", choices=("complex64", "float64", "int64", "bool", "float16"),
                        default=None,
                        help="with --torch-reference: the OpInfos' samples of this dtype "
                             "(only the ops that have them) instead of float32")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="with --torch-reference: print every failing sample")
    args = parser.parse_args(argv)
    if args.torch_reference:
        from . import torch_reference
        return torch_reference.main(args.device, args.max_samples, args.op,
                                    reference=args.reference_inputs, verbose=args.verbose,
                                    dtype=args.dtype)
    if not args.report:
        parser.print_help()
        return 0
    start = time.perf_counter()
    results, problems = run_suite(args.device, args.family)
    if args.json:
        print(json.dumps({"results": [asdict(r) for r in results],
                          "problems": [asdict(p) for p in problems],
                          "seconds": round(time.perf_counter() - start, 1)}))
    else:
        print(table(results, problems))
        print(f"\n{len(results)} checks in {time.perf_counter() - start:.1f} s")
    failed = any(r.status == "failed" for r in results + problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
