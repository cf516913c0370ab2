"""ember.compile over fixed memory (backends/static_replay.py: CUDA graphs' rules), run here
on NumPy.

No GPU runs in this suite, so the rules CuPy's CUDA graphs follow (backends/cupy/graphs.py)
are tested with the same StaticReplay on an in-process device type 'fixedmem' whose
strategy replays each segment as a CUDA graph would: the recorded kernels called again on
the very arrays of the recording, each result written into the memory it had then.  A
rule that is wrong there (an input not staged, a result handed out and rewritten by the
next call, a draw not drawn again, memory the graph writes reached through a copy) gives
wrong numbers here as it would on the GPU.  What only a GPU shows (CuPy's capture API, the
allocator, kernels refused during capture) is run by benchmarks/cuda_graphs.py where a
GPU is lent.
"""
from __future__ import annotations

import contextlib
import functools

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import plugins
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api
from ember.backends.static_replay import StaticReplay
from ember.graph.replay import generate
from test_compile import MODELS, _train


class FixedMemoryGraphs:
    """A device graph on NumPy.  Capture notes each kernel call with its argument arrays
    and its result array, and changes nothing anyone can see (as CUDA's capture runs
    nothing): it runs the pure kernels, whose results are new arrays, for those arrays,
    but no in-place kernel.  Launch runs every noted call in order, each result written
    into the noted array (views of noted arrays are no kernels: they see the memory they
    view, as on a GPU); capture ends with one launch, as CudaGraphs.capture does."""

    def __init__(self, refuse=None, limit=1 << 34):
        self.limit = limit
        # refuse(fn, wrote): whether capturing this call fails (on CUDA: a kernel that
        # reads back on the host), `wrote` telling whether an in-place call came before
        self.refuse = refuse
        self.captures = 0
        self.launches = 0

    def capture(self, run):
        calls = []

        def call(fn, args, attrs, inplace):
            if self.refuse is not None and self.refuse(fn, any(c[3] is None and c[4]
                                                               for c in calls)):
                raise RuntimeError("operation not permitted when stream is capturing")
            if inplace:
                calls.append((fn, args, attrs, None, True))
                return None
            out = fn(*args, **attrs) if attrs else fn(*args)
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            into = None if any(np.may_share_memory(out, a) for a in arrays) else out
            calls.append((fn, args, attrs, into, False))
            return out
        with np.errstate(all="ignore"):    # pure kernels over values not yet computed
            run(call)
        self.captures += 1
        self.launch(calls)
        return calls

    def launch(self, calls):
        self.launches += 1
        for fn, args, attrs, into, _ in calls:
            out = fn(*args, **attrs) if attrs else fn(*args)
            if into is not None:
                np.copyto(into, out)

    @staticmethod
    def layout(x):
        return (x.__array_interface__["data"][0], x.shape, x.strides, x.dtype)

    @staticmethod
    def bounds(x):
        return np.lib.array_utils.byte_bounds(x)

    @staticmethod
    def static_like(x):
        return np.empty(x.shape, x.dtype)

    @staticmethod
    def stage(dst, src):
        np.copyto(dst, src)

    @staticmethod
    def fresh(x):
        return x.copy()

    @staticmethod
    def nbytes(x):
        return x.nbytes


def _zero_d_arrays(fn):
    @functools.wraps(fn)
    def kernel(*args, **attrs):
        out = fn(*args, **attrs)
        return np.asarray(out) if isinstance(out, np.generic) else out
    return kernel


class FixedMemoryBackend:
    name = "fixedmem"
    aliases = ()
    views = "strided"

    def __init__(self):
        # CuPy's table is numpy_like(cupy), whose 0-d results are arrays: so are these
        table = array_api.numpy_like(np)
        table.update(array_api.numpy_extras(np))
        self.kernels = {name: _zero_d_arrays(fn) for name, fn in table.items()}
        self.refuse = None
        self.limit = 1 << 34
        self.replays: list = []

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, "fixed memory 0")]

    def from_host(self, array, index=None):
        return np.array(array, copy=True)

    def to_host(self, native):
        return native

    def capabilities(self, index=None):
        return Capabilities(frozenset(d.name for d in ember.dtypes.ALL))

    def compile_graph(self, graph):
        replay = StaticReplay(graph, FixedMemoryGraphs(self.refuse, self.limit),
                              generate(graph))
        self.replays.append(replay)
        return replay


@contextlib.contextmanager
def registered(backend):
    """`backend` as the device type 'fixedmem' while the block runs."""
    plugins._backends["fixedmem"] = backend
    try:
        yield backend
    finally:
        plugins._backends.pop("fixedmem", None)
        ember.Device("fixedmem", 0)._backend = ember.Device("fixedmem", 0)._kernels = None


