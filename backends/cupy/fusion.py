"""ember.compile on CUDA: chains of elementwise nodes in a captured graph as one kernel.

On CuPy every primitive is its own kernel (a composite such as relu's gradient decomposes
into several), each reading and writing global memory.  Before a graph is replayed
(graphs.py), `rewrite` replaces each tree of elementwise nodes whose intermediates nobody
else reads by one node calling a `cupy.ElementwiseKernel` made from `render`'s CUDA C.

What keeps the fused kernel's results those of the kernels it replaces:
- each node's expression is the one CuPy's own ufunc runs (cupy/_math, cupy/_core: exp
  is `exp(a)`, maximum `isnan(a) | isnan(b) ? NAN : max(a, b)`, written here as a select),
  or the array-API kernel's formula (sigmoid), computed in the node's recorded dtype and
  rounded to it, as the unfused kernel stores it;
- NVRTC compiles with --fmad=false, so a*b+c is not contracted into one rounding;
- only float32/float64 arithmetic (and bool logic, comparisons, where, casts that cannot
  overflow): no integer arithmetic (C's signed overflow is not NumPy's wrap), no float16
  (CuPy's half type), no mixed-dtype arithmetic (promotion stays the dispatcher's);
  Python constants only finite floats and ints below 2**24, as the node's dtype;
- a tree never spans an effect (an in-place write, a random draw, an index check): its
  nodes read what they would have read where they stood.

The body uses only C that OpenCL C also accepts (float, double, bool, casts, isnan,
fabs, exp...), which lets the suite run the very text on PoCL (test_cuda_fusion.py).
`EMBER_CUDA_FUSION=0` turns it off.
"""
from __future__ import annotations

import hashlib

FLOATS = {"float32": "float", "float64": "double"}
PARAM = {"float32": "float32", "float64": "float64", "bool": "bool", "int32": "int32",
         "int64": "int64"}

UNARY = {   # name -> C of `a` (the node's dtype T throughout)
    "neg": "-{a}", "exp": "exp({a})", "log": "log({a})", "sqrt": "sqrt({a})",
    "tanh": "tanh({a})", "sin": "sin({a})", "cos": "cos({a})", "tan": "tan({a})",
    "log1p": "log1p({a})", "expm1": "expm1({a})", "abs": "fabs({a})",
    "rsqrt": "({T})1 / sqrt({a})", "reciprocal": "({T})1 / {a}",
}
BINARY = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "div": "{a} / {b}",
    # CuPy: `isnan(a) | isnan(b) ? NAN : max(a, b)`; the select below is the same but for
    # the sign of max(+0, -0), which CUDA's fmax leaves open, and means one thing in every
    # C dialect (OpenCL's max already propagates nan, so the PoCL test could not tell)
    "maximum": "(isnan({a}) | isnan({b})) ? ({T})(NAN) : ({a} >= {b} ? {a} : {b})",
    "minimum": "(isnan({a}) | isnan({b})) ? ({T})(NAN) : ({a} <= {b} ? {a} : {b})",
}
COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
LOGIC = {"logical_and": "{a} && {b}", "logical_or": "{a} || {b}",
         "add": "{a} || {b}", "mul": "{a} && {b}"}      # bool + bool is or, * is and

PREAMBLE = "#ifndef NAN\n#define NAN __int_as_float(0x7fffffff)\n#endif\n"


def _dname(v) -> str:
    return v.dtype.name


