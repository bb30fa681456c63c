"""Simulation-based calibration (gibbsjax.testing.sbc) of every model, and its power.

Each case draws parameters from the prior, data from the model, runs vmapped chains from the
kernel's own random start (warm-up included) and ranks the true values among thinned
posterior draws.  Hyperparameters are generic (asymmetric, distinct, non-zero prior means,
λ ≠ 1).  Mixture and HMM labels are exchangeable a posteriori only up to relabelling, so their
cases rank label-invariant quantities: sorted values, log-likelihoods, co-clustering counts.

Default run: the two normal models at a size that still fails a wrong conditional (see
``test_sbc_flags_a_planted_wrong_conditional``; notebooks/sbc.ipynb runs the same two
computations, so they compile once); ``-m slow``: every model, 1000 replications.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax.config import _BUILTIN
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import bayes_net as bn
from gibbsjax.models import gaussian_mixture as gm
from gibbsjax.models import hmm, lda, mixtures, normal
from gibbsjax.models import naive_bayes as nb
from gibbsjax.testing import sbc


def _sorted(x):
    return jnp.sort(jnp.ravel(x))


def _co_clustered(z):
    """Number of pairs with equal labels: invariant under relabelling."""
    return jnp.sum(jnp.triu(z[:, None] == z[None, :], 1))


def _semiconjugate():
    kernel = normal.semiconjugate(mu0=1.4, sigma0=0.7, a0=3.3, b0=1.8)
    return kernel, normal.data(np.array([0.3, 1.9, 1.1, 2.4, 0.8])), None


def _bivariate():
    return normal.bivariate(0.6), None, None


def _gaussian_mixture():
    kernel = gm.normal_gamma(K=2, alpha=(0.8, 2.1), mu0=1.3, lam=0.45, a=3.4, b=1.9)
    fns = {
        "mu_sorted": lambda s, d: _sorted(s.mu),
        "tau_sorted": lambda s, d: _sorted(s.tau),
        "log_lik": gm.log_likelihood,
        "co_clustered": lambda s, d: _co_clustered(s.z),
    }
    return kernel, gm.data(np.array([0.2, 1.0, 2.5, 3.1, -0.4, 1.7])), fns


def _categorical_hmm():
    kernel = hmm.categorical(K=2, alpha_init=(0.6, 1.4), alpha_trans=((2.5, 0.4), (0.8, 1.7)),
                             beta=((0.5, 1.2, 2.1), (1.6, 0.3, 0.9)))
    data = hmm.categorical_data([[0, 1, 2, 0, 2], [1, 2, 2]], num_symbols=3)
    fns = {name: (lambda s, d, _n=name: kernel.record(s, d)[_n])
           for name in ("log_lik", "transition_sorted", "emission_sorted")}
    return kernel, data, fns


def _gaussian_hmm():
    kernel = hmm.gaussian(K=2, alpha_init=(1.3, 0.7), alpha_trans=((1.8, 0.6), (0.9, 2.4)),
                          mu0=0.8, lam=0.45, a=3.2, b=1.9)
    data = hmm.gaussian_data([[0.1, -0.3, 1.2, 0.5], [2.0, 0.0]])
    fns = {name: (lambda s, d, _n=name: kernel.record(s, d)[_n])
           for name in ("log_lik", "transition_sorted", "mu_sorted", "sigma_sorted")}
    return kernel, data, fns


DOCS = [[0, 0, 1], [2, 2], [0, 1, 2, 0], [1]]


def _corpus():
    return Corpus.from_token_lists([[str(w) for w in d] for d in DOCS], vocab=["0", "1", "2"])


def _unigrams(factory):
    kernel = factory(2, alpha=(1.2, 2.5), lam=0.8)
    fns = {"co_clustered": lambda s, d: _co_clustered(s.z),
           "beta_word0_sorted": lambda s, d: _sorted(jnp.exp(s.log_beta[:, 0])),
           "beta_word2_sorted": lambda s, d: _sorted(jnp.exp(s.log_beta[:, 2]))}
    return kernel, mixtures.unigram_data(_corpus()), fns


def _bernoulli():
    kernel = mixtures.bernoulli(2, alpha=(1.6, 0.9), a=0.7, b=1.3)
    data = mixtures.bernoulli_data(np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]]))
    fns = {"co_clustered": lambda s, d: _co_clustered(s.z),
           "p_sorted": lambda s, d: _sorted(jnp.exp(s.log_p[:, 0])),
           "pi_sorted": lambda s, d: _sorted(jnp.exp(s.log_pi))}
    return kernel, data, fns


def _naive_bayes():
    kernel = nb.dirichlet_multinomial((2.0, 3.0, 1.5), 0.7)
    corpus = Corpus.from_token_lists([[str(w) for w in d] for d in DOCS + [[1, 2], [0]]], vocab=["0", "1", "2"],
                                     labels=[0, -1, -1, 2, -1, 1], label_names=["x", "y", "z"])
    data = nb.data(corpus)
    fns = {"labels": lambda s, d: jnp.where(d.labels >= 0, d.labels, s.labels),
           "theta": lambda s, d: jnp.exp(s.log_theta)}
    return kernel, data, fns


def _bayes_net():
    net = bn.network([("A", 2, []), ("B", 3, ["A"]), ("C", 2, ["A", "B"])],
                     concentration={"A": [[1.5, 0.6]], "B": [[0.8, 2.0, 1.1], [2.4, 0.5, 1.3]],
                                    "C": [[1.3, 0.4], [0.6, 1.9], [2.2, 0.9], [0.7, 1.6], [1.2, 2.6], [0.35, 0.8]]})
    data = bn.data(net, [[0, -1, 1], [-1, 2, -1], [1, -1, 0], [-1, -1, 1]])
    valid = np.nonzero(net.valid())  # the real CPT entries (rows are padded to the largest card)
    fns = {"cpt": lambda s, d: jnp.exp(s.log_cpt)[valid],
           "x": lambda s, d: bn.merge_observed(s.x, d)}
    return bn.dirichlet_cpts(), data, fns


def _lda(factory):
    k, alpha, eta = 2, 0.6, 0.35
    data = lda.data(Corpus.from_token_lists([["a", "b"], ["b", "c", "c"], ["a", "c"]], vocab=["a", "b", "c"]))
    fns = {"log_joint": lambda s, d: lda.log_joint_collapsed(s.z, d, k=k, alpha=alpha, eta=eta),
           "topic_counts_sorted": lambda s, d: _sorted(jnp.stack([jnp.sum((s.z == t) * d.mask) for t in range(k)]))}
    return factory(k, alpha=alpha, eta=eta), data, fns


CASES = {
    "normal.semiconjugate": _semiconjugate,
    "normal.bivariate": _bivariate,
    "gaussian_mixture.normal_gamma": _gaussian_mixture,
    "hmm.categorical": _categorical_hmm,
    "hmm.gaussian": _gaussian_hmm,
    "mixtures.unigrams": functools.partial(_unigrams, mixtures.unigrams),
    "mixtures.unigrams_collapsed": functools.partial(_unigrams, mixtures.unigrams_collapsed),
    "mixtures.bernoulli": _bernoulli,
    "naive_bayes.dirichlet_multinomial": _naive_bayes,
    "lda.collapsed": functools.partial(_lda, lda.collapsed),
    "lda.partially_collapsed": functools.partial(_lda, lda.partially_collapsed),
    "lda.uncollapsed": functools.partial(_lda, lda.uncollapsed),
}
#: registered models without an SBC case, and why (each is checked another way in its own test file)
WITHOUT_SBC = {
    "bayes_net.dirichlet_cpts": "its kernel has no sample_prior/simulate_data yet (the case below builds it all but "
                                "those); tests/test_bayes_net.py checks it by exact enumeration",
    "naive_bayes.uncollapsed": "its kernel has no sample_prior/simulate_data yet; tests/test_naive_bayes.py checks it "
                               "against exact enumeration",
}
DEFAULT_CASES = ["normal.semiconjugate", "normal.bivariate"]


def test_every_registered_model_has_a_case():
    """The case list is keyed by registry names and misses none of the built-in models."""
    assert set(CASES) | set(WITHOUT_SBC) == set(_BUILTIN), sorted((set(CASES) | set(WITHOUT_SBC)) ^ set(_BUILTIN))
    assert not set(CASES) & set(WITHOUT_SBC)


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

    kernel, data, _ = _semiconjugate()
    mu0, sigma0, a0, b0 = 1.4, 0.7, 3.3, 1.8

    def wrong_sigma2(key, state, d):
        n = d.y.shape[0]
        ss = jnp.sum(jnp.square(d.y - state.mu))
        return gr.inverse_gamma(key, a0 + n, b0 + 0.5 * ss)  # bug: a0 + n/2 is right

    bad = kernel._replace(step=sweep(("mu", functools.partial(normal.sample_mu, mu0=mu0, sigma0=sigma0)),
                                     ("sigma2", wrong_sigma2)), name="wrong")
    result = sbc(bad, data, num_replications=400, num_draws=49, num_warmup=30, thin=2, seed=1)
    assert not result.passed, str(result)
    assert "sigma2" in result.failures
