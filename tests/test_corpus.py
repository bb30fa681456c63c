"""The Corpus type: construction, validation, conversions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gibbsjax.corpus import Corpus


def test_from_token_lists_and_back_to_dtm():
    c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"]])
    assert (c.num_docs, c.num_tokens, c.vocab_size) == (3, 6, 3)
    assert c.doc_ids.tolist() == [0, 0, 0, 1, 2, 2]
    np.testing.assert_array_equal(c.to_dtm().toarray(), [[2, 1, 0], [0, 0, 1], [0, 1, 1]])


def test_dtm_round_trip_sparse_and_dense():
    rng = np.random.default_rng(0)
    X = rng.poisson(0.7, size=(20, 15))
    for M in (X, sp.csr_matrix(X), sp.coo_matrix(X), sp.csc_matrix(X)):
        c = Corpus.from_dtm(M)
        np.testing.assert_array_equal(c.to_dtm().toarray(), X)
        assert c.doc_lengths.tolist() == X.sum(1).tolist()


def test_subset_keeps_order_and_labels():
    c = Corpus.from_token_lists([["a"], ["b", "b"], ["c", "a", "b"]], labels=[0, 1, -1], label_names=["x", "y"])
    s = c.subset([2, 0])
    assert [s.vocab[w] for w in s.tokens] == ["c", "a", "b", "a"]
    assert s.labels.tolist() == [-1, 0]
    assert s.doc_names == ("2", "0")
    assert c.subset(np.array([False, True, False])).num_tokens == 2


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"tokens": [0, 3], "doc_offsets": [0, 2], "vocab": ("a", "b")}, "out of range"),
        ({"tokens": [0, -1], "doc_offsets": [0, 2], "vocab": ("a", "b")}, "out of range"),
        ({"tokens": [0, 1], "doc_offsets": [0, 1], "vocab": ("a", "b")}, "doc_offsets"),
        ({"tokens": [0, 1], "doc_offsets": [0, 2, 1, 2], "vocab": ("a", "b")}, "non-decreasing"),
        ({"tokens": [[0, 1]], "doc_offsets": [0, 2], "vocab": ("a", "b")}, "1-D"),
    ],
)
def test_bad_corpus_raises(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        Corpus(**kwargs)


def test_bad_dtm_raises():
    with pytest.raises(ValueError, match="non-negative integer"):
        Corpus.from_dtm(np.array([[1, -1]]))
    with pytest.raises(ValueError, match="non-negative integer"):
        Corpus.from_dtm(np.array([[1.5, 0]]))
    with pytest.raises(ValueError, match="2-D"):
        Corpus.from_dtm(np.array([1, 2]))
    with pytest.raises(ValueError, match="columns"):
        Corpus.from_dtm(np.array([[1, 2]]), vocab=["a"])


def test_unknown_word_with_fixed_vocab():
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Corpus.from_token_lists([["a", "z"]], vocab=["a", "b"])
