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

# examples that fit models or compile samplers: several seconds each
_SLOW = {
    "gibbsjax.estimators", "gibbsjax.models.lda", "gibbsjax.models.hmm", "gibbsjax.models.bayes_net",
    "gibbsjax.models.naive_bayes", "gibbsjax.models.mixtures", "gibbsjax.models.gaussian_mixture",
    "gibbsjax.models.lda_shard", "gibbsjax.models.lda_pallas", "gibbsjax.models.lda.layout",
    "gibbsjax.models.lda.conditionals", "gibbsjax.models.lda.pallas", "gibbsjax.models.lda.z_updates",
    "gibbsjax.models.lda.priors", "gibbsjax.models.lda.shard", "gibbsjax.models.lda.kernels",
    "gibbsjax.models.lda.inference", "gibbsjax.models.lda.postprocessing", "gibbsjax.run", "gibbsjax.testing",
    "gibbsjax.plots", "gibbsjax.models.normal", "gibbsjax.cli", "gibbsjax.stopping", "gibbsjax.reports",
    "gibbsjax.random",
}
_MODULES = sorted(m.name for m in pkgutil.walk_packages(gibbsjax.__path__, "gibbsjax.")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.slow) if m in _SLOW else m for m in _MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name} (run " \
                               f"pytest --doctest-modules on its file to see them)"
