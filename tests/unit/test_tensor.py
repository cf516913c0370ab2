"""Tensor API as PyTorch users know it: creation, attributes, conversion, repr, operators."""
from __future__ import annotations

import subprocess
import sys

import ember
import numpy as np
import pytest
from ember.errors import EmberError


def test_creation():
    assert ember.zeros(2, 3).shape == (2, 3) and ember.zeros((2, 3)).tolist() == [[0.0] * 3] * 2
    assert ember.ones([2]).dtype is ember.float32
    assert ember.full((2,), 7).dtype is ember.int64 and ember.full((2,), 7).tolist() == [7, 7]
    assert ember.full((1,), True).dtype is ember.bool
    assert ember.empty(3).shape == (3,)
    x = ember.arange(6).reshape(2, 3)
    assert ember.zeros_like(x).dtype is ember.int64 and ember.ones_like(x).sum().item() == 6
    assert ember.full_like(x, 2.5, dtype=ember.float64).tolist() == [[2.5] * 3] * 2
    assert ember.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ember.arange(5, 0, -2).tolist() == [5, 3, 1]
    np.testing.assert_allclose(ember.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    assert ember.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert ember.tensor(3.5).ndim == 0 and ember.tensor(3.5).item() == 3.5
    assert ember.tensor([[1, 2], [3, 4]]).T.tolist() == [[1, 3], [2, 4]]
    assert ember.tensor(np.arange(3, dtype=np.int32)).dtype is ember.int32
    a = np.arange(4.0)
    shared = ember.from_numpy(a)
    a[0] = 10
    assert shared[0].item() == 10 and shared.dtype is ember.float64
    copied = ember.tensor(a)
    a[1] = 20
    assert copied[1].item() == 1.0
    assert ember.as_tensor(a).dtype is ember.float64
    with pytest.raises(EmberError, match="arange: step must be nonzero"):
        ember.arange(0, 3, 0)
    with pytest.raises(EmberError, match="negative dimension"):
        ember.zeros(-1)
    # the legacy constructor (PyTorch's): data in the default float, or sizes as zeros
    assert ember.Tensor([1, 2]).dtype is ember.float32
    assert ember.Tensor(2, 3).tolist() == [[0.0] * 3] * 2
    with pytest.raises(TypeError, match="expected sizes"):
        ember.Tensor(2, 3.0)


def test_random_is_seeded_and_distributed():
    ember.manual_seed(123)
    a = ember.randn(1000)
    ember.manual_seed(123)
    b = ember.randn(1000)
    assert a.tolist() == b.tolist()
    assert abs(a.mean().item()) < 0.15 and abs(a.std().item() - 1) < 0.1
    r = ember.rand(1000)
    assert 0 <= r.amin().item() and r.amax().item() < 1
    i = ember.randint(3, 7, (500,))
    assert i.dtype is ember.int64 and set(i.tolist()) == {3, 4, 5, 6}
    n = ember.normal(5.0, 0.1, (200,))
    assert abs(n.mean().item() - 5.0) < 0.05
    g = ember.Generator().manual_seed(7)
    p1 = ember.randperm(10, generator=g).tolist()
    p2 = ember.randperm(10, generator=ember.Generator().manual_seed(7)).tolist()
    assert p1 == p2 and sorted(p1) == list(range(10))


def test_attributes():
    x = ember.zeros(2, 3, 4)
    assert x.shape == ember.Size([2, 3, 4]) and x.size() == (2, 3, 4) and x.size(-1) == 4
    assert x.ndim == 3 and x.dim() == 3 and x.numel() == 24 and len(x) == 2
    assert x.dtype is ember.float32 and x.device == ember.device("cpu")
    assert x.mT.shape == (2, 4, 3) and x.is_leaf and not x.requires_grad
    assert repr(x.shape) == "ember.Size([2, 3, 4])"
    assert x.element_size() == 4 and x.is_floating_point()


def test_conversion():
    x = ember.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert x[0, 0].item() == 1.5 and float(x[0, 0]) == 1.5 and int(x[1, 1]) == 4
    assert [r.tolist() for r in x] == [[1.5, 2.0], [3.0, 4.0]]
    assert isinstance(x.numpy(), np.ndarray) and np.asarray(x).shape == (2, 2)
    assert x.to(ember.int64).tolist() == [[1, 2], [3, 4]]
    assert x.to("cpu") is x and x.to(x) is x
    assert x.double().dtype is ember.float64 and x.half().dtype is ember.float16
    assert x.bfloat16().float().tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert x.long().dtype is ember.int64 and x.bool().all().item() is True
    with pytest.raises(EmberError, match="only one element|1 elements|4 elements"):
        x.item()
    with pytest.raises(EmberError, match="ambiguous"):
        bool(x)
    with pytest.raises(EmberError, match="requires grad"):
        x.requires_grad_().numpy()
    # tensors pickle by value, for ember.multiprocessing (tests/reliability/test_processes.py)
    import pickle
    assert pickle.loads(pickle.dumps(x)).tolist() == x.tolist()



def test_repr_like_pytorch():
    assert repr(ember.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(ember.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ember.tensor([0.5])) == "tensor([0.5000])"
    assert repr(ember.tensor([1, 2], dtype=ember.int32)) == "tensor([1, 2], dtype=ember.int32)"
    assert repr(ember.tensor([True, False])) == "tensor([ True, False])"
    x = ember.ones(2, requires_grad=True)
    assert repr(x) == "tensor([1., 1.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 2.], grad_fn=<MulBackward0>)"
    assert repr(ember.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert "dtype=ember.float64" in repr(ember.zeros(1, dtype=ember.float64))


def _repr_cases():
    """Generated values: shapes up to 3-d (some past the summarizing threshold), float
    magnitudes from 1e-6 to 1e9 (integers among them), zeros, nan and inf, ints, bools."""
    rng = np.random.default_rng(7)
    shapes = [(), (1,), (5,), (3, 4), (2, 3, 4), (1500,), (40, 40), (3, 1200), (2, 3, 500)]
    for i in range(60):
        shape = shapes[i % len(shapes)]
        kind = i % 6
        if kind == 0:                                  # integers stored as floats
            a = rng.integers(-10 ** (i % 5 + 1), 10 ** (i % 5 + 1), shape).astype(np.float32)
        elif kind == 1:                                # one magnitude
            a = (rng.standard_normal(shape) * 10.0 ** (i % 9 - 3)).astype(np.float32)
        elif kind == 2:                                # spanning magnitudes, zeros
            a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 9, shape)
                 ).astype(np.float32)
            a.reshape(-1)[::4] = 0
        elif kind == 3:                                # nonfinite values among them
            a = rng.standard_normal(shape).astype(np.float32)
            a.reshape(-1)[::3] = [np.nan, np.inf, -np.inf][i % 3]
        elif kind == 4:
            a = rng.integers(-5000, 5000, shape)
        else:
            a = rng.integers(0, 2, shape).astype(bool)
        yield pytest.param(a, id=f"{kind}-{'x'.join(map(str, shape)) or 'scalar'}-{i}")


@pytest.mark.parametrize("a", list(_repr_cases()))
def test_repr_is_torchs_on_generated_values(a):
    torch = pytest.importorskip("torch")
    assert repr(ember.tensor(a)).replace("ember.", "torch.") == repr(torch.tensor(a))


def test_repr_follows_print_options_as_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(3).standard_normal((4, 30)).astype(np.float32) * 50
    options = [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False, precision=6),
               dict(threshold=20, edgeitems=2), dict(linewidth=40)]
    try:
        for opts in options:
            torch.set_printoptions(**opts)
            ember.set_printoptions(**opts)
            assert repr(ember.tensor(a)) == repr(torch.tensor(a)), opts
            torch.set_printoptions(profile="default")
            ember.set_printoptions(profile="default")
    finally:
        torch.set_printoptions(profile="default")
        ember.set_printoptions(profile="default")


