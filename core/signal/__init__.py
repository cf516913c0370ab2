"""ember.signal: torch.signal's window functions (ember.signal.windows)."""
from __future__ import annotations

from . import windows

__all__ = ["windows"]
