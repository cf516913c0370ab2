"""Automatic mixed precision, torch.amp's API: autocast regions and GradScaler.

autocast(device_type, dtype) casts as torch's autocast does: inside an enabled region,
ops on tensors of that device type run in the region's dtype (matmul, linear, conv, ...),
in float32 (losses, softmax on GPUs, ...), or in the widest of their inputs' dtypes (cat,
stack, ...), by torch's op lists; amp_policy.py has the tables, where the casts happen, the
cache of cast weights, and how the CPU backend computes the lower dtypes.  Regions are per
thread and per device type, nest (the innermost wins; enabled=False switches autocast off
inside), and work as decorators.  GradScaler does its full job on every device: scaling
the loss, unscaling the gradients, skipping a step whose gradients hold inf or NaN, and
growing or backing off the scale, with torch's state dict.
"""
from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from . import amp_policy, ops, plugins
from . import dtypes as D
from .autograd.grad_mode import no_grad
from .errors import EmberError, EmberTypeError, EmberValueError, EmberWarning
from .tensor import Tensor

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype",
           "is_autocast_available", "custom_fwd", "custom_bwd"]

# torch's default autocast dtype per device type
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16", "rocm": "float16", "xpu": "float16",
                  "mps": "float16", "opencl": "float16"}


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast accepts this device type."""
    return device_type in _DEFAULT_DTYPE


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """True inside an enabled autocast region for device_type on this thread."""
    region = amp_policy.region(device_type)
    return bool(region and region[0])


def get_autocast_dtype(device_type: str = "cuda"):
    """The dtype autocast regions for device_type name (the innermost one's, or the
    one set_autocast_dtype set, or torch's default)."""
    region = amp_policy.region(device_type)
    if region is not None:
        return region[1]
    chosen = amp_policy.set_default(device_type)
    return chosen if chosen is not None else D.get_dtype(_DEFAULT_DTYPE[device_type])


def set_autocast_dtype(device_type: str, dtype) -> None:
    """The dtype autocast on device_type computes in on this thread: the innermost
    region's (until it exits) or, outside regions, the one regions take by default.

    PyTorch
    -------
    ``torch.set_autocast_dtype``
    """
    if device_type not in _DEFAULT_DTYPE:
        raise EmberValueError(f"set_autocast_dtype: unknown device type {device_type!r}; "
                              f"expected one of {sorted(_DEFAULT_DTYPE)}")
    amp_policy.set_dtype(device_type, D.get_dtype(dtype))


def _deprecated_dtype(old: str, new: str) -> None:
    # torch's text (a DeprecationWarning from its C++ side)
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_gpu_dtype():
    """get_autocast_dtype("cuda") (deprecated in torch).

    PyTorch
    -------
    ``torch.get_autocast_gpu_dtype``
    """
    _deprecated_dtype("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    """get_autocast_dtype("cpu") (deprecated in torch).

    PyTorch
    -------
    ``torch.get_autocast_cpu_dtype``
    """
    _deprecated_dtype("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_gpu_dtype(dtype) -> None:
    """set_autocast_dtype("cuda", dtype) (deprecated in torch).

    PyTorch
    -------
    ``torch.set_autocast_gpu_dtype``
    """
    _deprecated_dtype("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def set_autocast_cpu_dtype(dtype) -> None:
    """set_autocast_dtype("cpu", dtype) (deprecated in torch).

    PyTorch
    -------
    ``torch.set_autocast_cpu_dtype``
    """
    _deprecated_dtype("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def _unsupported(device_type: str, dtype) -> str | None:
    """Why autocast on device_type cannot run in dtype here (torch then warns and disables
    the region), or None."""
    if dtype not in (D.float16, D.bfloat16):
        return (f"In {device_type} autocast, but the target dtype {dtype.name} is not "
                "supported (float16 or bfloat16). Disabling autocast.")
    if device_type == "cpu":
        return None
    backend = plugins.try_backend_for(device_type)
    if backend is None or not plugins.device_count(device_type):
        return (f"User provided device_type of {device_type!r}, but no {device_type} device "
                "is available. Disabling autocast.")
    supported = backend.capabilities(0).dtypes
    if dtype.name not in supported:
        return (f"In {device_type} autocast, but {device_type}:0 does not support "
                f"{dtype.name} (it supports {', '.join(sorted(supported))}). Disabling "
                "autocast.")
    return None


class autocast:
    """with ember.autocast("cpu", dtype=ember.bfloat16): ... (also ember.amp.autocast, and a
    decorator).

    Inside, ops on tensors of device_type run in dtype, in float32 or promoted, by torch's
    op lists (see ember.amp_policy).  dtype defaults to torch's per device type (float16 on
    GPUs, bfloat16 on the CPU); a dtype the device lacks disables the region with a
    warning, as torch's does.  cache_enabled (default True): casts of weights are reused
    until the outermost region exits."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise EmberTypeError(f"autocast: expected device_type to be a string like "
                                 f"'cuda' or 'cpu', got {type(device_type).__name__}")
        device_type = device_type.split(":")[0]
        if not is_autocast_available(device_type):
            raise EmberValueError(f"autocast: unsupported device_type {device_type!r}; "
                                  f"expected one of {', '.join(_DEFAULT_DTYPE)}")
        self.device = device_type
        # without dtype: the thread's current one, as torch's (an enclosing region's, or
        # set_autocast_dtype's, or the device type's default)
        self.fast_dtype = D.get_dtype(dtype if dtype is not None
                                      else get_autocast_dtype(device_type))
        self._enabled = bool(enabled)
        if self._enabled:
            why = _unsupported(device_type, self.fast_dtype)
            if why is not None:
                warnings.warn(why, EmberWarning, stacklevel=2)
                self._enabled = False
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        self._saved: list = []

    def __enter__(self) -> autocast:
        self._saved.append(amp_policy.enter(self.device, self._enabled, self.fast_dtype,
                                            self._cache_enabled))
        return self

    def __exit__(self, *exc) -> None:
        amp_policy.exit(self.device, self._saved.pop())

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapper


