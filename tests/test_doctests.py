"""The examples in the docstrings run and print what they say (doctest).

Modules whose examples fit models (seconds each) run in the slow suite; the rest by default.
``pytest --doctest-modules src/gibbsjax`` runs them all the usual way.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gibbsjax

# examples that fit models or compile samplers: several seconds each.  Every module under
# gibbsjax.models is such a module (a new model needs no line here); these are the others
# (a package named here counts with its modules).
_SLOW_OTHERS = {
    "gibbsjax.topics.estimators", "gibbsjax.run", "gibbsjax.testing", "gibbsjax.plots", "gibbsjax.cli",
    "gibbsjax.stopping", "gibbsjax.reports", "gibbsjax.random", "gibbsjax.specs",
}


def _slow(name: str) -> bool:
    return name.startswith("gibbsjax.models.") or any(name == m or name.startswith(m + ".") for m in _SLOW_OTHERS)


_MODULES = sorted(m.name for m in pkgutil.walk_packages(gibbsjax.__path__, "gibbsjax.")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.slow) if _slow(m) else m for m in _MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name} (run " \
                               f"pytest --doctest-modules on its file to see them)"
