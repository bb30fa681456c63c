"""Agreement across chains: which components every chain reproduces, estimates from one
mode (never a blend of modes), and the one "chains disagree" decision that the reports
and the LDA estimator's warning share (issue 10, items 1-2)."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

import gibbsjax
from gibbsjax import reports
from gibbsjax.corpus import Corpus
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.diagnostics import RHAT_LIMIT, to_inference_data
from gibbsjax.agreement import AGREEMENT_THRESHOLD, REFERENCE_RULE, Agreement, chain_agreement, reference_chain
from gibbsjax.models import gaussian_mixture as gm
from gibbsjax.models import lda, mixtures
from gibbsjax.specs import gaussian_mixture as gm_spec
from gibbsjax.specs import lda as lda_spec


def _hellinger_by_definition(p, q):
    """H² = ½ Σ (√p − √q)², term by term."""
    return float(np.sqrt(0.5 * sum((np.sqrt(a) - np.sqrt(b)) ** 2 for a, b in zip(p, q))))


# ----------------------------------------------------------------------------- distances
def test_discrete_hellinger_matches_the_definition():
    rng = np.random.default_rng(0)
    est = rng.dirichlet(np.ones(5) * 0.7, size=(3, 2))  # 3 chains, 2 components, 5 words
    a = chain_agreement(est)
    for k, i, j in itertools.product(range(2), range(3), range(3)):
        assert a.distance[k, i, j] == pytest.approx(_hellinger_by_definition(est[i, k], est[j, k]), abs=1e-7)
    # rows are normalised first: scaling a chain's estimate changes nothing
    scaled = est * np.array([1.0, 3.0, 0.5])[:, None, None]
    np.testing.assert_allclose(chain_agreement(scaled).distance, a.distance, atol=1e-7)
    # a distribution has distance 0 to itself and 1 to one with disjoint support
    disjoint = np.array([[[0.5, 0.5, 0.0, 0.0]], [[0.0, 0.0, 0.2, 0.8]]])
    np.testing.assert_allclose(chain_agreement(disjoint).distance[0], [[0.0, 1.0], [1.0, 0.0]], atol=1e-7)


def test_bernoulli_hellinger_matches_enumeration_of_the_product_distribution():
    p = np.array([0.1, 0.7, 0.45])
    q = np.array([0.3, 0.6, 0.9])
    outcomes = np.array(list(itertools.product([0, 1], repeat=3)))  # all 8 feature vectors
    prob_p = np.prod(np.where(outcomes, p, 1 - p), axis=1)
    prob_q = np.prod(np.where(outcomes, q, 1 - q), axis=1)
    expected = _hellinger_by_definition(prob_p, prob_q)
    a = chain_agreement(np.stack([p, q])[:, None, :], distance="bernoulli")
    assert a.distance[0, 0, 1] == pytest.approx(expected, abs=1e-7)
    assert a.distance[0, 1, 0] == pytest.approx(expected, abs=1e-7)


def test_normal_hellinger_matches_numerical_integration():
    from scipy import integrate, stats

    def bc(m1, s1, m2, s2):  # ∫ sqrt(p q) dx by quadrature
        f = lambda x: np.sqrt(stats.norm.pdf(x, m1, s1) * stats.norm.pdf(x, m2, s2))  # noqa: E731
        return integrate.quad(f, -np.inf, np.inf, epsabs=1e-12)[0]

    # univariate: estimates (chain, K, 2) = (mean, sd)
    est = np.array([[[0.0, 1.0], [5.0, 0.5]], [[0.8, 1.7], [5.1, 0.45]]])
    a = chain_agreement(est, distance="normal")
    for k in range(2):
        expected = np.sqrt(1 - bc(est[0, k, 0], est[0, k, 1], est[1, k, 0], est[1, k, 1]))
        assert a.distance[k, 0, 1] == pytest.approx(expected, abs=1e-6)
    # diagonal, two dimensions: (chain, K, 2, D); BC is the product over dimensions
    est2 = np.array([[[[0.0, 10.0], [1.0, 2.0]]], [[[0.5, 11.0], [1.5, 2.5]]]])
    expected = np.sqrt(1 - bc(0.0, 1.0, 0.5, 1.5) * bc(10.0, 2.0, 11.0, 2.5))
    assert chain_agreement(est2, distance="normal").distance[0, 0, 1] == pytest.approx(expected, abs=1e-6)


# ----------------------------------------------------------------------------- reference chain and verdict
def test_reference_chain_is_the_highest_mean_lp():
    lp = np.array([[-10.0, -1.0, -10.0, -10.0],   # highest single draw, mean -7.75
                   [-6.0, -6.0, -6.0, -6.0],       # highest mean: the reference
                   [-7.0, -7.0, -7.0, -7.0]])
    assert reference_chain(lp) == 1
    assert reference_chain(lp.mean(axis=1)) == 1
    lp_nan = lp.copy()
    lp_nan[2, 0] = np.nan  # NaN draws are ignored, not propagated
    lp_nan[2, 1:] = -1.0
    assert reference_chain(lp_nan) == 2
    assert reference_chain([-3.0, -3.0]) == 0  # ties: the lower index
    est = np.full((3, 1, 2), 0.5)
    a = chain_agreement(est, lp=lp)
    assert a.reference_chain == 1 and a.rule == REFERENCE_RULE
    assert chain_agreement(est).reference_chain == 0  # no lp: chain 0, and the rule says so
    assert "no log joint" in chain_agreement(est).rule


def test_reproduced_agreeing_chains_and_verdict():
    topics = np.array([[0.85, 0.05, 0.05, 0.05], [0.05, 0.85, 0.05, 0.05], [0.05, 0.05, 0.05, 0.85]])
    other = np.array([0.05, 0.05, 0.85, 0.05])  # a different topic, far from every one above
    est = np.stack([topics] * 4)
    est[1, 0] = other   # chain 1 misses topics 0 and 2
    est[1, 2] = other
    est[3, 2] = other   # chain 3 misses topic 2
    lp = np.array([-100.0, -120.0, -101.0, -110.0])
    a = chain_agreement(est, lp=lp, rhat=np.array([1.0, 1.2, 1.5]), component_name="topic")
    h_far = _hellinger_by_definition(topics[0], other)
    assert h_far > AGREEMENT_THRESHOLD
    np.testing.assert_allclose(a.distance_to_reference[1], [h_far, 0.0, _hellinger_by_definition(topics[2], other)],
                               atol=1e-7)
    assert a.reproduced.astype(int).tolist() == [[1, 1, 1], [0, 1, 0], [1, 1, 1], [1, 1, 0]]
    assert a.reproduced_by_all.tolist() == [False, True, False]
    assert a.agreeing_chains == [0, 2] and not a.all_agree
    assert a.verdict == "1 of 3 topics reproduced by all 4 chains"
    assert a.estimate_chains("best") == [0] and a.estimate_chains("agreeing") == [0, 2]
    # the threshold decides: at 1 every chain reproduces everything
    loose = chain_agreement(est, lp=lp, threshold=1.0, component_name="topic")
    assert loose.all_agree and loose.verdict == "3 of 3 topics reproduced by all 4 chains"


def test_to_dataset_contract_round_trips_through_netcdf(tmp_path):
    import arviz as az

    est = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.9, 0.1], [0.8, 0.2]], [[0.88, 0.12], [0.25, 0.75]]])
    a = chain_agreement(est, lp=[-5.0, -9.0, -6.0], rhat=np.array([1.001, np.nan]), component_name="topic")
    ds = a.to_dataset("topic")
    assert ds["distance"].dims == ("topic", "chain", "other_chain")
    assert ds["distance_to_reference"].dims == ("chain", "topic")
    assert ds["reproduced"].dims == ("chain", "topic") and ds["reproduced"].dtype == np.int8
    assert ds["rhat"].dims == ("topic",) and np.isnan(ds["rhat"].values[1])
    assert ds.attrs["component_dim"] == "topic" and ds.attrs["reference_chain"] == 0
    assert ds.attrs["threshold"] == AGREEMENT_THRESHOLD and ds.attrs["rule"] == REFERENCE_RULE
    assert json.loads(ds.attrs["agreeing_chains"]) == [0, 2]
    assert ds.attrs["verdict"] == "1 of 2 topics reproduced by all 3 chains"
    np.testing.assert_allclose(ds["distance"].values, a.distance, atol=1e-6)  # stored as float32
    idata = to_inference_data({"x": np.zeros((3, 4))})
    idata.add_groups({"agreement": ds})
    path = tmp_path / "r.nc"
    idata.to_netcdf(str(path))
    back = Agreement.from_dataset(az.from_netcdf(str(path)).agreement)
    assert back.verdict == a.verdict and back.agreeing_chains == a.agreeing_chains
    assert back.reproduced.tolist() == a.reproduced.tolist() and back.reference_chain == 0


@pytest.mark.parametrize("kwargs, match", [
    ({"estimates": np.ones((2, 3))}, "shape"),
    ({"estimates": np.full((2, 1, 2), np.nan)}, "NaN"),
    ({"distance": "cosine"}, "distance"),
    ({"threshold": 0.0}, "threshold"),
    ({"threshold": 1.5}, "threshold"),
    ({"lp": [1.0, 2.0, 3.0]}, "lp"),
    ({"rhat": np.ones(3)}, "rhat"),
    ({"estimates": -np.ones((2, 1, 2))}, "non-negative"),
    ({"estimates": np.ones((2, 1, 2)) * 2, "distance": "bernoulli"}, r"\[0, 1\]"),
    ({"estimates": np.array([[[0.0, -1.0]], [[0.0, 1.0]]]), "distance": "normal"}, "standard deviations"),
    ({"estimates": np.ones((2, 1, 3)), "distance": "normal"}, "means then standard deviations"),
])
def test_bad_input_is_a_value_error(kwargs, match):
    args = {"estimates": np.full((2, 1, 2), 0.5), **kwargs}
    with pytest.raises(ValueError, match=match):
        chain_agreement(args.pop("estimates"), **args)


# ----------------------------------------------------------------------------- LDA postprocess: one mode, by hand
VOCAB = ["a", "b", "c", "d"]


def _two_mode_lda_idata(lp_best: int):
    """Two chains in visibly different modes: chain 0's topics pair words (a, b) and
    (c, d), chain 1's pair (a, c) and (b, d); chain ``lp_best`` has the higher log joint."""
    modes = np.array([[[0.45, 0.45, 0.05, 0.05], [0.05, 0.05, 0.45, 0.45]],
                      [[0.45, 0.05, 0.45, 0.05], [0.05, 0.45, 0.05, 0.45]]])
    rng = np.random.default_rng(3)
    share = 0.5 + rng.normal(0, 0.01, size=(2, 50, 1)) * np.array([1.0, -1.0])
    lp = rng.normal(-100.0, 1.0, size=(2, 50))
    lp[lp_best] += 30.0
    doc_topic = np.array([[[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]], [[0.6, 0.4], [0.3, 0.7], [0.1, 0.9]]])
    idata = to_inference_data(
        {"topic_share": share}, sample_stats={"lp": lp},
        posterior_mean={"topic_word": modes, "doc_topic": doc_topic},
        dims={"topic_share": ["topic"], "topic_word": ["topic", "word"], "doc_topic": ["document", "topic"]})
    corpus = Corpus.from_token_lists([["a", "b", "a"], ["c", "d", "d"], ["a", "c", "b", "d"]], vocab=VOCAB)
    return idata, modes, corpus


