"""The LDA estimator, held-out perplexity, coherence and the LDA config."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import gibbsjax
from gibbsjax import evaluate
from gibbsjax.models import lda
from gibbsjax.datasets.synthetic import lda_corpus

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fitted():
    corpus, phi, theta = lda_corpus(num_docs=300, num_topics=4, vocab_size=60, doc_length=40,
                                    alpha=0.1, eta=0.05, seed=5)
    train, test = corpus.split(0.2, seed=0)
    with warnings.catch_warnings():
        # 50 draws: R-hat may exceed 1.01 and fit() warns; test_agreement.py tests the warning
        warnings.simplefilter("ignore", UserWarning)
        model = gibbsjax.LDA(4, alpha=0.1, eta=0.05, num_chains=2, num_warmup=150, num_draws=50,
                             seed=0, progress=False).fit(train)
    return model, train, test, phi


def test_fit_shapes_and_alignment(fitted):
    model, train, test, phi = fitted
    assert model.topic_word_.shape == (4, 60)
    assert model.doc_topic_.shape == (train.num_docs, 4)
    np.testing.assert_allclose(model.topic_word_.sum(1), 1, atol=1e-4)
    np.testing.assert_allclose(model.doc_topic_.sum(1), 1, atol=1e-4)
    assert model.permutations_.shape == (2, 4)
    # aligned chains describe the same topics
    per_chain = model.idata_.posterior_mean["topic_word"].values
    assert np.abs(per_chain[0] - per_chain[1]).sum(1).max() < 0.3
    assert "lp" in model.summary().index
    # ... so every topic is reproduced, and the estimates are the reference chain's
    assert model.agreement_.all_agree, model.agreement_.verdict
    ref = model.agreement_.reference_chain
    assert model.estimate_chains_ == [ref]
    np.testing.assert_allclose(model.topic_word_, model.topic_word_per_chain_[ref])
    np.testing.assert_allclose(model.doc_topic_, model.doc_topic_per_chain_[ref])


def test_perplexity_beats_uniform_and_truth_is_better_than_noise(fitted):
    model, train, test, phi = fitted
    fitted_p = model.perplexity(test)
    true_p = lda.heldout_perplexity(phi, test, alpha=0.1)
    uniform_p = lda.heldout_perplexity(np.full((4, 60), 1 / 60), test, alpha=0.1)
    assert uniform_p == pytest.approx(60, rel=1e-4)  # knowing nothing: V
    assert fitted_p < 0.8 * uniform_p
    assert fitted_p < 1.15 * true_p  # close to the truth's own perplexity


def test_transform_and_top_words(fitted):
    model, train, test, phi = fitted
    theta = model.transform(test.to_dtm())
    assert theta.shape == (test.num_docs, 4)
    words = model.top_words(5)
    assert len(words) == 4 and all(len(w) == 5 for w in words)


def test_coherence_prefers_true_topics(fitted):
    """True topics vs 'mixed' ones whose top 4 words are the top 2 of two different
    true topics: documents (α = 0.1) use few topics, so mixed words co-occur less.
    (With η = 0.05 a topic has ~5 words of real weight, so compare the top 4.)"""
    model, train, test, phi = fitted
    k, v = phi.shape
    top2 = np.argsort(-phi, axis=1)[:, :2]
    mixed = np.zeros_like(phi)
    for t in range(k):
        words = np.concatenate([top2[t], top2[(t + 1) % k]])
        mixed[t, words] = np.linspace(1.0, 0.5, 4)  # order: topic t's words first
    for kind in ("u_mass", "umass_sum", "c_npmi"):
        good = evaluate.coherence(phi, train, kind=kind, n=4).mean()
        bad = evaluate.coherence(mixed, train, kind=kind, n=4).mean()
        assert good > bad, (kind, good, bad)
    npmi = model.coherence("c_npmi")
    assert npmi.shape == (4,) and np.all((npmi >= -1) & (npmi <= 1))


def test_bad_input(fitted):
    model, train, test, phi = fitted
    with pytest.raises(ValueError, match="vocabulary"):
        model.perplexity(np.ones((3, 59), dtype=int))
    with pytest.raises(ValueError, match="vocabulary"):
        model.transform(np.ones((3, 61), dtype=int))
    with pytest.raises(ValueError, match="1 of 2 documents in X are empty"):
        gibbsjax.LDA(2, progress=False, empty="error").fit(np.array([[1, 2], [0, 0]]))
    with pytest.raises(ValueError, match="num_topics"):
        gibbsjax.LDA(0)
    with pytest.raises(ValueError, match="alpha"):
        gibbsjax.LDA(3, alpha=-1)
    with pytest.raises(ValueError, match="sampler"):
        gibbsjax.LDA(3, sampler="fast_and_loose")
    with pytest.raises(ValueError, match="kind"):
        evaluate.coherence(phi, train, kind="cv")
    with pytest.raises(ValueError, match="c_v .* must be a Corpus"):
        evaluate.coherence(phi, train.to_dtm(), kind="c_v")
    with pytest.raises(ValueError, match=r"LDA.top_words needs a fitted model: call fit\(X\) first"):
        gibbsjax.LDA(3).top_words()  # a NotFittedError (test_sklearn.py)


# ----------------------------------------------------------------------------- coherence conventions
TEXTS = ["cat dog pet cat vet", "dog pet walk park", "cat pet vet food", "stock market price trade",
         "market trade bank price price", "bank stock loan", "pet market dog price", "cat food vet dog"]
TOPICS = [["cat", "dog", "pet", "vet"], ["market", "price", "stock", "bank"], ["cat", "price", "park", "loan"]]
#: gensim 4.4.0, CoherenceModel(topics=TOPICS, texts=docs, dictionary=Dictionary(docs),
#: coherence="c_v", processes=1).get_coherence_per_topic(), docs = [t.split() for t in TEXTS];
#: and coherence="u_mass" with corpus=[dictionary.doc2bow(d) for d in docs] (computed once, outside
#: this project; gensim is no dependency)
GENSIM_C_V = [0.8250268416644655, 0.7723260719586278, 0.4541962083542613]
GENSIM_U_MASS = [-0.4141511082944446, -0.8479327225316197, -26.467089814805465]


def _topics_matrix(topics, vocab):
    """Topics as a K × V matrix whose top words, in order, are ``topics``."""
    index = {w: i for i, w in enumerate(vocab)}
    tw = np.zeros((len(topics), len(vocab)))
    for k, words in enumerate(topics):
        for r, w in enumerate(words):
            tw[k, index[w]] = 1.0 - 0.1 * r
    return tw


def test_coherence_matches_gensim_conventions():
    """u_mass and c_v against gensim's own numbers (documents shorter than the
    110-token window: gensim's window counting is exact there); umass_sum is Mimno's sum."""
    from gibbsjax.corpus import Corpus

    corpus = Corpus.from_texts(TEXTS)
    tw = _topics_matrix(TOPICS, corpus.vocab)
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="c_v", n=4), GENSIM_C_V, rtol=1e-12)
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="u_mass", n=4), GENSIM_U_MASS,
                               rtol=1e-12)
    # Mimno et al.'s UMass, by hand for topic 0: D(cat) = 3, D(dog) = 4, D(pet) = 4 documents;
    # pairs (m, l), l < m, with D(w_m, w_l): (dog,cat) 2, (pet,cat) 2, (pet,dog) 3, (vet,cat) 3,
    # (vet,dog) 2, (vet,pet) 2; each term log((D(w_m, w_l) + 1) / D(w_l))
    by_hand = np.log(3 / 3) + np.log(3 / 3) + np.log(4 / 4) + np.log(4 / 3) + np.log(3 / 4) + np.log(3 / 4)
    assert evaluate.coherence(tw, corpus, kind="umass_sum", n=4)[0] == pytest.approx(by_hand, rel=1e-12)
    # the two UMass conventions: a sum with +1 and a mean with ε; a pair that never co-occurs
    # (topic 2) costs log(1/D(w)) in one and log(ε D / D(w)) ≈ −27 in the other
    assert evaluate.coherence(tw, corpus, kind="umass_sum", n=4)[2] > -10 > GENSIM_U_MASS[2]


def test_c_v_windows_equal_a_direct_count():
    """Boolean sliding windows (``window_count="boolean"``) counted directly (a set per window)
    on documents longer than the window, with repeated words: the vectorised counts and C_V
    agree.  (gensim's count, the default, is checked in test_coherence.py.)"""
    from gibbsjax.corpus import Corpus

    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(12)]
    docs = [[vocab[j] for j in rng.integers(0, 12, size=rng.integers(0, 40))] for _ in range(15)]
    corpus = Corpus.from_token_lists(docs, vocab=vocab, empty="keep")
    topics = [["w0", "w3", "w5", "w7"], ["w1", "w2", "w11", "w4"]]
    window = 9
    counts, windows = {}, 0
    for doc in docs:  # the definition, one window at a time
        spans = [doc] if len(doc) <= window else [doc[j:j + window] for j in range(len(doc) - window + 1)]
        for span in spans:
            windows += 1
            present = set(span)
            for a in vocab:
                for b in vocab:
                    if a in present and b in present:
                        counts[a, b] = counts.get((a, b), 0) + 1
    eps = 1e-12
    expected = []
    for words in topics:
        p = {(a, b): counts.get((a, b), 0) / windows for a in words for b in words}
        npmi = np.array([[np.log((p[a, b] + eps) / (p[a, a] * p[b, b])) / -np.log(p[a, b] + eps)
                          for b in words] for a in words])
        topic = npmi.sum(axis=0)
        expected.append(np.mean([v @ topic / (np.linalg.norm(v) * np.linalg.norm(topic)) for v in npmi]))
    tw = _topics_matrix(topics, vocab)
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="c_v", n=4, window_size=window,
                                                  window_count="boolean"), expected,
                               rtol=1e-12)
    words = np.array([0, 3, 5, 7])
    matrix, total = evaluate._window_counts(corpus, words, window, "boolean", cells=5 * 4)  # blocks of 5 windows
    assert total == windows
    np.testing.assert_array_equal(matrix, [[counts.get((vocab[a], vocab[b]), 0) for b in words] for a in words])


