"""Running one elementwise program: its OpenCL C source per operand signature, the variant
(dense, vector, strided) that fits the operands, and the launch.

The layer below fusion.py (which defers and fuses ops into such programs) and
elementwise.py (the ops): runtime -> launch -> fusion -> elementwise.
"""
from __future__ import annotations

import functools

import numpy as np
from ember import dtypes as D
from ember import ops as _ops

from . import codegen
from .codegen import COMPLEX, COMPUTE, CTYPE, FLOATS
from .runtime import CLArray, KernelBuildError, max_dims_error, numel

VEC = 8     # elements per work-item in the vector variant
# outputs from this size on are stored non-temporally on CPU devices: they would not stay
# in the cache anyway, and skipping it saves reading the output's lines before writing them
NT_BYTES = 4 << 20
# Cold tier: a dense (program, signature) runs its one bounds-checked `flat_` kernel until
# it has processed runtime.hot_elements elements (runtime.hot_elements() says why, and the
# knob); only then are the faster `whole_`/`vec_` variants compiled and used.


def _source(expr: str, in_dtypes, out_dtype: str, sigs, extra: str = "", stmts=(),
            generic_only: bool = False) -> str:
    """Kernels computing out = expr(x0, x1, ...) after `stmts`, for each signature in sigs.

    Per signature: `flat_` (dense operands, bounds-checked), `whole_` (the same for whole
    work-groups, unchecked), `strided_` (a 3-D launch over shape and strides, see
    codegen.grid_unravel) and `vec_`/`vecnt_` (dense operands at offsets that are multiples
    of VEC: each work-item loads VEC-wide vectors, runs the scalar code per component and
    stores one vector; `vecnt_` stores it non-temporally, for outputs larger than the cache).
    Measured on PoCL (1 thread, a*b+c on 4M float32): one element per work-item ran at NumPy's
    speed, the vector form with the non-temporal store at 0.6-0.7x NumPy's time."""
    r = CTYPE[out_dtype]
    # complex pairs (float2) have no 8-wide vector type: no vec_ variants for them
    if out_dtype in COMPLEX or any(dt in COMPLEX for dt in in_dtypes):
        generic_only = generic_only or "whole"
    parts = [extra] if generic_only else [extra, _NT_STORE]
    body_code = list(stmts) + [f"res_ = ({r})({expr});"]
    for sig in sigs:
        for strided in (False, "3") if generic_only is True else (False, True, "3"):
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
                    codegen.grid_unravel("shape", "nd", targets, most3=strided == "3")]
                store = "out[o_]"
            else:
                body = ["long i = get_global_id(0);", "if (i >= n) return;"]
                store = "out[fo + i]"
            body += [f"{r} res_;", "{"] + loads + body_code + ["}", f"{store} = res_;"]
            name = f"{'strided3' if strided == '3' else 'strided' if strided else 'flat'}_{sig}"
            parts.append(f"__kernel void {name}({', '.join(head)}) {{\n  "
                         + "\n  ".join(body) + "\n}")
            if strided or generic_only is True:
                continue
            # whole work-groups skip the bounds check (it keeps PoCL from vectorising)
            parts.append(f"__kernel void whole_{sig}({', '.join(head)}) {{\n  "
                         + "\n  ".join(body[:1] + body[2:]) + "\n}")
            if generic_only:
                continue
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


# --- one program per dtype for the plain elementwise ops -----------------------------------
# Every unary and binary op of one dtype (with `where` and the same-dtype copy) is one
# program holding each op's generic kernels, `<op>__flat_<sig>` and `<op>__strided3_<sig>`
# (layouts of up to 3 merged dims; `strided_` for more comes from the op's own program):
# a PoCL build costs ~0.16 s of CPU whatever the program's size
# (measured: 6 kernels 0.16 s, 138 kernels 0.39 s), and each kernel is still compiled only
# at its first launch, so a run meeting k ops of a dtype pays one build instead of k. The
# faster variants (whole_, vec_, vecnt_) come from the op's own program, built once the op
# is hot (runtime.hot_elements). A family the compiler rejects falls back to the per-op
# programs. The ops with kernels of their own (_OWN_KERNEL, complex) are a second program
# of the dtype (_own_source), built when one of them is first met.
_FAMILY_SIGS = {1: ("A",), 2: ("AA", "AS", "SA"), 3: ("AAA", "AAS", "ASA", "ASS")}


