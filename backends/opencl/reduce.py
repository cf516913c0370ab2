"""Reductions over any set of axes: one work-item per output element (or per chunk of it).

Kept and reduced dims are each merged where contiguous; a work-item walks its reduced
elements through strides.  When there are few outputs and many reduced elements, a first
pass writes per-chunk partials and a second pass reduces them: that keeps every device
busy and bounds the length of each serial floating-point sum.
"""
from __future__ import annotations

import re

import numpy as np
from ember import dtypes as D
from ember.errors import ShapeError

from . import codegen
from .codegen import COMPUTE, CTYPE, FLOATS
from .copies import cast, contiguous
from .runtime import CLArray, KernelBuildError, numel

CHUNK = 4096          # longest serial run of one work-item
TARGET_ITEMS = 4096   # work-items worth creating before chunking stops paying

_LIMITS = {"uchar": ("0", "UCHAR_MAX"), "char": ("CHAR_MIN", "CHAR_MAX"),
           "short": ("SHRT_MIN", "SHRT_MAX"), "int": ("INT_MIN", "INT_MAX"),
           "long": ("LONG_MIN", "LONG_MAX")}


def _acc_type(op: str, dt: str) -> str:
    return "uchar" if op in ("any", "all") else COMPUTE[dt]


def _rules(op: str, dt: str):
    """(init, combine statement over acc and v) for a reduction in the accumulator type."""
    a = _acc_type(op, dt)
    flt = dt in FLOATS
    if dt in codegen.COMPLEX:
        return _complex_rules(op, dt)
    if op == "sum":
        return "0", "acc += v;"
    if op == "prod":
        return "1", "acc *= v;"
    if op in ("max", "min"):
        pick = ">" if op == "max" else "<"
        if flt:
            init = "-INFINITY" if op == "max" else "INFINITY"
            return init, f"if (v {pick} acc || isnan(v)) acc = v;"
        lo, hi = _LIMITS[a]
        return (lo if op == "max" else hi), f"if (v {pick} acc) acc = v;"
    if op == "any":
        return "0", "acc |= (v != 0);"
    if op == "all":
        return "1", "acc &= (v != 0);"
    raise KeyError(op)


def _complex_rules(op: str, dt: str):
    """Reductions of float2/double2 pairs: sums componentwise, products as complex
    products; max and min are refused by the core (complex numbers have no order), so
    their members of the family program are never launched."""
    c = CTYPE[dt]
    if op == "sum":
        return f"({c})(0, 0)", "acc += v;"
    if op == "prod":
        return (f"({c})(1, 0)",
                f"acc = ({c})(acc.x * v.x - acc.y * v.y, acc.x * v.y + acc.y * v.x);")
    # any/all of complex arrays reduce their `!= 0` (reduction() below); max and min are
    # refused by the core (complex numbers have no order): these members of the family
    # program are never launched for complex
    return ("0" if op in ("any", "all") else f"({c})(0, 0)"), "acc = acc;"


UNROLL = 8      # independent accumulators per work-item


def _accumulate(a: str, init: str, combine: str, value, value_unit=None) -> str:
    """C code reducing elements j0..j1 of one output into `acc`.

    `value(j)` is C code declaring `v`, element j's value (a C expression for j); along a
    single reduced dim the loop keeps UNROLL independent accumulators (one serial chain
    of float adds ran at its latency: a 4M-element sum took 5x NumPy's time), combined in
    a fixed order at the end. `value_unit`, if given, is the same for a stride of 1, taken
    when the stride is 1 (contiguous loads the compiler can vectorise)."""
    accs = [f"acc{u}" for u in range(UNROLL)]

    def comb(target):
        return re.sub(r"\bacc\b", target, combine)

    def unrolled(val):
        lanes = " ".join(f"{{ {val(f'j + {u}')} {comb(accs[u])} }}" for u in range(UNROLL))
        return (f"for (; j + {UNROLL} <= j1; j += {UNROLL}) {{ {lanes} }}\n"
                f"    for (; j < j1; j++) {{ {val('j')} {comb(accs[0])} }}")
    body = unrolled(value)
    if value_unit is not None:
        body = f"if (s == 1) {{ {unrolled(value_unit)} }} else {{ {body} }}"
    tail = " ".join(f"{{ {a} v = {acc}; {comb('acc')} }}" for acc in accs[1:])
    return f"""{a} {", ".join(f"{acc} = {init}" for acc in accs)};
  {{ long j = j0;
    {body} }}
  {a} acc = acc0;
  {tail}"""


