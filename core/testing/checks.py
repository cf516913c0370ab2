"""The checks behind every conformance row: inputs, layouts, forward values, gradients.

Inputs are seeded from the case name with zlib.crc32 (stable across processes, unlike
hash()), so a failure reproduces from its name alone.
"""
from __future__ import annotations

import contextlib
import warnings

import numpy as np

from ._seeds import seed_of
from .cases import COMPLEX_SPECIAL, SPECIAL, OpCase

TOLERANCE = {"float64": (1e-9, 1e-9), "float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2),
             "complex128": (1e-9, 1e-9)}
# How the inputs of a case are stored: each layout is a real view on the device (a backend
# that copies instead must still give the same values, and writes through such views are
# checked by the view rules).
LAYOUTS = ("strided", "transposed", "reversed", "offset", "expanded")


# The gradient checks run op by op: they check the derivative formulas, and on a backend
# that defers elementwise ops and fuses them (OpenCL: `backend.runtime(index).fusion`, set
# from EMBER_OPENCL_FUSION when the device starts) each distinct gradient tree met twice
# would become a fused program of its own (a build of ~0.1-1 s, for one check).  Fused
# kernels are checked by the forward rows, the random programs and the backend's own tests.
@contextlib.contextmanager
def op_by_op(device: str):
    """Deferred (fused) execution off on device's backend while the block runs, if it has
    such a switch; restored afterwards.  Arrays already deferred still run when needed."""
    import ember
    dev = ember.device(device).concrete()
    get = getattr(dev.backend, "runtime", None)
    runtime = get(dev.index) if callable(get) else None
    if not getattr(runtime, "fusion", False):
        yield
        return
    runtime.fusion = False
    try:
        yield
    finally:
        runtime.fusion = True


class Unsupported(Exception):
    """The device cannot run this check (a dtype it lacks): a skip, not a failure."""


def lacks_dtype(exc: BaseException) -> bool:
    """Whether exc is ember's capability refusal (a dtype the device does not support),
    which makes a check a skip: its other dtypes are checked by other rows and rules."""
    import ember
    return isinstance(exc, ember.DtypeNotSupportedError) and "does not support" in str(exc)


def supported_dtypes(device: str) -> frozenset:
    import ember
    dev = ember.device(device).concrete()
    return dev.backend.capabilities(dev.index).dtypes


def _dtype_for(kind: str, dtype: str) -> str:
    if kind in ("c", "cs"):                # complex kinds: the complex dtype under test
        return dtype if dtype.startswith("complex") else (
            "complex128" if dtype == "float64" else "complex64")
    floating = dtype in ("float16", "bfloat16", "float32", "float64")
    if kind == "f" and not floating:       # rows that also run on integers and bool
        return dtype
    if kind in ("f", "p", "u", "s"):
        return dtype if floating else "float32"
    if kind == "b":
        return "bool"
    if kind in ("i", "n", "z", "e"):
        return "int64" if floating else dtype
    return "int64"                                  # index kinds


def make_inputs(case: OpCase, dtype: str, seed: int = 0) -> list[np.ndarray]:
    """Host arrays for a case under a dtype, reproducible from the case name."""
    import ember
    rng = np.random.default_rng(seed_of(case.name, dtype, seed))
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
        elif kind == "z":
            a = rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)
        elif kind == "e":
            a = rng.integers(0, 4, shape)
        elif kind == "s":
            a = np.resize(np.array(SPECIAL), shape)
        elif kind == "c":
            a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        elif kind == "cs":                 # nan, inf, signed zeros, ... in either part
            a = np.resize(np.array(COMPLEX_SPECIAL), shape)
        elif kind == "b":
            a = rng.random(shape) < 0.5
        elif kind.startswith("ix"):
            a = rng.integers(0, int(kind[2:]), shape)
        else:
            raise ValueError(f"case {case.name}: unknown input kind {kind!r}")
        target = ember.dtypes.get_dtype(_dtype_for(kind, dtype)).np
        if kind == "f" and spec.values is None and target.kind in "iu":
            a = np.round(a * 3)
        elif kind == "f" and spec.values is None and target.kind == "b":
            a = a > 0
        if target.kind == "u":
            a = np.abs(a)
        arrays.append(np.asarray(a).astype(target))
    return arrays


