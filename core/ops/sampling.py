"""Random sampling beyond the factories: multinomial, bernoulli, the *_like factories and
the in-place fills (uniform_, normal_, ...).

Every random number comes from ember's one host stream (creation.py), copied to the
device; what is computed from them (multinomial's inverse CDF, Gumbel keys) runs as ember
ops on the tensors' own device.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..tensor import Tensor, preserve_format
from . import _out
from ._out import factory
from .creation import _gen, _made, formatted, rand, randint, randn

__all__ = ["bernoulli", "multinomial", "poisson", "rand_like", "randint_like", "randn_like"]




def _like(x: Tensor, dtype, device):
    return dict(dtype=dtype or x._dtype, device=device or x._device)


@factory("layout", "pin_memory")
def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=preserve_format, generator=None) -> Tensor:
    """Samples uniform on [0, 1) with ``input``'s shape (and dtype and device unless given).

    PyTorch
    -------
    ``torch.rand_like``
    """
    return formatted(rand(input._data.shape, generator=generator,
                          **_like(input, dtype, device)), input,
                     memory_format, requires_grad, "rand_like")


@factory("layout", "pin_memory")
def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False,
               memory_format=preserve_format, generator=None) -> Tensor:
    """Standard normal samples with ``input``'s shape (and dtype and device unless given).

    PyTorch
    -------
    ``torch.randn_like``
    """
    return formatted(randn(input._data.shape, generator=generator,
                           **_like(input, dtype, device)), input,
                     memory_format, requires_grad, "randn_like")


@factory("layout", "pin_memory")
def randint_like(input: Tensor, low=0, high=None, *, dtype=None, device=None,
                 requires_grad: bool = False, memory_format=preserve_format,
                 generator=None) -> Tensor:
    """Integers in [low, high) (randint_like(x, high) draws from [0, high)).

    PyTorch
    -------
    ``torch.randint_like``
    """
    if high is None:
        low, high = 0, low
    return formatted(randint(low, high, input._data.shape, generator=generator,
                             **_like(input, dtype, device)), input, memory_format,
                     requires_grad, "randint_like")


def _check_probs(input: Tensor):
    if type(input) is not Tensor:
        raise EmberTypeError(f"multinomial: expected a Tensor of probabilities, got "
                             f"{type(input).__name__}")
    if input.ndim not in (1, 2) or input._data.shape[-1] == 0:
        raise ShapeError(f"multinomial: prob_dist must be 1 or 2 dim with at least one "
                         f"category, got shape {tuple(input.shape)}")
    if input._dtype.category != D.FLOAT:
        raise EmberTypeError(f"multinomial: expected floating point probabilities, got "
                             f"{input._dtype.name}")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None, out=None) -> Tensor:
    """num_samples category indices per row of input (non-negative weights, not
    necessarily summing to 1), with or without replacement.

    PyTorch
    -------
    ``torch.multinomial``
    """
    if out is not None:
        return _out.write_out("multinomial", multinomial(input, num_samples, replacement,
                                                         generator=generator), out, (input,))
    _check_probs(input)
    rows = input.reshape(1, -1) if input.ndim == 1 else input
    n, k = rows._data.shape
    if num_samples <= 0:
        raise EmberValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    if not replacement and num_samples > k:
        raise EmberValueError(f"multinomial: cannot sample n_sample > prob_dist.size(-1) "
                              f"samples without replacement ({num_samples} > {k})")
    p = rows.detach()
    # a row that is negative, non-finite or all zero has no distribution (PyTorch refuses)
    bad = (p < 0).any() | (~p.isfinite()).any() | (p.sum(1) <= 0).any()
    if bool(bad.item()):
        raise EmberValueError("multinomial: invalid multinomial distribution (encountering "
                              "probability entry < 0, inf or nan, or a row summing to 0)")
    device = input._device
    if replacement:
        # inverse CDF: the index of the first running sum above u * total
        cdf = p.cumsum(1)
        u = _made(lambda: _gen(generator).random((n, num_samples)), device, False,
                  random=True, name="multinomial").to(p._dtype)
        target = u * cdf[:, -1:]
        out = (cdf.unsqueeze(1) <= target.unsqueeze(2)).sum(2)
        out = out.minimum(k - 1)
    else:
        # Gumbel top-k: the k largest log p + Gumbel noise are a draw without replacement
        e = _made(lambda: _gen(generator).exponential(size=(n, k)), device, False,
                  random=True, name="multinomial").to(p._dtype)
        keys = p.log() - e.log()         # -log(E) is standard Gumbel noise
        keys = keys.masked_fill(p == 0, -math.inf)
        out = keys.topk(num_samples, 1)[1]
        if num_samples > 1 and bool(((p > 0).sum(1) < num_samples).any().item()):
            raise EmberValueError("multinomial: fewer categories with nonzero probability "
                                  "than num_samples, without replacement")
    return out.reshape(num_samples) if input.ndim == 1 else out


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """1 with probability input (or p) elementwise, else 0, in input's dtype.

    PyTorch
    -------
    ``torch.bernoulli``
    """
    if out is not None:
        return _out.write_out("bernoulli", bernoulli(input, p, generator=generator), out,
                              (input, p))
    prob = input if p is None else p
    if type(prob) is Tensor:
        bad = ((prob < 0) | (prob > 1)).any() if prob._dtype.category == D.FLOAT else None
        if bad is not None and bad.item():
            raise EmberValueError("bernoulli: expected every probability in [0, 1], got "
                                  f"values outside it (min {prob.min().item()}, max "
                                  f"{prob.max().item()})")
    elif not 0 <= prob <= 1:
        raise EmberValueError(f"bernoulli: expected p in [0, 1], got {prob}")
    u = _made(lambda: _gen(generator).random(input._data.shape), input._device, False,
              random=True, name="bernoulli").to(input._dtype if input._dtype.category ==
                                                D.FLOAT else D.float32)
    return (u < prob).to(input._dtype)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Samples from Poisson distributions whose rates are the elements of ``input``.

    PyTorch
    -------
    ``torch.poisson``; the samples differ from PyTorch's for the same seed.
    """
    rates = input.detach()._host()
    return _made(lambda: _gen(generator).poisson(rates).astype(rates.dtype), input._device,
                 False, random=True, name="poisson")