@pytest.mark.parametrize("best", [0, 1])
def test_lda_estimates_come_from_the_reference_chain_not_the_average(best):
    idata, modes, corpus = _two_mode_lda_idata(best)
    extras = {"corpus": corpus, "hyperparameters": {"alpha": 0.1}}
    out = lda_spec.postprocess(idata, lda.partially_collapsed(2), None, extras)
    phi = out.topics["topic_word"].values
    aligned = out.posterior_mean["topic_word"].transpose("chain", "topic", "word").values
    # the estimates are the reference chain's topics (aligned: in some order) ...
    np.testing.assert_allclose(phi, aligned[best])
    assert sorted(map(tuple, np.round(phi, 6))) == sorted(map(tuple, np.round(modes[best], 6)))
    # ... and not a blend: the average of the two chains puts 0.25 on every word
    assert np.abs(phi - aligned.mean(axis=0)).max() > 0.15
    assert json.loads(out.topics.attrs["estimate_chains"]) == [best]
    tops = json.loads(out.topics.attrs["top_words"])
    assert sorted(sorted(t[:2]) for t in tops) == sorted(
        sorted(VOCAB[i] for i in np.argsort(-row)[:2]) for row in modes[best])
    # the agreement group: neither topic reproduced by the other chain
    ag = out.agreement
    assert ag.attrs["reference_chain"] == best and json.loads(ag.attrs["agreeing_chains"]) == [best]
    assert ag.attrs["verdict"] == "0 of 2 topics reproduced by all 2 chains"
    assert np.all(ag["distance_to_reference"].values[1 - best] > AGREEMENT_THRESHOLD)
    # the report says so, next to R-hat per topic, and names where the estimates come from
    text = lda_spec.report(out)
    assert "agreement: 0 of 2 topics reproduced by all 2 chains" in text
    assert "R-hat" in text and "chains disagree" in text and f"from chain {best}" in text
    assert text.count("-> chains disagree") == 1 and "What helps" not in text  # one verdict line
    # the tables behind it: R-hat per aligned topic, and the full explanation with what helps
    more = lda_spec.details(out)
    assert "agreement: 0 of 2 topics reproduced by all 2 chains" in more and "reproduced by chains" in more
    assert "--kind stable" in more  # LDA results carry stable topics: the advice points there
    # "agreeing" averages the chains that reproduce every topic of the reference: here only it
    out2 = lda_spec.postprocess(_two_mode_lda_idata(best)[0], lda.partially_collapsed(2), None,
                           {**extras, "chains": "agreeing"})
    np.testing.assert_allclose(out2.topics["topic_word"].values, phi)
    with pytest.raises(ValueError, match="chains"):
        lda_spec.postprocess(_two_mode_lda_idata(best)[0], None, None, {**extras, "chains": "mean"})


