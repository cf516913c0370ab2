"""The conformance suite every backend (ours and third-party) must pass.

Run it for every available device with `pytest --pyargs ember.testing`, or for chosen
devices with `EMBER_TEST_DEVICES=opencl:0 pytest --pyargs ember.testing`.
"""
from __future__ import annotations

import os

import numpy as np

from .cases import CASES, Input, OpCase

__all__ = ["CASES", "Input", "OpCase", "devices_under_test", "make_inputs", "check_forward",
           "check_gradients"]

TOLERANCE = {"float64": (1e-9, 1e-9), "float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2)}


def devices_under_test():
    """[(device string, skip reason or None)]: every available device, and the known device
    types that are not available here with the probe's reason."""
    import ember
    from ember import plugins
    env = os.environ.get("EMBER_TEST_DEVICES")
    if env:
        return [(d.strip(), None) for d in env.split(",") if d.strip()]
    out = [(str(d), None) for d in ember.devices()]
    for kind in ("cuda", "rocm", "opencl"):
        if any(d.startswith(kind) for d, _ in out):
            continue
        backend = plugins.find_backend(kind)
        if backend is None:
            reason = f"no plugin provides '{kind}' ({plugins.INSTALL_HINTS.get(kind, '')})"
        else:
            probe = plugins._probe(backend)
            reason = probe.reason or f"no {kind} device"
        out.append((kind, reason))
    return out


def _dtype_for(kind: str, dtype: str) -> str:
    floating = dtype in ("float16", "bfloat16", "float32", "float64")
    if kind in ("f", "p", "u"):
        return dtype if floating else "float32"
    if kind == "b":
        return "bool"
    if kind in ("i", "n"):
        return dtype if not floating and dtype != "bool" else "int64"
    return "int64"                                  # index kinds


def make_inputs(case: OpCase, dtype: str, seed: int = 0) -> list[np.ndarray]:
    """Host arrays for a case under a dtype, reproducible per case name."""
    import ember
    rng = np.random.default_rng(abs(hash((case.name, seed))) % 2**32)
    arrays = []
    for spec in case.inputs:
        kind, shape = spec.kind, spec.shape
        if spec.values is not None:
            a = np.array(spec.values, dtype=np.float64).reshape(shape)
        elif kind == "f":
            a = rng.standard_normal(shape)
        elif kind == "p":
            a = rng.uniform(0.5, 2.0, shape)
        elif kind == "u":
            a = rng.uniform(-0.9, 0.9, shape)
        elif kind == "i":
            a = rng.integers(-5, 5, shape)
        elif kind == "n":
            a = rng.integers(1, 5, shape)
        elif kind == "b":
            a = rng.random(shape) < 0.5
        elif kind.startswith("ix"):
            a = rng.integers(0, int(kind[2:]), shape)
        else:
            raise ValueError(f"case {case.name}: unknown input kind {kind!r}")
        arrays.append(np.asarray(a).astype(ember.dtypes.get_dtype(_dtype_for(kind, dtype)).np))
    return arrays


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _expected_dtypes(case, dtype, n):
    spec = case.out_dtype
    if spec is None:
        return [dtype] * n
    if spec == "other_float":
        return ["float32" if dtype == "float64" else "float64"] * n
    if isinstance(spec, tuple):
        return [dtype if s == "same" else s for s in spec]
    return [spec] * n


def check_forward(case: OpCase, dtype: str, device: str) -> None:
    """Shape, dtype and values of case.fn on device against the NumPy reference."""
    import ember
    arrays = make_inputs(case, dtype)
    tensors = [ember.tensor(a, device=device) for a in arrays]
    outs = _flat(case.fn(ember, *tensors))
    ref_in = [a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16"
              else a for a in arrays]
    with np.errstate(all="ignore"):
        refs = _flat(case.ref(np, *ref_in))
    assert len(outs) == len(refs), f"{case.name}: {len(outs)} outputs, reference {len(refs)}"
    for k, (out, ref, want) in enumerate(zip(outs, refs, _expected_dtypes(case, dtype,
                                                                         len(outs)))):
        where = f"{case.name}[{k}] on {device} ({dtype})"
        assert isinstance(out, ember.Tensor), f"{where}: got {type(out).__name__}"
        assert str(out.device) == str(ember.device(device).concrete()), \
            f"{where}: result on {out.device}, expected {device}"
        assert out.dtype.name == want, f"{where}: dtype {out.dtype.name}, expected {want}"
        host = out.detach().numpy()
        assert host.dtype == out.dtype.np, \
            f"{where}: the backend returned {host.dtype} data for an {out.dtype.name} tensor"
        ref = np.asarray(ref)
        assert tuple(out.shape) == ref.shape, f"{where}: shape {tuple(out.shape)}, expected " \
                                              f"{ref.shape}"
        if out.dtype.category == 2:
            atol, rtol = TOLERANCE.get(want, (case.atol, case.rtol))
            np.testing.assert_allclose(host.astype(np.float64), ref.astype(np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(host, ref.astype(host.dtype), err_msg=where)


def check_gradients(case: OpCase, device: str) -> None:
    """gradcheck of case.fn on device: float64 where the device has it, else float32."""
    import ember
    from ember.autograd import gradcheck
    dev = ember.device(device).concrete()
    caps = dev.backend.capabilities(dev.index).dtypes
    dtype = "float64" if "float64" in caps else "float32"
    arrays = make_inputs(case, dtype)
    tensors = []
    for spec, a in zip(case.inputs, arrays):
        differentiable = spec.kind in ("f", "p", "u")
        tensors.append(ember.tensor(a, device=device, requires_grad=differentiable))
    kw = {} if dtype == "float64" else dict(eps=1e-3, atol=1e-2, rtol=1e-2)
    gradcheck(lambda *ts: case.fn(ember, *ts), tuple(tensors), **kw)
