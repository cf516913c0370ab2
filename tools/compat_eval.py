"""The evaluator: facts of a machine (collected, assumed or from a report) + matrix -> findings."""
from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

from ember.errors import EmberError

from .findings import Finding

ANY = "*"                    # a `when` spec that only asks for the component to be present
SUPPORT_LEVELS = ("tested", "declared", "inferred")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_CUPY_CUDA_WHEEL = re.compile(r"cupy-cuda(\d+)x")


class MatrixError(EmberError, ValueError):
    """Compat-matrix data that does not follow compat_matrix/README.md."""


def parse_version(text):
    """The leading dotted number of a version text ('535.104.05', 'OpenCL 3.0 PoCL') or None."""
    from packaging.version import Version
    match = _NUMBER.search(str(text))
    return Version(match.group(0)) if match else None


def satisfies(version_text: str, spec: str) -> bool | None:
    """Whether a version is inside a specifier set; None when the version cannot be read."""
    if spec == ANY:
        return True
    from packaging.specifiers import SpecifierSet
    version = parse_version(version_text)
    if version is None:
        return None
    return SpecifierSet(spec).contains(version, prereleases=True)


def _check_specs(where: str, specs, lazy: bool = False) -> dict:
    """The specs, each checked to be a PEP 440 specifier set (not when `lazy`: the shipped
    files, which the tests check, read by `ember compat explain`, which needs no rule)."""
    if not isinstance(specs, dict):
        raise MatrixError(f"{where}: expected a table of component = specifier, got {specs!r}")
    if lazy:
        return dict(specs)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    for component, spec in specs.items():
        if spec == ANY:
            continue
        try:
            SpecifierSet(spec)
        except (InvalidSpecifier, TypeError):
            raise MatrixError(f"{where}: {component} = {spec!r} is not a version specifier "
                              "(PEP 440, e.g. '>=12,<13') nor '*'") from None
    return dict(specs)


@dataclass(frozen=True)
class Rule:
    """If every `when` component matches, every `require` component must be in its range."""

    id: str
    summary: str
    require: dict
    severity: str
    support: str
    source: str
    date: str
    fix: str
    when: dict = field(default_factory=dict)
    note: str = ""
    commands: tuple = ()     # the fix as shell commands, written for the package index

    @classmethod
    def parse(cls, raw: dict, lazy: bool = False) -> Rule:
        where = f"rule {raw.get('id', '?')!r}"
        try:
            rule = cls(**{k: v for k, v in raw.items()})
        except TypeError as exc:
            raise MatrixError(f"{where}: {exc}") from None
        object.__setattr__(rule, "commands", _commands(where, rule.commands))
        _check_specs(where + " when", rule.when, lazy)
        if not _check_specs(where + " require", rule.require, lazy):
            raise MatrixError(f"{where}: require is empty")
        if rule.severity not in ("warning", "problem"):
            raise MatrixError(f"{where}: severity must be warning or problem")
        if rule.support not in SUPPORT_LEVELS:
            raise MatrixError(f"{where}: support must be one of {', '.join(SUPPORT_LEVELS)}")
        overlap = [c for c in rule.when if c in rule.require and rule.when[c] != ANY]
        if overlap:
            raise MatrixError(f"{where}: {overlap} in both when and require (use '*' in when)")
        return rule


def _commands(where: str, commands) -> tuple:
    if isinstance(commands, str) or not all(isinstance(c, str) and c for c in commands):
        raise MatrixError(f"{where}: commands must be a list of shell commands")
    return tuple(commands)


def cuda_version_text(number) -> str:
    """'11.4' from the integer CUDA reports (1000 * major + 10 * minor: 11040)."""
    value = int(number)
    return f"{value // 1000}.{value % 1000 // 10}"


# Named groups in an error pattern that `seen` may use, decoded before formatting.
DECODERS = {"cudaver": cuda_version_text}


_REGEX_SYNTAX = re.compile(r"[.^$*+?{}\[\]\\|()]")