@pytest.fixture(scope="module")
def learned():
    """A small fit with α per topic and η learned (issue 12, item 4, through the estimator)."""
    corpus, _, _ = lda_corpus(num_docs=60, num_topics=3, vocab_size=30, doc_length=20, alpha=0.3, eta=0.1, seed=2)
    train, test = corpus.split(0.25, seed=0)
    model = gibbsjax.LDA(3, num_chains=2, num_warmup=30, num_draws=20, seed=1, progress=False,
                         learn_alpha="sample", asymmetric_alpha=True, learn_eta=True, alpha_prior=(2.0, 4.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a short run: the chains may disagree
        model.fit(train)
    return model, train, test


def test_learned_priors_reach_the_estimator(learned):
    model, train, test = learned
    post = model.idata_.posterior
    assert post["alpha"].shape == (2, 20, 3) and post["eta"].shape == (2, 20)
    # alpha_ / eta_: posterior means over the estimate chains, as postprocess stores them
    chains = model.estimate_chains_
    np.testing.assert_allclose(model.alpha_, model.idata_.posterior_mean["alpha"].isel(chain=chains)
                               .mean("chain").values, atol=1e-5)
    assert model.eta_ == pytest.approx(float(model.idata_.posterior_mean["eta"].isel(chain=chains).mean()), abs=1e-5)
    assert model.alpha is None  # the default α = 0.1 (lda_fit.alpha)
    assert not np.allclose(model.alpha_, 0.1)  # learned, not the starting value
    # transform and perplexity use the learned α, not the constructor's
    theta = model.transform(test, seed=3)
    np.testing.assert_allclose(theta, lda.infer_doc_topics(model.topic_word_, test, alpha=model.alpha_, seed=3))
    assert model.perplexity(test) == pytest.approx(lda.heldout_perplexity(model.topic_word_, test,
                                                                          alpha=model.alpha_))
    # not the constructor's α = 0.1 (given per topic, as the learned one is: the same compiled inference)
    assert model.perplexity(test) != pytest.approx(lda.heldout_perplexity(model.topic_word_, test,
                                                                          alpha=np.full(3, 0.1)))
    assert "alpha" in model.summary().index.str.replace(r"\[.*", "", regex=True)


def test_learned_priors_survive_clone_save_and_load(learned, tmp_path):
    model, train, test = learned
    params = model.get_params()
    assert params["learn_alpha"] == "sample" and params["asymmetric_alpha"] and params["learn_eta"]
    assert params["alpha_prior"] == (2.0, 4.0)
    sklearn = pytest.importorskip("sklearn")
    assert sklearn.base.clone(model).get_params() == params
    path = tmp_path / "learned.nc"
    model.save(path)
    back = gibbsjax.LDA.load(path)
    np.testing.assert_array_equal(back.alpha_, model.alpha_)
    assert back.eta_ == model.eta_ and back.learn_alpha == "sample"
    np.testing.assert_array_equal(back.transform(test, seed=4), model.transform(test, seed=4))
    # a fixed-prior model has none
    assert gibbsjax.LDA(3).set_params(learn_alpha="fixed").learn_eta is False


@pytest.mark.parametrize("kwargs,match", [
    (dict(asymmetric_alpha=True), "asymmetric_alpha"),
    (dict(learn_alpha="optimise"), "learn_alpha"),
    (dict(learn_eta=True, eta_prior=(0.0, 1.0)), "eta_prior"),
])
def test_learned_prior_options_are_checked_by_the_estimator(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gibbsjax.LDA(3, **kwargs)
