"""Convolution layers and their functional forms (nn.conv) against PyTorch: forward, input
and parameter gradients (float64), gradcheck, errors."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import pytest
from ember.autograd import gradcheck
from nn_helpers import check_layer, randn_stream, twin

randn = randn_stream(0)


CONV2D = [
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1),
    dict(in_channels=2, out_channels=4, kernel_size=(3, 2), dilation=(2, 1), padding=(2, 0)),
    dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding="same"),
    dict(in_channels=2, out_channels=2, kernel_size=4, padding="same", bias=False),
    dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, stride=(1, 2)),
]


# torch warns that it copies the input for even 'same' kernels; that is torch's business
@pytest.mark.parametrize("cfg", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1,
                                                              output_padding=1),
                                 dict(kernel_size=2, stride=3, dilation=2),
                                 dict(kernel_size=3, groups=2, stride=2, bias=False)])
def test_conv_transpose1d(torch, cfg):
    t, e = twin(torch, "ConvTranspose1d", 4, 6, **cfg)
    check_layer(torch, t, e, randn(2, 4, 7))
    check_layer(torch, t, e, randn(4, 7))                       # unbatched
    assert repr(e) == repr(t)
    t2, e2 = twin(torch, "ConvTranspose1d", 2, 3, 3, stride=2, padding=1)
    check_layer(torch, t2, e2, randn(1, 2, 4), kwargs=dict(output_size=(8,)))


@pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
@pytest.mark.parametrize("cfg", CONV2D, ids=lambda c: ",".join(f"{k}={v}"
                                                               for k, v in c.items()))
def test_conv2d(torch, cfg):
    t, e = twin(torch, "Conv2d", **cfg)
    check_layer(torch, t, e, randn(2, cfg["in_channels"], 9, 8))


def test_conv2d_unbatched_and_repr(torch):
    t, e = twin(torch, "Conv2d", 2, 3, 3, stride=2, padding=1, groups=1, bias=False)
    check_layer(torch, t, e, randn(2, 7, 7))
    assert repr(e) == repr(t)


@pytest.mark.parametrize("cfg", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=2),
                                 dict(kernel_size=5, padding="same", dilation=2),
                                 dict(kernel_size=3, groups=2)])
def test_conv1d(torch, cfg):
    t, e = twin(torch, "Conv1d", 4, 6, **cfg)
    check_layer(torch, t, e, randn(3, 4, 11))


@pytest.mark.parametrize("cfg", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1,
                                                              output_padding=1),
                                 dict(kernel_size=(2, 3), stride=(2, 1), dilation=(1, 2)),
                                 dict(kernel_size=3, groups=2, stride=2, bias=False)])
def test_conv_transpose2d(torch, cfg):
    t, e = twin(torch, "ConvTranspose2d", 4, 6, **cfg)
    check_layer(torch, t, e, randn(2, 4, 5, 6))
    assert repr(e) == repr(t)


def test_conv_transpose2d_output_size(torch):
    t, e = twin(torch, "ConvTranspose2d", 2, 3, 3, stride=2, padding=1)
    check_layer(torch, t, e, randn(1, 2, 4, 4), kwargs=dict(output_size=(8, 8)))


@pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
@pytest.mark.parametrize("cfg", [dict(kernel_size=3), dict(kernel_size=(2, 3, 1), stride=2,
                                                              padding=1),
                                 dict(kernel_size=3, dilation=(2, 1, 1), padding=(2, 1, 0),
                                      groups=2),
                                 dict(kernel_size=(2, 3, 3), padding="same", bias=False)],
                         ids=["plain", "stride_padding", "dilation_groups", "same"])
def test_conv3d(torch, cfg):
    t, e = twin(torch, "Conv3d", 4, 6, **cfg)
    check_layer(torch, t, e, randn(2, 4, 5, 6, 5))
    assert repr(e) == repr(t)


def test_conv3d_unbatched(torch):
    t, e = twin(torch, "Conv3d", 2, 3, 2)
    check_layer(torch, t, e, randn(2, 4, 3, 3))


GRADCHECK = [
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
     [(1, 4, 5, 5), (2, 2, 3, 3), (2,)]),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1,
                                                        output_padding=1),
     [(1, 2, 3, 3), (2, 3, 3, 3)]),
    ("conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=(1, 0, 1)),
     [(1, 2, 4, 3, 3), (2, 2, 2, 2, 2), (2,)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, shapes):
    inputs = [ember.tensor(randn(*s), requires_grad=True) for s in shapes]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name, shapes", [("conv1d", ((1, 1, 5), (1, 1, 3))),
                                          ("conv2d", ((1, 1, 5, 5), (1, 1, 3, 3))),
                                          ("conv3d", ((1, 1, 5, 5, 5), (1, 1, 3, 3, 3))),
                                          ("conv_transpose2d", ((1, 1, 5, 5), (1, 1, 3, 3)))])
@pytest.mark.parametrize("bad, says", [(dict(stride=0), "non-positive stride"),
                                       (dict(stride=-1), "non-positive stride"),
                                       (dict(dilation=0), "dilation should be greater than "
                                                          "zero"),
                                       (dict(padding=-1), "negative padding")])
def test_bad_geometry_is_refused_as_torch_refuses_it(name, shapes, bad, says):
    # torch raises RuntimeError for each; ember gave a ZeroDivisionError (stride 0), a silent
    # answer (dilation 0) and a kernel error (padding -1)
    torch = pytest.importorskip("torch")
    x, w = (ember.ones(*s) for s in shapes)
    with pytest.raises(ember.EmberError, match=f"{name}: {says}"):
        getattr(ember.nn.functional, name)(x, w, **bad)
    with pytest.raises(RuntimeError):
        getattr(torch.nn.functional, name)(torch.ones(*shapes[0]), torch.ones(*shapes[1]),
                                           **bad)


def test_errors_name_the_layer():
    with pytest.raises(ember.ShapeError, match="conv2d.*channels"):
        nn.Conv2d(3, 4, 3)(ember.randn(1, 2, 5, 5))
    with pytest.raises(ember.ShapeError, match="larger than the padded input"):
        nn.Conv2d(1, 1, 7)(ember.randn(1, 1, 5, 5))
    with pytest.raises(ValueError, match="Conv2d.*divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    for exc in (ember.ShapeError, ValueError, TypeError):
        assert issubclass(exc, Exception)
    assert issubclass(ember.ShapeError, ember.EmberError)
