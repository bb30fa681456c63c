"""conjugate: counting, Pólya marginals, densities, concentrations;
evaluate: accuracy, matching, top words, per-draw relabelling.  (The one-label
documents' data, likelihoods and label probabilities: ``test_one_label.py``.)"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln

from gibbsjax import conjugate as cj
from gibbsjax import evaluate, labels
from gibbsjax._checks import check_concentration

def test_log_dirichlet_multinomial_is_the_polya_marginal():
    # the probability of an ordered sequence with counts n under the Pólya urn, by multiplying
    # the urn's predictive probabilities one draw at a time
    alpha = np.array([0.5, 2.0, 1.0])
    seq = [0, 1, 1, 2, 0, 1]
    logp, counts = 0.0, np.zeros(3)
    for w in seq:
        logp += np.log((counts[w] + alpha[w]) / (counts.sum() + alpha.sum()))
        counts[w] += 1
    assert np.isclose(float(cj.log_dirichlet_multinomial(jnp.asarray(counts), alpha)), logp, atol=1e-5)


def test_log_dirichlet_density_and_beta_density():
    alpha = np.array([2.0, 3.0, 0.5])
    p = np.array([0.2, 0.5, 0.3])
    expect = gammaln(alpha.sum()) - gammaln(alpha).sum() + ((alpha - 1) * np.log(p)).sum()
    assert np.isclose(float(cj.log_dirichlet_density(jnp.log(jnp.asarray(p)), alpha)), expect, atol=1e-5)
    from scipy.stats import beta

    assert np.isclose(float(cj.log_beta_density(jnp.log(0.3), jnp.log(0.7), 2.0, 5.0)),
                      beta.logpdf(0.3, 2.0, 5.0), atol=1e-5)


@pytest.mark.parametrize(
    "name, value",
    [("alpha", 0), ("alpha", -1.0), ("alpha", float("nan")), ("alpha", "x"), ("alpha", True), ("alpha", [])],
)
def test_check_concentration(name, value):
    with pytest.raises(ValueError, match=name):
        check_concentration(name, value, ((), (None,)))


def test_concentration_vector_length():
    assert cj.concentration_vector("alpha", 2.0, 3).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="alpha has 2 entries, but the model has K = 3"):
        cj.concentration_vector("alpha", (1.0, 2.0), 3)


# ----------------------------------------------------------------------------- evaluate
def test_accuracy_confusion_and_matching():
    assert evaluate.accuracy([0, 1, 2, 2], [0, 1, 1, -1]) == pytest.approx(2 / 3)
    assert evaluate.accuracy([0, 1], [-1, -1]) != evaluate.accuracy([0, 1], [-1, -1])  # NaN
    assert evaluate.confusion_matrix([0, 1, 1, 0], [0, 1, 0, 0], 2).tolist() == [[2, 1], [0, 1]]
    acc, mapping = evaluate.matched_accuracy([2, 2, 0, 0, 1], [1, 1, 0, 0, 0])
    assert acc == pytest.approx(0.8) and mapping.tolist() == [0, -1, 1]
    with pytest.raises(ValueError, match="same shape"):
        evaluate.accuracy([0, 1], [0])


def test_top_words():
    assert evaluate.top_words(np.array([[0.1, 0.5, 0.4]]), ["a", "b", "c"], 5) == [["b", "c", "a"]]
    with pytest.raises(ValueError, match="vocab"):
        evaluate.top_words(np.ones((2, 3)), ["a"], 2)
    with pytest.raises(ValueError, match="n must be"):
        evaluate.top_words(np.ones((2, 3)), ["a", "b", "c"], 0)


def test_top_words_equal_the_full_sort_with_ties_and_signed_zeros():
    # reference: Python's sort of every row by (-value, column), ties to the lower column
    rng = np.random.default_rng(3)
    for trial in range(200):
        k, v, n = int(rng.integers(1, 6)), int(rng.integers(1, 40)), int(rng.integers(1, 45))
        m = rng.random((k, v)) if trial % 3 == 0 else rng.integers(0, 3, (k, v)).astype(float)
        if trial % 3 == 2:  # signed zeros and infinities among the ties
            m = np.where(rng.random((k, v)) < 0.4, -0.0, m)
            m[rng.random((k, v)) < 0.2] = np.inf
        vocab = [f"w{j}" for j in range(v)]
        want = [[vocab[j] for j in sorted(range(v), key=lambda j: (-row[j], j))[:n]] for row in m.tolist()]
        assert evaluate.top_words(m, vocab, n) == want


def test_relabel_draws_undoes_within_chain_switching():
    rng = np.random.default_rng(0)
    truth = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    draws = truth[None, None] + 0.03 * rng.normal(size=(3, 50, 3, 3))
    perms_true = np.array([rng.permutation(3) for _ in range(150)]).reshape(3, 50, 3)
    switched = np.take_along_axis(draws, perms_true[..., None], axis=2)
    perms = labels.relabel_draws(switched)
    fixed = np.take_along_axis(switched, perms[..., None], axis=2)
    assert np.abs(fixed - fixed.mean((0, 1))).max() < 0.2  # every draw in the same labelling (noise sd 0.03)
    assert sorted(map(tuple, np.round(fixed.mean((0, 1)), 1))) == sorted(map(tuple, truth))
