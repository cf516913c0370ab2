"""Tensor.stride(), is_contiguous() and memory formats against PyTorch: the strides of views
(transposes, slices with steps, expands, unsqueezes, reshapes) on the CPU (NumPy's views),
OpenCL (its own strided views) and a backend whose movement kernels copy (the core's
tracked layout); channels_last; the memory_format= of clone, contiguous, empty and the
*_like factories (preserve_format keeps a dense input's layout, as PyTorch's)."""
from __future__ import annotations

import pickle

import ember
import numpy as np
import pytest
from ember.testing import devices_under_test
from noview_backends import CopyingBackend, installed

_OPENCL = [d for d, why in devices_under_test() if d.startswith("opencl") and why is None][:1]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(params=["cpu", *(_OPENCL or ["opencl"]), "copier"])
def device(request):
    if request.param == "copier":
        with installed(CopyingBackend()) as dev:
            yield dev
        return
    if request.param == "opencl":
        pytest.skip("no OpenCL device here")
    yield request.param


VIEWS = {
    "contiguous": lambda x: x,
    "transpose": lambda x: x.transpose(0, 2),
    "permute": lambda x: x.permute(1, 2, 0),
    "slice": lambda x: x[:, 1:3],
    "step_slice": lambda x: x[:, :, ::2],
    "slice_of_transpose": lambda x: x.transpose(1, 2)[1:, ::3],
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "select": lambda x: x[1],
    "reshape_view": lambda x: x[1:].reshape(12),
    "reshape_copy": lambda x: x.transpose(0, 1).reshape(24),
    "t_2d": lambda x: x[0].t(),
    "size_one_dims": lambda x: x[:1, :, :1],
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_strides_and_contiguity_as_torch(torch, device, view):
    data = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    t = VIEWS[view](torch.tensor(data))
    e = VIEWS[view](ember.tensor(data, device=device))
    assert tuple(e.shape) == tuple(t.shape)
    assert e.is_contiguous() == t.is_contiguous()
    if t.ndim == 4:
        assert e.is_contiguous(memory_format=ember.channels_last) == t.is_contiguous(
            memory_format=torch.channels_last)
    else:
        assert e.is_contiguous(memory_format=ember.channels_last) is False
    expected = t.stride()
    if view == "size_one_dims":        # PyTorch's strides of size-1 dims are no layout fact
        expected = tuple(s for s, n in zip(expected, t.shape) if n != 1)
        got = tuple(s for s, n in zip(e.stride(), e.shape) if n != 1)
    else:
        got = e.stride()
    assert got == expected
    assert e.stride(-1) == e.stride()[-1]
    assert e.contiguous().stride() == t.contiguous().stride()


def test_channels_last_as_torch(torch, device):
    data = np.arange(120.0, dtype=np.float32).reshape(2, 3, 4, 5)
    t, e = torch.tensor(data), ember.tensor(data, device=device)
    tc = t.contiguous(memory_format=torch.channels_last)
    ec = e.contiguous(memory_format=ember.channels_last)
    assert ec.stride() == tc.stride() == (60, 1, 15, 3)
    assert ec.is_contiguous(memory_format=ember.channels_last) and not ec.is_contiguous()
    np.testing.assert_array_equal(ec.cpu().numpy(), data)
    for fn in (lambda L, x: L.zeros_like(x), lambda L, x: L.ones_like(x, dtype=L.float64),
               lambda L, x: x.clone(), lambda L, x: L.empty_like(x),
               lambda L, x: L.rand_like(x), lambda L, x: L.full_like(x, 2.0)):
        assert fn(ember, ec).stride() == fn(torch, tc).stride()
        assert fn(ember, ec).shape == tuple(tc.shape)
    made = ember.empty(2, 3, 4, 5, memory_format=ember.channels_last, device=device)
    assert made.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    d5 = ember.zeros(2, 3, 2, 2, 2, device=device).contiguous(
        memory_format=ember.channels_last_3d)
    assert d5.stride() == torch.zeros(2, 3, 2, 2, 2).contiguous(
        memory_format=torch.channels_last_3d).stride()
    with pytest.raises(ember.EmberError, match="needs a 4-D tensor"):
        ember.zeros(2, 3, device=device).contiguous(memory_format=ember.channels_last)


@pytest.mark.parametrize("view", ["transpose", "permute", "slice", "step_slice", "expand"])
def test_preserve_format_as_torch(torch, device, view):
    """zeros_like / clone keep a dense input's strides; of one that is not dense, PyTorch's
    results are row-major; contiguous_format always is."""
    data = np.arange(40.0, dtype=np.float32).reshape(2, 5, 4)
    t = VIEWS[view](torch.tensor(data))
    e = VIEWS[view](ember.tensor(data, device=device))
    for fn in (lambda L, x: L.zeros_like(x), lambda L, x: x.clone(),
               lambda L, x: L.clone(x, memory_format=L.preserve_format),
               lambda L, x: L.randn_like(x, memory_format=L.preserve_format),
               lambda L, x: L.zeros_like(x, memory_format=L.contiguous_format),
               lambda L, x: x.clone(memory_format=L.contiguous_format)):
        assert fn(ember, e).stride() == fn(torch, t).stride()
    np.testing.assert_array_equal(e.clone().cpu().numpy(), t.clone().numpy())


def test_clone_in_a_layout_keeps_gradients_and_new_memory(torch):
    x = ember.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.t().clone()
    assert y.stride() == (1, 3)
    (y * ember.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    with ember.no_grad():
        y[0, 0] = 100.0
    assert x[0, 0].item() == 0.0                             # the copy is its own memory
    z = ember.zeros_like(x.t(), requires_grad=True)
    assert z.requires_grad and z.grad_fn is None and z.stride() == (1, 3)


def test_memory_format_objects_and_errors(torch):
    assert repr(ember.preserve_format) == "ember.preserve_format"
    assert isinstance(ember.channels_last, ember.memory_format)
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last
    x = ember.ones(2, 3)
    with pytest.raises(ember.EmberError, match="preserve memory format is unsupported"):
        x.t().contiguous(memory_format=ember.preserve_format)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        torch.ones(2, 3).t().contiguous(memory_format=torch.preserve_format)
    assert x.contiguous(memory_format=ember.preserve_format).stride() == (3, 1)
    assert x.is_contiguous(memory_format=ember.preserve_format)
    assert not x.t().is_contiguous(memory_format=ember.preserve_format)
    with pytest.raises(ember.EmberError, match="preserve_format is not supported here"):
        ember.empty(2, 3, memory_format=ember.preserve_format)
    with pytest.raises(TypeError, match="memory_format must be an ember.memory_format"):
        ember.zeros_like(ember.ones(2, 3).t(), memory_format="channels_last")
    assert ember.ones(0, 3).t().is_contiguous() and torch.ones(0, 3).t().is_contiguous()


@pytest.mark.parametrize("view", list(VIEWS))
def test_storage_offset_as_torch(torch, device, view):
    data = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    t = VIEWS[view](torch.tensor(data))
    e = VIEWS[view](ember.tensor(data, device=device))
    assert e.storage_offset() == t.storage_offset()
    if t.shape[0] > 1:       # an empty slice: torch adds its start, NumPy's view does not
        assert e[1:].storage_offset() == t[1:].storage_offset()
    assert (e + 1).storage_offset() == 0 and e.clone().storage_offset() == 0


@pytest.mark.parametrize("view", list(VIEWS))
def test_data_ptr_as_torch(torch, view):
    # the CPU backend's address is the NumPy array's: views that start at the same element
    # share it, one that starts k elements in is k * element_size() bytes further
    data = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    tx, ex = torch.tensor(data), ember.tensor(data)
    t, e = VIEWS[view](tx), VIEWS[view](ex)
    assert e.data_ptr() - ex.data_ptr() == t.data_ptr() - tx.data_ptr() or \
        view == "reshape_copy"                      # new memory in both: any address
    assert ex.data_ptr() == ex.numpy().__array_interface__["data"][0]
    assert ex.detach().data_ptr() == ex.data_ptr()
    assert ex.clone().data_ptr() != ex.data_ptr()
    assert ex[1].data_ptr() - ex.data_ptr() == 12 * ex.element_size()
    d = ember.zeros(3, dtype=ember.float64)
    assert d[2:].data_ptr() - d.data_ptr() == 16


def test_data_ptr_without_addresses(device):
    x = ember.arange(6.0, device=device).reshape(2, 3)
    if device == "cpu":
        assert x[1].data_ptr() - x.data_ptr() == 12
        return
    # OpenCL: PyOpenCL hands out cl_mem handles, no addresses; the copying test backend
    # has no data_ptr either: refused, naming why (never a made-up number)
    with pytest.raises(ember.errors.NotInEmberError, match="does not expose memory addresses"):
        x.data_ptr()
    assert x[1].storage_offset() == 3
