"""Real PyTorch programs, run unchanged under PyTorch and under ember: do they run, do their
losses agree, how long do they take.

    python benchmarks/programs.py [name ...] [--json out.json] [--timeout 300]

Each program in benchmarks/programs/ runs twice, each time in its own subprocess with one
thread: once with PyTorch, once with `import torch` giving ember (ember.torch_alias, the
two-line shim).  To make the two runs comparable, the PyTorch run records and the ember run
replays, in order:
- each module's initial state, at its first forward call (so ember starts from PyTorch's
  initial weights, copied through NumPy);
- the random numbers the program itself draws (torch.randn, randint, multinomial,
  Tensor.normal_, ...: only calls made from the program's own code);
- dropout masks (F.dropout, F.dropout2d) and the order of RandomSampler / random_split.
The losses are the values of every `loss.backward()` on a one-element tensor.  A run that
meets a call the record does not match says so ("diverged") instead of comparing noise.

Reported per program: runs on PyTorch, runs unchanged on ember (or the first error, with
the program line), the largest relative difference between the loss curves (target
<= 1e-4), and each run's wall time.  Then the PyTorch names the corpus uses and how many
of them ember has.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "programs"
TARGET = 1e-4
DRAWS = ("randn", "rand", "randint", "randperm", "normal", "rand_like", "randn_like",
         "randint_like", "multinomial", "bernoulli", "poisson")
FILLS = ("normal_", "uniform_", "bernoulli_", "random_", "exponential_")


def programs(names=()) -> list[Path]:
    found = sorted(p for p in CORPUS.glob("*.py") if not p.name.startswith("_"))
    if names:
        found = [p for p in found if p.stem in names]
    return found


def header(path: Path) -> dict:
    """The program's docstring fields (Source:, Licence:, Compare:)."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    fields = {}
    for line in doc.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("Source", "Licence", "Compare", "Trimmed"):
            fields[key.strip().lower()] = value.strip()
    return fields


# --- inside a child process ----------------------------------------------------------------

class Record:
    """The streams one run writes (PyTorch) or reads (ember)."""

    STREAMS = ("draw", "dropout", "sampler", "state", "params")

    def __init__(self, path: Path, mode: str):
        import numpy as np
        self.path, self.mode = path, mode
        self.streams = {s: [] for s in self.STREAMS}
        self.losses: list = []
        self.diverged: list = []
        if mode == "replay" and path.exists():
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                for stream, entries in meta.items():
                    self.streams[stream] = [(name, z[key] if key else None) for name, key in
                                            entries]
        self.pos = {s: 0 for s in self.STREAMS}

    def put(self, stream, name, value) -> None:
        self.streams[stream].append((name, value))

    def take(self, stream, name, missing=None):
        """The next recorded value of the stream if it was made by `name`; else `missing`,
        and the run is marked diverged (from there on, for this stream)."""
        entries, i = self.streams[stream], self.pos[stream]
        if i >= len(entries) or entries[i][0] != name:
            if i <= len(entries):
                got = entries[i][0] if i < len(entries) else "the end of the record"
                self.diverged.append(f"{stream} #{i}: ember called {name}, PyTorch {got}")
            self.pos[stream] = len(entries) + 1
            return missing
        self.pos[stream] = i + 1
        return entries[i][1]

    def save(self) -> None:
        import numpy as np
        arrays, meta = {}, {}
        for stream, entries in self.streams.items():
            meta[stream] = []
            for k, (name, value) in enumerate(entries):
                key = f"{stream}{k}" if value is not None else ""
                if value is not None:
                    arrays[key] = value
                meta[stream].append((name, key))
        np.savez(self.path, meta=json.dumps(meta), **arrays)


def _from_program(depth: int = 2) -> bool:
    """Whether the call `depth` frames up comes from the program, not a library."""
    filename = sys._getframe(depth).f_code.co_filename
    return not any(part in filename for part in _LIBRARY_PATHS)


_LIBRARY_PATHS: list = []


