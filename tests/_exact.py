"""Reference computations shared by the exactness tests (independent of the library's code).

* :func:`log_polya` — the Dirichlet-multinomial marginal log ∫ Π θ_k^{n_k} Dir(θ; α) dθ;
* :func:`exact_unigram_posterior` — p(z | W) of the mixture of unigrams over all K^D
  assignments, π and β integrated out;
* :func:`final_states` — the states of many independent vmapped chains after a few sweeps
  (draws for chi-square tests against an enumeration).
"""

from __future__ import annotations

import itertools

import jax
import numpy as np
from scipy.special import gammaln


def log_polya(counts, alpha):
    """log ∫ Π θ_k^{n_k} Dir(θ; α) dθ for one count vector."""
    n = np.asarray(counts, float)
    a = np.broadcast_to(np.asarray(alpha, float), n.shape)
    return gammaln(a.sum()) - gammaln(a.sum() + n.sum()) + np.sum(gammaln(a + n) - gammaln(a))


def exact_unigram_posterior(docs, v, k, alpha, lam):
    """p(z | W) for the mixture of unigrams, π and β integrated out, over all K^D assignments."""
    wc = np.array([np.bincount(d, minlength=v) for d in docs], float)
    states = np.array(list(itertools.product(range(k), repeat=len(docs))))
    logp = np.array([
        log_polya(np.bincount(z, minlength=k), alpha)
        + sum(log_polya(wc[z == c].sum(0), np.full(v, lam)) for c in range(k))
        for z in states
    ])
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def final_states(kernel, data, *, num_chains=20_000, sweeps=30, seed=0):
    """The state of each of ``num_chains`` independent chains after ``sweeps`` sweeps (numpy pytree)."""

    @jax.jit
    def run(key):
        def chain(k):
            k0, k1 = jax.random.split(k)
            state = kernel.init(k0, data)
            return jax.lax.fori_loop(
                0, sweeps, lambda t, s: kernel.step(jax.random.fold_in(k1, t), s, data), state
            )

        return jax.vmap(chain)(jax.random.split(key, num_chains))

    return jax.tree_util.tree_map(np.asarray, run(jax.random.key(seed)))
