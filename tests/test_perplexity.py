"""Held-out perplexity by document completion against an independent computation.

The reference is computed here in float64 from its definition (Wallach et al. 2009): split
every document into its first ``floor(fraction * n_d)`` tokens (observed) and the rest
(scored), in the documents' own order (``shuffle_seed=None``); estimate θ_d as the posterior
mean E[θ_d | observed tokens, φ] with φ fixed, by enumerating every topic assignment of the
observed tokens; then perplexity = exp(−mean over scored tokens of log Σ_k θ_dk φ_{k,w}).
The code under test estimates the same θ_d by Gibbs sampling (a Monte Carlo average), so the
two agree within its Monte Carlo error; the fractions are not 0.5, where observing one part
and scoring the other would look alike either way round.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import gammaln

from gibbsjax.corpus import Corpus
from gibbsjax.models.lda import heldout_perplexity

PHI = np.array([[0.55, 0.30, 0.10, 0.05],    # topic 0: words a, b
                [0.05, 0.10, 0.25, 0.60]])   # topic 1: words c, d
VOCAB = ["a", "b", "c", "d"]
ALPHA = 0.5
# the first part leans one way and the rest the other, so the two parts are not exchangeable
DOCS = [list("aabab" "dcd"),
        list("ddcdd" "aab"),
        list("abdad" "cbb"),
        list("cadcb" "aad")]


def _posterior_mean_theta(words: list[int], phi: np.ndarray, alpha: float) -> np.ndarray:
    """E[θ | w, φ] for one document under θ ~ Dir(alpha), z_i ~ θ, w_i ~ φ_{z_i}: the mean of
    (n_k + α) / (N + Kα) over every assignment z, weighted by p(z | α) Π_i φ_{z_i, w_i}."""
    K, N = phi.shape[0], len(words)
    log_w, means = [], []
    for z in itertools.product(range(K), repeat=N):
        n = np.bincount(z, minlength=K)
        log_prior = gammaln(K * alpha) - gammaln(N + K * alpha) + np.sum(gammaln(n + alpha) - gammaln(alpha))
        log_w.append(log_prior + sum(np.log(phi[k, w]) for k, w in zip(z, words)))
        means.append((n + alpha) / (N + K * alpha))
    log_w = np.array(log_w)
    weights = np.exp(log_w - log_w.max())
    return (weights[:, None] * np.array(means)).sum(axis=0) / weights.sum()


def _reference(docs, phi, alpha, fraction, *, swapped=False) -> float:
    """The perplexity from its definition; ``swapped``: θ from the scored part, the observed one
    scored (the halves exchanged, a bug the test must tell apart)."""
    index = {w: i for i, w in enumerate(VOCAB)}
    logs = []
    for doc in docs:
        ids = [index[w] for w in doc]
        cut = int(np.floor(fraction * len(ids)))
        observed, scored = ids[:cut], ids[cut:]
        if swapped:
            observed, scored = scored, observed
        theta = _posterior_mean_theta(observed, phi, alpha)
        logs += [np.log(theta @ phi[:, w]) for w in scored]
    return float(np.exp(-np.mean(logs)))


@pytest.mark.parametrize("fraction", [0.25, 0.75])
def test_document_completion_matches_an_exact_reference(fraction):
    corpus = Corpus.from_token_lists(DOCS, vocab=VOCAB)
    want = _reference(DOCS, PHI, ALPHA, fraction)
    swapped = _reference(DOCS, PHI, ALPHA, fraction, swapped=True)
    assert abs(swapped / want - 1) > 0.08, (want, swapped)  # far outside the tolerance below
    got = heldout_perplexity(PHI, corpus, alpha=ALPHA, fraction=fraction, num_sweeps=4000, num_burn=200,
                             seed=3, shuffle_seed=None)
    print(f"fraction {fraction}: perplexity {got:.4f}, exact reference {want:.4f}, halves swapped {swapped:.4f}")
    assert got == pytest.approx(want, rel=0.02)