def _cast_inputs(value, dtype, device_type):
    if type(value) is Tensor:
        if value._dtype.category == D.FLOAT and value._device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype, device_type) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype, device_type) for k, v in value.items()}
    return value


def custom_fwd(fwd: Callable | None = None, *, device_type: str = "cuda",
               cast_inputs=None) -> Callable:
    """torch.amp.custom_fwd for an autograd.Function's forward: inside an enabled region,
    with cast_inputs given, the forward's floating tensor inputs of device_type are cast to
    it and the forward runs with autocast off; the region's state is kept on ctx for
    custom_bwd."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def wrapper(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        # as torch's: with cast_inputs the backward runs with autocast off
        ctx._fwd_used_autocast = enabled and cast_inputs is None
        if cast_inputs is None or not enabled:
            return fwd(*args, **kwargs)
        dtype = D.get_dtype(cast_inputs)
        args = (ctx, *_cast_inputs(args[1:], dtype, device_type))
        kwargs = _cast_inputs(kwargs, dtype, device_type)
        with autocast(device_type, enabled=False):
            return fwd(*args, **kwargs)
    return wrapper


def custom_bwd(bwd: Callable | None = None, *, device_type: str = "cuda") -> Callable:
    """torch.amp.custom_bwd: the backward runs under the autocast state its forward ran
    under (custom_fwd noted it on ctx)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def wrapper(ctx, *grads):
        enabled = getattr(ctx, "_fwd_used_autocast", False)
        dtype = getattr(ctx, "_dtype", None)
        with autocast(device_type, dtype=dtype, enabled=enabled):
            return bwd(ctx, *grads)
    return wrapper


class _OptState:
    __slots__ = ("stage", "found_inf")

    def __init__(self) -> None:
        self.stage = "ready"              # ready -> unscaled -> stepped, reset by update()
        self.found_inf: Tensor | None = None


