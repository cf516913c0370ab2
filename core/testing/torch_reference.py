"""PyTorch's own op test database as ember's oracle.

`torch.testing._internal.common_methods_invocations.op_db` (one OpInfo per op and variant,
each with sample inputs, error inputs and per-dtype tolerances) and
`common_modules.module_db` (one ModuleInfo per nn module) ship in the torch wheel; they
need the small `expecttest` package.  This module runs every OpInfo whose op ember has, on
one ember device: the same call on the same samples (float32 where the op takes floats,
integer and bool samples kept), comparing values (torch's float32 tolerance override where
the OpInfo gives one, else assert_close's float32 defaults), shapes and dtypes; the
gradients of every differentiable floating input for a random upstream gradient
(`torch.autograd.grad` against `ember.autograd.grad`); and each error input: where torch
raises, ember must raise an `ember.EmberError` (a silent answer is a failure).  Random
ops compare shape and dtype only.  ModuleInfos of the modules ember has run the same way:
constructor arguments, `state_dict` keys, forward with torch's parameters loaded, and the
gradients of the input and every parameter.

torch is imported only inside this module's functions: ember never needs it at run time.
`python -m ember.testing --torch-reference [--device D]` prints the figures;
tests/reference/ runs it under pytest.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import time
import types
import warnings
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

# ops that take dropout_p positionally (its index in a sample's args): a sample that drops
# out in training is random, as one with dropout_p= is
DROPOUT_ARG = {"nn.functional.multi_head_attention_forward": 9}

# ops whose values are random or uninitialised: shape and dtype are compared, not values
NONDETERMINISTIC = frozenset({
    "bernoulli", "cauchy", "empty", "empty_like", "empty_permuted", "empty_strided",
    "exponential", "geometric", "log_normal", "multinomial", "new_empty",
    "new_empty_strided", "normal", "rand_like", "randint", "randint_like", "randn",
    "randn_like", "uniform", "nn.functional.alpha_dropout", "nn.functional.dropout",
    "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.feature_alpha_dropout", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "nn.functional.rrelu", "svd_lowrank",
    "pca_lowrank",
})
# random ops a sample can make deterministic by passing their random numbers (fractional max
# pooling's _random_samples): such samples compare values, indices and gradients in full
SEEDED_BY = {"nn.functional.fractional_max_pool2d": "_random_samples",
             "nn.functional.fractional_max_pool3d": "_random_samples"}
# ops whose raw outputs are unique only up to signs (singular and eigenvectors): their
# samples' output_process_fn_grad makes them unique (abs of the vectors), and those
# processed outputs are what is compared
SIGN_AMBIGUOUS = frozenset({"svd", "linalg.svd", "linalg.eigh"})
# namespaces an OpInfo name can carry, all of which ember mirrors
_NAMESPACES = ("nn.functional.", "linalg.", "special.", "fft.", "signal.windows.",
               "masked.", "sparse.")
DEFAULT_RTOL, DEFAULT_ATOL = 1.3e-6, 1e-5        # torch.testing.assert_close, float32


class Mismatch(AssertionError):
    """ember's answer differs from torch's."""


class ValueMismatch(Mismatch):
    """ember's values differ from torch's (shapes and dtypes matched)."""


@dataclass
class SampleResult:
    op: str                       # OpInfo name, with ".variant" where it has one
    index: int
    kind: str                     # sample | error | module
    ok: bool
    message: str = ""


@dataclass
class OpResult:
    name: str
    resolved: bool
    samples: list[SampleResult] = field(default_factory=list)
    problem: str = ""             # why the op could not be run at all

    @property
    def full(self) -> bool:
        return self.resolved and not self.problem and all(s.ok for s in self.samples)

    def failures(self) -> str:
        """Why the op is not fully right: its problem, or a line per failing sample ("" when
        nothing failed)."""
        if self.problem:
            return self.problem
        return "\n".join(f"  #{s.index} [{s.kind}] {s.message}" for s in self.samples
                         if not s.ok)


# ---------------------------------------------------------------- loading the database

@functools.cache
def op_db():
    """The OpInfo list (imports torch and its test helpers: ~10 s)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db as db
    _cheap_test_fn_lookup()
    return list(db)


def _cheap_test_fn_lookup() -> None:
    """torch's sample iterators look for the running unittest method (to seed by its name)
    with inspect.stack(), which reads the source lines of every frame: under pytest's deep
    stack ~0.2 s per iterator, two per op (samples, error inputs) — most of the reference
    suite's time.  The same walk over the frames without their source gives the same answer
    (None under pytest, whose tests are no unittest.TestCase)."""
    import sys
    import unittest

    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core as opinfo_core

    if getattr(common_utils.extract_test_fn, "_ember_cheap", False):
        return

    def extract_test_fn():
        frame = sys._getframe(1)
        while frame is not None:
            self_val = frame.f_locals.get("self")
            if isinstance(self_val, unittest.TestCase):
                try:
                    *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                    if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                        return getattr(self_val, test_name).__func__
                except Exception:   # noqa: BLE001  (torch's own walk gives None here too)
                    return None
            frame = frame.f_back
        return None

    extract_test_fn._ember_cheap = True
    common_utils.extract_test_fn = extract_test_fn
    opinfo_core.extract_test_fn = extract_test_fn   # imported by name there
    common_utils.set_rng_seed = _seed_cpu


def _seed_cpu(seed=None) -> None:
    """torch's set_rng_seed for the samples this harness makes (all on the CPU): the CPU
    generator, `random` and NumPy's.  torch.manual_seed also seeds the CUDA, XPU and MTIA
    generators, and while those are uninitialised it queues each call with
    traceback.format_stack() — three stacks formatted per sample, ~10 ms under pytest."""
    import random

    import numpy as np
    import torch
    from torch.testing._internal import common_utils

    seed = common_utils.SEED if seed is None else seed
    torch.default_generator.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


