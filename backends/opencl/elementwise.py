"""Elementwise kernels: operands broadcast through strides, one build per op and dtypes.

Every program holds, for each array/scalar signature of the op, dense variants (all
operands in one layout: `out[i] = f(a[i])`, which PoCL vectorises across work-items; a
vector form with 8 elements per work-item) and a strided variant (3-D launch over shape and
strides). The ops themselves are deferred and fused (fusion.py); `launch` runs one.
"""
from __future__ import annotations

import math

import numpy as np
from ember import dtypes as D
from ember import ops
from ember.backends.array_api import OVERLAP, overlapping

from . import codegen
from .codegen import BINARY, COMPUTE, CTYPE, UNARY  # the op names: codegen's table keys
from .fusion import LazyArray, assign_into, defer
from .runtime import CLArray, max_dims_error, numel

# which ops give bool results: from their declarations' dtype rule
BOOL_OUT = frozenset(name for name in UNARY + BINARY if ops.REGISTRY[name].rule == "bool")


VEC = 8     # elements per work-item in the vector variant
# outputs from this size on are stored non-temporally on CPU devices: they would not stay
# in the cache anyway, and skipping it saves reading the output's lines before writing them
NT_BYTES = 4 << 20


def _source(expr: str, in_dtypes, out_dtype: str, sigs, extra: str = "", stmts=()) -> str:
    """Kernels computing out = expr(x0, x1, ...) after `stmts`, for each signature in sigs.

    Per signature: `flat_` (dense operands, bounds-checked), `whole_` (the same for whole
    work-groups, unchecked), `strided_` (a 3-D launch over shape and strides, see
    codegen.grid_unravel) and `vec_`/`vecnt_` (dense operands at offsets that are multiples
    of VEC: each work-item loads VEC-wide vectors, runs the scalar code per component and
    stores one vector; `vecnt_` stores it non-temporally, for outputs larger than the cache).
    Measured on PoCL (1 thread, a*b+c on 4M float32): one element per work-item ran at NumPy's
    speed, the vector form with the non-temporal store at 0.6-0.7x NumPy's time."""
    r = CTYPE[out_dtype]
    parts = [extra, _NT_STORE]
    body_code = list(stmts) + [f"res_ = ({r})({expr});"]
    for sig in sigs:
        for strided in (False, True):
            head = ["long n"]
            if strided:
                head += ["int nd", "long8 shape"]
            head += [f"__global {r}* out", "long fo"] + (["long8 so"] if strided else [])
            loads, targets = [], [("o_", "so")]
            for j, (kind, dt) in enumerate(zip(sig, in_dtypes)):
                c = COMPUTE[dt]
                if kind == "S":
                    head.append(f"{c} v{j}")
                    loads.append(f"{c} x{j} = v{j};")
                    continue
                head += [f"__global const {CTYPE[dt]}* p{j}", f"long f{j}"]
                if strided:
                    head.append(f"long8 s{j}")
                    targets.append((f"q{j}", f"s{j}"))
                    loads.append(f"{c} x{j} = ({c})p{j}[q{j}];")
                else:
                    loads.append(f"{c} x{j} = ({c})p{j}[f{j} + i];")
            if strided:
                body = ["long o_ = fo; " + " ".join(
                    f"long {q} = f{q[1:]};" for q, _ in targets[1:]),
                    codegen.grid_unravel("shape", "nd", targets)]
                store = "out[o_]"
            else:
                body = ["long i = get_global_id(0);", "if (i >= n) return;"]
                store = "out[fo + i]"
            body += [f"{r} res_;", "{"] + loads + body_code + ["}", f"{store} = res_;"]
            name = f"{'strided' if strided else 'flat'}_{sig}"
            parts.append(f"__kernel void {name}({', '.join(head)}) {{\n  "
                         + "\n  ".join(body) + "\n}")
            if strided:
                continue
            # whole work-groups skip the bounds check (it keeps PoCL from vectorising)
            parts.append(f"__kernel void whole_{sig}({', '.join(head)}) {{\n  "
                         + "\n  ".join(body[:1] + body[2:]) + "\n}")
            # the vector variants: same arguments, VEC elements per work-item, no bounds check
            vbody = ["long i = get_global_id(0) * VEC;"]
            for j, (kind, dt) in enumerate(zip(sig, in_dtypes)):
                if kind == "A":
                    vt = f"{CTYPE[dt]}{VEC}"
                    vbody.append(f"{vt} w{j} = *(__global const {vt}*)(p{j} + f{j} + i);")
            vbody.append(f"{r}{VEC} res_v;")
            for k in range(VEC):
                lane = []
                for j, (kind, dt) in enumerate(zip(sig, in_dtypes)):
                    c = COMPUTE[dt]
                    lane.append(f"{c} x{j} = v{j};" if kind == "S"
                                else f"{c} x{j} = ({c})w{j}.s{k:x};")
                lane += [f"{r} res_;"] + body_code + [f"res_v.s{k:x} = res_;"]
                vbody.append("{ " + " ".join(lane) + " }")
            for variant, st in (("vec", "*(__global {r}{V}*)(out + fo + i) = res_v;"),
                                ("vecnt", "STORE_NT(res_v, (__global {r}{V}*)(out + fo + i));")):
                vstore = st.format(r=r, V=VEC)
                parts.append(f"__kernel void {variant}_{sig}({', '.join(head)}) {{\n  "
                             + "\n  ".join(vbody + [vstore]) + "\n}")
    return "\n".join(parts)


