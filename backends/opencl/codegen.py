"""OpenCL C generation: type names, op expressions, and strided index arithmetic."""
from __future__ import annotations

import functools

import numpy as np

from . import complexmath

# Shapes and strides travel as `long8` kernel arguments, right-aligned (leading slots are
# size 1): kernels are built per op and dtypes, never per shape or rank.
MAXDIM = 8

CTYPE = {"bool": "uchar", "uint8": "uchar", "int8": "char", "int16": "short", "int32": "int",
         "int64": "long", "float16": "half", "float32": "float", "float64": "double",
         **complexmath.CTYPE}
# arithmetic happens in float for half storage (what PyTorch's CPU kernels do too)
COMPUTE = dict(CTYPE, float16="float")
FLOATS = ("float16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
COMPLEX = complexmath.COMPLEX       # float2 / double2 pairs (complexmath.py)


def prelude(source: str) -> str:
    head = []
    if "double" in source:
        head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if "half" in source:
        head.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
    return "\n".join(head) + "\n"


def long8(values) -> np.void:
    """A right-aligned long8 argument holding a shape (leading slots 1)."""
    return _long8(tuple(values), 1)


def strides8(values) -> np.void:
    """A right-aligned long8 argument holding strides (leading slots 0)."""
    return _long8(tuple(values), 0)


@functools.lru_cache(maxsize=4096)     # a training loop meets the same shapes every step
def _long8(values: tuple, fill: int) -> np.void:
    import pyopencl.cltypes as ct
    vals = [fill] * (MAXDIM - len(values)) + list(values)
    return np.array(vals, dtype=np.int64).view(ct.long8)[0]


def collapse(shape, strides_list):
    """Merge dims that are contiguous in every operand; drop size-1 dims.

    Returns (shape, [strides per operand]); a 0-d or all-ones shape becomes (1,)."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (1,), [(0,) for _ in strides_list]
    out_shape = [shape[dims[0]]]
    out_strides = [[s[dims[0]]] for s in strides_list]
    for d in dims[1:]:
        n = shape[d]
        if all(st[-1] == s[d] * n for st, s in zip(out_strides, strides_list)):
            out_shape[-1] *= n
            for st, s in zip(out_strides, strides_list):
                st[-1] = s[d]
        else:
            out_shape.append(n)
            for st, s in zip(out_strides, strides_list):
                st.append(s[d])
    return tuple(out_shape), [tuple(s) for s in out_strides]


def unravel(index: str, shape: str, nd: str, targets, first: int = 0) -> str:
    """C statements adding, for flat `index` over `shape` (a long8), coordinate * stride to
    each (offset variable, strides long8) pair in targets; nd dims are used, counted from
    the innermost; the `first` innermost ones are left out (a caller covers them)."""
    lines = [f"{{ long r_ = {index};"]
    for k in range(first, MAXDIM):
        slot = f"s{MAXDIM - 1 - k:x}"
        body = [f"long c_ = r_ % {shape}.{slot}; r_ /= {shape}.{slot};"]
        body += [f"{off} += c_ * {st}.{slot};" for off, st in targets]
        lines.append(f"  if ({nd} > {k}) {{ {' '.join(body)} }}")
    lines.append("}")
    return "\n".join(lines)


def offset_fn(name: str) -> str:
    """C source of `long name(long i, int nd, long8 shape, long8 st)`: the offset along
    strides st of flat index i over the nd innermost dims of shape (unravel), a function
    kept out of line. PoCL compiles a kernel at its first launch, and every inlined
    unravel (eight guarded 64-bit divisions) lengthens that compile; out of line it is
    compiled once per kernel whatever the number of call sites. `name` is the family's
    own (the programs of a bundle define their helpers apart: runtime._DEFINED)."""
    return (f"__attribute__((noinline)) long {name}(long i, int nd, long8 shape, long8 st) {{\n"
            f"  long p = 0;\n  {unravel('i', 'shape', 'nd', [('p', 'st')])}\n  return p;\n}}\n")


def grid_unravel(shape: str, nd: str, targets, most3: bool = False) -> str:
    """C statements for a 3-D launch over a (right-aligned long8) shape: work-item
    (g0, g1, g2) is element (..., g2, g1, g0) with g2 unravelled over the outer dims; adds
    coordinate * stride to each (offset variable, strides long8) pair in targets. Returns
    early for g0 past the last dim (global size 0 is rounded up to whole work-groups).

    No division for the two inner dims (a flat index unravelled over every dim cost 15x a
    dense kernel on PoCL: 64-bit division per dim and per element, never vectorised)."""
    last, second = f"s{MAXDIM - 1:x}", f"s{MAXDIM - 2:x}"
    lines = [f"long g0_ = get_global_id(0); if (g0_ >= {shape}.{last}) return;",
             "long g1_ = get_global_id(1);"]
    lines += [f"{off} += g0_ * {st}.{last} + g1_ * {st}.{second};" for off, st in targets]
    third = f"s{MAXDIM - 3:x}"
    lines.append("long g2_ = get_global_id(2);")
    if most3:      # the caller launches it only for at most 3 dims: no unravel loop at all
        lines.append(" ".join(f"{off} += g2_ * {st}.{third};" for off, st in targets))
        return "\n".join(lines)
    lines.append(f"if ({nd} <= 3) {{ "
                 + " ".join(f"{off} += g2_ * {st}.{third};" for off, st in targets) + " }")
    lines.append("else " + unravel("g2_", shape, nd, targets, first=2))
    return "\n".join(lines)


# --- op expressions ---------------------------------------------------------------------

def _bits(t: str) -> tuple:
    """(as_<unsigned>, as_<float>, |x| mask, +inf bits) of a float compute type: PoCL runs
    fabs, isnan, isinf and isfinite as library calls, which keep it from vectorising a
    kernel's work-items (a select on fabs(x) 3 ms per 1e6 floats against 0.4 ms on x); the
    same tests on the bits are plain integer operations, bit for bit the same answers."""
    if t == "double":
        return "as_ulong", "as_double", "0x7fffffffffffffffUL", "0x7ff0000000000000UL"
    return "as_uint", "as_float", "0x7fffffffu", "0x7f800000u"


def _fabs(x: str, t: str) -> str:
    u, f, mask, _ = _bits(t)
    return f"{f}({u}({x}) & {mask})"


def _isinf(x: str, t: str) -> str:
    u, _, mask, inf = _bits(t)
    return f"(({u}({x}) & {mask}) == {inf})"


def _isfinite(x: str, t: str) -> str:
    u, _, mask, inf = _bits(t)
    return f"(({u}({x}) & {mask}) < {inf})"


def _signbit(x: str, t: str) -> str:
    u, _, mask, _ = _bits(t)
    return f"({u}({x}) > {mask})"          # the sign bit set: above every |x| pattern


def _sign(x, t, dt):
    if dt == "bool":
        return x
    if dt in FLOATS:
        return f"(({x} != {x}) ? {x} : ({t})(({x} > 0) - ({x} < 0)))"
    return f"({t})(({x} > 0) - ({x} < 0))"


def unary_expr(op: str, dt: str) -> str:
    """C expression of a unary op over x0 (compute type of dtype `dt`)."""
    if dt in COMPLEX:
        found = complexmath.unary_table(dt).get(op)
        if found is None:
            raise TypeError(f"{op}: no OpenCL kernel for {dt} tensors (not defined on complex "
                            "numbers)")
        return found
    if op == "bitwise_not" and dt in FLOATS:
        raise TypeError(f"bitwise_not: no OpenCL kernel for {dt} tensors; expected integer "
                        "or bool tensors")
    return _unary_table(dt)[op]


def _unary_table(dt: str) -> dict:
    """The backend's unary kernel table: op name -> C expression over x0.  A new unary
    primitive is one row here (its name list, UNARY below, comes from these keys)."""
    t = COMPUTE[dt]
    flt = dt in FLOATS
    x = "x0"
    return {
        "neg": f"({t})(-{x})",
        "abs": (_fabs(x, t) if flt else f"({t})({x} < 0 ? -{x} : {x})" if dt in SIGNED
                else x),
        "sign": _sign(x, t, dt),
        "exp": f"exp({x})", "log": f"log({x})", "log1p": f"log1p({x})",
        "expm1": f"expm1({x})", "sqrt": f"sqrt({x})", "rsqrt": f"(({t})1 / sqrt({x}))",
        "sin": f"sin({x})", "cos": f"cos({x})", "tanh": f"tanh({x})", "erf": f"erf({x})",
        "tan": f"tan({x})",
        "asin": f"asin({x})", "acos": f"acos({x})", "atan": f"atan({x})",
        "asinh": f"asinh({x})", "acosh": f"acosh({x})", "atanh": f"atanh({x})",
        # exp of a non-positive number only: no overflow for large |x|
        "sigmoid": f"({x} >= 0 ? ({t})1 / (1 + exp(-{x})) : exp({x}) / (1 + exp({x})))",
        "floor": f"floor({x})" if flt else x, "ceil": f"ceil({x})" if flt else x,
        "round": f"rint({x})" if flt else x,           # half to even, as NumPy and PyTorch
        "reciprocal": f"(({t})1 / {x})",
        "logical_not": f"(uchar)({x} == 0)",
        "isnan": f"(uchar)({x} != {x})" if flt else "(uchar)0",
        "isinf": f"(uchar){_isinf(x, t)}" if flt else "(uchar)0",
        "isfinite": f"(uchar){_isfinite(x, t)}" if flt else "(uchar)1",
        # a declared kernel (ops/bitwise.py); unary_expr refuses floats
        "bitwise_not": "(uchar)(x0 == 0)" if dt == "bool" else f"({t})(~{x})",
    }


def binary_expr(op: str, dt: str) -> str:
    """C expression of a binary op over x0, x1 (both in the compute type of `dt`)."""
    if dt in COMPLEX:
        found = complexmath.binary_table(dt).get(op)
        if found is None:
            raise TypeError(f"{op}: no OpenCL kernel for {dt} tensors (not defined on complex "
                            "numbers)")
        return found
    if (op in _FLOAT_ONLY and dt not in FLOATS) or (op in _INTEGER_ONLY and (
            dt in FLOATS or (dt == "bool" and "shift" in op))):
        raise TypeError(f"{op}: no OpenCL kernel for {dt} tensors; expected "
                        f"{'float' if op in _FLOAT_ONLY else 'integer'} tensors")
    return _binary_table(dt)[op]


def _binary_table(dt: str) -> dict:
    """The backend's binary kernel table: op name -> C expression over x0, x1."""
    t = COMPUTE[dt]
    flt = dt in FLOATS
    b = dt == "bool"
    table = {name: f"(uchar)(x0 {sym} x1)" for name, sym in (
        ("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="))}
    table.update({name: f"(uchar)((x0 != 0) {sym} (x1 != 0))" for name, sym in (
        ("logical_and", "&&"), ("logical_or", "||"), ("logical_xor", "!="))})
    table.update({
        "add": "(uchar)(x0 | x1)" if b else f"({t})(x0 + x1)",
        "sub": "(uchar)(x0 ^ x1)" if b else f"({t})(x0 - x1)",
        "mul": "(uchar)(x0 & x1)" if b else f"({t})(x0 * x1)",
        "div": "(x0 / x1)",
    })
    for name, pick in (("maximum", ">"), ("minimum", "<")):
        # NaN wins, as in NumPy and PyTorch (fmax/fmin would drop it)
        table[name] = (f"(((x0 {pick} x1) | (x0 != x0)) ? x0 : x1)" if flt
                       else f"((x0 {pick} x1) ? x0 : x1)")
    for name in ("pow", "remainder", "floor_divide"):
        table[name] = f"{name}_{t}(x0, x1)"
    # declared kernels (ops/special.py, ops/bitwise.py); binary_expr refuses the dtypes
    # they do not take (the functions in front of them cast or refuse those already)
    table["atan2"] = f"atan2_{t}(x0, x1)"
    table.update({f"bitwise_{name}": f"({t})(x0 {sym} x1)" for name, sym in (
        ("and", "&"), ("or", "|"), ("xor", "^"))})
    if not flt and not b:
        bits, u = 8 * np.dtype(dt).itemsize, "u" + t.removeprefix("u")
        # OpenCL takes a shift count modulo the width: counts past it (or negative: NumPy
        # and PyTorch shift everything out) are spelled out; left shifts in unsigned
        # arithmetic, which wraps
        out = f"(x1 < 0 || x1 >= {bits})" if dt in SIGNED else f"(x1 >= {bits})"
        table["bitwise_left_shift"] = f"({out} ? ({t})0 : ({t})(({u})x0 << x1))"
        fill = "(x0 < 0 ? -1 : 0)" if dt in SIGNED else "0"
        table["bitwise_right_shift"] = f"({out} ? ({t}){fill} : ({t})(x0 >> x1))"
    else:
        table["bitwise_left_shift"] = table["bitwise_right_shift"] = "x0"   # never built
    return table


_FLOAT_ONLY = ("atan2",)
_INTEGER_ONLY = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift")


UNARY = tuple(_unary_table("float32"))
BINARY = tuple(_binary_table("float32"))


# Cephes' atan (range reduction to |z| <= tan(pi/8), then a rational function), as ops/
# special.py's atan2 decomposition computes it: the device library's atan2 runs 10-40x
# slower than NumPy's on PoCL (its trigonometry is scalar library code: sin 25 ms per 1e6
# floats on one thread where NumPy takes 3.7), this runs at the speed of a few multiplies
_ATAN_P = ("-8.750608600031904122785e-1", "-1.615753718733365076637e1",
           "-7.500855792314704667340e1", "-1.228866684490136173410e2",
           "-6.485021904942025371773e1")
_ATAN_Q = ("2.485846490142306297962e1", "1.650270098316988542046e2",
           "4.328810604912902668951e2", "4.853903996359136964868e2",
           "1.945506571482613964425e2")


def _atan2(t: str) -> str:
    p = f"({t}){_ATAN_P[0]}"
    for c in _ATAN_P[1:]:
        p = f"({p} * zz + ({t}){c})"
    q = f"(zz + ({t}){_ATAN_Q[0]})"
    for c in _ATAN_Q[1:]:
        q = f"({q} * zz + ({t}){c})"
    pi = "3.14159265358979323846"
    # sign bits and infinities on the bits (_bits: PoCL's fabs, signbit and isinf are calls
    # that stop the work-items' vectorisation), and `&`, `|` where && and || would branch
    # (atan2 18 ms -> 1.3 ms per 1e6 floats on one thread)
    return f"""
inline __attribute__((always_inline)) {t} atan_{t}({t} x) {{
  {t} ax = {_fabs('x', t)};
  int big = ax > ({t})2.41421356237309504880, mid = (ax > ({t})0.66) & !big;
  {t} z = big ? ({t})-1 / ax : (mid ? (ax - 1) / (ax + 1) : ax);
  {t} base = big ? ({t})({pi} / 2) : (mid ? ({t})({pi} / 4) : ({t})0);
  {t} zz = z * z;
  {t} r = {_isinf('x', t)} ? ({t})({pi} / 2) : base + (z * (zz * {p} / {q}) + z);
  return {_signbit('x', t)} ? -r : r;
}}
inline __attribute__((always_inline)) {t} atan2_{t}({t} y, {t} x) {{
  /* the IEEE quadrants: signed zeros on the axes, both infinite at the corners; every
     case computed and selected, no branch, and inlined (a call, or a branch, in a
     work-item's code keeps PoCL from running work-items as vector lanes) */
  int xneg = {_signbit('x', t)};
  {t} ysign = {_signbit('y', t)} ? ({t})-1 : ({t})1;
  {t} t = atan_{t}(y / (x == 0 ? ({t})1 : x));
  {t} general = xneg ? t + ysign * ({t}){pi} : t;
  {t} at_zero = y == 0 ? (xneg ? ysign * ({t}){pi} : y) : ysign * ({t})({pi} / 2);
  {t} corner = ysign * (xneg ? ({t})(3 * {pi} / 4) : ({t})({pi} / 4));
  {t} out = x == 0 ? at_zero : general;
  out = ({_isinf('x', t)} & {_isinf('y', t)}) ? corner : out;
  return ((x != x) | (y != y)) ? ({t})NAN : out;
}}
"""


def helpers(dt: str) -> str:
    """Helper functions (pow, remainder, floor_divide) for one compute type (every complex
    function for a complex dtype)."""
    if dt in COMPLEX:
        return complexmath.helpers(dt)
    t = COMPUTE[dt]
    if dt in FLOATS:
        return _atan2(t) + f"""
inline {t} pow_{t}({t} x, {t} y) {{ return pow(x, y); }}
inline {t} remainder_{t}({t} x, {t} y) {{
  if (y == 0) return fmod(x, y);
  {t} m = fmod(x, y);
  if (m != 0) {{ if ((y < 0) != (m < 0)) m += y; }} else m = copysign(({t})0, y);
  return m;
}}
inline {t} floor_divide_{t}({t} a, {t} b) {{
  /* NumPy's npy_divmod, so results match the CPU backend bit for bit */
  if (b == 0) return a / b;
  {t} mod = fmod(a, b);
  {t} div = (a - mod) / b;
  if (mod != 0) {{ if ((b < 0) != (mod < 0)) div -= 1; }}
  {t} fd;
  if (div != 0) {{ fd = floor(div); if (div - fd > ({t})0.5) fd += 1; }}
  else fd = copysign(({t})0, a / b);
  return fd;
}}
"""
    signed = dt in SIGNED
    neg_adjust = "if (r != 0 && ((r < 0) != (y < 0))) r += y;" if signed else ""
    floor_adjust = "if ((x % y != 0) && ((x < 0) != (y < 0))) q -= 1;" if signed else ""
    minus_one = f"if (y == ({t})-1) return ({t})(-x);" if signed else ""
    neg_pow = ("if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);"
               if signed else "")
    return f"""
inline {t} pow_{t}({t} x, {t} y) {{
  {neg_pow}
  {t} r = 1, b = x; {t} e = y;
  while (e > 0) {{ if (e & 1) r = ({t})(r * b); b = ({t})(b * b); e >>= 1; }}
  return r;
}}
inline {t} remainder_{t}({t} x, {t} y) {{
  if (y == 0) return 0;        /* integer x % 0 traps on x86: NumPy's result is 0 */
  {"if (y == -1) return 0;" if signed else ""}
  {t} r = x % y; {neg_adjust} return r;
}}
inline {t} floor_divide_{t}({t} x, {t} y) {{
  if (y == 0) return 0;
  {minus_one}
  {t} q = x / y; {floor_adjust} return q;
}}
"""
