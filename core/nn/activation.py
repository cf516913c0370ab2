"""Activation layers and their functional forms (torch.nn.modules.activation).

ReLU, GELU, Softmax, GLU, PReLU, ... and relu6, hardtanh, elu, glu, selu, prelu,
gumbel_softmax, ...; gelu, softplus, ... themselves are ember.functional's, and relu,
leaky_relu, silu and mish are too, here with nn.functional's inplace= (torch.relu has
none; torch.nn.functional.relu has); softmax, log_softmax and softmin are here with
nn.functional's signature (dim=None: torch's implicit choice; _stacklevel=)."""
from __future__ import annotations

import warnings

from .. import dtypes as D
from .. import functional as _EF
from .. import ops
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..errors import EmberTypeError, EmberValueError, EmberWarning, ShapeError
from ..functional import softplus
from ..functional.activation import hardshrink, prelu  # noqa: F401  (F's, one layer down)
from ..ops.sampling import exponential_
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = [
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Tanh",
    "Sigmoid", "LogSigmoid", "Softmax", "Softmin", "LogSoftmax", "GLU", "Hardswish", "Hardsigmoid",
    "SELU", "CELU", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "Threshold",
    "Softmax2d", "PReLU", "RReLU",
]


# -- functional forms ---------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); inplace=True writes it into input (and returns input).

    PyTorch
    -------
    ``torch.nn.functional.relu``
    """
    return input.relu_() if inplace else ops.relu(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``negative_slope * input``; ``inplace`` writes into
    ``input``.

    PyTorch
    -------
    ``torch.nn.functional.leaky_relu``
    """
    return _inplace(input, lambda v: _EF.leaky_relu(v, negative_slope), inplace)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` elementwise.

    PyTorch
    -------
    ``torch.nn.functional.silu``
    """
    return _inplace(input, _EF.silu, inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` elementwise.

    PyTorch
    -------
    ``torch.nn.functional.relu6``
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` clamped to [``min_val``, ``max_val``].

    PyTorch
    -------
    ``torch.nn.functional.hardtanh``
    """
    if min_val > max_val:
        raise EmberValueError(f"hardtanh: min_val cannot be greater than max_val (got "
                              f"min_val={min_val}, max_val={max_val})")
    if type(input) is Tensor and input._dtype in D.INTEGRAL:
        # torch clamps integer tensors to the bounds as the tensor's type: truncated
        min_val, max_val = int(min_val), int(max_val)
    return _inplace(input, lambda v: ops.where(v < min_val, min_val,
                                           ops.where(v > max_val, max_val, v)), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``alpha * (exp(x) - 1)``.

    PyTorch
    -------
    ``torch.nn.functional.elu``
    """
    return _inplace(input, lambda v: ops.where(v > 0, v, ops.expm1(ops.minimum(v, 0.0)) * alpha),
                    inplace)


def logsigmoid(input: Tensor) -> Tensor:
    # -softplus(-x): stable for large |x| in both directions
    """``log(sigmoid(x))`` elementwise, computed stably.

    PyTorch
    -------
    ``torch.nn.functional.logsigmoid``
    """
    return -softplus(-input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` elementwise.

    PyTorch
    -------
    ``torch.nn.functional.mish``
    """
    return _inplace(input, lambda v: v * ops.tanh(softplus(v)), inplace)


def _implicit_dim(name: str, dim, input: Tensor, stacklevel: int) -> int:
    """nn.functional's softmax family without dim=: torch's legacy choice (dim 0 of a 0-, 1-
    or 3-d input, else dim 1), with torch's deprecation warning raised `stacklevel` frames
    up (torch's _stacklevel=)."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", EmberWarning, stacklevel=stacklevel)
    return _softmax_dim(None, input)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along dim, with torch.nn.functional's signature (torch.softmax,
    ember.softmax, takes (input, dim, dtype)).

    PyTorch
    -------
    ``torch.nn.functional.softmax``
    """
    return _EF.softmax(input, _implicit_dim("softmax", dim, input, _stacklevel), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """log(softmax(x)) along dim, with torch.nn.functional's signature.

    PyTorch
    -------
    ``torch.nn.functional.log_softmax``
    """
    return _EF.log_softmax(input, _implicit_dim("log_softmax", dim, input, _stacklevel), dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """softmax(-x) along dim; dtype= casts x first (torch.nn.functional.softmin).

    PyTorch
    -------
    ``torch.nn.functional.softmin``
    """
    dim = _implicit_dim("softmin", dim, input, _stacklevel)
    return _EF.softmax(-(input if dtype is None else input.to(dtype)), dim)


# torch's SELU constants (Klambauer et al., 2017)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _inplace(input: Tensor, fn, inplace: bool) -> Tensor:
    """fn(input); with inplace=True written into input, which is returned.  Where a graph is
    recorded fn runs on a copy, so the input its backward saved is not the tensor
    overwritten (as the Tensor methods' in-place forms do)."""
    if not inplace:
        return fn(input)
    recording = is_grad_enabled() and input.requires_grad
    return input.copy_(fn(input.clone() if recording else input))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``input`` where non-negative, else ``a * input`` with ``a``
    drawn uniformly from [``lower``, ``upper``] per element while training, and
    ``(lower + upper) / 2`` in eval mode (the gradient uses the same ``a``).

    PyTorch
    -------
    ``torch.nn.functional.rrelu``
    """
    if not 0 <= lower <= upper:
        raise EmberValueError(f"rrelu: expected 0 <= lower <= upper, got lower={lower}, "
                              f"upper={upper}")
    if not training or lower == upper:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    with no_grad():
        slope = ops.empty(tuple(input.shape), dtype=input.dtype, device=input.device)
        from ..ops.sampling import uniform_
        uniform_(slope, lower, upper)
    return _inplace(input, lambda v: ops.where(v >= 0, v, v * slope), inplace)


def _inplace_form(fn, name: str):
    def form(input: Tensor, *args, **kwargs) -> Tensor:
        return fn(input, *args, **kwargs, inplace=True)
    form.__name__ = form.__qualname__ = name
    form.__doc__ = (f"``{fn.__name__}`` written into ``input`` (returned).\n\nPyTorch\n"
                    f"-------\n``torch.nn.functional.{name}``\n")
    return form


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of input along dim.

    PyTorch
    -------
    ``torch.nn.functional.glu``
    """
    if input.ndim == 0:
        raise ShapeError("glu: does not support scalars because halving size must be even")
    size = input._data.shape[dim % input.ndim]
    if size % 2:
        raise ShapeError(f"glu: halving dimension must be even, but dimension {dim} is size "
                         f"{size}")
    a, b = ops.chunk(input, 2, dim)
    return a * ops.sigmoid(b)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6.

    PyTorch
    -------
    ``torch.nn.functional.hardswish``
    """
    return _inplace(input, lambda v: ops.where(v <= -3.0, 0.0, ops.where(
        v >= 3.0, v, v * (v + 3.0) / 6.0)), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6.

    PyTorch
    -------
    ``torch.nn.functional.hardsigmoid``
    """
    return _inplace(input, lambda v: ops.where(v <= -3.0, 0.0, ops.where(
        v >= 3.0, 1.0, v / 6.0 + 0.5)), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants.

    PyTorch
    -------
    ``torch.nn.functional.selu``
    """
    def selu_of(v):
        neg = ops.expm1(ops.minimum(v, 0.0)) * (_SELU_ALPHA * _SELU_SCALE)
        return ops.where(v > 0, v * _SELU_SCALE, neg)
    return _inplace(input, selu_of, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    PyTorch
    -------
    ``torch.nn.functional.celu``
    """
    if alpha == 0:
        raise EmberValueError("celu: ZeroDivisionError, alpha cannot be 0")
    def celu_of(v):
        return ops.where(v > 0, v, ops.expm1(ops.minimum(v, 0.0) / alpha) * alpha)
    return _inplace(input, celu_of, inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|).

    PyTorch
    -------
    ``torch.nn.functional.softsign``
    """
    return input / (ops.abs(input) + 1.0)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x).

    PyTorch
    -------
    ``torch.nn.functional.tanhshrink``
    """
    return input - ops.tanh(input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between.

    PyTorch
    -------
    ``torch.nn.functional.softshrink``
    """
    if lambd < 0:
        raise EmberValueError(f"softshrink: lambda must be greater or equal to 0, but found "
                              f"to be {lambd}")
    return ops.where(input > lambd, input - lambd,
                     ops.where(input < -lambd, input + lambd, 0.0))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, value elsewhere.

    PyTorch
    -------
    ``torch.nn.functional.threshold``
    """
    return _inplace(input, lambda v: ops.where(v > threshold, v, value), inplace)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); hard=True gives the one-hot of its argmax in
    the forward pass and the soft sample's gradient (straight-through).  The noise comes
    from ember's host stream, so manual_seed reproduces it on every device.  eps is
    accepted for torch's signature (deprecated and unused there as well).

    PyTorch
    -------
    ``torch.nn.functional.gumbel_softmax``
    """
    if logits._dtype.category != D.FLOAT:
        raise EmberTypeError(f"gumbel_softmax: expected floating logits, got "
                             f"{logits._dtype.name}")
    with no_grad():
        gumbels = -exponential_(ops.empty(*logits._data.shape, dtype=logits._dtype,
                                          device=logits.device)).log()
    y_soft = F.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    d = dim % logits.ndim
    with no_grad():
        index = ops.argmax(y_soft, d, keepdim=True)
        shape = [1] * logits.ndim
        shape[d] = logits._data.shape[d]
        positions = ops.arange(shape[d], device=logits.device).reshape(tuple(shape))
        y_hard = (positions == index).to(logits._dtype)
    return y_hard - y_soft.detach() + y_soft


# -- modules ------------------------------------------------------------------------------


class ReLU(Module):
    """max(x, 0).

    PyTorch
    -------
    ``torch.nn.ReLU``
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU6(Module):
    """min(max(x, 0), 6).

    PyTorch
    -------
    ``torch.nn.ReLU6``
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu6(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise.

    PyTorch
    -------
    ``torch.nn.LeakyReLU``
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                           else "")


class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise.

    PyTorch
    -------
    ``torch.nn.ELU``
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """x * Phi(x), exact (erf) or with the tanh approximation.

    PyTorch
    -------
    ``torch.nn.GELU``
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise EmberValueError(f"GELU: approximate must be 'none' or 'tanh', got "
                                  f"{approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x).

    PyTorch
    -------
    ``torch.nn.SiLU``
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Mish(Module):
    """x * tanh(softplus(x)).

    PyTorch
    -------
    ``torch.nn.Mish``
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    """log(1 + exp(beta x)) / beta (linear above threshold).

    PyTorch
    -------
    ``torch.nn.Softplus``
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clamped to [min_val, max_val].

    PyTorch
    -------
    ``torch.nn.Hardtanh``
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val = min_val, max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class Tanh(Module):
    """tanh(x).

    PyTorch
    -------
    ``torch.nn.Tanh``
    """

    def forward(self, input: Tensor) -> Tensor:
        return ops.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)).

    PyTorch
    -------
    ``torch.nn.Sigmoid``
    """

    def forward(self, input: Tensor) -> Tensor:
        return ops.sigmoid(input)


class LogSigmoid(Module):
    """log(sigmoid(x)), computed stably.

    PyTorch
    -------
    ``torch.nn.LogSigmoid``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


def _softmax_dim(dim, input: Tensor) -> int:
    # torch's legacy choice when dim is None
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim.

    PyTorch
    -------
    ``torch.nn.Softmax``
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, _softmax_dim(self.dim, input))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Softmax):
    """softmax(-x) along dim.

    PyTorch
    -------
    ``torch.nn.Softmin``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, _softmax_dim(self.dim, input))


class LogSoftmax(Module):
    """log(softmax(x)) along dim, computed stably.

    PyTorch
    -------
    ``torch.nn.LogSoftmax``
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, _softmax_dim(self.dim, input))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _Inplace(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GLU(Module):
    """Gated linear unit along dim.

    PyTorch
    -------
    ``torch.nn.GLU``
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6.

    PyTorch
    -------
    ``torch.nn.Hardswish``
    """

    def forward(self, input: Tensor) -> Tensor:
        return hardswish(input, self.inplace)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6.

    PyTorch
    -------
    ``torch.nn.Hardsigmoid``
    """

    def forward(self, input: Tensor) -> Tensor:
        return hardsigmoid(input, self.inplace)


class SELU(_Inplace):
    """Self-normalising ELU.

    PyTorch
    -------
    ``torch.nn.SELU``
    """

    def forward(self, input: Tensor) -> Tensor:
        return selu(input, self.inplace)


class CELU(Module):
    """Continuously differentiable ELU.

    PyTorch
    -------
    ``torch.nn.CELU``
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softsign(Module):
    """x / (1 + |x|).

    PyTorch
    -------
    ``torch.nn.Softsign``
    """

    def forward(self, input: Tensor) -> Tensor:
        return softsign(input)


class Tanhshrink(Module):
    """x - tanh(x).

    PyTorch
    -------
    ``torch.nn.Tanhshrink``
    """

    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(input)


class Hardshrink(Module):
    """x where |x| > lambd, 0 elsewhere.

    PyTorch
    -------
    ``torch.nn.Hardshrink``
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, 0 between.

    PyTorch
    -------
    ``torch.nn.Softshrink``
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class RReLU(Module):
    """Randomized leaky ReLU (:func:`ember.nn.functional.rrelu`): random negative slopes
    in training, their mean in eval mode.

    PyTorch
    -------
    ``torch.nn.RReLU``
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                             else "")


class Threshold(Module):
    """x where x > threshold, value elsewhere.

    PyTorch
    -------
    ``torch.nn.Threshold``
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W).

    PyTorch
    -------
    ``torch.nn.Softmax2d``
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: expected a 3-D or 4-D input, got shape "
                             f"{tuple(input.shape)}")
        return F.softmax(input, -3)


class PReLU(Module):
    """x for x >= 0, a * x otherwise, with a learned (one or per-channel) slope a.

    PyTorch
    -------
    ``torch.nn.PReLU``
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(ops.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


relu_ = _inplace_form(relu, "relu_")
elu_ = _inplace_form(elu, "elu_")
leaky_relu_ = _inplace_form(leaky_relu, "leaky_relu_")
hardtanh_ = _inplace_form(hardtanh, "hardtanh_")
selu_ = _inplace_form(selu, "selu_")
celu_ = _inplace_form(celu, "celu_")
threshold_ = _inplace_form(threshold, "threshold_")
rrelu_ = _inplace_form(rrelu, "rrelu_")