# ----------------------------------------------------------------------------- the LDA estimator
def _corpus(num_topics):
    # the same grid for both corpora (fixed lengths): one compilation serves both fits
    corpus, _, _ = lda_corpus(num_docs=80, num_topics=num_topics, vocab_size=40, doc_length=30, alpha=0.05,
                              eta=0.02, fixed_length=True, seed=7)
    return corpus


def _fit(num_topics, num_draws, chains="best", seed=1):
    model = gibbsjax.LDA(2, alpha=0.1, eta=0.05, num_chains=8, num_warmup=100, num_draws=num_draws,
                         chunk_size=100, seed=seed, progress=False, chains=chains)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(_corpus(num_topics))
    return model, [w for w in caught if issubclass(w.category, UserWarning)]


@pytest.fixture(scope="module")
def disagreeing():
    """Two topics fitted to a corpus of four well-separated ones: each chain merges the four
    in pairs, three ways to do so, so eight chains land in different modes."""
    return _fit(4, 100)


def test_estimator_warns_and_never_blends_when_chains_disagree(disagreeing):
    model, caught = disagreeing
    a = model.agreement_
    assert not a.all_agree and len(a.agreeing_chains) < 8
    assert len(caught) == 1
    message = str(caught[0].message)
    # the same decision as the report of `gibbsjax run`, in one line; the report's text in its details
    assert caught[0].category is gibbsjax.ChainDisagreementWarning
    assert message == reports.disagreement_line(model.idata_) and "\n" not in message
    assert caught[0].message.details == reports.chains_disagree(model.idata_)
    assert message.startswith("chains disagree") and "R-hat" in message and a.verdict in message
    assert "chains disagree" in lda_spec.report(model.idata_)
    ref = a.reference_chain
    assert model.estimate_chains_ == [ref]
    assert ref == int(np.argmax(model.idata_.sample_stats["lp"].mean("draw").values))
    np.testing.assert_allclose(model.topic_word_, model.topic_word_per_chain_[ref])
    np.testing.assert_allclose(model.doc_topic_, model.doc_topic_per_chain_[ref])
    assert model.topic_word_per_chain_.shape == (8, 2, 40) and model.doc_topic_per_chain_.shape == (8, 80, 2)
    # not the average over the chains: that blend is far from the reference chain's topics, much
    # farther than the chains of the reference chain's mode are from them (their spread is the
    # Monte Carlo noise of one mode; the blend's distance is the gap between modes)
    blend = model.topic_word_per_chain_.mean(axis=0)
    same_mode = [c for c in a.agreeing_chains if c != ref]
    assert same_mode, a.agreeing_chains
    spread = max(np.abs(model.topic_word_ - model.topic_word_per_chain_[c]).sum(axis=1).max() for c in same_mode)
    assert np.abs(model.topic_word_ - blend).sum(axis=1).max() > 10 * spread, spread
    from gibbsjax.evaluate import top_words

    assert model.top_words(5) == top_words(model.topic_word_per_chain_[ref], model.vocab_, 5)