def _source(op: str, dt: str, out_dt: str) -> str:
    t, c, a, r = CTYPE[dt], COMPUTE[dt], _acc_type(op, dt), CTYPE[out_dt]
    init, combine = _rules(op, dt)
    load = f"{c} v = ({c})x[{{p}}];"
    inner = _accumulate(a, init, combine, lambda j: load.format(p=f"base + ({j}) * s"),
                        lambda j: load.format(p=f"base + ({j})"))
    return f"""
__kernel void reduce(long n, long nred, long chunk, long nchunk,
                     int ndk, long8 kshape, long8 kst, int ndr, long8 rshape, long8 rst,
                     __global const {t}* x, long xo, __global {r}* out) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long o = g / nchunk, c = g - o * nchunk;
  long base = xo;
  {codegen.unravel("o", "kshape", "ndk", [("base", "kst")])}
  long j0 = c * chunk, j1 = min(nred, j0 + chunk);
  {a} acc = {init};
  if (ndr <= 1) {{
    long s = rst.s7;
    {inner}
    out[g] = ({r})acc;
    return;
  }}
  if (ndr == 2) {{         /* the flat loop's order, without a division per element */
    long n1 = rshape.s7, i = j0 / n1, k = j0 - i * n1;
    for (long j = j0; j < j1; i++, k = 0) {{
      long p0 = base + i * rst.s6, kend = min(n1, k + (j1 - j));
      for (; k < kend; k++, j++) {{ {load.format(p="p0 + k * rst.s7")} {combine} }}
    }}
    out[g] = ({r})acc;
    return;
  }}
  for (long j = j0; j < j1; j++) {{
    long p = base;
    {codegen.unravel("j", "rshape", "ndr", [("p", "rst")])}
    {load.format(p="p")} {combine}
  }}
  out[g] = ({r})acc;
}}
"""


OPS = ("sum", "prod", "max", "min", "any", "all")
_OP_NUMBER = {op: np.int32(k) for k, op in enumerate(OPS)}