class TextPattern:
    """A pattern of the matrix, matched case-insensitively anywhere in a text.  A plain
    phrase (most are) is a substring test; a regular expression compiles on first use
    when `lazy` (`ember compat explain` runs once per process: compiling every pattern of
    the matrix would be most of its time), at once otherwise (a plugin's bad pattern is
    refused when its data loads)."""

    __slots__ = ("source", "_regex", "_phrase", "needs", "flat")

    def __init__(self, source: str, lazy: bool = False):
        self.source = source
        self._regex = None
        self._phrase = None if _REGEX_SYNTAX.search(source) else source.lower()
        # a regex matches only texts holding one of these words (lower case): the others
        # are passed over without compiling it; () when it has no such word
        self.needs = () if self._phrase is not None else required_words(source)
        # a pattern that says nothing of lines also matches the text with its line breaks
        # undone (a terminal or an issue form wrapped "conflicting\n   dependencies")
        self.flat = self._phrase is not None or not (
            "\\n" in source or "\\s\\S" in source
            or _LINE_SYNTAX.search(_CLASSES.sub("", source)))
        if self._phrase is None and not lazy:
            self.regex()

    def regex(self) -> re.Pattern:
        if self._regex is None:
            self._regex = re.compile(self.source, re.IGNORECASE)
        return self._regex

    def _find(self, text: str) -> int | None:
        if self._phrase is not None:
            at = _lower(text).find(self._phrase)
            return at if at >= 0 else None
        if self.needs and not any(w in _lower(text) for w in self.needs):
            return None
        match = self.regex().search(text)
        return match.start() if match else None

    def search(self, text: str):
        return self.position(text) is not None

    def position(self, text: str) -> int | None:
        """Where the pattern first occurs in the text (or in it unwrapped: the place in
        the text it comes from); None when it does not."""
        at = self._find(text)
        if at is None and self.flat and "\n" in text:
            flat, marks = _unwrapped(text)
            if flat != text:
                at = self._find(flat)
                if at is not None:
                    k = bisect.bisect_right(marks, (at, float("inf"))) - 1
                    at += marks[k][1] if k >= 0 else 0
        return at

    def finditer(self, text: str):
        return self.regex().finditer(text)


_LINE_SYNTAX = re.compile(r"(?<!\\)[$^]|\(\?m|\\A|\\Z")   # outside classes
_CLASSES = re.compile(r"\[\^?\]?(?:\\.|[^\]\\])*\]")
_WRAP = re.compile(r"[ \t]*\r?\n[ \t]*")


@functools.lru_cache(maxsize=8)
def _unwrapped(text: str) -> tuple:
    """(the text with each line break and the blanks around it made one space, marks):
    marks are (position in the unwrapped text, characters removed before it), sorted."""
    parts, marks, removed, last = [], [], 0, 0
    for m in _WRAP.finditer(text):
        parts.append(text[last:m.start()])
        parts.append(" ")
        removed += len(m.group(0)) - 1
        last = m.end()
        marks.append((m.start() - (removed - (len(m.group(0)) - 1)) + 1, removed))
    parts.append(text[last:])
    return "".join(parts), marks


def required_words(pattern: str) -> tuple:
    """For each top-level alternative of a regular expression, its longest run of plain
    letters and digits outside groups, classes and quantifiers: one of them (lower-cased)
    occurs in any text the pattern matches.  () when some alternative has no such run of
    3 or more characters (then nothing can be ruled out), or the pattern sets flags
    other than case."""
    if pattern.startswith("(?") and not pattern.startswith(("(?:", "(?P", "(?-i:", "(?i")):
        return ()
    words, best, run, depth, k = [], "", "", 0, 0
    cls = False
    while k < len(pattern):
        c = pattern[k]
        if c == "\\":
            best, run = max(best, run, key=len), ""
            k += 2
            continue
        if cls:
            cls = c != "]"
        elif c == "{":                              # a quantifier's counts
            best, run = max(best, run, key=len), ""
            k = pattern.find("}", k) if "}" in pattern[k:] else len(pattern)
        elif c == "[":
            cls, (best, run) = True, (max(best, run, key=len), "")
        elif c == "(":
            depth += 1
            best, run = max(best, run, key=len), ""
        elif c == ")":
            depth -= 1
            if k + 1 < len(pattern) and pattern[k + 1] in "?*{" and depth == 0:
                pass
        elif depth == 0 and c == "|":
            best = max(best, run, key=len)
            if len(best) < 3:
                return ()
            words.append(best.lower())
            best, run = "", ""
        elif depth == 0 and c.isalnum() or (depth == 0 and c in " _-'\"/:=<>,;!@#%&~`" and run):
            if k + 1 < len(pattern) and pattern[k + 1] in "?*{":
                best, run = max(best, run, key=len), ""      # the char is optional
            else:
                run += c
        else:
            best, run = max(best, run, key=len), ""
        k += 1
    best = max(best, run, key=len).strip()
    if len(best) < 3 or depth != 0:
        return ()
    words.append(best.lower())
    return tuple(w.strip() for w in words)