def test_estimator_can_average_the_agreeing_chains(disagreeing):
    best, _ = disagreeing
    model, caught = _fit(4, 100, chains="agreeing")
    assert len(caught) == 1  # the same run, the same verdict
    chains = model.agreement_.agreeing_chains
    assert model.estimate_chains_ == chains and chains == best.agreement_.agreeing_chains
    np.testing.assert_allclose(model.topic_word_, model.topic_word_per_chain_[chains].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(model.doc_topic_, model.doc_topic_per_chain_[chains].mean(axis=0), atol=1e-6)
    assert model.get_params()["chains"] == "agreeing"
    with pytest.raises(ValueError, match="chains"):
        gibbsjax.LDA(2, chains="all")


def test_estimator_does_not_warn_when_chains_agree():
    model, caught = _fit(2, 2000)
    assert caught == []
    assert model.agreement_.all_agree and model.agreement_.agreeing_chains == list(range(8))
    assert model.agreement_.verdict == "2 of 2 topics reproduced by all 8 chains"
    assert reports.chains_disagree(model.idata_) is None
    assert "-> chains agree" in lda_spec.report(model.idata_)
    assert np.all(model.agreement_.rhat < RHAT_LIMIT)


# ----------------------------------------------------------------------------- mixtures and the Gaussian mixture
def _unigram_idata(beta_per_chain, lp_means):
    """What the runner returns for a ``keep_draws=False`` unigram mixture (4 documents)."""
    kernel = mixtures.unigrams_collapsed(2, keep_draws=False)
    data = mixtures.unigram_data(Corpus.from_token_lists([["0", "0"], ["0", "1"], ["2", "2"], ["2", "1"]],
                                                         vocab=["0", "1", "2"]))
    rng = np.random.default_rng(0)
    chains = len(beta_per_chain)
    probs = np.array([[0.9, 0.1]] * 2 + [[0.2, 0.8]] * 2)
    noise = rng.normal(0, 1, size=(1, 400))  # the same in every chain: R-hat ≈ 1 where the means agree
    idata = to_inference_data(
        {"pi": 0.5 + 0.02 * np.repeat(noise, chains, 0)[..., None] * np.array([1.0, -1.0])},
        sample_stats={"lp": noise + np.asarray(lp_means)[:, None]},
        posterior_mean={"beta": np.asarray(beta_per_chain), "doc_probs": np.stack([probs] * chains)},
        dims=kernel.dims, coords=kernel.coords(data))
    return kernel, data, idata


def test_mixture_agreement_group_report_and_estimates_from_one_mode():
    from gibbsjax.config import get_spec

    beta = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    other = np.array([[0.05, 0.9, 0.05], [0.05, 0.9, 0.05]])  # chain 2: another mode (all "1")
    spec = get_spec("mixtures.unigrams_collapsed")
    kernel, data, idata = _unigram_idata([beta, beta[::-1], other], [-10.0, -11.0, -30.0])
    out = spec.postprocess(idata, kernel, data, {})
    ag = out.agreement
    assert ag.attrs["component_dim"] == "cluster" and ag["distance"].dims == ("cluster", "chain", "other_chain")
    assert ag.attrs["reference_chain"] == 0 and json.loads(ag.attrs["agreeing_chains"]) == [0, 1]
    assert ag.attrs["verdict"] == "0 of 2 clusters reproduced by all 3 chains"
    # the chains are aligned first: chain 1 (listed in the other order) reproduces both clusters
    assert ag["distance_to_reference"].values[1].max() < 1e-6
    # estimates: the mean of the agreeing chains 0 and 1, not a blend with chain 2
    np.testing.assert_allclose(out.estimates["beta_mean"].values, beta, atol=1e-6)
    assert json.loads(out.estimates.attrs["estimate_chains"]) == [0, 1]
    text = spec.report(out)
    assert "agreement: 0 of 2 clusters reproduced by all 3 chains" in text and "chains disagree" in text
    assert "R-hat" in text
    # chains that agree: every chain is used, and the report says they agree
    kernel, data, idata = _unigram_idata([beta, beta[::-1]], [-10.0, -10.0])
    out = spec.postprocess(idata, kernel, data, {})
    assert out.agreement.attrs["verdict"] == "2 of 2 clusters reproduced by all 2 chains"
    assert json.loads(out.estimates.attrs["estimate_chains"]) == [0, 1]
    assert "-> chains agree" in spec.report(out)


def test_bernoulli_mixture_uses_the_bernoulli_distance():
    from gibbsjax.specs.one_label import one_label_postprocess

    p = np.array([[0.8, 0.1, 0.6], [0.2, 0.7, 0.1]])
    q = np.array([[0.7, 0.2, 0.6], [0.2, 0.7, 0.3]])
    x = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 0], [0, 1, 1]])
    data = mixtures.bernoulli_data(x)
    rng = np.random.default_rng(1)
    idata = to_inference_data(
        {"pi": 0.5 + rng.normal(0, 0.02, size=(2, 30, 2)),
         "p": np.broadcast_to(np.stack([p, q])[:, None], (2, 30, 2, 3)).copy(),
         "doc_probs": np.full((2, 30, 4, 2), 0.5)},
        sample_stats={"lp": rng.normal(0, 1, size=(2, 30))},
        dims={"pi": ["cluster"], "p": ["cluster", "feature"], "doc_probs": ["document", "cluster"]})
    out = one_label_postprocess(idata, data, align=True)
    expected = chain_agreement(np.stack([p, q]), distance="bernoulli").distance
    np.testing.assert_allclose(out.agreement["distance"].values, expected, atol=1e-6)


