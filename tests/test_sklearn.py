"""gibbsjax.LDA in the Python topic-model ecosystem: scikit-learn conventions (clone,
Pipeline after CountVectorizer, GridSearchCV over K), every kind of input, vocabularies
matched by name, save and load through NetCDF, top words with probabilities, the
pyLDAvis export (the LDA guide's blocks, docs/guide/lda.md: tests/test_readme_blocks.py).

scikit-learn comes from the test extra; gibbsjax never imports it at import time.
Fits are tiny (two chains, tens of sweeps): where chains may disagree, fit() warns,
and those warnings are filtered explicitly (test_agreement.py tests them).  Compiling
costs far more than sampling here, so the fits share shapes: documents of one length,
one vocabulary, one K where possible, a fixed chunk size.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gibbsjax
from gibbsjax import LDA
from gibbsjax.topics import fit as lda_fit
from gibbsjax.corpus import Corpus, EmptyDocumentWarning
from gibbsjax.datasets.synthetic import lda_corpus

# scikit-learn is a test dependency (the test extra), never one of gibbsjax
from sklearn.base import clone  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

SMALL = dict(alpha=0.1, eta=0.05, num_chains=2, num_warmup=40, num_draws=20, chunk_size=10, progress=False)


@contextlib.contextmanager
def _quiet():
    """Tiny fits: chains may disagree, and fit() says so (tested in test_agreement.py)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="chains disagree", category=UserWarning)
        yield


@pytest.fixture(scope="module")
def corpus120():
    """Three well-separated topics (η = 0.05), 120 documents of 25 words; the
    vocabulary is the words that occur, as CountVectorizer finds them (20 words)."""
    c, _, _ = lda_corpus(num_docs=120, num_topics=3, vocab_size=30, doc_length=25, alpha=0.1, eta=0.05,
                         fixed_length=True, seed=0)
    return Corpus.from_texts(c.to_texts())


@pytest.fixture(scope="module")
def corpus(corpus120):
    """Its first 60 documents, which use every word: the shapes of a fold of 120."""
    first = corpus120.subset(np.arange(60))
    assert np.all(first.word_counts > 0)
    return first


@pytest.fixture(scope="module")
def fitted(corpus):
    with _quiet():
        return LDA(3, seed=0, **SMALL).fit(corpus)


# ----------------------------------------------------------------------------- parameters
def test_clone_get_params_set_params():
    est = LDA(num_topics=4, alpha=0.3, seed=2, num_chains=2, chains="agreeing", progress=False)
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    assert twin.get_params(deep=False) == est.get_params(deep=True)
    assert set(est.get_params()) >= {"num_topics", "alpha", "eta", "sampler", "num_chains", "num_warmup",
                                     "num_draws", "thin", "seed", "random_state", "num_lanes", "chains", "empty"}
    # stored as given, not transformed
    est2 = LDA(num_topics=np.int64(3), alpha=1)
    assert type(est2.get_params()["num_topics"]) is np.int64 and est2.get_params()["alpha"] == 1
    assert est.set_params(num_topics=6, eta=0.2) is est and est.num_topics == 6 and est.eta == 0.2
    with pytest.raises(ValueError, match="unknown parameter 'num_topic'"):
        est.set_params(num_topic=3)
    with pytest.raises(ValueError, match="alpha"):
        est.set_params(alpha=-1.0)
    assert est.alpha == 0.3  # a refused value is not kept
    with pytest.raises(ValueError, match="not both"):
        LDA(3, seed=1, random_state=1)
    with pytest.raises(ValueError, match="random_state"):
        LDA(3, random_state="zero")
    with pytest.raises(ValueError, match="empty"):
        LDA(3, empty="ignore")
    assert repr(LDA(5, seed=0)) == "LDA(num_topics=5, seed=0)"