def place(a: np.ndarray, layout: str, device: str):
    """A tensor holding `a` on device, stored as `layout` (a view of a bigger buffer)."""
    import ember
    if layout == "contiguous" or a.ndim == 0 or a.size == 0:
        return ember.tensor(a, device=device)
    if layout == "strided":            # every other element of a wider buffer, offset 1
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1] + 1,), a.dtype)
        wide[..., 1::2] = a
        return ember.tensor(wide, device=device)[..., 1::2]
    if layout == "transposed":
        if a.ndim < 2:
            return place(a, "reversed", device)
        return ember.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)),
                            device=device).transpose(-1, -2)
    if layout == "reversed":           # negative steps in every dim
        flip = (slice(None, None, -1),) * a.ndim
        return ember.tensor(np.ascontiguousarray(a[flip]), device=device)[flip]
    if layout == "offset":             # starts one row into its buffer
        wide = np.concatenate([np.zeros((1,) + a.shape[1:], a.dtype), a])
        return ember.tensor(wide, device=device)[1:]
    if layout == "expanded":           # stride 0 along the first dim longer than 1
        return ember.tensor(_first_row(a), device=device).expand(*a.shape)
    raise ValueError(f"unknown layout {layout!r}")


def _first_row(a: np.ndarray) -> np.ndarray:
    dims = [d for d, n in enumerate(a.shape) if n > 1]
    if not dims:
        return a
    return np.take(a, [0], axis=dims[0])


def layout_values(a: np.ndarray, layout: str) -> np.ndarray:
    """The values a tensor placed in `layout` holds (expanded layouts repeat one row)."""
    if layout == "expanded" and a.ndim and a.size:
        return np.broadcast_to(_first_row(a), a.shape).copy()
    return a


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _expected_dtypes(case, dtype, n):
    spec = case.out_dtype
    if spec is None:
        return [dtype] * n
    if spec == "other_float":
        return ["float32" if dtype == "float64" else "float64"] * n
    part = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    if isinstance(spec, tuple):
        return [dtype if s == "same" else part if s == "complex_part" else s for s in spec]
    if spec == "complex_part":            # the real dtype of a complex one's parts
        return [part] * n
    return [spec] * n


def _reference(case, arrays):
    # in float64, unless the row's values only make sense in its own dtype (special values:
    # what overflows in float32 must overflow in the reference too)
    wide = case.ref_float64
    ref_in = [a.astype(np.float64) if wide and (a.dtype.kind == "f" or
                                               a.dtype.name == "bfloat16") else
              a.astype(np.complex128) if wide and a.dtype.kind == "c" else a
              for a in arrays]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # "mean of empty slice"
        return _flat(case.ref(np, *ref_in))


