"""Docstrings of the functions and classes ember generates (elementwise ops from their
declarations, legacy tensor types, padding layers, array API wrappers): one NumPy-style
layout, ending with the PyTorch section every public callable has (CONTRIBUTING.md, "Habits")."""
from __future__ import annotations


def generated(summary: str, counterpart: str, *, params: str = "", returns: str = "") -> str:
    """The docstring: a summary, optional Parameters/Returns bodies, then the PyTorch section
    naming the counterpart (a name, a sentence naming ``torch.name``, or one starting
    ``None:``)."""
    parts = [summary]
    if params:
        parts.append("Parameters\n----------\n" + params)
    if returns:
        parts.append("Returns\n-------\n" + returns)
    # a bare name is wrapped as a literal; a sentence ("None: ...", "``torch.x``; ...") as is
    body = counterpart if counterpart.startswith("None") or "``" in counterpart \
        else f"``{counterpart}``"
    parts.append("PyTorch\n-------\n" + body)
    return "\n\n".join(parts) + "\n"