@functools.lru_cache(maxsize=8)
def _lower(text: str) -> str:
    return text.lower()


def _code_matcher(patterns) -> tuple[frozenset, tuple]:
    """(exact keys, prefixes) of `family:NAME` code patterns; '*' may end one."""
    exact, prefixes = set(), []
    for p in patterns:
        if "*" in p[:-1] or "?" in p:
            raise MatrixError(f"code pattern {p!r}: only a trailing '*' is allowed")
        (prefixes.append(p[:-1]) if p.endswith("*") else exact.add(p))
    return frozenset(exact), tuple(prefixes)


READERS = ("torch-rocm", "torch", "cupy", "tensorflow", "jax", "mpi4py", "ember")
_READER_SIGNS = (
    ("torch-rocm", re.compile(r"\btorch\b[\s\S]*\b(?:hip|rocm|HSA_)|\b(?:hip|rocm)\b[\s\S]*"
                              r"\btorch\b|PYTORCH_HIP_ALLOC_CONF", re.I)),
    ("torch", re.compile(r"\btorch\b|\bpytorch\b|PYTORCH_CUDA_ALLOC_CONF|c10::|c10d", re.I)),
    ("cupy", re.compile(r"\bcupy\b|cupy_backends", re.I)),
    ("tensorflow", re.compile(r"\btensorflow\b|\btf\.|ResourceExhaustedError|/job:localhost",
                              re.I)),
    ("jax", re.compile(r"\bjax(?:lib)?\b|XlaRuntimeError", re.I)),
    ("mpi4py", re.compile(r"\bmpi4py\b", re.I)),
    ("ember", re.compile(r"\bember\b", re.I)),
)


def reader_of(text: str) -> str:
    """Whose program printed the message (torch on ROCm, torch, CuPy, mpi4py, ember): the
    fix speaks that library's knobs.  '' when the text does not say."""
    return next((who for who, sign in _READER_SIGNS if sign.search(text)), "")


# Words that say a line reports a failure (clinfo's "Error Correction support" does not);
# a family's generic entry matches a line that names the family's stack (its `signs`: API
# calls, libraries, tools) next to one of these, so a message of that stack gets the
# family's ordered checks even when it names no known code.  Log lines of INFO level are
# not failures (NCCL INFO says "cannot open shared object file" of its optional plugins),
# nor are warnings (MIOpen's "Unable to read system database file").
ERROR_WORDS = re.compile(
    r"(?:\b|(?<=[a-z]))(?:error(?!\s+correction)|errors|exception)\b"       # RuntimeError too
    r"|\b(?:failed|failure|fatal|abort(?:ed|ing)?"
    r"|assert(?:ion)?|cannot|can't|could not|couldn't|no such file|not found"
    r"|segmentation fault|core dumped|terminate called|refused|denied|timed out|panic"
    r"|(?:memory access|page|bus|protection) fault|killed|unsupported|not supported|incompatible"
    r"|not compatible|mismatch(?:ed)?"
    r"|rejects|illegal|corrupt(?:ed)?|not loaded"
    r"|traceback)\b", re.I)
INFO_LINE = re.compile(r"\b(?:INFO|DEBUG|TRACE)\b|^\s*[IDW]\d{4} |^\s*\[?(?:info|debug)\b"
                       r"|^\s*\[[IW][ \d]|: [IWD] [\w/.-]+\.(?:cc|cpp|h):\d+\]|(?i:warning)", re.M)
# NCCL's WARN lines (and other WARN-level logs) report its errors, but also conditions a
# healthy run meets ("NCCL WARN Could not find real path of ..." in a VM): they count with
# the words of a failure only
WARN_LINE = re.compile(r"\bWARN\b")
# NCCL's WARNs about optional parts it goes on without (InfiniBand verbs, a net plugin)
BENIGN_WARN = re.compile(r"Failed to open libibverbs|NET/Plugin|[Pp]lugin load|No plugin found"
                         r"|Could not find real path")