class GradScaler:
    """Loss scaling against float16 gradient underflow, as torch.amp.GradScaler:

        scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()

    step() unscales the gradients (unless unscale_ was called), and skips
    optimizer.step() when any of them is inf or NaN; update() then halves the scale
    (backoff_factor), or doubles it (growth_factor) after growth_interval clean steps.
    A scaler for 'cuda' on a machine without a CUDA device disables itself with a
    warning, as torch's does; disabled, it passes everything through."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise EmberValueError(f"GradScaler: growth_factor should be > 1, got "
                                  f"{growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise EmberValueError(f"GradScaler: backoff_factor should be in (0, 1), got "
                                  f"{backoff_factor}")
        if growth_interval <= 0:
            raise EmberValueError(f"GradScaler: growth_interval should be a positive "
                                  f"integer, got {growth_interval}")
        self._device = str(device).split(":")[0]
        # ember.cuda answers for ROCm too (PyTorch's 'cuda' is an alias of 'rocm')
        if enabled and self._device in ("cuda", "rocm"):
            if not plugins.device_count("cuda"):
                warnings.warn(f"GradScaler is enabled, but {self._device} is not available. "
                              "Disabling.", EmberWarning, stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._scale: Tensor | None = None
        self._growth_tracker = 0
        self._per_optimizer: dict[int, _OptState] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    # -- scaling ----------------------------------------------------------------------
    def scale(self, outputs):
        """outputs (a tensor, or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if type(outputs) is Tensor:
            return outputs * self._scale_on(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise EmberTypeError(f"GradScaler.scale: outputs must be a Tensor or an iterable of "
                             f"Tensors, got {type(outputs).__name__}")

    def _scale_on(self, device) -> Tensor:
        if self._scale is None:
            self._scale = ops.full((), self._init_scale, dtype=D.float32, device=device)
        return self._scale if self._scale.device == device else self._scale.to(device)

    def _state_of(self, optimizer) -> _OptState:
        state = self._per_optimizer.get(id(optimizer))
        if state is None:
            state = self._per_optimizer[id(optimizer)] = _OptState()
        return state

    def unscale_(self, optimizer) -> None:
        """Divide optimizer's gradients by the scale in place (e.g. before clipping them)
        and note whether any is inf or NaN."""
        if not self._enabled:
            return
        state = self._state_of(optimizer)
        if state.stage == "unscaled":
            raise EmberError("unscale_() has already been called on this optimizer since "
                             "the last update().")
        if state.stage == "stepped":
            raise EmberError("unscale_() is being called after step().")
        if self._scale is None:
            raise EmberError("GradScaler: unscale_() before scale(): scale the loss first "
                             "(scaler.scale(loss).backward())")
        inv_scale = 1.0 / float(self._scale.item())
        found = None
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    bad = ops.logical_not(ops.all(ops.isfinite(g))).to(D.float32)
                    found = bad if found is None else found + bad.to(found.device)
                    g.mul_(inv_scale)
        state.found_inf = found
        state.stage = "unscaled"

    def step(self, optimizer, *args: Any, **kwargs: Any):
        """optimizer.step(*args, **kwargs) unless the unscaled gradients hold inf/NaN;
        returns what optimizer.step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise EmberError("Closure use is not currently supported if GradScaler is "
                             "enabled.")
        state = self._state_of(optimizer)
        if state.stage == "stepped":
            raise EmberError("step() has already been called since the last update().")
        if state.stage == "ready":
            self.unscale_(optimizer)
        result = None
        if state.found_inf is None or float(state.found_inf.item()) == 0.0:
            result = optimizer.step(*args, **kwargs)
        state.stage = "stepped"
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adjust the scale for the next iteration (or set it to new_scale)."""
        if not self._enabled or self._scale is None:
            return
        if new_scale is not None:
            value = float(new_scale.item()) if type(new_scale) is Tensor else float(new_scale)
            self._scale = ops.full((), value, dtype=D.float32, device=self._scale.device)
        else:
            found = [s.found_inf for s in self._per_optimizer.values()
                     if s.found_inf is not None]
            if not found:
                raise EmberError("No inf checks were recorded prior to update(): call "
                                 "scaler.step(optimizer) (or unscale_) before update()")
            value = float(self._scale.item())
            if any(float(f.item()) > 0 for f in found):
                value *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    value *= self._growth_factor
                    self._growth_tracker = 0
            # float32 rounding, as torch keeps the scale in a float32 tensor
            self._scale = ops.full((), value, dtype=D.float32, device=self._scale.device)
        self._per_optimizer = {}

    # -- settings and state -----------------------------------------------------------
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict:
        """torch's keys: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise EmberValueError("The source state dict is empty, possibly because it was "
                                  "saved from a disabled instance of GradScaler.")
        value = state_dict["scale"]
        self._init_scale = float(value.item()) if type(value) is Tensor else float(value)
        if self._scale is not None:
            self._scale = ops.full((), self._init_scale, dtype=D.float32,
                                   device=self._scale.device)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        tracker = state_dict["_growth_tracker"]
        self._growth_tracker = int(tracker.item()) if type(tracker) is Tensor else int(tracker)