def test_n_components_is_num_topics():
    """K as a fit records it (``lda_fit.hyperparameters``) is num_topics or n_components;
    scikit-learn's name of K (``LatentDirichletAllocation(n_components=)``) as a
    constructor argument, stored as given (the other None); set_params sets both."""
    assert LDA().num_topics is None and LDA().n_components is None
    assert lda_fit.hyperparameters(LDA().get_params())["K"] == 10
    est = LDA(n_components=3, seed=0)
    assert est.num_topics is None and est.n_components == 3 and repr(est) == "LDA(seed=0, n_components=3)"
    assert lda_fit.hyperparameters(est.get_params())["K"] == 3
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin.n_components == 3
    assert est.set_params(n_components=5) is est and est.num_topics == est.n_components == 5
    assert est.set_params(num_topics=6).n_components == 6
    assert lda_fit.hyperparameters(LDA(num_topics=4, n_components=4).get_params())["K"] == 4
    with pytest.raises(ValueError, match="num_topics=4 and n_components=3 .*differ"):
        LDA(num_topics=4, n_components=3)
    with pytest.raises(ValueError, match="num_topics=4 and n_components=3 .*differ"):
        est.set_params(num_topics=4, n_components=3)
    assert est.num_topics == est.n_components == 6  # refused values are not kept
    with pytest.raises(ValueError, match="n_components"):
        LDA(n_components=0)


def test_random_state_is_the_seed(corpus):
    with _quiet():
        a = LDA(3, seed=7, **SMALL).fit(corpus)
        b = LDA(3, random_state=7, **SMALL).fit(corpus)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert b.idata_.attrs["seed"] == 7
    seed = np.random.RandomState(0).randint(np.iinfo(np.int32).max)  # what sklearn's RandomState gives
    c = LDA(3, random_state=np.random.RandomState(0), **SMALL)
    # the seed fit() runs with (a fit records it as attrs["seed"])
    assert lda_fit.fit_settings(c.get_params()).seed == seed


def test_tags_and_fitted_state():
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        from sklearn.utils import get_tags  # scikit-learn >= 1.6 asks __sklearn_tags__
    except ImportError:  # older versions read _more_tags
        from sklearn.utils._tags import _safe_tags

        assert _safe_tags(LDA(3), "requires_positive_X") is True
    else:
        tags = get_tags(LDA(3))
        assert tags.input_tags.sparse and tags.input_tags.positive_only and not tags.target_tags.required
    with pytest.raises(NotFittedError):
        check_is_fitted(LDA(3))
    assert set(LDA(3)._more_tags()) >= {"requires_positive_X", "X_types"}


def test_not_fitted_error_is_sklearns(corpus, fitted):
    """Every method that needs a fit raises scikit-learn's NotFittedError (a ValueError and an
    AttributeError) naming itself; check_is_fitted agrees, before and after fit."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from gibbsjax.topics import estimator_base

    assert estimator_base.NotFittedError is NotFittedError is estimator_base.not_fitted_error()
    assert gibbsjax.NotFittedError is NotFittedError
    model = LDA(3)
    calls = {"transform": lambda: model.transform(corpus), "score": lambda: model.score(corpus),
             "perplexity": lambda: model.perplexity(corpus), "top_words": model.top_words,
             "coherence": model.coherence, "to_pyldavis": model.to_pyldavis, "summary": model.summary,
             "set_vocab": lambda: model.set_vocab(["a"]), "extend": lambda: model.extend(5),
             "save": lambda: model.save("never-written.nc")}
    for name, call in calls.items():
        with pytest.raises(NotFittedError, match=rf"^LDA\.{name} needs a fitted model: call fit\(X\) first"):
            call()
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    check_is_fitted(fitted)  # fitted: no error
    check_is_fitted(fitted, ["topic_word_", "doc_topic_", "n_features_in_"])
    # what check_is_fitted reads without __sklearn_is_fitted__: fitted attributes end with "_", and an
    # unfitted estimator has none
    assert not [k for k in vars(model) if k.endswith("_")] and "topic_word_" in vars(fitted)


def test_not_fitted_error_without_sklearn():
    """Without scikit-learn: gibbsjax's own NotFittedError, a ValueError and an AttributeError,
    which pickles (joblib sends errors between processes)."""
    code = """if True:
        import pickle, sys
        sys.modules["sklearn"] = None  # as if scikit-learn were not installed
        from gibbsjax import LDA
        from gibbsjax.topics import estimator_base
        try:
            LDA(3).transform([["a"]])
        except estimator_base.NotFittedError as e:
            error = e
        cls = type(error)
        import gibbsjax
        assert cls is estimator_base.NotFittedError is gibbsjax.NotFittedError and cls.__name__ == "NotFittedError"
        assert issubclass(cls, ValueError) and issubclass(cls, AttributeError)
        assert type(pickle.loads(pickle.dumps(error))) is cls
        print(cls.__module__, error)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("gibbsjax.topics.estimator_base LDA.transform needs a fitted model: call fit(X) "
                                  "first (or LDA.load(path))")


