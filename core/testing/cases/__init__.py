"""The conformance table, one module per op family (the rows move into them from elementwise.py,
which holds the table's types and the torch.* rows for now)."""
from __future__ import annotations

from .elementwise import ALL_FLOATS, CASES, FLOATS, INTS, SPECIAL, Input, OpCase, case, section

__all__ = ["ALL_FLOATS", "CASES", "FLOATS", "INTS", "SPECIAL", "Input", "OpCase", "case", "section"]
