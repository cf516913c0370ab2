"""vmap over the conformance table (torch's test_vmap_exhaustive): each row's function,
vmapped over a batch of three samples, equals the stack of its per-sample results.  A row
whose ops have batching rules must batch without warnings; the rows that loop are listed
by the reason they loop (compared all the same)."""
from __future__ import annotations

import warnings

import ember
import numpy as np
from ember.func import VmapError, VmapFallbackWarning, VmapLoopWarning, batching_rules, vmap
from ember.testing.cases import FAMILIES
from ember.testing.checks import make_inputs


def _rows(limit=2):
    """float32 rows, at most `limit` per function (its first variants), to stay fast."""
    seen: dict = {}
    out = []
    for c in (c for fam in FAMILIES for c in fam.ROWS if "float32" in c.dtypes):
        n = seen[c.name.split(":")[0]] = seen.get(c.name.split(":")[0], 0) + 1
        if n <= limit:
            out.append(c)
    return out


CASES = _rows()
SIZE = 3


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _run(case):
    samples = [make_inputs(case, "float32", seed=s) for s in range(SIZE)]
    if not samples[0]:
        return "no inputs"
    try:
        per = [_flat(case.fn(ember, *[ember.tensor(a) for a in arrays])) for arrays in samples]
    except Exception:  # noqa: BLE001  (a row made for another dtype's path)
        return "per-sample call fails"
    if any(type(o) is not ember.Tensor for o in per[0]):
        return "non-tensor output"
    batched = [ember.tensor(np.stack([s[k] for s in samples])) for k in range(len(samples[0]))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = _flat(vmap(lambda *xs: case.fn(ember, *xs))(*batched))
        except VmapError as exc:
            return f"vmap refused: {exc}"
    kinds = {type(w.message) for w in caught} & {VmapLoopWarning, VmapFallbackWarning}
    for k, o in enumerate(out):
        want = np.stack([p[k].numpy() for p in per])
        got = o.numpy()
        assert got.shape == want.shape, f"{case.name}: output {k} shape {got.shape} vs {want.shape}"
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True,
                                   err_msg=f"{case.name}: output {k}")
    return "looped" if kinds else "batched"


def test_vmap_matches_per_sample_results_over_the_conformance_table():
    outcome, failures = {}, []
    for case in CASES:
        try:
            outcome[case.name] = _run(case)
        except Exception as exc:  # noqa: BLE001  (collected, reported below)
            failures.append(f"{case.name}: {type(exc).__name__}: {str(exc)[:200]}")
    assert not failures, "\n".join(failures)
    batched = [n for n, o in outcome.items() if o == "batched"]
    # the rest loop (a value read to Python: an input check; a batched index into take or
    # index_add) or are refused (random draws under randomness='error', data-dependent
    # shapes), each compared or checked above
    assert len(batched) > 0.9 * len(CASES), {n: o for n, o in outcome.items()
                                             if o != "batched"}


def test_every_primitive_has_a_rule_or_is_listed_as_looping():
    rules = batching_rules()
    looping = sorted(n for n, k in rules.items() if k == "loop")
    # creation ops take no batched input; the rest loop on purpose (data-dependent shapes)
    assert looping == ["arange", "full", "index_put", "nonzero", "unique"], looping


def test_ember_ops_json_says_how_each_op_batches():
    from ember.tools.ops import declarations
    rows = {d["name"]: d["batching"] for d in declarations()}
    assert rows["unfold"] == "batch joins N" and rows["matmul"] == "matmul"
    assert rows["add"] == "elementwise" and rows["nonzero"] == "loop"