# clang's non-temporal store where the compiler has it (PoCL), a plain store elsewhere
_NT_STORE = f"""#define VEC {VEC}
#ifdef __has_builtin
#if __has_builtin(__builtin_nontemporal_store)
#define EMBER_HAS_NT 1
#endif
#endif
#ifdef EMBER_HAS_NT
#define STORE_NT(v, p) __builtin_nontemporal_store((v), (p))
#else
#define STORE_NT(v, p) (*(p) = (v))
#endif
"""


def _scalar(value, dtype: str):
    """A Python scalar as the kernel's compute type (binary() has refused integers out of
    the dtype's range)."""
    c = COMPUTE[dtype]
    if dtype == "bool":
        return np.uint8(bool(value))
    if c == "float":
        with np.errstate(over="ignore"):   # 1e300 becomes inf, as in PyTorch
            return np.float32(value)
    if c == "double":
        return np.float64(value)
    return np.array(int(value)).astype(D.get_dtype(dtype).np)[()]


def broadcast_strides(x: CLArray, shape) -> tuple:
    lead = len(shape) - x.ndim
    return tuple(0 if (i < lead or x.shape[i - lead] == 1) else x.strides[i - lead]
                 for i in range(len(shape)))


def broadcast_shape(arrays) -> tuple:
    nd = max((a.ndim for a in arrays), default=0)
    out = [1] * nd
    for a in arrays:
        for i, n in enumerate(a.shape, nd - a.ndim):
            if n != 1:
                out[i] = n
    return tuple(out)


def launch(op: str, runtime, key, expr_fn, operands, in_dtypes, out: CLArray, sigs) -> CLArray:
    """Compute out[...] = expr(operands...) where operands are CLArrays or scalars."""
    n = out.size
    if n == 0:
        return out
    sig = "".join("A" if isinstance(v, CLArray) else "S" for v in operands)
    full_key = (key, tuple(in_dtypes), out.dtype.name)

    def make():
        expr, extra, *stmts = expr_fn()       # fused trees bring statements (fusion.py)
        return _source(expr, in_dtypes, out.dtype.name, sigs, extra, *stmts)

    arrays = [v for v in operands if isinstance(v, CLArray)]
    strides = [out.strides] + [broadcast_strides(a, out.shape) for a in arrays]
    shape, collapsed = codegen.collapse(out.shape, strides)
    flat = len(shape) == 1 and (shape[0] == 1 or all(s[0] == 1 for s in collapsed))
    if len(shape) > codegen.MAXDIM:
        raise max_dims_error(op, shape)
    kernel = runtime.kernel(full_key, make, f"{'strided' if not flat else 'flat'}_{sig}")
    args = [np.int64(n)]
    if not flat:
        args += [np.int32(len(shape)), codegen.long8(shape)]
    args += [out.buffer, np.int64(out.offset)]
    if not flat:
        args.append(codegen.strides8(collapsed[0]))
    k = 1
    for v, dt in zip(operands, in_dtypes):
        if isinstance(v, CLArray):
            args += [v.buffer, np.int64(v.offset)]
            if not flat:
                args.append(codegen.strides8(collapsed[k]))
            k += 1
        else:
            args.append(_scalar(v, dt))
    size = runtime.local_size
    if flat and n >= size:
        # whole work-groups run a kernel without the bounds check (the check keeps PoCL
        # from vectorising: measured 2x slower), the guarded kernel takes the rest
        if n >= VEC * size and out.offset % VEC == 0 and all(
                v.offset % VEC == 0 for v in arrays):
            step = VEC * size
            variant = "vecnt" if (runtime.is_cpu and out.size * out.dtype.itemsize
                                  >= NT_BYTES) else "vec"
            whole = n // step * step
            runtime.launch(runtime.kernel(full_key, make, f"{variant}_{sig}"), whole // VEC,
                           *args)
        else:
            whole = n // size * size
            runtime.launch(runtime.kernel(full_key, make, f"whole_{sig}"), whole, *args)
        if whole < n:
            runtime.launch(kernel, n - whole, *args, offset=whole)
    elif flat:
        runtime.launch(kernel, n, *args)
    else:
        launch_grid(runtime, kernel, shape, args)
    return out


