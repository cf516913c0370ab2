"""print(model) as torch prints it: the repr of 129 modules and containers (every layer
family with its options, nested Sequential/ModuleList/ModuleDict/ParameterList/ParameterDict,
losses, transformers), built with torch and with ember from the same arguments.  The first
run found 10 differences: ModuleList did not fold runs of equal modules ("(0-1): 2 x ..."),
ParameterList/ParameterDict lines and their order (torch sorts a plain dict), InstanceNorm's
bias, ConstantPad's "padding=", Embedding's sparse=True, and Conv's padding_mode
('reflect', 'replicate', 'circular' were refused: now built as torch's, F.pad then the conv).
(nn.LazyLinear and the other lazy modules are not in ember: NotInEmberError.)
"""
from __future__ import annotations

import warnings
from collections import OrderedDict

import ember
import numpy as np
import pytest
from nn_helpers import device_params

torch = pytest.importorskip("torch")

CASES = [
    "nn.Linear(3, 4)", "nn.Linear(3, 4, bias=False)", "nn.Conv2d(3, 8, 3)",
    "nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, bias=False)",
    "nn.Conv2d(4, 8, 3, groups=2, dilation=2, padding='same')",
    "nn.Conv1d(3, 8, 3, padding_mode='reflect', padding=1)", "nn.Conv3d(1, 2, 3)",
    "nn.ConvTranspose2d(3, 8, 3, stride=2, output_padding=1)", "nn.BatchNorm2d(8)",
    "nn.BatchNorm1d(8, affine=False, track_running_stats=False)",
    "nn.BatchNorm2d(8, momentum=None)", "nn.LayerNorm(8)",
    "nn.LayerNorm((4, 8), elementwise_affine=False)", "nn.LayerNorm(8, bias=False)",
    "nn.GroupNorm(2, 8)", "nn.InstanceNorm2d(8)", "nn.InstanceNorm1d(8, affine=True)",
    "nn.LocalResponseNorm(2)", "nn.RMSNorm(8)", "nn.Dropout()", "nn.Dropout(0.3, inplace=True)",
    "nn.Dropout2d(0.1)", "nn.AlphaDropout(0.2)", "nn.ReLU()", "nn.ReLU(inplace=True)",
    "nn.LeakyReLU(0.2)", "nn.LeakyReLU(0.2, inplace=True)", "nn.ELU(alpha=0.5)", "nn.GELU()",
    "nn.GELU(approximate='tanh')", "nn.SiLU()", "nn.Sigmoid()", "nn.Tanh()", "nn.Softmax(dim=1)",
    "nn.Softmax()", "nn.LogSoftmax(1)", "nn.Hardtanh(-2, 2)", "nn.PReLU()", "nn.PReLU(4, 0.1)",
    "nn.Softplus(beta=2, threshold=10)", "nn.Threshold(0.1, 20)", "nn.Hardswish()", "nn.Mish()",
    "nn.CELU()", "nn.SELU()", "nn.GLU()", "nn.Softmin(0)", "nn.Softsign()", "nn.Tanhshrink()",
    "nn.Hardshrink()", "nn.Softshrink(0.3)", "nn.ReLU6()", "nn.RReLU()", "nn.LogSigmoid()",
    "nn.Identity()", "nn.Flatten()", "nn.Flatten(0, -1)", "nn.Unflatten(1, (2, 4))",
    "nn.MaxPool2d(2)", "nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)",
    "nn.MaxPool1d(2, return_indices=True)", "nn.AvgPool2d(2)",
    "nn.AvgPool2d(3, 2, 1, count_include_pad=False)", "nn.AvgPool1d(3)",
    "nn.AdaptiveAvgPool2d((1, 1))", "nn.AdaptiveAvgPool2d(7)", "nn.AdaptiveMaxPool2d((None, 3))",
    "nn.AdaptiveAvgPool1d(4)", "nn.LPPool2d(2, 3)", "nn.MaxUnpool2d(2)",
    "nn.Upsample(scale_factor=2)", "nn.Upsample(size=(4, 4), mode='bilinear', align_corners=True)",
    "nn.UpsamplingNearest2d(scale_factor=2)", "nn.PixelShuffle(2)", "nn.PixelUnshuffle(2)",
    "nn.ZeroPad2d(1)", "nn.ZeroPad2d((1, 2, 3, 4))", "nn.ReflectionPad2d(2)",
    "nn.ReplicationPad1d(3)", "nn.ConstantPad2d(1, 3.5)", "nn.CircularPad2d(1)",
    "nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=0)",
    "nn.Embedding(10, 3, max_norm=1.0, sparse=True)", "nn.EmbeddingBag(10, 3)",
    "nn.EmbeddingBag(10, 3, mode='sum')", "nn.LSTM(4, 8)",
    "nn.LSTM(4, 8, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)",
    "nn.GRU(4, 8, bias=False)", "nn.RNN(4, 8, nonlinearity='relu')", "nn.LSTMCell(4, 8)",
    "nn.GRUCell(4, 8, bias=False)", "nn.RNNCell(4, 8)", "nn.MultiheadAttention(8, 2)",
    "nn.MultiheadAttention(8, 2, batch_first=True, dropout=0.1, kdim=4, vdim=4)",
    "nn.TransformerEncoderLayer(8, 2, 16)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)",
    "nn.TransformerDecoderLayer(8, 2, 16, norm_first=True)", "nn.Transformer(8, 2, 1, 1, 16)",
    "nn.Bilinear(3, 4, 5)", "nn.CosineSimilarity()", "nn.PairwiseDistance()",
    "nn.CrossEntropyLoss()", "nn.CrossEntropyLoss(label_smoothing=0.1)",
    "nn.MSELoss(reduction='sum')", "nn.BCEWithLogitsLoss()", "nn.NLLLoss()", "nn.L1Loss()",
    "nn.SmoothL1Loss(beta=0.5)", "nn.HuberLoss()", "nn.KLDivLoss(reduction='batchmean')",
    "nn.CTCLoss()", "nn.TripletMarginLoss()",
    "nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))", "nn.Sequential()",
    "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])", "nn.ModuleList()",
    "nn.ModuleDict({'a': nn.Linear(2, 2), 'b': nn.ReLU()})",
    "nn.ParameterList([nn.Parameter(T.zeros(2)), nn.Parameter(T.zeros(3, 2))])",
    "nn.ParameterDict({'w': nn.Parameter(T.zeros(2))})",
    "nn.Sequential(OrderedDict([('fc', nn.Linear(2, 3)), ('act', nn.Tanh())]))",
    "nn.Sequential(nn.Sequential(nn.Linear(1, 1)), nn.ModuleList([nn.ReLU()]))",
    "nn.Fold(output_size=(4, 5), kernel_size=(2, 2))", "nn.Unfold(kernel_size=(2, 3))",
    "nn.ChannelShuffle(2)", "nn.Softmax2d()", "nn.SyncBatchNorm(4)", "nn.Hardsigmoid()",
    "nn.Parameter(T.zeros(2))",
]


