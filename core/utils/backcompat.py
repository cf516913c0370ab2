"""torch.utils.backcompat: the switches of PyTorch 0.2's warnings about broadcasting and
keepdim changes.  torch 2.13 still keeps them (settable, readable) but no op consults them
any more: the pre-0.2 behaviours they flagged are gone.  ember keeps them the same way, so
programs that set them run, with the same (absent) effect."""
from __future__ import annotations

__all__ = ["Warning", "broadcast_warning", "keepdim_warning"]


class Warning:  # noqa: A001  (torch's name)
    """One switch: ``.enabled`` reads and sets it (off by default).

    PyTorch
    -------
    ``torch.utils.backcompat.Warning``
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._enabled = False

    def set_enabled(self, value) -> None:
        self._enabled = bool(value)

    def get_enabled(self) -> bool:
        return self._enabled

    enabled = property(get_enabled, set_enabled)


broadcast_warning = Warning("broadcast")
keepdim_warning = Warning("keepdim")
