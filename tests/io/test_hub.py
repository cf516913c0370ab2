"""ember.hub downloads checkpoints as torch.hub does, from a real HTTP server on localhost:
load_state_dict_from_url gives the tensors torch's gives for the same URL, downloads once
into <hub dir>/checkpoints, checks the file name's hash prefix (check_hash) and a given
hash_prefix, and never leaves a file behind a failed, corrupted or cut-off download."""
from __future__ import annotations

import hashlib
import http.server
import os
import threading

import ember
import numpy as np
import pytest
from ember.errors import CheckpointError

torch = pytest.importorskip("torch")


class _Handler(http.server.SimpleHTTPRequestHandler):
    hits: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        _Handler.hits.append(self.path)
        if self.path.startswith("/cut/"):          # promises more bytes than it sends
            with open(os.path.join(self.directory, self.path[5:]), "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            return
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = lambda *a, **k: _Handler(*a, directory=str(root), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.hits = []
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _checkpoint(root, stem="net"):
    torch.manual_seed(0)
    state = torch.nn.Linear(4, 3).state_dict()
    path = root / f"{stem}.pth"
    torch.save(state, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    named = root / f"{stem}-{digest[:8]}.pth"
    os.rename(path, named)
    return named.name, digest, state


def test_load_state_dict_from_url_as_torch(server, tmp_path):
    root, base = server
    name, _, state = _checkpoint(root)
    ours = ember.hub.load_state_dict_from_url(f"{base}/{name}", model_dir=str(tmp_path / "m"),
                                               progress=False, check_hash=True)
    theirs = torch.hub.load_state_dict_from_url(f"{base}/{name}",
                                                model_dir=str(tmp_path / "t"),
                                                progress=False, check_hash=True)
    assert sorted(ours) == sorted(theirs) == sorted(state)
    for key in state:
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())
    assert (tmp_path / "m" / name).exists()
    hits = len(_Handler.hits)
    again = ember.hub.load_state_dict_from_url(f"{base}/{name}", model_dir=str(tmp_path / "m"),
                                                progress=False)
    assert len(_Handler.hits) == hits                    # cached: not downloaded again
    np.testing.assert_array_equal(again["weight"].numpy(), state["weight"].numpy())


def test_the_hub_dir_and_file_name(server, tmp_path):
    root, base = server
    name, _, _ = _checkpoint(root)
    ember.hub.set_dir(str(tmp_path / "hub"))
    try:
        assert ember.hub.get_dir() == str(tmp_path / "hub")
        ember.hub.load_state_dict_from_url(f"{base}/{name}", progress=False,
                                           file_name="mine.pth")
        assert (tmp_path / "hub" / "checkpoints" / "mine.pth").exists()
    finally:
        ember.hub._hub_dir = None


def test_a_wrong_hash_leaves_nothing(server, tmp_path):
    root, base = server
    name, digest, _ = _checkpoint(root)
    wrong = root / f"net-{'0' * 8}.pth"
    os.rename(root / name, wrong)
    with pytest.raises(CheckpointError, match="SHA-256") as info:
        ember.hub.load_state_dict_from_url(f"{base}/{wrong.name}", model_dir=str(tmp_path / "m"),
                                           progress=False, check_hash=True)
    assert digest in str(info.value)
    assert os.listdir(tmp_path / "m") == []
    dst = tmp_path / "file.pth"
    with pytest.raises(CheckpointError, match="expected one starting with 'abc'"):
        ember.hub.download_url_to_file(f"{base}/{wrong.name}", str(dst), hash_prefix="abc",
                                       progress=False)
    assert sorted(os.listdir(tmp_path)) == ["m", "www"]


def test_a_cut_off_or_missing_download_leaves_nothing(server, tmp_path):
    root, base = server
    name, _, _ = _checkpoint(root)
    dst = tmp_path / "d" / "x.pth"
    dst.parent.mkdir()
    with pytest.raises(CheckpointError, match="cut off after"):
        ember.hub.download_url_to_file(f"{base}/cut/{name}", str(dst), progress=False)
    with pytest.raises(Exception, match="404"):
        ember.hub.download_url_to_file(f"{base}/nothing.pth", str(dst), progress=False)
    assert os.listdir(dst.parent) == []


def test_running_a_hubconf_is_refused_with_the_fix():
    with pytest.raises(ember.errors.UnsupportedError, match="load_state_dict_from_url"):
        ember.hub.load("pytorch/vision", "resnet18")