@pytest.fixture
def fixedmem():
    with registered(FixedMemoryBackend()) as backend:
        yield backend


def same(eager, compiled) -> None:
    """Losses, weights and optimizer state of two test_compile._train runs, bit for bit."""
    for a, b in zip((eager[0], *eager[1], *eager[2]), (compiled[0], *compiled[1],
                                                       *compiled[2])):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_over_fixed_memory_equals_eager(name, fixedmem):
    eager = _train(name, "fixedmem", False)
    compiled = _train(name, "fixedmem", True)
    (replay,) = fixedmem.replays
    assert replay.why_not is None, replay.why_not
    # of the calls that replay the graph: the first generic (kernels load), the second
    # records, the others replay from the device graphs
    assert compiled[3].stats.replays >= 15
    assert replay.replays == compiled[3].stats.replays - 2 and replay.fallbacks == 0
    same(eager, compiled)
    segments = [s for s in replay.program.steps if s[0] == "seg"]
    if name != "transformer":
        # no draws: the labels' check (and the five kernels that make the index it reads
        # from the labels) moves first; the whole step is then one segment after it
        assert [s[0] for s in replay.program.steps] == ["seg", "py", "seg"]
        assert replay.program.steps[1][1].kind == "check"
    else:                               # dropout draws run between segments
        assert len(segments) > 1
        assert any(s[0] == "py" and s[1].meta.get("random") for s in replay.program.steps)


def test_results_are_copies_and_inputs_are_staged(fixedmem):
    w = ember.ones(3, 3, device="fixedmem")

    def f(x):
        w.mul_(0.5)
        return (x * w).sum(0), x, w
    run = ember.compile(f)
    got = []
    for k in range(8):
        x = ember.full((3, 3), float(k + 1), device="fixedmem")
        s, same, live = run(x)
        assert same is x and live is w          # an input returned is the caller's own
        got.append(s)
    (replay,) = fixedmem.replays
    assert replay.replays == run.stats.replays - 2 == 4
    for k, s in enumerate(got):                 # never rewritten by a later call
        np.testing.assert_array_equal(s.numpy(), np.full(3, 3 * (k + 1) * 0.5 ** (k + 1)))


def test_a_changed_input_layout_or_new_parameter_memory_falls_back(fixedmem):
    w = ember.ones(4, device="fixedmem")

    def f(x):
        w.add_(1)
        return x * w
    run = ember.compile(f)
    for _ in range(6):
        run(ember.full((4,), 2.0, device="fixedmem"))
    (replay,) = fixedmem.replays
    assert replay.replays == 2
    # a strided argument is staged like any other (copied into the graph's buffer)
    strided = ember.full((8,), 3.0, device="fixedmem")[::2]
    np.testing.assert_array_equal(run(strided).numpy(), np.full(4, 3.0 * 8))
    assert replay.replays == 3 and replay.fallbacks == 0
    # an argument that is the memory the graph writes: eager sees the write through it
    out = run(w)
    np.testing.assert_array_equal(out.numpy(), np.full(4, 9.0 * 9.0))
    assert replay.fallbacks == 1
    np.testing.assert_array_equal(w.numpy(), np.full(4, 9.0))


@pytest.mark.parametrize("case", ["refused at the first kernel",
                                  "refused after an in-place write", "too much memory"])
def test_a_graph_that_cannot_be_recorded_keeps_the_generic_replay(case, fixedmem):
    # a capture refused at a segment's first kernel, or at the first kernel after the
    # optimizer's first in-place write (which must then not be applied twice); a graph
    # whose buffers would hold more than the device allows
    if case == "too much memory":
        fixedmem.limit, why = 1000, "would stay allocated"
    else:
        fixedmem.refuse, why = (lambda fn, wrote: True) if "first" in case else \
            (lambda fn, wrote: wrote), "could not capture"
    eager = _train("mlp", "fixedmem", False)
    compiled = _train("mlp", "fixedmem", True)
    (replay,) = fixedmem.replays
    assert replay.program is None and why in replay.why_not
    same(eager, compiled)


def test_draws_are_drawn_again_at_each_call(fixedmem):
    def f(x):
        return F.dropout(x, 0.5, training=True) + ember.rand(3, device="fixedmem")
    run = ember.compile(f)
    x = ember.ones(4, 3, device="fixedmem")
    ember.manual_seed(1)
    eager = [f(x).numpy().copy() for _ in range(7)]
    ember.manual_seed(1)
    compiled = [run(x).numpy().copy() for _ in range(7)]
    (replay,) = fixedmem.replays
    assert replay.replays == run.stats.replays - 2 == 3
    for a, b in zip(eager, compiled):
        np.testing.assert_array_equal(a, b)
    assert len({a.tobytes() for a in compiled}) == 7
