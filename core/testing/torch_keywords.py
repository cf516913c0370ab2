"""torch's keyword names as a test: every OpInfo sample called with its arguments BY KEYWORD.

PyTorch programs call ops with torch's parameter names (`F.pad(input=x, pad=(1, 1))`,
`x.pow(exponent=2)`, `x.transpose_(dim0=0, dim1=1)`); the OpInfo harness
(torch_reference) passes a sample's arguments as the sample gives them, mostly
positionally, so a parameter ember names differently goes unseen.  Here each sample
(input, args, kwargs) of an OpInfo whose op ember has is bound to torch's REAL parameter
names: for a builtin from its ATen schemas (`torch._C._jit_get_schemas_for_operator`, the
first overload torch answers with; `self` is `input` in the torch.* function form), for a
Python function from `inspect.signature`.  Each argument torch takes by keyword is passed
by keyword, in the function form, the method form (where torch.Tensor has the method) and
the in-place method form (the OpInfo's inplace_variant).  Where torch answers, ember must
answer the same as torch (torch_reference's comparison); where ember's keyword answer
differs from torch's exactly as its positional answer does, the difference is the OpInfo
harness's business (skips.toml), not a keyword's.

The torch.* creation functions' keywords (dtype=, device=, requires_grad=, layout=,
pin_memory=, memory_format=, generator=, out=) are checked the same way (FACTORY_CALLS).

torch is imported only inside functions: ember never needs it at run time.
"""
from __future__ import annotations

import inspect
import types
import warnings
from dataclasses import dataclass

from . import torch_reference as ref

FORMS = ("function", "method", "inplace")


@dataclass
class FormResult:
    op: str                 # OpInfo full name
    form: str               # function | method | inplace
    tried: int = 0          # samples torch answered by keyword
    failures: list = None   # "#i name(k=...): why"

    @property
    def ok(self) -> bool:
        return not self.failures


# ---------------------------------------------------------------- torch's parameters

def _schema_params(aten_name: str) -> list[list[tuple[str, bool, bool, bool]]]:
    """(name, kwarg_only, has_default, is_list) per argument, one list per overload."""
    import torch
    out = []
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + aten_name):
        params = []
        for a in schema.arguments:
            params.append((a.name, bool(a.kwarg_only), a.has_default_value(),
                           str(a.type).endswith("[]") or "List" in str(a.type)))
        out.append(params)
    return out


def _python_params(fn) -> list[list[tuple[str, bool, bool, bool]]]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    params = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return []        # a *args function: its arguments have no keyword names
        params.append((p.name, p.kind == p.KEYWORD_ONLY, p.default is not p.empty, False))
    return [params]


def torch_params(fn, form: str) -> list[list[tuple[str, bool, bool, bool]]]:
    """Candidate parameter lists (overloads) for torch callable `fn` in `form`; the
    receiver of a method form is the parameter named `self` (dropped from the list)."""
    if isinstance(fn, types.FunctionType):
        found = _python_params(fn)
        if form != "function":
            found = [p[1:] for p in found if p]
        return found
    name = getattr(fn, "__name__", None)
    if not name:
        return []
    found = []
    for params in _schema_params(name):
        names = [p[0] for p in params]
        if form == "function":
            found.append([("input" if p[0] == "self" else p[0],) + p[1:] for p in params])
        elif "self" in names:
            found.append([p for p in params if p[0] != "self"])
    return found


def bind(params, positional: list, kwargs: dict) -> dict | None:
    """The sample's arguments by name, or None where this overload cannot take them."""
    pos = [p for p in params if not p[1]]
    names = {p[0] for p in params}
    positional = list(positional)
    if len(positional) > len(pos):
        if not pos or not pos[-1][3]:
            return None
        # an int[] given spread out (x.permute(1, 0)): packed into its list parameter
        k = len(pos) - 1
        positional = positional[:k] + [tuple(positional[k:])]
    bound = {p[0]: v for p, v in zip(pos, positional)}
    for key, value in kwargs.items():
        if key not in names or key in bound:
            return None
        bound[key] = value
    if any(p[0] not in bound and not p[2] for p in params):
        return None
    return bound


