"""Sphinx configuration of the gibbsjax API reference.

Build: ``python -m sphinx -b html docs docs/_build/html`` (tests/test_docs.py builds it
with ``-W --keep-going``: every warning, numpydoc's validation included, is an error).

Why Sphinx: the docstrings follow the numpydoc convention (NumPy, SciPy, ArviZ, scikit-learn),
and numpydoc's Sphinx extension checks each documented docstring *during the build*
(``numpydoc_validation_checks`` below), so a missing parameter fails the build and CI.
Nothing is fetched from the network: no intersphinx, no remote assets.
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
]

exclude_patterns = ["_build"]
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
# Left out, on purpose: ES01 (an extended summary is not always needed), SA01 (See Also),
# EX01 (examples: the project's rule asks for one per public function, but properties and
# small accessors of documented classes need none; tests/test_doctests.py runs the ones there
# are), PR07/RT03 (a description for each parameter type and return: mostly written, but
# not enforced), SS05 (third-person summary verbs), GL01/GL02 (quote placement).
numpydoc_validation_checks = {"GL08", "SS01", "PR01", "PR02", "PR03", "RT01"}

# Modules whose docstrings are not yet converted to numpydoc sections: documented on the site
# but left out of validation, by name, so that nothing is skipped silently.  Remove a module
# from this list when it is converted; tests/test_docs.py prints the list.  (An entry also
# covers the modules under it.)
NOT_YET_VALIDATED: list[str] = [
]

# numpydoc reports a section it does not know (e.g. "Example" for "Examples") as a Python
# warning, not a Sphinx one; make it an error so that -W catches it too.
warnings.filterwarnings("error", message="Unknown section", category=UserWarning)

numpydoc_validation_exclude = {
    r"\.__init__$",  # documented on the class (numpydoc convention)
    *(rf"^{m.replace('.', chr(92) + '.')}\." for m in NOT_YET_VALIDATED),
}