def _repr(lib, expr):
    with warnings.catch_warnings():            # (nn.Transformer's nested-tensor note)
        warnings.simplefilter("ignore", UserWarning)
        module = eval(expr, {"nn": lib.nn, "T": lib, "OrderedDict": OrderedDict})  # noqa: S307
    return repr(module).replace("torch.", "ember.")


@pytest.mark.parametrize("expr", CASES)
def test_repr_is_torchs(expr):
    assert _repr(ember, expr) == _repr(torch, expr)


@pytest.mark.parametrize("device", ["cpu", *device_params()])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("cls,shape,padding", [
    ("Conv1d", (2, 3, 9), 2), ("Conv2d", (2, 3, 7, 6), (1, 2)), ("Conv2d", (2, 3, 7, 6), "same"),
    ("Conv3d", (1, 2, 5, 5, 4), 1)])
def test_conv_padding_modes_are_torchs(device, mode, cls, shape, padding):
    kw = dict(padding=padding, padding_mode=mode, dilation=2 if padding == "same" else 1)
    want = getattr(torch.nn, cls)(shape[1], 4, 3, **kw)
    got = getattr(ember.nn, cls)(shape[1], 4, 3, **kw).to(device)
    got.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                         want.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True, device=device)
    a, b = want(tx), got(ex)
    g = rng.standard_normal(tuple(a.shape)).astype(np.float32)
    a.backward(torch.tensor(g))
    b.backward(ember.tensor(g, device=device))
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-4)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-4)
    np.testing.assert_allclose(got.weight.grad.numpy(), want.weight.grad.numpy(), atol=1e-3)


def test_transposed_conv_takes_zeros_padding_only():
    with pytest.raises(ValueError, match="zeros"):
        ember.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        ember.nn.Conv2d(2, 2, 3, padding_mode="mirror")
