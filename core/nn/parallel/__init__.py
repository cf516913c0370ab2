"""Data parallelism (ember.nn.parallel): DataParallel on one device, and
DistributedDataParallel over ember.distributed (loaded on first use)."""
from __future__ import annotations

# data_parallel: the function (the submodule's name, as in torch.nn.parallel)
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def __getattr__(name: str):
    # DistributedDataParallel brings ember.distributed: only for programs that use it
    if name == "DistributedDataParallel":
        from .distributed import DistributedDataParallel
        return DistributedDataParallel
    if name == "distributed":
        import importlib
        return importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