def _cold_source(dt: str, out_dt: str) -> str:
    """`reduce_cold`: every op of OPS in one kernel, the op's number its last argument, and
    the UNROLL accumulators an array indexed in one loop instead of UNROLL copies of the
    code. PoCL compiles a
    kernel at its first launch, and an unrolled reduce_<op> cost it 0.3-0.9 s of CPU each
    (the demo met five); this one kernel, one loop over the reduced elements, cost
    0.3-0.4 s (measured with every op's code in it). It adds the elements in
    reduce_<op>'s order (the same accumulators, combined in the same order), so the
    results are the same bit for bit; a reduction runs it until it is hot
    (runtime.hot_elements elements reduced), then its unrolled kernel.

    A program of its own (key ("reduce-cold", dt, out_dt), in the bundles): the unrolled
    kernels build only once a reduction is hot (each bundle's build ~0.2 s cheaper without
    their source). The op's init and combine, and the unravelling of a flat index over
    up to 8 dims (cold_off: kept dims once per work-item, reduced dims per element past
    two), are functions kept out of line: inlined at their call sites they made PoCL's
    compile at first launch 0.7-0.97 s of CPU; init and combine out of line 0.52-0.55 s,
    and cold_off too ~0.35 s (measured on a loaded 2-core machine, float32/int64)."""
    t, c, r = CTYPE[dt], COMPUTE[dt], CTYPE[out_dt]
    inits, combines = [], []
    for op in OPS:
        init, combine = _rules(op, dt)
        if op in ("any", "all"):       # in the compute type: 0/1 as the uchar would hold
            combine = ("acc = (acc != 0 || v != 0);" if op == "any"
                       else "acc = (acc != 0 && v != 0);")
        inits.append(f"case {len(inits)}: return ({c})({init});")
        combines.append(f"case {len(combines)}: {{ {combine} return acc; }}")
    return "\n" + codegen.offset_fn("cold_off") + f"""\
__attribute__((noinline)) {c} cold_init_{c}(int op) {{
  switch (op) {{ {" ".join(inits)} }} return 0; }}
__attribute__((noinline)) {c} cold_comb_{c}(int op, {c} acc, {c} v) {{
  switch (op) {{ {" ".join(combines)} }} return acc; }}
/* the three walks over the reduced elements (one dim, two dims, more), out of line */
__attribute__((noinline)) {c} cold_walk1_{c}(int op, {c} acc, long j0, long j1, long base,
                                        long s, __global const {t}* x) {{
  /* reduce_<op>'s order: element j0 + k goes to accumulator k % UNROLL (the tail past
     the last whole UNROLL to the first), and the accumulators combine in order; here
     accumulator u is one pass over its elements, combined as soon as it is complete */
  long full = j0 + (j1 - j0) / {UNROLL} * {UNROLL};
  for (int u = 0; u < {UNROLL}; u++) {{
    {c} a = u ? cold_init_{c}(op) : acc;
    for (long j = j0 + u; j < full; j += {UNROLL})
      a = cold_comb_{c}(op, a, ({c})x[base + j * s]);
    if (u == 0)
      for (long j = full; j < j1; j++) a = cold_comb_{c}(op, a, ({c})x[base + j * s]);
    acc = u ? cold_comb_{c}(op, acc, a) : a;
  }}
  return acc;
}}
__attribute__((noinline)) {c} cold_walk2_{c}(int op, {c} acc, long j0, long j1, long base,
                                        long8 rshape, long8 rst, __global const {t}* x) {{
  /* the flat loop's order, without a division per element */
  long n1 = rshape.s7, i = j0 / n1, k = j0 - i * n1;
  for (long j = j0; j < j1; i++, k = 0) {{
    long p0 = base + i * rst.s6, kend = min(n1, k + (j1 - j));
    for (; k < kend; k++, j++) acc = cold_comb_{c}(op, acc, ({c})x[p0 + k * rst.s7]);
  }}
  return acc;
}}
__attribute__((noinline)) {c} cold_walkn_{c}(int op, {c} acc, long j0, long j1, long base,
                                        int ndr, long8 rshape, long8 rst,
                                        __global const {t}* x) {{
  for (long j = j0; j < j1; j++)
    acc = cold_comb_{c}(op, acc, ({c})x[base + cold_off(j, ndr, rshape, rst)]);
  return acc;
}}
__kernel void reduce_cold(long n, long nred, long chunk, long nchunk,
                          int ndk, long8 kshape, long8 kst, int ndr, long8 rshape, long8 rst,
                          __global const {t}* x, long xo, __global {r}* out, int op) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long o = g / nchunk, c = g - o * nchunk;
  long base = xo + cold_off(o, ndk, kshape, kst);
  long j0 = c * chunk, j1 = min(nred, j0 + chunk);
  {c} acc = cold_init_{c}(op);
  if (ndr <= 1)
    acc = cold_walk1_{c}(op, acc, j0, j1, base, rst.s7, x);
  else if (ndr == 2)
    acc = cold_walk2_{c}(op, acc, j0, j1, base, rshape, rst, x);
  else
    acc = cold_walkn_{c}(op, acc, j0, j1, base, ndr, rshape, rst, x);
  out[g] = ({r})acc;
}}
"""


def _family(dt: str, out_dt: str) -> str:
    """One program holding every unrolled reduction of one input and output dtype,
    `reduce_<op>`: a build costs PoCL ~0.16 s of CPU whatever its size (6 kernels cost
    what 1 does), and only the kernels launched are compiled further. Until a reduction
    is hot it runs `reduce_cold` (_cold_source), a program of its own."""
    return "\n".join(
        _source(op, dt, out_dt).replace("__kernel void reduce(", f"__kernel void reduce_{op}(")
        for op in OPS)


def _arg_family(dt: str) -> str:
    """argmax and argmin of one dtype in one program (`arg_argmax`, `arg_argmin`), their
    unravelling out of line (arg_at, codegen.offset_fn): inlined twice in each, it made
    PoCL's compile at first launch ~0.23 s of CPU."""
    return codegen.offset_fn("arg_at") + "\n".join(
        _arg_source(op, dt).replace("__kernel void arg(", f"__kernel void arg_{op}(")
        for op in ("argmax", "argmin"))


