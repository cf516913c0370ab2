"""ember.hub (torch.hub): downloading checkpoints (download_url_to_file,
load_state_dict_from_url, with torch's hash checks and its cache folder layout under
ember's hub folder), and the progress bar programs import from it (tqdm, when the tqdm
package is installed; otherwise a plain iterator that takes the same calls).  Running code
from a GitHub repository's hubconf.py (torch.hub.load, list, help) is not part of ember:
those say so."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import uuid
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["tqdm", "load", "list", "help", "load_state_dict_from_url",
           "download_url_to_file", "get_dir", "set_dir"]

_CHUNK = 128 * 1024
_HASH = re.compile(r"-([a-f0-9]*)\.")        # torch's: the hash prefix in a file name
_hub_dir: str | None = None

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
    """Refused: ember does not run a repository's hubconf.py.

    PyTorch
    -------
    ``torch.hub.load``
    """
    from ._torch_gaps import gap
    raise gap("torch.hub.load", "ember does not run code from a repository's hubconf.py; "
              "build the model in your program and load its weights with "
              "ember.hub.load_state_dict_from_url(url) or ember.load(path)")


def list(*args, **kwargs):  # noqa: A001  (torch.hub.list's name)
    """Refused: ember does not run a repository's hubconf.py.

    PyTorch
    -------
    ``torch.hub.list``
    """
    from ._torch_gaps import gap
    raise gap("torch.hub.list", "ember does not run code from a repository's hubconf.py")


def help(*args, **kwargs):  # noqa: A001  (torch.hub.help's name)
    """Refused: ember does not run a repository's hubconf.py.

    PyTorch
    -------
    ``torch.hub.help``
    """
    from ._torch_gaps import gap
    raise gap("torch.hub.help", "ember does not run code from a repository's hubconf.py")


def get_dir() -> str:
    """The folder downloaded checkpoints go under (``<dir>/checkpoints``): set_dir's, else
    $EMBER_HOME/hub, else $XDG_CACHE_HOME/ember/hub, else ~/.cache/ember/hub.

    PyTorch
    -------
    ``torch.hub.get_dir``
    """
    if _hub_dir is not None:
        return _hub_dir
    home = os.environ.get("EMBER_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ember")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d) -> None:
    """Make get_dir() answer ``d``.

    PyTorch
    -------
    ``torch.hub.set_dir``
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download ``url`` to the path ``dst``: into a temporary file beside it, moved into
    place only once complete (and, with ``hash_prefix``, once its SHA-256 starts with it),
    so an interrupted or corrupted download never leaves a file at ``dst``.

    PyTorch
    -------
    ``torch.hub.download_url_to_file``
    """
    from .errors import CheckpointError
    dst = os.path.expanduser(os.fspath(dst))
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with open(tmp, "w+b") as f, urlopen(Request(url, headers={"User-Agent": "ember.hub"}),
                                            timeout=60) as u:
            size = u.info().get("Content-Length")
            size = int(size) if size else None
            got = 0
            with tqdm(total=size, disable=not progress, unit="B",
                      unit_scale=True, unit_divisor=1024, file=sys.stderr) as bar:
                while True:
                    chunk = u.read(_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    got += len(chunk)
                    if sha256 is not None:
                        sha256.update(chunk)
                    bar.update(len(chunk))
        if size is not None and got != size:
            # urllib returns a short read without an error when the connection drops
            # (torch keeps such a file); a cut-off checkpoint must not be kept
            raise CheckpointError(
                f"download_url_to_file: {url} was cut off after {got} of {size} bytes; nothing "
                f"was written to {os.path.basename(dst)} (download it again)")
        if sha256 is not None:
            digest = sha256.hexdigest()
            if not digest.startswith(hash_prefix):
                raise CheckpointError(
                    f"download_url_to_file: {url} has SHA-256 {digest}, expected one starting "
                    f"with {hash_prefix!r}: the download is corrupted or the file changed; "
                    "nothing was written to " + os.path.basename(dst) + " (check the URL, "
                    "or pass the new hash)")
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool | None = None):
    """Download a checkpoint once into ``<hub dir>/checkpoints`` (or ``model_dir``) and load
    it with :func:`ember.load` (PyTorch's zip checkpoints, ember's own format, safetensors).
    ``check_hash``: the file name's ``-<hex>.`` part must start its SHA-256 (torch's rule).

    Departure: ``weights_only`` left at None loads as :func:`ember.load` does by default
    (weights only; torch's default here is False, which unpickles arbitrary objects from
    the download); pass ``weights_only=False`` for a checkpoint you trust that needs it.

    PyTorch
    -------
    ``torch.hub.load_state_dict_from_url``
    """
    model_dir = os.path.expanduser(model_dir) if model_dir else os.path.join(get_dir(),
                                                                               "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        if progress:
            sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        prefix = None
        if check_hash:
            found = _HASH.search(name)
            prefix = found.group(1) if found else None
        download_url_to_file(url, cached, prefix, progress=progress)
    from .io import load as _load
    return _load(cached, map_location=map_location, weights_only=weights_only)