def _const(value, t: str) -> str | None:
    """A Python constant as C of type t ("int": an integer literal), or None where it may
    not be fused."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if abs(value) >= 2 ** 24:
            return None
        return f"({value})" if t == "int" else f"(({t}){value})"
    if t == "int":
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return f"(({t}){value!r})"
    return None


def fusable(node) -> bool:
    """Whether `node` may join a fused kernel (see the module docstring)."""
    from ember.graph.ir import Const, Value
    if node.kind != "kernel" or node.inplace or node.out is None or node.attrs and \
            node.name != "cast":
        return False
    out = _dname(node.out)
    values = [a for a in node.args if isinstance(a, Value)]
    consts = [a.value for a in node.args if isinstance(a, Const)]
    if not values:
        return False
    name = node.name
    if name in UNARY or name == "sigmoid":
        return out in FLOATS and len(node.args) == 1 and _dname(values[0]) == out
    if name in BINARY and out in FLOATS:
        return len(node.args) == 2 and all(_dname(v) == out for v in values) and \
            all(_const(c, FLOATS[out]) is not None for c in consts)
    if name in LOGIC and out == "bool":
        return not consts and len(node.args) == 2 and all(_dname(v) == "bool" for v in values)
    if name == "logical_not":
        return out == "bool" and len(node.args) == 1 and _dname(values[0]) == "bool"
    if name in COMPARE:
        kinds = {_dname(v) for v in values}
        if out != "bool" or len(node.args) != 2 or len(kinds) != 1:
            return False
        kind = kinds.pop()
        if kind in FLOATS:
            return all(_const(c, FLOATS[kind]) is not None for c in consts)
        return kind in ("int32", "int64") and all(type(c) is int and abs(c) < 2 ** 24
                                                  for c in consts)
    if name == "where":
        if out not in FLOATS or len(node.args) != 3 or not isinstance(node.args[0], Value) \
                or _dname(node.args[0]) != "bool":
            return False
        return all(_dname(a) == out if isinstance(a, Value) else
                   _const(a.value, FLOATS[out]) is not None for a in node.args[1:])
    if name == "cast":
        src = _dname(values[0])
        if out in FLOATS:
            return src in (*FLOATS, "bool", "int32", "int64")
        return out == "bool" and src in (*FLOATS, "int32", "int64")
    return False


def groups(graph, nodes) -> list:
    """Trees of fusable nodes, each [member nodes in order] ending at its root; a member's
    output is read by one node only, the tree's next, and is no result of the graph."""
    from ember.graph.ir import Value
    uses: dict = {}
    for n in nodes:
        for a in n.args:
            if isinstance(a, Value):
                uses[id(a)] = uses.get(id(a), 0) + 1
    results = {id(v) for v in graph.output_values()}
    results |= {id(v) for _, v in graph.grads if isinstance(v, Value)}
    region = 0
    tree_of: dict = {}           # id(root value) -> (region, [members])
    for n in nodes:
        if n.effect:
            region += 1
            continue
        if not fusable(n):
            continue
        members = []
        for a in n.args:
            if not isinstance(a, Value):
                continue
            sub = tree_of.get(id(a))
            if sub is not None and sub[0] == region and uses.get(id(a)) == 1 and \
                    id(a) not in results:
                members += sub[1]
                del tree_of[id(a)]
        tree_of[id(n.out)] = (region, members + [n])
    order = {id(n): k for k, n in enumerate(nodes)}
    found = [sorted(m, key=lambda n: order[id(n)]) for _, m in tree_of.values() if len(m) > 1]
    return sorted(found, key=lambda m: order[id(m[-1])])


def render(members) -> tuple[list, str, str, str]:
    """(external input Values, CuPy in_params, out_params, body) of one tree."""
    from ember.graph.ir import Value
    inside = {id(n.out): k for k, n in enumerate(members)}
    externals: list = []
    names: dict = {}

    def ref(a, t: str) -> str:
        if not isinstance(a, Value):
            text = _const(a.value, t)
            assert text is not None, (a, t)
            return text
        if id(a) in inside:
            return f"t{inside[id(a)]}"
        if id(a) not in names:
            names[id(a)] = f"a{len(externals)}"
            externals.append(a)
        return names[id(a)]

    lines = []
    for k, n in enumerate(members):
        out = _dname(n.out)
        T = FLOATS.get(out, "bool")
        name = n.name
        if name == "cast":
            src = n.args[0]
            a = ref(src, FLOATS.get(_dname(src), "bool"))
            expr = f"({T})({a})"
        elif name == "sigmoid":
            a = ref(n.args[0], T)
            lines.append(f"const {T} e{k} = exp(-fabs({a}));")
            expr = f"({a} >= ({T})0) ? (({T})1 / (({T})1 + e{k})) : (e{k} / (({T})1 + e{k}))"
        elif name in UNARY:
            expr = UNARY[name].format(a=ref(n.args[0], T), T=T)
        elif name in COMPARE:
            vals = [a for a in n.args if isinstance(a, Value)]
            at = FLOATS.get(_dname(vals[0]), "int")
            a, b = (ref(x, at) for x in n.args)
            expr = f"{a} {COMPARE[name]} {b}"
        elif name == "where":
            c, a, b = ref(n.args[0], "bool"), ref(n.args[1], T), ref(n.args[2], T)
            expr = f"{c} ? {a} : {b}"
        elif name == "logical_not":
            expr = f"!{ref(n.args[0], 'bool')}"
        elif out == "bool":
            a, b = (ref(x, "bool") for x in n.args)
            expr = LOGIC[name].format(a=a, b=b)
        else:
            a, b = (ref(x, T) for x in n.args)
            expr = BINARY[name].format(a=a, b=b, T=T)
        lines.append(f"const {T} t{k} = ({T})({expr});")
    lines.append(f"out = t{len(members) - 1};")
    in_params = ", ".join(f"{PARAM[_dname(v)]} {names[id(v)]}" for v in externals)
    out_params = f"{PARAM[_dname(members[-1].out)]} out"
    return externals, in_params, out_params, "\n".join(lines)