STRONG_WORDS = re.compile(r"\b(?:failed|failure|\w*error|abort\w*|timed out|timeout|fatal)\b",
                          re.I)
_WINDOW = 300           # characters around an error word that may hold the sign
_MAX_LINES = 200        # a long log's first failure lines: the root cause is among them


@functools.lru_cache(maxsize=64)
def _error_lines(text: str) -> tuple:
    """(start, end) of the text's lines that hold an error word (at most _WINDOW
    characters each side of it) with the line before it (a traceback's call above its
    exception), INFO lines and warnings left out."""
    out, last = [], -1
    for m in ERROR_WORDS.finditer(text):
        if len(out) >= _MAX_LINES:
            break
        start = text.rfind("\n", 0, m.start()) + 1
        if start <= last:
            continue
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        last = end
        head = _head_of(text, start)        # a wrapped line's first line says its level
        if INFO_LINE.search(text, head, min(end, head + 200)):
            continue
        if WARN_LINE.search(text, head, end) and (
                not STRONG_WORDS.search(text, start, end) or BENIGN_WARN.search(text, head, end)):
            continue
        before = text.rfind("\n", 0, start - 1) + 1 if start else 0
        if before < start and INFO_LINE.search(text, before, min(start, before + 200)):
            before = start
        out.append((max(before, m.start() - _WINDOW), min(end, m.end() + _WINDOW)))
    return tuple(out)


def _signs(signs, lazy: bool) -> tuple:
    """An entry's signs as one pattern (one compiled expression, one search a line)."""
    if not signs:
        return ()
    for sign in () if lazy else signs:
        re.compile(sign)                # name the sign that does not compile
    return (TextPattern("|".join(f"(?:{s})" for s in signs), lazy),)


def _head_of(text: str, start: int, reach: int = 6) -> int:
    """The start of the line that a line beginning with blanks continues (a log line
    wrapped by a terminal or an issue form), up to `reach` lines back; `start` itself
    for a line that begins with a word."""
    at = start
    for _ in range(reach):
        if at == 0 or text[at:at + 1] not in (" ", "\t"):
            return at
        at = text.rfind("\n", 0, at - 1) + 1
    return start


def sign_at(text: str, signs) -> int | None:
    """Where a sign (a TextPattern) first stands within reach of an error word; None when
    none does."""
    return _sign_at(text, tuple(signs))


@functools.lru_cache(maxsize=256)
def _sign_at(text: str, signs: tuple) -> int | None:
    best = None
    for start, end in _error_lines(text):
        if best is not None and start > best:
            break
        piece = text[start:end]
        for sign in signs:
            at = sign.position(piece)
            if at is not None and (best is None or start + at < best):
                best = start + at
    return best