def test_operators_and_inplace():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert (2 - x).tolist() == [1, 0, -1] and (6 / x).tolist() == [6, 3, 2]
    assert (x ** 2).tolist() == [1, 4, 9] and (2 ** x).tolist() == [2, 4, 8]
    assert (x % 2).tolist() == [1, 0, 1] and (x // 2).tolist() == [0, 1, 1]
    assert (-x).tolist() == [-1, -2, -3] and abs(-x).tolist() == [1, 2, 3]
    assert ((x > 1) & (x < 3)).tolist() == [False, True, False]
    assert (~(x > 1)).tolist() == [True, False, False]
    m = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ m).tolist() == [[7, 10], [15, 22]]
    y = x.clone()
    y += 1
    y *= 2
    y.sub_(1).div_(ember.tensor(2.0))
    assert y.tolist() == [1.5, 2.5, 3.5] and x.tolist() == [1, 2, 3]
    y.add_(x, alpha=2).clamp_(max=6.0)
    assert y.tolist() == [3.5, 6.0, 6.0]
    z = ember.zeros(3)
    z.copy_(x)
    z.zero_()
    z.fill_(4)
    assert z.tolist() == [4, 4, 4]
    i = ember.arange(3)
    with pytest.raises(EmberError, match="can't be cast"):
        i += 0.5
    with pytest.raises(EmberError, match="doesn't match the broadcast shape"):
        ember.zeros(3).add_(ember.zeros(2, 3))


