"""Sphinx configuration of the gibbsjax documentation site: user guide, examples, API reference.

Build: ``python -m sphinx -b html docs docs/_build/html`` (tests/test_docs.py builds it
with ``-W --keep-going``: every warning, numpydoc's validation included, is an error).

Why Sphinx: the docstrings follow the numpydoc convention (NumPy, SciPy, ArviZ, scikit-learn),
and numpydoc's Sphinx extension checks each documented docstring *during the build*
(``numpydoc_validation_checks`` below), so a missing parameter fails the build and CI.
Nothing is fetched from the network: no intersphinx, no remote assets.

The guide's pages are Markdown (MyST, through myst-nb), the examples gallery is the notebooks of
``notebooks/`` (linked into ``docs/examples/``) shown with the outputs stored in them: nothing is
executed during the build (``nb_execution_mode = "off"``).  The API pages are written by
``python docs/api_pages.py``.
"""

from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")

import gibbsjax  # noqa: E402

project = "gibbsjax"
author = "The gibbsjax developers"
copyright = "The gibbsjax developers"  # noqa: A001
release = version = gibbsjax.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",  # Markdown pages (MyST) and notebooks
]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
nb_execution_mode = "off"  # the notebooks are shown with their stored outputs
myst_heading_anchors = 3  # [text](page.md#a-heading) links
myst_enable_extensions = ["colon_fence"]
root_doc = "index"

# pydata-sphinx-theme when installed (the docs and test extras install it); Sphinx's built-in
# theme otherwise, so a bare Sphinx still builds the same pages.
try:
    import pydata_sphinx_theme  # noqa: F401
    html_theme = "pydata_sphinx_theme"
    html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
except ImportError:  # pragma: no cover
    html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"gibbsjax {release}"

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # types are written in the numpydoc sections
autosummary_generate = False

# numpydoc: no autosummary tables of class members (autodoc lists them itself)
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Validation: each check below is a build warning, so -W makes it an error.
#   GL08  the object has a docstring
#   SS01  a summary line
#   PR01  every parameter of the signature is documented (Parameters section)
#   PR02  no documented parameter that the signature lacks
#   PR03  parameters documented in the signature's order
#   RT01  a Returns section where the function returns a value
#   EX01  an Examples section -- for functions and methods only, so it is checked by
#         ``_require_examples`` below, not by numpydoc (numpydoc's EX01 also asks it of every
#         class, property, constant and NamedTuple field).  tests/test_doctests.py runs them.
# Left out, on purpose: ES01 (an extended summary is not always needed), SA01 (See Also),
# PR07/RT03 (a description for each parameter type and return: mostly written, but
# not enforced), SS05 (third-person summary verbs), GL01/GL02 (quote placement).
numpydoc_validation_checks = {"GL08", "SS01", "PR01", "PR02", "PR03", "RT01"}

# Functions and methods still without an Examples section, by full name: the EX01 check
# below skips them, by name, so that nothing is skipped silently.  Remove a name when its
# example is written; add none.
EXAMPLES_TODO: list[str] = [
]

# Modules whose docstrings are not yet converted to numpydoc sections: documented on the site
# but left out of validation, by name, so that nothing is skipped silently.  Remove a module
# from this list when it is converted; tests/test_docs.py prints the list.  (An entry also
# covers the modules under it.)
NOT_YET_VALIDATED: list[str] = [
    "gibbsjax.config",
    "gibbsjax.conjugate",
    "gibbsjax.conjugate_normal",
    "gibbsjax.corpus.core",
    "gibbsjax.corpus.files",
    "gibbsjax.corpus.inputs",
    "gibbsjax.memory",
    "gibbsjax.models.lda.chain_launch",
    "gibbsjax.models.lda.conditionals",
    "gibbsjax.models.lda.fused_triton",
    "gibbsjax.models.lda.fused_triton_kernel",
    "gibbsjax.models.lda.kernels",
    "gibbsjax.models.lda.layout",
    "gibbsjax.models.lda.pallas",
    "gibbsjax.models.lda.priors",
    "gibbsjax.models.lda.sparse",
    "gibbsjax.models.lda.z_updates",
    "gibbsjax.models.one_label",
    "gibbsjax.outputs",
    "gibbsjax.pipeline",
    "gibbsjax.plots.common",
    "gibbsjax.reading",
    "gibbsjax.rows",
    "gibbsjax.run.chunks",
    "gibbsjax.run.driver",
    "gibbsjax.run.placement",
    "gibbsjax.run.results",
    "gibbsjax.run.resuming",
    "gibbsjax.sources",
    "gibbsjax.spec",
    "gibbsjax.specs.bayes_net",
    "gibbsjax.specs.one_label",
    "gibbsjax.topics.estimator_base",
    "gibbsjax.topics.fit",
]

# numpydoc reports a section it does not know (e.g. "Example" for "Examples") as a Python
# warning, not a Sphinx one; make it an error so that -W catches it too.
warnings.filterwarnings("error", message="Unknown section", category=UserWarning)

numpydoc_validation_exclude = {
    r"\.__init__$",  # documented on the class (numpydoc convention)
    *(rf"^{m.replace('.', chr(92) + '.')}\." for m in NOT_YET_VALIDATED),
}


def _require_examples(app, what, name, obj, options, lines):
    """EX01 for functions and methods: a build warning (an error under -W) when the docstring
    has no Examples section.  Runs before numpydoc, on the docstring as written."""
    if what not in ("function", "method") or name.endswith(".__init__") or name in EXAMPLES_TODO:
        return
    if any(name == m or name.startswith(m + ".") for m in NOT_YET_VALIDATED):
        return
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Examples" and set(lines[i + 1].strip()) == {"-"}:
            return
    from sphinx.util import logging as sphinx_logging
    sphinx_logging.getLogger(__name__).warning(
        f"[numpydoc] Validation warnings while processing docstring for {name!r}:\n"
        f"  EX01: No examples section found (a function or method needs one)")


def setup(app):
    app.connect("autodoc-process-docstring", _require_examples, priority=400)  # numpydoc's: 500