def _arg_source(op: str, dt: str) -> str:
    """The first index of the max (min) along the reduced dims, NaN first; a single
    reduced dim walked by its stride, more through arg_at per element."""
    t, c = CTYPE[dt], COMPUTE[dt]
    pick = ">" if op == "argmax" else "<"
    nan = " || (isnan(v) && !isnan(best))" if dt in FLOATS else ""
    better = f"if (v {pick} best{nan}) {{ best = v; bi = j; }}"
    return f"""
__kernel void arg(long n, long nred, int ndk, long8 kshape, long8 kst, int ndr, long8 rshape,
                  long8 rst, __global const {t}* x, long xo, __global long* out) {{
  long o = get_global_id(0);
  if (o >= n) return;
  long base = xo + arg_at(o, ndk, kshape, kst);
  {c} best = ({c})x[base];
  long bi = 0;
  if (ndr <= 1) {{
    long s = rst.s7;
    for (long j = 1; j < nred; j++) {{ {c} v = ({c})x[base + j * s]; {better} }}
  }} else {{
    for (long j = 1; j < nred; j++) {{
      long p = base;
      {codegen.unravel("j", "rshape", "ndr", [("p", "rst")])}
      {c} v = ({c})x[p];
      {better}
    }}
  }}
  out[o] = bi;
}}
"""


def _split(x: CLArray, axes):
    """Collapsed (shape, strides) of the kept dims and of the reduced dims."""
    kept = [d for d in range(x.ndim) if d not in axes]
    kshape, (kst,) = codegen.collapse([x.shape[d] for d in kept], [[x.strides[d] for d in kept]])
    rshape, (rst,) = codegen.collapse([x.shape[d] for d in axes], [[x.strides[d] for d in axes]])
    if len(kshape) > codegen.MAXDIM or len(rshape) > codegen.MAXDIM:
        raise ShapeError(f"reduce: input of shape {x.shape} with strides {x.strides} needs "
                         f"more than {codegen.MAXDIM} dims after merging; call .contiguous() "
                         "first")
    return kshape, kst, rshape, rst


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _fused_source(op: str, dt: str, out_dt: str, sig: str, in_dtypes, code) -> str:
    """The reduce kernel reading a pending elementwise tree (fusion.py) instead of an
    array: each array operand walks its own kept and reduced strides."""
    final, extra, stmts = code
    a, r = _acc_type(op, dt), CTYPE[out_dt]
    init, combine = _rules(op, dt)
    head, bases, steps, loads = [], [], [], []
    for j, (kind, ldt) in enumerate(zip(sig, in_dtypes)):
        c = COMPUTE[ldt]
        if kind == "S":
            head.append(f"{c} v{j}")
            loads.append(f"{c} x{j} = v{j};")
            continue
        head += [f"__global const {CTYPE[ldt]}* p{j}", f"long f{j}", f"long8 k{j}",
                 f"long8 r{j}"]
        bases.append((f"b{j}", f"k{j}"))
        steps.append((f"q{j}", f"r{j}"))
        loads.append(f"{c} x{j} = ({c})p{j}[q{j}];")
    value = " ".join(loads + list(stmts)) + f" {COMPUTE[dt]} v = {final};"

    def at(j):
        return " ".join(f"long {q} = b{q[1:]} + ({j}) * {st}.s7;" for q, st in steps) \
            + " " + value
    inner = _accumulate(a, init, combine, at)
    return f"""{extra}
__kernel void reduce(long n, long nred, long chunk, long nchunk, int ndk, long8 kshape,
                     int ndr, long8 rshape, {", ".join(head)}, __global {r}* out) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long o = g / nchunk, c = g - o * nchunk;
  {" ".join(f"long {b} = f{b[1:]};" for b, _ in bases)}
  {codegen.unravel("o", "kshape", "ndk", bases)}
  long j0 = c * chunk, j1 = min(nred, j0 + chunk);
  {a} acc = {init};
  if (ndr <= 1) {{
    {inner}
    out[g] = ({r})acc;
    return;
  }}
  if (ndr == 2) {{         /* the flat loop's order, without a division per element */
    long n1 = rshape.s7, i = j0 / n1, k = j0 - i * n1;
    for (long j = j0; j < j1; i++, k = 0) {{
      long kend = min(n1, k + (j1 - j));
      for (; k < kend; k++, j++) {{
        {" ".join(f"long {q} = b{q[1:]} + i * {st}.s6 + k * {st}.s7;" for q, st in steps)}
        {value} {combine}
      }}
    }}
    out[g] = ({r})acc;
    return;
  }}
  for (long j = j0; j < j1; j++) {{
    {" ".join(f"long {q} = b{q[1:]};" for q, _ in steps)}
    {codegen.unravel("j", "rshape", "ndr", steps)}
    {value} {combine}
  }}
  out[g] = ({r})acc;
}}
"""