def _standard_gamma(concentration: Tensor, generator=None) -> Tensor:
    """Draws from Gamma(concentration, 1), one per element, from ember's host stream (the
    distributions' Gamma, Beta and Dirichlet sample through it); not differentiable.

    PyTorch
    -------
    ``torch._standard_gamma``; the samples differ from PyTorch's for the same seed.
    """
    alpha = concentration.detach()._host()
    tiny = np.finfo(alpha.dtype).tiny
    return _made(lambda: np.maximum(_gen(generator).standard_gamma(alpha), tiny)
                 .astype(alpha.dtype), concentration._device, False, random=True,
                 name="standard_gamma")


def _binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Draws from Binomial(count, prob), one per element (same shapes), from ember's host
    stream, in prob's dtype; not differentiable.

    PyTorch
    -------
    ``torch.binomial``; the samples differ from PyTorch's for the same seed.
    """
    n = count.detach()._host()
    p = prob.detach()._host()
    return _made(lambda: _gen(generator).binomial(n.astype(np.int64), p).astype(p.dtype),
                 prob._device, False, random=True, name="binomial")


# --- in-place fills: draw on the host, copy into the tensor (through copy_) -----------------

def _fill_from(x: Tensor, name: str, draw) -> Tensor:
    values = _made(lambda: np.asarray(draw(x._data.shape)), x._device, False, random=True,
                   name=name)
    from ..autograd.grad_mode import no_grad
    with no_grad():                      # as PyTorch: a fill is not part of the graph
        return x.copy_(values)


def _need_float(name, x):
    if x._dtype.category != D.FLOAT:
        raise EmberTypeError(f"{name}: expected a floating point tensor, got {x._dtype.name}")


def _param(name, ok, expects):
    if not ok:
        raise EmberValueError(f"{name} expects {expects}")


def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    _need_float("uniform_", x)
    _param("uniform_", a <= b, f"to return a [from, to) range, but found from={a} > to={b}")
    return _fill_from(x, "uniform_", lambda s: _gen(generator).uniform(a, b, s))


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    _need_float("normal_", x)
    _param("normal_", std >= 0, f"std >= 0.0, but found std {std}")
    return _fill_from(x, "normal_", lambda s: _gen(generator).normal(mean, std, s))


def bernoulli_(x: Tensor, p=0.5, *, generator=None) -> Tensor:
    if type(p) is Tensor:
        return x.copy_(bernoulli(p.expand(x._data.shape), generator=generator))
    return _fill_from(x, "bernoulli_", lambda s: _gen(generator).random(s) < p)


def exponential_(x: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    _need_float("exponential_", x)
    _param("exponential_", lambd > 0, f"lambda > 0.0, but found lambda={lambd}")
    return _fill_from(x, "exponential_",
                      lambda s: _gen(generator).exponential(1.0 / lambd, s))


def log_normal_(x: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    _need_float("log_normal_", x)
    _param("log_normal_", std > 0, f"std > 0.0, but found std={std}")
    return _fill_from(x, "log_normal_", lambda s: _gen(generator).lognormal(mean, std, s))


def geometric_(x: Tensor, p: float, *, generator=None) -> Tensor:
    _param("geometric_", 0 < p < 1, f"p to be in (0, 1), but got p={p}")
    return _fill_from(x, "geometric_", lambda s: _gen(generator).geometric(p, s))


def cauchy_(x: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    _need_float("cauchy_", x)
    _param("cauchy_", sigma > 0, f"sigma > 0.0, but found sigma={sigma}")
    return _fill_from(x, "cauchy_",
                      lambda s: median + sigma * _gen(generator).standard_cauchy(s))


def random_(x: Tensor, from_=0, to=None, *, generator=None) -> Tensor:
    """Integers in [from_, to) (random_(to) draws from [0, to)); with no bound, from
    [0, 2**mantissa] for floats or the dtype's range for integers, as PyTorch."""
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        if x._dtype.category == D.FLOAT:
            to = 2 ** {"float16": 11, "bfloat16": 8, "float32": 24}.get(x._dtype.name, 53) + 1
        elif x._dtype is D.bool_:
            to = 2
        else:
            to = int(np.iinfo(x._dtype.np).max) + 1
    return _fill_from(x, "random_", lambda s: _gen(generator).integers(from_, to, s))
