"""The conformance suite every backend (ours and third-party) must pass.

Run it for every available device with `pytest --pyargs ember.testing`, for chosen devices
with `EMBER_TEST_DEVICES=mydev:0 pytest --pyargs ember.testing`, or without pytest as a
table per op family and device: `python -m ember.testing --report [--device mydev:0]`.

What it checks, on every device: each row of the op table (cases/, one module per op
family) against NumPy in every dtype the device has, on contiguous, strided, transposed,
negative-step, offset and expanded inputs, with gradcheck and gradgradcheck; the decided
semantics (semantics.py, docs/semantics.md) and the view and aliasing rules (views.py); and
random programs against the CPU backend (programs.py).
"""
from __future__ import annotations

from . import semantics, views
from .cases import CASES, Input, OpCase
from .checks import (
    LAYOUTS,
    Unsupported,
    check_forward,
    check_gradients,
    check_layouts,
    make_inputs,
    run_case,
)
from .rules import Rule
from .suite import Check, Target, all_checks, devices_under_test, targets

# the decided semantics and the view rules, joined here (the two modules' own lists)
RULES = [*semantics.RULES, *views.RULES]

__all__ = ["CASES", "Input", "OpCase", "RULES", "Rule", "LAYOUTS", "Check", "Target",
           "Unsupported", "all_checks", "targets", "devices_under_test", "make_inputs",
           "check_forward", "check_layouts", "check_gradients", "run_case"]
