"""ember.nn.init: in-place initialisers with torch.nn.init's names, formulas and defaults.

Values come from ember's seeded host stream (ember.manual_seed), so a seed gives the same
weights on every device.  Every function writes under no_grad and returns the tensor.
"""
from __future__ import annotations

import math
import warnings

from .. import ops
from ..autograd.grad_mode import no_grad
from ..errors import EmberValueError, ShapeError
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "dirac_", "sparse_", "uniform", "normal",
           "constant", "xavier_uniform",
           "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


def _write(tensor: Tensor, values: Tensor) -> Tensor:
    with no_grad():
        tensor.copy_(values)
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch.nn.init.calculate_gain)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise EmberValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise EmberValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; "
                          f"expected one of {', '.join(linear)}, tanh, relu, leaky_relu, selu")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ShapeError(f"fan in and fan out can not be computed for a tensor with fewer "
                         f"than 2 dimensions (got shape {tuple(tensor.shape)})")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise EmberValueError(f"mode {mode!r} is not supported; expected 'fan_in' or "
                              "'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    return _write(tensor, ops.uniform(a, b, tensor.shape, dtype=tensor.dtype,
                                      device=tensor.device, generator=generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    return _write(tensor, ops.normal(mean, std, tensor.shape, dtype=tensor.dtype,
                                     device=tensor.device, generator=generator))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Normal(mean, std) truncated to [a, b], by the inverse CDF as in torch."""
    if not a < b:
        raise EmberValueError(f"trunc_normal_: expected a < b, got a={a}, b={b}")

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    with no_grad():
        # float64 on the CPU: the tails need the precision, and not every device has it
        u = ops.uniform(2 * lo - 1, 2 * hi - 1, tensor.shape, dtype="float64",
                        generator=generator)
        x = _erfinv(u) * (std * math.sqrt(2.0)) + mean
        x = ops.where(x < a, a, ops.where(x > b, b, x))
    return _write(tensor, x)


def _erfinv(y: Tensor) -> Tensor:
    """erfinv on (-1, 1): Giles' approximation refined by two Newton steps on erf."""
    w = -ops.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws, wl = w - 2.5, ops.sqrt(w) - 3.0
    ps = _poly(ws, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
    pl = _poly(wl, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                    0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
    x = ops.where(small, ps, pl) * y
    for _ in range(2):
        err = ops.erf(x) - y
        x = x - err / (ops.exp(-(x * x)) * (2.0 / math.sqrt(math.pi)))
    return x


def _poly(w: Tensor, coefficients) -> Tensor:
    p = w * 0.0 + coefficients[0]
    for c in coefficients[1:]:
        p = p * w + c
    return p


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _write(tensor, ops.full_like(tensor, val))


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ShapeError(f"eye_: only 2-D tensors are supported, got shape "
                         f"{tuple(tensor.shape)}")
    return _write(tensor, ops.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor          # torch warns and leaves zero-element tensors alone
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal draw."""
    import numpy as np
    if tensor.ndim < 2:
        raise ShapeError("orthogonal_: only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = ops.randn(rows, cols, dtype="float64", generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    values = ops.from_host(np.ascontiguousarray(q * gain).reshape(tuple(tensor.shape)),
                           tensor.device)
    return _write(tensor, values)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a 3-, 4- or 5-D convolution weight: each output channel passes its
    input channel through unchanged (per group), torch.nn.init.dirac_."""
    import numpy as np
    if tensor.ndim not in (3, 4, 5):
        raise EmberValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are "
                              f"supported, got shape {tuple(tensor.shape)}")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise EmberValueError(f"dirac_: dim 0 ({sizes[0]}) must be divisible by groups "
                              f"({groups})")
    per_group = sizes[0] // groups
    values = np.zeros(sizes, dtype=np.float64)
    centre = tuple(n // 2 for n in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1.0
    return _write(tensor, ops.from_host(values, tensor.device).to(tensor.dtype))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D tensor drawn from N(0, std) with ceil(sparsity * rows) entries of each column
    set to zero, at rows chosen uniformly per column (torch.nn.init.sparse_)."""
    import numpy as np
    if tensor.ndim != 2:
        raise EmberValueError(f"sparse_: only tensors with 2 dimensions are supported, got "
                              f"shape {tuple(tensor.shape)}")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    values = ops.randn(rows, cols, dtype="float64", generator=generator).numpy() * std
    order = np.argsort(ops.rand(rows, cols, dtype="float64", generator=generator).numpy(),
                       axis=0, kind="stable")          # a uniform permutation per column
    values[order[:zeros], np.arange(cols)] = 0.0
    return _write(tensor, ops.from_host(values, tensor.device).to(tensor.dtype))


# -- the old names without the trailing underscore, deprecated in PyTorch (FutureWarning) --

def _deprecated(method):
    new, old = method.__name__, method.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
                      FutureWarning, stacklevel=2)
        return method(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"{new} under its old name, deprecated as in PyTorch."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
