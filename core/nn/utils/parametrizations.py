"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations
(parametrize.register_parametrization), the forms torch recommends over the hook-based
ones in nn.utils."""
from __future__ import annotations

from ... import ops
from ...autograd.grad_mode import no_grad
from ...errors import EmberValueError, NotInEmberError
from ...tensor import Tensor
from ..module import Module
from .parametrize import register_parametrization
from .weight_norms import _norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """module.<name> = g * v / ||v|| (the norm over every dim but `dim`; None: the whole
    tensor), g and v in module.parametrizations.<name>.original0 / original1.

    PyTorch
    -------
    ``torch.nn.utils.parametrizations.weight_norm``
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise EmberValueError(f"weight_norm: module '{type(module).__name__}' has no "
                              f"parameter or buffer with name '{name}'")
    if dim is not None and dim < -1:
        dim += weight.ndim
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def _normalize(x: Tensor, eps: float) -> Tensor:
    norm = ops.sqrt(ops.sum(x * x))
    return x / ops.where(norm < eps, eps, norm)


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise EmberValueError(f"spectral_norm: dim must be in [-{ndim}, {ndim - 1}] "
                                  f"but got {dim}")
        if n_power_iterations <= 0:
            raise EmberValueError("spectral_norm: expected n_power_iterations to be "
                                  f"positive, but got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._matrix(weight)
            h, w = mat.shape
            with no_grad():
                u = ops.randn(h, dtype=weight.dtype, device=weight.device)
                v = ops.randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", _normalize(u, eps))
            self.register_buffer("_v", _normalize(v, eps))
            self._power_method(mat, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, mat: Tensor, iterations: int) -> None:
        with no_grad():
            for _ in range(iterations):
                self._u.copy_(_normalize(mat @ self._v, self.eps))
                self._v.copy_(_normalize(mat.mT.conj() @ self._u, self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = ops.sum(u.conj() * (mat @ v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """module.<name> divided by its largest singular value, estimated by power iteration
    (buffers _u, _v of the parametrization; updated on each read in training mode). dim
    defaults to 1 for transposed convolutions, else 0.

    PyTorch
    -------
    ``torch.nn.utils.parametrizations.spectral_norm``
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise EmberValueError(f"spectral_norm: module '{type(module).__name__}' has no "
                              f"parameter or buffer with name '{name}'")
    if dim is None:
        from .. import conv
        transposed = tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                                      "ConvTranspose3d") if hasattr(conv, n))
        dim = 1 if isinstance(module, transposed) else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim,
                                                         eps))
    return module


def orthogonal(module: Module, name: str = "weight", orthogonal_map=None, *,
               use_trivialization: bool = True) -> Module:
    """Not in ember yet: refuses with NotInEmberError (torch's keeps a matrix orthogonal
    through the matrix exponential, the Cayley map or Householder products).

    PyTorch
    -------
    ``torch.nn.utils.parametrizations.orthogonal``
    """
    raise NotInEmberError(
        f"parametrizations.orthogonal (map {orthogonal_map!r}, "
        f"use_trivialization={use_trivialization}) is not in ember yet; "
        "parametrize.register_parametrization with your own map works (e.g. a module "
        "returning torch.linalg.matrix_exp(X - X.mT) for a square weight)")