def compare(out, ref, want: str, device: str, where: str, atol: float, rtol: float) -> None:
    """One result against its reference: type, device, dtype, shape, then values."""
    import ember
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
        atol, rtol = TOLERANCE.get(want, (atol, rtol))
        np.testing.assert_allclose(host.astype(np.float64), ref.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    elif out.dtype.category == 3:          # complex: each part, nan where the reference's is
        atol, rtol = TOLERANCE.get(want, (atol, rtol))
        ref = ref.astype(np.complex128)
        host = host.astype(np.complex128)
        for part in ("real", "imag"):
            np.testing.assert_allclose(getattr(host, part), getattr(ref, part), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=f"{where} ({part})")
    else:
        np.testing.assert_array_equal(host, ref.astype(host.dtype), err_msg=where)


def _run_case(case: OpCase, arrays, dtype: str, device: str, layout: str) -> None:
    import ember
    arrays = [layout_values(a, layout) for a in arrays]
    tensors = [place(a, layout, device) for a in arrays]
    before = [t.numpy().copy() for t in tensors]
    outs = _flat(case.fn(ember, *tensors))
    refs = _reference(case, arrays)
    assert len(outs) == len(refs), f"{case.name}: {len(outs)} outputs, reference {len(refs)}"
    wants = _expected_dtypes(case, dtype, len(outs))
    for k, (out, ref, want) in enumerate(zip(outs, refs, wants)):
        where = f"{case.name}[{k}] on {device} ({dtype}, {layout} inputs)"
        compare(out, ref, want, device, where, case.atol, case.rtol)
    for k, (t, b) in enumerate(zip(tensors, before)):
        np.testing.assert_array_equal(
            _comparable(t.numpy()), _comparable(b),
            err_msg=f"{case.name} on {device}: the op wrote into input {k} ({layout})")


def _comparable(a: np.ndarray) -> np.ndarray:
    """NumPy's equality tests see NaN == NaN only for its own float types."""
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def check_forward(case: OpCase, dtype: str, device: str) -> None:
    """Shape, dtype and values of case.fn on device against the NumPy reference."""
    _run_case(case, make_inputs(case, dtype), dtype, device, "contiguous")


def check_layouts(case: OpCase, dtype: str, device: str) -> None:
    """The same case with its inputs as strided, transposed, negative-step, offset and
    expanded views."""
    arrays = make_inputs(case, dtype)
    for layout in LAYOUTS:
        _run_case(case, arrays, dtype, device, layout)


def check_gradients(case: OpCase, device: str, second: bool | None = None) -> None:
    """First derivatives (and second, where the row has them) on device; see
    _check_gradients.  Run op by op (op_by_op): the check is about the derivatives."""
    with op_by_op(device):
        _check_gradients(case, device, second)


def _check_gradients(case: OpCase, device: str, second: bool | None) -> None:
    """First derivatives (and second, where the row has them) on device, by random
    projections (gradients.py; full Jacobians by ember.autograd.gradcheck for rows whose
    inputs sit on a kink, like ties of max), in float64; a device without float64 computes
    in float32 against central differences in float64 on the CPU backend."""
    import ember
    from ember.autograd import gradcheck

    from .gradients import projected
    wide = "float64" in supported_dtypes(device)
    arrays = make_inputs(case, "float64", seed=1)
    if not wide:                       # the values the device holds, exactly
        arrays = [a.astype(np.float32).astype(np.float64) if a.dtype.kind == "f" else a
                  for a in arrays]

    def tensors(where, narrow):
        return [ember.tensor(a.astype(np.float32) if narrow and a.dtype.kind == "f" else a,
                             device=where, requires_grad=spec.kind in ("f", "p", "u"))
                for spec, a in zip(case.inputs, arrays)]

    def fn(*ts):
        # integer outputs (argmax indices, ...) have no gradient: the checks skip them
        return tuple(o for o in _flat(case.fn(ember, *ts)) if o.dtype.is_floating_point)
    on_device = tensors(device, not wide)
    reference = None if wide else tensors("cpu", False)
    tol = dict(eps=1e-6, atol=1e-5, rtol=1e-3) if wide else dict(eps=1e-6, atol=1e-3,
                                                                  rtol=1e-2)
    what = f"{case.name} on {device} ({'float64' if wide else 'float32'})"
    # A wrong derivative passes a random projection with probability zero; the CPU, where
    # the rules are checked, takes two directions, another device (the same rules over its
    # own kernels) one: each probe is ~100 kernel launches of order 1 and 2 on OpenCL.
    probes = 2 if ember.device(device).type == "cpu" else 1
    if case.full_jacobian:
        gradcheck(fn, tuple(on_device), **(tol if wide else dict(eps=1e-3, **{
            k: v for k, v in tol.items() if k != "eps"})))
    else:
        projected(fn, on_device, what=what, order=1, reference=reference, probes=probes,
                  **tol)
    if case.gradgrad if second is None else second:
        projected(fn, on_device, what=what, order=2, reference=reference, probes=probes,
                  **tol)


def run_case(case: OpCase, device: str) -> None:
    """Everything the suite checks for one row on one device."""
    have = supported_dtypes(device)
    dtypes = [d for d in case.dtypes if d in have]
    if not dtypes:
        raise Unsupported(f"{device} supports none of {case.dtypes}")
    missing = [d for d in case.needs if d not in have]
    if missing:
        raise Unsupported(f"{device} has no {', '.join(missing)}")
    for dtype in dtypes:
        check_forward(case, dtype, device)
    if case.layouts:
        check_layouts(case, "float32" if "float32" in dtypes else dtypes[0], device)
    if case.grad:
        check_gradients(case, device)
