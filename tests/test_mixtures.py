"""Mixtures of unigrams (uncollapsed, π collapsed) and the Bernoulli mixture.

Exact enumeration of p(z | data) on tiny data against many independent chains,
Geweke tests, the a/b/c result of seed 002, bad input.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import jax
import numpy as np
import pytest
from scipy.special import betaln

from _exact import exact_unigram_posterior, final_states
from _exact import log_polya as _log_polya

from gibbsjax.corpus import Corpus
from gibbsjax.models import mixtures
from gibbsjax.testing import chi_square_test, geweke_test

ROOT = Path(__file__).resolve().parents[1]

# ----------------------------------------------------------------------------- exact posteriors
# Written from the model definitions alone (float64 numpy), not with library code.
TINY_DOCS = [[0, 0, 1], [2, 2], [0, 1, 2, 0], [1]]  # 4 documents over V = 3 words
TINY_V = 3


def exact_bernoulli_posterior(x, k, alpha, a, b):
    """p(s | X) for the Bernoulli mixture, π and p integrated out."""
    x = np.asarray(x, float)
    states = np.array(list(itertools.product(range(k), repeat=x.shape[0])))
    logp = []
    for z in states:
        lp = _log_polya(np.bincount(z, minlength=k), alpha)
        for c in range(k):
            n1 = x[z == c].sum(0)
            n0 = (z == c).sum() - n1
            lp += np.sum(betaln(a + n1, b + n0) - betaln(a, b))
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def final_labels(kernel, data, **kwargs):
    """Labels of many independent chains after a few sweeps, (chains, D)."""
    return final_states(kernel, data, **kwargs).z


def state_counts(z, k):
    codes = (z * (k ** np.arange(z.shape[1])[::-1])).sum(1)  # itertools.product order
    return np.bincount(codes, minlength=k ** z.shape[1])


def _tiny_corpus():
    return Corpus.from_token_lists([[str(w) for w in d] for d in TINY_DOCS], vocab=["0", "1", "2"])


# ----------------------------------------------------------------------------- enumeration
ALPHA, LAM = (1.2, 2.5), 0.8  # asymmetric π prior: the two labels are not exchangeable


@pytest.mark.parametrize("factory", [mixtures.unigrams, mixtures.unigrams_collapsed])
def test_unigram_label_frequencies_match_exact_posterior(factory):
    kernel = factory(2, alpha=ALPHA, lam=LAM)
    z = final_labels(kernel, mixtures.unigram_data(_tiny_corpus()))
    states, p = exact_unigram_posterior(TINY_DOCS, TINY_V, 2, ALPHA, LAM)
    result = chi_square_test(state_counts(z, 2), p)
    assert result.p_value > 1e-4, result


BERN_X = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [0, 1, 1]])
BERN_ALPHA, BERN_A, BERN_B = (1.5, 1.1, 0.6), 0.7, 1.3


def test_bernoulli_label_frequencies_match_exact_posterior():
    kernel = mixtures.bernoulli(3, alpha=BERN_ALPHA, a=BERN_A, b=BERN_B)  # K = 3: 81 states
    z = final_labels(kernel, mixtures.bernoulli_data(BERN_X))
    states, p = exact_bernoulli_posterior(BERN_X, 3, BERN_ALPHA, BERN_A, BERN_B)
    result = chi_square_test(state_counts(z, 3), p)
    assert result.p_value > 1e-4, result


@pytest.mark.slow
def test_enumeration_detects_stale_collapsed_counts():
    """Power: labels drawn all at once from the counts of the previous sweep fail."""
    import jax.numpy as jnp

    from gibbsjax import conjugate as cj
    from gibbsjax.models import one_label as ol
    from gibbsjax import random as gr

    good = mixtures.unigrams_collapsed(2, alpha=ALPHA, lam=LAM)

    def stale_z(key, state, data):  # every d from counts that still include its own old label
        loglik = ol.doc_log_likelihood(state.log_beta, data)
        counts = cj.class_counts(state.z, 2).astype(loglik.dtype)
        return gr.categorical(key, jnp.log(counts + jnp.asarray(ALPHA)) + loglik)

    from functools import partial

    from gibbsjax.kernel import sweep

    bad = good._replace(step=sweep(("log_beta", partial(mixtures.sample_beta, lam=LAM)), ("z", stale_z)))
    z = final_labels(bad, mixtures.unigram_data(_tiny_corpus()))
    _, p = exact_unigram_posterior(TINY_DOCS, TINY_V, 2, ALPHA, LAM)
    assert chi_square_test(state_counts(z, 2), p).p_value < 1e-4


# ----------------------------------------------------------------------------- Geweke
def _label_functions():
    return {"z": lambda s, d: s.z}


@pytest.mark.parametrize("factory", [pytest.param(mixtures.unigrams, marks=pytest.mark.slow),
                                     mixtures.unigrams_collapsed])  # both against exact enumeration by default
def test_unigram_geweke(factory):
    kernel = factory(2, alpha=ALPHA, lam=LAM)
    data = mixtures.unigram_data(_tiny_corpus())
    fns = {**_label_functions(), "beta": lambda s, d: jax.numpy.exp(s.log_beta),
           "doc_probs": lambda s, d: kernel.record(s, d)["doc_probs"]}
    geweke_test(kernel, data, fns, num_chains=500, num_steps=60, seed=5).assert_passes()


@pytest.mark.slow  # by default: label frequencies against exact enumeration
def test_bernoulli_geweke():
    kernel = mixtures.bernoulli(2, alpha=(1.6, 0.9), a=BERN_A, b=BERN_B)
    data = mixtures.bernoulli_data(BERN_X)
    fns = {**_label_functions(), "p": lambda s, d: jax.numpy.exp(s.log_p),
           "x_on_p": lambda s, d: (d.x * jax.numpy.exp(s.log_p)[s.z]).sum(0),
           "doc_probs": lambda s, d: kernel.record(s, d)["doc_probs"]}
    geweke_test(kernel, data, fns, num_chains=500, num_steps=60, seed=6).assert_passes()


# ----------------------------------------------------------------------------- seed 002: a/b/c
def test_abc_config_recovers_an_a_topic_and_a_c_topic():
    from gibbsjax.config import get_spec, load_config, run_config

    config = load_config(ROOT / "configs" / "abc-topics.toml")
    assert config.model == "mixtures.unigrams" and config.data.num_docs == 12
    idata = run_config(config, progress=False)
    beta = idata.estimates["beta_mean"]
    a_topic = int(np.argmax(beta.sel(word="a").values))
    c_topic = 1 - a_topic
    assert float(beta.sel(word="a")[a_topic]) > 0.5 and float(beta.sel(word="c")[a_topic]) < 0.15
    assert float(beta.sel(word="c")[c_topic]) > 0.45 and float(beta.sel(word="a")[c_topic]) < 0.2
    # after alignment every chain agrees
    per_chain = idata.posterior["beta"].mean("draw").sel(word="a").values  # (chain, cluster)
    assert np.all(per_chain[:, a_topic] > 0.45) and np.all(per_chain[:, c_topic] < 0.25)
    # documents "c b c" (1, 4, 7, 10) go to the c topic, the others to the a topic
    pred = idata.estimates["predicted"].values
    assert np.all(pred[1::3] == c_topic) and np.all(pred[0::3] == a_topic) and np.all(pred[2::3] == a_topic)
    report = get_spec("mixtures.unigrams").report(idata)
    assert f"{a_topic} [" in report and "a (0.6" in report and "c (0.5" in report


def test_keep_draws_false_accumulates_and_postprocess_aligns_chain_means():
    from gibbsjax.config import get_spec
    from gibbsjax.diagnostics import to_inference_data

    kernel = mixtures.unigrams_collapsed(2, keep_draws=False)
    data = mixtures.unigram_data(_tiny_corpus())
    state = kernel.init(jax.random.key(0), data)
    assert set(kernel.record(state, data)) == {"pi"}
    assert set(kernel.accumulate(state, data)) == {"beta", "doc_probs"}
    # what the runner returns for such a kernel, with chain 1's clusters in the other order
    beta = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    probs = np.array([[0.9, 0.1]] * 2 + [[0.2, 0.8]] * 2)
    idata = to_inference_data(
        {"pi": np.full((2, 5, 2), 0.5)},
        posterior_mean={"beta": np.stack([beta, beta[::-1]]), "doc_probs": np.stack([probs, probs[:, ::-1]])},
        dims=kernel.dims, coords=kernel.coords(data),
    )
    out = get_spec("mixtures.unigrams_collapsed").postprocess(idata, kernel, data, {})
    assert "across chains" in out.estimates.attrs["aligned"]
    assert np.allclose(out.posterior_mean["beta"].values, beta[None])
    assert out.estimates["predicted"].values.tolist() == [0, 0, 1, 1]


def test_config_reads_a_corpus_file_and_rejects_bad_data_keys(tmp_path):
    from gibbsjax.config import ConfigError, parse_config
    from gibbsjax.corpus import write_ldac

    write_ldac(_tiny_corpus(), tmp_path / "docs.ldac", tmp_path / "vocab.txt")
    doc = {"model": {"name": "mixtures.unigrams_collapsed", "K": 2},
           "data": {"file": "docs.ldac", "format": "ldac", "vocab": "vocab.txt"}, "sampler": {}}
    config = parse_config(doc, base_dir=tmp_path)
    assert config.data.num_docs == 4 and config.data.vocab == ("0", "1", "2")
    for data, msg in [({"corpus": "abc", "hide_labels": 0.5}, "unknown key 'hide_labels'"),
                      ({"corpus": "nope"}, "unknown corpus 'nope'"),
                      ({"file": "docs.ldac", "format": "csv"}, "format must be one of"),
                      ({}, "exactly one of corpus, file")]:
        with pytest.raises(ConfigError, match=msg):
            parse_config({**doc, "data": data}, base_dir=tmp_path)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: mixtures.unigrams(1), "K"),
        (lambda: mixtures.unigrams(2.5), "K"),
        (lambda: mixtures.unigrams_collapsed(0), "K"),
        (lambda: mixtures.bernoulli(1), "K"),
        (lambda: mixtures.unigrams(2, alpha=0.0), "alpha"),
        (lambda: mixtures.unigrams(2, alpha=(1.0, -1.0)), "alpha"),
        (lambda: mixtures.unigrams(2, alpha=(1.0, 1.0, 1.0)), "alpha"),
        (lambda: mixtures.unigrams_collapsed(2, lam=-0.5), "lam"),
        (lambda: mixtures.unigrams(2, lam=float("nan")), "lam"),
        (lambda: mixtures.bernoulli(2, a=0.0), "a"),
        (lambda: mixtures.bernoulli(2, b=-1.0), "b"),
        (lambda: mixtures.unigrams(2, keep_draws="no"), "keep_draws"),
    ],
)
def test_factories_reject_bad_hyperparameters(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_unigram_data_rejects_bad_corpus():
    with pytest.raises(ValueError, match="corpus is empty"):
        mixtures.unigram_data(Corpus.from_token_lists([]))
    with pytest.raises(ValueError, match="corpus: document 1 .* no tokens"):
        mixtures.unigram_data(Corpus(np.array([0, 1], np.int32), np.array([0, 2, 2]), ("a", "b")))
    with pytest.raises(ValueError, match="corpus must be a gibbsjax.corpus.Corpus"):
        mixtures.unigram_data([["a", "b"]])


@pytest.mark.parametrize(
    "features, kwargs, msg",
    [
        (np.array([1, 0, 1]), {}, "features must be a 2-D"),
        (np.zeros((0, 3)), {}, "features is empty"),
        (np.array([[0, 2], [1, 0]]), {}, "features must be binary"),
        (np.array([[0.5, 1.0]]), {}, "features must be binary"),
        (np.array([[0, 1], [1, 0]]), {"labels": [0, 1, 1]}, r"labels must have shape \(2,\)"),
        (np.array([[0, 1], [1, 0]]), {"labels": [0, -2]}, "labels must be >= -1"),
        (np.array([[0, 1], [1, 0]]), {"feature_names": ["x"]}, "feature_names"),
        (np.array([[0, 1], [1, 0]]), {"max_features": 1}, "max_features"),
    ],
)
def test_bernoulli_data_rejects_bad_input(features, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        mixtures.bernoulli_data(features, **kwargs)


def test_bernoulli_data_from_a_corpus_is_word_presence():
    c = Corpus.from_token_lists([["a", "a", "b"], ["c"], ["a", "c", "c"]], labels=[0, 1, 1])
    d = mixtures.bernoulli_data(c)
    assert np.asarray(d.x).tolist() == [[1, 1, 0], [0, 0, 1], [1, 0, 1]]
    d2 = mixtures.bernoulli_data(c, max_features=2)  # a and c occur in 2 documents each
    assert d2.info.items == ("a", "c") and np.asarray(d2.true_labels).tolist() == [0, 1, 1]


def test_kernels_are_memoised():
    assert mixtures.unigrams(3, alpha=[1, 2, 3]) is mixtures.unigrams(3, alpha=(1.0, 2.0, 3.0))
    assert mixtures.bernoulli(2) is mixtures.bernoulli(2, 1.0, 1.0, 1.0)
