"""ONNX export of the declared kernels of issue 30 (atan2, bit operations, topk, unique,
the LSTM and GRU cells): each lowers to ONNX nodes and onnxruntime gives ember's values."""
from __future__ import annotations

import io

import ember
import ember.nn as nn
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


class _Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _check(fn, args, opset=18, zero_signs=True):
    buf = io.BytesIO()
    ember.onnx.export(_Fn(fn), tuple(args), buf, opset_version=opset)
    sess = ort.InferenceSession(buf.getvalue())
    got = sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)})
    want = fn(*args)
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        w = w.detach().numpy()
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        kept = slice(None) if zero_signs else w != 0
        np.testing.assert_array_equal(np.signbit(g)[kept], np.signbit(w)[kept])


def test_atan2_quadrants():
    y = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.0, -2.0, -np.inf]
    x = [0.0, 0.0, -0.0, -0.0, -np.inf, np.inf, np.inf, -np.inf, -3.0, 0.5, 1.0]
    # zero_signs off: onnxruntime answers +0.0 for atan2(-0.0, +0.0) (1 / -0.0 reads as +inf
    # there); every other quadrant, signed zeros included, is checked
    _check(lambda a, b: ember.atan2(a, b), [ember.tensor(y), ember.tensor(x)], zero_signs=False)
    _check(lambda a, b: ember.atan2(a, b), [ember.tensor(y[2:]), ember.tensor(x[2:])])


# int16 left out: onnxruntime has no Where kernel for int16 (the model itself is valid ONNX)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_bit_operations(dtype):
    values = [128, 255, 0, 1, 85, 127, 170, 64] if dtype == "uint8" else [
        -128, -1, 0, 1, 85, 127, -86, 64]
    counts = [0, 1, 7, 200, 8, 9, 63, 3] if dtype == "uint8" else [0, 1, 7, -1, 8, 9, 63, -64]
    a = ember.tensor(values).to(getattr(ember, dtype))
    s = ember.tensor(counts).to(getattr(ember, dtype))
    _check(lambda a, b: (a & b, a | b, a ^ b, ~a, a << b, a >> b), [a, s])


def test_bool_bit_operations_and_the_opset_needed_for_integers():
    a, b = ember.tensor([True, False, True]), ember.tensor([True, True, False])
    _check(lambda a, b: (a & b, a | b, a ^ b, ~a), [a, b], opset=17)
    with pytest.raises(ember.EmberError, match="opset 18"):
        ember.onnx.export(_Fn(lambda a: a & 3), (ember.tensor([1, 2]),), io.BytesIO(),
                          opset_version=17)


def test_topk_and_unique():
    t = ember.tensor(np.array([[3.0, 1.0, 3.0, 2.0, 5.0], [0.0, 0.0, 1.0, 1.0, 1.0]],
                              dtype=np.float32))
    _check(lambda a: ember.topk(a, 3, 1), [t])
    _check(lambda a: ember.topk(a, 2, 1, largest=False), [t])
    _check(lambda a: ember.unique(a), [ember.tensor([3, 1, 2, 3, 1, 5])])


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_cells(kind):
    ember.manual_seed(0)
    layer = getattr(nn, kind)(4, 5, 2)
    _check(lambda a: layer(a)[0], [ember.randn(3, 2, 4)])


def test_conv2d_lowers_to_one_conv_node():
    """ops/nn.py's declared conv2d (the CPU runs Winograd for the 3x3 stride-1 one): an
    ONNX Conv with its stride, padding, dilation, groups and bias."""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((2, 8, 9, 10)).astype(np.float32))
    w1 = ember.tensor(rng.standard_normal((16, 8, 3, 3)).astype(np.float32))
    b1 = ember.tensor(rng.standard_normal(16).astype(np.float32))
    w2 = ember.tensor(rng.standard_normal((6, 4, 2, 3)).astype(np.float32))

    def fn(x, w1, b1, w2):
        F = ember.nn.functional
        return (F.conv2d(x, w1, b1, padding=1),
                F.conv2d(x, w2, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2))
    ops = _exported_ops_agree(fn, (x, w1, b1, w2))
    assert ops.count("Conv") == 2 and "MatMul" not in ops and "Add" not in ops, ops


def _exported_ops_agree(fn, args) -> list:
    """Export fn, run the file in onnxruntime on args, compare with ember's outputs (sums of
    up to 72 products two ways: onnxruntime's, and Winograd F(4x4)'s transforms, which
    round ~15x more than a direct sum: float32 rounding of the largest values); the file's
    op types."""
    import onnx
    buf = io.BytesIO()
    ember.onnx.export(_Fn(fn), args, buf, opset_version=18)
    sess = ort.InferenceSession(buf.getvalue())
    got = sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)})
    for g, w in zip(got, fn(*args)):
        w = w.numpy()
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * np.abs(w).max())
    return [n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node]


def test_conv_transpose2d_lowers_to_one_conv_transpose_node():
    """conv_transpose2d runs ops/nn.py's conv2d_input_grad: an ONNX ConvTranspose with its
    stride, padding, dilation and groups (the bias one Add); with output_padding the
    matmul + fold (Col2Im) path."""
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((2, 8, 5, 6)).astype(np.float32))
    w1 = ember.tensor(rng.standard_normal((8, 6, 4, 4)).astype(np.float32))
    b1 = ember.tensor(rng.standard_normal(6).astype(np.float32))
    w2 = ember.tensor(rng.standard_normal((8, 3, 3, 2)).astype(np.float32))

    def fn(x, w1, b1, w2):
        F = ember.nn.functional
        return (F.conv_transpose2d(x, w1, b1, stride=2, padding=1),
                F.conv_transpose2d(x, w2, stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                                   groups=2),
                F.conv_transpose2d(x, w2, stride=2, padding=1, output_padding=1, groups=2))
    ops = _exported_ops_agree(fn, (x, w1, b1, w2))
    assert ops.count("ConvTranspose") == 2 and ops.count("Col2Im") == 1, ops