def test_sklearn_prior_names_are_alpha_and_eta(corpus, fitted):
    """doc_topic_prior and topic_word_prior (LatentDirichletAllocation's names) are α and η: stored
    as given, the sampler sees them, set_params (GridSearchCV) sets both names, clone keeps them."""
    est = LDA(3, doc_topic_prior=0.5, topic_word_prior=0.2, seed=0)
    assert est.alpha is None and est.eta is None and est.doc_topic_prior == 0.5 and est.topic_word_prior == 0.2
    hyper = lda_fit.hyperparameters(est.get_params())
    assert hyper["alpha"] == 0.5 and hyper["eta"] == 0.2
    assert hyper == lda_fit.hyperparameters(LDA(3, alpha=0.5, eta=0.2).get_params())
    assert lda_fit.hyperparameters(LDA().get_params())["alpha"] == 0.1  # neither given: the defaults
    assert lda_fit.hyperparameters(LDA().get_params())["eta"] == 0.01
    twin = clone(est)
    assert twin.get_params() == est.get_params() and repr(twin) == repr(est)
    assert est.set_params(doc_topic_prior=0.3).alpha == 0.3 and est.set_params(eta=0.4).topic_word_prior == 0.4
    assert LDA(alpha=0.3, doc_topic_prior=0.3).get_params()["alpha"] == 0.3  # both, equal: fine
    with pytest.raises(ValueError, match=r"alpha=0.3 and doc_topic_prior=0.5 \(scikit-learn's name of alpha\) differ"):
        LDA(alpha=0.3, doc_topic_prior=0.5)
    with pytest.raises(ValueError, match=r"eta=0.4 and topic_word_prior=0.1 .*differ"):
        est.set_params(eta=0.4, topic_word_prior=0.1)
    assert est.eta == est.topic_word_prior == 0.4  # a refused set_params is not kept
    with pytest.raises(ValueError, match="alpha"):
        LDA(doc_topic_prior=-1.0)
    # the sampler draws the same as with alpha and eta (the SMALL settings: alpha 0.1, eta 0.05)
    settings = {k: v for k, v in SMALL.items() if k not in ("alpha", "eta")}
    with _quiet():
        aliased = LDA(3, seed=0, doc_topic_prior=SMALL["alpha"], topic_word_prior=SMALL["eta"], **settings)
        aliased.fit(corpus)
    np.testing.assert_array_equal(aliased.topic_word_, fitted.topic_word_)
    np.testing.assert_array_equal(aliased.transform(corpus, seed=2), fitted.transform(corpus, seed=2))


def test_other_sklearn_names_are_refused_naming_ours(corpus120):
    """LatentDirichletAllocation's settings without a counterpart: a ValueError naming the value
    and what to give instead, from the constructor, set_params and GridSearchCV."""
    for name in lda_fit.SKLEARN_NAMES:
        with pytest.raises(ValueError, match=rf"^LDA\(\) got {name}=7, a name of scikit-learn's "
                                             rf"LatentDirichletAllocation: "):
            LDA(3, **{name: 7})
        with pytest.raises(ValueError, match=rf"^set_params got {name}=7, a name of scikit-learn's"):
            LDA(3).set_params(**{name: 7})
    with pytest.raises(ValueError, match="give num_warmup .* and num_draws"):
        LDA(max_iter=10)
    with pytest.raises(ValueError, match="give progress"):
        LDA(verbose=1)
    with pytest.raises(ValueError, match="num_chains.*devices="):
        LDA(n_jobs=-1)
    with pytest.raises(ValueError, match="Gibbs sampling"):
        LDA(learning_method="online")
    with pytest.raises(TypeError, match="num_topic"):  # any other unknown name: Python's error
        LDA(num_topic=3)
    search = GridSearchCV(LDA(3, **SMALL), {"max_iter": [5, 10]}, cv=2, error_score="raise")
    with pytest.raises(ValueError, match="set_params got max_iter=5.*give num_warmup"):
        search.fit(corpus120.to_dtm())