def _hooks_torch(torch, rec: Record) -> None:
    import torch.nn.functional as F

    def host(t):
        return t.detach().cpu().numpy().copy()

    for name in DRAWS:
        fn = getattr(torch, name)

        def draw(*a, _fn=fn, _name=name, **k):
            out = _fn(*a, **k)
            if _from_program():
                rec.put("draw", _name, host(out))
            return out
        setattr(torch, name, draw)
    for name in FILLS + ("multinomial", "bernoulli"):
        fn = getattr(torch.Tensor, name)

        def fill(self, *a, _fn=fn, _name=name, **k):
            out = _fn(self, *a, **k)
            if _from_program():
                rec.put("draw", "Tensor." + _name, host(out))
            return out
        setattr(torch.Tensor, name, fill)
    import torch.distributions as dist
    for cls, name in _SAMPLERS:
        _wrap_method(getattr(dist, cls), name, lambda out, key: (
            rec.put("draw", key, host(out)) if _from_program(3) else None, out)[1])
    _dropouts(torch, F, rec, lambda shape, like: torch.rand(shape, dtype=like.dtype,
                                                             device=like.device), host)
    _samplers(torch, rec, record=True)
    _first_forward(torch, rec, lambda m: {k: host(v) for k, v in m.state_dict().items()},
                   None, host)
    _losses(torch, rec)


def _hooks_ember(ember, rec: Record) -> None:
    import ember.nn.functional as F

    def replace(out, value):
        if value is None or tuple(value.shape) != tuple(out.shape):
            if value is not None:
                rec.diverged.append(f"draw of shape {tuple(out.shape)} where PyTorch drew "
                                    f"{tuple(value.shape)}")
            return out
        new = ember.tensor(value, dtype=out.dtype, device=out.device)
        return new.requires_grad_(True) if out.requires_grad else new

    for name in DRAWS:
        fn = getattr(ember, name)

        def draw(*a, _fn=fn, _name=name, **k):
            out = _fn(*a, **k)
            if _from_program():
                return replace(out, rec.take("draw", _name))
            return out
        setattr(ember, name, draw)
    for name in FILLS + ("multinomial", "bernoulli"):
        fn = getattr(ember.Tensor, name)

        def fill(self, *a, _fn=fn, _name=name, **k):
            out = _fn(self, *a, **k)
            if not _from_program():
                return out
            new = replace(out, rec.take("draw", "Tensor." + _name))
            if out is self and new is not out:
                with ember.no_grad():
                    self.copy_(new)
                return self
            return new
        setattr(ember.Tensor, name, fill)

    import ember.distributions as dist
    for cls, name in _SAMPLERS:
        _wrap_method(getattr(dist, cls), name, lambda out, key: replace(
            out, rec.take("draw", key)) if _from_program(3) else out)

    def mask(shape, like):
        value = rec.take("dropout", "mask")
        if value is None or tuple(value.shape) != tuple(shape):
            return ember.rand(shape, dtype=like.dtype, device=like.device)
        return ember.tensor(value, dtype=like.dtype, device=like.device)
    _dropouts(ember, F, rec, mask, None)
    _samplers(ember, rec, record=False)

    def load(m, state):
        with ember.no_grad():
            m.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
    _first_forward(ember, rec, None, load)
    _losses(ember, rec)


# distribution methods whose draws are recorded and replayed like torch.randn's
_SAMPLERS = (("Categorical", "sample"), ("Normal", "sample"), ("Normal", "rsample"),
             ("Bernoulli", "sample"))


def _wrap_method(cls, name, after) -> None:
    """cls.name(...) then after(out, key); the caller two frames up is the program's."""
    orig = getattr(cls, name)
    key = f"{cls.__name__}.{name}"

    def method(self, *a, **k):
        return after(orig(self, *a, **k), key)
    setattr(cls, name, method)


