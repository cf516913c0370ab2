"""Complex numbers in OpenCL C: complex64 is `float2` and complex128 `double2` (.x the real
part, .y the imaginary one), the layout of NumPy's and PyTorch's complex arrays, so host
copies are plain byte copies.

OpenCL C has no complex type: every op is a helper function over the pair (helpers(dt),
prepended to each program that uses one) written with the formulas NumPy's npymath uses
(Smith's division, hypot for abs, the C99 Annex G special values for exp/log/sqrt where
nan or inf sit in either part), so the results match the CPU backend to rounding.
Arithmetic the vector types do right is left to them: + and - are componentwise, and a
cast from a real type never broadcasts into the imaginary part (`cplx_*` builds the pair).
"""
from __future__ import annotations

COMPLEX = ("complex64", "complex128")
PART = {"complex64": "float", "complex128": "double"}
CTYPE = {"complex64": "float2", "complex128": "double2"}


def helpers(dt: str) -> str:
    """The helper functions of one complex dtype (names end in _f or _d)."""
    t = PART[dt]
    c = CTYPE[dt]
    s = "f" if t == "float" else "d"
    one = f"({t})1"
    big = "18" if s == "f" else "150"       # past it z*z overflows: asinh(z) = log(2|z|)
    return f"""
inline {c} cplx_{s}({t} re, {t} im) {{ {c} z; z.x = re; z.y = im; return z; }}
inline {c} cmul_{s}({c} a, {c} b) {{
  return cplx_{s}(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }}
inline {c} cdiv_{s}({c} a, {c} b) {{
  /* Smith's algorithm, as NumPy's npymath */
  {t} abr = fabs(b.x), abi = fabs(b.y);
  if (abr >= abi) {{
    if (abr == 0 && abi == 0) return cplx_{s}(a.x / abr, a.y / abr);
    {t} rat = b.y / b.x, scl = {one} / (b.x + b.y * rat);
    return cplx_{s}((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }}
  {t} rat = b.x / b.y, scl = {one} / (b.y + b.x * rat);
  return cplx_{s}((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}}
inline {t} cabs_{s}({c} z) {{ return hypot(z.x, z.y); }}
inline {c} cexp_{s}({c} z) {{
  if (z.y == 0) return cplx_{s}(exp(z.x), z.y);
  if (isinf(z.x)) {{
    if (z.x < 0) {{ if (!isfinite(z.y)) return cplx_{s}(0, 0);
                   return cplx_{s}(0 * cos(z.y), 0 * sin(z.y)); }}
    if (!isfinite(z.y)) return cplx_{s}(z.x, NAN);
  }}
  {t} e = exp(z.x);
  return cplx_{s}(e * cos(z.y), e * sin(z.y));
}}
inline {c} clog_{s}({c} z) {{ return cplx_{s}(log(cabs_{s}(z)), atan2(z.y, z.x)); }}
inline {c} csqrt_{s}({c} z) {{
  if (z.x == 0 && z.y == 0) return cplx_{s}(0, z.y);
  if (isinf(z.y)) return cplx_{s}(INFINITY, z.y);
  if (isnan(z.x)) return cplx_{s}(z.x, (z.y - z.y) / (z.y - z.y));
  if (isinf(z.x)) {{
    if (signbit(z.x)) return cplx_{s}(fabs(z.y - z.y), copysign(-z.x, z.y));
    return cplx_{s}(z.x, copysign(z.y - z.y, z.y));
  }}
  /* scaled so that hypot does not overflow for huge parts */
  {t} t = sqrt((fabs(z.x) + cabs_{s}(z)) * ({t})0.5);
  if (z.x >= 0) return cplx_{s}(t, z.y / (2 * t));
  return cplx_{s}(fabs(z.y) / (2 * t), copysign(t, z.y));
}}
inline {c} crecip_{s}({c} z) {{ return cdiv_{s}(cplx_{s}(1, 0), z); }}
inline {c} csinh_{s}({c} z) {{
  if (z.y == 0) return cplx_{s}(sinh(z.x), z.y);
  return cplx_{s}(sinh(z.x) * cos(z.y), cosh(z.x) * sin(z.y)); }}
inline {c} ccosh_{s}({c} z) {{
  if (z.y == 0) return cplx_{s}(cosh(z.x), z.x == 0 ? z.y : z.y * sinh(z.x));
  return cplx_{s}(cosh(z.x) * cos(z.y), sinh(z.x) * sin(z.y)); }}
inline {c} ctanh_{s}({c} z) {{
  if (fabs(z.x) > ({t})20) {{          /* tanh is +-1 to the part's precision */
    {t} e = exp(-2 * fabs(z.x));
    return cplx_{s}(copysign({one}, z.x), 4 * sin(z.y) * cos(z.y) * e);
  }}
  if (z.y == 0) return cplx_{s}(tanh(z.x), z.y);
  {t} d = cosh(2 * z.x) + cos(2 * z.y);
  return cplx_{s}(sinh(2 * z.x) / d, sin(2 * z.y) / d);
}}
/* the circular functions through the hyperbolic ones: f(z) = -i g(iz) and the like */
inline {c} csin_{s}({c} z) {{ {c} w = csinh_{s}(cplx_{s}(-z.y, z.x)); return cplx_{s}(w.y, -w.x); }}
inline {c} ccos_{s}({c} z) {{ return ccosh_{s}(cplx_{s}(-z.y, z.x)); }}
inline {c} ctan_{s}({c} z) {{ {c} w = ctanh_{s}(cplx_{s}(-z.y, z.x)); return cplx_{s}(w.y, -w.x); }}
inline {c} casinh_{s}({c} z) {{
  /* log(z + sqrt(z*z + 1)) for re(z) >= 0 (odd: no cancellation for re(z) < 0) */
  int neg = z.x < 0 || (z.x == 0 && signbit(z.x));
  {c} w = neg ? -z : z;
  /* 1 added to the real part alone: (-0) + 0 is +0, which would move a point on the
     branch cut (the imaginary axis beyond +-i) to the other side */
  {c} ww = cmul_{s}(w, w);
  {c} r = clog_{s}(w + csqrt_{s}(cplx_{s}(ww.x + 1, ww.y)));
  if (fabs(w.x) > ({t})1e{big} || fabs(w.y) > ({t})1e{big})
    r = cplx_{s}(log(cabs_{s}(w)) + ({t})0.69314718055994530942, atan2(w.y, w.x));
  return neg ? -r : r;
}}
inline {c} casin_{s}({c} z) {{
  {c} w = casinh_{s}(cplx_{s}(-z.y, z.x)); return cplx_{s}(w.y, -w.x); }}
inline {c} cacos_{s}({c} z) {{
  {c} w = casin_{s}(z);
  return cplx_{s}(({t})1.57079632679489661923 - w.x, -w.y); }}
inline {c} catanh_{s}({c} z) {{
  {c} a = clog_{s}(cplx_{s}(1 + z.x, z.y)), b = clog_{s}(cplx_{s}(1 - z.x, -z.y));
  return ({t})0.5 * (a - b); }}
inline {c} catan_{s}({c} z) {{
  {c} w = catanh_{s}(cplx_{s}(-z.y, z.x)); return cplx_{s}(w.y, -w.x); }}
inline {c} cacosh_{s}({c} z) {{
  {c} r = clog_{s}(z + cmul_{s}(csqrt_{s}(cplx_{s}(z.x + 1, z.y)),
                                csqrt_{s}(cplx_{s}(z.x - 1, z.y))));
  return r; }}
inline {c} cpow_{s}({c} a, {c} b) {{
  if (b.x == 0 && b.y == 0) return cplx_{s}(1, 0);
  if (a.x == 0 && a.y == 0) {{
    if (b.x > 0) return cplx_{s}(0, 0);      /* |0 ** b| = 0 for re(b) > 0 (torch, NumPy) */
    return cplx_{s}(NAN, NAN);
  }}
  if (b.y == 0 && b.x == 1) return a;
  if (b.y == 0 && b.x == 2) return cmul_{s}(a, a);
  return cexp_{s}(cmul_{s}(b, clog_{s}(a)));
}}
inline {c} csgn_{s}({c} z) {{
  if (z.x == 0 && z.y == 0) return cplx_{s}(0, 0);
  {t} r = cabs_{s}(z); return cplx_{s}(z.x / r, z.y / r); }}
inline {c} cexpm1_{s}({c} z) {{
  {t} h = sin(z.y * ({t})0.5);
  return cplx_{s}(expm1(z.x) * cos(z.y) - 2 * h * h, exp(z.x) * sin(z.y)); }}
inline {c} clog1p_{s}({c} z) {{
  {t} ax = fabs(z.x), ay = fabs(z.y);
  if (ax < ({t})0.5 && ay < ({t})0.5) {{
    /* log|1 + z| = log1p(2x + x^2 + y^2) / 2: no cancellation for small z */
    return cplx_{s}(log1p(z.x * (2 + z.x) + z.y * z.y) * ({t})0.5, atan2(z.y, 1 + z.x));
  }}
  return clog_{s}(cplx_{s}(1 + z.x, z.y));
}}
inline {c} csigmoid_{s}({c} z) {{ return crecip_{s}(cplx_{s}(1, 0) + cexp_{s}(-z)); }}
"""


