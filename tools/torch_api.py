"""`ember torch-api`: how much of the PyTorch API that programs commonly use ember has,
namespace by namespace (torch, torch.nn, torch.nn.functional, torch.optim, Tensor methods,
torch.linalg, torch.utils.data), and which names are missing; then the same weighted by
use: the census of public PyTorch code (tools/data/torch_census.json, built by
tools/census.py) counts in how many files each name, keyword argument and import path
appears, and the report says what share of those uses ember covers and lists every one
used by at least --threshold of the census files that ember lacks (the work list).

The namespace lists are core/_torch_gaps.py (COMMON); what ember has is read from ember
itself, so the report cannot drift from the code.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
from pathlib import Path

from ember._torch_gaps import COMMON

CENSUS = {"main": Path(__file__).resolve().parent / "data" / "torch_census.json",
          "sealed": Path(__file__).resolve().parent / "data" / "torch_census_sealed.json"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the coverage as JSON")
    parser.add_argument("--missing", action="store_true",
                        help="list every missing name (default: the first few)")
    parser.add_argument("--namespace", metavar="NS",
                        help="only this namespace (torch, torch.nn, Tensor, ...)")
    parser.add_argument("--census", choices=sorted(CENSUS), metavar="PART",
                        help="only the census report, of this part: main (the table) or "
                             "sealed (the held-out repositories)")
    parser.add_argument("--threshold", type=float, default=0.01, metavar="SHARE",
                        help="work list: what at least this share of census files uses "
                             "(default 0.01)")


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
    if args.census:
        found = census_coverage(args.census, args.threshold)
        print(json.dumps(found, indent=1) if args.json else census_report(found))
        return 0
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
        if not args.namespace:
            print()
            print(census_report(census_coverage("main", args.threshold), brief=True))
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


# --- weighted by use: the census of public PyTorch code ---------------------------------

def load_census(part: str = "main") -> dict:
    """The census table of one part (tools/data/README.md describes it)."""
    return json.loads(CENSUS[part].read_text())


def _ember_module(torch_path: str):
    """What `import <torch_path>` gives a program under ember.torch_alias: an ember module,
    or a namespace object (torch.backends.cudnn is ember.backends.cudnn)."""
    from ember.torch_alias import resolve
    return resolve(torch_path)


def resolve(name: str):
    """The ember object a census name means (torch.X -> ember.X, torch.nn.X -> ember.nn.X,
    Tensor.X -> ember.Tensor.X, Module.X -> ember.nn.Module.X), as a program running under
    ember.torch_alias reaches it; raises (AttributeError, ImportError) where ember lacks it."""
    import ember
    if name.startswith("Tensor."):
        return getattr(ember.Tensor, name[len("Tensor."):])
    if name.startswith("Module."):
        return getattr(ember.nn.Module, name[len("Module."):])
    parts = name.split(".")
    obj = ember
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            if not inspect.ismodule(obj):
                raise
            obj = _ember_module(".".join(parts[:i + 1]))
    return obj


def _kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "function" if callable(obj) else "attribute"


def name_status(row: dict) -> tuple[str, str]:
    """(status, note) of a census name in ember: have, missing, or wrong (ember has the
    name as another kind of thing: a method where torch has an attribute, a function
    where torch has a class)."""
    try:
        obj = resolve(row["name"])
    except Exception as exc:  # noqa: BLE001  (a lookup that fails in any way: ember lacks it)
        return "missing", type(exc).__name__
    torch_kind = row["kind"]
    if row["namespace"] == "Tensor":
        from ember import Tensor
        raw = inspect.getattr_static(Tensor, row["name"][len("Tensor."):], None)
        ember_attr = isinstance(raw, property) or not callable(obj)
        if (torch_kind == "attribute") != ember_attr:
            return "wrong", (f"a {'property' if torch_kind == 'attribute' else 'method'} in "
                             f"torch, a {'property' if ember_attr else 'method'} in ember")
        return "have", ""
    mine = _kind(obj)
    if torch_kind == "class" and mine != "class":
        return "wrong", f"a class in torch, a {mine} in ember (isinstance and subclassing differ)"
    if torch_kind == "function" and not callable(obj):
        return "wrong", f"a function in torch, not callable in ember (a {mine})"
    return "have", ""


def keyword_status(row: dict) -> tuple[str, str]:
    """(status, note) of a census keyword: have, missing (ember's callee has no such
    parameter), unverified (ember's callee takes **kwargs), or no-callee."""
    try:
        obj = resolve(row["callee"])
    except Exception:  # noqa: BLE001
        return "no-callee", "ember lacks the callee"
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return "unverified", "ember's callee has no signature"
    if any(p.name == row["keyword"] and p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)
           for p in params):
        return "have", ""
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return "unverified", "taken by **kwargs"
    return "missing", ""


