"""The backend contract: what a plugin's backend object provides (a Protocol) and its reports."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Probe:
    """Whether a backend can run here; when not, the first failing step and the fix."""

    available: bool
    reason: str = ""            # plain words: "no NVIDIA driver was found"
    fix: str = ""               # the next command to run
    reference: str = ""         # stable slug, e.g. "cuda-no-driver"
    details: dict = field(default_factory=dict)   # versions and other facts seen


@dataclass(frozen=True)
class DeviceInfo:
    """One device of a backend, as `ember devices` prints it."""

    index: int | None
    name: str
    kind: str = "cpu"           # "cpu", "gpu", "accelerator"
    platform: str = ""
    version: str = ""
    memory: int | None = None   # bytes
    fp64: bool = True
    fp16: bool = True

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"


@dataclass(frozen=True)
class Capabilities:
    """What a device can do; `dtypes` are ember dtype names."""

    dtypes: frozenset
    memory: int | None = None
    extra: dict = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """A backend serves one device type.

    kernels: op name -> callable on native arrays (see ember.ops for each op's signature).
    Natives never leave the backend except through to_host.
    """

    name: str
    kernels: dict[str, Callable[..., Any]]

    def probe(self) -> Probe: ...

    def devices(self) -> list[DeviceInfo]: ...

    def from_host(self, array, index: int | None): ...

    def to_host(self, native): ...

    def capabilities(self, index: int | None) -> Capabilities: ...
