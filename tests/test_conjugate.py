"""conjugate: counting, per-document likelihoods, Pólya marginals, data validation;
evaluate: accuracy, matching, top words, per-draw relabelling."""

from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln

from gibbsjax import conjugate as cj
from gibbsjax import evaluate, labels
from gibbsjax._checks import check_concentration
from gibbsjax.corpus import Corpus

DOCS = [["a", "b", "a"], ["c"], ["b", "c", "c", "a"]]


def _docs(**kwargs):
    return cj.documents(Corpus.from_token_lists(DOCS, labels=[0, -1, 1], label_names=["x", "y"]), **kwargs)


def _dense(d):
    m = np.zeros((d.num_docs, d.vocab_size), int)
    np.add.at(m, (np.asarray(d.doc_ids), np.asarray(d.tokens)), 1)
    return m


def test_counts_and_log_likelihood_match_dense_computation():
    d = _docs()
    z = jnp.array([1, 0, 1], jnp.int32)
    dtm = _dense(d)
    assert cj.class_counts(z, 2).tolist() == [1, 2]
    expect = np.stack([dtm[np.asarray(z) == k].sum(0) for k in range(2)])
    assert cj.word_counts(z, d, 2).tolist() == expect.tolist()
    assert cj.word_counts(z, d, 2).dtype == jnp.int32
    log_beta = jnp.log(jnp.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]))
    ll = np.asarray(cj.doc_log_likelihood(log_beta, d))
    assert np.allclose(ll, dtm @ np.asarray(log_beta).T, atol=1e-5)
    total = float(cj.token_log_likelihood(log_beta, z, d))
    assert np.isclose(total, sum(ll[j, int(z[j])] for j in range(3)), atol=1e-5)


def test_feature_counts_and_bernoulli_log_likelihood():
    x = jnp.array([[1, 0, 1], [0, 0, 1], [1, 1, 1]], jnp.int32)
    z = jnp.array([0, 1, 0], jnp.int32)
    n1, n0 = cj.feature_counts(z, x, 2)
    assert n1.tolist() == [[2, 1, 2], [0, 0, 1]] and n0.tolist() == [[0, 1, 0], [1, 1, 0]]
    p = np.array([[0.2, 0.7, 0.9], [0.5, 0.1, 0.3]])
    ll = np.asarray(cj.bernoulli_log_likelihood(jnp.log(p), jnp.log1p(-p), x))
    expect = np.log(np.where(np.asarray(x)[:, None, :] == 1, p[None], 1 - p[None])).sum(-1)
    assert np.allclose(ll, expect, atol=1e-5)


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


def test_collapsed_label_probs_are_the_sequential_conditionals():
    labels = jnp.array([0, 1, 1, 2], jnp.int32)
    loglik = jnp.log(jnp.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]]))
    alpha = jnp.array([1.0, 0.5, 2.0])
    probs = np.asarray(cj.collapsed_label_probs(labels, loglik, alpha, jnp.array([-1, -1, -1, 2])))
    for d in range(3):
        others = np.bincount(np.delete(np.asarray(labels), d), minlength=3)
        w = (others + np.asarray(alpha)) * np.exp(np.asarray(loglik[d]))
        assert np.allclose(probs[d], w / w.sum(), atol=1e-6)
    assert probs[3].tolist() == [0, 0, 1]


# ----------------------------------------------------------------------------- data
def test_documents_layout():
    d = _docs(observed=True)
    assert d.tokens.dtype == jnp.int32 and d.doc_ids.tolist() == [0, 0, 0, 1, 2, 2, 2, 2]
    assert d.doc_lengths.tolist() == [3, 1, 4] and d.labels.tolist() == [0, -1, 1]
    assert d.latent.tolist() == [1] and d.num_classes == 2 and d.vocab == ("a", "b", "c")
    m = _docs()
    assert m.labels.tolist() == [-1, -1, -1] and m.latent.tolist() == [0, 1, 2]
    assert m.true_labels.tolist() == [0, -1, 1]
    # equal data share the static metadata (no recompilation) ...
    assert jax.tree_util.tree_structure(_docs()) == jax.tree_util.tree_structure(m)


@pytest.mark.parametrize(
    "make, msg",
    [
        (lambda: cj.documents("abc"), "corpus must be a gibbsjax.corpus.Corpus"),
        (lambda: cj.documents(Corpus.from_token_lists([])), "corpus is empty"),
        (lambda: cj.documents(Corpus(np.array([0], np.int32), np.array([0, 0, 1]), ("a",))),
         r"corpus: document 0 \('0'\) has no tokens"),
        (lambda: _docs(observed=True, num_classes=1), "num_classes must be an integer >= 2"),
        (lambda: _docs(observed=True, labels=[0, 3, 1]), "labels out of range"),
        (lambda: _docs(observed=True, labels=[[0, 1, 1]]), "labels must have shape"),
        (lambda: _docs(hide_labels=0.5), "hide_labels needs observed=True"),
        (lambda: _docs(observed=True, hide_labels=True), "hide_labels"),
        (lambda: _docs(observed="yes"), "observed"),
    ],
)
def test_documents_reject_bad_input(make, msg):
    with pytest.raises(ValueError, match=msg):
        make()


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