# ---------------------------------------------------------------- forms

def _method_name(op) -> str | None:
    """torch.Tensor's method for an OpInfo's function (None where torch has none)."""
    import torch
    fn = op.op
    name = getattr(fn, "__name__", None)
    if name is None or "." in op.name or name.startswith("_"):
        return None
    return name if callable(getattr(torch.Tensor, name, None)) else None


def forms_of(op):
    """(form, torch callable, torch name, ember callable) for the op's real (not wrapper)
    callables that ember has."""
    import ember
    import torch
    fn = op.op
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, types.FunctionType) and (module.startswith("torch.testing")
                                               or fn.__name__ == "<lambda>"):
        return []
    out = []
    is_method = type(fn).__name__ in ("method_descriptor", "wrapper_descriptor") or (
        getattr(fn, "__qualname__", "").startswith("Tensor.")) or op.name.startswith("__")
    name = getattr(fn, "__name__", op.name)
    if is_method:
        if hasattr(ember.Tensor, name):
            out.append(("method", fn, name, getattr(ember.Tensor, name)))
    else:
        target = ref._attr_chain(ember, op.name)
        if callable(target):
            out.append(("function", fn, name, target))
        meth = _method_name(op)
        if meth and hasattr(ember.Tensor, meth):
            out.append(("method", getattr(torch.Tensor, meth), meth,
                        getattr(ember.Tensor, meth)))
    inplace = op.inplace_variant
    iname = getattr(inplace, "__name__", None)
    if inplace is not None and iname and iname.endswith("_") and \
            getattr(torch.Tensor, iname, None) is inplace and hasattr(ember.Tensor, iname):
        out.append(("inplace", inplace, iname, getattr(ember.Tensor, iname)))
    return out


def _call(form, fn, bound, receiver):
    if form == "function":
        return fn(**bound)
    return fn(receiver, **bound)


def _clone_receiver(x):
    import torch
    return x.clone() if isinstance(x, torch.Tensor) else x


