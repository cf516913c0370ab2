"""Docstrings of the functions and classes ember generates (elementwise ops from their
declarations, legacy tensor types, padding layers, array API wrappers): one NumPy-style
layout, ending with the PyTorch section every public callable has (docs/conventions)."""
from __future__ import annotations


def generated(summary: str, counterpart: str, *, params: str = "", returns: str = "") -> str:
    """The docstring: a summary, optional Parameters/Returns bodies, then the PyTorch section
    naming the counterpart (``torch.name`` or a sentence starting ``None:``)."""
    parts = [summary]
    if params:
        parts.append("Parameters\n----------\n" + params)
    if returns:
        parts.append("Returns\n-------\n" + returns)
    body = counterpart if counterpart.startswith("None") else f"``{counterpart}``"
    parts.append("PyTorch\n-------\n" + body)
    return "\n\n".join(parts) + "\n"