def test_gibbsjax_does_not_import_sklearn():
    code = "import sys, gibbsjax; gibbsjax.LDA(3); print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- Pipeline and GridSearchCV
def test_pipeline_after_countvectorizer(corpus):
    texts = corpus.to_texts()
    pipe = Pipeline([("vectorizer", CountVectorizer()), ("lda", LDA(3, seed=0, **SMALL))])
    with _quiet():
        pipe.fit(texts)
    theta = pipe.transform(texts)
    assert theta.shape == (corpus.num_docs, 3)
    np.testing.assert_allclose(theta.sum(axis=1), 1, rtol=1e-5)
    lda = pipe["lda"]
    assert lda.n_features_in_ == corpus.vocab_size and not hasattr(lda, "feature_names_in_")  # no names
    # the same as transforming the vectorizer's matrix directly (same seed)
    np.testing.assert_array_equal(theta, lda.transform(pipe["vectorizer"].transform(texts)))
    # a matrix carries no words: the model numbers them until told their names
    assert lda.vocab_[:3] == ("0", "1", "2")
    words = pipe["vectorizer"].get_feature_names_out()
    assert lda.set_vocab(words) is lda and lda.vocab_ == tuple(words)
    assert lda.feature_names_in_.dtype == object and lda.feature_names_in_.tolist() == list(words)
    assert all(w in set(corpus.vocab) for topic in lda.top_words(3) for w in topic)
    # now texts work too, encoded with the model's words (in reading order, so other draws
    # than from the matrix, whose tokens are sorted by word: close, not identical)
    from_texts = lda.transform(texts)
    np.testing.assert_array_equal(from_texts, lda.transform(Corpus.from_texts(texts, vocab=words)))
    assert np.abs(from_texts - theta).max() < 0.1
    assert pipe["lda"].get_feature_names_out().tolist() == ["topic0", "topic1", "topic2"]
    # score is the negative held-out perplexity (greater is better, as model selection wants)
    assert pipe.score(texts) == -lda.perplexity(pipe["vectorizer"].transform(texts)) < -1
    with _quiet():
        assert pipe.fit_transform(texts).shape == (corpus.num_docs, 3)


# ----------------------------------------------------------------------------- inputs
def test_token_lists_and_texts_give_the_model_of_the_corpus(corpus):
    texts = corpus.to_texts()
    tokens = corpus.to_token_lists()
    models = {}
    with _quiet():
        for name, X in (("corpus", Corpus.from_texts(texts)), ("texts", texts), ("tokens", tokens),
                        ("token corpus", Corpus.from_token_lists(tokens)), ("generator", (t for t in tokens))):
            models[name] = LDA(3, seed=4, **SMALL).fit(X)
    ref = models["corpus"]
    for name, m in models.items():
        np.testing.assert_array_equal(m.topic_word_, ref.topic_word_, err_msg=name)
        np.testing.assert_array_equal(m.doc_topic_, ref.doc_topic_, err_msg=name)
        assert m.vocab_ == ref.vocab_
    # a count matrix (dense or sparse) with its words: the same corpus up to token order
    # within documents, so the same model for both matrix forms
    with _quiet():
        dense = LDA(3, seed=4, **SMALL).fit(corpus.to_dtm().toarray(), vocab=corpus.vocab)
        sparse = LDA(3, seed=4, **SMALL).fit(corpus.to_dtm(), vocab=corpus.vocab)
        nested = LDA(3, seed=4, **SMALL).fit(corpus.to_dtm().toarray().tolist(), vocab=corpus.vocab)
    np.testing.assert_array_equal(dense.topic_word_, sparse.topic_word_)
    np.testing.assert_array_equal(dense.topic_word_, nested.topic_word_)
    assert dense.vocab_ == corpus.vocab