def _fused_args(x, plan, axes):
    """Kernel arguments after ndr/rshape for a fused reduce, or None when the merged
    layout needs more dims than a long8 holds (then x is computed first)."""
    from .launch import _scalar, broadcast_strides
    leaves, in_dtypes = plan[0], plan[1]
    arrays = [v for v in leaves if isinstance(v, CLArray)]
    strides = [broadcast_strides(v, x.shape) for v in arrays]
    kept = [d for d in range(x.ndim) if d not in axes]
    kshape, kst = codegen.collapse([x.shape[d] for d in kept],
                                   [[st[d] for d in kept] for st in strides])
    rshape, rst = codegen.collapse([x.shape[d] for d in axes],
                                   [[st[d] for d in axes] for st in strides])
    if len(kshape) > codegen.MAXDIM or len(rshape) > codegen.MAXDIM:
        return None
    args, k = [], 0
    for v, dt in zip(leaves, in_dtypes):
        if isinstance(v, CLArray):
            args += [v.buffer, np.int64(v.offset), codegen.strides8(kst[k]),
                     codegen.strides8(rst[k])]
            k += 1
        else:
            args.append(_scalar(v, dt))
    return kshape, rshape, args


def _colsum_source(dt: str) -> str:
    t = CTYPE[dt]
    return f"""
__kernel void colsum(long nout, long nred, __global const {t}* x, long xo,
                     __global {t}* out) {{
  /* VEC outputs a work-item, the rows added in order (NumPy's order for this layout) */
  long g = get_global_id(0) * 8;
  if (g >= nout) return;
  __global const {t}* p = x + xo + g;
  {t}8 acc = vload8(0, p);
  for (long j = 1; j < nred; j++) acc += vload8(0, p + j * nout);
  vstore8(acc, 0, out + g);
}}
"""


def _colsum(x: CLArray, kshape, kst, rshape, rst, out_shape, out_dtype):
    """A float32 sum over the leading dims of a row-major (rows, columns) layout, in 8-wide
    vectors: one work-item per output walked a column ~7x slower on PoCL (a convolution's
    weight gradient summed over the batch), or None where this does not apply."""
    nout, nred = numel(kshape), numel(rshape)
    dt = x.dtype.name
    if (dt != "float32" or out_dtype.name != dt or len(kshape) != 1 or
            kst != (1,) or len(rshape) != 1 or rst != (nout,) or nout % 8 or nout < 64
            or not 1 <= nred <= CHUNK):
        return None
    rt = x.runtime
    out = rt.empty(out_shape, out_dtype)
    kernel = rt.kernel(("colsum", dt), lambda: _colsum_source(dt), "colsum")
    rt.launch(kernel, nout // 8, np.int64(nout), np.int64(nred), x.buffer,
              np.int64(x.offset), out.buffer, local=min(64, rt.local_size), fresh=True)
    return out


