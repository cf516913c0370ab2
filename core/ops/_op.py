"""Op: one declaration per op (name, dtype rule, shape check, gradient rule) and the registry."""
from __future__ import annotations

from collections.abc import Callable

from .. import dtypes as D
from ..tensor import Tensor

OPS: dict[str, Op] = {}          # primitives: every backend implements these
COMPOSITES: dict[str, Op] = {}   # composites a backend may run faster (else: decompose)


class Op:
    """A primitive op: what every backend's kernel table implements under `name`.

    dtype:  rule(inputs, attrs) -> (compute dtype or None, output dtype); inputs whose
            position is in `promote` are cast to the compute dtype before the kernel.
    check:  check(inputs, attrs) raises a clear ShapeError/... before the kernel (or None).
    vjp:    vjp(g, out, *inputs, **attrs) -> one gradient (or None) per input, written with
            ember ops so it runs everywhere and differentiates again.  None: not
            differentiable.
    fast:   dtype -> output dtype for the same-dtype, same-shape fast path (binary/unary).
    uses:   positions of the inputs whose values the VJP reads (None: all).  Only those are
            checked against in-place modification; the others' shapes suffice.
    decompose: for kind "composite" only: the same function written with primitives, run
            when the device has no kernel of this name (its graph then records itself).
    """

    __slots__ = ("name", "kind", "dtype", "check", "vjp", "promote", "save_out", "fast",
                 "doc", "uses", "decompose")

    def __init__(self, name: str, kind: str, dtype: Callable, *, check=None, vjp=None,
                 promote=None, save_out: bool = False, fast: dict | None = None,
                 doc: str = "", uses: tuple | None = None, decompose=None):
        self.name = name
        self.kind = kind
        self.dtype = dtype
        self.check = check
        self.vjp = vjp
        self.promote = promote
        self.save_out = save_out
        self.fast = fast or {}
        self.doc = doc
        self.uses = uses
        self.decompose = decompose
        registry = COMPOSITES if kind == "composite" else OPS
        if name in OPS or name in COMPOSITES:
            raise ValueError(f"op {name!r} declared twice")
        registry[name] = self

    @property
    def differentiable(self) -> bool:
        return self.vjp is not None

    def __repr__(self) -> str:
        return f"<ember op {self.name} ({self.kind})>"


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
        if d.category != D.FLOAT:
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


def rule_fixed(dtype):
    def make(op):
        def rule(inputs, attrs):
            return None, dtype
        return rule
    return make


def fast_table(kind: str) -> dict:
    """The fast-path table (input dtype -> output dtype) that matches each rule."""
    # bfloat16 always takes the full path: some backends compute it in float32
    if kind == "same":
        return {d: d for d in D.ALL if d is not D.bfloat16}
    if kind == "same_nobool":
        return {d: d for d in D.ALL if d is not D.bool_ and d is not D.bfloat16}
    if kind == "float":
        return {d: d for d in D.FLOATING if d is not D.bfloat16}
    if kind == "bool":
        return {d: D.bool_ for d in D.ALL if d is not D.bfloat16}
    return {}


def declare(name, kind, rule, *, fast=None, **kw) -> Op:
    op = Op(name, kind, None, fast=fast_table(fast) if isinstance(fast, str) else fast, **kw)
    op.dtype = rule(op)
    return op


def declared_names() -> frozenset:
    """Every kernel name a backend's table may hold: primitives and declared kernels."""
    return frozenset(OPS) | frozenset(COMPOSITES)
