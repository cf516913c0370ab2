"""`ember ops`: every declared op and kernel, and which of them each available backend
implements (from the op registry); `--json` prints the declarations themselves, with their
signatures: the spec a backend author implements against."""
from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", metavar="DEVICE",
                        help="only this device type (cpu, opencl, cuda:0 ...)")
    parser.add_argument("--json", action="store_true",
                        help="print every declaration (signature, dtype rule, doc) and each "
                             "backend's kernels as JSON")


def declarations() -> list[dict]:
    """Every primitive and declared kernel, as data (ember.ops.describe), with how vmap
    batches it (`batching`: the kind of its rule in ember.func.batching, or "loop")."""
    from ember import ops
    from ember.func import batching_rules
    rules = batching_rules()
    return [{**ops.describe(op), "batching": rules[op.name]}
            for op in sorted(ops.REGISTRY.values(),
                             key=lambda op: (not op.required, op.kind, op.name))]


def coverage(kinds=None) -> dict:
    """{'ops': [(name, kind)], 'backends': {type: {'kernels', 'dtypes'}}, 'unavailable': {}}
    for every available backend (or the given device types)."""
    from ember import ops, plugins

    from . import collect
    from .compat_eval import load_matrix

    matrix, _ = load_matrix()
    rows = collect.backend_rows(matrix)
    loaded = plugins.loaded_backends()
    found = {"ops": sorted(((op.name, op.kind) for op in ops.OPS.values()),
                           key=lambda pair: (pair[1], pair[0])),
             "backends": {}, "unavailable": {}}
    for row in rows:
        if kinds is not None and row["type"] not in kinds:
            continue
        if row["status"] != "ok":
            found["unavailable"][row["type"]] = row["reason"]
            continue
        dtypes = sorted({t for d in row["devices"] for t in d["dtypes"]})
        found["backends"][row["type"]] = {"kernels": set(loaded[row["type"]].kernels),
                                          "dtypes": dtypes}
    return found


def run(args: argparse.Namespace) -> int:
    from . import render

    kinds = None if not args.device else [args.device.split(":")[0]]
    found = coverage(kinds)
    if args.json:
        from ember import plugins
        print(json.dumps({
            "plugin_api": plugins.PLUGIN_API_VERSION, "declarations": declarations(),
            "backends": {k: {"kernels": sorted(v["kernels"]), "dtypes": v["dtypes"]}
                         for k, v in found["backends"].items()},
            "unavailable": found["unavailable"]}, indent=1))
        return 0 if found["backends"] or not kinds else 2
    if kinds and not found["backends"]:
        reason = found["unavailable"].get(kinds[0], "no installed plugin provides it")
        print(f"ember ops: device type {kinds[0]!r} is not available: {reason} "
              "(`ember doctor` says how to fix it)", file=sys.stderr)
        return 2
    render.ops(found)
    return 0
