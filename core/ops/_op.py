"""Op: one declaration per op (name, signature, dtype and shape rules, gradient) and the registry.

Every name a backend's kernel table may hold is declared here, through `declare`:
- primitives (kinds creation, unary, binary, ternary, reduce, movement, index, linalg, nn):
  every backend implements them (registry OPS);
- declared kernels (kinds composite, gradient, inplace): optional, a backend may register
  one to run faster; without it the core runs the declaration's decomposition (registry
  KERNELS).  A composite is a function of primitives with its own gradient rule; a
  gradient kernel computes one op's VJP in one pass; an in-place kernel writes into its
  first argument.
`ember ops --json` prints every declaration (describe()); that is the spec a backend author
implements against.
"""
from __future__ import annotations

from collections.abc import Callable

from .. import dtypes as D
from .. import plugins
from ..tensor import Tensor

PRIMITIVE_KINDS = ("creation", "unary", "binary", "ternary", "reduce", "movement", "index",
                   "linalg", "nn", "fft")
OPTIONAL_KINDS = ("composite", "gradient", "inplace")

REGISTRY: dict[str, Op] = {}     # every declaration, by kernel name
OPS: dict[str, Op] = {}          # primitives: every backend implements these
KERNELS: dict[str, Op] = {}      # declared kernels a backend may implement (else: decompose)


class Op:
    """A declared op: what a backend's kernel table implements under `name`.

    sig:    the kernel's signature, as text ("x, y", "x, *, axes: tuple[int], keepdims:
            bool"): positional inputs (native arrays, or Python scalars where the doc says
            so), then keyword-only attributes with their types.
    dtype:  rule(inputs, attrs) -> (compute dtype or None, output dtype); inputs whose
            position is in `promote` are cast to the compute dtype before the kernel.
            `rule` names it (same, float, bool, first, fixed, ...).
    shape:  shape(inputs, attrs) -> the output's shape (None: not declared; then the
            output's shape is only checked against the CPU backend's).
    check:  check(inputs, attrs) raises a clear ShapeError/... before the kernel (or None).
    vjp:    vjp(g, out, *inputs, **attrs) -> one gradient (or None, or a thunk) per input,
            written with ember ops so it runs everywhere and differentiates again.  None:
            not differentiable.
    fast:   dtype -> output dtype for the same-dtype, same-shape fast path (binary/unary).
    uses:   positions of the inputs whose values the VJP reads (None: all), or a function of
            the inputs giving them.  Only those are checked against in-place modification;
            the others' shapes suffice.
    decompose: for declared kernels: the same function written with primitives, run when
            the device has no kernel of this name (its graph then records itself).
    serves: for gradient and in-place kernels: the op they serve.
    operator: for binary ops, the Python operator they bind (`add` -> x + y, x += y).
    inplace: whether Tensor gets an in-place method (`x.exp_()`).
    opaque: for declared kernels with a VJP: the decomposition is how the value is computed,
            not what is differentiated; without a kernel it runs with grad mode off and the
            op's own rule is recorded (lgamma's series, atan2's polynomial).
    public: whether ember.<name> and Tensor.<name> are this declaration's function (False
            where a torch.* composite of the same name takes the place: round(decimals=)).
    """

    __slots__ = ("name", "kind", "dtype", "rule", "shape", "check", "vjp", "promote",
                 "save_out", "fast", "doc", "uses", "decompose", "sig", "serves", "operator",
                 "inplace", "public", "opaque")

    def __init__(self, name: str, kind: str, dtype: Callable | None, *, sig: str,
                 doc: str, rule: str = "", shape=None, check=None, vjp=None, promote=None,
                 save_out: bool = False, fast: dict | None = None, uses: tuple | None = None,
                 decompose=None, serves: str | None = None, operator: str | None = None,
                 inplace: bool = False, public: bool = True, opaque: bool = False):
        if kind not in PRIMITIVE_KINDS and kind not in OPTIONAL_KINDS:
            raise ValueError(f"op {name!r}: unknown kind {kind!r}")
        if name in REGISTRY:
            raise ValueError(f"op {name!r} declared twice")
        if not doc:
            raise ValueError(f"op {name!r}: a declaration needs a one-line doc")
        self.name = name
        self.kind = kind
        self.dtype = dtype
        self.rule = rule
        self.shape = shape
        self.check = check
        self.vjp = vjp
        self.promote = promote
        self.save_out = save_out
        self.fast = fast or {}
        self.doc = doc
        self.uses = uses
        self.decompose = decompose
        self.sig = parse_signature(sig)
        self.serves = serves
        self.operator = operator
        self.inplace = inplace
        self.public = public
        if opaque and (decompose is None or vjp is None):
            raise ValueError(f"op {name!r}: opaque needs a decomposition and a VJP")
        self.opaque = opaque
        REGISTRY[name] = self
        (OPS if kind in PRIMITIVE_KINDS else KERNELS)[name] = self

    @property
    def differentiable(self) -> bool:
        return self.vjp is not None

    @property
    def required(self) -> bool:
        """Whether every backend must implement it (primitives) or may (declared kernels)."""
        return self.kind in PRIMITIVE_KINDS

    def __repr__(self) -> str:
        return f"<ember op {self.name} ({self.kind})>"


