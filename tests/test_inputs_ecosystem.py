"""Every input a topic-model user has, and scikit-learn's names (issue 24).

* gensim's bag of words (``[(id, count), ...]`` per document), with an id -> word
  mapping (a gensim ``Dictionary`` is one; built by hand here, the real one too when
  gensim is installed), a list of words, or none; bad pairs refused by name;
* ``stop_words`` / ``min_df`` / ``max_df`` on :class:`gibbsjax.LDA`, with
  scikit-learn's ``CountVectorizer``'s meaning (document frequency), compared with
  its ``vocabulary_`` on the same texts and token pattern;
* ``components_`` and ``n_components``; the new parameters through ``get_params``,
  ``clone``, ``set_params``, ``save``/``load`` and scikit-learn's own check.

Most tests call :func:`gibbsjax.corpus.inputs.as_corpus`, the one converter, and fit nothing;
the few fits are tiny (one or two chains, a few sweeps).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer

from gibbsjax import LDA
from gibbsjax.topics import fit as lda_fit
from gibbsjax.corpus import Corpus, EmptyDocumentWarning, english_stop_words
from gibbsjax.corpus.inputs import as_corpus, filter_words

TINY = dict(num_topics=2, num_chains=2, num_warmup=5, num_draws=5, seed=0, progress=False)


class Dictionary(Mapping):
    """What gensim's ``Dictionary`` is to us: a Mapping id -> word (it subclasses
    ``collections.abc.Mapping``), ids 0..n-1 as ``compactify`` leaves them."""

    def __init__(self, docs):
        self.token2id: dict[str, int] = {}
        for d in docs:
            for w in d:
                self.token2id.setdefault(w, len(self.token2id))
        self.id2token = {i: w for w, i in self.token2id.items()}

    def __getitem__(self, i):
        return self.id2token[i]

    def __iter__(self):
        return iter(self.id2token)

    def __len__(self):
        return len(self.id2token)

    def doc2bow(self, doc):
        ids = [self.token2id[w] for w in doc]
        return sorted((i, ids.count(i)) for i in set(ids))


DOCS = [["pear", "apple", "apple"], ["stock", "bond"], ["apple", "pear"], ["bond", "stock", "stock"], []]


def _dictionaries():
    out = [Dictionary(DOCS)]
    try:
        from gensim.corpora import Dictionary as GensimDictionary
    except ImportError:
        return out
    return out + [GensimDictionary(DOCS)]


# ---------------------------------------------------------------------- bag of words
@pytest.mark.parametrize("dictionary", _dictionaries(), ids=lambda d: type(d).__module__.split(".")[0])
def test_bag_of_words_with_a_dictionary_is_the_token_lists(dictionary):
    bow = [dictionary.doc2bow(d) for d in DOCS]
    corpus = as_corpus(bow, vocab=dictionary)
    assert corpus.vocab == tuple(dictionary[i] for i in sorted(dictionary))
    assert [sorted(d) for d in corpus.to_token_lists()] == [sorted(d) for d in DOCS]
    assert corpus.num_docs == len(DOCS)  # the empty document keeps its row


def test_bag_of_words_without_a_map_names_words_by_id():
    bow = [[(0, 2), (3, 1)], [(1, 1)], []]
    corpus = as_corpus(bow)
    assert corpus.vocab == ("0", "1", "2", "3")
    assert corpus.to_token_lists() == [["0", "0", "3"], ["1"], []]
    dense = as_corpus(np.array([[2, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0]]))
    assert (corpus.to_dtm() != dense.to_dtm()).nnz == 0


def test_bag_of_words_with_a_word_list_and_a_sparse_map():
    bow = [[(1, 1), (0, 2)], [(2, 1)]]
    assert as_corpus(bow, vocab=["a", "b", "c"]).to_token_lists() == [["a", "a", "b"], ["c"]]
    # ids with gaps: the words in increasing id order
    corpus = as_corpus([[(10, 1), (3, 2)]], vocab={10: "zebra", 3: "ant"})
    assert corpus.vocab == ("ant", "zebra")
    assert corpus.to_token_lists() == [["ant", "ant", "zebra"]]


def test_bag_of_words_counts_as_stored_by_gensim():
    """MmCorpus yields float counts and numpy ids; whole numbers are counts."""
    bow = [[(np.int64(0), 2.0), (1, np.float32(1.0))], ((np.int32(1), np.int64(3)),)]
    assert as_corpus(bow, vocab=["a", "b"]).to_token_lists() == [["a", "a", "b"], ["b", "b", "b"]]


def test_bag_of_words_for_a_fitted_model_vocabulary():
    known = ("apple", "bond", "pear")
    # without a map: ids are positions in the model's words
    assert as_corpus([[(2, 1), (0, 1)]], model_vocab=known).to_token_lists() == [["apple", "pear"]]
    # with a map in another order: matched by name
    corpus = as_corpus([[(0, 1), (1, 2)]], vocab={0: "pear", 1: "apple", 2: "bond"}, model_vocab=known)
    assert corpus.vocab == known and corpus.to_token_lists() == [["apple", "apple", "pear"]]
    with pytest.raises(ValueError, match=r"X\[0\] has the pair \(3, 1\), whose id 3 is out of range"):
        as_corpus([[(3, 1)]], model_vocab=known)
    with pytest.raises(ValueError, match="'kiwi' is not among the model's"):
        as_corpus([[(0, 1)]], vocab={0: "pear", 1: "apple", 2: "kiwi"}, model_vocab=known)


@pytest.mark.parametrize("bow, vocab, message", [
    ([[(0, 1)], [(1, -1)]], None, r"X\[1\] has the pair \(1, -1\): a count must be a non-negative integer"),
    ([[(0, 1.5)]], None, r"X\[0\] has the pair \(0, 1.5\): a count must be a non-negative integer"),
    ([[(0, float("nan"))]], None, r"X\[0\] has the pair \(0, nan\): a count"),
    ([[(0, True)]], None, r"X\[0\] has the pair \(0, True\): a count"),
    ([[(0, 1)], [(-2, 1)]], None, r"X\[1\] has the pair \(-2, 1\): an id must be an int >= 0"),
    ([[(1.0, 1)]], None, r"X\[0\] has the pair \(1.0, 1\): an id must be an int"),
    ([[(0, 1), (5, 1)]], ["a", "b"], r"X\[0\] has the pair \(5, 1\), whose id 5 is out of range: vocab has 2"),
    ([[(7, 1)]], {0: "a", 1: "b"}, r"X\[0\] has the pair \(7, 1\), whose id 7 is not in vocab"),
    ([[(0, 1), "cat"]], None, r"X\[0\] mixes \(id, count\) pairs with 'cat'"),
    ([[(0, 1)], ["cat"]], None, r"X mixes bag-of-words documents \(X\[0\]\) and token lists \(X\[1\]\)"),
    ([[(0, 1)]], {0: "a", 1: "a"}, "the word 'a' more than once"),
    ([[(0, 1)]], {"0": "a"}, "its ids must be ints >= 0"),
])
def test_bad_bag_of_words_is_refused_by_name(bow, vocab, message):
    with pytest.raises(ValueError, match=message):
        as_corpus(bow, vocab=vocab)


def test_a_map_is_for_bag_of_words_only():
    with pytest.raises(ValueError, match="a mapping id -> word names the ids of bag-of-words documents"):
        as_corpus([["a", "b"]], vocab={0: "a", 1: "b"})
    with pytest.raises(ValueError, match="a mapping id -> word .* is a document-term matrix"):
        as_corpus(np.eye(2, dtype=int), vocab={0: "a", 1: "b"})


# ---------------------------------------------------------------------- stop words, min_df, max_df
TEXTS = ["The cat sat on the mat", "the dog sat on the log", "a cat and a dog", "The end",
         "cats and dogs and birds", "on and on and on", "birds sing", "the the the", "nothing here"]


def _sklearn_vocab(texts, stop_words, min_df, max_df):
    """CountVectorizer's words (its default token pattern is ours)."""
    words = sorted(english_stop_words()) if stop_words == "english" else stop_words
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "stop_words may be inconsistent with your preprocessing"
        vectorizer = CountVectorizer(stop_words=words, min_df=min_df, max_df=max_df)
        vectorizer.fit(texts)
    return tuple(sorted(vectorizer.vocabulary_))