def unary_table(dt: str) -> dict:
    """Complex unary ops whose result is complex (or bool): op -> expression over x0."""
    s = "f" if PART[dt] == "float" else "d"
    x = "x0"
    table = {"neg": f"(-{x})"}
    for op, fn in (("exp", "cexp"), ("log", "clog"), ("sqrt", "csqrt"), ("sin", "csin"),
                   ("cos", "ccos"), ("tan", "ctan"), ("tanh", "ctanh"), ("asin", "casin"),
                   ("acos", "cacos"), ("atan", "catan"), ("asinh", "casinh"),
                   ("acosh", "cacosh"), ("atanh", "catanh"), ("reciprocal", "crecip"),
                   ("expm1", "cexpm1"), ("log1p", "clog1p"), ("sigmoid", "csigmoid"),
                   ("sign", "csgn")):
        table[op] = f"{fn}_{s}({x})"
    table["rsqrt"] = f"crecip_{s}(csqrt_{s}({x}))"
    table["logical_not"] = f"(uchar)({x}.x == 0 && {x}.y == 0)"
    table["isnan"] = f"(uchar)(isnan({x}.x) || isnan({x}.y))"
    table["isinf"] = f"(uchar)(isinf({x}.x) || isinf({x}.y))"
    table["isfinite"] = f"(uchar)(isfinite({x}.x) && isfinite({x}.y))"
    return table