def _family_members(dt: str) -> dict:
    """{(key, in_dtypes, out dtype): (expression, sigs)} of dtype dt's elementwise program."""
    members = {}
    flt = dt in FLOATS or dt in COMPLEX
    for op in codegen.UNARY + codegen.BINARY:
        rule = _ops.REGISTRY[op].rule
        if rule == "float" and not flt:      # the core casts integers to float first
            continue
        out = "bool" if rule == "bool" else dt
        try:
            if op in codegen.UNARY:
                members[(op, (dt,), out)] = (codegen.unary_expr(op, dt), ("A",))
            else:
                members[(op, (dt, dt), out)] = (codegen.binary_expr(op, dt),
                                                _FAMILY_SIGS[2])
        except TypeError:            # no kernel for this dtype (bitwise ops on floats)
            continue
    members[("where", ("bool", dt, dt), dt)] = ("x0 ? x1 : x2", _FAMILY_SIGS[3])
    members[("copy", (dt,), dt)] = (_cast_expr(dt, dt), ("A", "S"))
    # conversions into dt from the common dtypes (a cast of a comparison's result, an
    # assignment across dtypes): in dt's program, not one program per pair. Not from
    # float16/float64, whose pragmas a device without them would refuse for the program.
    for src in _CAST_FROM:
        if src != dt:
            members[("cast", (src,), dt)] = (_cast_expr(src, dt), ("A",))
            members[("copy", (src,), dt)] = (_cast_expr(src, dt), ("A", "S"))
    return members


_CAST_FROM = ("bool", "uint8", "int32", "int64", "float32")


_FAMILY: dict = {}          # full key -> its dtype's family, for every dtype met so far


def _family_of(full_key):
    found = _FAMILY.get(full_key)
    if found is None and full_key not in _FAMILY:
        in_dtypes = full_key[1] if len(full_key) == 3 else ()
        # an op's family is its last input's dtype; a conversion's, its output's
        for dt in (in_dtypes[-1] if in_dtypes else None, full_key[-1]):
            if dt in CTYPE and ("elementwise", dt) not in _FAMILY:
                _FAMILY[("elementwise", dt)] = None           # this dtype's members listed
                for member in _family_members(dt):
                    _FAMILY[member] = dt
        found = _FAMILY.setdefault(full_key, None)
    return found


# Cold ops share kernels: PoCL compiles each kernel at its first launch (~0.1 s of CPU,
# nearly all of it fixed: a kernel switching over 40 ops cost 0.107 s against 0.096 s for
# one op, and ran as fast). So the ops of a dtype's program with the same output dtype
# (unary and binary ops, the same-dtype copy; comparisons and tests; where; the conversions
# from one dtype) are the cases of one kernel `u<k>__flat` / `u<k>__strided3` for every
# signature: each operand slot takes a pointer, an offset (strides) and a scalar, a bit of
# `sm` says which one holds (a missing operand is a scalar), and `op` picks the case. Ops
# calling long library code (trigonometry, pow, ...) keep kernels of their own
# (`<op>__<variant>_<sig>`, the signature compiled in): in a group each would make every
# first compile of it pay for its code.
_OWN_KERNEL = frozenset({
    "sin", "cos", "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "tanh",
    "expm1", "log1p", "pow", "atan2", "remainder", "floor_divide"})


@functools.cache
def _family_groups(dt: str):
    """({full key: (kernel prefix, op number or None, slot dtypes or None)},
    [(prefix, in_dtypes, out, sigs, [expressions] or None, expression)]) of dtype dt's
    elementwise program: a group's in_dtypes are its operand slots (every member's
    operands fill the first slots); an op of its own has no op number."""
    where, groups, by_slots = {}, [], {}
    for full_key, (expr, sigs) in _family_members(dt).items():
        op, in_dtypes, out = full_key
        # complex values are float2/double2 pairs: their ops keep kernels of their own (the
        # shared cold kernels pass scalars and casts as plain numbers)
        if op in _OWN_KERNEL or out in COMPLEX or any(d in COMPLEX for d in in_dtypes):
            # a complex op's key names its operand and output dtypes (copy float32 ->
            # complex64 and complex64 -> complex64 share a family): one op name per family
            # would define `copy__flat_A` twice and fail the whole program's build
            prefix = op if not (out in COMPLEX or any(d in COMPLEX for d in in_dtypes)) \
                else f"{op}_{'_'.join(in_dtypes)}_{out}"
            where[full_key] = (prefix, None, None)
            groups.append((prefix, in_dtypes, out, sigs, None, expr))
            continue
        slots = in_dtypes if len(in_dtypes) != 1 or in_dtypes[0] != dt else (dt, dt)
        g = by_slots.get((slots, out))
        if g is None:           # a group whose first slots are these: one kernel fewer
            # (a cast from bool joins `where`, whose first operand is the bool)
            g = next((h for (s, o), h in by_slots.items()
                      if o == out and s[:len(slots)] == slots), None)
            slots = slots if g is None else g[1]
        if g is None:
            g = by_slots[(slots, out)] = (f"u{len(by_slots)}", slots, out, None, [])
            groups.append(g + (None,))
        where[full_key] = (g[0], len(g[4]), slots)
        g[4].append(expr)
    return where, groups