@pytest.mark.parametrize("stop_words, min_df, max_df", [
    (None, 1, 1.0), ("english", 1, 1.0), (["the", "on"], 1, 1.0), (None, 2, 1.0), (None, 3, 1.0),
    (None, 1, 0.3), (None, 1, 2), (None, 1, 1), (None, 0.2, 1.0), (None, 0.25, 4), (["the"], 2, 0.4),
    ("english", 0.0, 0.9),
])
def test_word_filters_are_count_vectorizers(stop_words, min_df, max_df):
    expected = _sklearn_vocab(TEXTS, stop_words, min_df, max_df)
    corpus = as_corpus(TEXTS, stop_words=stop_words, min_df=min_df, max_df=max_df)
    assert corpus.vocab == expected
    assert corpus.num_docs == len(TEXTS)  # documents left empty keep their rows
    tokens = [[w for w in d if w in set(expected)] for d in Corpus.from_texts(TEXTS, empty="keep").to_token_lists()]
    assert corpus.to_token_lists() == tokens
    # token lists: the same filters (the words as they are, no lower-casing needed here)
    lists = Corpus.from_texts(TEXTS, empty="keep").to_token_lists()
    assert as_corpus(lists, stop_words=stop_words, min_df=min_df, max_df=max_df).vocab == expected