@dataclass(frozen=True)
class KnownError:
    """A cryptic error, or a category of error codes, what it means and the fix.  `seen`
    is a template over the patterns' named groups (what this very message says: sizes,
    versions); an entry that `supersedes` others is the more specific reading of the same
    text and hides them.  `codes` (family:NAME of compat_matrix/codes, wildcards allowed)
    match a message that names one of those codes in any wording (tools/error_codes.py);
    `unless` patterns say the text is something else (another compiler's log).  `causes`
    are the usual reasons and `checks`, in order, what tells them apart; `fix_for` the fix
    in the words of the reader's library; a `generic` entry (a family's catch-all) yields
    to any more specific one."""

    id: str
    patterns: tuple
    example: str
    meaning: str
    fix: str
    source: str
    rules: tuple = ()
    seen: str = ""
    supersedes: tuple = ()
    commands: tuple = ()
    codes: tuple = ()
    unless: tuple = ()
    causes: tuple = ()
    checks: tuple = ()
    fix_for: tuple = ()          # ((reader, fix), ...)
    generic: bool = False
    code_keys: tuple = ((), ())  # _code_matcher(codes)
    signs: tuple = ()            # names of the family's stack (a generic entry's): see sign_at

    @classmethod
    def parse(cls, raw: dict, lazy: bool = False) -> KnownError:
        where = f"error {raw.get('id', '?')!r}"
        known = set(cls.__dataclass_fields__)
        extra = sorted(set(raw) - known)
        if extra:
            raise MatrixError(f"{where}: unknown keys {extra}")
        try:
            if not raw.get("patterns") and not raw.get("codes") and not raw.get("signs"):
                raise KeyError("patterns or codes")
            if raw.get("signs") and not raw.get("generic"):
                raise KeyError("signs (only a generic entry may have them)")
            patterns = tuple(TextPattern(p, lazy) for p in raw.get("patterns", ()))
            unless = tuple(TextPattern(p, lazy) for p in raw.get("unless", ()))
            fix_for = dict(raw.get("fix_for", {}))
            if set(fix_for) - set(READERS):
                raise KeyError(f"fix_for readers {sorted(set(fix_for) - set(READERS))}")
            return cls(raw["id"], patterns, raw["example"], raw["meaning"], raw["fix"],
                       raw["source"], tuple(raw.get("rules", ())), raw.get("seen", ""),
                       tuple(raw.get("supersedes", ())),
                       _commands(where, raw.get("commands", ())),
                       tuple(raw.get("codes", ())), unless, tuple(raw.get("causes", ())),
                       tuple(raw.get("checks", ())), tuple(fix_for.items()),
                       bool(raw.get("generic", False)), _code_matcher(raw.get("codes", ())),
                       _signs(raw.get("signs", ()), lazy))
        except (KeyError, re.error) as exc:
            raise MatrixError(f"{where}: {exc}") from None

    def excluded(self, text: str) -> bool:
        return any(p.search(text) for p in self.unless)

    def matches(self, text: str, hits=None) -> bool:
        """The text is this error: a pattern occurs in it, (with `hits`, the codes
        error_codes.recognize found) it names one of this entry's codes, or (a generic
        entry) a line with an error word names the family's stack."""
        return self.evidence(text, hits) is not None

    def evidence(self, text: str, hits=None) -> str | None:
        """What says the text is this error: "pattern", "code", "sign", or None."""
        if self.excluded(text):
            return None
        if any(p.search(text) for p in self.patterns):
            return "pattern"
        if hits and self.codes_in(hits):
            return "code"
        if self.signs and sign_at(text, self.signs) is not None:
            return "sign"
        return None

    def position(self, text: str, hits=()) -> int:
        """Where the first evidence for this entry stands in the text (a pattern's match
        or a code it covers): the earliest cause in a log or a chained traceback is the
        root one, later lines are its consequences."""
        found = [p.position(text) for p in self.patterns]
        found += [h.pos for h in self.codes_in(hits)]
        if self.signs:
            found.append(sign_at(text, self.signs))
        found = [f for f in found if f is not None]
        return min(found) if found else len(text)

    def codes_in(self, hits) -> list:
        """The recognized codes (error_codes.Hit) this entry covers."""
        exact, prefixes = self.code_keys
        return [h for h in hits if h.code.key in exact or h.code.key.startswith(prefixes)]

    def fix_here(self, text: str) -> str:
        """The fix in the words of the library that printed the message."""
        fixes = dict(self.fix_for)
        who = reader_of(text)
        if who == "torch-rocm" and who not in fixes:
            who = "torch"
        return fixes.get(who, self.fix)

    def seen_in(self, text: str) -> str:
        """The `seen` template filled from the first match that has all its fields."""
        if not self.seen:
            return ""
        for pattern in self.patterns:
            for match in pattern.finditer(text):
                values = {k: v for k, v in match.groupdict().items() if v is not None}
                try:
                    values = {k: DECODERS[k](v) if k in DECODERS else v.strip()
                              for k, v in values.items()}
                    return self.seen.format(**values)
                except (KeyError, ValueError, IndexError):
                    continue
        return ""


