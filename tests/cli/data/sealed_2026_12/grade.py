"""Grades `ember compat explain` on the held-out set of 2026-12 (README.md here):
matched, right cause by the labels, false positives on the harmless texts."""
import collections
import pathlib

import tomllib
from ember.tools import compat_eval

HERE = pathlib.Path(__file__).parent
MATRIX, _ = compat_eval.load_matrix()


def _load(here: pathlib.Path, name: str) -> dict:
    with open(here / name, "rb") as f:
        return tomllib.load(f)


def main(here: pathlib.Path = HERE) -> None:
    """Grade the held-out set in `here` (this folder's by default; later sets reuse this)."""
    labels = _load(here, "labels.toml")["label"]
    files = {f: _load(here, f) for f in sorted({label["file"] for label in labels})}
    total = matched = right = 0
    families = collections.defaultdict(lambda: [0, 0, 0])
    misses = []
    for label in labels:
        message = files[label["file"]]["message"][label["index"]]
        assert message["source"] == label["source"]
        found = [e.id for e in compat_eval.explain(message["text"], MATRIX)]
        family = families[message["family"]]
        family[0] += 1
        total += 1
        if found:
            matched += 1
            family[1] += 1
        if found and found[0] in label["accept"]:
            right += 1
            family[2] += 1
        else:
            misses.append((message["family"], message["source"], found[:2], label["accept"]))
    harmless = [h for f in files.values() for h in f.get("harmless", [])]
    wrong = [h["source"] for h in harmless if compat_eval.explain(h["text"], MATRIX)]
    print(f"sealed: {total} messages, matched {matched} ({100 * matched / total:.0f}%), "
          f"right cause {right} ({100 * right / total:.1f}%); harmless {len(harmless)}, "
          f"false positives {len(wrong)} {wrong}")
    for name, (n, m, r) in sorted(families.items()):
        print(f"  {name}: {n} msgs, matched {m}, right {r}")
    print("misses:")
    for miss in misses:
        print("  ", miss)


if __name__ == "__main__":
    main()
