"""The census of what public PyTorch code uses: which `torch.*` names, Tensor methods and
attributes, nn.Module methods, keyword arguments and import paths appear in real programs,
counted per file and per repository (`tools/data/README.md` says how it was made).

    python tools/census.py select --mirror DIR --repos REPOS.txt   # choose the files
    python tools/census.py build  [--mirror DIR | --download]       # count them

`select` reads each repository of REPOS.txt ("owner/name kind" lines) from DIR (bare git
snapshots named DIR/owner+name/repo[/.git]), picks up to --per-repo Python files or
notebooks that import torch (in an order fixed by a hash of the path, so the choice does
not depend on what the files contain beyond "imports torch and parses"), assigns each
repository to the main or the sealed part by a fixed hash of its name, and writes the
source list (repo, commit, path). `build` reads the files of that list back (from the
snapshots, or from raw.githubusercontent.com at the recorded commit) and writes the two
tables: `torch_census.json` (main part) and `torch_census_sealed.json` (sealed part).
Only the list of sources and the counts are stored, never the files themselves.

Everything is counted with Python's `ast`, never with regular expressions; torch (the
version this runs with, recorded in the tables) decides what is a Tensor method, an
nn.Module method, a module or a class. This file needs torch to build; reading the tables
(`ember torch-api`) does not.
"""
from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
import subprocess
import sys
import types
import urllib.request
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
SOURCES = DATA / "torch_census_sources.json"
TABLES = {"main": DATA / "torch_census.json", "sealed": DATA / "torch_census_sealed.json"}
SEAL_SEED = "ember-torch-census-seal-v1"   # fixed before any count was looked at
SEAL_ONE_IN = 5                            # ~20% of the repositories are sealed
PICK_SEED = "ember-torch-census-pick-v1"
PER_REPO = 5
MAX_BYTES = 300_000
SCHEMA = 1

# modules whose attributes are never Tensor methods when called on them (np.split, os.path)
NOT_TENSORS = {"numpy", "os", "sys", "re", "math", "random", "json", "time", "string",
               "shutil", "glob", "pickle", "itertools", "collections", "functools", "argparse",
               "logging", "subprocess", "copy", "pathlib", "typing", "warnings", "scipy",
               "pandas", "cv2", "PIL", "matplotlib", "operator", "struct", "socket", "io"}


# --- selection -------------------------------------------------------------------------

def sealed(repo: str) -> bool:
    """The fixed split: a repository is sealed iff this hash of its name says so."""
    digest = hashlib.sha256(f"{SEAL_SEED}:{repo}".encode()).hexdigest()
    return int(digest, 16) % SEAL_ONE_IN == 0


def git_dir(mirror: Path, repo: str) -> Path | None:
    base = mirror / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def _git(gdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={gdir}", *args], check=True,
                          capture_output=True).stdout