def _group_source(prefix: str, slots, out_dtype: str, cases) -> str:
    """A group's kernels `<prefix>__flat` and `<prefix>__strided3` (see _OWN_KERNEL)."""
    r = CTYPE[out_dtype]
    switch = ["switch (op) {"] + [f"case {k}: res_ = ({r})({e}); break;"
                                  for k, e in enumerate(cases)] + [
        f"default: res_ = ({r})0;", "}"]
    parts = []
    for strided in (False, True):
        head = ["long n"] + (["int nd", "long8 shape"] if strided else [])
        head += [f"__global {r}* out", "long fo"] + (["long8 so"] if strided else [])
        loads, targets = [], [("o_", "so")]
        for j, dt in enumerate(slots):
            c = COMPUTE[dt]
            head += [f"__global const {CTYPE[dt]}* p{j}", f"long f{j}"]
            if strided:
                head.append(f"long8 s{j}")
                targets.append((f"q{j}", f"s{j}"))
            head.append(f"{c} v{j}")
            at = f"q{j}" if strided else f"f{j} + i"
            loads.append(f"{c} x{j} = (sm & {1 << j}) ? v{j} : ({c})p{j}[{at}];")
        head += ["int sm", "int op"]
        if strided:
            body = ["long o_ = fo; " + " ".join(f"long {q} = f{q[1:]};"
                                                for q, _ in targets[1:]),
                    codegen.grid_unravel("shape", "nd", targets, most3=True)]
            store, name = "out[o_]", "strided3"
        else:
            body = ["long i = get_global_id(0);", "if (i >= n) return;"]
            store, name = "out[fo + i]", "flat"
        body += [f"{r} res_;", "{"] + loads + switch + ["}", f"{store} = res_;"]
        parts.append(f"__kernel void {prefix}__{name}({', '.join(head)}) {{\n  "
                     + "\n  ".join(body) + "\n}")
    return "\n".join(parts)


def _family_source(dt: str) -> str:
    """dtype dt's group kernels (the shared cold kernels of its plain ops): a member of
    the training bundle for float32 and int64 (bundles.py)."""
    parts = [codegen.helpers(dt)]
    for prefix, in_dtypes, out, _sigs, cases, _expr in _family_groups(dt)[1]:
        if cases is not None:
            parts.append(_group_source(prefix, in_dtypes, out, cases))
    return "\n".join(parts)


def _own_source(dt: str) -> str:
    """dtype dt's ops of their own (_OWN_KERNEL, complex), generic kernels only: a program
    apart from the groups', built when one of them is first met. In the training bundle
    they were 2/3 of its kernels and a third of its build (~0.1-0.3 s of CPU), and a
    small network meets none of them."""
    parts = [codegen.helpers(dt)]
    for prefix, in_dtypes, out, sigs, cases, expr in _family_groups(dt)[1]:
        if cases is None:
            body = _source(expr, in_dtypes, out, sigs, generic_only=True)
            parts.append(body.replace("__kernel void ", f"__kernel void {prefix}__"))
    return "\n".join(parts)


def generic_kernel(runtime, full_key, make, variant: str, sig: str):
    """(kernel, group): the generic kernel `variant`_`sig` (flat, strided, strided3) of
    the op `full_key`, from its dtype's elementwise program where it has one, else from
    the op's own program. `group` is None for a kernel taking the op's own arguments, else
    (op number, slot dtypes) for a group's kernel (group_args)."""
    dt = _family_of(full_key) if variant != "strided" else None
    if dt is not None and sig in _family_members_sigs(full_key, dt):
        prefix, number, slots = _family_groups(dt)[0][full_key]
        fkey = ("elementwise", dt) if number is not None else ("elementwise-own", dt)
        if fkey not in runtime.failed_families:
            name = f"{prefix}__{variant}" if number is not None else f"{prefix}__{variant}_{sig}"
            make_family = _family_source if number is not None else _own_source
            try:
                kernel = runtime.kernel(fkey, lambda: make_family(dt), name)
            except KernelBuildError:
                runtime.failed_families.add(fkey)    # the per-op programs still build
            else:
                return kernel, (None if number is None else (_INT32[number], slots))
    return runtime.kernel(full_key, make, f"{variant}_{sig}"), None


