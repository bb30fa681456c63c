"""The LDA estimator, held-out perplexity, coherence and the LDA config."""

from __future__ import annotations

import dataclasses
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
    for kind in ("umass", "npmi"):
        good = evaluate.coherence(phi, train, kind=kind, n=4).mean()
        bad = evaluate.coherence(mixed, train, kind=kind, n=4).mean()
        assert good > bad, (kind, good, bad)
    npmi = model.coherence("npmi")
    assert npmi.shape == (4,) and np.all((npmi >= -1) & (npmi <= 1))


def test_bad_input(fitted):
    model, train, test, phi = fitted
    with pytest.raises(ValueError, match="vocabulary"):
        model.perplexity(np.ones((3, 59), dtype=int))
    with pytest.raises(ValueError, match="vocabulary"):
        model.transform(np.ones((3, 61), dtype=int))
    with pytest.raises(ValueError, match="X"):
        gibbsjax.LDA(2, progress=False).fit(np.array([[1, 2], [0, 0]]))  # a zero-length document
    with pytest.raises(ValueError, match="num_topics"):
        gibbsjax.LDA(0)
    with pytest.raises(ValueError, match="alpha"):
        gibbsjax.LDA(3, alpha=-1)
    with pytest.raises(ValueError, match="sampler"):
        gibbsjax.LDA(3, sampler="fast_and_loose")
    with pytest.raises(ValueError, match="kind"):
        evaluate.coherence(phi, train, kind="cv")
    with pytest.raises(RuntimeError, match="fit"):
        gibbsjax.LDA(3).top_words()


def test_lda_config_runs_and_reports(tmp_path, capsys):
    from gibbsjax.cli import main
    from gibbsjax.config import load_config, run_config

    config = load_config(ROOT / "configs" / "lda-demo.toml")
    small = dataclasses.replace(config, sampler=dataclasses.replace(config.sampler, num_warmup=20, num_draws=10))
    idata = run_config(small, progress=False)
    assert "topics" in idata.groups()
    assert float(idata.topics.attrs["heldout_perplexity"]) > 1
    assert idata.posterior_mean["topic_word"].sizes["word"] == config.extras["corpus"].vocab_size
    from gibbsjax.config import spec_for

    text = spec_for(idata).report(idata)
    assert "top words per topic" in text and "held-out perplexity" in text and "R-hat" in text
    # the topic agreement: a verdict line, and the estimates come from one chain by the rule
    assert f"agreement: {idata.agreement.attrs['verdict']}" in text
    assert "reproduced by all 4 chains" in idata.agreement.attrs["verdict"]
    ref = int(idata.agreement.attrs["reference_chain"])
    assert ref == int(np.argmax(idata.sample_stats["lp"].mean("draw").values))
    assert idata.topics.attrs["estimate_chains"] == f"[{ref}]"
    np.testing.assert_allclose(idata.topics["topic_word"].values,
                               idata.posterior_mean["topic_word"].isel(chain=ref).values)
    out = tmp_path / "lda.nc"
    idata.to_netcdf(str(out))
    assert main(["summary", str(out)]) == 0
    assert "top words per topic" in capsys.readouterr().out