def _gmm_idata(mu, sigma, lp_means):
    """Hand-made Gaussian-mixture draws: constant per chain plus a little noise."""
    rng = np.random.default_rng(2)
    chains, k = np.shape(mu)
    noise = lambda: np.repeat(rng.normal(0, 1e-3, size=(1, 400, k)), chains, 0)  # noqa: E731
    return to_inference_data(
        {"weights": 0.5 + noise(), "mu": np.asarray(mu)[:, None, :] + noise(),
         "sigma": np.asarray(sigma)[:, None, :] + noise()},
        sample_stats={"lp": 1e3 * noise()[..., 0] + np.asarray(lp_means)[:, None]},
        dims={"weights": ["component"], "mu": ["component"], "sigma": ["component"]})


def test_gaussian_mixture_agreement_uses_the_normal_hellinger_distance():
    mu = [[2.0, 4.3], [4.3, 2.0], [2.0, 3.0]]      # chain 1: swapped labels; chain 2: another mode
    sigma = [[0.25, 0.4], [0.4, 0.25], [0.25, 1.2]]
    out = gm_spec.postprocess(_gmm_idata(mu, sigma, [-5.0, -6.0, -40.0]))
    ag = out.agreement
    assert ag.attrs["component_dim"] == "component" and ag.attrs["reference_chain"] == 0
    assert json.loads(ag.attrs["agreeing_chains"]) == [0, 1]
    # chain 2's second component against chain 0's: N(3, 1.2²) vs N(4.3, 0.4²), closed form
    m = out.posterior["mu"].mean("draw").values
    s = out.posterior["sigma"].mean("draw").values
    k = int(np.argmax(m[0]))
    v = s[0, k] ** 2 + s[2, k] ** 2
    bc = np.sqrt(2 * s[0, k] * s[2, k] / v) * np.exp(-((m[0, k] - m[2, k]) ** 2) / (4 * v))
    assert float(ag["distance"].values[k, 0, 2]) == pytest.approx(np.sqrt(1 - bc), abs=1e-5)
    assert ag.attrs["verdict"] == "1 of 2 components reproduced by all 3 chains"
    # estimates from chains 0 and 1 (aligned), not blended with chain 2
    np.testing.assert_allclose(np.sort(out.estimates["mu_mean"].values), [2.0, 4.3], atol=1e-3)
    text = gm_spec.report(out)
    assert "agreement: 1 of 2 components reproduced by all 3 chains" in text and "chains disagree" in text
    assert "chains 0, 1" in text
    agree = gm_spec.postprocess(_gmm_idata(mu[:2], sigma[:2], [-5.0, -5.0]))
    assert agree.agreement.attrs["verdict"] == "2 of 2 components reproduced by all 2 chains"
    assert "-> chains agree" in gm_spec.report(agree)