@dataclass
class Matrix:
    """The parsed matrix: rules, first-party plugins, plugin-API table, known errors."""

    rules: list
    plugins: list
    plugin_api: list
    errors: list

    @classmethod
    def from_data(cls, data: dict, lazy: bool = False) -> Matrix:
        matrix = cls([Rule.parse(r, lazy) for r in data.get("rule", ())],
                     [dict(p) for p in data.get("plugin", ())],
                     [dict(a) for a in data.get("plugin_api", ())],
                     [KnownError.parse(e, lazy) for e in data.get("error", ())])
        for kind, ids in (("rule", [r.id for r in matrix.rules]),
                          ("error", [e.id for e in matrix.errors]),
                          ("plugin", [p.get("distribution") for p in matrix.plugins])):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise MatrixError(f"{kind} defined twice: {', '.join(map(str, dupes))}")
        unknown = {r for e in matrix.errors for r in e.rules} - {r.id for r in matrix.rules}
        if unknown:
            raise MatrixError(f"error entries cite rules that do not exist: {sorted(unknown)}")
        unknown = ({s for e in matrix.errors for s in e.supersedes}
                   - {e.id for e in matrix.errors})
        if unknown:
            raise MatrixError(f"error entries supersede errors that do not exist: "
                              f"{sorted(unknown)}")
        return matrix

    def rule(self, rule_id: str) -> Rule:
        return next(r for r in self.rules if r.id == rule_id)

    def device_types(self) -> list[str]:
        """Device types of the first-party plugins, in the matrix's order."""
        return list(dict.fromkeys(t for p in self.plugins for t in p["device_types"]))

    def plugins_for(self, device_type: str) -> list[dict]:
        return [p for p in self.plugins if device_type in p["device_types"]]

    def install_hint(self, device_type: str) -> str:
        first = self.plugins_for(device_type)
        return first[0]["install"] if first else ""

    def plugin_api_for(self, ember_version: str) -> int | None:
        for entry in self.plugin_api:
            if satisfies(ember_version, entry["ember"]):
                return entry["version"]
        return None

    def components(self) -> set[str]:
        """Every component name some rule or plugin entry mentions."""
        names = {c for r in self.rules for c in (*r.when, *r.require)}
        for p in self.plugins:
            names.add(p["distribution"])
            if p.get("library"):
                names.add(p["library"])
        return names


def load_matrix(extra=(), lazy: bool = False) -> tuple[Matrix, list[Finding]]:
    """The built-in matrix plus plugins' ember_compat data; data that does not parse is left
    out with a warning rather than breaking the doctor."""
    from ember import compat_matrix
    accepted = compat_matrix.load()
    notes = []
    for part in extra:
        candidate = compat_matrix.merge(accepted, part if isinstance(part, dict) else {})
        try:
            if not isinstance(part, dict):
                raise MatrixError(f"expected a dict, got {type(part).__name__}")
            Matrix.from_data(candidate)
        except (MatrixError, TypeError, AttributeError, KeyError) as exc:
            notes.append(Finding("plugin-compat-invalid", "warning",
                                 f"a plugin's ember_compat() data was left out: {exc}",
                                 fix="report this to the plugin's authors "
                                     "(the schema is in ember/compat_matrix/README.md)"))
            continue
        accepted = candidate
    return Matrix.from_data(accepted, lazy=lazy and not extra), notes


@dataclass
class Facts:
    """Component versions (python, numpy, driver, cuda, gpu-arch, distributions...) and
    where each came from, plus the installed plugins' ranges on ember."""

    components: dict = field(default_factory=dict)
    origins: dict = field(default_factory=dict)
    plugins: list = field(default_factory=list)     # {name, distribution, version, requires_ember}

    def set(self, name: str, version, origin: str) -> None:
        if version not in (None, ""):
            self.components[name] = str(version)
            self.origins[name] = origin

    def assume(self, items) -> None:
        """Apply NAME=VERSION overrides (the --assume of `ember compat check`)."""
        for item in items:
            name, sep, version = item.partition("=")
            if not sep or not name.strip() or not version.strip():
                raise ValueError(f"--assume expects NAME=VERSION (e.g. cuda=12.4), got {item!r}")
            self.set(name.strip().lower(), version.strip(), "assumed")
        self.derive()

    def derive(self) -> None:
        """Facts that follow from others: a CuPy wheel is CuPy, and a cupy-cudaNNx wheel
        fixes the CUDA major when nothing more exact (a backend probe) says which."""
        for name in sorted(self.components):
            if not name.startswith("cupy-"):
                continue
            if "cupy" not in self.components:
                self.set("cupy", self.components[name], name)
            wheel = _CUPY_CUDA_WHEEL.fullmatch(name)
            if wheel and "cuda" not in self.components:
                self.set("cuda", wheel.group(1), f"{name} wheel name")

    def describe(self, name: str) -> str:
        origin = self.origins.get(name)
        return f"{name} {self.components[name]}" + (f" ({origin})" if origin else "")

    def to_dict(self) -> dict:
        return {n: {"version": v, "origin": self.origins.get(n, "")}
                for n, v in sorted(self.components.items())}

    @classmethod
    def from_report(cls, report: dict) -> Facts:
        """The facts inside an `ember doctor --json` report (from this or another machine)."""
        components = report.get("components")
        if not isinstance(components, dict):
            raise TypeError("not an ember doctor report: it has no 'components' object")
        facts = cls()
        for name, entry in components.items():
            facts.set(name, entry.get("version"), entry.get("origin") or "report")
        facts.plugins = [dict(p) for p in report.get("plugins", ())]
        facts.derive()
        return facts


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    status: str            # pass | fail | unknown
    seen: str
    outside: tuple = ()    # required components outside their range
    missing: tuple = ()    # required components whose version is not known

    def to_dict(self) -> dict:
        return {"id": self.rule.id, "status": self.status, "seen": self.seen,
                "outside": list(self.outside), "missing": list(self.missing)}


