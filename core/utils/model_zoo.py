"""ember.utils.model_zoo (torch.utils.model_zoo): load_url is torch.hub's
load_state_dict_from_url, as in PyTorch (ember.hub says what ember does with a URL)."""
from __future__ import annotations

from ..hub import load_state_dict_from_url as load_url
from ..hub import tqdm

__all__ = ["load_url", "tqdm"]
