"""`ember compat`: evaluate the compatibility matrix (check) and decode cryptic errors (explain)."""
from __future__ import annotations

import argparse
import json
import sys

EPILOG = """exit status of check: 0 all rules pass, 1 warnings, 2 problems; of explain: 0 when
a known error matched, 1 otherwise.  Facts are component=version pairs: python, numpy,
ember, cuda (CUDA runtime), driver (NVIDIA driver), gpu-arch (compute capability), rocm,
opencl (platform version) and distribution names (cupy-cuda12x, pyopencl, ember-opencl...)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    check = sub.add_parser("check", help="evaluate the matrix for this or an assumed machine",
                           description="Evaluate the compatibility matrix, offline, for this "
                           "machine, another machine's `ember doctor --json` report, or "
                           "assumed versions.", epilog=EPILOG)
    check.add_argument("--assume", nargs="+", action="extend", default=[],
                       metavar="NAME=VERSION", help="e.g. python=3.12 cuda=12.4 driver=535.104")
    check.add_argument("--from", dest="report", metavar="REPORT.json",
                       help="facts from an `ember doctor --json` report instead of this machine")
    check.add_argument("--no-detect", action="store_true",
                       help="ignore this machine: only --assume (and --from) facts")
    check.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                       help="limit for each plugin import (default 5)")
    explain = sub.add_parser("explain", help="decode a cryptic error message",
                             description="Explain a known cryptic error in plain words.")
    explain.add_argument("text", nargs="*", help="the error text ('-' reads standard input)")
    explain.add_argument("--list", action="store_true",
                         help="list every known error and category instead: its id and, in "
                              "one line, what it means")
    explain.add_argument("--here", action="store_true",
                         help="also show this machine's facts that decide between the causes "
                              "(drivers, GPUs, /dev/kfd, ICDs, wheels, MPI), as ember doctor "
                              "sees them")


def _read_report(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        report = json.load(fh)
    if not isinstance(report, dict):
        raise TypeError(f"{path} is not an ember doctor report")
    return report


def _facts(args, matrix, report):
    from ember import plugins

    from . import collect
    from .compat_eval import Facts

    if report is not None:
        facts = Facts.from_report(report)
    elif args.no_detect:
        facts = Facts()
    else:
        facts = collect.components(matrix, collect.drivers())
        facts.plugins = collect.plugin_rows(plugins.records())
    facts.assume(args.assume)
    return facts


def check(args) -> int:
    from ember import plugins

    from . import guard, loading, render
    from .compat_eval import compat_findings, load_matrix
    from .findings import Finding, exit_code

    try:
        report = _read_report(args.report) if args.report else None
    except (OSError, ValueError, TypeError) as exc:
        print(f"ember compat check: {exc}", file=sys.stderr)
        return 2
    carried = []
    if report is not None:
        # the other machine's plugins: their compat data and their doctor checks' findings
        matrix, notes = load_matrix(report.get("plugin_compat", ()))
        carried = [Finding.from_dict(f) for f in report.get("plugin_findings", ())]
    else:
        with guard.Capture() as capture, loading.guarded(args.timeout, capture):
            matrix, notes = load_matrix(plugins.compat_data())
    try:
        facts = _facts(args, matrix, report)
    except (OSError, ValueError, TypeError) as exc:
        print(f"ember compat check: {exc}", file=sys.stderr)
        return 2
    results, findings = compat_findings(facts, matrix)
    findings += notes + carried
    render.compat_check(facts, results, findings)
    return exit_code(findings)


def explain(args) -> int:
    from . import render
    from .compat_eval import explain as match
    from .compat_eval import load_matrix

    if args.list:
        matrix, _ = load_matrix(lazy=True)
        render.error_list(matrix)
        return 0
    if not args.text:
        print("ember compat explain: give the error text (or '-' to read it from standard "
              "input), or --list", file=sys.stderr)
        return 2
    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    matrix, _ = load_matrix(lazy=True)     # the shipped files: tests compile every pattern
    matches = match(text, matrix)
    render.explain(matches, matrix, text=text)
    if args.here and matches:
        import textwrap

        from .explain_here import facts_for
        print("on this machine:")
        for line in facts_for([m.id for m in matches], text):
            print(textwrap.fill(line, 79, initial_indent="  ", subsequent_indent="    ",
                                break_on_hyphens=False))
    return 0 if matches else 1


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return check(args)
    if args.action == "explain":
        return explain(args)
    print("usage: ember compat {check,explain} ... (see ember compat --help)", file=sys.stderr)
    return 2
