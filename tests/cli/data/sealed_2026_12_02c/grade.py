"""Grades `ember compat explain` on the fourth held-out set of 2026-12 (README.md here), with
the first set's grader: matched, right cause by the labels, false positives on the harmless
texts."""
import pathlib
import runpy

HERE = pathlib.Path(__file__).parent

if __name__ == "__main__":
    runpy.run_path(str(HERE.parent / "sealed_2026_12" / "grade.py"))["main"](HERE)