def _dropouts(lib, F, rec, draw_mask, host) -> None:
    """F.dropout / dropout2d as an explicit mask (recorded, or replayed), so both runs drop
    the same elements."""
    def make(orig, channel):
        def dropout(input, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return orig(input, p, training, inplace)
            shape = tuple(input.shape)
            if channel and len(shape) > 2:
                shape = shape[:2] + (1,) * (len(shape) - 2)
            u = draw_mask(shape, input)
            if host is not None:
                rec.put("dropout", "mask", host(u))
            keep = (u >= p).to(input.dtype)
            scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
            return input.mul_(keep * scale) if inplace else input * (keep * scale)
        return dropout
    F.dropout = make(F.dropout, False)
    F.dropout2d = make(F.dropout2d, True)


def _samplers(lib, rec, record: bool) -> None:
    data = lib.utils.data
    sampler = data.RandomSampler
    orig_iter = sampler.__iter__

    def iterate(self):
        for index in orig_iter(self):
            if record:
                rec.put("sampler", "index", _int_array(index))
                yield index
            else:
                value = rec.take("sampler", "index")
                yield int(value) if value is not None else index
    sampler.__iter__ = iterate
    orig_split = data.random_split

    def random_split(dataset, lengths, generator=None):
        parts = orig_split(dataset, lengths, generator=generator) if generator is not None \
            else orig_split(dataset, lengths)
        out = []
        for part in parts:
            if record:
                rec.put("sampler", "split", _int_array(list(part.indices)))
                out.append(part)
            else:
                value = rec.take("sampler", "split")
                out.append(data.Subset(dataset, [int(i) for i in value]) if value is not None
                           else part)
        return out
    data.random_split = random_split
    if hasattr(data, "dataset"):
        data.dataset.random_split = random_split


def _int_array(value):
    import numpy as np
    return np.asarray(value, dtype=np.int64)


def _first_forward(lib, rec, save, load, host=None) -> None:
    """When an optimizer is made, and at each module's first call, for the tensors no
    earlier one claimed: record them (PyTorch) or load the recorded values (ember).  The
    optimizer covers modules trained through forward() called directly; the first call
    covers hand-written updates and buffers."""
    module = lib.nn.Module
    orig_call = module.__call__
    # keyed by id, holding the objects: a freed tensor's id must not be taken for a claim
    seen, claimed = {}, {}
    optimizer = lib.optim.Optimizer
    orig_init = optimizer.__init__

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        params = [p for g in self.param_groups for p in g["params"] if id(p) not in claimed]
        claimed.update((id(p), p) for p in params)
        if save is not None:
            rec.put("params", type(self).__name__, _int_array(len(params)))
            for p in params:
                rec.put("params", "param", host(p))
            return
        count = rec.take("params", type(self).__name__, _MISSING)
        if count is _MISSING or int(count) != len(params):
            rec.diverged.append(f"parameters of {type(self).__name__}: PyTorch's optimizer "
                                f"had {count if count is not _MISSING else '?'}, ember's "
                                f"{len(params)}")
            return
        with lib.no_grad():
            for p in params:
                value = rec.take("params", "param")
                if value is None or tuple(value.shape) != tuple(p.shape):
                    rec.diverged.append("parameters: shapes differ from PyTorch's")
                    return
                p.copy_(lib.tensor(value, dtype=p.dtype))
    optimizer.__init__ = init

    def call(self, *a, **k):
        if id(self) not in seen:
            seen[id(self)] = self
            tensors = [*self.parameters(), *self.buffers()]
            if tensors and any(id(t) not in claimed for t in tensors):
                claimed.update((id(t), t) for t in tensors)
                if save is not None:
                    state = save(self)
                    rec.put("state", type(self).__name__, _int_array(len(state)))
                    for key, value in state.items():
                        rec.put("state", "." + key, value)
                else:
                    _load_state(rec, self, load)
        return orig_call(self, *a, **k)
    module.__call__ = call


_MISSING = object()


def _load_state(rec, m, load) -> None:
    """Load the next recorded state into m, matching its entries by name (the order of a
    state_dict's keys is compared by the nn tests, not here)."""
    count = rec.take("state", type(m).__name__, _MISSING)
    if count is _MISSING:
        return
    entries, i = rec.streams["state"], rec.pos["state"]
    recorded = {name[1:]: value for name, value in entries[i:i + int(count)]}
    rec.pos["state"] = i + int(count)
    keys = list(m.state_dict())
    if set(keys) != set(recorded):
        rec.diverged.append(f"state of {type(m).__name__}: keys differ from PyTorch's: "
                            f"{sorted(set(keys) ^ set(recorded))[:4]}")
        return
    state = {k: recorded[k] for k in keys}
    try:
        load(m, state)
    except Exception as exc:  # noqa: BLE001  (a mismatch is reported, not fatal)
        rec.diverged.append(f"state of {type(m).__name__}: {type(exc).__name__}: {exc}")


def _losses(lib, rec) -> None:
    tensor = lib.Tensor
    orig = tensor.backward
    inside = []

    def backward(self, *a, **k):
        # PyTorch re-enters Tensor.backward under a TorchFunctionMode (set_default_device)
        if self.numel() == 1 and not inside:
            rec.losses.append(float(self.detach().reshape(()).item()))
        inside.append(1)
        try:
            return orig(self, *a, **k)
        finally:
            inside.pop()
    tensor.backward = backward


def child(lib: str, program: Path, record: Path, out: Path) -> None:
    """Run one program under `lib` ('torch' or 'ember') and write what happened to out."""
    rec = Record(record, "record" if lib == "torch" else "replay")
    if lib == "ember":
        import ember
        import ember.torch_alias
        ember.torch_alias.install()
        _LIBRARY_PATHS.append(str(Path(ember.__file__).parent))
        _hooks_ember(ember, rec)
    else:
        import torch
        torch.set_num_threads(1)
        # the recorded run draws the same numbers every time (a program that seeds itself
        # seeds again): its data, and so the losses compared, do not change between runs
        torch.manual_seed(0)
        _LIBRARY_PATHS.append(str(Path(torch.__file__).parent))
        _hooks_torch(torch, rec)
    _LIBRARY_PATHS.append(str(Path(__file__).resolve()))
    import runpy
    error = where = None
    sys.argv = [str(program)]
    start = time.perf_counter()
    try:
        runpy.run_path(str(program), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            error = f"SystemExit({exc.code})"
    except BaseException as exc:  # noqa: BLE001  (the program's error is the result)
        error = f"{type(exc).__name__}: {exc}"
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if f.filename == str(program)]
        if frames:
            where = f"line {frames[-1].lineno}: {frames[-1].line}"
    elapsed = time.perf_counter() - start
    if lib == "torch":
        rec.save()
    out.write_text(json.dumps({"error": error, "where": where, "losses": rec.losses,
                               "seconds": elapsed, "diverged": rec.diverged[:3]}))


# --- the parent -------------------------------------------------------------------------------

def run_one(program: Path, timeout: float, workdir: Path) -> dict:
    record = workdir / f"{program.stem}.npz"
    result = {"program": program.stem, **header(program)}
    for lib in ("torch", "ember"):
        out = workdir / f"{program.stem}.{lib}.json"
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", lib, str(program),
               str(record), str(out)]
        cwd = workdir / f"{program.stem}.{lib}"
        cwd.mkdir(exist_ok=True)
        try:
            proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            result[lib] = {"error": f"timed out after {timeout:.0f} s", "losses": []}
            continue
        if out.exists():
            result[lib] = json.loads(out.read_text())
        else:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            result[lib] = {"error": f"the child died (exit {proc.returncode}): "
                                    + " | ".join(tail), "losses": []}
    result["agreement"] = agreement(result["torch"].get("losses", []),
                                    result["ember"].get("losses", []))
    return result


