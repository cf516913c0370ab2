"""`ember bench` prints one row per op and shape with NumPy, ember and ratios."""
from __future__ import annotations

import re

import pytest
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


WORKLOADS = ["LSTM", "GRU", "conv2d", "MLP", "MLP", "demo", "demo", "DataLoader", "atan2",
             "bitwise_and"]


def test_bench_workloads_table(capsys):
    """Every row of the workload table, each pair checked to agree before it is timed
    (bench_workloads raises otherwise), with its ratio the quotient of its two times."""
    pytest.importorskip("torch")
    assert main(["bench", "--workloads", "--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("device=cpu")
    rows = [line for line in lines[2:] if re.match(r"\S.*\d\.\d{3}\s", line)]
    assert [r.split()[0] for r in rows] == WORKLOADS
    for r in rows:
        ember_ms, ref_ms, ref, ratio, *faults = r[40:].split()
        assert ref == ("numpy" if r.split()[0] in ("atan2", "bitwise_and") else "torch")
        assert float(ember_ms) > 0 and float(ref_ms) > 0
        assert abs(float(ratio) - float(ember_ms) / float(ref_ms)) <= 0.006
        assert all(float(f) >= 0 for f in faults)
    assert "compiled" in rows[4] and "compiled" in rows[6]


def test_median_ms_counts_the_page_faults_of_each_side():
    """A step that maps fresh memory every call faults on its pages; one that writes into
    the same array does not: the count the benchmarks print tells the two apart."""
    np = pytest.importorskip("numpy")
    from ember.tools.bench_workloads import median_ms
    kept = np.zeros(1 << 22)

    def fresh():                             # 32 MiB, above glibc's mmap threshold
        np.ones(1 << 22).sum()

    def reused():
        kept.fill(1.0)

    faults: dict = {}
    ms = median_ms({"fresh": fresh, "reused": reused}, 3, warmup=1, faults=faults)
    assert set(ms) == set(faults) == {"fresh", "reused"}
    # 32 MiB: 8,192 pages of 4 KiB, or 16 of 2 MiB where the kernel hands out huge pages
    assert faults["fresh"] >= 16
    assert faults["reused"] < faults["fresh"] / 4