def test_one_chain_has_nothing_to_compare():
    idata, modes, corpus = _two_mode_lda_idata(0)
    one = idata.isel(chain=[0])
    out = lda_spec.postprocess(one, None, None, {"corpus": corpus, "hyperparameters": {"alpha": 0.1}})
    assert out.agreement.attrs["verdict"] == "one chain: nothing to compare its 2 topics with"
    assert np.isnan(out.agreement["rhat"].values).all()
    np.testing.assert_allclose(out.topics["topic_word"].values, modes[0])
    assert reports.chains_disagree(out) is None
    text = lda_spec.report(out)
    assert "one chain" in text and "chains disagree" not in text


def test_lda_report_refuses_a_result_that_is_not_lda():
    with pytest.raises(ValueError, match="not an LDA result"):
        lda_spec.report(to_inference_data({"x": np.zeros((2, 10))}))


def test_many_chains_store_distances_to_the_reference_only():
    """Beyond PAIRWISE_MAX_CHAINS chains, K x chains distances (not K x chains^2), the same verdict."""
    from gibbsjax.agreement import PAIRWISE_MAX_CHAINS, Agreement, chain_agreement

    rng = np.random.default_rng(3)
    n = PAIRWISE_MAX_CHAINS + 36
    est = rng.dirichlet(np.ones(5), size=(n, 3))
    lp = rng.normal(size=n)
    a = chain_agreement(est, lp=lp, component_name="topic")
    ref = int(np.argmax(lp))
    assert a.distance.shape == (3, n, 1) and a.other_chains == (ref,)
    direct = np.sqrt(np.clip(1 - np.sqrt(est * est[ref][None]).sum(-1), 0, 1))  # (chain, K), by definition
    np.testing.assert_allclose(a.distance_to_reference, direct, atol=1e-7)  # sqrt of rounding at 0
    small = chain_agreement(est[:PAIRWISE_MAX_CHAINS], lp=lp[:PAIRWISE_MAX_CHAINS], component_name="topic")
    assert small.distance.shape == (3, PAIRWISE_MAX_CHAINS, PAIRWISE_MAX_CHAINS)
    back = Agreement.from_dataset(a.to_dataset("topic"))
    assert back.other_chains == (ref,) and back.verdict == a.verdict
    np.testing.assert_allclose(back.distance_to_reference, a.distance_to_reference, atol=1e-6)


