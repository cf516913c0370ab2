"""Mistakes a type checker must catch in a user's script (tests/typing/test_mypy.py): each
line marked `# error` is one."""
from __future__ import annotations

import ember
from ember import Tensor, nn

x: Tensor = ember.randn(4, 8)
x.no_such_method()  # error: Tensor has no such attribute
layer = nn.Linear("8", 3)  # error: in_features is an int
y: Tensor = x.item()  # error: item() is a Python number
x.backward(gradient=None, no_such_keyword=True)  # error: unexpected keyword
