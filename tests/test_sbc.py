"""Simulation-based calibration (gibbsjax.testing.sbc) of every model, and its power.

Each case draws parameters from the prior, data from the model, runs vmapped chains from the
kernel's own random start (warm-up included) and ranks the true values among thinned
posterior draws.  Hyperparameters are generic (asymmetric, distinct, non-zero prior means,
λ ≠ 1).  Mixture and HMM labels are exchangeable a posteriori only up to relabelling, so their
cases rank label-invariant quantities: sorted values, log-likelihoods, co-clustering counts.

Every model's example lives in its spec (``ModelSpec.sbc_case``, next to the model) and the list
of cases is built from the registry.  Default run: the two normal models at a size that still fails a wrong conditional (see
``test_sbc_flags_a_planted_wrong_conditional``; notebooks/sbc.ipynb runs the same two
computations, so they compile once); ``-m slow``: every model, 1000 replications.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import pytest

from gibbsjax.config import get_spec, known_models
from gibbsjax.kernel import sweep
from gibbsjax.models import normal
from gibbsjax.testing import sbc


def sbc_cases() -> dict:
    """Registry name -> the model's SBC example (``ModelSpec.sbc_case``), for every registered model.

    Built from the registry, so a new model is calibrated here without editing this file; a model
    registered without an example is listed with ``None`` (and fails the test below if built in)."""
    return {name: get_spec(name).sbc_case for name in known_models()}


CASES = sbc_cases()
DEFAULT_CASES = ["normal.semiconjugate", "normal.bivariate"]


def test_every_registered_model_has_a_case():
    """Every built-in model brings an SBC example in its spec, with a kernel that can simulate."""
    missing = sorted(name for name, case in CASES.items() if case is None)
    assert not missing, f"models without ModelSpec.sbc_case: {missing}"
    for name, case in CASES.items():
        kernel, _, _ = case()
        assert kernel.sample_prior is not None and kernel.simulate_data is not None, name
        assert kernel.name == name


@pytest.mark.parametrize("name", DEFAULT_CASES)
def test_sbc_default(name):
    kernel, data, fns = CASES[name]()
    result = sbc(kernel, data, fns, num_replications=400, num_draws=49, num_warmup=30, thin=2, seed=1)
    result.assert_passes()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_sbc_every_model(name):
    kernel, data, fns = CASES[name]()
    result = sbc(kernel, data, fns, num_replications=1000, num_draws=99, num_warmup=50, thin=2, seed=2)
    result.assert_passes()


def test_sbc_flags_a_planted_wrong_conditional():
    """The semi-conjugate normal model with σ² drawn from InvGamma(a0 + n, ...) instead of
    a0 + n/2 (posterior of σ² too narrow and too low): SBC fails, at the default size."""
    from gibbsjax import random as gr

    kernel, data, _ = CASES["normal.semiconjugate"]()
    mu0, sigma0, a0, b0 = 1.4, 0.7, 3.3, 1.8  # the example's hyperparameters

    def wrong_sigma2(key, state, d):
        n = d.y.shape[0]
        ss = jnp.sum(jnp.square(d.y - state.mu))
        return gr.inverse_gamma(key, a0 + n, b0 + 0.5 * ss)  # bug: a0 + n/2 is right

    bad = kernel._replace(step=sweep(("mu", functools.partial(normal.sample_mu, mu0=mu0, sigma0=sigma0)),
                                     ("sigma2", wrong_sigma2)), name="wrong")
    result = sbc(bad, data, num_replications=400, num_draws=49, num_warmup=30, thin=2, seed=1)
    assert not result.passed, str(result)
    assert "sigma2" in result.failures
