"""ember.utils.tensorboard (torch.utils.tensorboard).

As in PyTorch, importing it needs the tensorboard package: without it, the import fails
with ModuleNotFoundError naming 'tensorboard', as PyTorch's does.  ember has no
SummaryWriter of its own (PyTorch's writes TensorBoard's event files through the
tensorboard package's protobufs and reads torch tensors); with tensorboard installed the
import still fails, saying so, so `try: from torch.utils.tensorboard import SummaryWriter
except ImportError:` takes its fallback.
"""
from __future__ import annotations

from ..errors import ModuleGapError

try:
    import tensorboard  # noqa: F401  (PyTorch's first line: fails without the package)
except ModuleNotFoundError as exc:
    if exc.name != "tensorboard":
        raise
    raise ModuleGapError("No module named 'tensorboard': torch.utils.tensorboard needs the "
                         "tensorboard package, in PyTorch as in ember (pip install "
                         "tensorboard)", name="tensorboard") from None
raise ModuleGapError("ember has no torch.utils.tensorboard.SummaryWriter: PyTorch's writes "
                     "TensorBoard event files from torch tensors and ember does not have that "
                     "writer; log plain numbers (loss.item()) with a writer that takes them "
                     "(tensorboardX.SummaryWriter), or leave logging out",
                     name="torch.utils.tensorboard")
