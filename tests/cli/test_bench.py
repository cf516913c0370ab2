"""`ember bench` prints one row per op and shape with NumPy, ember and ratios."""
from __future__ import annotations

import re

from ember.tools.cli import main


def test_bench_table(capsys):
    assert main(["bench", "--quick", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()[2:] if line.strip()]
    assert len(rows) == 9
    ops = {(r[0] if r[0] != "a" else " ".join(r[:3])) for r in rows}
    assert ops == {"a + b", "a @ b", "a.sum()"}
    for r in rows:
        numbers = [float(x) for x in r if re.fullmatch(r"[+-]?\d+\.\d+", x)]
        assert len(numbers) >= 4 and all(n > 0 for n in numbers[:3])