def check(rule: Rule, facts: Facts) -> RuleResult | None:
    """The rule's verdict on these facts; None when its `when` does not hold."""
    for name, spec in rule.when.items():
        if name not in facts.components or not satisfies(facts.components[name], spec):
            return None
    outside, missing = [], []
    for name, spec in rule.require.items():
        ok = satisfies(facts.components[name], spec) if name in facts.components else None
        if ok is None:
            missing.append(name)
        elif not ok:
            outside.append(name)
    status = "fail" if outside else "unknown" if missing else "pass"
    shown = [n for n in dict.fromkeys((*rule.when, *rule.require)) if n in facts.components]
    return RuleResult(rule, status, ", ".join(facts.describe(n) for n in shown),
                      tuple(outside), tuple(missing))


def evaluate(facts: Facts, matrix: Matrix) -> list[RuleResult]:
    """Every applicable rule's result, in matrix order."""
    return [r for r in (check(rule, facts) for rule in matrix.rules) if r is not None]


def rule_findings(results, facts: Facts) -> list[Finding]:
    """Findings for the rules that failed."""
    found = []
    for result in results:
        if result.status != "fail":
            continue
        rule = result.rule
        got = ", ".join(f"{n} {facts.components[n]}" for n in result.outside)
        found.append(Finding(rule.id, rule.severity, f"{rule.summary}; found {got}",
                             seen=result.seen, fix=localize_text(rule.fix),
                             source=f"{rule.source} [{rule.support}, {rule.date}]",
                             commands=[localize(c) for c in rule.commands]))
    return found


def localize(command: str) -> str:
    """A package-index command of the matrix, as it runs for this ember's install."""
    from . import install
    return install.here().localize(command)


def localize_text(text: str) -> str:
    """Prose of the matrix with its pip commands localized."""
    from . import install
    return install.here().localize_text(text)


