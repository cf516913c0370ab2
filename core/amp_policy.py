"""Autocast's casting policy (torch.amp's op lists) and the casts it makes.

Inside an enabled `ember.autocast(device_type, dtype)` region, an op on tensors of that
device type runs as torch's autocast runs it:

- lower precision (LOWER): matmul, linear, conv, bmm, addmm, baddbmm, addbmm, prelu,
  scaled_dot_product_attention, ...: every float16/bfloat16/float32 tensor argument is
  cast to the region's dtype (float64 ones are left alone), so the result is in it;
- float32 (FP32): the losses, cdist, the linalg decompositions, prod, reflect/replicate
  padding (cpu); softmax, log_softmax, layer_norm, group_norm, the losses, cdist, ... (gpu):
  float16/bfloat16 arguments are cast to float32;
- promote (PROMOTE): dot, bilinear, tensordot, atan2, ... (gpu): floating arguments are
  cast to the widest floating dtype among them (and the region's dtype); cat and stack
  promote by ember's own rules;
- NATIVE: ops that torch runs as one kernel in its inputs' dtypes but ember builds from
  listed ops (dot from matmul, GRU from linear): they run with autocast off inside, so
  their result stays in the inputs' dtype, as torch's;
- BANNED: binary_cross_entropy on GPUs (torch refuses it there: use the logits form).

Everything else runs in its inputs' dtypes (ember's type promotion: float32 + bfloat16 is
float32, as torch's).  The tables below are torch's lists (aten/src/ATen/autocast_mode.cpp,
the AutocastCPU and AutocastCUDA kernels) under ember's names; `cpu` uses the CPU lists
and every other device type (cuda, rocm, opencl, ...) the CUDA lists (see GPU for the
primitives ember leaves out there).

Where the cast happens: ops declared in core/ops (matmul, linear, the decompositions)
through the dispatcher (dispatch.py checks `_amp`, one global read while no thread is in
a region); composites in a table (conv2d, the losses, addmm, ...) through two lines at the
top of their function (`if _amp and amp_policy.on(...)`), which hand the call to `call`
here.  A listed op's own body then runs with autocast off, as torch's autocast kernel
redispatches below itself.

Casts of weights (float32 leaves that require grad, cast to the lower dtype while grad
mode is on) are cached per thread until the outermost autocast region exits, as torch's
cache is (`cache_enabled=False` turns it off, and graph capture does not use it); a
weight written in place inside the region is cast again.  Backward passes run the
gradient rules under whatever autocast state the thread is in when backward() is called,
as torch's do, and each gradient arrives in its input's dtype (so a float32 weight gets a
float32 .grad).

How the CPU backend computes the lower dtypes: bfloat16 ops are computed in float32 and
rounded to bfloat16 (NumPy has no bfloat16 arithmetic; backend flag upcast_bfloat16);
float16 linear runs float32 BLAS on the widened operands and rounds once, other float16
products (matmul, conv, bmm) NumPy's float16 loops, which accumulate in float32 too.  The
results are torch's dtypes and roundings (torch accumulates these products in float32),
up to summation order; the speed is float32's plus the casts for bfloat16 and float16
linear, and about 8x float32 BLAS's time for NumPy's float16 matmul loops: CPU autocast
saves no time in ember, it gives torch's dtypes.
"""
from __future__ import annotations

import threading

from . import dispatch
from . import dtypes as D
from .errors import AutocastError
from .tensor import Tensor

LOWER, FP32, PROMOTE, NATIVE, BANNED = "lower", "fp32", "promote", "native", "banned"

# (torch's lists also name multilabel_margin_loss, which ember does not have yet)
_LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
           "triplet_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "cosine_embedding_loss", "multi_margin_loss")
# (torch's lists also name conv3d, conv_transpose1d/3d, which ember does not have yet)
_LOWER_BOTH = ("matmul", "linear", "conv1d", "conv2d", "conv_transpose2d", "addmm",
               "baddbmm", "addbmm", "prelu", "scaled_dot_product_attention")


def _pad_cpu(args, kwargs):
    """reflection_pad1d/2d and replication_pad1d/2d/3d are float32 ops on the CPU."""
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    pads = kwargs.get("pad", args[1] if len(args) > 1 else ())
    dims = len(pads) // 2
    if (mode == "reflect" and dims in (1, 2)) or (mode == "replicate" and dims in (1, 2, 3)):
        return FP32
    return None


def _unless_dtype(args, kwargs):
    """softmax/log_softmax on GPUs: float32 unless the call names a dtype (torch's
    fp32_set_opt_dtype)."""
    dtype = kwargs.get("dtype", args[2] if len(args) > 2 else None)
    return FP32 if dtype is None else None


