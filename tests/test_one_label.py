"""one_label: the one-label documents' data (layout, validation), counts, per-document
likelihoods and label probabilities."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax import conjugate as cj
from gibbsjax.models import one_label as ol
from gibbsjax.corpus import Corpus

DOCS = [["a", "b", "a"], ["c"], ["b", "c", "c", "a"]]


def _docs(**kwargs):
    return ol.documents(Corpus.from_token_lists(DOCS, labels=[0, -1, 1], label_names=["x", "y"]), **kwargs)


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
    assert ol.word_counts(z, d, 2).tolist() == expect.tolist()
    assert ol.word_counts(z, d, 2).dtype == jnp.int32
    log_beta = jnp.log(jnp.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]))
    ll = np.asarray(ol.doc_log_likelihood(log_beta, d))
    assert np.allclose(ll, dtm @ np.asarray(log_beta).T, atol=1e-5)
    total = float(ol.token_log_likelihood(log_beta, z, d))
    assert np.isclose(total, sum(ll[j, int(z[j])] for j in range(3)), atol=1e-5)


def test_feature_counts_and_bernoulli_log_likelihood():
    x = jnp.array([[1, 0, 1], [0, 0, 1], [1, 1, 1]], jnp.int32)
    z = jnp.array([0, 1, 0], jnp.int32)
    n1, n0 = ol.feature_counts(z, x, 2)
    assert n1.tolist() == [[2, 1, 2], [0, 0, 1]] and n0.tolist() == [[0, 1, 0], [1, 1, 0]]
    p = np.array([[0.2, 0.7, 0.9], [0.5, 0.1, 0.3]])
    ll = np.asarray(ol.bernoulli_log_likelihood(jnp.log(p), jnp.log1p(-p), x))
    expect = np.log(np.where(np.asarray(x)[:, None, :] == 1, p[None], 1 - p[None])).sum(-1)
    assert np.allclose(ll, expect, atol=1e-5)


def test_collapsed_label_probs_are_the_sequential_conditionals():
    labels = jnp.array([0, 1, 1, 2], jnp.int32)
    loglik = jnp.log(jnp.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]]))
    alpha = jnp.array([1.0, 0.5, 2.0])
    probs = np.asarray(ol.collapsed_label_probs(labels, loglik, alpha, jnp.array([-1, -1, -1, 2])))
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
        (lambda: ol.documents("abc"), "corpus must be a gibbsjax.corpus.Corpus"),
        (lambda: ol.documents(Corpus.from_token_lists([])), "corpus is empty"),
        (lambda: ol.documents(Corpus(np.array([0], np.int32), np.array([0, 0, 1]), ("a",))),
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