def test_bad_inputs_are_named(fitted):
    model = LDA(2, **SMALL)
    with pytest.raises(ValueError, match="mixes texts"):
        model.fit(["a b c", ["a", "b"]])
    with pytest.raises(ValueError, match="mixes words"):
        model.fit([["a", 1]])
    with pytest.raises(ValueError, match="single string"):
        model.fit("a b c")
    with pytest.raises(ValueError, match="no documents"):
        model.fit([])
    with pytest.raises(ValueError, match="one length"):
        model.fit([[1, 2], [3]])
    with pytest.raises(ValueError, match="bytes"):
        model.fit([b"a b"])
    with pytest.raises(ValueError, match="no tokens"):
        model.fit([[], []])
    with pytest.raises(ValueError, match="vocab names the columns"):
        model.fit(["a b"], vocab=["a", "b"])
    with pytest.raises(ValueError, match="vocab has 3 words"):
        model.fit(np.ones((2, 2), int), vocab=["a", "b", "c"])
    with pytest.raises(ValueError, match="non-negative integer counts"):
        model.fit(np.array([[1.5, 2.0]]))
    with pytest.raises(ValueError, match="Corpus, a document-term matrix"):
        model.fit(42)
    with pytest.raises(ValueError, match="holds counts"):
        model.fit(np.array([["a", "b"], ["c", "d"]]))


def test_empty_documents(corpus, fitted):
    """empty='keep': an empty document takes no part in sampling (the model equals
    the one fitted without it) and its θ is the prior mean 1/K; 'drop' and 'error'
    act as the corpus readers do."""
    tokens = corpus.to_token_lists()
    with_empty = tokens[:5] + [[]] + tokens[5:] + [[]]
    with _quiet():
        kept = LDA(3, seed=0, **SMALL).fit(with_empty)
    np.testing.assert_array_equal(kept.topic_word_, fitted.topic_word_)
    assert kept.doc_topic_.shape == (corpus.num_docs + 2, 3)
    np.testing.assert_array_equal(kept.doc_topic_[[5, -1]], np.full((2, 3), 1 / 3, np.float32))
    np.testing.assert_array_equal(np.delete(kept.doc_topic_, [5, len(with_empty) - 1], axis=0), fitted.doc_topic_)
    assert kept.doc_topic_per_chain_.shape == (2, corpus.num_docs + 2, 3)
    with _quiet(), pytest.warns(EmptyDocumentWarning, match="dropped 2 of 62 documents in X"):
        dropped = LDA(3, seed=0, empty="drop", **SMALL).fit(with_empty)
    np.testing.assert_array_equal(dropped.doc_topic_, fitted.doc_topic_)
    with pytest.raises(ValueError, match="empty='drop'"):
        LDA(3, seed=0, empty="error", **SMALL).fit(with_empty)
    # transform: one row per document; a document of unknown words only is empty
    theta = fitted.transform(tokens + [["no-such-word"], []])
    assert theta.shape == (corpus.num_docs + 2, 3)
    np.testing.assert_array_equal(theta[-2:], np.full((2, 3), 1 / 3))
    np.testing.assert_array_equal(theta[:-2], fitted.transform(tokens))


def test_feature_names_of_a_dataframe_and_of_texts(corpus, fitted):
    """feature_names_in_ (scikit-learn's name) holds the words when they are known: a Corpus or texts
    (the vocabulary), a DataFrame (its column names, also matched by name in transform)."""
    import pandas as pd

    assert fitted.feature_names_in_.tolist() == list(corpus.vocab) == list(fitted.vocab_)
    frame = pd.DataFrame(corpus.to_dtm().toarray(), columns=list(corpus.vocab))
    with _quiet():
        model = LDA(3, seed=0, **SMALL).fit(frame)
    assert model.vocab_ == corpus.vocab and model.feature_names_in_.tolist() == list(corpus.vocab)
    reordered = frame[list(reversed(corpus.vocab))]
    np.testing.assert_array_equal(model.transform(reordered, seed=1), model.transform(frame, seed=1))
    # a value that is not a count names its position and its word (the column name)
    bad = frame.astype(float)
    bad.iloc[2, 5] = 0.5
    with pytest.raises(ValueError, match=rf"X must hold non-negative integer counts, got 0.5 at \(document 2, "
                                         rf"word 5 '{corpus.vocab[5]}'\)"):
        model.transform(bad)
    # columns that are not all strings are not names (scikit-learn's rule): numbered words
    with _quiet():
        numbered = LDA(3, seed=0, **SMALL).fit(pd.DataFrame(corpus.to_dtm().toarray()))
    assert numbered.vocab_[:2] == ("0", "1") and not hasattr(numbered, "feature_names_in_")