def test_word_filters_by_hand():
    """4 documents: "b" is in all 4, "a" in 2, "c" in 1."""
    lists = [["a", "b"], ["a", "b", "b"], ["b", "c"], ["b"]]
    assert as_corpus(lists, max_df=0.5).vocab == ("a", "c")  # df <= 2
    assert as_corpus(lists, max_df=3).vocab == ("a", "c")
    assert as_corpus(lists, min_df=2).vocab == ("a", "b")
    assert as_corpus(lists, min_df=0.75).vocab == ("b",)  # df >= 3
    assert as_corpus(lists, min_df=2, max_df=0.5).to_token_lists() == [["a"], ["a"], [], []]
    assert filter_words(Corpus.from_token_lists(lists), stop_words=["b"]).vocab == ("a", "c")
    assert as_corpus(lists, min_df=np.int64(2), max_df=np.float64(0.5)).vocab == ("a",)  # numpy scalars
    # documents emptied by the filters: kept by default, or dropped with the readers' warning
    with pytest.warns(EmptyDocumentWarning):
        dropped = as_corpus(lists, min_df=2, max_df=0.5, empty="drop")
    assert dropped.num_docs == 2 and dropped.doc_names == ("0", "1")


def test_word_filters_that_leave_nothing_are_refused():
    with pytest.raises(ValueError, match="no words of X are left after stop_words, min_df=1.0"):
        as_corpus(TEXTS, min_df=1.0)  # in every document: no word
    with pytest.raises(ValueError, match=r"max_df=2 allows fewer documents \(2\) than min_df=3"):
        as_corpus(TEXTS, min_df=3, max_df=2)
    with pytest.raises(ValueError, match="max_df=0.1 allows fewer documents"):
        as_corpus(TEXTS, min_df=2, max_df=0.1)


@pytest.mark.parametrize("X, what", [
    (np.eye(3, dtype=int), "is a document-term matrix"),
    (Corpus.from_token_lists([["a"]]), "is a Corpus"),
    ([[(0, 1)]], "holds bag-of-words documents"),
])
def test_word_filters_need_texts_or_token_lists(X, what):
    with pytest.raises(ValueError, match=f"stop_words, min_df and max_df filter the words of texts and token "
                                         f"lists; X {what}"):
        as_corpus(X, stop_words="english")
    assert as_corpus(X).num_docs >= 1  # the defaults filter nothing, so they pass


