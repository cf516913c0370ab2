"""Sphinx extension for ember's API reference: the pages follow the code.

``.. ember-namespace:: ember.nn`` documents every name in that module's ``__all__``
(autodoc directives written for it at build time, so a new name needs no docs edit), and
``.. ember-cli::`` prints every subcommand's argparse help.  While autodoc reads the
docstrings, a public callable without one, or without its PyTorch section, is a warning,
which the build (``-W``) turns into an error.
"""
from __future__ import annotations

import importlib
import inspect
import re

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

LOG = logging.getLogger(__name__)
SECTION = re.compile(r"^PyTorch\n-------\n", re.M)


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "autoclass"
    if callable(obj):
        return "autofunction"
    return ""


class Namespace(SphinxDirective):
    """Every public name of one module, in __all__'s order, as autodoc entries."""

    required_arguments = 1
    option_spec = {"exclude": lambda text: [m.strip() for m in text.split(",") if m.strip()]}

    def run(self):
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        exclude = set(self.options.get("exclude", []))
        lines = [f".. currentmodule:: {modname}", ""]
        values = []
        for name in module.__all__:
            if name in exclude:
                continue
            obj = getattr(module, name)
            kind = _kind(obj)
            if not kind:
                values.append(name)
                continue
            lines += [f".. {kind}:: {name}", ""]
        if values:
            lines += [".. rubric:: Values", ""]
            for name in values:
                lines.append(f"- ``{modname}.{name}``: ``{getattr(module, name)!r}``")
            lines.append("")
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=modname), node)
        return node.children


class Cli(SphinxDirective):
    """`ember --help` and each subcommand's help, from the argparse parser itself."""

    def run(self):
        from ember.tools.cli import COMMANDS, build_parser
        lines = ["``ember --help``", "", ".. code-block:: text", ""]
        lines += ["   " + line for line in build_parser("").format_help().splitlines()]
        lines.append("")
        for name in COMMANDS:
            parser = build_parser(name)
            sub = next(a for a in parser._actions if a.dest == "command").choices[name]
            title = f"ember {name}"
            lines += [title, "-" * len(title), "", ".. code-block:: text", ""]
            lines += ["   " + line for line in sub.format_help().splitlines()]
            lines.append("")
            # actions of their own (ember compat check/explain, ember export inspect/verify)
            for action in sub._actions:
                choices = getattr(action, "choices", None)
                for verb, verb_parser in (choices.items() if isinstance(choices, dict) else ()):
                    if not hasattr(verb_parser, "format_help"):
                        continue
                    lines += [f"``{title} {verb}``", "", ".. code-block:: text", ""]
                    lines += ["   " + line for line in verb_parser.format_help().splitlines()]
                    lines.append("")
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source="ember_cli"), node)
        return node.children


def _check_docstring(app, what, name, obj, options, lines):
    """A public callable's docstring: present, and with its PyTorch section."""
    if what not in ("function", "class") or name.rsplit(".", 1)[-1].startswith("_"):
        return
    if inspect.isclass(obj) and "__doc__" not in vars(obj):
        LOG.warning(f"{name}: no docstring", type="ember", subtype="docstring")
        return
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        LOG.warning(f"{name}: no docstring", type="ember", subtype="docstring")
    elif not SECTION.search(inspect.cleandoc(doc)):
        LOG.warning(f"{name}: docstring without its 'PyTorch' section", type="ember",
                    subtype="docstring")


_LITERAL = re.compile(r"(``.+?``|:\w+:`[^`]+`)")


def _escape_text(text: str) -> str:
    """Plain-text docstring characters that are reStructuredText markup: |x| (a
    substitution), name_ (a reference), a lone * (emphasis)."""
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")
    return re.sub(r"\b(\w+)_(?=\W|$)", r"\1\\_", text)


def _plain_text(app, what, name, obj, options, lines):
    """Docstrings are written for help() first: escape what reST would read as markup,
    outside ``literals``, roles and examples (runs before napoleon reads the sections)."""
    in_example = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_example = True
        elif not stripped:
            in_example = False
        if in_example:
            continue
        parts = _LITERAL.split(line)
        lines[i] = "".join(p if k % 2 else _escape_text(p) for k, p in enumerate(parts))


def _skip_gaps(app, what, name, obj, skip, options):
    """Tensor's placeholders for PyTorch names ember lacks (they raise NotInEmberError)
    are not part of the reference."""
    if type(obj).__name__ == "_Gap":
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_gaps)
    app.connect("autodoc-process-docstring", _plain_text, priority=100)
    app.add_directive("ember-namespace", Namespace)
    app.add_directive("ember-cli", Cli)
    app.connect("autodoc-process-docstring", _check_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