def agreement(want: list, got: list):
    """The largest relative difference between two loss curves, or None if they cannot be
    compared (different lengths, or no losses)."""
    if not want or len(want) != len(got):
        return None
    return max(abs(a - b) / max(abs(a), abs(b), 1e-12) for a, b in zip(want, got))


def status(result: dict) -> str:
    t, e = result["torch"], result["ember"]
    if t.get("error"):
        return "broken on PyTorch"
    if e.get("error"):
        return "fails on ember"
    if result.get("compare") == "none":
        return "runs (losses not compared)"
    if e.get("diverged"):
        return "runs, random draws diverged"
    diff = result["agreement"]
    if diff is None:
        return "runs, losses not comparable"
    return "runs and agrees" if diff <= TARGET else "runs, losses differ"


def corpus_api(paths) -> dict:
    """The torch names the corpus refers to ({namespace: sorted names}), and which of them
    ember has: torch.X, torch.nn.X / nn.X, F.X, optim.X, and method calls that are Tensor
    methods."""
    import torch
    alias = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional",
             "optim": "torch.optim", "init": "torch.nn.init"}
    used: dict = {}
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                chain = _chain(node)
                if chain and chain[0] in alias:
                    ns = alias[chain[0]]
                    rest = chain[1:]
                    while rest and f"{ns}.{rest[0]}" in ("torch.nn", "torch.nn.functional",
                                                         "torch.optim", "torch.nn.init",
                                                         "torch.linalg", "torch.cuda",
                                                         "torch.utils", "torch.utils.data",
                                                         "torch.backends"):
                        ns = f"{ns}.{rest[0]}"
                        rest = rest[1:]
                    if rest:
                        used.setdefault(ns, set()).add(rest[0])
                elif isinstance(node.ctx, ast.Load) and hasattr(torch.Tensor, node.attr) \
                        and not node.attr.startswith("_") and node.attr not in _BUILTIN:
                    used.setdefault("Tensor", set()).add(node.attr)
    import ember
    out = {}
    for ns, names in sorted(used.items()):
        target = ember.Tensor if ns == "Tensor" else _ember_module(ember, ns)
        have = sorted(n for n in names if target is not None and _has(target, n))
        out[ns] = {"used": sorted(names), "have": have}
    return out


