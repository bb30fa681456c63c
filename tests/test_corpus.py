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


# ---------------------------------------------------------------------- tokenizer, stop words
from gibbsjax.corpus import WORD_PATTERN, EmptyDocumentWarning, english_stop_words, tokenize  # noqa: E402


def test_tokenize_rules():
    """The default pattern is scikit-learn's (one-character tokens dropped, numbers kept, an
    apostrophe splits); WORD_PATTERN keeps single letters and inner apostrophes, drops numbers."""
    text = "Hello, World!  It's 2024: x1 well-known __init__ get_item dogs' 3d"
    assert tokenize(text) == ["hello", "world", "it", "2024", "x1", "well", "known", "__init__", "get_item",
                              "dogs", "3d"]
    assert tokenize(text, pattern=WORD_PATTERN) == [
        "hello", "world", "it's", "x1", "well", "known", "init", "get_item", "dogs", "d"
    ]
    assert tokenize("Ünïcode Straße café", lowercase=True) == ["ünïcode", "straße", "café"]
    assert tokenize("Don’t stop", pattern=WORD_PATTERN) == ["don't", "stop"]  # typographic apostrophe
    assert tokenize("Don’t stop") == ["don", "stop"]
    assert tokenize("The Cat", lowercase=False) == ["The", "Cat"]
    assert tokenize("a-b c", pattern=r"\S+") == ["a-b", "c"]
    assert tokenize("") == [] and tokenize("1 4.5 --") == [] and tokenize("123 4.5", pattern=WORD_PATTERN) == []
    with pytest.raises(ValueError, match="str"):
        tokenize(b"bytes")


def test_default_tokens_are_countvectorizers():
    """Corpus.from_texts with the default token_pattern finds CountVectorizer's words and counts
    (scikit-learn is the reference); another pattern gives CountVectorizer's with that pattern."""
    from sklearn.feature_extraction.text import CountVectorizer

    texts = ["x = f(a, b) + 2 * y_1", "The cat's 3 toys: a ball, a mouse; x!", "naïve café—Straße_2 I a", "é", "ab1 cd2 ab3"]
    for kwargs in ({}, {"token_pattern": r"(?u)\b\w+\b"}, {"token_pattern": r"([a-z]+)\d"}):
        vectorizer = CountVectorizer(**kwargs)
        expected = vectorizer.fit_transform(texts).toarray()
        c = Corpus.from_texts(texts, empty="keep", **kwargs)
        assert c.vocab == tuple(vectorizer.get_feature_names_out())
        np.testing.assert_array_equal(c.to_dtm().toarray(), expected)
    words = set(Corpus.from_texts(texts, token_pattern=WORD_PATTERN).vocab)
    assert {"a", "b", "i", "x", "cat's"} <= words and not {"2", "3", "cat"} & words


def test_token_pattern_is_checked_and_splits_stop_words():
    with pytest.raises(ValueError, match=r"token_pattern '\(a\)\(b\)' has 2 capturing groups"):
        Corpus.from_texts(["ab"], token_pattern="(a)(b)")
    with pytest.raises(ValueError, match=r"token_pattern '\[a' is not a regular expression"):
        Corpus.from_texts(["ab"], token_pattern="[a")
    with pytest.raises(ValueError, match="token_pattern must be a regular expression .*got int 3"):
        Corpus.from_texts(["ab"], token_pattern=3)
    with pytest.raises(ValueError, match="tokenizer or token_pattern, not both"):
        Corpus.from_texts(["ab"], tokenizer=str.split, token_pattern=r"\w+")
    # a custom tokenizer: its words, stop words matched exactly
    assert Corpus.from_texts(["don't go"], tokenizer=str.split, stop_words=["don't"]).vocab == ("go",)
    # the default pattern splits "don't" into "don" (and a dropped "t"): the stop word stops "don"
    assert Corpus.from_texts(["I don't go, we're here"], stop_words="english").vocab == ("go",)
    assert Corpus.from_texts(["don't go"], stop_words=["don't"]).vocab == ("go",)
    assert Corpus.from_texts(["don't go"], token_pattern=WORD_PATTERN, stop_words=["don"]).vocab == ("don't", "go")


def test_english_stop_words():
    sw = english_stop_words()
    assert 150 <= len(sw) <= 300
    assert {"the", "a", "and", "of", "is", "don't", "themselves"} <= sw
    assert not {"topic", "model", "cat", "data"} & sw
    assert all(w == w.lower() and w.strip() == w and " " not in w for w in sw)


# ---------------------------------------------------------------------- from_texts
TEXTS = ["The cat sat on the mat.", "A dog and a cat!", "The end of the story, the END."]


