"""`ember compat explain` on real error messages from public issue trackers (with their
sources in data/error_corpus.toml): the right diagnosis, the detail it decodes, a fix,
and nothing said about harmless warnings."""
from __future__ import annotations

import pathlib

import pytest
from ember import compat_matrix
from ember.tools import compat_eval
from ember.tools.cli import main
from ember.tools.compat_eval import load_matrix

CORPUS = compat_matrix._tomllib().loads(
    (pathlib.Path(__file__).parent / "data" / "error_corpus.toml").read_text(encoding="utf-8"))
MESSAGES, HARMLESS = CORPUS["message"], CORPUS["harmless"]
MATRIX, _ = load_matrix()


def _id(entry) -> str:
    return entry["source"].split("github.com/")[-1]


def _case(entry):
    """A message explain still reads wrongly (`miss`, with what it reads) is an expected
    failure, strict: the day it is read right, the test says so and `miss` goes."""
    marks = [pytest.mark.xfail(strict=True, reason=entry["miss"])] if "miss" in entry else []
    return pytest.param(entry, id=_id(entry), marks=marks)


def diagnosis(text: str) -> list[str]:
    return [e.id for e in compat_eval.explain(text, MATRIX)]


def test_the_corpus_is_real_and_big_enough():
    assert len(MESSAGES) >= 60 and len(HARMLESS) >= 20
    sources = [m["source"] for m in MESSAGES]
    assert len(set(sources)) == len(sources)
    assert all(s.startswith("https://") for s in sources + [h["source"] for h in HARMLESS])
    assert sum(s.startswith("https://github.com/") for s in sources) >= 0.9 * len(sources)
    known = {e.id for e in MATRIX.errors}
    assert {m["expect"] for m in MESSAGES} <= known
    # every diagnosis the corpus covers has at least two independent real messages or a
    # documented example, and the diagnoses are spread over the error families
    assert len({m["expect"] for m in MESSAGES}) >= 25


@pytest.mark.parametrize("entry", [_case(m) for m in MESSAGES])
def test_real_message_gets_the_right_diagnosis(entry):
    found = compat_eval.explain(entry["text"], MATRIX)
    # the right cause first; after it only the readings the entry allows (`also`)
    assert [e.id for e in found] == [entry["expect"], *entry.get("also", ())], entry["source"]
    known = found[0]
    assert known.meaning and known.fix
    if "seen" in entry:
        assert entry["seen"] in known.seen_in(entry["text"]), known.seen_in(entry["text"])


@pytest.mark.parametrize("entry", HARMLESS, ids=_id)
def test_harmless_output_is_not_diagnosed(entry):
    assert diagnosis(entry["text"]) == [], entry["source"]


def test_rate_of_right_diagnoses_and_false_positives():
    right = sum(diagnosis(m["text"])[:1] == [m["expect"]] for m in MESSAGES)
    false_positives = sum(bool(diagnosis(h["text"])) for h in HARMLESS)
    assert right / len(MESSAGES) >= 0.9
    assert false_positives == 0


def test_explain_prints_what_the_message_says(capsys):
    text = next(m["text"] for m in MESSAGES if m["expect"] == "torch-driver-too-old")
    assert main(["compat", "explain", text]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "torch-driver-too-old" in out and "supports CUDA up to" in out
    # a more specific reading hides the generic one, and fixes print as commands
    text = next(m["text"] for m in MESSAGES if m["expect"] == "opencl-build-fp64")
    assert main(["compat", "explain", text]) == 0
    out = capsys.readouterr().out
    assert "opencl-build-fp64" in out and "opencl-build-failure" not in out
    assert main(["compat", "explain", "clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR"]) == 0
    out = capsys.readouterr().out
    assert "$ " in out and "install pocl-binary-distribution" in out
