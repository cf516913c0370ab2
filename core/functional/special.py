"""torch.lgamma, digamma and erfinv: argument checks over their declarations (ops/special.py)."""
from __future__ import annotations

from ..dispatch import run
from ..ops.special import digamma_op, erfinv_op, lgamma_op
from ..tensor import Tensor
from ._util import _float, _tensor

__all__ = ["lgamma", "digamma", "erfinv"]


def lgamma(input: Tensor) -> Tensor:
    """log |Gamma(input)|.

    PyTorch
    -------
    ``torch.lgamma``, ``torch.special.gammaln``
    """
    return run(lgamma_op, _float(_tensor("lgamma", input)))


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, psi(input).

    PyTorch
    -------
    ``torch.digamma``, ``torch.special.digamma``, ``torch.special.psi``
    """
    return run(digamma_op, _float(_tensor("digamma", input)))


def erfinv(input: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1); +-inf at +-1 and nan outside.

    PyTorch
    -------
    ``torch.erfinv``, ``torch.special.erfinv``
    """
    return run(erfinv_op, _float(_tensor("erfinv", input)))