@pytest.mark.parametrize("params, message", [
    ({"stop_words": "german"}, "stop_words must be None, 'english' or a list of words, got 'german'"),
    ({"stop_words": 3}, "stop_words must be None, 'english' or a list of words, got int"),
    ({"stop_words": ["a", 1]}, "stop_words must hold words"),
    ({"min_df": 0}, "min_df must be an int >= 1 .* got 0"),
    ({"min_df": -0.5}, "min_df must be .* got -0.5"),
    ({"max_df": 1.5}, r"max_df must be an int >= 1 \(documents\) or a float in \[0, 1\]"),
    ({"max_df": True}, "max_df must be .* got True"),
    ({"min_df": "2"}, "min_df must be .* got '2'"),
])
def test_bad_word_filters_are_refused_by_name(params, message):
    with pytest.raises(ValueError, match=message):
        LDA(**params)
    model = LDA()
    with pytest.raises(ValueError, match=message):
        model.set_params(**params)
    assert model.get_params()["min_df"] == 1 and model.get_params()["stop_words"] is None  # left as it was


# ---------------------------------------------------------------------- the estimator
@pytest.fixture(scope="module")
def texts_model():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="chains disagree", category=UserWarning)
        return LDA(stop_words={"the", "on"}, min_df=2, max_df=0.9, **TINY).fit(TEXTS)


def test_fit_filters_texts(texts_model):
    assert texts_model.vocab_ == _sklearn_vocab(TEXTS, ["the", "on"], 2, 0.9)
    assert texts_model.doc_topic_.shape == (len(TEXTS), 2)  # documents left empty keep their rows
    # the unfiltered default keeps "the" and "on"
    assert {"the", "on"} <= set(as_corpus(TEXTS).vocab)


def test_scikit_learn_names(texts_model):
    assert texts_model.components_ is texts_model.topic_word_
    assert texts_model.components_.shape == (2, len(texts_model.vocab_))
    np.testing.assert_allclose(texts_model.components_.sum(axis=1), 1.0, rtol=1e-5)
    assert lda_fit.hyperparameters(LDA(n_components=2).get_params())["K"] == 2  # scikit-learn's name (test_sklearn.py)
    assert not hasattr(LDA(), "components_")  # scikit-learn's fitted check


def test_fit_bag_of_words_with_a_dictionary():
    dictionary = Dictionary(DOCS)
    bow = [dictionary.doc2bow(d) for d in DOCS]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="chains disagree", category=UserWarning)
        model = LDA(**TINY).fit(bow, vocab=dictionary)
        assert model.vocab_ == ("pear", "apple", "stock", "bond")
        assert model.doc_topic_.shape == (len(DOCS), 2)
        assert model.transform([dictionary.doc2bow(["bond", "bond"])]).shape == (1, 2)


def test_new_parameters_round_trip(texts_model, tmp_path):
    defaults = LDA().get_params()
    assert (defaults["stop_words"], defaults["min_df"], defaults["max_df"]) == (None, 1, 1.0)
    model = LDA(stop_words="english", min_df=0.1, max_df=5)
    twin = clone(model)
    assert twin.get_params() == model.get_params() and twin is not model
    assert clone(model.set_params(min_df=3, max_df=0.5)).get_params()["min_df"] == 3
    assert "stop_words='english'" in repr(LDA(stop_words="english"))
    # saved as JSON: a set of stop words comes back as a sorted list, 0.9 stays a float
    path = tmp_path / "lda.nc"
    texts_model.save(path)
    loaded = LDA.load(path)
    assert loaded.get_params()["stop_words"] == ["on", "the"]
    assert loaded.get_params()["min_df"] == 2 and isinstance(loaded.get_params()["max_df"], float)
    assert loaded.vocab_ == texts_model.vocab_


def test_scikit_learns_default_constructible_check():
    from sklearn.utils.estimator_checks import check_parameters_default_constructible

    check_parameters_default_constructible("LDA", LDA())


@pytest.mark.slow  # five fits of new shapes: about 40 s on two cores
def test_grid_search_over_min_df():
    from sklearn.model_selection import GridSearchCV

    params = dict(TINY, num_chains=1)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="chains disagree", category=UserWarning)
        search = GridSearchCV(LDA(**params), {"min_df": [1, 2]}, cv=2).fit(TEXTS * 2)
    assert search.best_params_["min_df"] in (1, 2)
    assert search.best_estimator_.min_df == search.best_params_["min_df"]