# method names of Python's own containers: `row.index(0)` is not a Tensor method call
_BUILTIN = {n for t in (list, dict, str, tuple, set) for n in dir(t)}


def _chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _ember_module(ember, ns: str):
    import importlib
    try:
        return importlib.import_module("ember" + ns[len("torch"):])
    except ImportError:
        obj = ember
        for part in ns.split(".")[1:]:
            obj = getattr(obj, part, None)
        return obj


def _has(target, name) -> bool:
    try:
        getattr(target, name)
    except Exception:  # noqa: BLE001
        return False
    return True


def report(results: list, api: dict) -> str:
    lines = [f"{'program':24} {'status':30} {'max rel diff':>12} {'torch s':>8} "
             f"{'ember s':>8}  first error"]
    for r in results:
        diff = r["agreement"]
        t, e = r["torch"], r["ember"]
        error = e.get("error") or ""
        if e.get("where"):
            error += f"  [{e['where']}]"
        if e.get("diverged") and not error:
            error = "diverged: " + e["diverged"][0]
        lines.append(f"{r['program']:24} {status(r):30} "
                     f"{'-' if diff is None else f'{diff:.1e}':>12} "
                     f"{t.get('seconds', 0):8.2f} {e.get('seconds', 0):8.2f}  {error[:150]}")
    counts: dict = {}
    for r in results:
        counts[status(r)] = counts.get(status(r), 0) + 1
    lines.append("")
    lines.append(f"{len(results)} programs: " + ", ".join(f"{n} {s}" for s, n in
                                                        sorted(counts.items())))
    if api:
        lines.append("")
        lines.append("PyTorch names the corpus uses that ember has:")
        for ns, entry in api.items():
            missing = sorted(set(entry["used"]) - set(entry["have"]))
            lines.append(f"  {ns:22} {len(entry['have'])}/{len(entry['used'])}"
                         + (f"   missing: {', '.join(missing)}" if missing else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="program names (default: all)")
    parser.add_argument("--json", help="write the results as JSON here")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--child", nargs=4, metavar=("LIB", "PROGRAM", "RECORD", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        lib, program, record, out = args.child
        child(lib, Path(program), Path(record), Path(out))
        return 0
    paths = programs(args.names)
    with tempfile.TemporaryDirectory(prefix="ember-programs-") as tmp:
        results = []
        for path in paths:
            results.append(run_one(path, args.timeout, Path(tmp)))
            print(f"{path.stem}: {status(results[-1])}", file=sys.stderr, flush=True)
    api = corpus_api(paths)
    print(report(results, api))
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "api": api}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