# torch's AutocastCPU lists, under ember's names
CPU = {
    **dict.fromkeys(_LOWER_BOTH, LOWER),
    **dict.fromkeys(_LOSSES + ("binary_cross_entropy", "prod", "cdist", "trace", "pinverse"),
                    FP32),
    # the declared linalg kernels (torch: linalg_inv, linalg_solve, linalg_cholesky,
    # linalg_eigh, linalg_eigvalsh, linalg_svd, linalg_svdvals, linalg_qr; and inverse,
    # cholesky, svd, qr, which ember's are made of)
    **dict.fromkeys(("inv", "solve", "cholesky", "eigh", "eigvalsh", "svdvals", "svd_u",
                     "svd_vh", "qr_q", "qr_r"), FP32),
    "pad": _pad_cpu,
    # torch's promote ops here, cat, stack and index_copy, need nothing: ember's own type
    # promotion gives the widest dtype (torch refuses float16 with bfloat16 there)
    # one native kernel in torch, built from matmul (or linear) in ember
    **dict.fromkeys(("mv", "dot", "addmv", "bilinear", "adaptive_avg_pool2d", "gru",
                     "lstm_cell", "gru_cell"), NATIVE),
}

# torch's AutocastCUDA lists: every device type but the CPU.  torch also runs these
# primitives in float32 on CUDA: exp, log, log2, log10, log1p, expm1, reciprocal, rsqrt,
# acos, asin, cosh, sinh, tan, erfinv, pow, sum, prod, cumsum, cumprod.  ember builds its
# composites (mean, var, gelu, ...) from them, where torch has native kernels, so casting
# them would turn those composites float32 too: they keep their inputs' dtype here.  So do
# the recurrent cells (torch casts their weights, which are module attributes in ember).
# addcdiv, addcmul, cross, cat, stack: ember's own type promotion gives torch's dtype.
GPU = {
    **dict.fromkeys(_LOWER_BOTH + ("mm", "bmm", "mv", "addmv", "einsum"), LOWER),
    **dict.fromkeys(_LOSSES + ("layer_norm", "group_norm", "rms_norm", "softplus",
                               "cosine_similarity", "dist", "cdist", "logsumexp",
                               "interpolate"), FP32),
    "softmax": _unless_dtype, "log_softmax": _unless_dtype,
    **dict.fromkeys(("atan2", "bilinear", "dot", "index_put", "scatter_add", "tensordot"),
                    PROMOTE),
    "adaptive_avg_pool2d": NATIVE,
    "binary_cross_entropy": BANNED,
}

_BANNED_MESSAGE = (
    "binary_cross_entropy under autocast on {device}: torch.nn.functional."
    "binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast. Many models use a "
    "sigmoid layer right before the binary cross entropy layer. In this case, combine the "
    "two layers using torch.nn.functional.binary_cross_entropy_with_logits or "
    "torch.nn.BCEWithLogitsLoss. binary_cross_entropy_with_logits and BCEWithLogits are "
    "safe to autocast.")

# the dispatcher's view: the thread idents with an enabled region (the set is dispatch's
# own, filled and emptied here), and the op names a table names
active: set = dispatch._amp
_ident = threading.get_ident
_LOW = (D.float16, D.bfloat16, D.float32)


class _State(threading.local):
    """This thread's autocast: regions by device type, nesting, suspension, weight cache."""

    def __init__(self):
        self.regions: dict = {}       # device type -> (enabled, dtype, cache_enabled)
        self.nesting = 0              # autocast regions entered and not left (any type)
        self.suspended = 0            # > 0 while a listed op's body runs
        self.skip = None              # a function name whose own check lets one call by
        self.cache: dict = {}         # (id(weight), dtype) -> (weight, version, cast)
        self.dtypes: dict = {}        # device type -> dtype set by set_autocast_dtype


_state = _State()


def _sync() -> None:
    st = _state
    if not st.suspended and any(r[0] for r in st.regions.values()):
        active.add(_ident())
    else:
        active.discard(_ident())


# --- regions (core/amp.py's autocast) ------------------------------------------------------

def enter(device_type: str, enabled: bool, dtype, cache_enabled: bool):
    """Open a region; returns what exit() needs to put back."""
    st = _state
    previous = st.regions.get(device_type)
    st.regions[device_type] = (enabled, dtype, cache_enabled)
    st.nesting += 1
    _sync()
    return previous


def exit(device_type: str, previous) -> None:  # noqa: A001  (the pair of enter)
    st = _state
    if previous is None:
        st.regions.pop(device_type, None)
    else:
        st.regions[device_type] = previous
    st.nesting -= 1
    if st.nesting == 0:
        st.cache.clear()           # torch clears its cast cache as the outermost region exits
    _sync()


def set_dtype(device_type: str, dtype) -> None:
    """torch.set_autocast_dtype on this thread: the innermost region's dtype for
    device_type (until it exits), or outside any, the dtype regions take by default."""
    st = _state
    current = st.regions.get(device_type)
    if current is not None:
        st.regions[device_type] = (current[0], dtype, current[2])
    else:
        st.dtypes[device_type] = dtype


def set_default(device_type: str):
    """The dtype set_autocast_dtype gave device_type outside regions, or None."""
    return _state.dtypes.get(device_type)


