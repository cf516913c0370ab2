"""ember.autograd.forward_ad (dual tensors) against torch.autograd.forward_ad: the tangent of
every conformance row's function, a CNN's loss, forward-over-reverse, in-place ops, and
the errors."""
from __future__ import annotations

import warnings

import ember
import ember.autograd.forward_ad as fwAD
import numpy as np
import pytest
from ember import dispatch
from ember.errors import EmberTypeError, ShapeError, UnsupportedError
from ember.testing.cases import FAMILIES
from ember.testing.checks import make_inputs

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tfw  # noqa: E402

# rows whose tangents differ from torch's on purpose or by another issue's convention:
# random draws (two libraries, two streams), nan and inf inputs (the VJP's convention at
# nan, shared with reverse mode: angle's gradient at nan is 1 in ember, 0 in torch, in
# reverse mode too), nanmedian of an all-nan row (which nan's tangent), and torch's
# cross_entropy, whose weight has no derivative in torch (ember's has one)
_SKIP_PREFIX = ("gumbel_softmax", "nansum", "cross_entropy:weight", "angle")


def _rows():
    seen: dict = {}
    out = []
    for c in (c for fam in FAMILIES for c in fam.ROWS if "float32" in c.dtypes):
        base = c.name.split(":")[0]
        if c.name.endswith(":special") or c.name.startswith(_SKIP_PREFIX):
            continue
        seen[base] = seen.get(base, 0) + 1
        if seen[base] == 1:
            out.append(c)
    return out


def _flat(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


def _tangents(lib, fw, case, arrays, tans):
    with fw.dual_level():
        xs = [fw.make_dual(lib.tensor(a), lib.tensor(t)) if t is not None else lib.tensor(a)
              for a, t in zip(arrays, tans)]
        outs = _flat(case.fn(lib, *xs))
        got = [fw.unpack_dual(o).tangent if isinstance(o, lib.Tensor) else None for o in outs]
        return [None if g is None else g.detach().numpy() for g in got]


def test_tangents_match_torch_over_the_conformance_table():
    compared, failures = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in _rows():
            arrays = make_inputs(case, "float32", seed=0)
            rng = np.random.default_rng(1)
            tans = [rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f"
                    else None for a in arrays]
            if not arrays or all(t is None for t in tans):
                continue
            try:
                want = _tangents(torch, tfw, case, arrays, tans)
            except Exception:  # noqa: BLE001  (torch has no forward AD for this op)
                continue
            try:
                got = _tangents(ember, fwAD, case, arrays, tans)
            except UnsupportedError as exc:       # an in-place op that needs the old value,
                # or a complex result (forward mode through complex values is refused)
                assert "in-place" in str(exc) or "complex" in str(exc), f"{case.name}: {exc}"
                continue
            except Exception as exc:  # noqa: BLE001  (collected, reported below)
                failures.append(f"{case.name}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            compared += 1
            for k, (g, w) in enumerate(zip(got, want)):
                g = np.zeros_like(w) if g is None and w is not None else g
                w = np.zeros_like(g) if w is None and g is not None else w
                if g is None:
                    continue
                if g.shape != w.shape or not np.allclose(g, w, rtol=1e-3, atol=1e-4,
                                                         equal_nan=True):
                    failures.append(f"{case.name}: output {k}: ember {g.ravel()[:4]} torch "
                                    f"{w.ravel()[:4]}")
    assert not failures, "\n".join(failures)
    assert compared > 150, compared


def _cnn(lib):
    return [lib.nn.Conv2d(1, 4, 3), lib.nn.Linear(36, 5), lib.nn.BatchNorm2d(4)]


def _cnn_loss(lib, m, x):
    F = lib.nn.functional
    h = F.max_pool2d(F.relu(m[2](m[0](x))), 2)
    return F.cross_entropy(m[1](F.gelu(h.flatten(1))), lib.tensor([1, 3], device=x.device))


def _opencl_available() -> bool:
    try:
        ember.Device("opencl").concrete()
    except ember.EmberError:
        return False
    return True


@pytest.mark.parametrize("device", ["cpu", pytest.param("opencl:0", marks=pytest.mark.slow)])
def test_a_cnn_loss_tangent_matches_torch(device):
    if device != "cpu" and not _opencl_available():
        pytest.skip("no OpenCL device")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 8, 8)).astype(np.float32)
    v = rng.standard_normal((2, 1, 8, 8)).astype(np.float32)
    tm, em = _cnn(torch), _cnn(ember)
    for t, e in zip(tm, em):
        e.load_state_dict({k: ember.tensor(p.detach().numpy())
                           for k, p in t.state_dict().items()})
        e.to(device)
    with fwAD.dual_level():
        out = _cnn_loss(ember, em, fwAD.make_dual(ember.tensor(x, device=device),
                                                  ember.tensor(v, device=device)))
        got = fwAD.unpack_dual(out)
    with tfw.dual_level():
        want = tfw.unpack_dual(_cnn_loss(torch, tm, tfw.make_dual(torch.tensor(x),
                                                                   torch.tensor(v))))
    assert str(got.tangent.device) == device
    np.testing.assert_allclose(got.primal.detach().cpu().numpy(),
                               want.primal.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(got.tangent.detach().cpu().numpy(), want.tangent.detach().numpy(),
                               rtol=1e-4, atol=1e-6)


def test_forward_over_reverse_gives_the_hessian_vector_product():
    rng = np.random.default_rng(2)
    a, v = rng.standard_normal(5), rng.standard_normal(5)
    out = {}
    for lib, fw in ((ember, fwAD), (torch, tfw)):
        with fw.dual_level():
            z = fw.make_dual(lib.tensor(a).requires_grad_(True), lib.tensor(v))
            (g,) = lib.autograd.grad(((z.sin() * z).sum()) ** 2, z, create_graph=True)
            out[lib.__name__] = fw.unpack_dual(g).tangent.detach().numpy()
    np.testing.assert_allclose(out["ember"], out["torch"], rtol=1e-10)


def test_in_place_ops_carry_the_tangent_and_one_that_cannot_says_so():
    a, v = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.0])
    out = {}
    for lib, fw in ((ember, fwAD), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(a), lib.tensor(v))
            y = d * 2
            y += d
            y.mul_(3.0)
            y -= d.exp()
            out[lib.__name__] = fw.unpack_dual(y).tangent.numpy()
    np.testing.assert_allclose(out["ember"], out["torch"])
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.tensor(a), ember.tensor(v))
        y = ember.tensor(a) * 2
        with pytest.raises(UnsupportedError, match="mul_.*out of place"):
            y.mul_(d)
        with pytest.raises(UnsupportedError, match="view"):
            y[1:] = d[1:]