@functools.cache
def module_db():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_modules import module_db as db
    _cheap_test_fn_lookup()
    return list(db)


def full_name(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _attr_chain(root, dotted: str):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _rebind(fn, ember):
    """A copy of a Python function from torch's test helpers whose global `torch` is
    ember: the OpInfo's wrapper lambdas (`lambda x: x.mT`, `lambda t, *a: torch.add(...)`)
    run on ember as written."""
    if not isinstance(fn, types.FunctionType):
        return None
    g = dict(fn.__globals__)
    g["torch"] = ember
    g["F"] = ember.nn.functional
    closure = fn.__closure__
    if closure:
        cells = []
        for c in closure:
            try:
                v = c.cell_contents
            except ValueError:
                v = None
            if isinstance(v, types.FunctionType):
                v = _rebind(v, ember) or v
            cells.append(types.CellType(v))
        closure = tuple(cells)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _method(name: str):
    def call(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    call.method = name
    return call


def resolve(op):
    """ember's callable for an OpInfo, or None where ember lacks the op."""
    import ember
    name = op.name
    fn = op.op
    # torch functions and methods: ember's by the same name
    module = getattr(fn, "__module__", None) or ""
    is_wrapper = isinstance(fn, types.FunctionType) and (
        module.startswith("torch.testing") or fn.__name__ == "<lambda>")
    if not is_wrapper:
        if name.startswith("__") or (isinstance(fn, types.MethodDescriptorType) or
                                     type(fn).__name__ == "method_descriptor"):
            meth = name if name.startswith("__") else getattr(fn, "__name__", name)
            if hasattr(ember.Tensor, meth):
                return _method(meth)
            return None
        target = _attr_chain(ember, name)
        if target is None and name.startswith("torch."):
            return None
        if target is None and "." not in name and hasattr(ember.Tensor, name):
            return _method(name)
        return target if callable(target) else None
    # a wrapper: it exists in ember when the name does (function, method, or the in-place
    # method an OpInfo like "cauchy" or "exponential" wraps: Tensor.cauchy_)
    last = name.split(".")[-1]
    if _attr_chain(ember, name) is None and not hasattr(ember.Tensor, last) and \
            not hasattr(ember.Tensor, last + "_"):
        return None
    return _rebind(fn, ember)


# ---------------------------------------------------------------- conversion

def _torch_dtype_to_ember(dt):
    import ember
    name = str(dt).replace("torch.", "")
    out = getattr(ember, name, None)
    if out is None:
        raise TypeError(f"ember has no dtype {name}")
    return out


class _Converter:
    """torch objects -> ember objects on one device, keeping identity (a tensor given
    twice is one ember tensor)."""

    def __init__(self, device: str, keep_expanded: bool = False):
        self.device = device
        self.keep_expanded = keep_expanded    # an expanded (stride 0) tensor stays expanded
        self.memo: dict[int, object] = {}
        self.pairs: list[tuple[object, object]] = []     # (torch leaf, ember leaf)

    def __call__(self, obj):
        import ember
        import torch
        if isinstance(obj, torch.Tensor):
            key = id(obj)
            if key in self.memo:
                return self.memo[key]
            if self.keep_expanded and any(st == 0 and n > 1 for st, n in
                                          zip(obj.stride(), obj.shape)):
                base = obj.detach()
                for d, (st, n) in enumerate(zip(obj.stride(), obj.shape)):
                    if st == 0 and n > 1:
                        base = base.narrow(d, 0, 1)
                out = self(base.clone()).expand(tuple(obj.shape))
                self.memo[key] = out
                return out
            if obj.layout != torch.strided:
                if obj.layout != torch.sparse_coo:
                    raise ember.errors.NotInEmberError(
                        f"the sample passes a {str(obj.layout)[6:]} tensor: ember has the "
                        f"sparse COO layout only")
                out = self(obj.to_dense()).to_sparse()
                self.memo[key] = out
                return out
            arr = obj.detach().resolve_conj().resolve_neg()
            arr = arr.float().numpy() if arr.dtype == torch.bfloat16 else arr.numpy()
            grad = bool(obj.requires_grad) and (obj.is_floating_point() or obj.is_complex())
            out = ember.tensor(arr, device=self.device, requires_grad=grad)
            self.memo[key] = out
            self.pairs.append((obj, out))
            return out
        if isinstance(obj, torch.dtype):
            return _torch_dtype_to_ember(obj)
        if isinstance(obj, torch.device):
            return ember.device(self.device)
        if isinstance(obj, torch.Size):
            return tuple(obj)
        if isinstance(obj, torch.memory_format):
            return getattr(ember, str(obj).replace("torch.", ""))
        if isinstance(obj, torch.nn.Module):        # a submodule given to a constructor
            return self._module(obj)
        if callable(obj) and (getattr(obj, "__module__", None) or "").startswith("torch"):
            # a torch function given as an argument (activation=F.gelu; a builtin such as
            # F.gelu's module is torch._C._nn): ember's function of the same name, as a
            # program run under ember.torch_alias passes it
            fname = getattr(obj, "__name__", "")
            for ns, ens in ((torch.nn.functional, ember.nn.functional), (torch, ember)):
                if getattr(ns, fname, None) is obj and getattr(ens, fname, None) is not None:
                    return getattr(ens, fname)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and \
                type(obj).__module__.startswith("torch.nn") and \
                hasattr(ember.nn, type(obj).__name__):
            # a torch.nn options record (LinearCrossEntropyOptions): ember's, field by field
            return getattr(ember.nn, type(obj).__name__)(**{
                f.name: self(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
        if isinstance(obj, torch.Generator):
            raise TypeError("the sample passes a torch.Generator")
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*[self(o) for o in obj])
        if isinstance(obj, (list, tuple)):
            return type(obj)(self(o) for o in obj)
        if isinstance(obj, dict):
            return {k: self(v) for k, v in obj.items()}
        if isinstance(obj, str) and obj.startswith("cpu"):
            return self.device
        return obj


    def _module(self, tm):
        """ember's module for a torch module given as an argument (a TransformerEncoderLayer
        handed to TransformerEncoder, a PairwiseDistance as a loss's distance_function): the
        ember class of the same name, built from the constructor arguments recorded while
        torch generated the inputs (else from the torch module's attributes named as the
        ember constructor's parameters, where it has every one), holding torch's parameters
        and buffers."""
        import ember
        ctor = _CONSTRUCTED.get(id(tm))
        ecls = getattr(ember.nn, type(tm).__name__, None)
        if ecls is not None and (ctor is None or ctor[0] is not tm):
            ctor = _from_attributes(tm, ecls)
        if ctor is None or ecls is None:
            raise TypeError(f"the sample passes a torch {type(tm).__name__} module ember "
                            f"cannot rebuild")
        em = ecls(*self(list(ctor[1])), **self(dict(ctor[2])))
        em.load_state_dict({k: ember.tensor(v.detach().numpy(), device=self.device)
                            for k, v in tm.state_dict().items()})
        return em.to(self.device).train(tm.training)


# torch modules constructed while a ModuleInfo's or OpInfo's inputs are generated (a
# TransformerEncoderLayer handed to TransformerEncoder, a PairwiseDistance handed to
# triplet_margin_with_distance_loss): id -> (module, args, kwargs)
_CONSTRUCTED: dict[int, tuple] = {}


def _from_attributes(tm, ecls):
    """(tm, (), kwargs) rebuilding a torch module from its attributes, one per parameter of
    ember's constructor of the same name; None where one is missing (torch stores
    PairwiseDistance's p as `norm`: a guessed default would rebuild another module)."""
    import inspect
    kwargs = {}
    for name, param in inspect.signature(ecls.__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in ("device", "dtype"):
            continue
        if not hasattr(tm, name) or callable(getattr(tm, name)):
            return None
        kwargs[name] = getattr(tm, name)
    return tm, (), kwargs


class _RecordConstructors:
    """While active, every torch.nn.Module constructed records its constructor arguments
    in _CONSTRUCTED (torch.nn.Module.__new__ sees them), so the converter can build ember's
    equivalent of a module passed as an argument.

    The recording __new__ is installed once and stays, recording only while active:
    deleting a __new__ assigned to a class does not give back object's (CPython keeps a
    slot that calls object.__new__ with the constructor's arguments, which it refuses),
    so every torch module built with arguments later in the process failed with
    "object.__new__() takes exactly one argument"."""

    active = 0

    def __enter__(self):
        import torch
        module = torch.nn.Module
        # the mark is on the function: a staticmethod does not show its function's
        # attributes (Python 3.11), and re-installing on every entry chained one
        # recording __new__ per use until the chain passed the recursion limit
        installed = module.__dict__.get("__new__")
        if not getattr(getattr(installed, "__func__", installed), "_ember_records", False):
            inherited = installed
            inherited = inherited.__func__ if isinstance(inherited, staticmethod) else None

            def __new__(cls, *args, **kwargs):
                obj = inherited(cls, *args, **kwargs) if inherited else object.__new__(cls)
                if _RecordConstructors.active:
                    _CONSTRUCTED[id(obj)] = (obj, args, kwargs)
                return obj
            __new__._ember_records = True
            module.__new__ = staticmethod(__new__)
        _RecordConstructors.active += 1
        return self

    def __exit__(self, *exc):
        _RecordConstructors.active -= 1
        return False


def _leaves(obj):
    """Tensors and numbers of a (nested) output, in order."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    elif isinstance(obj, dict):
        for k in sorted(obj):
            yield from _leaves(obj[k])
    else:
        yield obj


def _as_numpy(x):
    import ember
    import numpy as np
    import torch
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:       # a sparse answer: compared as its dense values
            x = x.to_dense()
        if x._is_zerotensor():              # torch's lazy all-zero gradient (sgn's)
            x = torch.zeros(x.shape, dtype=x.dtype)
        x = x.detach().resolve_conj().resolve_neg().cpu()
        name = str(x.dtype)[6:]
        return (x.float() if name == "bfloat16" else x).numpy(), name
    if isinstance(x, ember.Tensor):
        return x.detach().cpu().numpy(), x.dtype.name
    if isinstance(x, ember.sparse.SparseTensor):
        return x.to_dense().detach().cpu().numpy(), x.dtype.name
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return np.asarray(x), None
    return None, None


def _compare(t_out, e_out, rtol, atol, what="output", check_dtype=True, values=True):
    import numpy as np
    import torch
    t_leaves = list(_leaves(t_out))
    e_leaves = list(_leaves(e_out))
    if len(t_leaves) != len(e_leaves):
        raise Mismatch(f"{what}: torch gives {len(t_leaves)} values, ember {len(e_leaves)}")
    for i, (t, e) in enumerate(zip(t_leaves, e_leaves)):
        where = f"{what}[{i}]" if len(t_leaves) > 1 else what
        if t is None or e is None:
            if t is None and e is None:
                continue
            raise Mismatch(f"{where}: torch gives {type(t).__name__}, ember "
                           f"{type(e).__name__}")
        ta, tdt = _as_numpy(t)
        ea, edt = _as_numpy(e)
        if ta is None:
            if t != e:
                raise Mismatch(f"{where}: torch gives {t!r}, ember {e!r}")
            continue
        if ea is None:
            raise Mismatch(f"{where}: torch gives a tensor, ember {type(e).__name__}")
        if isinstance(t, torch.Tensor) and tuple(ta.shape) != tuple(ea.shape):
            raise Mismatch(f"{where}: shape torch {tuple(ta.shape)}, ember {tuple(ea.shape)}")
        if check_dtype and tdt is not None and edt is not None and tdt != edt:
            raise Mismatch(f"{where}: dtype torch {tdt}, ember {edt}")
        if not values:
            continue
        if ta.dtype.kind in "fc" or ea.dtype.kind in "fc":
            ta64 = ta.astype(np.complex128 if ta.dtype.kind == "c" else np.float64)
            ea64 = ea.astype(np.complex128 if ea.dtype.kind == "c" else np.float64)
            try:
                np.testing.assert_allclose(ea64, ta64, rtol=rtol, atol=atol, equal_nan=True,
                                           err_msg="")
            except AssertionError as exc:
                lines = [ln for ln in str(exc).splitlines() if ln.strip()]
                detail = "; ".join(ln.strip() for ln in lines[1:4])
                raise ValueMismatch(f"{where}: values differ ({detail})") from None
        elif not np.array_equal(ta, ea):
            raise ValueMismatch(f"{where}: values differ (exact)")


def _upcast(obj):
    """The sample's float32/complex64 tensors as float64/complex128 (detached)."""
    import torch
    if isinstance(obj, torch.Tensor):
        wide = {torch.float32: torch.float64, torch.complex64: torch.complex128}
        return obj.detach().to(wide.get(obj.dtype, obj.dtype))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_upcast(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _upcast(v) for k, v in obj.items()}
    return obj


def _as_accurate_as_torch(op, sample, t_out, e_out, rtol, atol, mismatch) -> None:
    """Where ember's values differ from torch's by more than the tolerance, the same op
    in double precision decides: ember passes when each of its outputs is at least as
    close to torch's float64/complex128 result as torch's own float32/complex64 output is
    (torch computes a complex convolution with three real ones, and on an AVX-512 CPU
    was twice as far from the exact result as ember in a 27-value sample).  Otherwise, or
    where the op has no double-precision result, the mismatch stands, with both errors."""
    import numpy as np
    import torch
    # the leaves after the first differing one: their shapes and dtypes still must match
    _compare(t_out, e_out, rtol, atol, values=False)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            exact = op(_upcast(sample.input), *_upcast(list(sample.args)),
                       **_upcast(dict(sample.kwargs)))
    except Exception:   # noqa: BLE001  no double-precision result: torch's answer stands
        raise mismatch from None
    t_leaves, e_leaves, x_leaves = (list(_leaves(o)) for o in (t_out, e_out, exact))
    if not len(t_leaves) == len(e_leaves) == len(x_leaves):
        raise mismatch from None
    notes = []
    for t, e, x in zip(t_leaves, e_leaves, x_leaves):
        ta, ea, xa = _as_numpy(t)[0], _as_numpy(e)[0], _as_numpy(x)[0]
        if ta is None or ea is None or xa is None or xa.dtype.kind not in "fc" \
                or ta.shape != ea.shape or ta.shape != xa.shape:
            if ta is not None and ea is not None and not np.array_equal(ta, ea):
                raise mismatch from None
            continue
        wide = np.complex128 if xa.dtype.kind == "c" else np.float64
        xa = xa.astype(wide)
        with np.errstate(invalid="ignore"):
            t_err = np.nan_to_num(np.abs(ta.astype(wide) - xa), nan=0.0).max(initial=0.0)
            e_err = np.abs(ea.astype(wide) - xa)
        if np.isnan(e_err).any() and not np.array_equal(np.isnan(ea), np.isnan(ta)):
            raise mismatch from None
        e_err = np.nan_to_num(e_err, nan=0.0).max(initial=0.0)
        notes.append(f"ember {e_err:.3g}, torch {t_err:.3g}")
        if e_err > t_err:
            raise Mismatch(f"{mismatch} (from torch's double-precision result: "
                           f"{'; '.join(notes)})") from None


def _tolerance(op, dtype=None):
    """torch's float32 (or complex64, float64) tolerance for the op: the OpInfo's
    toleranceOverride where one is given (any test), at least assert_close's defaults for
    that dtype."""
    import torch
    from torch.testing._internal.common_device_type import toleranceOverride
    rtol, atol = {"float64": (1e-7, 1e-7), "float16": (1e-3, 1e-5)}.get(
        dtype, (DEFAULT_RTOL, DEFAULT_ATOL))
    key = {"complex64": torch.complex64, "float64": torch.float64,
           "float16": torch.float16}.get(dtype, torch.float32)
    for deco in getattr(op, "decorators", ()) or ():
        for d in getattr(deco, "decorators", None) or [deco]:
            if isinstance(d, toleranceOverride) and key in d.d:
                t = d.d[key]
                rtol, atol = max(rtol, t.rtol), max(atol, t.atol)
    return rtol, atol


def _dtype_for(op, dtype=None):
    """The dtype of the samples: float32 where the op takes it (else an integer or bool
    one); with dtype="complex64" the op's complex64 samples, None where it has none."""
    import torch
    supported = op.supported_dtypes("cpu")
    if dtype is not None:
        want = getattr(torch, dtype)
        return want if want in supported else None
    for dt in (torch.float32, torch.int64, torch.int32, torch.bool, torch.uint8):
        if dt in supported:
            return dt
    return None


def supports(op, dtype: str) -> bool:
    """Whether the OpInfo has samples of `dtype` (e.g. "complex64") on the CPU."""
    return _dtype_for(op, dtype) is not None


def _seed(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:240] if text else ''}"


def _process(fn, out, ember_side: bool):
    if fn is None:
        return out
    import ember
    if ember_side:
        fn = _rebind(fn, ember) or fn
    return fn(out)


def _grad_inputs(conv: _Converter):
    pairs = [(t, e) for t, e in conv.pairs
             if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    return pairs


def _exact_gradients(op, sample, proc, originals, upstream):
    """torch's gradients of the sample in double precision: the inputs in `originals`
    widened to float64/complex128, the same upstream gradients; None where torch has no
    double-precision result."""
    import torch
    wide = {id(t): _upcast(t).requires_grad_() for t in originals}

    def widen(obj):
        if isinstance(obj, torch.Tensor):
            return wide[id(obj)] if id(obj) in wide else _upcast(obj)
        if isinstance(obj, (list, tuple)):
            return type(obj)([widen(o) for o in obj])
        if isinstance(obj, dict):
            return {k: widen(v) for k, v in obj.items()}
        return obj
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _process(proc, op(widen(sample.input), *widen(list(sample.args)),
                                    **widen(dict(sample.kwargs))), False)
            outs = [t for t in _leaves(out) if isinstance(t, torch.Tensor) and
                    t.requires_grad and (t.is_floating_point() or t.is_complex())]
            if len(outs) != len(upstream):
                return None
            return torch.autograd.grad(outs, [wide[id(t)] for t in originals],
                                       [torch.from_numpy(u).to(t.dtype)
                                        for u, t in zip(upstream, outs)], allow_unused=True)
    except Exception:   # noqa: BLE001  no double-precision gradient: torch's stands
        return None


def _grad_as_accurate_as_torch(tg, eg, exact, mismatch) -> None:
    """_as_accurate_as_torch for one gradient: ember's passes when it is at least as close
    to torch's double-precision gradient as torch's own float32 one is."""
    import numpy as np
    if exact is None:
        raise mismatch from None
    ta, ea, xa = (_as_numpy(x)[0] for x in (tg, eg, exact))
    if ta is None or ea is None or xa is None or not ta.shape == ea.shape == xa.shape:
        raise mismatch from None
    wide = np.complex128 if xa.dtype.kind == "c" else np.float64
    xa = xa.astype(wide)
    if not np.array_equal(np.isnan(ea), np.isnan(ta)):
        raise mismatch from None
    with np.errstate(invalid="ignore"):        # nan where the exact one is: no measure
        t_err = np.nan_to_num(np.abs(ta.astype(wide) - xa), nan=0.0).max(initial=0.0)
        e_err = np.nan_to_num(np.abs(ea.astype(wide) - xa), nan=0.0).max(initial=0.0)
    if not e_err <= t_err:
        raise Mismatch(f"{mismatch} (from torch's double-precision gradient: ember "
                       f"{e_err:.3g}, torch {t_err:.3g})") from None


def _check_gradients(t_out, e_out, conv, rng, rtol, atol, exact=None):
    """torch.autograd.grad vs ember.autograd.grad, the same random upstream gradient.
    exact(originals, upstream): torch's gradients in double precision, the arbiter where
    the two differ by more than the tolerance (as for outputs, _as_accurate_as_torch)."""
    import ember
    import numpy as np
    import torch
    pairs = _grad_inputs(conv)
    if not pairs:
        return
    t_outs, e_outs = [], []
    for t, e in zip(_leaves(t_out), _leaves(e_out)):
        if isinstance(t, torch.Tensor) and t.requires_grad and (t.is_floating_point() or
                                                               t.is_complex()):
            t_outs.append(t)
            e_outs.append(e)
    if not t_outs:
        return
    # a complex output's upstream gradient is complex (both parts random)
    upstream = [np.asarray((rng.standard_normal(tuple(t.shape)) + 1j * rng.standard_normal(
        tuple(t.shape))).astype(np.complex64)) if t.is_complex() else
        np.asarray(rng.standard_normal(tuple(t.shape)).astype(np.float32)) for t in t_outs]
    # each output's upstream gradient in its own dtype (torch rounds a bfloat16 output's)
    t_grads = torch.autograd.grad(t_outs, [p[0] for p in pairs],
                                  [torch.from_numpy(u).to(t.dtype)
                                   for u, t in zip(upstream, t_outs)],
                                  allow_unused=True)
    for e in e_outs:
        if not isinstance(e, ember.Tensor) or not e.requires_grad:
            raise Mismatch("gradient: ember's output is not in the autograd graph "
                           "(torch's is)")
    e_grads = ember.autograd.grad(
        e_outs, [p[1] for p in pairs],
        [ember.tensor(u, device=conv.device).to(e.dtype) for u, e in zip(upstream, e_outs)],
        allow_unused=True)
    wide = []           # torch's double-precision gradients, computed at most once
    for i, (tg, eg, (t, _)) in enumerate(zip(t_grads, e_grads, pairs)):
        if tg is None:
            tg = torch.zeros_like(t)
        if eg is None:
            eg = ember.zeros(tuple(t.shape), device=conv.device)
        try:
            _compare(tg, eg, rtol * 10, atol * 10, what=f"gradient of input {i}",
                     check_dtype=False)
        except ValueMismatch as exc:
            if not wide:
                wide.append(exact([p[0] for p in pairs], upstream) if exact else None)
            x = None
            if wide[0] is not None:         # an unused input's gradient is zero
                x = wide[0][i] if wide[0][i] is not None else torch.zeros_like(_upcast(t))
            _grad_as_accurate_as_torch(tg, eg, x, exc)


def run_sample(op, efn, sample, device, rtol, atol, grad: bool, index: int) -> SampleResult:
    import ember
    import numpy as np
    name = full_name(op)
    rng = np.random.default_rng(_seed(name) + index)
    # a sample with attention dropout (scaled_dot_product_attention's dropout_p) draws
    # from torch's generator: its values are random, as a dropout op's are
    random = (op.name in NONDETERMINISTIC and sample.kwargs.get(
        SEEDED_BY.get(op.name, "")) is None) or bool(sample.kwargs.get("dropout_p")) or (
        op.name in DROPOUT_ARG and bool(sample.args[DROPOUT_ARG[op.name]])
        and sample.kwargs.get("training", True))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_out = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as exc:   # noqa: BLE001  torch itself refuses: not a test of ember
        return SampleResult(name, index, "sample", True, f"torch raised {_first_line(exc)}")
    conv = _Converter(device)
    try:
        e_in = conv(sample.input)
        e_args = conv(list(sample.args))
        e_kwargs = conv(dict(sample.kwargs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e_out = efn(e_in, *e_args, **e_kwargs)
        if op.name in SIGN_AMBIGUOUS and sample.output_process_fn_grad is not None:
            _compare(t_out, e_out, rtol, atol, values=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _compare(_process(sample.output_process_fn_grad, t_out, False),
                         _process(sample.output_process_fn_grad, e_out, True),
                         max(rtol, 1e-4), max(atol, 1e-4), what="processed output")
        else:
            try:
                _compare(t_out, e_out, rtol, atol, values=not random)
            except ValueMismatch as exc:     # never a shape, dtype or structure mismatch
                _as_accurate_as_torch(op, sample, t_out, e_out, rtol, atol, exc)
        if grad and not random and op.supports_autograd:
            proc = sample.output_process_fn_grad
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_p = _process(proc, t_out, False)
                e_p = _process(proc, e_out, True)
                _check_gradients(t_p, e_p, conv, rng, rtol, atol, lambda originals, up:
                                 _exact_gradients(op, sample, proc, originals, up))
    except Mismatch as exc:
        return SampleResult(name, index, "sample", False, str(exc))
    except Exception as exc:   # noqa: BLE001  ember raised: the failure under test
        return SampleResult(name, index, "sample", False, "raises " + _first_line(exc))
    del ember
    return SampleResult(name, index, "sample", True)


def run_error_input(op, efn, err, device, index: int) -> SampleResult:
    import ember
    name = full_name(op)
    sample = err.sample_input
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op(sample.input, *sample.args, **sample.kwargs)
    except Exception:   # noqa: BLE001
        pass
    else:
        return SampleResult(name, index, "error", True, "torch did not raise")
    import torch
    if getattr(efn, "method", None) and not isinstance(sample.input, torch.Tensor):
        # torch's unbound method refuses a non-tensor self (Python's descriptor check);
        # ember's methods are called bound, so there is nothing of ember's to check
        return SampleResult(name, index, "error", True, "method on a non-tensor")
    shared = _shared_memory(sample) or _meta(sample)
    if shared:
        # torch raises because two of the arguments are views of one memory (out= overlapping
        # an input): the converted ember arguments are separate tensors, so the case cannot
        # be put to ember; counted apart (summary's "not expressible"), not as right or wrong
        return SampleResult(name, index, "error", True, f"n/a: {shared}")
    conv = _Converter(device, keep_expanded=True)
    try:
        args = (conv(sample.input), conv(list(sample.args)), conv(dict(sample.kwargs)))
    except Exception as exc:   # noqa: BLE001
        if isinstance(exc, ember.EmberError):
            # ember refuses one of the arguments itself (a complex tensor, ...): the call
            # torch refuses cannot be made in ember either
            return SampleResult(name, index, "error", True,
                                f"ember refuses an argument: {_first_line(exc)}")
        big = max((t.ndim for t in _torch_tensors(sample)), default=0)
        if big <= 64:
            # an argument ember cannot take (a torch.Generator, ...): torch refuses the
            # call; ember is never called, so this counts as a failure to look at
            return SampleResult(name, index, "error", False,
                                f"error input not converted to ember: {_first_line(exc)}")
        try:                    # NumPy holds at most 64 dims: ember must refuse such a tensor
            ember.zeros((1,) * big, device=device)
        except ember.EmberError:
            return SampleResult(name, index, "error", True,
                                f"ember refuses a {big}-dim tensor as torch refuses the op")
        return SampleResult(name, index, "error", False,
                            f"error input of {big} dims could not be converted ({exc})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = efn(args[0], *args[1], **args[2])
            for leaf in _leaves(out):       # a lazy device answer must surface its error
                if isinstance(leaf, ember.Tensor):
                    leaf.cpu()
    except ember.EmberError:
        return SampleResult(name, index, "error", True)
    except Exception as exc:   # noqa: BLE001
        return SampleResult(name, index, "error", False,
                            f"error input raises {_first_line(exc)} (not an ember error; "
                            f"torch raises {err.error_type.__name__})")
    return SampleResult(name, index, "error", False,
                        f"error input answered silently (torch raises "
                        f"{err.error_type.__name__}: {err.error_regex[:80]})")


def _torch_tensors(sample):
    import torch
    found = []

    def walk(o):
        if isinstance(o, torch.Tensor):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            for x in o:
                walk(x)
        elif isinstance(o, dict):
            for x in o.values():
                walk(x)
    walk([sample.input, list(sample.args), dict(sample.kwargs)])
    return found


def _shared_memory(sample) -> str:
    """Where two distinct tensors of a sample share memory (one a view of the other): a
    description, else ''."""
    seen = {}
    for t in _torch_tensors(sample):
        try:
            storage = t.untyped_storage()
        except Exception:   # noqa: BLE001  (no storage: nothing shared)
            continue
        if storage.nbytes() == 0:
            continue
        key = storage.data_ptr()
        other = seen.get(key)
        if other is not None and other is not t:
            return (f"the error comes from memory shared between arguments of shapes "
                    f"{tuple(other.shape)} and {tuple(t.shape)} (views of one tensor), which "
                    f"the conversion to ember does not keep")
        seen.setdefault(key, t)
    return ""


def _meta(sample) -> str:
    """Where a sample passes a tensor on torch's meta device (shapes without values, used to
    provoke a device-mismatch error): a description, else ''."""
    for t in _torch_tensors(sample):
        if t.device.type == "meta":
            return (f"the sample passes a tensor of shape {tuple(t.shape)} on torch's meta "
                    f"device (no values), which ember has no counterpart of")
    return ""


def samples_of(op, grad: bool, reference: bool = False, dtype: str | None = None,
               limit: int | None = None):
    """The OpInfo's sample inputs (its reference inputs with `reference`), generated with
    a stable seed; `dtype` ("complex64") picks those of that dtype instead of float32;
    `limit`: only the first that many, generated lazily (the same ones: torch's generators
    are sequential, and each sample reseeds; generating all of a pooling op's ~1,400 samples
    to keep one took ~2 s a test, most of it torch.manual_seed queueing a traceback per
    sample for the uninitialised CUDA/XPU/MTIA generators)."""
    import itertools

    dtype = _dtype_for(op, dtype)
    if dtype is None:
        return []
    _seed_cpu(_seed(full_name(op)))
    _CONSTRUCTED.clear()
    req = grad and op.supports_autograd and (dtype.is_floating_point or dtype.is_complex) \
        and (not dtype.is_complex or dtype in op.supported_backward_dtypes("cpu"))
    with warnings.catch_warnings(), _RecordConstructors():
        warnings.simplefilter("ignore")
        if reference and op.reference_inputs_func is not None:
            found = op.reference_inputs("cpu", dtype, requires_grad=req)
        else:
            found = op.sample_inputs("cpu", dtype, requires_grad=req)
        return list(itertools.islice(found, limit))


def run_op(op, device: str, max_samples: int | None = None, grad: bool = True,
           errors: bool = True, reference: bool = False, dtype: str | None = None) -> OpResult:
    """Every sample (the first max_samples) and error input of one OpInfo on device;
    `dtype` ("complex64"): the OpInfo's samples of that dtype (error inputs are left to the
    default run, which has them)."""
    name = full_name(op)
    efn = resolve(op)
    result = OpResult(name, efn is not None)
    if efn is None:
        return result
    rtol, atol = _tolerance(op, dtype)
    if dtype is not None:
        errors = False
    try:
        samples = samples_of(op, grad, reference, dtype, limit=max_samples)
    except Exception as exc:   # noqa: BLE001
        result.problem = f"torch's sample generator failed: {_first_line(exc)}"
        return result
    if max_samples is not None:
        samples = samples[:max_samples]
    for i, s in enumerate(samples):
        result.samples.append(run_sample(op, efn, s, device, rtol, atol, grad, i))
    if errors and op.error_inputs_func is not None:
        try:
            _seed_cpu(_seed(name))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                errs = list(itertools.islice(op.error_inputs("cpu"), max_samples))
        except Exception:   # noqa: BLE001  (torch's own generator needs another device)
            errs = []
        for i, e in enumerate(errs):
            result.samples.append(run_error_input(op, efn, e, device, i))
    return result


# ---------------------------------------------------------------- modules

def resolve_module(info):
    import ember
    return getattr(ember.nn, info.module_cls.__name__, None)


def run_module(info, device: str, max_inputs: int | None = None) -> OpResult:
    """Every module input of one ModuleInfo: constructor, state_dict keys, forward with
    torch's parameters, gradients of input and parameters."""
    import ember
    import numpy as np
    import torch
    name = "nn." + info.module_cls.__name__
    ecls = resolve_module(info)
    result = OpResult(name, ecls is not None)
    if ecls is None:
        return result
    _seed_cpu(_seed(name))
    _CONSTRUCTED.clear()
    try:
        with warnings.catch_warnings(), _RecordConstructors():
            warnings.simplefilter("ignore")
            inputs = list(info.module_inputs_func(info, device="cpu", dtype=torch.float32,
                                                  requires_grad=True, training=True))
    except Exception as exc:   # noqa: BLE001
        result.problem = f"torch's module input generator failed: {_first_line(exc)}"
        return result
    if max_inputs is not None:
        inputs = inputs[:max_inputs]
    for i, mi in enumerate(inputs):
        rng = np.random.default_rng(_seed(name) + i)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tm = info.module_cls(*mi.constructor_input.args, **mi.constructor_input.kwargs)
                # in the samples' dtype, as torch's module tests (m.to(dtype)): a float64
                # buffer handed to the constructor (FractionalMaxPool's _random_samples)
                # follows the module, where left as it is torch itself refuses the input
                tm.to(torch.float32)
                tm.train()
                t_out = tm(*mi.forward_input.args, **mi.forward_input.kwargs)
        except Exception as exc:   # noqa: BLE001
            result.samples.append(SampleResult(name, i, "module", True,
                                               f"torch raised {_first_line(exc)}"))
            continue
        conv = _Converter(device)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                em = ecls(*conv(list(mi.constructor_input.args)),
                          **conv(dict(mi.constructor_input.kwargs)))
                em.to(device, ember.float32)         # as tm, in the samples' dtype
                em.train()
                tkeys, ekeys = set(tm.state_dict()), set(em.state_dict())
                if tkeys != ekeys:
                    raise Mismatch(f"state_dict keys: torch only {sorted(tkeys - ekeys)}, "
                                   f"ember only {sorted(ekeys - tkeys)}")
                state = {k: ember.tensor(v.detach().numpy(), device=device)
                         for k, v in tm.state_dict().items()}
                em.load_state_dict(state)
                e_out = em(*conv(list(mi.forward_input.args)),
                           **conv(dict(mi.forward_input.kwargs)))
            random = any(w in name.lower() for w in ("dropout", "rrelu"))
            _compare(t_out, e_out, 1e-4, 1e-4, values=not random)
            if not random:
                # parameters join the inputs whose gradient is compared
                for (k, tp), (k2, ep) in zip(tm.named_parameters(), em.named_parameters()):
                    if k != k2:
                        raise Mismatch(f"parameter order: torch {k}, ember {k2}")
                    conv.pairs.append((tp, ep))
                _check_gradients(t_out, e_out, conv, rng, 1e-4, 1e-4)
        except Mismatch as exc:
            result.samples.append(SampleResult(name, i, "module", False,
                                               f"{mi.desc or ''}: {exc}"))
            continue
        except Exception as exc:   # noqa: BLE001
            result.samples.append(SampleResult(name, i, "module", False,
                                               f"{mi.desc or ''}: raises {_first_line(exc)}"))
            continue
        result.samples.append(SampleResult(name, i, "module", True))
    return result


# ---------------------------------------------------------------- the report

def run_all(device: str, max_samples: int | None = None, ops=None, modules: bool = True,
            reference: bool = False, progress=None, dtype: str | None = None
            ) -> tuple[list[OpResult], list[OpResult]]:
    op_results = []
    for op in op_db():
        if ops is not None and op.name not in ops and full_name(op) not in ops:
            continue
        if dtype is not None and not supports(op, dtype):
            continue
        op_results.append(run_op(op, device, max_samples, reference=reference, dtype=dtype))
        if progress:
            progress(op_results[-1])
    mod_results = []
    if modules and dtype is None:
        for info in module_db():
            if ops is not None and "nn." + info.module_cls.__name__ not in ops:
                continue
            mod_results.append(run_module(info, device, max_samples))
    return op_results, mod_results


_GROUP = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")


def summary(device: str, op_results: list[OpResult], mod_results: list[OpResult],
            seconds: float) -> str:
    names = sorted({r.name.split(".")[0] if not any(r.name.startswith(n) for n in
                                                   _NAMESPACES) else r.name
                    for r in op_results})
    by_name: dict[str, list[OpResult]] = defaultdict(list)
    for r in op_results:
        by_name[_base(r.name, op_results)].append(r)
    have = [n for n, rs in by_name.items() if any(r.resolved for r in rs)]
    full = [n for n, rs in by_name.items() if all(r.full for r in rs if r.resolved)
            and any(r.resolved for r in rs)]
    samples = [s for r in op_results for s in r.samples if s.kind == "sample"]
    errs = [s for r in op_results for s in r.samples if s.kind == "error"]
    mods = [s for r in mod_results for s in r.samples]
    n_s, ok_s = len(samples), sum(s.ok for s in samples)
    lines = [
        f"== {device}: PyTorch OpInfo reference ({seconds:.0f} s)",
        f"  names in op_db:        {len(by_name)} ({len(op_results)} OpInfos)",
        f"  names ember has:       {len(have)}",
        f"  names fully right:     {len(full)} ({100 * len(full) / max(len(by_name), 1):.1f}% "
        f"of op_db, {100 * len(full) / max(len(have), 1):.1f}% of ember's)",
        f"  samples right:         {ok_s}/{n_s} ({100 * ok_s / max(n_s, 1):.1f}%)",
        f"  error inputs right:    {sum(s.ok for s in errs)}/{len(errs)} (of which "
        f"{sum(s.message.startswith('n/a:') for s in errs)} not expressible: arguments "
        f"sharing memory or on torch's meta device)",
        f"  modules ember has:     {sum(r.resolved for r in mod_results)}/{len(mod_results)}"
        f", fully right {sum(r.full for r in mod_results)}; module inputs right "
        f"{sum(s.ok for s in mods)}/{len(mods)}",
    ]
    del names
    problems = [r for r in op_results + mod_results if r.problem]
    groups: dict[str, list[str]] = defaultdict(list)
    for r in op_results + mod_results:
        for s in r.samples:
            if not s.ok:
                groups[_group_key(s.message)].append(f"{r.name}#{s.index}")
    if groups:
        lines.append("  failures, grouped (largest first):")
        for key, where in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            ops = Counter(w.split("#")[0] for w in where)
            shown = ", ".join(f"{o}({n})" if n > 1 else o for o, n in ops.most_common(8))
            more = f" +{len(ops) - 8} ops" if len(ops) > 8 else ""
            lines.append(f"    {len(where):4d}  {key}\n          {shown}{more}")
    for r in problems:
        lines.append(f"  not run: {r.name}: {r.problem}")
    return "\n".join(lines)


def _base(name: str, _results=None) -> str:
    """The op_db name of an OpInfo's full name (without its variant)."""
    for ns in _NAMESPACES:
        if name.startswith(ns):
            rest = name[len(ns):]
            return ns + rest.split(".")[0]
    if name.startswith("torch."):
        return name
    return name.split(".")[0] if not name.startswith("_") or "." in name[1:] else name


def _group_key(message: str) -> str:
    key = message.split(" (")[0] if "values differ" in message else message
    key = _GROUP.sub("N", key)
    return key[:160]


def main(devices: list[str] | None, max_samples: int | None, ops=None,
         reference: bool = False, verbose: bool = False, dtype: str | None = None) -> int:
    import ember  # noqa: F401

    from .suite import targets
    found = [t for t in targets(devices) if not t.problem]
    start = time.perf_counter()
    op_db()
    module_db()
    print(f"(torch's test database loaded in {time.perf_counter() - start:.0f} s)")
    for t in found:
        start = time.perf_counter()
        results, mods = run_all(t.device, max_samples, ops, reference=reference, dtype=dtype)
        print(summary(t.device + (f" ({dtype} samples)" if dtype else ""), results, mods,
                      time.perf_counter() - start))
        if verbose:
            for r in results + mods:
                for s in r.samples:
                    if not s.ok:
                        print(f"    {r.name}#{s.index} [{s.kind}]: {s.message}")
    return 0


__all__ = ["NONDETERMINISTIC", "Mismatch", "OpResult", "SampleResult", "op_db", "module_db",
           "resolve", "resolve_module", "run_op", "run_module", "run_all", "summary",
           "samples_of", "full_name", "main", "supports"]

