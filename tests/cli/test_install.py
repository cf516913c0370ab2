"""Fix commands for how ember was installed: PEP 610 direct_url.json read, and the pip
commands of the matrix rewritten for a source tree, a VCS checkout or an index."""
from __future__ import annotations

import pytest
from ember.tools import install
from ember.tools.install import Installer, Origin, parse_direct_url

FIRST_PARTY = {"ember-opencl", "ember-cuda12", "ember-cuda13", "ember-rocm"}


def tree(tmp_path):
    for dist in ("ember-opencl", "ember-cuda12"):
        (tmp_path / "plugins" / dist).mkdir(parents=True)
        (tmp_path / "plugins" / dist / "pyproject.toml").write_text("[project]\n")
    return tmp_path


@pytest.mark.parametrize("data, kind, path", [
    ({"url": "file:///work/main", "dir_info": {"editable": True}}, "editable", "/work/main"),
    ({"url": "file:///src/my%20ember", "dir_info": {}}, "dir", "/src/my ember"),
    ({"url": "file:///src/repo", "dir_info": {}, "subdirectory": "ember"}, "dir",
     "/src/repo/ember"),
    ({"url": "https://github.com/a/ember.git",
      "vcs_info": {"vcs": "git", "commit_id": "abc123"}}, "vcs", ""),
    ({"url": "file:///w/ember-0.1.0-py3-none-any.whl", "archive_info": {}}, "archive",
     "/w/ember-0.1.0-py3-none-any.whl"),
    ({"url": "https://files.example/ember.whl"}, "index", ""),
])
def test_direct_url_kinds(data, kind, path):
    found = parse_direct_url(data)
    assert (found.kind, found.path) == (kind, path)


def test_this_environment_is_an_editable_source_install():
    # the README's test install: `pip install -e .` from this tree
    here = install.origin("ember")
    assert here.kind in ("editable", "dir") and here.path
    assert install.origin("no-such-distribution-here").kind == "missing"


def test_source_tree_commands(tmp_path):
    root = tree(tmp_path)
    pip = Installer(Origin("editable", path=str(root)), FIRST_PARTY, "pip")
    assert pip.localize("pip install 'ember-opencl[pocl]'") == (
        f"pip install '{root}/plugins/ember-opencl[pocl]'")
    # the tree's plugin is the one made for the ember beside it: also for a version spec
    assert pip.localize("pip install 'ember-cuda12<0.2'") == (
        f"pip install {root}/plugins/ember-cuda12")
    assert pip.localize("pip install -U ember") == f"pip install -U -e {root}"
    # a plugin the tree does not have, and packages of the index, keep their names
    assert pip.localize("pip install ember-rocm") == "pip install ember-rocm"
    assert pip.localize("pip install -U 'numpy>=2.0,<2.3'") == "pip install -U 'numpy>=2.0,<2.3'"
    assert pip.localize("pip uninstall -y ember-cuda12 cupy-cuda12x") == (
        "pip uninstall -y ember-cuda12 cupy-cuda12x")
    assert pip.localize("apt install ocl-icd-libopencl1") == "apt install ocl-icd-libopencl1"


def test_index_and_vcs_commands():
    index = Installer(Origin("index"), FIRST_PARTY, "pip")
    assert index.localize("pip install 'ember-opencl[pocl]'") == "pip install 'ember-opencl[pocl]'"
    vcs = Installer(parse_direct_url({"url": "https://github.com/a/ember.git",
                                      "vcs_info": {"vcs": "git", "commit_id": "abc"}}),
                    FIRST_PARTY, "pip")
    assert vcs.localize("pip install ember-cuda12") == (
        "pip install 'ember-cuda12 @ git+https://github.com/a/ember.git@abc"
        "#subdirectory=plugins/ember-cuda12'")


def test_another_environments_pip_is_not_used(tmp_path):
    other = Installer(Origin("index"), FIRST_PARTY, "/opt/py/bin/python -m pip")
    assert other.localize("pip install -U numpy") == "/opt/py/bin/python -m pip install -U numpy"
    assert other.uninstall("acme") == "/opt/py/bin/python -m pip uninstall -y acme"


def test_commands_inside_prose_are_rewritten(tmp_path):
    root = tree(tmp_path)
    pip = Installer(Origin("dir", path=str(root)), FIRST_PARTY, "pip")
    text = ("without an NVIDIA GPU use OpenCL: pip install 'ember-opencl[pocl]'; or stay on "
            "CUDA 12: pip uninstall -y ember-cuda13 && pip install ember-cuda12   (drivers)")
    assert pip.localize_text(text) == (
        f"without an NVIDIA GPU use OpenCL: pip install '{root}/plugins/ember-opencl[pocl]'; "
        f"or stay on CUDA 12: pip uninstall -y ember-cuda13 && pip install "
        f"{root}/plugins/ember-cuda12   (drivers)")


def test_paths_in_the_home_folder_stay_runnable_after_scrubbing(monkeypatch):
    from ember.tools.collect import scrub
    monkeypatch.setenv("HOME", "/home/alice")
    word = install.shell_path("/home/alice/src/ember/plugins/ember-opencl[pocl]")
    assert word == "~/'src/ember/plugins/ember-opencl[pocl]'"
    assert scrub(word, "/home/alice") == word          # nothing left for the report to hide