def _torch_answer(form, tfn, bound, receiver) -> tuple:
    """(True, torch's result) or (False, None) where torch raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, _call(form, tfn, bound, _clone_receiver(receiver))
    except Exception:   # noqa: BLE001  the caller decides what a refusal means
        return False, None


def _describe(name, bound) -> str:
    return f"{name}({', '.join(sorted(bound))})"


# torch's argument parser (python_arg_parser.cpp) takes NumPy's names for four parameters
# of every builtin function and method: x.sum(axis=1, keepdims=True), torch.add(x1=a,
# x2=b), torch.sin(a=x).  Python-level torch functions (F.*, torch.functional) do not.
# The parser also takes x, a, x1 for input and x2 for other; ember takes those nowhere yet
# (each public function would need them at its definition: names are bound once), so the
# test asks for the two spellings NumPy-minded code writes (the census: torch.stack(axis=),
# x.sum(axis=..., keepdims=...)).
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",)}


def numpy_spelling(bound: dict, i: int) -> dict | None:
    """The bound arguments with NumPy's names where torch's parser takes them; None where
    no argument has one."""
    if not any(k in NUMPY_NAMES for k in bound):
        return None
    return {(NUMPY_NAMES[k][i % len(NUMPY_NAMES[k])] if k in NUMPY_NAMES else k): v
            for k, v in bound.items()}


def run_form(op, form, tfn, tname, efn, device, samples, rename=None) -> FormResult:
    """Every sample of `op` in one form, by keyword, against torch; rename(bound, i) gives
    other spellings of the keywords to call both with instead (None: that sample is not
    tried)."""
    import torch
    name = ref.full_name(op)
    result = FormResult(name, form if rename is None else form + " (numpy names)", 0, [])
    rtol, atol = ref._tolerance(op)
    random = op.name in ref.NONDETERMINISTIC
    candidates = torch_params(tfn, form)
    for i, s in enumerate(samples):
        positional = [s.input, *s.args]
        if form != "function":
            if not isinstance(s.input, torch.Tensor):
                continue
            receiver, positional = s.input, positional[1:]
        else:
            receiver = None
        t_out = bound = None
        for params in candidates:
            bound = bind(params, positional, dict(s.kwargs))
            if bound is None:
                continue
            answered, t_out = _torch_answer(form, tfn, bound, receiver)
            if answered:
                break
            bound = None        # another overload, or torch refuses
        if bound is None or not bound:
            continue            # torch takes no keyword for this sample in this form
        if rename is not None:
            bound = rename(bound, i)
            if bound is None:
                continue
            answered, t_out = _torch_answer(form, tfn, bound, receiver)
            if not answered:
                continue        # torch does not take these spellings here
        call = _describe(tname, bound)
        conv = ref._Converter(device)
        try:
            e_bound = conv(bound)
            e_recv = conv(receiver)
        except Exception:   # noqa: BLE001  a sample ember cannot hold (a CSR tensor, a
            continue        # torch module): the OpInfo harness reports it
        result.tried += 1
        if form == "inplace":
            e_recv = e_recv.clone()
        e_out = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e_out = _call(form, efn, e_bound, e_recv)
            ref._compare(t_out, e_out, rtol, atol, values=not random)
        except Exception as exc:   # noqa: BLE001  ember raised or differs: the finding
            if _positional_same(form, efn, s, device, exc, e_out, random):
                continue
            why = str(exc) if isinstance(exc, ref.Mismatch) else \
                "raises " + ref._first_line(exc)
            result.failures.append(f"#{i} {call}: {why}")
    return result


def _positional_same(form, efn, sample, device, exc, e_out, random) -> bool:
    """Whether ember called as the sample gives its arguments (positionally) fails the same
    way (raises too, or gives the same answer): then the difference from torch is the OpInfo
    harness's finding (skips.toml), not a keyword's."""
    conv = ref._Converter(device)
    try:
        args = conv([sample.input, *sample.args])
        kwargs = conv(dict(sample.kwargs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if form == "function":
                p_out = efn(*args, **kwargs)
            else:
                recv = args[0].clone() if form == "inplace" else args[0]
                p_out = efn(recv, *args[1:], **kwargs)
    except Exception as p_exc:   # noqa: BLE001
        return type(p_exc) is type(exc) and not isinstance(exc, ref.Mismatch)
    if not isinstance(exc, ref.Mismatch) or e_out is None:
        return False
    try:
        ref._compare(p_out, e_out, 0.0, 0.0, values=not random)
    except ref.Mismatch:
        return False
    return True


def run_op(op, device: str, max_samples: int | None = 4) -> list[FormResult]:
    forms = forms_of(op)
    if not forms:
        return []
    try:
        samples = ref.samples_of(op, grad=False, limit=max_samples)
    except Exception:   # noqa: BLE001  torch's generator failed: the OpInfo harness says so
        return []
    out = [run_form(op, form, tfn, tname, efn, device, samples)
           for form, tfn, tname, efn in forms]
    for form, tfn, tname, efn in forms:
        if not isinstance(tfn, types.FunctionType):      # a builtin: torch's parser
            r = run_form(op, form, tfn, tname, efn, device, samples, numpy_spelling)
            if r.tried:
                out.append(r)
    return out


# ---------------------------------------------------------------- creation functions

def _factory_calls():
    """(label, torch call, ember call, random) for the creation functions' keywords, each
    call taking its namespace (torch or ember) and a like-tensor of that namespace."""
    def k(**kw):
        return kw
    shape = (2, 3)
    base = [
        ("zeros", lambda t, x, **kw: t.zeros(size=shape, **kw), False),
        ("ones", lambda t, x, **kw: t.ones(size=shape, **kw), False),
        ("empty", lambda t, x, **kw: t.empty(size=shape, **kw), True),
        ("full", lambda t, x, **kw: t.full(size=shape, fill_value=2.5, **kw), False),
        ("arange", lambda t, x, **kw: t.arange(start=0, end=6, step=1, **kw), False),
        ("linspace", lambda t, x, **kw: t.linspace(start=0, end=1, steps=5, **kw), False),
        ("logspace", lambda t, x, **kw: t.logspace(start=0, end=1, steps=5, **kw), False),
        ("eye", lambda t, x, **kw: t.eye(n=3, m=2, **kw), False),
        ("rand", lambda t, x, **kw: t.rand(size=shape, **kw), True),
        ("randn", lambda t, x, **kw: t.randn(size=shape, **kw), True),
        ("randint", lambda t, x, **kw: t.randint(low=0, high=5, size=shape, **kw), True),
        ("randperm", lambda t, x, **kw: t.randperm(n=5, **kw), True),
        ("zeros_like", lambda t, x, **kw: t.zeros_like(input=x, **kw), False),
        ("ones_like", lambda t, x, **kw: t.ones_like(input=x, **kw), False),
        ("empty_like", lambda t, x, **kw: t.empty_like(input=x, **kw), True),
        ("full_like", lambda t, x, **kw: t.full_like(input=x, fill_value=2.0, **kw), False),
        ("rand_like", lambda t, x, **kw: t.rand_like(input=x, **kw), True),
        ("randn_like", lambda t, x, **kw: t.randn_like(input=x, **kw), True),
        ("tensor", lambda t, x, **kw: t.tensor(data=[[1.0, 2.0], [3.0, 4.0]], **kw), False),
    ]
    options = [
        ("dtype", lambda t: k(dtype=t.float64)),
        ("device", lambda t: k(device="cpu")),
        ("requires_grad", lambda t: k(requires_grad=True)),
        ("layout", lambda t: k(layout=t.strided)),
        ("pin_memory", lambda t: k(pin_memory=False)),
        ("memory_format", lambda t: k(memory_format=t.contiguous_format)),
        ("generator", lambda t: k(generator=t.Generator().manual_seed(3))),
        ("out", None),
    ]
    return base, options


def run_factories(device: str) -> list[FormResult]:
    """Each creation function with each factory keyword torch takes for it."""
    import ember
    import torch
    base, options = _factory_calls()
    results = []
    for name, call, random in base:
        for opt, make in options:
            result = FormResult(f"{name}:{opt}", "function", 0, [])
            tx = torch.arange(6, dtype=torch.float32).reshape(2, 3)
            ex = ember.arange(6, dtype=ember.float32, device=device).reshape(2, 3)
            try:
                if opt == "out":
                    probe = call(torch, tx, dtype=torch.float32)
                    t_kw = {"out": torch.empty(0, dtype=probe.dtype)}
                else:
                    t_kw = make(torch)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t_out = call(torch, tx, **t_kw)
            except Exception:   # noqa: BLE001  torch does not take this keyword here
                continue
            result.tried = 1
            try:
                if opt == "out":
                    e_kw = {"out": ember.empty(0, dtype=ref._torch_dtype_to_ember(t_out.dtype),
                                               device=device)}
                elif opt == "device":
                    e_kw = {"device": device}
                else:
                    e_kw = make(ember)
                with warnings.catch_warnings(), ember.device(device):
                    warnings.simplefilter("ignore")
                    e_out = call(ember, ex, **e_kw)
                ref._compare(t_out, e_out, ref.DEFAULT_RTOL, ref.DEFAULT_ATOL,
                             values=not random)
                if opt == "out" and e_out is not e_kw["out"]:
                    raise ref.Mismatch("out=: ember's result is not the out tensor")
                if opt == "requires_grad" and not e_out.requires_grad:
                    raise ref.Mismatch("requires_grad=True: ember's result does not")
                if e_out.device != ember.device(device):
                    raise ref.Mismatch(f"device {e_out.device}, expected {device}")
            except ref.Mismatch as exc:
                result.failures.append(f"{name}({opt}=): {exc}")
            except Exception as exc:   # noqa: BLE001
                result.failures.append(f"{name}({opt}=): raises {ref._first_line(exc)}")
            results.append(result)
    return results


def run_all(device: str, max_samples: int | None = 4, ops=None, progress=None
            ) -> list[FormResult]:
    out = []
    for op in ref.op_db():
        if ops is not None and op.name not in ops and ref.full_name(op) not in ops:
            continue
        for r in run_op(op, device, max_samples):
            out.append(r)
            if progress:
                progress(r)
    return out
