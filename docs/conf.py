"""Sphinx configuration of the sblr-rt documentation (``make docs``)."""

import os
import sys
from datetime import date
from pathlib import Path

import sblr_rt

ROOT = Path(__file__).resolve().parents[1]
# The gallery's examples run in this process: one BLAS thread, no display, LSL discovery on
# this machine only (as in the test suite).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLBACKEND", "agg")
os.environ.setdefault("LSLAPICFG", str(ROOT / "tests" / "lsl_api.cfg"))
# The examples read the shipped recordings (a user runs them from the clone's root).
os.environ.setdefault("SBLR_RT_RECORDINGS", str(ROOT / "recordings"))
sys.path.insert(0, str(ROOT / "docs"))

project = "sblr-rt"
author = "sblr-rt developers"
copyright = f"{date.today().year}, {author}"
release = sblr_rt.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/benchmarks/ holds the fragments the benchmarks write; the Benchmarks page includes them.
exclude_patterns = ["_build", "benchmarks/*", "auto_examples/*.ipynb", "auto_examples/*.zip"]
suppress_warnings = ["myst.header"]

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    "capture_repr": ("_repr_html_", "__repr__"),
}

html_theme = "pydata_sphinx_theme"
html_title = f"sblr-rt {release}"
html_static_path = ["_static"]
templates_path = ["_templates"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