def group_args(group, out: CLArray, operands, strides, flat: bool, head: list) -> list:
    """A group kernel's arguments: `head` (n, [nd, shape,] out, offset[, its strides]),
    then per slot a pointer, offset, [strides,] scalar (a scalar's or a missing operand's
    pointer is `out`'s buffer, never read), then the scalar mask and the op number."""
    number, slots = group
    args, mask, k = list(head), 0, 0
    for j, dt in enumerate(slots):
        v = operands[j] if j < len(operands) else 0
        if isinstance(v, CLArray):
            args += [v.buffer, np.int64(v.offset)]
            if not flat:
                args.append(strides[k])
            args.append(_ZERO[COMPUTE[dt]])
            k += 1
        else:
            args += [out.buffer, _ZERO_LONG]
            if not flat:
                args.append(codegen.strides8(()))      # cached: zeros
            args.append(_scalar(v, dt))
            mask |= 1 << j
    args += [_INT32[mask], number]
    return args


_INT32 = [np.int32(k) for k in range(256)]
_ZERO_LONG = np.int64(0)
_ZERO = {"uchar": np.uint8(0), "char": np.int8(0), "short": np.int16(0), "int": np.int32(0),
         "long": np.int64(0), "float": np.float32(0), "double": np.float64(0)}


_SIGS: dict = {}


def _family_members_sigs(full_key, dt):
    sigs = _SIGS.get(full_key)
    if sigs is None:
        sigs = _SIGS[full_key] = _family_members(dt)[full_key][1]
    return sigs


def _scalar(value, dtype: str):
    """A Python scalar as the kernel's compute type (binary() has refused integers out of
    the dtype's range)."""
    c = COMPUTE[dtype]
    if dtype in COMPLEX:
        import pyopencl.cltypes as ct
        value = complex(value)
        with np.errstate(over="ignore"):
            return (ct.make_float2 if c == "float2" else ct.make_double2)(value.real,
                                                                         value.imag)
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
    # strided3_: the strided kernel without the unravel loop (PoCL vectorised neither the
    # loop nor the branch around it: 6 ns an element for a bias add and relu)
    variant = "flat" if flat else "strided3" if len(shape) <= 3 else "strided"
    kernel, group = generic_kernel(runtime, full_key, make, variant, sig)
    args = [np.int64(n)]
    if not flat:
        args += [np.int32(len(shape)), codegen.long8(shape)]
    args += [out.buffer, np.int64(out.offset)]
    if not flat:
        args.append(codegen.strides8(collapsed[0]))
    if group is not None:
        gargs = group_args(group, out, operands,
                           None if flat else [codegen.strides8(s) for s in collapsed[1:]],
                           flat, args)
    k = 1
    for v, dt in zip(operands, in_dtypes):
        if isinstance(v, CLArray):
            args += [v.buffer, np.int64(v.offset)]
            if not flat:
                args.append(codegen.strides8(collapsed[k]))
            k += 1
        else:
            args.append(_scalar(v, dt))
    if group is None:
        gargs = args
    size = runtime.local_size
    if flat and n >= size:
        seen = runtime.dense_elements.get((full_key, sig), 0)
        if seen < runtime.hot_elements:      # cold: the generic kernel, nothing more built
            runtime.dense_elements[(full_key, sig)] = seen + n
            runtime.launch(kernel, n, *gargs)
            return out
        # whole work-groups run a kernel without the bounds check (the check keeps PoCL
        # from vectorising: measured 2x slower), the guarded kernel takes the rest
        if n >= VEC * size and out.offset % VEC == 0 and all(
                v.offset % VEC == 0 for v in arrays) and not (
                out.dtype.category == D.COMPLEX or any(dt in COMPLEX for dt in in_dtypes)):
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
            runtime.launch(kernel, n - whole, *gargs, offset=whole)
    elif flat:
        runtime.launch(kernel, n, *gargs)
    else:
        launch_grid(runtime, kernel, shape, gargs)
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


def _cast_expr(src: str, dst: str) -> str:
    if src in COMPLEX or dst in COMPLEX:
        return codegen.complexmath.cast_expr(src, dst, COMPUTE)
    if dst == "bool":
        return "(uchar)(x0 != 0)"
    return f"({COMPUTE[dst]})x0"