def _skipped_path(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    if not (name.endswith(".py") or name.endswith(".ipynb")):
        return True
    if any(p in ("test", "tests", "testing", "third_party", "thirdparty", "vendor",
                 "site-packages", "_vendor", "benchmarks", "docs") for p in parts[:-1]):
        return True
    return (name.startswith("test_") or name.endswith("_test.py") or name in
            ("conftest.py", "setup.py", "conf.py", "__init__.py", "hubconf.py"))


def notebook_source(text: str) -> str:
    """The code cells of a notebook as one module, IPython magics and shell lines dropped;
    a cell that does not parse on its own is left out."""
    cells = json.loads(text).get("cells", [])
    kept = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        lines = [ln for ln in src.splitlines()
                 if not ln.lstrip().startswith(("%", "!", "?")) and not ln.rstrip().endswith("?")]
        code = "\n".join(lines)
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        kept.append(code)
    return "\n\n".join(kept)


def python_source(path: str, raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if path.endswith(".ipynb"):
        try:
            return notebook_source(text)
        except (ValueError, AttributeError, TypeError):
            return None
    return text


def parse(path: str, raw: bytes) -> ast.Module | None:
    text = python_source(path, raw)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def imports_torch(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
                a.name == "torch" or a.name.startswith("torch.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "torch" or node.module.startswith("torch.")):
            return True
    return False


def select(mirror: Path, repos_file: Path, per_repo: int) -> dict:
    repos = []
    for line in repos_file.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, kind = line.split()[:2]
        gdir = git_dir(mirror, name)
        if gdir is None:
            print(f"no snapshot of {name}", file=sys.stderr)
            continue
        commit = _git(gdir, "rev-parse", "HEAD").decode().strip()
        date = _git(gdir, "log", "-1", "--format=%cs", commit).decode().strip()
        listing = _git(gdir, "ls-tree", "-r", "-l", "-z", commit).split(b"\0")
        paths = []
        for entry in listing:
            if not entry:
                continue
            meta, _, path = entry.decode("utf-8", "replace").partition("\t")
            kind_, size = meta.split()[1], meta.split()[3]
            if kind_ == "blob" and size.isdigit() and int(size) <= MAX_BYTES \
                    and not _skipped_path(path):
                paths.append(path)
        paths.sort(key=lambda p: hashlib.sha256(f"{PICK_SEED}:{name}:{p}".encode()).digest())
        files, unparsed = [], 0
        for path in paths:
            if len(files) == per_repo:
                break
            tree = parse(path, _git(gdir, "show", f"{commit}:{path}"))
            if tree is None:
                unparsed += 1
            elif imports_torch(tree):
                files.append(path)
        if not files:
            print(f"{name}: no file that imports torch", file=sys.stderr)
            continue
        repos.append({"repo": name, "kind": kind, "commit": commit, "date": date,
                      "part": "sealed" if sealed(name) else "main", "files": files,
                      "unparsed_skipped": unparsed})
    return {"schema": SCHEMA, "seal": {"seed": SEAL_SEED, "one_in": SEAL_ONE_IN,
                                       "rule": "sha256(seed:owner/name) % one_in == 0"},
            "pick": {"seed": PICK_SEED, "per_repo": per_repo, "max_bytes": MAX_BYTES},
            "repos": repos}


# --- counting --------------------------------------------------------------------------

class _Torch:
    """What torch (installed) says about a dotted name."""

    def __init__(self):
        import torch
        self.torch = torch
        self.version = torch.__version__.split("+")[0]
        self.tensor_attrs = {n for n in dir(torch.Tensor) if not n.startswith("__")}
        self.module_attrs = {n for n in dir(torch.nn.Module) if not n.startswith("_")}
        self._cache: dict[str, tuple[str, object]] = {}

    def lookup(self, dotted: str):
        """(kind, object): kind is module, class, function, attribute, unimportable (in a
        torch module that needs an optional package, torch.utils.tensorboard) or missing."""
        if dotted in self._cache:
            return self._cache[dotted]
        parts = dotted.split(".")
        obj: object = self.torch
        kind = None
        for i, part in enumerate(parts[1:], 1):
            found = _step(obj, ".".join(parts[:i]), part)
            if found is _ABSENT:
                prefix = ".".join(parts[:i + 1])
                kind = "missing"
                if isinstance(obj, types.ModuleType) and _module_file_exists(prefix):
                    kind = "module" if i == len(parts) - 1 else "unimportable"
                obj = None
                break
            obj = found
        if kind is None:
            if isinstance(obj, types.ModuleType):
                kind = "module"
            elif inspect.isclass(obj):
                kind = "class"
            elif inspect.isroutine(obj) or isinstance(obj, functools.partial):
                kind = "function"
            else:                 # a value, an enum member, a callable instance
                kind = "attribute"
        self._cache[dotted] = (kind, obj)
        return self._cache[dotted]

    def callee(self, callee: str):
        if callee.startswith("Tensor."):
            return getattr(self.torch.Tensor, callee[7:], None)
        if callee.startswith("Module."):
            return getattr(self.torch.nn.Module, callee[7:], None)
        return self.lookup(callee)[1]

    def accepts(self, callee: str, keyword: str) -> bool | None:
        """Whether torch's callee takes this keyword: from its signature, else from the
        signature lines of its docstring (`cat(tensors, dim=0, *, out=None) -> Tensor`);
        None where neither says (a **kwargs, no signature)."""
        obj = self.callee(callee)
        if obj is None:
            return None
        try:
            params = list(inspect.signature(obj).parameters.values())
            documented = False
        except (TypeError, ValueError):
            params = _doc_params(obj, callee.rsplit(".", 1)[-1])
            documented = True
        named = {p.name for p in params if p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL,
                                                          p.VAR_KEYWORD)}
        if keyword in named:
            return True
        # a docstring may leave overloads out (torch.var's unbiased=): never a no from it
        if documented or not params or any(p.kind == p.VAR_KEYWORD for p in params):
            return None
        return False

    def tensor_kind(self, name: str) -> str:
        """method or attribute, for a name of torch.Tensor."""
        raw = inspect.getattr_static(self.torch.Tensor, name, None)
        return "attribute" if (isinstance(raw, property) or type(raw).__name__ in (
            "getset_descriptor", "member_descriptor")) else "method"


_ABSENT = object()


def _doc_params(obj, short: str) -> list[inspect.Parameter]:
    """The parameters of every `short(...)` signature line of obj's docstring, parsed as a
    Python def (torch documents its C functions that way)."""
    params: list[inspect.Parameter] = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        line = line.strip().removeprefix(".. function::").removeprefix(".. method::").strip()
        if not line.startswith(short + "("):
            continue
        head = line.split(" -> ")[0].rstrip(" :").replace(", *,", ",")  # zeros(*size, *, ...)
        try:
            fn = ast.parse(f"def {head}: pass").body[0]
        except SyntaxError:
            continue
        a = fn.args
        kinds = ((a.posonlyargs, inspect.Parameter.POSITIONAL_ONLY),
                 (a.args, inspect.Parameter.POSITIONAL_OR_KEYWORD),
                 (a.kwonlyargs, inspect.Parameter.KEYWORD_ONLY))
        for group, kind in kinds:
            params += [inspect.Parameter(x.arg, kind) for x in group if x.arg != "self"]
        if a.vararg:       # torch's argument parser takes `*size` as size= too
            params.append(inspect.Parameter(a.vararg.arg, inspect.Parameter.KEYWORD_ONLY))
        if a.kwarg:
            params.append(inspect.Parameter(a.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    # the NumPy spellings torch's argument parser accepts for its C functions
    for name, aliases in _NUMPY_ALIASES.items():
        if any(p.name == name for p in params):
            params += [inspect.Parameter(x, inspect.Parameter.KEYWORD_ONLY) for x in aliases]
    return params


# torch/csrc/utils/python_arg_parser.cpp, numpy_compatibility_arg_names
_NUMPY_ALIASES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
                  "other": ("x2",)}


def _step(obj, container: str, part: str):
    """obj.part as `import container.part` would give it: an attribute, else the submodule
    (torch imports some lazily; a package attribute may shadow its submodule, as
    torch.nn.parallel.data_parallel the function does the module)."""
    try:
        return getattr(obj, part)
    except Exception:  # noqa: BLE001  (any failing lookup: not there this way)
        pass
    for name, attr in ((f"{container}.{part}", None), (container, part)):
        if not _module_file_exists(name):
            continue
        try:
            module = importlib.import_module(name)
            return module if attr is None else getattr(module, attr)
        except Exception:  # noqa: BLE001
            continue
    return _ABSENT


def _module_file_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:  # noqa: BLE001
        return False


class FileCounter(ast.NodeVisitor):
    """One file's uses: names (qualified), keywords per callee, import paths."""

    def __init__(self, torch_info: _Torch):
        self.t = torch_info
        self.aliases: dict[str, str] = {}       # local name -> torch dotted path
        self.other_modules: set[str] = set()     # local names bound to non-torch modules
        self.star: list[str] = []                # torch modules star-imported
        self.rebound: set[str] = set()           # names also bound by assignment or argument
        self.names: dict[str, int] = defaultdict(int)
        self.keywords: dict[tuple[str, str], int] = defaultdict(int)
        self.imports: dict[str, int] = defaultdict(int)

    # imports first, for the whole file (function-local imports included)
    def collect_imports(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self.rebound.add(node.id)
            elif isinstance(node, ast.arg):
                self.rebound.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.rebound.add(node.name)
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    if top == "torch":
                        self.imports[a.name] += 1
                        if a.asname:
                            self.aliases[a.asname] = a.name
                        else:
                            self.aliases["torch"] = "torch"
                    else:
                        self.other_modules.add(a.asname or top)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mod = node.module
                if mod != "torch" and not mod.startswith("torch."):
                    if mod.split(".")[0] in NOT_TENSORS:
                        self.other_modules.update(a.asname or a.name for a in node.names)
                    continue
                self.imports[mod] += 1
                for a in node.names:
                    if a.name == "*":
                        self.star.append(mod)
                        continue
                    full = f"{mod}.{a.name}"
                    self.aliases[a.asname or a.name] = full
                    kind, _ = self.t.lookup(full)
                    if kind == "module":
                        self.imports[full] += 1
                    else:
                        self.names[full] += 1

    def _star_name(self, name: str) -> str | None:
        for mod in self.star:
            kind, obj = self.t.lookup(mod)
            public = getattr(obj, "__all__", None) if obj is not None else None
            if public is not None and name in public:
                return f"{mod}.{name}"
        return None

    def dotted(self, node: ast.AST) -> str | None:
        """The torch path an expression names (`F.relu` -> torch.nn.functional.relu).
        Where the file also binds the alias to something else (`for data in loader` after
        `from torch.utils import data`), a chain torch does not have is not torch's."""
        path = self._chain(node)
        if path is None:
            return None
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.rebound and "." in path:
            cut = path.split(".")
            for i in range(2, len(cut) + 1):
                kind, _ = self.t.lookup(".".join(cut[:i]))
                if kind == "missing":
                    return None
                if kind != "module":
                    break
        return path

    def _chain(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id) or self._star_name(node.id)
        if isinstance(node, ast.Attribute):
            base = self._chain(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def record(self, path: str) -> str:
        """Count the API name an attribute chain names: the chain is cut one attribute past
        the first class (torch.Tensor.add_) and at the first function or value."""
        parts = path.split(".")
        keep = len(parts)
        for i in range(2, len(parts) + 1):
            kind, _ = self.t.lookup(".".join(parts[:i]))
            if kind == "module":
                continue
            if kind == "class" and i < len(parts) and not parts[i].startswith("_"):
                keep = i + 1
            else:
                keep = i
            break
        name = ".".join(parts[:keep])
        if self.t.lookup(name)[0] != "module":      # modules are counted as import paths
            self.names[name] += 1
        return name

    def visit_Attribute(self, node: ast.Attribute) -> None:
        path = self.dotted(node)
        if path is not None:
            self.record(path)
            return                       # the chain's inner nodes are the same use
        if not node.attr.startswith("_") and not self._not_tensor(node.value):
            if node.attr in self.t.tensor_attrs and self.t.tensor_kind(node.attr) == "attribute":
                self.names[f"Tensor.{node.attr}"] += 1
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        path = self.dotted(node)
        if path is not None and path != "torch" and node.id != "torch":
            self.record(path)

    def _not_tensor(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.List, ast.Dict, ast.Set,
                             ast.ListComp, ast.DictComp, ast.SetComp)):
            return True
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in self.other_modules

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        callee = None
        path = self.dotted(func)
        if path is not None:
            callee = self.record(path)
            self._visit_args(node)
        elif isinstance(func, ast.Attribute) and not func.attr.startswith("_") \
                and not self._not_tensor(func.value):
            attr = func.attr
            if attr in self.t.tensor_attrs and self.t.tensor_kind(attr) == "method":
                callee = f"Tensor.{attr}"
            elif attr in self.t.module_attrs and attr not in self.t.tensor_attrs:
                callee = f"Module.{attr}"
            if callee:
                self.names[callee] += 1
            self.visit(func.value)
            self._visit_args(node)
        else:
            self.generic_visit(node)
        if callee:
            for kw in node.keywords:
                if kw.arg is not None:
                    self.keywords[(callee, kw.arg)] += 1

    def _visit_args(self, node: ast.Call) -> None:
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)

    def visit_Import(self, node) -> None:       # counted in collect_imports
        pass

    visit_ImportFrom = visit_Import


def count_file(torch_info: _Torch, tree: ast.Module) -> FileCounter:
    counter = FileCounter(torch_info)
    counter.collect_imports(tree)
    counter.visit(tree)
    return counter


def _common_types() -> dict[str, type]:
    """Types whose objects programs call methods on as often as on tensors: a Tensor name
    one of them also has (dict.values, list.index, str.split, Thread.name) is counted on
    every receiver, so its count is an upper bound."""
    import io
    import logging
    import pathlib
    import queue
    import threading

    import numpy
    return {"str": str, "bytes": bytes, "list": list, "tuple": tuple, "dict": dict,
            "set": set, "numpy.ndarray": numpy.ndarray, "pathlib.Path": pathlib.Path,
            "queue.Queue": queue.Queue, "io.TextIOWrapper": io.TextIOWrapper,
            "threading.Thread": threading.Thread, "logging.Logger": logging.Logger}


def shared_with(name: str) -> list[str]:
    attr = name.split(".", 1)[1]
    return [label for label, cls in _common_types().items() if hasattr(cls, attr)]


def name_kind(torch_info: _Torch, name: str) -> tuple[str, str]:
    """(namespace, kind) of a counted name; kind is the torch object's kind in the installed
    torch (module, class, function, attribute), or missing where torch has no such name."""
    if name.startswith("Tensor."):
        return "Tensor", torch_info.tensor_kind(name.split(".", 1)[1])
    if name.startswith("Module."):
        return "nn.Module", "method"
    head, _, _ = name.rpartition(".")
    kind, _ = torch_info.lookup(name)
    if kind != "missing":
        # the namespace is the module the name is read from (torch.Tensor.add_ -> torch)
        parts = name.split(".")
        ns = parts[0]
        for i in range(2, len(parts)):
            if torch_info.lookup(".".join(parts[:i]))[0] != "module":
                break
            ns = ".".join(parts[:i])
        return ns, kind
    return head, "missing"


def read_source(entry: dict, path: str, mirror: Path | None) -> bytes:
    if mirror is not None:
        gdir = git_dir(mirror, entry["repo"])
        if gdir is None:
            raise SystemExit(f"census: no snapshot of {entry['repo']} under {mirror}")
        return _git(gdir, "show", f"{entry['commit']}:{path}")
    url = f"https://raw.githubusercontent.com/{entry['repo']}/{entry['commit']}/{path}"
    with urllib.request.urlopen(url, timeout=60) as response:   # noqa: S310 (fixed host)
        return response.read()


def build(sources: dict, mirror: Path | None) -> dict[str, dict]:
    torch_info = _Torch()
    parts = {}
    for part in ("main", "sealed"):
        entries = [r for r in sources["repos"] if r["part"] == part]
        names: dict[str, dict] = defaultdict(lambda: {"files": 0, "repos": set(), "uses": 0})
        kws: dict[tuple, dict] = defaultdict(lambda: {"files": 0, "repos": set(), "uses": 0})
        imps: dict[str, dict] = defaultdict(lambda: {"files": 0, "repos": set(), "uses": 0})
        n_files = 0
        for entry in entries:
            for path in entry["files"]:
                tree = parse(path, read_source(entry, path, mirror))
                if tree is None:
                    raise SystemExit(f"census: {entry['repo']}:{path} no longer parses")
                c = count_file(torch_info, tree)
                n_files += 1
                for table, found in ((names, c.names), (kws, c.keywords), (imps, c.imports)):
                    for key, uses in found.items():
                        row = table[key]
                        row["files"] += 1
                        row["repos"].add(entry["repo"])
                        row["uses"] += uses
        name_rows = []
        for name, row in names.items():
            ns, kind = name_kind(torch_info, name)
            name_rows.append({"name": name, "namespace": ns, "kind": kind,
                              "files": row["files"], "repos": len(row["repos"]),
                              "uses": row["uses"]})
            if ns in ("Tensor", "nn.Module"):
                name_rows[-1]["shared_with"] = shared_with(name)
        kw_rows = [{"callee": callee, "keyword": kw,
                    "in_torch": torch_info.accepts(callee, kw), "files": row["files"],
                    "repos": len(row["repos"]), "uses": row["uses"]}
                   for (callee, kw), row in kws.items()]
        imp_rows = [{"path": path, "in_torch": torch_info.lookup(path)[0] == "module"
                     or _module_file_exists(path),
                     "files": row["files"], "repos": len(row["repos"]), "uses": row["uses"]}
                    for path, row in imps.items()]

        def order(r):
            return (-r["files"], -r["repos"], json.dumps(r, sort_keys=True))
        parts[part] = {
            "schema": SCHEMA, "part": part, "torch_version": torch_info.version,
            "built_by": "tools/census.py build", "sources": "torch_census_sources.json",
            "files": n_files, "repositories": len(entries),
            "kinds": dict(sorted(_count_kinds(entries).items())),
            "names": sorted(name_rows, key=order),
            "keywords": sorted(kw_rows, key=order),
            "imports": sorted(imp_rows, key=order),
        }
    return parts


def _count_kinds(entries) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for e in entries:
        out[e["kind"]] += 1
    return out


def where(sources: dict, mirror: Path | None, name: str, limit: int) -> list[str]:
    """file:line and source of the uses of a counted name (`Tensor.new`, `torch.cat`,
    `torch.cat(dim=)`, an import path): what the count stands for."""
    torch_info = _Torch()
    callee, _, keyword = name.partition("(")
    keyword = keyword.rstrip("=)")
    out = []
    for entry in sources["repos"]:
        for path in entry["files"]:
            raw = read_source(entry, path, mirror)
            tree = parse(path, raw)
            counter = count_file(torch_info, tree)
            hit = ((callee, keyword) in counter.keywords if keyword else
                   callee in counter.names or callee in counter.imports)
            if not hit:
                continue
            text = python_source(path, raw) or ""
            lines = text.splitlines()
            attr = callee.rsplit(".", 1)[-1]
            shown = [f"{i + 1}: {ln.strip()}" for i, ln in enumerate(lines)
                     if attr in ln and (not keyword or keyword in ln)][:2]
            out.append(f"{entry['repo']}@{entry['commit'][:10]}:{path} ({entry['part']})")
            out += [f"    {s[:110]}" for s in shown]
            if len([o for o in out if not o.startswith(" ")]) >= limit:
                return out
    return out


def _write(path: Path, data: dict) -> None:
    """JSON with one row (a repository, a name, a keyword) per line."""
    lines = ["{"]
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = [json.dumps(row, ensure_ascii=False) for row in value]
            lines.append(f"{json.dumps(key)}: [\n" + ",\n".join(rows) + f"\n]{end}")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{end}")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="census", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("select", help="choose the files and write the source list")
    s.add_argument("--mirror", type=Path, required=True)
    s.add_argument("--repos", type=Path, required=True)
    s.add_argument("--per-repo", type=int, default=PER_REPO)
    s.add_argument("--out", type=Path, default=SOURCES)
    b = sub.add_parser("build", help="count the files of the source list")
    source = b.add_mutually_exclusive_group(required=True)
    source.add_argument("--mirror", type=Path, help="read from git snapshots in this folder")
    source.add_argument("--download", action="store_true",
                       help="read from raw.githubusercontent.com at the recorded commits")
    b.add_argument("--sources", type=Path, default=SOURCES)
    b.add_argument("--out-dir", type=Path, default=DATA)
    w = sub.add_parser("where", help="show where the census files use a name")
    w.add_argument("name", help="Tensor.new, torch.cat, torch.cat(dim=), torch.backends.cudnn")
    w.add_argument("--mirror", type=Path, help="read from git snapshots (else download)")
    w.add_argument("--sources", type=Path, default=SOURCES)
    w.add_argument("--limit", type=int, default=10)
    args = parser.parse_args(argv)
    if args.command == "where":
        print("\n".join(where(json.loads(args.sources.read_text()), args.mirror, args.name,
                               args.limit)))
        return 0
    if args.command == "select":
        _write(args.out, select(args.mirror, args.repos, args.per_repo))
        return 0
    tables = build(json.loads(args.sources.read_text()), args.mirror)
    for part, table in tables.items():
        _write(args.out_dir / TABLES[part].name, table)
        print(f"{part}: {table['files']} files, {table['repositories']} repositories, "
              f"{len(table['names'])} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