def rewrite(graph, make_kernel, nodes=None):
    """A copy of `graph` whose trees (groups) are single nodes calling
    make_kernel(members, externals, in_params, out_params, body) (a function of the
    externals' arrays); `graph` itself where nothing fuses."""
    from ember.graph.ir import Graph, Node
    from ember.graph.replay import needed
    nodes = needed(graph) if nodes is None else nodes
    trees = groups(graph, nodes)
    if not trees:
        return graph
    root_of = {id(m[-1]): m for m in trees}
    gone = {id(n) for m in trees for n in m[:-1]}
    out_nodes = []
    for n in nodes:
        if id(n) in gone:
            continue
        members = root_of.get(id(n))
        if members is None:
            out_nodes.append(n)
            continue
        externals, in_params, out_params, body = render(members)
        fn = make_kernel(members, externals, in_params, out_params, body)
        out_nodes.append(Node("kernel", "fused_elementwise", list(externals), {}, n.out,
                              fn=fn, device=n.device,
                              meta={"fused": [m.name for m in members], "body": body}))
    return Graph(inputs=graph.inputs, nodes=out_nodes, outputs=graph.outputs,
                 grads=graph.grads, guards=graph.guards, names=graph.names)


def unfused_kernel(members, externals, in_params=None, out_params=None, body=None):
    """make_kernel for rewrite: the members' own kernels called in order (what a fused
    kernel must equal, and where it cannot run)."""
    from ember.graph.ir import Value
    root = members[-1].out

    def run(*arrays):
        env = {id(v): a for v, a in zip(externals, arrays)}
        for n in members:
            args = [env[id(a)] if isinstance(a, Value) else a.value for a in n.args]
            env[id(n.out)] = n.fn(*args, **n.attrs) if n.attrs else n.fn(*args)
        return env[id(root)]
    run.__name__ = "unfused_" + "_".join(n.name for n in members)
    return run


class FusedKernel:
    """One tree's cupy.ElementwiseKernel.  Its first call also runs the unfused kernels and
    compares (bit for bit, nan equal to nan); where they differ, or the kernel does not
    compile, the tree runs unfused for good, with a warning naming it.  That first call
    is the generic replay's warm-up, never inside a CUDA graph capture."""

    def __init__(self, cupy, kernel, reference, names):
        self.cp = cupy
        self.kernel = kernel
        self.reference = reference
        self.names = names
        self.checked = False
        self.__name__ = "fused_" + "_".join(names)

    def __call__(self, *arrays):
        if self.checked:
            return self.kernel(*arrays)
        self.checked = True
        want = self.reference(*arrays)
        try:
            got = self.kernel(*arrays)
            same = got.shape == want.shape and got.dtype == want.dtype and bool(
                self.cp.array_equal(got, want, equal_nan=got.dtype.kind == "f"))
            why = "" if same else "its result differs from the unfused kernels'"
        except Exception as exc:        # noqa: BLE001  (NVRTC or launch: run unfused)
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if why:
            import warnings
            warnings.warn(f"ember.compile: the fused kernel of {' -> '.join(self.names)} "
                          f"runs unfused ({why})", RuntimeWarning, stacklevel=2)
            self.kernel = self.reference
        return want


def cupy_kernel(cupy):
    """make_kernel for rewrite: a FusedKernel per tree, one cupy.ElementwiseKernel per
    distinct body."""
    made: dict = {}

    def make(members, externals, in_params, out_params, body):
        key = (in_params, out_params, body)
        kernel = made.get(key)
        if kernel is None:
            digest = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
            kernel = cupy.ElementwiseKernel(in_params, out_params, body,
                                            name=f"ember_fused_{digest}",
                                            preamble=PREAMBLE, options=("--fmad=false",))
            made[key] = kernel
        return FusedKernel(cupy, kernel, unfused_kernel(members, externals),
                           [n.name for n in members])
    return make
