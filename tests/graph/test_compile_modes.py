"""ember.compile's mode, backend, options, dynamic and disable: torch's names and errors,
and each accepted one does what the module docstring of ember.graph.compile says."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import plugins
from ember.errors import EmberValueError, NotInEmberError
from ember.graph.compile import MODES, OPTIONS


def _step(a, b):
    return (a @ b).relu() * 2 + 1


def _replay_kind(compiled) -> str:
    (entry,) = compiled._entries.values()
    return type(entry.replay).__name__


def test_unknown_mode_is_torchs_error_listing_the_modes():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as torch_error:
        torch.compile(_step, mode="bogus")
    with pytest.raises(EmberValueError) as ember_error:
        ember.compile(_step, mode="bogus")
    assert str(ember_error.value).removeprefix("ember.compile: ") == str(torch_error.value)
    with pytest.raises(EmberValueError, match="should be one of: default, lite"):
        ember.compile(mode="bogus")                  # the decorator form checks too
    with pytest.raises(EmberValueError, match="mode or options"):
        ember.compile(_step, mode="default", options={"max_autotune": True})


@pytest.mark.parametrize("kwargs, match", [
    ({"dynamic": True}, "no shape-generic graphs"),
    ({"backend": "tvm"}, "no tvm backend"),
    ({"backend": lambda gm, inputs: gm}, "torch.fx graph"),
    ({"options": {"epilogue_fusion": True}}, "'epilogue_fusion' have no meaning"),
])
def test_what_ember_does_not_do_is_refused_by_name(kwargs, match):
    with pytest.raises(NotInEmberError, match=match):
        ember.compile(_step, **kwargs)


def test_unknown_backend_and_bad_values():
    with pytest.raises(EmberValueError, match="Invalid backend: 'bogus'; ember has inductor"):
        ember.compile(_step, backend="bogus")
    with pytest.raises(EmberValueError, match="dynamic must be None, True or False"):
        ember.compile(_step, dynamic="yes")
    with pytest.raises(EmberValueError, match="options must be a dict"):
        ember.compile(_step, options=["max_autotune"])


@pytest.mark.parametrize("how", [*({"mode": m} for m in MODES),
                                 *({"backend": b} for b in ("inductor", "eager", "aot_eager",
                                                             "cudagraphs")),
                                 {"options": dict.fromkeys(OPTIONS, True)},
                                 {"dynamic": False}],
                         ids=lambda how: f"{next(iter(how))}={next(iter(how.values()))}")
def test_every_accepted_setting_replays_eagers_results_on_the_cpu(how):
    r = np.random.default_rng(0)
    a = ember.tensor(r.standard_normal((5, 7)).astype(np.float32))
    b = ember.tensor(r.standard_normal((7, 3)).astype(np.float32))
    compiled = ember.compile(_step, **how)
    for _ in range(4):
        out = compiled(a, b)
    assert compiled.stats.replays >= 1
    np.testing.assert_array_equal(out.numpy(), _step(a, b).numpy())
    generic = how.get("mode") == "lite" or how.get("backend") in ("eager", "aot_eager") or \
        "options" in how
    if generic:                                      # ember's generated replay, always
        assert _replay_kind(compiled) == "function"


def test_disable_returns_the_function_itself():
    assert ember.compile(_step, disable=True) is _step
    assert ember.compile(disable=True)(_step) is _step


needs_opencl = pytest.mark.skipif(not plugins.device_count("opencl"), reason="no OpenCL device")


@needs_opencl
def test_modes_choose_the_opencl_replay(monkeypatch):
    monkeypatch.setenv("EMBER_OPENCL_GRAPHS", "0")   # default mode: the generic replay
    a, b = ember.randn(4, 6, device="opencl"), ember.randn(6, 3, device="opencl")
    kinds = {}
    for mode in ("default", "reduce-overhead", "max-autotune-no-cudagraphs", "lite"):
        compiled = ember.compile(_step, mode=mode)
        for _ in range(4):
            out = compiled(a, b)
        np.testing.assert_allclose(out.to("cpu").numpy(), _step(a, b).to("cpu").numpy(),
                                   rtol=1e-6, atol=1e-6)
        kinds[mode] = _replay_kind(compiled)
    assert kinds == {"default": "function", "reduce-overhead": "LaunchReplay",
                     "max-autotune-no-cudagraphs": "function", "lite": "function"}


@needs_opencl
def test_max_autotune_times_the_matmul_structures_per_shape_on_opencl(monkeypatch):
    from ember.backends.opencl import linalg
    rt = plugins.backend_for("opencl").runtime(0)
    # a few candidates keep the test's program builds few (the rule is the same for all);
    # the device-wide choice stays among them, for the untuned calls
    keep = {"tiled", "packed4x16", linalg._choose(rt)}
    monkeypatch.setattr(linalg, "VARIANTS", {k: linalg.VARIANTS[k] for k in keep})
    a, b = ember.randn(72, 80, device="opencl"), ember.randn(80, 72, device="opencl")
    key = ("matmul", 72, 72, 80, 1)
    rt.choices.pop(key, None)
    plain = ember.compile(_step)
    for _ in range(3):
        plain(a, b)
    assert key not in rt.choices                     # the default mode tunes nothing
    tuned = ember.compile(_step, mode="max-autotune")
    for _ in range(4):
        out = tuned(a, b)
    assert rt.choices[key] in keep
    assert set(rt.choices["matmul_shapes"][key[1:]]) == keep - {"naive"}
    np.testing.assert_allclose(out.to("cpu").numpy(), _step(a, b).to("cpu").numpy(),
                               rtol=1e-5, atol=1e-4)
    rt.choices.pop(key)


def test_a_compiled_function_follows_the_autocast_region_it_is_called_in():
    # the autocast state is a guard, as in torch.compile: a graph captured without a
    # region is not replayed inside one
    layer = ember.nn.Linear(4, 3)
    x = ember.randn(2, 4)
    compiled = ember.compile(lambda x: layer(x).relu())
    for _ in range(3):
        assert compiled(x).dtype is ember.float32
    with ember.autocast("cpu"):
        for _ in range(3):
            assert compiled(x).dtype is ember.bfloat16
        with ember.autocast("cpu", dtype=ember.float16):
            assert compiled(x).dtype is ember.float16
    assert compiled(x).dtype is ember.float32
    assert compiled.stats.signatures == 3 and compiled.stats.replays >= 3


def test_a_compiled_training_step_under_autocast_reads_the_updated_weights():
    # a replay casts the weights it reads at each call (no cached cast held by the graph),
    # so optimizer updates reach the next step: the losses match eager's step by step
    def losses(compiled: bool):
        ember.manual_seed(0)
        layer = ember.nn.Linear(4, 2)
        opt = ember.optim.SGD(layer.parameters(), lr=0.5)
        x, y = ember.randn(8, 4), ember.randn(8, 2)

        def step(x, y):
            opt.zero_grad()
            with ember.autocast("cpu"):
                loss = ember.nn.functional.mse_loss(layer(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        run = ember.compile(step) if compiled else step
        return [run(x, y).item() for _ in range(6)], run
    eager, _ = losses(False)
    replayed, compiled = losses(True)
    assert compiled.stats.replays >= 3
    np.testing.assert_allclose(replayed, eager, rtol=1e-6)
    assert len(set(eager)) == 6                        # the weights did change each step