def range_fix(dist: str, version: str, spec: str, ember: str) -> tuple[str, tuple]:
    """(fix, commands) for a plugin whose range on ember excludes this ember: a plugin
    made for a newer ember asks for a newer ember or an older plugin, one made for an
    older ember for a newer plugin."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version
    try:
        specs, here = SpecifierSet(spec), Version(ember)
        newer = any(s.operator in (">", ">=", "~=", "==", "===")
                    and Version(s.version.removesuffix(".*")) > here for s in specs)
    except (InvalidSpecifier, InvalidVersion):
        return f"report this to the authors of {dist}", ()
    if newer:
        command = localize(f"pip install '{dist}<{version}'" if version
                           else f"pip install {dist}")
        return (f"{dist} {version} is made for a newer ember: upgrade ember "
                f"(pip install -U 'ember{spec}'), or install the {dist} made for ember "
                f"{ember} (a release older than {version}): {command}"), (command,)
    command = localize(f"pip install -U {dist}")
    return (f"{dist} {version} is made for an older ember: install the {dist} made for "
            f"ember {ember}: {command}"), (command,)


def plugin_api_findings(facts: Facts, matrix: Matrix) -> list[Finding]:
    """Each plugin's declared range on ember (its plugin-API range) against this ember."""
    from packaging.specifiers import InvalidSpecifier
    ember = facts.components.get("ember")
    found = []
    for plugin in facts.plugins:
        spec = (plugin.get("requires_ember") or "").strip("()[] ")
        if not spec or not ember:
            continue
        dist = plugin.get("distribution") or plugin.get("name", "?")
        seen = f"{dist} {plugin.get('version', '')} requires ember{spec}; ember is {ember}"
        try:
            ok = satisfies(ember, spec)
        except (InvalidSpecifier, TypeError):
            found.append(Finding("plugin-api-invalid", "problem",
                                 f"plugin {dist} declares an unreadable range on ember",
                                 seen=seen, fix=f"report this to the authors of {dist}"))
            continue
        if ok is False:
            api = matrix.plugin_api_for(ember)
            fix, commands = range_fix(dist, plugin.get("version", ""), spec, ember)
            found.append(Finding(
                "plugin-api-incompatible", "problem",
                f"plugin {dist} is incompatible with this ember (plugin API {api}): "
                "it is not imported", seen=seen, fix=fix, commands=commands))
    return found


def compat_findings(facts: Facts, matrix: Matrix) -> tuple[list[RuleResult], list[Finding]]:
    """What `ember compat check` reports: rule results and the findings they give."""
    results = evaluate(facts, matrix)
    return results, rule_findings(results, facts) + plugin_api_findings(facts, matrix)


def explain(text: str, matrix: Matrix) -> list[KnownError]:
    """The known errors whose patterns occur in the text or whose codes it names, less
    those a more specific match supersedes, and less the families' catch-alls when a
    specific entry matched."""
    text = plain_text(text)
    hits = _hits(text)
    evidence = {e.id: e.evidence(text, hits) for e in matrix.errors}
    found = [e for e in matrix.errors if evidence[e.id]]
    hidden = {s for e in found for s in e.supersedes}
    found = [e for e in found if e.id not in hidden]
    if any(not e.generic for e in found):
        found = [e for e in found if not e.generic]
    elif any(evidence[e.id] != "sign" for e in found):
        # a catch-all that a code or pattern names before one that only the stack's names
        # (next to an error word) suggest
        found = [e for e in found if evidence[e.id] != "sign"]
    if len(found) > 1:
        # the first cause in the text first (a log's first WARN, a chained traceback's
        # first exception); a category that names a code the text spells out by name
        # before one that matched words only
        named = {h.code.key for h in hits if h.how in ("name", "message")}
        found.sort(key=lambda e: (e.position(text, hits),
                                  not any(h.code.key in named for h in e.codes_in(hits))))
    return found


def explain_codes(text: str, known: KnownError) -> list:
    """The codes (error_codes.Hit) of the text that `known` covers."""
    return known.codes_in(_hits(plain_text(text)))


# typography a forum, blog or word processor puts into a pasted message ("can’t", a
# non-breaking hyphen in a wheel's name, a non-breaking space), as the tools print it
_TYPOGRAPHY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                             "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-",
                             "\u2212": "-", "\u00a0": " ", "\u202f": " ", "\u200b": ""})
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def plain_text(text: str) -> str:
    """The message as the tool printed it: terminal colours removed, typographic quotes,
    dashes and spaces made plain."""
    if text.isascii() and "\x1b" not in text:
        return text
    return _ANSI.sub("", text).translate(_TYPOGRAPHY)


def _hits(text: str) -> tuple:
    """The codes the text names (error_codes.recognize), and those its unwrapped lines
    name ("NCCL error:\n  internal error"), at their places in the text."""
    import dataclasses

    from .error_codes import recognize
    hits = list(recognize(text))
    if "\n" in text:
        flat, marks = _unwrapped(text)
        if flat != text:
            keys = {h.code.key for h in hits}
            for h in recognize(flat):
                if h.code.key not in keys:
                    k = bisect.bisect_right(marks, (h.pos, float("inf"))) - 1
                    hits.append(dataclasses.replace(
                        h, pos=h.pos + (marks[k][1] if k >= 0 else 0)))
    return tuple(hits)
