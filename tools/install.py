"""How ember and its plugins were installed (PEP 610), and the pip commands that work for it.

A fix the doctor prints must run as printed.  The first-party plugins are published under
their names (`pip install ember-opencl`), but an ember installed from a source tree finds
them in that tree: pip records where a distribution came from in its `direct_url.json`
(https://packaging.python.org/en/latest/specifications/direct-url/), so the command for a
plugin is `pip install <tree>/plugins/ember-opencl` there, the published name otherwise.
Commands in the compat matrix are written the published way; `localize()` rewrites them.
"""
from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from importlib import metadata
from urllib.parse import unquote, urlparse

PLUGIN_FOLDER = "plugins"       # where a source tree keeps the plugin distributions
# A pip command inside prose: 'pip install' and the words after it (options, quoted
# words, requirement-like words) up to anything else (two spaces, a parenthesis, ';').
_PIP_IN_TEXT = re.compile(
    r"""\bpip (?:install|uninstall)(?: (?:'[^']*'|"[^"]*"|[\w.\[\],<>=!~/-]+))+""")


@dataclass(frozen=True)
class Origin:
    """Where a distribution was installed from (its direct_url.json, or an index)."""

    kind: str                 # index | dir | editable | vcs | archive | missing
    url: str = ""
    path: str = ""            # the local folder (dir, editable) or file (archive)
    vcs: str = ""
    commit: str = ""
    subdirectory: str = ""


def parse_direct_url(data: dict) -> Origin:
    """An Origin from the contents of a PEP 610 direct_url.json."""
    url = str(data.get("url", ""))
    sub = str(data.get("subdirectory", ""))
    parsed = urlparse(url)
    path = unquote(parsed.path) if parsed.scheme == "file" else ""
    if isinstance(data.get("vcs_info"), dict):
        info = data["vcs_info"]
        return Origin("vcs", url, vcs=str(info.get("vcs", "git")),
                      commit=str(info.get("commit_id", "")), subdirectory=sub)
    if isinstance(data.get("dir_info"), dict):
        kind = "editable" if data["dir_info"].get("editable") else "dir"
        return Origin(kind, url, path=os.path.join(path, sub) if sub else path,
                      subdirectory=sub)
    if isinstance(data.get("archive_info"), dict):
        return Origin("archive", url, path=path)
    return Origin("index", url)


def origin(dist: str) -> Origin:
    """Where the installed distribution `dist` came from.  An installer leaves an INSTALLER
    file; metadata without one (a build's `ember.egg-info` in a source tree, found first
    when Python runs from there) says nothing about the installation and is passed over."""
    found = list(metadata.distributions(name=dist))
    if not found:
        return Origin("missing")
    found = next((d for d in found if d.read_text("INSTALLER") is not None), found[0])
    raw = found.read_text("direct_url.json")
    if not raw:
        return Origin("index")
    try:
        data = json.loads(raw)
    except ValueError:
        return Origin("index")
    return parse_direct_url(data) if isinstance(data, dict) else Origin("index")


def shell_path(path: str) -> str:
    """A path as a shell word; the home folder as a bare `~/` so that the command still
    runs after the report hides the home folder (a quoted '~' would not expand)."""
    home = os.path.expanduser("~").rstrip("/")
    if home and home not in ("~", "") and path.startswith(home + "/"):
        rest = path[len(home) + 1:]
        return "~/" + shlex.quote(rest)
    return shlex.quote(path)


@functools.cache
def pip() -> str:
    """'pip' when the pip on PATH installs into this interpreter's environment, else
    '<this python> -m pip' (a pip of another environment would install elsewhere)."""
    found = shutil.which("pip")
    scripts = sysconfig.get_path("scripts")
    try:
        if found and scripts and os.path.samefile(os.path.dirname(found), scripts):
            return "pip"
    except OSError:
        pass
    return f"{shell_path(sys.executable)} -m pip"


class Installer:
    """Commands for this environment: pip's invocation and where first-party plugins come
    from, decided by how `ember` itself was installed."""

    def __init__(self, ember: Origin | None = None, first_party=(), pip_command: str = ""):
        self.ember = ember if ember is not None else origin("ember")
        self.first_party = set(first_party) or _first_party()
        self.pip = pip_command or pip()

    def source_tree(self) -> str:
        """The source tree ember was installed from ('' for an index install)."""
        if self.ember.kind in ("dir", "editable") and self.ember.path:
            return self.ember.path
        return ""

    def requirement(self, name: str, extras=(), spec: str = "") -> str:
        """The pip argument that installs `name[extras]spec` the way this ember came."""
        extra = f"[{','.join(sorted(extras))}]" if extras else ""
        if name in self.first_party:
            # a source tree's plugin is the release made for the ember beside it, so it
            # also answers "a plugin release for this ember" (a version spec)
            tree = self.source_tree()
            folder = os.path.join(tree, PLUGIN_FOLDER, name) if tree else ""
            if folder and os.path.isfile(os.path.join(folder, "pyproject.toml")):
                return shell_path(folder + extra)
            if self.ember.kind == "vcs" and self.ember.url:
                sub = "/".join(p for p in (self.ember.subdirectory, PLUGIN_FOLDER, name) if p)
                at = f"@{self.ember.commit}" if self.ember.commit else ""
                return shlex.quote(f"{name}{extra} @ {self.ember.vcs}+{self.ember.url}{at}"
                                   f"#subdirectory={sub}")
        if name == "ember" and not spec and self.source_tree():
            editable = ["-e"] if self.ember.kind == "editable" else []
            return " ".join([*editable, shell_path(self.source_tree())])
        return shlex.quote(f"{name}{extra}{spec}")

    def install(self, name: str, extras=(), spec: str = "", flags=()) -> str:
        return " ".join([self.pip, "install", *flags, self.requirement(name, extras, spec)])

    def uninstall(self, *names: str) -> str:
        return " ".join([self.pip, "uninstall", "-y", *names])

    def localize(self, command: str) -> str:
        """A `pip install|uninstall ...` command written for the package index, rewritten
        for this environment; any other command is returned as it is."""
        from packaging.requirements import InvalidRequirement, Requirement
        try:
            argv = shlex.split(command)
        except ValueError:
            return command
        if len(argv) < 2 or argv[0] != "pip" or argv[1] not in ("install", "uninstall"):
            return command
        out = [self.pip, argv[1]]
        for word in argv[2:]:
            if word.startswith("-") or argv[1] == "uninstall":
                out.append(word)
                continue
            try:
                req = Requirement(word)
            except InvalidRequirement:
                out.append(shlex.quote(word))
                continue
            if req.name in self.first_party or req.name == "ember":
                out.append(self.requirement(req.name, req.extras, str(req.specifier)))
            else:
                out.append(shlex.quote(word))
        return " ".join(out)


    def localize_text(self, text: str) -> str:
        """Prose with every pip command in it localized (see localize)."""
        return _PIP_IN_TEXT.sub(lambda m: self.localize(m.group(0)), text or "")


@functools.cache
def _first_party() -> frozenset:
    from ember import compat_matrix
    return frozenset(p["distribution"] for p in compat_matrix.load()["plugin"])


@functools.cache
def here() -> Installer:
    """The Installer for this interpreter (cached: the environment does not change)."""
    return Installer()