def import_status(row: dict) -> tuple[str, str]:
    try:
        _ember_module(row["path"])
    except Exception as exc:  # noqa: BLE001
        return "missing", type(exc).__name__
    return "have", ""


def census_coverage(part: str = "main", threshold: float = 0.01) -> dict:
    """Coverage of the census table by ember: by name (share of distinct names) and by
    use (share of file-uses, each name weighted by the number of files using it), for
    names, keyword arguments and import paths (present: ember has it, even where it is
    another kind of thing or takes the keyword through **kwargs); and the work list:
    every one used by at least `threshold` of the files that ember lacks, then those it
    has as another kind of thing (`wrong`) and those it cannot check (`unverified`).
    Names torch itself no longer has (torch._six, torch.utils.ffi) and keywords torch's
    own signature rejects (str.split's maxsplit= counted as Tensor.split's) are left out
    and counted apart (`not_in_torch`)."""
    table = load_census(part)
    n_files = table["files"]
    floor = threshold * n_files
    out = {"part": part, "files": n_files, "repositories": table["repositories"],
           "torch_version": table["torch_version"], "threshold": threshold}
    sections = (
        ("names", table["names"], name_status, lambda r: r["kind"] != "missing",
         lambda r: r["name"]),
        ("keywords", table["keywords"], keyword_status, lambda r: r["in_torch"] is not False,
         lambda r: f"{r['callee']}({r['keyword']}=)"),
        ("imports", table["imports"], import_status, lambda r: r["in_torch"],
         lambda r: r["path"]),
    )
    shared = {r["name"]: r["shared_with"] for r in table["names"] if r.get("shared_with")}
    for key, rows, status_of, in_torch, label in sections:
        counted = [r for r in rows if in_torch(r)]
        have_n = have_w = total_w = 0
        work, wrong, unverified = [], [], []
        for r in counted:
            status, note = status_of(r)
            total_w += r["files"]
            if status in ("have", "unverified", "wrong"):     # present in ember
                have_n += 1
                have_w += r["files"]
            if r["files"] < floor:
                continue
            entry = {"name": label(r), "files": r["files"], "repos": r["repos"],
                     "share": round(r["files"] / n_files, 4), "status": status}
            also = r.get("shared_with") or shared.get(r.get("callee"))
            if also:
                # counted on every receiver: dict.values, list.index, str.split also count
                entry["shared_with"] = "/".join(also)
            if note:
                entry["note"] = note
            if key == "keywords" and r["in_torch"] is None:
                entry["torch"] = "torch's signature unknown"
            if status == "unverified":
                unverified.append(entry)
            elif status == "wrong":
                wrong.append(entry)
            elif status != "have":
                work.append(entry)
        out[key] = {"distinct": len(counted), "have": have_n,
                    "by_name": round(have_n / max(len(counted), 1), 4),
                    "by_use": round(have_w / max(total_w, 1), 4),
                    "not_in_torch": len(rows) - len(counted),
                    "work": work, "wrong": wrong, "unverified": unverified}
    return out


def census_report(found: dict, brief: bool = False) -> str:
    lines = [f"census of public PyTorch code ({found['part']} part: {found['files']} files, "
             f"{found['repositories']} repositories, torch {found['torch_version']}; "
             "tools/data/README.md)",
             f"{'':10} {'by name':>16} {'weighted by use':>16}"]
    for key in ("names", "keywords", "imports"):
        sec = found[key]
        lines.append(f"{key:10} {sec['have']:>6}/{sec['distinct']:<5} {sec['by_name']:>4.0%}"
                     f" {sec['by_use']:>15.1%}")
    pct = f"{found['threshold']:.0%}"
    for key in ("names", "keywords", "imports"):
        sec = found[key]
        for what, rows in (("lacks", sec["work"]), ("has wrongly", sec["wrong"]),
                           ("cannot check", sec["unverified"])):
            if not rows or (brief and what == "cannot check"):
                continue
            lines.append(f"{key} used by >= {pct} of the files that ember {what} "
                         f"({len(rows)}):")
            shown = rows[:12] if brief else rows
            for r in shown:
                extra = "".join(f"  [{r[k]}]" for k in ("note", "torch") if k in r)
                if "shared_with" in r:
                    extra += f"  [also a {r['shared_with']} name: an upper bound]"
                lines.append(f"  {r['files']:>4} files {r['repos']:>4} repos  {r['name']}{extra}")
            if len(shown) < len(rows):
                lines.append(f"  ... ({len(rows) - len(shown)} more: "
                             "ember torch-api --census main)")
    return "\n".join(lines)
