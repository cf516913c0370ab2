"""Helpers for the nn/optim tests: conversion between ember and PyTorch tensors."""
from __future__ import annotations

import ember
import numpy as np


def to_ember(t, requires_grad: bool = False) -> ember.Tensor:
    """A torch tensor's values as an ember tensor (same dtype)."""
    arr = np.array(t.detach().cpu().numpy(), copy=True)
    return ember.tensor(arr, requires_grad=requires_grad)


def to_numpy(x) -> np.ndarray:
    if isinstance(x, ember.Tensor):
        return x.detach().numpy()
    return x.detach().cpu().numpy()


def copy_weights(torch_module, ember_module) -> None:
    """Load a torch module's state dict into the ember twin (same keys and shapes)."""
    ember_module.load_state_dict({k: to_ember(v) for k, v in
                                  torch_module.state_dict().items()})