def test_views_share_memory_like_pytorch():
    x = ember.zeros(3, 4)
    row = x[1]
    row += 1
    x[:, 0] = 5.0
    assert x[1].tolist() == [5, 1, 1, 1] and row.tolist() == [5, 1, 1, 1]
    v = x.view(12)
    v[0] = -1
    assert x[0, 0].item() == -1


def test_shape_functions():
    x = ember.arange(24).reshape(2, 3, 4)
    assert x.flatten(1).shape == (2, 12) and x.unsqueeze(0).squeeze(0).shape == (2, 3, 4)
    assert x.transpose(0, 2).shape == (4, 3, 2) and x.permute(1, 2, 0).shape == (3, 4, 2)
    assert x.movedim(0, -1).shape == (3, 4, 2) and x.expand(5, 2, 3, 4).shape == (5, 2, 3, 4)
    assert [t.shape for t in x.chunk(3, 1)] == [(2, 1, 4)] * 3
    assert ember.stack([x, x]).shape == (2, 2, 3, 4)
    assert x.max().item() == 23 and x.max(1).values.shape == (2, 4)
    assert x.float().mean(dim=(0, 2)).shape == (3,)


def test_import_is_light():
    """`import ember` loads no plugin and no heavy library (its time is measured in
    benchmarks/import_time.py, not asserted here)."""
    code = ("import sys; import ember; "
            "print([m for m in ('ember.backends.cpu', 'cupy', 'pyopencl', 'torch', 'rich', "
            "'ember.nn', 'safetensors') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# dtypes, complex, empty, 0-d, autograd suffixes, Parameters and summarized ints/bools,
# each printed by torch and by ember (the first run: complex real parts padded where torch
# sizes them by the nonzero ones, empty int64/bool tensors without their dtype)
_REPR_CASES = [
    "T.tensor([1, 2, 3])", "T.tensor([True, False])", "T.tensor(True)", "T.tensor([1, -200000])",
    "T.tensor([[1, 2], [3, 4]], dtype=T.int32)", "T.tensor([1, 2], dtype=T.uint8)",
    "T.tensor([1, 2], dtype=T.int16)", "T.tensor([1.5, 2], dtype=T.float16)",
    "T.tensor([1.5, 2], dtype=T.bfloat16)", "T.tensor([1.5, 2], dtype=T.float64)",
    "T.tensor(3.0, dtype=T.float64)", "T.tensor([1+2j, -3.5j])",
    "T.tensor([1+2j, -3.5j], dtype=T.complex128)", "T.tensor(1+1j)",
    "T.tensor([[1e-8+1j, 2e5-3j]])", "T.tensor([float('nan')+1j])", "T.zeros(0)", "T.zeros(0, 3)",
    "T.zeros(2, 0, dtype=T.int64)", "T.zeros(0, dtype=T.bool)", "T.zeros(0, dtype=T.float64)",
    "T.tensor([-0.0, 0.0])", "T.tensor([1, 2.], requires_grad=True)",
    "T.tensor([1, 2.], requires_grad=True) * 2", "T.tensor([1, 2.], requires_grad=True).sum()",
    "T.tensor(2.5, requires_grad=True)", "T.arange(2000)", "T.arange(2000.).reshape(40, 50)",
    "T.ones(3, 1001, dtype=T.int64)", "T.tensor([1e-5, 1e5])", "T.tensor([123456789.0])",
    "T.tensor([0.1, 0.25])", "T.tensor([1e20, 1])",
    "T.tensor([float('inf'), -float('inf'), float('nan')])",
    "T.tensor([1, 2.], dtype=T.float16) / 3", "T.tensor([True]*1200)",
    "T.zeros(2, 3, 4, dtype=T.complex64)", "T.tensor([[True, False], [False, True]])",
    "T.nn.Parameter(T.tensor([1., 2.]))", "T.tensor([1, 2]).float().mean()",
    "T.tensor([1e-10, 1e10, 1.0])", "T.randn(3, 3).abs() * 0 + T.tensor([1, 10, 100.])",
    "T.tensor(-5)", "T.tensor(2**62)", "T.tensor([2**62, 1])", "T.tensor([0.5], dtype=T.float16)",
    "T.tensor([65504.], dtype=T.float16)", "T.tensor([1.5, -2.25], dtype=T.bfloat16)",
]


@pytest.mark.parametrize("expr", _REPR_CASES)
def test_repr_is_torchs_across_dtypes(expr):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ember.manual_seed(0)
    want = repr(eval(expr, {"T": torch})).replace("torch.", "ember.")     # noqa: S307
    assert repr(eval(expr, {"T": ember})) == want                          # noqa: S307
