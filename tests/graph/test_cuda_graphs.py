"""ember.compile on CUDA replays CUDA graphs (backends/cupy/graphs.py): on a machine with a
GPU, the same training as eager, from graphs, with results no later call rewrites.

Skipped, with the probe's reason, where no CUDA device runs (tools/gpu_check.sh runs it);
the rules themselves run everywhere in test_static_replay.py, on NumPy.
"""
from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from test_compile import MODELS, _train

_REASON = "" if ember.cuda.is_available() else (
    ember.cuda.unavailable_reason().splitlines() or ["no CUDA device"])[0]
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(_REASON), reason=_REASON)]


def _replay_of(compiled):
    (entry,) = compiled._entries.values()
    return entry.replay


def _is_rocm() -> bool:
    return ember.device("cuda").concrete().backend.name == "rocm"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_from_cuda_graphs_equals_eager(name, monkeypatch):
    if _is_rocm():
        pytest.skip("CuPy has no stream capture on ROCm: the generic replay runs there")
    monkeypatch.setenv("EMBER_CUDA_GRAPHS", "1")
    eager = _train(name, "cuda:0", False)
    compiled = _train(name, "cuda:0", True)
    replay = _replay_of(compiled[3])
    assert replay.why_not is None, replay.why_not
    assert replay.replays == compiled[3].stats.replays - 2 >= 6
    # the same kernels on the same values; cuBLAS may pick another algorithm for buffers
    # of other alignments, so float32 tolerance, as on OpenCL
    np.testing.assert_allclose(eager[0], compiled[0], rtol=1e-4, atol=1e-5)
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=5e-3)


def test_results_survive_later_replays_and_draws_differ(monkeypatch):
    if _is_rocm():
        pytest.skip("CuPy has no stream capture on ROCm")
    monkeypatch.setenv("EMBER_CUDA_GRAPHS", "1")
    w = ember.ones(64, device="cuda:0")

    def f(x):
        w.mul_(0.5)
        return F.dropout(x * w, 0.5, training=True).sum(), w
    run = ember.compile(f)
    x = ember.ones(64, device="cuda:0")
    ember.manual_seed(3)
    outs = [run(x)[0] for _ in range(8)]
    replay = _replay_of(run)
    assert replay.why_not is None and replay.replays >= 3, replay.why_not
    ember.manual_seed(3)
    w.fill_(1.0)
    for got in outs:
        want = f(x)[0]
        np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
    assert len({float(o.item()) for o in outs}) > 1