def parse_signature(sig: str) -> dict:
    """'x, y' / '*xs, axis: int' / 'x, *, axes: tuple[int], keepdims: bool' ->
    {'inputs': [...], 'variadic': bool, 'attrs': {name: type}}.  An input named `b?` may
    be left out; one typed `array|scalar` may be a Python number."""
    inputs, attrs, variadic, keyword = [], {}, False, False
    for part in (p.strip() for p in _split(sig)):
        if not part:
            continue
        if part == "*":
            keyword = True
            continue
        name, _, kind = (s.strip() for s in part.partition(":"))
        if name.startswith("*"):          # *xs: any number of inputs; then keywords only
            variadic = keyword = True
            inputs.append({"name": name[1:], "type": kind or "array", "optional": True})
            continue
        if keyword:
            if not kind:
                raise ValueError(f"signature {sig!r}: attribute {name!r} needs a type")
            attrs[name] = kind
        else:
            optional = name.endswith("?")
            inputs.append({"name": name.rstrip("?"), "type": kind or "array",
                           "optional": optional})
    return {"text": sig, "inputs": inputs, "variadic": variadic, "attrs": attrs}


def _split(sig: str):
    """Split on commas outside brackets (types like tuple[int, int])."""
    depth, start = 0, 0
    for i, ch in enumerate(sig):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            yield sig[start:i]
            start = i + 1
    yield sig[start:]


def declared_names() -> frozenset:
    """Every kernel name a backend's table may hold: primitives and declared kernels."""
    return frozenset(REGISTRY)


plugins.declare_kernel_names(declared_names)    # the host checks backends' tables by it


def describe(op: Op) -> dict:
    """The declaration as data (what `ember ops --json` prints)."""
    return {"name": op.name, "kind": op.kind, "required": op.required, "doc": op.doc,
            "signature": op.sig, "dtype_rule": op.rule, "promote": list(op.promote or ()),
            "shape_rule": op.shape is not None, "differentiable": op.differentiable,
            "serves": op.serves, "operator": op.operator, "inplace_method": op.inplace,
            "public": op.public, "opaque": op.opaque,
            "has_decomposition": op.decompose is not None}


# --- dtype rules ------------------------------------------------------------------------

def _tensors(inputs, positions):
    if positions is None:
        return inputs
    return [inputs[i] for i in positions if i < len(inputs)]


def _promoted(inputs, positions):
    """result_type of the promoted inputs; two tensors of one dtype skip the table."""
    if positions is None and len(inputs) == 2:
        a, b = inputs
        if type(a) is Tensor and type(b) is Tensor and a._dtype is b._dtype:
            return a._dtype
    return D.result_type(*_tensors(inputs, positions))


def rule_same(op):
    """Output = promoted inputs (add, mul, maximum, ...)."""
    def rule(inputs, attrs):
        d = _promoted(inputs, op.promote)
        return d, d
    return rule


def rule_float(op):
    """Promoted inputs, integers and bool computed in the default float (exp, div, ...)."""
    def rule(inputs, attrs):
        d = _promoted(inputs, op.promote)
        if d.category < D.FLOAT:
            d = D.get_default_dtype()
        return d, d
    return rule


def rule_bool(op):
    """Compared in the promoted dtype; the output is bool (eq, lt, isnan, ...)."""
    def rule(inputs, attrs):
        return _promoted(inputs, op.promote), D.bool_
    return rule


def rule_first(op):
    """Output dtype = the first input's (movement, indexing)."""
    def rule(inputs, attrs):
        return None, inputs[0]._dtype
    return rule


def rule_attr(op):
    """Output dtype = the `dtype` attribute (creation, cast)."""
    def rule(inputs, attrs):
        return None, attrs["dtype"]
    return rule


def rule_fixed(dtype):
    def make(op):
        def rule(inputs, attrs):
            return None, dtype
        return rule
    make.__name__ = f"rule_{dtype.name}"
    return make


def fast_table(kind: str) -> dict:
    """The fast-path table (input dtype -> output dtype) that matches each rule."""
    # bfloat16 always takes the full path: some backends compute it in float32
    # complex always takes the full path too: it checks that the op is defined on complex
    if kind == "same":
        return {d: d for d in D.REAL if d is not D.bfloat16}
    if kind == "same_nobool":
        return {d: d for d in D.REAL if d is not D.bool_ and d is not D.bfloat16}
    if kind == "float":
        return {d: d for d in D.FLOATING if d is not D.bfloat16}
    if kind == "bool":
        return {d: D.bool_ for d in D.REAL if d is not D.bfloat16}
    return {}


def declare(name, kind, rule, *, sig: str, doc: str, fast=None, **kw) -> Op:
    """Declare an op; `rule` is a dtype-rule maker (rule_same, rule_float, ...)."""
    op = Op(name, kind, None, sig=sig, doc=doc, rule=rule.__name__.removeprefix("rule_"),
            fast=fast_table(fast) if isinstance(fast, str) else fast, **kw)
    op.dtype = rule(op)
    return op


# --- shape rules ------------------------------------------------------------------------

def shape_broadcast(inputs, attrs) -> tuple:
    """Elementwise ops: the broadcast of the tensor inputs' shapes."""
    from ._util import broadcast_shapes
    # anything holding an array (tensors, or the graph verifier's stand-ins); not scalars
    return broadcast_shapes("shape", *[x._data.shape for x in inputs if hasattr(x, "_data")])


def shape_first(inputs, attrs) -> tuple:
    return inputs[0]._data.shape


def shape_attr(inputs, attrs) -> tuple:
    return tuple(attrs["shape"])