def test_from_texts_basic_and_stop_words():
    c = Corpus.from_texts(TEXTS)
    assert c.vocab == tuple(sorted(set(c.vocab)))
    assert c.to_token_lists()[0] == ["the", "cat", "sat", "on", "the", "mat"]
    s = Corpus.from_texts(TEXTS, stop_words="english")
    assert s.to_token_lists() == [["cat", "sat", "mat"], ["dog", "cat"], ["end", "story", "end"]]
    custom = Corpus.from_texts(TEXTS, stop_words=["the", "a", "cat"])
    assert "cat" not in custom.vocab and "and" in custom.vocab
    upper = Corpus.from_texts(["The THE the"], lowercase=False)
    assert upper.vocab == ("THE", "The", "the")
    with pytest.raises(ValueError, match="stop_words"):
        Corpus.from_texts(TEXTS, stop_words="french")


def test_from_texts_min_count_and_max_doc_freq():
    texts = ["apple apple banana", "apple cherry", "apple banana date", "apple"]
    assert Corpus.from_texts(texts, min_count=2).vocab == ("apple", "banana")
    # apple in 4/4 docs, banana in 2/4: max_doc_freq=0.5 keeps banana, drops apple
    c = Corpus.from_texts(texts, max_doc_freq=0.5, empty="keep")
    assert c.vocab == ("banana", "cherry", "date")
    assert c.doc_lengths.tolist() == [1, 1, 2, 0]
    assert Corpus.from_texts(texts, max_vocab=2).vocab == ("apple", "banana")
    with pytest.raises(ValueError, match="no words are left"):
        Corpus.from_texts(texts, min_count=100)
    for bad in ({"min_count": -1}, {"max_doc_freq": 0.0}, {"max_doc_freq": 1.5}, {"max_vocab": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Corpus.from_texts(texts, **bad)


def test_from_texts_custom_tokenizer_labels_and_fixed_vocab():
    c = Corpus.from_texts(["a-b c", "c"], tokenizer=str.split, labels=["x", None], doc_names=["d1", "d2"])
    assert c.vocab == ("a-b", "c") and c.labels.tolist() == [0, -1] and c.label_names == ("x",)
    assert c.doc_names == ("d1", "d2")
    c = Corpus.from_texts(["bb aa", "aa"], labels=["y", "x"], label_names=["y", "x"])
    assert c.labels.tolist() == [0, 1]
    c = Corpus.from_texts(["bb aa", "aa"], labels=[1, 0], label_names=["x", "y"])
    assert c.labels.tolist() == [1, 0]
    with pytest.raises(ValueError, match="not one of label_names"):
        Corpus.from_texts(["a"], labels=["z"], label_names=["x"])
    # fixed vocabulary (e.g. a training corpus's): unknown words dropped, ids as given
    f = Corpus.from_texts(["zebra cat dog", "cat"], vocab=("dog", "cat"))
    assert f.vocab == ("dog", "cat") and f.tokens.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="defaults"):
        Corpus.from_texts(["a"], vocab=("a",), min_count=2)
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        Corpus.from_texts(["a", 3])


# ---------------------------------------------------------------------- empty documents
def test_empty_documents_drop_error_keep():
    texts = ["cat dog", "the of", "", "dog"]
    with pytest.warns(EmptyDocumentWarning, match=r"dropped 2 of 4 documents.*'1', '2'"):
        c = Corpus.from_texts(texts, stop_words="english", labels=[0, 1, 2, 0], label_names="abc")
    assert c.doc_names == ("0", "3") and c.labels.tolist() == [0, 0]
    with pytest.raises(ValueError, match=r"2 of 4 documents are empty.*'1', '2'"):
        Corpus.from_texts(texts, stop_words="english", empty="error")
    k = Corpus.from_texts(texts, stop_words="english", empty="keep")
    assert k.doc_lengths.tolist() == [2, 0, 0, 1]
    with pytest.raises(ValueError, match="empty must be one of"):
        Corpus.from_texts(texts, empty="skip")
    with pytest.raises(ValueError, match="all 2 documents"):
        Corpus.from_texts(["the", "a"], stop_words="english")
    # min_doc_length: short documents are treated like empty ones
    with pytest.warns(EmptyDocumentWarning, match="shorter than 2 tokens"):
        s = Corpus.from_texts(texts, min_doc_length=2)
    assert s.doc_names == ("0", "1")


def test_empty_flag_in_from_token_lists_and_from_dtm():
    with pytest.warns(EmptyDocumentWarning, match="dropped 1 of 3"):
        c = Corpus.from_token_lists([["a"], [], ["b"]], labels=[0, 1, 0])
    assert c.doc_names == ("0", "2") and c.labels.tolist() == [0, 0]
    X = np.array([[1, 0], [0, 0], [0, 2], [0, 0]])  # empty rows inside and at the end
    with pytest.warns(EmptyDocumentWarning, match="dropped 2 of 4"):
        d = Corpus.from_dtm(X)
    assert d.doc_names == ("0", "2")
    np.testing.assert_array_equal(d.to_dtm().toarray(), X[[0, 2]])
    k = Corpus.from_dtm(sp.csr_matrix(X), empty="keep")
    np.testing.assert_array_equal(k.to_dtm().toarray(), X)
    with pytest.raises(ValueError, match="empty"):
        Corpus.from_dtm(X, empty="error")


# ---------------------------------------------------------------------- filter_vocab, conversions
def test_filter_vocab_remaps_ids():
    c = Corpus.from_token_lists([["the", "cat", "zebra"], ["the", "dog", "cat"], ["the", "cat"]])
    f = c.filter_vocab(stop_words="english", min_count=2)
    assert f.vocab == ("cat",)
    assert f.to_token_lists() == [["cat"], ["cat"], ["cat"]]
    with pytest.warns(EmptyDocumentWarning, match="dropped 1 of 3"):
        g = c.filter_vocab(max_doc_freq=0.9)  # 'the' and 'cat' are in every document
    assert g.vocab == ("dog", "zebra") and g.doc_names == ("0", "1")
    unused = Corpus(np.array([0, 2]), np.array([0, 2]), ("a", "b", "c"))
    assert unused.filter_vocab().vocab == ("a", "c")
    assert unused.filter_vocab(min_count=0).vocab == ("a", "b", "c")


def test_to_token_lists_and_texts_round_trip():
    c = Corpus.from_texts(TEXTS)
    assert Corpus.from_texts(c.to_texts()).to_token_lists() == c.to_token_lists()
    assert Corpus.from_token_lists(c.to_token_lists(), vocab=c.vocab).tokens.tolist() == c.tokens.tolist()
    assert c.to_texts(sep="|")[1] == "dog|and|cat"  # one-character tokens are dropped
    np.testing.assert_array_equal(c.word_counts, np.asarray(c.to_dtm().sum(0)).ravel())
    np.testing.assert_array_equal(c.doc_freqs, np.asarray((c.to_dtm() > 0).sum(0)).ravel())


def test_labels_are_copied_and_read_only():
    lab = np.array([0, 1], dtype=np.int32)
    c = Corpus.from_token_lists([["a"], ["b"]], labels=lab, label_names=["x", "y"])
    lab[0] = 1
    assert c.labels.tolist() == [0, 1]
    with pytest.raises(ValueError):
        c.labels[0] = 1


# ---------------------------------------------------------------------- train / test splits
def _numbered(D):
    return Corpus.from_token_lists(
        [["w%d" % (d % 7)] * (d % 5 + 1) for d in range(D)], labels=[d % 3 for d in range(D)], label_names="xyz"
    )


def test_split_documents():
    c = _numbered(50)
    train, test = c.split(0.2, seed=3)
    assert (train.num_docs, test.num_docs) == (40, 10)
    assert train.vocab == test.vocab == c.vocab
    assert sorted(train.doc_names + test.doc_names, key=int) == list(c.doc_names)
    assert list(test.doc_names) == sorted(test.doc_names, key=int)  # original order kept
    again = c.split(0.2, seed=3)[1]
    assert again.doc_names == test.doc_names
    assert c.split(0.2, seed=4)[1].doc_names != test.doc_names
    d = int(test.doc_names[0])
    assert test.to_token_lists()[0] == c.to_token_lists()[d] and test.labels[0] == c.labels[d]
    tr, te = c.split(0.3, seed=0, stratify=True)
    assert np.bincount(te.labels).tolist() == [5, 5, 5]
    with pytest.raises(ValueError, match="test_fraction"):
        c.split(1.0)
    with pytest.raises(ValueError, match="empty"):
        c.split(0.001)
    with pytest.raises(ValueError, match="labels"):
        Corpus.from_token_lists([["a"], ["b"]]).split(0.5, stratify=True)


def test_split_tokens():
    c = _numbered(30)
    obs, held = c.split_tokens(0.5)
    assert obs.num_docs == held.num_docs == c.num_docs
    np.testing.assert_array_equal(obs.doc_lengths, c.doc_lengths // 2)
    np.testing.assert_array_equal(obs.doc_lengths + held.doc_lengths, c.doc_lengths)
    for a, b, full in zip(obs.to_token_lists(), held.to_token_lists(), c.to_token_lists()):
        assert a + b == full
    assert obs.labels.tolist() == held.labels.tolist() == c.labels.tolist()
    # shuffled within documents: same multiset per document, deterministic in seed
    X = Corpus.from_dtm(np.array([[3, 2, 1, 0], [0, 1, 1, 6]]))
    o1, h1 = X.split_tokens(0.5, seed=7)
    o2, _ = X.split_tokens(0.5, seed=7)
    assert o1.tokens.tolist() == o2.tokens.tolist()
    np.testing.assert_array_equal((o1.to_dtm() + h1.to_dtm()).toarray(), X.to_dtm().toarray())
    assert X.split_tokens(0.0)[0].num_tokens == 0 and X.split_tokens(1.0)[1].num_tokens == 0
    with pytest.raises(ValueError, match="fraction"):
        X.split_tokens(1.5)