def test_verdict_line_says_which_case_in_one_line():
    """The report's one verdict line follows the one decision (:func:`reports.chains_disagree`):
    agree; same components, not mixed (lp apart); different modes (a component some chain lacks)."""
    from gibbsjax.agreement import add_agreement

    x = np.random.default_rng(3).normal(size=(4, 400, 2))

    def result(shift):  # a new InferenceData each time (add_agreement adds its group in place)
        return to_inference_data({"m": x}, dims={"m": ["topic"]},
                                 sample_stats={"lp": x[..., 0] + shift * np.arange(4)[:, None]})

    same = np.tile([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]], (4, 1, 1))
    modes = same.copy()
    modes[:2, 0] = [0.05, 0.9, 0.05]  # chains 0 and 1 lack chain 3's first topic
    cases = {}
    for name, shift, topics in (("agree", 0, same), ("not mixed", 3, same), ("modes", 3, modes)):
        cases[name], _ = add_agreement(result(shift), topics, "topic", rhat_vars=["m"])
    apart = result(3)
    assert reports.chains_disagree(cases["agree"]) is None
    assert reports.verdict_line(cases["agree"]) == "-> chains agree"
    line = reports.verdict_line(cases["not mixed"])
    assert reports.chains_disagree(cases["not mixed"]) is not None
    assert line == "-> chains disagree: they find the same topics but have not mixed yet; run longer"
    line = reports.verdict_line(cases["modes"])
    assert line.startswith("-> chains disagree: they sit in different modes")
    assert line.endswith("; rely on the topics every chain reproduces") and "\n" not in line
    assert reports.verdict_line(cases["modes"], rely_on="the stable topics above").endswith(
        "rely on the stable topics above")
    assert reports.verdict_line(apart).startswith("-> chains disagree: R-hat of lp ")  # no agreement group
    assert reports.verdict_line(apart.isel(chain=[0])) is None  # one chain: nothing to compare
