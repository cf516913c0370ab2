"""Sphinx configuration of ember's documentation: the API reference is generated from the
code (docs/_ext/ember_api.py), the guides are Markdown (MyST).  Build with warnings as errors:

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

import ember  # noqa: E402

project = "ember"
author = "the ember authors"
release = version = ember.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser", "ember_api"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_ext", "README.md"]
# The API pages document ~1,000 objects: as table-of-contents entries (Sphinx's default) each
# page's sidebar listed hundreds of names and copying those trees into every page was 40%
# of the build (45 -> 26 s of CPU).  Sections stay in the sidebar; objects keep their
# anchors, the index and search.
toc_object_entries = False
html_theme = "furo"
html_title = f"ember {version}"

# NumPy-style docstrings; every public callable ends with its PyTorch section
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_custom_sections = ["PyTorch"]
napoleon_use_rtype = False

# signatures without annotations: ember's hints name internal types (and strings, under
# `from __future__ import annotations`) that are not pages of this reference
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_class_signature = "mixed"

# a reference that does not resolve is an error (-n); PyTorch and NumPy names are
# written as literals (``torch.add``), never as references
nitpicky = True
myst_heading_anchors = 3
# a first docstring line such as "Parameter(data, requires_grad=True) -> a Tensor ..." is
# prose, not a signature to parse
autodoc_docstring_signature = False
# words NumPy-style parameter types use that are not classes
nitpick_ignore = [("py:class", word) for word in (
    "number", "optional", "sequence", "callable", "array-like", "scalar", "Tensor or number")]
# ember.dtype is the class ember.dtypes.DType under torch's name: autodoc's "alias of" line
# names the defining module's class, which the reference lists as ember.dtype
nitpick_ignore.append(("py:class", "ember.dtypes.DType"))
# ember.OutOfMemoryError is ember.errors.KernelMemoryError under torch's name, the same way
nitpick_ignore.append(("py:class", "ember.errors.KernelMemoryError"))
