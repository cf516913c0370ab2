"""torch.* names of the nn family that torch keeps at its top level (torch.conv2d,
torch.layer_norm, torch.embedding, torch.kl_div, torch.hann_window, ...): found by listing
dir(torch) against ember (23 of them are the very objects torch.nn.functional exports;
the others are ATen bindings whose argument order or reduction code differs from F's).

The facade (ember.__getattr__) resolves these lazily, so `import ember` does not load
ember.nn.  Each wrapper follows the ATen schema (`torch._C._jit_get_schemas_for_operator`):
reductions as torch's integer codes (0 none, 1 mean, 2 sum), torch.embedding's
(weight, indices) order, batch/instance norm's (weight, bias, running_mean, running_var)
order, max_pool's empty stride meaning "the kernel size".
"""
from __future__ import annotations

import math
import warnings

from .. import dtypes as D
from .. import ops
from .._nn_names import SAME_AS_FUNCTIONAL, TENSOR_METHODS, TORCH_NN_NAMES
from ..errors import EmberValueError, NotInEmberError
from ..tensor import Tensor
from . import functional as F

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(name, code) -> str:
    if isinstance(code, str):
        return code
    if code not in _REDUCTIONS:
        raise EmberValueError(f"torch.{name}: reduction is torch's integer code (0 none, 1 "
                              f"mean, 2 sum), got {code!r}")
    return _REDUCTIONS[code]


def _method(name):
    def f(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}(input, ...): the same as input.{name}(...)."
    return f


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    return F.selu(input)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold(input, threshold, value)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    if generator is not None:
        raise NotInEmberError("torch.rrelu(generator=): ember's rrelu draws from the global "
                              "stream; seed it with ember.manual_seed")
    return F.rrelu(input, lower, upper, training)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    return F.rms_norm(input, normalized_shape, weight, eps)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def _pool(fn):
    def pool(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
             ceil_mode: bool = False) -> Tensor:
        return fn(input, kernel_size, stride if stride not in ((), []) else None, padding,
                  dilation, ceil_mode)
    pool.__name__ = pool.__qualname__ = fn.__name__
    pool.__doc__ = f"torch.{fn.__name__}: F.{fn.__name__} without return_indices."
    return pool


max_pool1d, max_pool2d, max_pool3d = (_pool(F.max_pool1d), _pool(F.max_pool2d),
                                      _pool(F.max_pool3d))


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def kl_div(input: Tensor, target: Tensor, reduction=1, *, log_target: bool = False) -> Tensor:
    # (the integer "mean" of the ATen op is the plain mean, not batchmean)
    return F.kl_div(input, target, reduction=_reduction("kl_div", reduction),
                    log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     pos_weight=None, reduction=1) -> Tensor:
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits",
                                                    reduction), pos_weight=pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction=1) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction=1) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction=1) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction=1) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction=1, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction), zero_infinity)


# -- the window functions torch.stft users take (torch.hann_window, ...): torch.signal's
# windows, periodic (the default) being sym=False -----------------------------------------

def _windows(pin_memory):
    if pin_memory:
        raise NotInEmberError("pin_memory=True: ember has no pinned host memory (copies are "
                              "synchronous); leave pin_memory out")
    from ..signal import windows
    return windows


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False, pin_memory=None) -> Tensor:
    return _windows(pin_memory).hann(window_length, sym=not periodic, dtype=dtype,
                                     layout=layout, device=device, requires_grad=requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory=None) -> Tensor:
    return _windows(pin_memory).general_cosine(
        window_length, a=[alpha, beta], sym=not periodic, dtype=dtype, layout=layout,
        device=device, requires_grad=requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False, pin_memory=None) -> Tensor:
    return _windows(pin_memory).blackman(window_length, sym=not periodic, dtype=dtype,
                                         layout=layout, device=device,
                                         requires_grad=requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False, pin_memory=None) -> Tensor:
    return _windows(pin_memory).bartlett(window_length, sym=not periodic, dtype=dtype,
                                         layout=layout, device=device,
                                         requires_grad=requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory=None) -> Tensor:
    return _windows(pin_memory).kaiser(window_length, beta=beta, sym=not periodic,
                                       dtype=dtype, layout=layout, device=device,
                                       requires_grad=requires_grad)


def range(start, end=None, step=1, *, dtype=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """torch.range: deprecated in torch (it warns, as here); `end` included."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    count = int(math.floor((end - start) / step)) + 1
    dtype = D.get_default_dtype() if dtype is None else D.get_dtype(dtype)
    out = ops.arange(count, dtype=D.float64) * step + start
    out = out.to(dtype)
    out = out.to(device) if device is not None else out
    return out.requires_grad_(True) if requires_grad else out


# the facade's list (core/_nn_names.py: kept apart so `import ember` does not load nn)
NAMES = TORCH_NN_NAMES


def resolve(name: str):
    if name in SAME_AS_FUNCTIONAL:
        return getattr(F, name)
    if name in TENSOR_METHODS:
        return _method(name)
    return globals()[name]