def launch_grid(runtime, kernel, shape, args) -> None:
    """Launch a kernel written with codegen.grid_unravel over a collapsed shape."""
    inner = shape[-1]
    # three work-group sizes at most: PoCL compiles a kernel once per work-group size
    local = 16 if inner <= 16 else 64 if inner <= 64 else 256
    local = min(local, runtime.local_size)
    runtime.launch_nd(kernel, (-(-inner // local) * local,
                               shape[-2] if len(shape) > 1 else 1,
                               numel(shape[:-2])), (local, 1, 1), *args)


def _runtime_of(operands):
    for v in operands:
        if isinstance(v, CLArray):
            return v.runtime
    raise TypeError("expected at least one OpenCL array")


def _dtype_of(operands):
    for v in operands:
        if isinstance(v, CLArray):
            return v.dtype
    raise TypeError("expected at least one OpenCL array")


def unary(op: str):
    def kernel(x: CLArray) -> CLArray:
        dt = x.dtype.name
        return defer(op, x.runtime, op, lambda: (codegen.unary_expr(op, dt), ""), [x], [dt],
                     x.shape, D.bool_ if op in BOOL_OUT else x.dtype, ["A"])
    kernel.__name__ = op
    return kernel


_COMPARE = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _any(x: CLArray) -> bool:
    """Whether any element of a bool array is true (one reduction and a 1-byte read)."""
    from .reduce import reduction
    return bool(x.runtime.to_host(reduction("any")(x, axes=tuple(range(x.ndim)),
                                                   keepdims=False)))


def _integer_checks(op: str, x, y, dtype) -> None:
    """The integer semantics of docs/semantics.md, checked when the op is called (not when
    a deferred kernel runs): // and % by zero, negative powers, out-of-range Python ints."""
    for v in (x, y):
        if isinstance(v, int) and not isinstance(v, bool) and op not in _COMPARE:
            info = np.iinfo(dtype.np)
            if not info.min <= v <= info.max:
                raise OverflowError(f"Python integer {v} out of bounds for {dtype.name}")
    if op in ("floor_divide", "remainder"):
        if y == 0 if not isinstance(y, CLArray) else _any(binary("eq")(y, 0)):
            raise ZeroDivisionError("integer division by zero; divide floats "
                                    "(x.float()) to get inf and nan instead")
    if op == "pow" and (y < 0 if not isinstance(y, CLArray) else _any(binary("lt")(y, 0))):
        raise ValueError("Integers to negative integer powers are not allowed; use a float "
                         "base or exponent (x.float() ** y)")


def _compare_out_of_range(op: str, x, y, dtype, shape):
    """An integer array compared with a Python int its dtype cannot hold: the answer is
    the same for every element (NumPy 2 compares the values; a wrapped int would not)."""
    array, number = (x, y) if isinstance(x, CLArray) else (y, x)
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    info = np.iinfo(dtype.np)
    if info.min <= number <= info.max:
        return None
    name = op if array is x else _COMPARE[op]       # 300 > x is x < 300
    above = number > info.max                       # the number is above every element
    value = {"eq": False, "ne": True, "lt": above, "le": above, "gt": not above,
             "ge": not above}[name]
    return full(array.runtime, shape=shape, value=value, dtype=D.bool_)


def binary(op: str):
    def kernel(x, y) -> CLArray:
        dtype = _dtype_of((x, y))
        dt = dtype.name
        runtime = _runtime_of((x, y))
        shape = broadcast_shape([v for v in (x, y) if isinstance(v, CLArray)])
        if dtype.category == D.INT:
            if op in _COMPARE:
                const = _compare_out_of_range(op, x, y, dtype, shape)
                if const is not None:
                    return const
            _integer_checks(op, x, y, dtype)
        elif dt == "bool" and op == "sub":
            raise TypeError("sub: subtracting bool tensors is not supported (PyTorch); use "
                            "logical_xor() or `^` instead")
        extra = codegen.helpers(dt) if op in ("pow", "remainder", "floor_divide") else ""
        return defer(op, runtime, op, lambda: (codegen.binary_expr(op, dt), extra), [x, y],
                     [dt, dt], shape, D.bool_ if op in BOOL_OUT else dtype,
                     ["AA", "AS", "SA"])
    kernel.__name__ = op
    return kernel


def where(cond: CLArray, x, y) -> CLArray:
    dtype = _dtype_of((x, y)) if any(isinstance(v, CLArray) for v in (x, y)) else None
    if dtype is None:      # both branches are scalars: the dtype is the promoted scalar's
        dtype = D.result_type(x, y)
    dt = dtype.name
    shape = broadcast_shape([v for v in (cond, x, y) if isinstance(v, CLArray)])
    return defer("where", cond.runtime, "where", lambda: ("x0 ? x1 : x2", ""),
                 [cond, x, y], ["bool", dt, dt], shape, dtype, ["AAA", "AAS", "ASA", "ASS"])


def _cast_expr(src: str, dst: str) -> str:
    if dst == "bool":
        return "(uchar)(x0 != 0)"
    return f"({COMPUTE[dst]})x0"


def cast(x: CLArray, *, dtype) -> CLArray:
    return defer("cast", x.runtime, "cast", lambda: (_cast_expr(x.dtype.name, dtype.name), ""),
                 [x], [x.dtype.name], x.shape, dtype, ["A"])


def assign(dst: CLArray, src) -> None:
    """dst[...] = src in place (src broadcast, or a scalar), converting dtypes."""
    if overlapping(dst):
        raise ValueError(OVERLAP)
    if isinstance(src, LazyArray) and src.node is not None and assign_into(dst, src):
        return                         # src's pending ops ran as one kernel into dst
    if isinstance(src, CLArray) and src.buffer is dst.buffer:
        src = contiguous(src)          # overlapping views (x[1:] = x[:-1]): read, then write
    src_dt = src.dtype.name if isinstance(src, CLArray) else dst.dtype.name
    launch("assign", dst.runtime, "copy", lambda: (_cast_expr(src_dt, dst.dtype.name), ""),
           [src], [src_dt], dst, ["A", "S"])


def contiguous(x: CLArray) -> CLArray:
    out = x.runtime.empty(x.shape, x.dtype)
    assign(out, x)
    return out


def full(runtime, *, shape, value, dtype) -> CLArray:
    out = runtime.empty(shape, dtype)
    if dtype.category != D.FLOAT and isinstance(value, float):
        value = int(value) if math.isfinite(value) else 0
    assign(out, value)
    return out


def arange(runtime, *, start, stop, step, dtype) -> CLArray:
    n = max(0, math.ceil((stop - start) / step))
    out = runtime.empty((n,), dtype)
    t = CTYPE[dtype.name]
    if dtype.category == D.FLOAT:
        # computed in double where the device has it, as NumPy does, then rounded once
        c = "double" if runtime.fp64 else "float"
        args = [np.float64(start), np.float64(step)] if runtime.fp64 else [
            np.float32(start), np.float32(step)]
    else:
        c = "long"
        args = [np.int64(start), np.int64(step)]

    def make():
        return (f"__kernel void arange(long n, __global {t}* out, {c} start, {c} step) {{\n"
                f"  long i = get_global_id(0); if (i >= n) return;\n"
                f"  out[i] = ({t})(start + ({c})i * step);\n}}")
    kernel = runtime.kernel(("arange", dtype.name, c), make, "arange")
    runtime.launch(kernel, n, np.int64(n), out.buffer, *args)
    return out


def table() -> dict:
    out = {name: unary(name) for name in UNARY}
    out.update({name: binary(name) for name in BINARY})
    out.update(where=where, cast=cast, assign=assign, contiguous=contiguous)
    return out
