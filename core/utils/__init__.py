"""Utilities: data loading (ember.utils.data), activation checkpointing
(ember.utils.checkpoint), model_zoo.load_url (torch.hub's) and tensorboard (needs the
tensorboard package, as in PyTorch)."""
from __future__ import annotations


def __getattr__(name: str):
    # ember.utils.data loads on first use, so `ember.utils` costs nothing until then
    if name in ("data", "checkpoint", "model_zoo", "tensorboard", "backcompat"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
