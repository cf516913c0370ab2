"""`ember export inspect FILE`: a program file's format, specs and graph, without running it."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    inspect = sub.add_parser("inspect", help="print a program file's format version, inputs, "
                                             "outputs, weights and graph")
    inspect.add_argument("file", help="a file written by ExportedProgram.save")
    inspect.add_argument("--json", action="store_true", help="write the summary as JSON")
    inspect.add_argument("--no-graph", action="store_true", help="leave the graph out")
    verify = sub.add_parser("verify", help="rerun the file's stored examples and compare")
    verify.add_argument("file")
    verify.add_argument("--device", default="cpu", help="where to run (default cpu)")


def summary(program) -> dict:
    """What inspect prints, as data."""
    from ember.export.format import FORMAT_VERSION
    spec = program.spec
    weights = [i for i in spec.inputs if i.kind != "input"]
    return {
        "format_version": FORMAT_VERSION,
        "ops": sorted({n.op for n in spec.nodes if n.kind == "kernel"}),
        "dims": {d.name: [d.min, d.max] for d in spec.dims.values()},
        "inputs": [{"name": i.name, "dtype": i.dtype.name, "shape": [repr(n) for n in i.shape]}
                   for i in spec.arg_inputs()],
        "outputs": [{"dtype": n.dtype.name, "shape": [repr(s) for s in n.shape]}
                    for n in _output_nodes(spec)],
        "weights": {"count": len(weights),
                    "elements": sum(_numel(i.shape) for i in weights),
                    "by_kind": {k: sum(i.kind == k for i in weights)
                                for k in ("parameter", "buffer", "constant")}},
        "nodes": len(spec.nodes),
        "examples": len(program.examples[0]) if program.examples else 0,
    }


def _numel(shape) -> int:
    import math
    return math.prod(shape)


def _output_nodes(spec) -> list:
    from ember.export.trace import Ref
    from ember.graph.ir import flatten
    out = []
    for leaf in flatten(spec.outputs):
        if not isinstance(leaf, Ref):
            continue
        if leaf.index < len(spec.inputs):
            out.append(spec.inputs[leaf.index])
            continue
        k = leaf.index - len(spec.inputs)
        out.append([n for n in spec.nodes if n.shape is not None][k])
    return out


def run(args: argparse.Namespace) -> int:
    import ember
    from ember.export import ExportFormatError
    from ember.export.symbolic import MAX_SIZE
    try:
        program = ember.export.load(args.file)
    except ExportFormatError as exc:
        print(exc)
        return 2
    if args.action == "verify":
        # a rerun of the stored examples can take a while (device programs to build): a
        # status line on a terminal's stderr while it runs, gone when it ends
        from rich.console import Console
        with Console(stderr=True).status(f"verifying {args.file} on {args.device} "
                                         "(moving the program, rerunning its examples)"):
            report = program.to(args.device).verify()
        print(f"{args.file}: {report['outputs']} output(s) agree on {report['device']} "
              f"(max abs diff {report['max_abs_diff']:.3g})")
        return 0
    facts = summary(program)
    if args.json:
        from .render import write_json
        write_json(facts)
        return 0
    from rich.console import Console
    from rich.table import Table
    console = Console()
    console.print(f"[bold]{args.file}[/bold]: ember.export format version "
                  f"{facts['format_version']}, {facts['nodes']} nodes, "
                  f"{facts['examples']} stored example input(s)")
    dims = ", ".join(f"{k} >= {a}" if b >= MAX_SIZE else f"{k} in [{a}, {b}]"
                     for k, (a, b) in facts["dims"].items())
    console.print(f"dynamic dimensions: {dims or 'none (static shapes)'}")
    table = Table(title="signature")
    for column in ("", "name", "dtype", "shape"):
        table.add_column(column)
    for i in facts["inputs"]:
        table.add_row("input", i["name"], i["dtype"], f"({', '.join(i['shape'])})")
    for k, o in enumerate(facts["outputs"]):
        table.add_row("output", str(k), o["dtype"], f"({', '.join(o['shape'])})")
    console.print(table)
    w = facts["weights"]
    console.print(f"weights: {w['count']} tensors, {w['elements']} elements "
                  f"({w['by_kind']['parameter']} parameters, {w['by_kind']['buffer']} buffers, "
                  f"{w['by_kind']['constant']} constants)")
    console.print(f"ember ops: {', '.join(facts['ops'])}")
    if not args.no_graph:
        console.print(program.format(), markup=False, highlight=False)
    return 0
