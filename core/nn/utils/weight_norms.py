"""weight_norm and spectral_norm reparametrizations (torch.nn.utils' hook-based ones)."""
from __future__ import annotations

from ... import ops
from ...autograd.grad_mode import no_grad
from ...errors import EmberValueError
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm over every dimension but dim (kept, size 1 elsewhere); dim=-1 means the
    norm of the whole tensor, as torch's norm_except_dim."""
    if dim == -1:
        return ops.sqrt(ops.sum(v * v))
    others = tuple(d for d in range(v.ndim) if d != dim)
    return ops.sqrt(ops.sum(v * v, others, keepdim=True)) if others else ops.abs(v)


class WeightNorm:
    """The forward pre-hook that rebuilds `name` = g * v / ||v|| before each forward."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name: str, dim: int | None) -> WeightNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise EmberValueError(f"weight_norm: cannot register two weight_norm hooks "
                                      f"on the same parameter {name}")
        weight = module._parameters.get(name)
        if weight is None:
            raise EmberValueError(f"weight_norm: module {type(module).__name__} has no "
                                  f"parameter {name!r}")
        if dim is None:
            dim = -1
        elif dim < -1:
            dim += weight.ndim
        fn = WeightNorm(name, dim)
        del module._parameters[name]
        with no_grad():
            module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim)))
            module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize module.<name> as <name>_g * <name>_v / ||<name>_v|| (norm over every
    dim but `dim`; dim=None: over the whole tensor); returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def _remove(module, name: str, kind, what: str):
    """Take the `kind` hook of parameter `name` off module, folding it back in."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise EmberValueError(f"remove_{what}: {what} of {name!r} not found in "
                          f"{type(module).__name__}")


def remove_weight_norm(module, name: str = "weight"):
    """Fold a weight_norm back into one plain parameter `name`; returns the module."""
    return _remove(module, name, WeightNorm, "weight_norm")


class SpectralNorm:
    """The forward pre-hook that sets `name` = <name>_orig / sigma, sigma estimated by power
    iteration on the buffers <name>_u, <name>_v (updated in training mode only)."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise EmberValueError(f"spectral_norm: expected n_power_iterations to be "
                                  f"positive, but got n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = (name, dim,
                                                                   n_power_iterations, eps)

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        mat = weight
        if self.dim != 0:
            mat = mat.permute(self.dim, *[d for d in range(mat.ndim) if d != self.dim])
        return mat.reshape(mat.shape[0], -1)

    def _normalize(self, x: Tensor) -> Tensor:
        norm = ops.sqrt(ops.sum(x * x))
        return x / ops.where(norm < self.eps, self.eps, norm)

    def compute_weight(self, module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # in place into the buffers (as torch), then fresh copies for sigma so a second
            # forward before backward does not disturb the saved ones
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(self._normalize(mat.t() @ u))
                    u.copy_(self._normalize(mat @ v))
                u, v = u.clone(), v.clone()
        sigma = ops.sum(u * (mat @ v))
        return weight / sigma

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module,
                                                       do_power_iteration=module.training))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise EmberValueError(f"spectral_norm: cannot register two spectral_norm "
                                      f"hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise EmberValueError(f"spectral_norm: module {type(module).__name__} has no "
                                  f"parameter {name!r}")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = fn._normalize(ops.randn(h, dtype=weight.dtype, device=weight.device))
            v = fn._normalize(ops.randn(w, dtype=weight.dtype, device=weight.device))
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None):
    """Divide module.<name> by its spectral norm before each forward (power iteration on
    buffers <name>_u/<name>_v in training mode); dim defaults to 1 for ConvTranspose, else
    0.  Returns the module."""
    if dim is None:
        from .. import conv  # the transposed convolutions this ember has
        transposed = tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                                      "ConvTranspose3d") if hasattr(conv, n))
        dim = 1 if isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Fold a spectral_norm back into one plain parameter `name`; returns the module."""
    return _remove(module, name, SpectralNorm, "spectral_norm")