def test_token_pattern_of_texts(corpus, fitted):
    """Texts are split by token_pattern (CountVectorizer's option and default): one-character tokens
    are dropped by default, in fit and in transform; another pattern gives other words."""
    texts = [t + " x 7 I" for t in corpus.to_texts()]  # one-character tokens only: dropped by default
    assert LDA().token_pattern == r"(?u)\b\w\w+\b"
    with _quiet():
        model = LDA(3, seed=0, **SMALL).fit(texts)
    assert model.vocab_ == corpus.vocab
    np.testing.assert_array_equal(model.topic_word_, fitted.topic_word_)
    np.testing.assert_array_equal(model.transform(texts, seed=1), fitted.transform(corpus, seed=1))
    # a pattern that keeps one word in two (w1, w10, ...): the model of those words only
    with _quiet():
        ones = LDA(3, seed=0, token_pattern=r"\bw1\d*\b", **SMALL).fit(texts)
    assert ones.vocab_ == tuple(w for w in corpus.vocab if w.startswith("w1"))
    assert ones.transform(["w1 w10 w2 x"]).shape == (1, 3)
    assert clone(ones).token_pattern == r"\bw1\d*\b"
    with pytest.raises(ValueError, match="token_pattern '\\(' is not a regular expression"):
        LDA(token_pattern="(")
    with pytest.raises(ValueError, match="token_pattern .* has 2 capturing groups"):
        LDA(3).set_params(token_pattern="(w)(1)")
    with pytest.raises(ValueError, match="token_pattern must be a regular expression \\(a str\\), got re.compile"):
        LDA(token_pattern=re.compile("w"))  # (saved with the model as text)
    with pytest.raises(ValueError, match=r"X has no tokens \(2 document\(s\), empty after token_pattern"):
        LDA(3, **SMALL).fit(["a b c", "x = 1"])


# ----------------------------------------------------------------------------- vocabularies by name
def test_reordered_vocabulary_is_matched_by_name_or_refused(corpus, fitted):
    X = corpus.to_dtm()
    reference = fitted.transform(X, seed=3)
    order = np.random.default_rng(0).permutation(corpus.vocab_size)
    shuffled_vocab = [corpus.vocab[i] for i in order]
    # a matrix with its words, columns in another order: matched by name
    np.testing.assert_array_equal(fitted.transform(X[:, order], vocab=shuffled_vocab, seed=3), reference)
    assert fitted.perplexity(X[:, order], vocab=shuffled_vocab) == fitted.perplexity(X)
    # a Corpus whose word ids follow another vocabulary order: matched by name
    tokens = corpus.to_token_lists()
    other = Corpus.from_token_lists(tokens, vocab=shuffled_vocab)
    np.testing.assert_array_equal(fitted.transform(other, seed=3), fitted.transform(tokens, seed=3))
    np.testing.assert_array_equal(fitted.transform(tokens, seed=3), fitted.transform(corpus, seed=3))
    # without names only the size can be checked
    np.testing.assert_array_equal(fitted.transform(X, seed=3), reference)
    v = corpus.vocab_size
    with pytest.raises(ValueError, match=f"vocabulary of {v - 1} words"):
        fitted.transform(X[:, : v - 1])
    # another vocabulary: refused, naming a word
    renamed = list(corpus.vocab)
    renamed[4] = "zebra"
    gone = corpus.vocab[4]
    with pytest.raises(ValueError, match=f"differs from the model's .*word '{gone}' is not in it; its word 'zebra'"):
        fitted.transform(X, vocab=renamed)
    with pytest.raises(ValueError, match="'zebra' is not among the model's"):
        fitted.transform(Corpus(corpus.tokens, corpus.doc_offsets, renamed))
    with pytest.raises(ValueError, match="differs from the model's"):
        fitted.transform(Corpus.from_token_lists([["w1", "w2"]]))  # a vocabulary of two words


