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
import hashlib
import importlib
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
        """(kind, object): kind is module, class, function, attribute or missing."""
        if dotted in self._cache:
            return self._cache[dotted]
        parts = dotted.split(".")
        obj: object = self.torch
        for i, part in enumerate(parts[1:], 1):
            try:
                obj = getattr(obj, part)
            except Exception:  # noqa: BLE001  (torch lazily imports some submodules)
                try:
                    obj = importlib.import_module(".".join(parts[:i + 1]))
                except Exception:  # noqa: BLE001
                    self._cache[dotted] = ("missing", None)
                    return self._cache[dotted]
        if isinstance(obj, types.ModuleType):
            kind = "module"
        elif inspect.isclass(obj):
            kind = "class"
        elif callable(obj):
            kind = "function"
        else:
            kind = "attribute"
        self._cache[dotted] = (kind, obj)
        return self._cache[dotted]

    def tensor_kind(self, name: str) -> str:
        """method or attribute, for a name of torch.Tensor."""
        raw = inspect.getattr_static(self.torch.Tensor, name, None)
        return "attribute" if (isinstance(raw, property) or type(raw).__name__ in (
            "getset_descriptor", "member_descriptor")) else "method"


class FileCounter(ast.NodeVisitor):
    """One file's uses: names (qualified), keywords per callee, import paths."""

    def __init__(self, torch_info: _Torch):
        self.t = torch_info
        self.aliases: dict[str, str] = {}       # local name -> torch dotted path
        self.other_modules: set[str] = set()     # local names bound to non-torch modules
        self.star: list[str] = []                # torch modules star-imported
        self.names: dict[str, int] = defaultdict(int)
        self.keywords: dict[tuple[str, str], int] = defaultdict(int)
        self.imports: dict[str, int] = defaultdict(int)

    # imports first, for the whole file (function-local imports included)
    def collect_imports(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
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
        """The torch path an expression names (`F.relu` -> torch.nn.functional.relu)."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id) or self._star_name(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
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
        if name != "torch":
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
        kw_rows = [{"callee": callee, "keyword": kw, "files": row["files"],
                    "repos": len(row["repos"]), "uses": row["uses"]}
                   for (callee, kw), row in kws.items()]
        imp_rows = [{"path": path, "in_torch": torch_info.lookup(path)[0] == "module",
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


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=0, sort_keys=False) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="census", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("select", help="choose the files and write the source list")
    s.add_argument("--mirror", type=Path, required=True)
    s.add_argument("--repos", type=Path, required=True)
    s.add_argument("--per-repo", type=int, default=PER_REPO)
    s.add_argument("--out", type=Path, default=SOURCES)
    b = sub.add_parser("build", help="count the files of the source list")
    where = b.add_mutually_exclusive_group(required=True)
    where.add_argument("--mirror", type=Path, help="read from git snapshots in this folder")
    where.add_argument("--download", action="store_true",
                       help="read from raw.githubusercontent.com at the recorded commits")
    b.add_argument("--sources", type=Path, default=SOURCES)
    b.add_argument("--out-dir", type=Path, default=DATA)
    args = parser.parse_args(argv)
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