def test_levels_tangents_and_what_carries_none():
    x = ember.tensor([1.0, 2.0])
    with fwAD.dual_level() as level:
        d = fwAD.make_dual(x, ember.tensor([1.0, 0.0]))
        assert fwAD.unpack_dual(x).tangent is None          # the input itself is untouched
        assert fwAD.unpack_dual(d.detach()).tangent is None  # detach drops it, as torch's
        assert fwAD.unpack_dual(d.argmax()).tangent is None  # integer results have none
        primal, tangent = fwAD.unpack_dual(d * d)
        assert fwAD.unpack_dual(primal).tangent is None
        np.testing.assert_allclose(tangent.numpy(), [2.0, 0.0])
        with pytest.raises(UnsupportedError, match="nested"):
            fwAD.enter_dual_level()
        assert isinstance(level, int)
    assert fwAD.unpack_dual(d).tangent is None               # dropped when the level exits
    with pytest.raises(UnsupportedError, match="dual_level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(ShapeError, match="shape"):
            fwAD.make_dual(x, ember.ones(3))
        with pytest.raises(EmberTypeError, match="floating"):
            fwAD.make_dual(ember.tensor([1, 2]), ember.tensor([1, 2]))
        with pytest.raises(EmberTypeError, match="float64"):
            fwAD.make_dual(x, ember.ones(2, dtype=ember.float64))


def test_code_outside_a_dual_level_runs_no_hook():
    before = dispatch._hooks
    with fwAD.dual_level():
        assert len(dispatch._hooks) == len(before) + 1
    assert dispatch._hooks == before


def test_torch_code_runs_unchanged_under_torch_alias(tmp_path):
    import subprocess
    import sys
    prog = tmp_path / "fw.py"
    prog.write_text(
        "import torch\nimport torch.autograd.forward_ad as fwAD\n"
        "x = torch.tensor([0.5, 1.5])\n"
        "with fwAD.dual_level():\n"
        "    y = torch.tanh(fwAD.make_dual(x, torch.ones(2)) ** 2)\n"
        "    p, t = fwAD.unpack_dual(y)\n"
        "print(type(t).__module__, *t.tolist())\n")
    proc = subprocess.run([sys.executable, "-m", "ember.torch_alias", str(prog)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    mod, *vals = proc.stdout.split()
    x = np.array([0.5, 1.5])
    assert mod.startswith("ember")
    np.testing.assert_allclose([float(v) for v in vals], 2 * x / np.cosh(x ** 2) ** 2,
                               rtol=1e-5)


def test_dual_tensors_inside_vmap_and_compile_run_eagerly_and_stay_right():
    from ember import func
    x = ember.tensor([[0.5, 1.0], [2.0, -1.0], [0.0, 3.0]])

    def tangent_of_sin(a):
        return fwAD.unpack_dual(fwAD.make_dual(a, ember.ones_like(a)).sin()).tangent

    with fwAD.dual_level():
        with pytest.warns(func.VmapLoopWarning, match="forward_ad"):
            out = func.vmap(tangent_of_sin)(x)
        compiled = ember.compile(tangent_of_sin)
        twice = [compiled(x).numpy() for _ in range(3)]
    np.testing.assert_allclose(out.numpy(), np.cos(x.numpy()), rtol=1e-6)
    for t in twice:
        np.testing.assert_allclose(t, np.cos(x.numpy()), rtol=1e-6)