# ----------------------------------------------------------------------------- save and load
def test_save_load_roundtrip(tmp_path, corpus, fitted):
    path = tmp_path / "model.nc"
    fitted.save(path)
    loaded = LDA.load(path)
    np.testing.assert_array_equal(loaded.topic_word_, fitted.topic_word_)
    np.testing.assert_array_equal(loaded.doc_topic_, fitted.doc_topic_)
    np.testing.assert_array_equal(loaded.topic_word_per_chain_, fitted.topic_word_per_chain_)
    assert loaded.get_params() == fitted.get_params()
    assert loaded.vocab_ == fitted.vocab_ and loaded.estimate_chains_ == fitted.estimate_chains_
    assert loaded.agreement_.verdict == fitted.agreement_.verdict
    new = corpus.to_token_lists()
    np.testing.assert_array_equal(loaded.transform(new, seed=11), fitted.transform(new, seed=11))
    assert loaded.perplexity(corpus) == fitted.perplexity(corpus)
    assert loaded.top_words(4, with_probabilities=True) == fitted.top_words(4, with_probabilities=True)
    for kind in ("u_mass", "c_v"):
        np.testing.assert_array_equal(loaded.coherence(kind, n=4), fitted.coherence(kind, n=4))
    np.testing.assert_array_equal(loaded.corpus_.tokens, fitted.corpus_.tokens)
    # the loaded chains continue exactly where the fitted ones stopped
    with _quiet():
        extended = LDA.load(path).extend(20)
        longer = LDA(3, seed=0, **{**SMALL, "num_draws": 40}).fit(corpus)
    np.testing.assert_array_equal(extended.idata_.sample_stats["lp"].values, longer.idata_.sample_stats["lp"].values)
    np.testing.assert_array_equal(extended.topic_word_, longer.topic_word_)
    np.testing.assert_array_equal(extended.doc_topic_, longer.doc_topic_)
    # no pickle anywhere: the file is NetCDF (HDF5) and the CLI reads it
    assert path.read_bytes()[:8] == b"\x89HDF\r\n\x1a\n"
    from gibbsjax.cli import main

    assert main(["summary", str(path)]) == 0


def test_a_model_saved_before_token_pattern_loads_with_the_word_pattern(tmp_path, fitted):
    """A file saved without token_pattern (before the option): its texts were split into
    WORD_PATTERN words, so the loaded model keeps splitting them so."""
    from gibbsjax.corpus import WORD_PATTERN
    from gibbsjax.topics.estimator_base import write_estimator

    params = {k: v for k, v in fitted.get_params().items() if k != "token_pattern"}
    path = tmp_path / "old.nc"
    write_estimator(path, fitted.idata_, params, fitted.corpus_, fitted.vocab_, name="LDA")
    loaded = LDA.load(path)
    assert loaded.token_pattern == WORD_PATTERN and LDA.load(_saved(tmp_path, fitted)).token_pattern == LDA().token_pattern
    np.testing.assert_array_equal(loaded.topic_word_, fitted.topic_word_)


def _saved(tmp_path, model):
    path = tmp_path / "new.nc"
    model.save(path)
    return path


def test_load_refuses_other_files(tmp_path):
    from gibbsjax.models import normal

    idata = gibbsjax.sample(normal.bivariate(0.5), seed=0, num_warmup=5, num_draws=5, progress=False)
    idata.to_netcdf(str(tmp_path / "normal.nc"))
    with pytest.raises(ValueError, match="not an LDA result"):
        LDA.load(tmp_path / "normal.nc")
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match=r"LDA.save needs a fitted model"):
        LDA(2).save(tmp_path / "unfitted.nc")


# ----------------------------------------------------------------------------- top words, pyLDAvis
def test_top_words_with_probabilities(fitted):
    pairs = fitted.top_words(5, with_probabilities=True)
    words = fitted.top_words(5)
    assert [[w for w, _ in topic] for topic in pairs] == words
    for k, topic in enumerate(pairs):
        probs = [p for _, p in topic]
        assert probs == sorted(probs, reverse=True)
        expected = np.sort(fitted.topic_word_[k].astype(np.float64))[::-1][:5]
        np.testing.assert_array_equal(probs, expected)
        assert all(fitted.topic_word_[k, fitted.vocab_.index(w)] == np.float32(p) for w, p in topic)


