"""ember.hub (torch.hub): the progress bar programs import from it (tqdm, when the tqdm
package is installed; otherwise a plain iterator that takes the same calls).  Downloading
models from a hub is not part of ember: load() says so."""
from __future__ import annotations

__all__ = ["tqdm", "load", "load_state_dict_from_url"]

try:
    from tqdm import tqdm
except ImportError:
    class tqdm:  # noqa: N801  (torch.hub.tqdm's name)
        """Iterates like tqdm.tqdm; prints nothing (the tqdm package is not installed)."""

        def __init__(self, iterable=None, *args, **kwargs):
            self.iterable = iterable

        def __iter__(self):
            return iter(self.iterable)

        def __len__(self):
            return len(self.iterable)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def set_postfix(self, *args, **kwargs):
            pass

        set_description = set_postfix_str = write = set_postfix

        def update(self, n=1):
            pass

        def close(self):
            pass


def load(*args, **kwargs):
    from ._torch_gaps import gap
    raise gap("torch.hub.load", "ember does not download models; load a state_dict saved "
              "from PyTorch with ember.load(path) instead")


def load_state_dict_from_url(*args, **kwargs):
    from ._torch_gaps import gap
    raise gap("torch.hub.load_state_dict_from_url", "ember does not download files; "
              "download it, then ember.load(path)")
