"""The semantics where NumPy and PyTorch differ, as decided in docs/semantics.md: one rule
per decision, run on every device (the rule names are the page's anchors)."""
from __future__ import annotations

import functools
import math

import numpy as np

from .rules import Rules, equal, need, raises, tensor

INTS = ("uint8", "int8", "int16", "int32", "int64")


def _ints(device):
    from .checks import supported_dtypes
    have = supported_dtypes(device)
    return [d for d in INTS if d in have]


# --- integers -----------------------------------------------------------------------------

def _divisions(x, zero):
    return [("x // y", lambda: x // zero), ("x % y", lambda: x % zero),
            ("x // 0", lambda: x // 0), ("x % 0", lambda: x % 0),
            ("remainder(x, y)", lambda: x.remainder(zero)),
            ("x //= y", lambda: x.clone().floor_divide_(zero)), ("7 // y", lambda: 7 // zero)]


def _powers(x, device, dt):
    return [("x ** -1", lambda: x ** -1),
            ("x ** y", lambda: x ** tensor([1, -2, 0], device, dt)),
            ("2 ** y", lambda: 2 ** tensor([3, -1, 0], device, dt)),
            ("x.pow_(-2)", lambda: x.clone().pow_(-2))]


RULES = Rules()
rule = RULES.rule


@rule("integer")
def integer_division_by_zero_raises(device):
    """Integer // 0 and % 0 raise ZeroDivisionError (PyTorch's CPU), never return 0."""
    for dt in _ints(device):
        x = tensor([7, 0, 5], device, dt)
        zero = tensor([1, 0, 2], device, dt)
        for what, fn in _divisions(x, zero):
            raises(ZeroDivisionError, fn, f"{what} with a zero divisor ({dt} on {device})",
                   "zero")
        one = tensor([2, 1, 3], device, dt)
        equal(x // one, np.array([3, 0, 1], dt), f"{dt} // without zeros on {device}")


@rule("integer")
def integer_negative_power_raises(device):
    """Integers to negative integer powers raise ValueError (NumPy; PyTorch for scalar
    exponents), for tensor exponents too."""
    for dt in [d for d in ("int64", "int32", "int8") if d in _ints(device)]:
        x = tensor([2, 1, -1], device, dt)
        for what, fn in _powers(x, device, dt):
            raises(ValueError, fn, f"{what} ({dt} on {device})", "negative integer power")
        equal(x ** 0, np.array([1, 1, 1], dt), f"{dt} ** 0 on {device}")
        equal(x ** tensor([3, 5, 3], device, dt), np.array([8, 1, -1], dt),
              f"{dt} ** positive on {device}")
    got = tensor([2, 4], device) ** -1.0          # a float exponent gives floats
    equal(got, np.array([0.5, 0.25], np.float32), f"int64 ** -1.0 on {device}")


@rule("integer")
def integer_overflow_wraps(device):
    """Integer arithmetic wraps around (two's complement), as in NumPy and PyTorch."""
    for dt in _ints(device):
        info = np.iinfo(dt)
        top = tensor([info.max, info.min], device, dt)
        with np.errstate(over="ignore"):
            want = np.array([info.max, info.min], dt) + np.array(1, dt)
        equal(top + 1, want, f"{dt} max + 1 on {device}")
        equal(top * tensor([2, 2], device, dt), np.array([info.max, info.min], dt) * 2,
              f"{dt} * 2 on {device}")
    if "int64" in _ints(device):
        low = tensor([-2 ** 63], device, "int64")
        equal(low.abs(), np.array([-2 ** 63]), f"abs(int64 min) on {device}")
        equal(-low, np.array([-2 ** 63]), f"-(int64 min) on {device}")
        equal(low // -1, np.array([-2 ** 63]), f"int64 min // -1 on {device}")
        equal(low % -1, np.array([0]), f"int64 min % -1 on {device}")


@rule("scalars")
def python_int_out_of_range_raises(device):
    """A Python int the tensor's integer dtype cannot hold raises OverflowError (NumPy 2)
    instead of wrapping (PyTorch wraps uint8 + 300 to 44)."""
    cases = [("uint8", 300, "add"), ("uint8", -1, "add"), ("int8", 1000, "mul"),
             ("int32", 2 ** 40, "add"), ("int64", 2 ** 70, "add"), ("uint8", -1, "floor_divide"),
             ("int16", -2 ** 20, "maximum")]
    for dt, value, op in cases:
        if dt not in _ints(device):
            continue
        x = tensor([1, 2], device, dt)
        import ember
        # torch.maximum refuses a Python number (so does ember.maximum): the rule is about
        # the primitive, which ember's own code calls with numbers
        fn = getattr(ember.ops if op == "maximum" else ember, op)
        raises(OverflowError, functools.partial(fn, x, value),
               f"{op}({dt} tensor, {value}) on {device}", "")
    x = tensor([0, 250], device, "uint8")
    equal(x - 1, np.array([255, 249], np.uint8), f"uint8 - 1 on {device} (wraps)")
    equal(x + 255, np.array([255, 249], np.uint8), f"uint8 + 255 on {device} (wraps)")


@rule("scalars")
def comparison_with_any_python_int_is_exact(device):
    """Comparing an integer tensor with a Python int outside its dtype compares the values
    (NumPy 2): uint8 == -1 is False, uint8 < 300 is True (PyTorch wraps the int first)."""
    x = tensor([0, 100, 255], device, "uint8")
    equal(x == -1, np.array([False] * 3), f"uint8 == -1 on {device}")
    equal(x != -1, np.array([True] * 3), f"uint8 != -1 on {device}")
    equal(x < 300, np.array([True] * 3), f"uint8 < 300 on {device}")
    equal(x > -1, np.array([True] * 3), f"uint8 > -1 on {device}")
    equal(x >= 256, np.array([False] * 3), f"uint8 >= 256 on {device}")
    equal(tensor([5], device, "int8") <= 1000, np.array([True]), f"int8 <= 1000 on {device}")
    equal(300 > x, np.array([True] * 3), f"300 > uint8 on {device}")


@rule("scalars")
def python_scalars_do_not_upcast(device):
    """A Python scalar (or 0-d tensor) of the tensor's kind keeps the tensor's dtype; a
    float with integers gives the default float (PyTorch's promotion)."""
    need(device, "int8")
    i8 = tensor([1, 2], device, "int8")
    for what, got, want in [
            ("int8 + 5", i8 + 5, "int8"), ("int8 ** 2", i8 ** 2, "int8"),
            ("int8 * 1.5", i8 * 1.5, "float32"), ("int8 / 2", i8 / 2, "float32"),
            ("int8 // 2.0", i8 // 2.0, "float32"),
            ("int8 + 0-d int64", i8 + tensor(5, device), "int8"),
            ("int8 + 0-d float", i8 + tensor(1.5, device), "float32"),
            ("bool + True", tensor([True], device) + True, "bool"),
            ("bool + 1", tensor([True], device) + 1, "int64"),
            ("bool * 1.5", tensor([True], device) * 1.5, "float32"),
            ("uint8 + True", tensor([1], device, "uint8") + True, "uint8"),
            ("float32 + 1e300", tensor([1.0], device) + 1e300, "float32"),
            ("float32 + 0-d int64", tensor([1.0], device) + tensor(3, device), "float32")]:
        assert got.dtype.name == want, f"{what} on {device}: {got.dtype.name}, expected {want}"
    equal(tensor([1.0], device) + 1e300, np.array([np.inf], np.float32),
          f"float32 + 1e300 on {device}")


@rule("bool")
def bool_arithmetic(device):
    """bool + bool is logical or, bool * bool logical and; bool - bool and -bool raise
    TypeError (PyTorch)."""
    a, b = tensor([True, True, False], device), tensor([True, False, False], device)
    equal(a + b, np.array([True, True, False]), f"bool + bool on {device}")
    equal(a * b, np.array([True, False, False]), f"bool * bool on {device}")
    raises(TypeError, lambda: a - b, f"bool - bool on {device}", "bool")
    raises(TypeError, lambda: -a, f"-bool on {device}", "bool")


# --- NaN ----------------------------------------------------------------------------------

@rule("nan")
def sign_of_nan_is_nan(device):
    """sign(nan) is nan (NumPy and the array API; PyTorch gives 0), sign(-0.0) is 0."""
    for dt in ("float32", "float64", "float16"):
        if dt not in _floats(device):
            continue
        x = tensor([math.nan, -0.0, 0.0, -3.0, math.inf], device, dt)
        got = x.sign().numpy()
        assert np.isnan(got[0]), f"sign(nan) on {device} ({dt}) is {got[0]}, expected nan"
        np.testing.assert_array_equal(got[1:], np.array([0, 0, -1, 1], dt),
                                      err_msg=f"sign on {device} ({dt})")


def _floats(device):
    from .checks import supported_dtypes
    return [d for d in ("float16", "bfloat16", "float32", "float64")
            if d in supported_dtypes(device)]


@rule("nan")
def nan_wins_in_max_min_and_clamp(device):
    """maximum, minimum, clamp, relu, amax and argmax propagate NaN (NumPy and PyTorch)."""
    import ember
    x = tensor([math.nan, 1.0, -2.0], device)
    y = tensor([0.0, math.nan, 5.0], device)
    for what, got, want in [
            ("maximum", ember.maximum(x, y), [math.nan, math.nan, 5.0]),
            ("minimum", ember.minimum(x, y), [math.nan, math.nan, -2.0]),
            ("clamp", x.clamp(-1.0, 0.5), [math.nan, 0.5, -1.0]),
            ("relu", x.relu(), [math.nan, 1.0, 0.0]),
            ("amax", x.amax(), math.nan), ("amin", y.amin(), math.nan)]:
        equal(got, np.array(want, np.float32), f"{what} with nan on {device}")
    equal(y.argmax(), np.array(1), f"argmax with nan on {device}")
    equal(x.argmin(), np.array(0), f"argmin with nan on {device}")


@rule("nan")
def non_finite_linear_algebra(device):
    """A matrix with inf or nan gets nan (eigh, svd of infinities, qr) or an error
    (cholesky, svd of nan), never LAPACK's artefact (eigvalsh of [[inf, 0], [0, 1]] is not
    [0, -0]); the other matrices of the batch keep their answers."""
    import ember
    L = ember.linalg
    for dt in [d for d in ("float32", "float64") if d in _floats(device)]:
        good = [[2.0, 0.5], [0.5, 2.0]]
        for bad in ([[math.inf, 0.0], [0.0, 1.0]], [[math.nan, 0.0], [0.0, 1.0]],
                    [[2.0, 0.5], [-math.inf, 2.0]]):
            what = f"{bad} ({dt} on {device})"
            a = tensor([good, bad], device, dt)
            w = L.eigvalsh(a).numpy()
            assert np.isnan(w[1]).all(), f"eigvalsh of {what}: {w[1]}, expected nan"
            np.testing.assert_allclose(w[0], [1.5, 2.5], rtol=1e-5,
                                       err_msg=f"eigvalsh of {good} next to {what}")
            assert np.isnan(L.eigh(a).eigenvectors.numpy()[1]).all(), f"eigh of {what}"
            q, r = L.qr(a)
            assert np.isnan(q.numpy()[1]).all() and np.isnan(r.numpy()[1]).all(), \
                f"qr of {what}: {q.numpy()[1]}, {r.numpy()[1]}"
            raises(ValueError, functools.partial(L.cholesky, tensor(bad, device, dt)),
                   f"cholesky of {what}", "inf or nan")
            _, info = L.cholesky_ex(a)
            equal(info, np.array([0, 1], np.int32), f"cholesky_ex info of {what}")
            if np.isnan(np.array(bad)).any():
                raises(ValueError, functools.partial(L.svdvals, a), f"svdvals of {what}", "nan")
            else:
                s = L.svdvals(a).numpy()
                assert np.isnan(s[1]).all() and np.isfinite(s[0]).all(), f"svdvals of {what}"
        sign = L.slogdet(tensor([[[math.inf, 0.5], [0.5, 2.0]], [[1.0, -math.inf],
                                                                  [-math.inf, 1.0]]],
                                device, dt)).sign
        equal(sign, np.array([1.0, -1.0], dt), f"slogdet sign of infinite dets ({dt})")


# --- reductions ---------------------------------------------------------------------------

@rule("reduce")
def empty_dim_tuple_reduces_everything(device):
    """dim=() reduces over every dim, like dim=None, for every reduction (PyTorch's sum,
    mean, amax; its any/all treat () as no dims)."""
    import ember
    x = tensor(np.arange(6, dtype=np.float32).reshape(2, 3) - 2, device)
    for name in ("sum", "prod", "amax", "amin", "mean", "var", "std", "logsumexp", "any",
                 "all"):
        fn = getattr(ember, name)
        want = fn(x, None) if name not in ("logsumexp",) else fn(x, (0, 1))
        equal(fn(x, ()), want.numpy(), f"{name}(x, dim=()) on {device}")


@rule("reduce")
def reductions_of_bool_and_uint8(device):
    """sum/prod of bool and integers give int64; any/all give bool for every dtype (PyTorch
    gives uint8 for uint8); argmax of bool is the first True (PyTorch refuses bool)."""
    b = tensor([[True, False, True], [False, False, True]], device)
    u = tensor([[200, 0, 100], [255, 1, 1]], device, "uint8")
    equal(b.sum(), np.array(3), f"sum(bool) on {device}")
    equal(b.prod(1), np.array([0, 0]), f"prod(bool) on {device}")
    equal(u.sum(0), np.array([455, 1, 101]), f"sum(uint8) on {device}")
    equal(u.prod(0), np.array([51000, 0, 100]), f"prod(uint8) on {device}")
    equal(u.any(1), np.array([True, True]), f"any(uint8) on {device}")
    equal(u.all(1), np.array([False, True]), f"all(uint8) on {device}")
    equal(b.argmax(1), np.array([0, 2]), f"argmax(bool) on {device}")
    equal(u.argmax(), np.array(3), f"argmax(uint8) on {device}")
    equal(b.amax(0), np.array([True, False, True]), f"amax(bool) on {device}")


@rule("reduce")
def reductions_of_empty_tensors(device):
    """Empty sum is 0, prod 1, mean nan; max/min/argmax of nothing raise (PyTorch)."""
    import ember
    x = ember.zeros(0, 3, device=device)
    equal(x.sum(), np.array(0.0, np.float32), f"sum of empty on {device}")
    equal(x.prod(0), np.ones(3, np.float32), f"prod of empty on {device}")
    equal(x.mean(), np.array(np.nan, np.float32), f"mean of empty on {device}")
    equal(x.amax(1), np.zeros(0, np.float32), f"amax over a non-empty dim on {device}")
    for what, fn in [("amax()", lambda: x.amax()), ("amax(0)", lambda: x.amax(0)),
                     ("argmax()", lambda: x.argmax()), ("max(0)", lambda: x.max(0))]:
        raises((ValueError, IndexError), fn, f"{what} of a (0, 3) tensor on {device}", "")


@rule("half")
def half_floats_accumulate_in_float32(device):
    """float16/bfloat16 sums, means and matmuls accumulate in float32 and round once (as
    PyTorch): 4096 float16 ones sum to 4096, 1000 bfloat16 ones to 1000."""
    import ember
    for dt, n in (("float16", 4096), ("bfloat16", 1000)):
        if dt not in _floats(device):
            continue
        d = getattr(ember, dt)
        ones = ember.ones(n, dtype=d, device=device)
        for what, got in [("sum", ones.sum()), ("sum(0)", ones.reshape(1, n).sum(1)[0]),
                          ("matmul", ones.reshape(1, n) @ ones.reshape(n, 1)),
                          ("mean * n", ones.mean() * n)]:
            value = got.float().numpy().reshape(-1)[0]
            assert value == n, f"{dt} {what} of {n} ones on {device}: {value}"
        tenth = ember.full((n,), 1.01, dtype=d, device=device)
        want = np.float32(np.asarray(1.01, d.np))
        got = tenth.mean().float().item()
        assert abs(got - want) <= 1e-2 * abs(want), \
            f"{dt} mean of {n} x 1.01 on {device}: {got}, expected {want}"


# --- indexing ------------------------------------------------------------------------------

@rule("index")
def setitem_with_duplicate_indices_writes_one_of_them(device):
    """x[idx] = v with repeated indices stores one of the repeated values (which one is
    unspecified, as in PyTorch); index_add and scatter_add add all of them."""
    import ember
    x = ember.zeros(4, device=device)
    x[tensor([0, 2, 0, 0], device)] = tensor([1.0, 2.0, 3.0, 4.0], device)
    got = x.numpy()
    assert got[0] in (1.0, 3.0, 4.0) and got[2] == 2.0 and got[1] == got[3] == 0, \
        f"setitem with repeats on {device}: {got}"
    y = ember.index_add(ember.zeros(4, device=device), 0, tensor([0, 2, 0, 0], device),
                        tensor([1.0, 2.0, 3.0, 4.0], device))
    equal(y, np.array([8.0, 0.0, 2.0, 0.0], np.float32), f"index_add with repeats on {device}")


@rule("index")
def out_of_range_indices_raise(device):
    """An index outside the tensor raises IndexError on every device, never reads or
    writes out of bounds."""
    import ember
    x = ember.arange(6.0, device=device).reshape(2, 3)
    for what, fn in [("x[2]", lambda: x[2]), ("x[:, -4]", lambda: x[:, -4]),
                     ("x[tensor([2])]", lambda: x[tensor([0, 2], device)]),
                     ("gather", lambda: x.gather(1, tensor([[0, 3], [1, 1]], device))),
                     ("index_select", lambda: ember.index_select(x, 1, tensor([5], device))),
                     ("setitem", lambda: x.__setitem__(tensor([3], device), 1.0)),
                     ("index_add", lambda: ember.index_add(x, 0, tensor([2], device),
                                                           ember.ones(1, 3, device=device)))]:
        raises(IndexError, fn, f"{what} out of range on {device}", "")


@rule("index")
def negative_indices_where_pytorch_takes_them(device):
    """x[i], take, index_fill, index_put and take_along_dim(dim) count -1 from the end;
    gather, scatter, scatter_add, scatter_reduce, index_add, index_select and embedding
    raise IndexError for it (PyTorch), never add into the last element."""
    import ember
    x = ember.arange(4.0, device=device)
    i = tensor([-1], device)
    src = tensor([9.0], device)
    for what, fn, want in [
            ("x[i]", lambda: x[i], [3.0]), ("take", lambda: ember.take(x, i), [3.0]),
            ("index_fill", lambda: ember.index_fill(x, 0, i, 9.0), [0, 1, 2, 9.0]),
            ("index_put", lambda: ember.index_put(x, (i,), src), [0, 1, 2, 9.0]),
            ("take_along_dim(dim=0)", lambda: ember.take_along_dim(x, i, 0), [3.0])]:
        equal(fn(), np.array(want, np.float32), f"{what} with index -1 on {device}")
    for what, fn in [
            ("gather", lambda: ember.gather(x, 0, i)),
            ("scatter", lambda: ember.scatter(x, 0, i, src)),
            ("scatter_add", lambda: ember.scatter_add(x, 0, i, src)),
            ("scatter_reduce", lambda: ember.scatter_reduce(x, 0, i, src, "sum")),
            ("scatter_reduce amax", lambda: ember.scatter_reduce(x, 0, i, src, "amax")),
            ("index_add", lambda: ember.index_add(x, 0, i, src)),
            ("index_select", lambda: ember.index_select(x, 0, i)),
            ("take_along_dim()", lambda: ember.take_along_dim(x, i)),
            ("embedding", lambda: ember.nn.functional.embedding(i, x.reshape(4, 1)))]:
        raises(IndexError, fn, f"{what} with index -1 on {device}", "out of bounds")


@rule("index")
def numbers_stored_into_integer_tensors(device):
    """A Python number stored into an integer tensor (tensor(), full, setitem, fill_,
    masked_fill) is truncated toward zero when it fits and raises when it does not (NaN:
    ValueError; inf and out-of-range: OverflowError), never wraps."""
    import ember
    x = ember.zeros(3, dtype=ember.int64, device=device)
    x[0] = 1.7
    x[1] = -1.7
    equal(x, np.array([1, -1, 0]), f"int64 setitem of 1.7, -1.7 on {device}")
    m = tensor([True, False, True], device)
    equal(ember.zeros(3, dtype=ember.int64, device=device).masked_fill(m, 1.5),
          np.array([1, 0, 1]), f"int64 masked_fill(1.5) on {device}")
    bad = [("tensor([2**40], int32)", OverflowError,
            lambda: ember.tensor([2 ** 40], dtype=ember.int32, device=device)),
           ("tensor([300], uint8)", OverflowError,
            lambda: ember.tensor([300], dtype=ember.uint8, device=device)),
           ("tensor([-1], uint8)", OverflowError,
            lambda: ember.tensor([-1], dtype=ember.uint8, device=device)),
           ("tensor([nan], int64)", ValueError,
            lambda: ember.tensor([math.nan], dtype=ember.int64, device=device)),
           ("full(300, uint8)", OverflowError,
            lambda: ember.full((2,), 300, dtype=ember.uint8, device=device)),
           ("int64 x[0] = nan", ValueError, lambda: x.__setitem__(0, math.nan)),
           ("int64 x[0] = inf", OverflowError, lambda: x.__setitem__(0, math.inf)),
           ("uint8 x[0] = 300", OverflowError,
            lambda: ember.zeros(2, dtype=ember.uint8, device=device).__setitem__(0, 300)),
           ("int8 fill_(200)", OverflowError,
            lambda: ember.zeros(2, dtype=ember.int8, device=device).fill_(200)),
           ("int64 masked_fill(nan)", ValueError,
            lambda: ember.zeros(3, dtype=ember.int64, device=device).masked_fill(m, math.nan)),
           ("uint8 masked_fill(300)", OverflowError,
            lambda: ember.zeros(3, dtype=ember.uint8, device=device).masked_fill(m, 300))]
    for what, kind, fn in bad:
        raises(kind, fn, f"{what} on {device}", "")
    b = ember.zeros(2, dtype=ember.bool, device=device)
    b[0] = 2
    equal(b, np.array([True, False]), f"bool setitem of 2 on {device}")


# --- random numbers and the layers that use them ---------------------------------------------

@rule("random")
def random_numbers_are_the_same_on_every_device(device):
    """One host stream: the same seed gives the same rand/randn/randint/randperm and dropout
    masks on every device."""
    import ember
    results = []
    for where in ("cpu", device):
        ember.manual_seed(1234)
        x = ember.ones(64, device=where)
        results.append([ember.rand(5, device=where).numpy(), ember.randn(5, device=where).numpy(),
                        ember.randint(0, 10, (5,), device=where).numpy(),
                        ember.randperm(7, device=where).numpy(),
                        ember.nn.functional.dropout(x, 0.5).numpy()])
    for name, a, b in zip(("rand", "randn", "randint", "randperm", "dropout"), *results):
        np.testing.assert_array_equal(a, b, err_msg=f"{name} after manual_seed on {device}")


@rule("nn")
def dropout_in_training(device):
    """dropout keeps each element with probability 1 - p, scaled by 1/(1 - p), and its
    gradient is the same mask; dropout2d drops whole channels; p=1 zeroes everything."""
    import ember
    F = ember.nn.functional
    ember.manual_seed(7)
    x = ember.ones(200, 50, device=device, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.02, f"dropout(p=0.3) kept {kept.mean():.3f} on {device}"
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.7, rtol=1e-6,
                               err_msg=f"dropout scale on {device}")
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.7, rtol=1e-6,
                               err_msg=f"dropout gradient on {device}")
    z = F.dropout2d(ember.ones(4, 30, 3, 3, device=device), 0.5).numpy()
    per_channel = z.reshape(4, 30, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all(), \
        f"dropout2d must drop whole channels on {device}"
    equal(F.dropout(ember.ones(3, device=device), 1.0), np.zeros(3, np.float32),
          f"dropout(p=1) on {device}")


@rule("nn")
def batch_norm_updates_running_statistics(device):
    """batch_norm in training updates running_mean with the batch mean and running_var with
    the unbiased batch variance (momentum 0.1), in place, as PyTorch."""
    import ember
    rng = np.random.default_rng(3)
    host = rng.standard_normal((6, 3, 2))
    x = ember.tensor(host.astype(np.float32), device=device)
    mean, var = ember.zeros(3, device=device), ember.ones(3, device=device)
    ember.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.1)
    want_mean = 0.1 * host.mean((0, 2))
    want_var = 0.9 + 0.1 * host.var((0, 2), ddof=1)
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-5, atol=1e-6,
                               err_msg=f"running_mean on {device}")
    np.testing.assert_allclose(var.numpy(), want_var, rtol=1e-5, atol=1e-6,
                               err_msg=f"running_var on {device}")