def test_pyldavis_export(corpus, fitted):
    d = fitted.to_pyldavis()
    assert sorted(d) == ["doc_lengths", "doc_topic_dists", "term_frequency", "topic_term_dists", "vocab"]
    k, v, n = 3, corpus.vocab_size, corpus.num_docs
    assert d["topic_term_dists"].shape == (k, v) and d["doc_topic_dists"].shape == (n, k)
    np.testing.assert_allclose(d["topic_term_dists"].sum(axis=1), 1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d["doc_topic_dists"].sum(axis=1), 1, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(d["doc_lengths"], corpus.doc_lengths)
    np.testing.assert_array_equal(d["term_frequency"], np.bincount(corpus.tokens, minlength=v))
    assert d["vocab"] == list(corpus.vocab) and len(d["vocab"]) == v
    np.testing.assert_allclose(d["topic_term_dists"], fitted.topic_word_, atol=1e-6)


# ----------------------------------------------------------------------------- GridSearchCV (last: see its docstring)
def test_in_model_selection_reads_the_stack():
    from sklearn.base import BaseEstimator
    from sklearn.model_selection import cross_val_score

    from gibbsjax.topics.estimator_base import in_model_selection, resolve_auto

    class Probe(BaseEstimator):
        seen: list = []

        def fit(self, X, y=None):
            Probe.seen.append(in_model_selection())
            return self

        def score(self, X, y=None):
            return 0.0

    Probe().fit(None)
    cross_val_score(Probe(), np.zeros((4, 1)), cv=2)
    assert Probe.seen == [False, True, True]
    assert resolve_auto("auto") and resolve_auto(True) and not resolve_auto(False)


def test_grid_search_over_num_topics(corpus120, capfd):
    """K = 1 against the true K = 3 on well-separated topics: one topic cannot
    describe them, so its held-out perplexity is far worse and score (its negative)
    picks K = 3.  (Compiling dominates these tiny fits: the vectorizer's vocabulary is
    fixed so that both folds have the shapes of the other tests' fits, the test runs
    last to find their code compiled, and refit=False spares the compilation of a fit
    on all 120 texts; the folds already show GridSearchCV cloning, setting and fitting
    the estimator.)

    progress and warn keep their defaults ("auto"): the search prints nothing and warns nothing
    (the short fits of K = 3 often disagree, and warn outside model selection)."""
    corpus = corpus120
    vectorizer = CountVectorizer(vocabulary=corpus.vocab)
    quiet = {k: v for k, v in SMALL.items() if k != "progress"}
    pipe = Pipeline([("vectorizer", vectorizer), ("lda", LDA(seed=0, **quiet))])
    # scikit-learn's name of K (test_choose_k.py searches over num_topics)
    search = GridSearchCV(pipe, {"lda__n_components": [1, 3]}, cv=KFold(2, shuffle=True, random_state=0),
                          refit=False)
    capfd.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(corpus.to_texts())
    assert [str(w.message) for w in caught] == []
    assert capfd.readouterr() == ("", "")
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (2,) and np.all(np.isfinite(scores)) and np.all(scores < -1)
    assert search.best_params_ == {"lda__n_components": 3}
    assert scores[1] > 1.2 * scores[0]  # -perplexity: K=3's perplexity well below K=1's
    # the same fit outside model selection draws its progress bar (on stderr); asked for, inside too
    with _quiet():
        LDA(3, seed=0, **quiet).fit(corpus.subset(np.arange(60)))
    assert "sampling" in capfd.readouterr().err
    loud = GridSearchCV(Pipeline([("vectorizer", vectorizer), ("lda", LDA(3, seed=0, **{**quiet, "progress": True}))]),
                        {"lda__n_components": [3]}, cv=KFold(2, shuffle=True, random_state=0), refit=False)
    with _quiet():
        loud.fit(corpus.to_texts())
    assert capfd.readouterr().err.count("sampling") >= 2