def region(device_type: str):
    """(enabled, dtype, cache_enabled) of the innermost region for device_type, or None."""
    return _state.regions.get(device_type)


def state_key() -> tuple:
    """This thread's enabled regions as a hashable key ((device type, dtype name, cache),
    ...): ember.compile guards on it, as torch's compile guards on the autocast state."""
    regions = _state.regions
    if not regions:
        return ()
    return tuple(sorted((d, r[1].name, r[2]) for d, r in regions.items() if r[0]))


# --- the casts ----------------------------------------------------------------------------

def on(name: str | None = None) -> bool:
    """Whether this thread casts now (called after the caller's `if _amp` check); a function
    that `call` runs as it is passes its own name and is let through once."""
    st = _state
    if name is not None and st.skip == name:
        st.skip = None
        return False
    return _ident() in active


def _device_type(args, kwargs):
    for a in (*args, *kwargs.values()):
        if type(a) is Tensor:
            return a._device.type
        if isinstance(a, (list, tuple)):
            for b in a:
                if type(b) is Tensor:
                    return b._device.type
    return None


def _kind(name: str, device_type, args, kwargs):
    if device_type is None:
        return None, None
    r = _state.regions.get(device_type)
    if r is None or not r[0]:
        return None, None
    kind = (CPU if device_type == "cpu" else GPU).get(name)
    if callable(kind):
        kind = kind(args, kwargs)
    return kind, r


def _eligible(x, device_type) -> bool:
    return type(x) is Tensor and x._dtype in _LOW and x._device.type == device_type


def _cast(x: Tensor, dtype, r, lower: bool) -> Tensor:
    if x._dtype is dtype:
        return x
    st = _state
    # not while a graph is captured (ember.compile): a replay must cast the weight it
    # reads now, not hold on to a cast of it (torch's compile turns the cache off too)
    cacheable = (lower and r[2] and x._dtype is D.float32 and x.requires_grad and
                 x.grad_fn is None and Tensor._capture is None and dispatch.is_grad_enabled())
    if cacheable:
        hit = st.cache.get((id(x), dtype))
        if hit is not None and hit[0] is x and hit[1] == x._version:
            return hit[2]
    out = dispatch.run(dispatch._cast_op, x, dtype=dtype)
    if cacheable:
        st.cache[(id(x), dtype)] = (x, x._version, out)
    return out


def _target(kind, r, values, device_type):
    if kind == LOWER:
        return r[1]
    if kind == FP32:
        return D.float32
    widest = r[1]                                   # PROMOTE: from the region's dtype up
    for x in values:
        if type(x) is Tensor and x._device.type == device_type and \
                x._dtype.category == D.FLOAT:
            widest = D.promote_types(widest, x._dtype)
    return widest


def _cast_all(kind, r, args, kwargs, device_type):
    flat = [*args, *kwargs.values()]
    flat += [b for a in flat if isinstance(a, (list, tuple)) for b in a]
    dtype = _target(kind, r, flat, device_type)
    lower = kind == LOWER

    def one(a):
        if _eligible(a, device_type):
            return _cast(a, dtype, r, lower)
        if isinstance(a, (list, tuple)) and any(type(b) is Tensor for b in a):
            return type(a)(one(b) for b in a)
        return a
    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _suspended(fn, args, kwargs):
    st = _state
    st.suspended += 1
    _sync()
    try:
        return fn(*args, **kwargs)
    finally:
        st.suspended -= 1
        _sync()


def call(name: str, fn, *args, **kwargs):
    """A composite `name` (conv2d, mse_loss, addmm, ...) called inside a region: cast its
    arguments as its table says and run it with autocast off, or let it run as it is."""
    device_type = _device_type(args, kwargs)
    kind, r = _kind(name, device_type, args, kwargs)
    if kind is None:
        _state.skip = name                # not listed for this device: its ops autocast
        return fn(*args, **kwargs)
    if kind == BANNED:
        raise AutocastError(_BANNED_MESSAGE.format(device=device_type))
    if kind != NATIVE:
        args, kwargs = _cast_all(kind, r, args, kwargs, device_type)
    return _suspended(fn, args, kwargs)


def run_op(op, inputs, attrs):
    """A declared op named in a table, reached through the dispatcher inside a region."""
    device_type = _device_type(inputs, {})
    kind, r = _kind(op.name, device_type, inputs, attrs)
    if kind is not None and kind != NATIVE:
        inputs, _ = _cast_all(kind, r, inputs, {}, device_type)
    return _suspended(lambda: dispatch.run(op, *inputs, **attrs), (), {})


# the table entries that are declared ops (core/ops), cast where they dispatch; every other
# entry is a function that checks itself (tests/nn/test_amp.py keeps both true)
OPS = frozenset({"matmul", "linear", "prod", "inv", "solve", "cholesky",
                 "eigh", "eigvalsh", "svdvals", "svd_u", "svd_vh", "qr_q", "qr_r",
                 "index_put", "scatter_add", "atan2"})

dispatch.use_autocast(OPS, run_op)