def binary_table(dt: str) -> dict:
    s = "f" if PART[dt] == "float" else "d"
    return {
        "add": "(x0 + x1)", "sub": "(x0 - x1)", "mul": f"cmul_{s}(x0, x1)",
        "div": f"cdiv_{s}(x0, x1)", "pow": f"cpow_{s}(x0, x1)",
        "eq": "(uchar)(x0.x == x1.x && x0.y == x1.y)",
        "ne": "(uchar)(x0.x != x1.x || x0.y != x1.y)",
        "logical_and": "(uchar)((x0.x != 0 || x0.y != 0) && (x1.x != 0 || x1.y != 0))",
        "logical_or": "(uchar)((x0.x != 0 || x0.y != 0) || (x1.x != 0 || x1.y != 0))",
        "logical_xor": "(uchar)((x0.x != 0 || x0.y != 0) != (x1.x != 0 || x1.y != 0))",
    }


def part_expr(op: str, dt: str) -> str:
    """Complex in, real out: real, imag, abs (angle is atan2 in the core)."""
    s = "f" if PART[dt] == "float" else "d"
    return {"real": "x0.x", "imag": "x0.y", "abs": f"cabs_{s}(x0)"}[op]


def cast_expr(src: str, dst: str, compute: dict) -> str:
    """A conversion where src or dst is complex (a real source fills the real part; a
    complex one cast to a real type keeps the real part, as torch and NumPy)."""
    if dst == "bool":
        return "(uchar)(x0.x != 0 || x0.y != 0)"
    if dst in COMPLEX:
        part, c = PART[dst], CTYPE[dst]     # a vector literal: no helper needed
        if src in COMPLEX:
            return f"({c})(({part})x0.x, ({part})x0.y)"
        if src == "bool":
            return f"({c})(({part})(x0 != 0), ({part})0)"
        return f"({c})(({part})x0, ({part})0)"
    return f"({compute[dst]})x0.x"
