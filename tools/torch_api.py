"""`ember torch-api`: how much of the PyTorch API that programs commonly use ember has,
namespace by namespace (torch, torch.nn, torch.nn.functional, torch.optim, Tensor methods,
torch.linalg, torch.utils.data), and which names are missing.

The list of names is core/_torch_gaps.py (COMMON); what ember has is read from ember
itself, so the report cannot drift from the code.
"""
from __future__ import annotations

import argparse
import importlib
import json

from ember._torch_gaps import COMMON


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the coverage as JSON")
    parser.add_argument("--missing", action="store_true",
                        help="list every missing name (default: the first few)")
    parser.add_argument("--namespace", metavar="NS",
                        help="only this namespace (torch, torch.nn, Tensor, ...)")


def report(coverage: dict, all_missing: bool) -> str:
    lines = [f"{'namespace':22} {'ember has':>10} {'share':>6}  missing"]
    have = total = 0
    for ns, entry in coverage.items():
        n_have, n = len(entry["have"]), len(entry["have"]) + len(entry["missing"])
        have, total = have + n_have, total + n
        missing = entry["missing"] if all_missing else entry["missing"][:8]
        more = len(entry["missing"]) - len(missing)
        lines.append(f"{ns:22} {f'{n_have}/{n}':>10} {n_have / max(n, 1):6.0%}  "
                     + ", ".join(missing) + (f", ... ({more} more)" if more else ""))
    lines.append(f"{'all':22} {f'{have}/{total}':>10} {have / max(total, 1):6.0%}")
    lines.append("A missing name raises ember.NotInEmberError (an AttributeError) that says "
                 "so; `import torch.X` of a missing module raises ModuleNotFoundError.")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    found = coverage()
    if args.namespace:
        if args.namespace not in found:
            print(f"ember torch-api: unknown namespace {args.namespace!r}; expected one of "
                  f"{', '.join(found)}")
            return 2
        found = {args.namespace: found[args.namespace]}
    if args.json:
        print(json.dumps(found, indent=1))
    else:
        print(report(found, args.missing))
    return 0


def _resolve(namespace: str):
    import ember
    if namespace == "Tensor":
        return ember.Tensor
    if namespace == "torch":
        return ember
    return importlib.import_module("ember" + namespace[len("torch"):])


def coverage() -> dict:
    """{namespace: {"have": [...], "missing": [...]}} for every COMMON namespace."""
    out = {}
    for ns, names in COMMON.items():
        try:
            target = _resolve(ns)
        except ImportError:
            target = None
        have = [n for n in names if target is not None and _has(target, n)]
        out[ns] = {"have": have, "missing": [n for n in names if n not in have]}
    return out


def _has(target, name: str) -> bool:
    try:
        getattr(target, name)
    except Exception:  # noqa: BLE001  (a lookup that fails in any way: ember lacks it)
        return False
    return True