def _reduce(op: str, x: CLArray, axes, out_shape, out_dtype) -> CLArray:
    from . import fusion
    rt = x.runtime
    nout = numel(out_shape)
    nred = numel([x.shape[d] for d in axes])
    if nout == 0:
        return rt.empty(out_shape, out_dtype)
    plan = fusion.reduce_plan(x, ("reduce", op)) if nred else None
    fused = _fused_args(x, plan, axes) if plan is not None else None
    if fused is not None:
        kshape, rshape, leaf_args = fused
    else:
        kshape, kst, rshape, rst = _split(x, axes)
        if op == "sum":
            out = _colsum(x, kshape, kst, rshape, rst, out_shape, out_dtype)
            if out is not None:
                return out
    chunk = CHUNK if nout >= TARGET_ITEMS else max(256, -(-nred * nout // TARGET_ITEMS))
    chunk = min(chunk, CHUNK)
    nchunk = max(1, -(-nred // chunk))
    dt = x.dtype.name
    if nchunk > 1:
        # partials keep the accumulator's precision (float for half)
        part_dt = {"half": D.float32}.get(CTYPE[dt], out_dtype)
        if op in ("any", "all"):
            part_dt = D.bool_
        target = rt.empty((nout, nchunk), part_dt)
    else:
        target = rt.empty(out_shape, out_dtype)
    def head():
        return [np.int64(nout * nchunk), np.int64(nred), np.int64(chunk), np.int64(nchunk),
                np.int32(len(kshape)), codegen.long8(kshape)]
    if fused is not None:
        # one kernel computes the pending elementwise tree and reduces it (fusion.py)
        leaves, in_dtypes, nodes, sig, key = plan
        out_dt = target.dtype.name
        try:
            kernel = rt.kernel((key, out_dt), lambda: _fused_source(
                op, dt, out_dt, sig, in_dtypes, fusion.source(nodes)), "reduce")
            rt.launch(kernel, nout * nchunk, *head(), np.int32(len(rshape)),
                      codegen.long8(rshape), *leaf_args, target.buffer, local=64, fresh=True)
        except KernelBuildError as exc:
            fusion.rejected(rt, key, exc, "reduction", "computing its input first")
            fused = None
            kshape, kst, rshape, rst = _split(x, axes)
    if fused is None:
        out_dt = target.dtype.name
        pkey = ("reduce", dt, out_dt)
        seen = rt.dense_elements.get((pkey, op), 0)
        # the one generic kernel until hot (launch.py); complex has none (_family)
        cold = seen < rt.hot_elements and dt not in codegen.COMPLEX
        if cold:
            rt.dense_elements[(pkey, op)] = seen + nout * nred
        if cold:
            kernel = rt.kernel(("reduce-cold", dt, out_dt),
                               lambda: _cold_source(dt, out_dt), "reduce_cold")
        else:
            kernel = rt.kernel(pkey, lambda: _family(dt, out_dt), f"reduce_{op}")
        rt.launch(kernel, nout * nchunk, *head(), codegen.strides8(kst), np.int32(len(rshape)),
                  codegen.long8(rshape), codegen.strides8(rst), x.buffer, np.int64(x.offset),
                  target.buffer, *((_OP_NUMBER[op],) if cold else ()), local=64, fresh=True)
    if nchunk > 1:
        # the partials reduce with the same op (a sum of sums, a max of maxes, ...)
        final = _reduce(op, target, (1,), (nout,), out_dtype)
        return final.view(out_shape, None, final.offset)
    return target


def reduction(op: str):
    def kernel(x: CLArray, *, axes, keepdims) -> CLArray:
        axes = tuple(axes)
        out_dtype = D.bool_ if op in ("any", "all") else x.dtype
        if op in ("any", "all") and x.dtype.category == D.COMPLEX:
            from .elementwise import binary
            x = binary("ne")(x, 0)          # nonzero parts: one fused kernel with the reduce
        if not axes:
            # a 0-d input: the value itself (any/all as bool; sum/prod arrive cast by the core)
            return cast(x, dtype=out_dtype) if out_dtype is not x.dtype else contiguous(x)
        return _reduce(op, x, axes, _out_shape(x.shape, axes, keepdims), out_dtype)
    kernel.__name__ = op
    return kernel


def arg_reduction(op: str):
    def kernel(x: CLArray, *, axis, keepdims) -> CLArray:
        rt = x.runtime
        axes = tuple(range(x.ndim)) if axis is None else (axis,)
        out_shape = () if axis is None else _out_shape(x.shape, axes, keepdims)
        out = rt.empty(out_shape, D.int64)
        nout = numel(out_shape)
        if nout == 0:
            return out
        kshape, kst, rshape, rst = _split(x, axes)
        dt = x.dtype.name
        k = rt.kernel(("arg", dt), lambda: _arg_family(dt), f"arg_{op}")
        rt.launch(k, nout, np.int64(nout), np.int64(numel([x.shape[d] for d in axes])),
                  np.int32(len(kshape)), codegen.long8(kshape), codegen.strides8(kst),
                  np.int32(len(rshape)), codegen.long8(rshape), codegen.strides8(rst),
                  x.buffer, np.int64(x.offset), out.buffer, local=64, fresh=True)
        return out
    kernel.__name__ = op
    return kernel


def table() -> dict:
    out = {op: reduction(op) for op in OPS}
    out.update(argmax=arg_reduction("argmax"), argmin=arg_reduction("argmin"))
    return out
