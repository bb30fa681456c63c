"""ArviZ as ArviZ users expect: ``lp`` only in ``sample_stats``; a pointwise ``log_likelihood`` group
and an ``observed_data`` group, so ``az.loo``, ``az.waic`` and ``az.compare`` work on results; the
opt-out (``log_likelihood=False``) and the memory it saves."""

from __future__ import annotations

import warnings

import arviz as az
import jax
import numpy as np
import pytest
from scipy import stats

import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.models import eight_schools, lda, normal
from gibbsjax.models.lda.layout import tokens_in_corpus_order
from gibbsjax.run.placement import estimate_result_bytes
from gibbsjax.run.settings import Settings

RUN = dict(num_chains=2, num_warmup=50, num_draws=200, progress=False)


@pytest.fixture(scope="module")
def temperatures():
    return np.random.default_rng(3).normal(98.2, 0.7, size=40)


@pytest.fixture(scope="module")
def two_normal_fits(temperatures):
    """Two models of the same data: a prior near the data, and one far from it."""
    data = normal.data(temperatures)
    near = gibbsjax.sample(normal.semiconjugate(), data, seed=0, **RUN)
    far = gibbsjax.sample(normal.semiconjugate(mu0=95.0, sigma0=0.05), data, seed=0, **RUN)
    return near, far


def test_lp_is_a_sample_stat_not_a_posterior_variable(two_normal_fits):
    near, _ = two_normal_fits
    assert "lp" not in near.posterior
    assert "lp" in near.sample_stats
    assert "lp" not in az.summary(near).index  # ArviZ's own table: parameters only
    assert "lp" in gibbsjax.summary(near).index  # ours adds the diagnostic row


def test_log_likelihood_matches_scipy_for_one_draw(two_normal_fits, temperatures):
    near, _ = two_normal_fits
    ll = near.log_likelihood["y"]
    assert ll.dims == ("chain", "draw", "observation") and ll.shape == (2, 200, temperatures.size)
    chain, draw = 1, 17
    mu = float(near.posterior["mu"].values[chain, draw])
    sigma2 = float(near.posterior["sigma2"].values[chain, draw])
    expected = stats.norm.logpdf(temperatures, loc=mu, scale=np.sqrt(sigma2))
    np.testing.assert_allclose(ll.values[chain, draw], expected, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(near.observed_data["y"].values, temperatures, rtol=1e-6)


def test_loo_waic_and_compare_on_two_models_of_the_same_data(two_normal_fits):
    near, far = two_normal_fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Pareto k of the badly fitting prior
        loo = az.loo(near)
        assert np.isfinite(loo.elpd_loo) and loo.n_data_points == 40
        assert np.isfinite(az.waic(near).elpd_waic)
        table = az.compare({"near": near, "far": far})
    # the prior 4 units from the data (sd 0.05) fits it far worse: ranked second, by many SEs
    assert list(table.index) == ["near", "far"]
    assert table.loc["far", "elpd_diff"] > 5 * table.loc["far", "dse"]


def test_opt_out_leaves_the_groups_out_and_the_memory_estimate_counts_them(temperatures):
    data = normal.data(temperatures)
    kernel = normal.semiconjugate()
    off = gibbsjax.sample(kernel, data, seed=0, log_likelihood=False, **RUN)
    assert "log_likelihood" not in off.groups() and "observed_data" not in off.groups()
    s = Settings(num_chains=3, num_draws=100)
    extra = estimate_result_bytes(kernel, data, s) - estimate_result_bytes(kernel, data,
                                                                           s.replace(log_likelihood=False))
    itemsize = np.dtype(data.y.dtype).itemsize
    assert extra == 3 * 100 * temperatures.size * itemsize  # chains x draws x observations x bytes


def test_the_memory_check_counts_the_log_likelihood(temperatures, monkeypatch):
    import gibbsjax.memory as memory
    from gibbsjax.run import check_memory

    monkeypatch.setattr(memory, "host_available_bytes", lambda: 2**60)
    data = normal.data(temperatures)
    s = Settings(num_chains=3, num_warmup=10, num_draws=100)
    on = check_memory(normal.semiconjugate(), data, s)
    off = check_memory(normal.semiconjugate(), data, s.replace(log_likelihood=False))
    # the kept draws, twice (the chunks and their concatenation): chains x draws x observations x bytes
    assert on.host_bytes - off.host_bytes == 2 * 3 * 100 * temperatures.size * np.dtype(data.y.dtype).itemsize


def test_a_config_can_opt_out(tmp_path):
    from gibbsjax import config as c

    with pytest.raises(ValueError, match="log_likelihood must be true or false"):
        Settings(log_likelihood="no")
    assert not c._parse_sampler({"log_likelihood": False}).log_likelihood


def test_resume_keeps_recording_the_log_likelihood(temperatures):
    data = normal.data(temperatures)
    kernel = normal.semiconjugate()
    whole = gibbsjax.sample(kernel, data, seed=4, num_chains=2, num_warmup=10, num_draws=30, progress=False)
    part = gibbsjax.sample(kernel, data, seed=4, num_chains=2, num_warmup=10, num_draws=10, progress=False)
    resumed = gibbsjax.resume(part, kernel, data, num_draws=20, progress=False)
    np.testing.assert_array_equal(resumed.log_likelihood["y"].values, whole.log_likelihood["y"].values)


def test_eight_schools_pointwise_log_likelihood():
    data = eight_schools.rubin_1981()
    idata = gibbsjax.sample(eight_schools.hierarchical(), data, seed=1, num_chains=2, num_warmup=20,
                            num_draws=20, progress=False)
    theta = idata.posterior["theta"].values[0, 5]
    expected = stats.norm.logpdf(np.asarray(data.y), loc=theta, scale=np.asarray(data.sigma))
    np.testing.assert_allclose(idata.log_likelihood["y"].values[0, 5], expected, rtol=1e-5, atol=1e-5)


def _lda_log_likelihood_by_hand(z, log_phi, words, docs, num_docs, K, alpha):
    """log p(w_d | theta_bar_d, phi) per document, with plain loops over numpy arrays."""
    out = np.zeros(num_docs)
    for d in range(num_docs):
        mine = docs == d
        n_dk = np.bincount(z[mine], minlength=K)
        theta = (n_dk + alpha) / (mine.sum() + K * alpha)
        out[d] = sum(np.log(np.dot(theta, np.exp(log_phi[:, w]))) for w in words[mine])
    return out


@pytest.mark.parametrize("bucket", [False, True])
def test_lda_per_document_log_likelihood_and_compare_over_k(bucket):
    rng = np.random.default_rng(0)
    docs = [[f"w{int(w)}" for w in rng.integers(0, 12, size=rng.integers(5, 15))] for _ in range(15)]
    corpus = Corpus.from_token_lists(docs)
    d = lda.data(corpus, bucket=bucket)
    fits = {K: gibbsjax.sample(lda.partially_collapsed(K), d, seed=2, num_chains=2, num_warmup=20,
                               num_draws=40, progress=False) for K in (2, 3)}
    idata = fits[2]
    assert "lp" not in idata.posterior
    assert idata.log_likelihood["w"].shape == (2, 40, corpus.num_docs)
    # one draw by hand: the last state of chain 1 is the last kept draw
    state = idata.sampler_state
    z = tokens_in_corpus_order(d, state["state__z"].values[1])
    log_phi = state["state__log_phi"].values[1]
    words = np.asarray(idata.observed_data["w"].values)
    doc_of = np.asarray(idata.observed_data["token_document"].values)
    np.testing.assert_array_equal(words, np.asarray(corpus.tokens))
    expected = _lda_log_likelihood_by_hand(z, log_phi.astype(np.float64), words, doc_of, corpus.num_docs, 2, 0.1)
    np.testing.assert_allclose(idata.log_likelihood["w"].values[1, -1], expected, rtol=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Pareto k: documents are few and short
        table = az.compare(fits)
    assert set(table.index) == {2, 3} and np.isfinite(table["elpd_loo"]).all()


def test_a_kernel_without_log_likelihood_has_neither_group():
    idata = gibbsjax.sample(normal.bivariate(0.5), seed=0, num_chains=2, num_warmup=5, num_draws=5,
                            progress=False)
    assert "log_likelihood" not in idata.groups() and "observed_data" not in idata.groups()
    assert "lp" not in idata.posterior and "lp" in idata.sample_stats


def test_interrupted_in_warmup_keeps_empty_log_likelihood_of_the_right_shape(temperatures):
    from gibbsjax.run.results import _no_draws, Run

    data = normal.data(temperatures)
    kernel = normal.semiconjugate()
    state = jax.vmap(kernel.init, in_axes=(0, None))(jax.random.split(jax.random.key(0), 2), data)
    run = Run(kernel, data, Settings(num_chains=2), None, state, {})
    _, _, ll = _no_draws(run)
    assert ll["y"].shape == (2, 0, temperatures.size)


@pytest.mark.parametrize("dim", [None, 2])
def test_gaussian_mixture_pointwise_log_likelihood(dim):
    from gibbsjax.models import gaussian_mixture as gm

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(-2, 1, size=(15, 2)), rng.normal(3, 0.5, size=(10, 2))])
    x = x[:, 0] if dim is None else x
    idata = gibbsjax.sample(gm.normal_gamma(2, dim=dim), gm.data(x), seed=0, num_chains=2, num_warmup=20,
                            num_draws=10, progress=False)
    ll = idata.log_likelihood["x"]
    assert ll.shape == (2, 10, 25)
    # one draw by hand: log sum_k w_k prod_d N(x_nd; mu_kd, sigma_kd)
    post = idata.raw_posterior if "raw_posterior" in idata.groups() else idata.posterior
    w, mu, sigma = (post[v].values[1, 3] for v in ("weights", "mu", "sigma"))
    mu, sigma, x2 = np.reshape(mu, (2, -1)), np.reshape(sigma, (2, -1)), np.reshape(x, (25, -1))
    dens = np.stack([stats.norm.logpdf(x2, mu[k], sigma[k]).sum(-1) for k in range(2)], axis=-1)
    expected = np.log(np.exp(dens) @ w)
    np.testing.assert_allclose(ll.values[1, 3], expected, rtol=1e-4, atol=1e-4)
    # the observations' sum is the recorded label-invariant log_lik
    np.testing.assert_allclose(ll.values.sum(-1), post["log_lik"].values, rtol=1e-4)
    np.testing.assert_array_equal(idata.observed_data["x"].values, np.asarray(gm.data(x).x))


def test_mixture_of_unigrams_per_document_log_likelihood():
    from scipy.special import logsumexp

    from gibbsjax.models import mixtures

    docs = [["a", "a", "b"], ["c", "c"], ["a", "b", "b", "a"], ["c", "d", "c"]] * 3
    corpus = Corpus.from_token_lists(docs)
    data = mixtures.unigram_data(corpus)
    idata = gibbsjax.sample(mixtures.unigrams(2), data, seed=0, num_chains=2, num_warmup=20, num_draws=10,
                            progress=False)
    ll = idata.log_likelihood["w"]
    assert ll.shape == (2, 10, len(docs))
    post = idata.raw_posterior if "raw_posterior" in idata.groups() else idata.posterior
    pi, beta = post["pi"].values[0, 7], post["beta"].values[0, 7]
    tokens, doc_ids = np.asarray(data.tokens), np.asarray(data.doc_ids)
    expected = [logsumexp(np.log(pi) + np.log(beta[:, tokens[doc_ids == d]]).sum(axis=1)) for d in range(len(docs))]
    np.testing.assert_allclose(ll.values[0, 7], expected, rtol=1e-4)
    np.testing.assert_array_equal(idata.observed_data["w"].values, tokens)


def test_hmm_per_sequence_log_likelihood_by_enumerating_paths():
    import itertools

    from gibbsjax.models import hmm

    sequences = [[0, 1, 1], [2], [1, 0]]
    data = hmm.categorical_data(sequences, num_symbols=3)
    idata = gibbsjax.sample(hmm.categorical(2), data, seed=0, num_chains=2, num_warmup=10, num_draws=5,
                            progress=False)
    ll = idata.log_likelihood["y"]
    assert ll.shape == (2, 5, 3)
    post = idata.posterior
    init, trans, emis = (post[v].values[1, 2].astype(np.float64) for v in ("initial", "transition", "emission"))
    expected = []
    for seq in sequences:  # p(y) = sum over every path of p(path) p(y | path)
        total = 0.0
        for path in itertools.product(range(2), repeat=len(seq)):
            p = init[path[0]] * emis[path[0], seq[0]]
            for t in range(1, len(seq)):
                p *= trans[path[t - 1], path[t]] * emis[path[t], seq[t]]
            total += p
        expected.append(np.log(total))
    np.testing.assert_allclose(ll.values[1, 2], expected, rtol=1e-4)
    np.testing.assert_array_equal(idata.observed_data["lengths"].values, [3, 1, 2])


def test_bernoulli_mixture_per_document_log_likelihood():
    from scipy.special import logsumexp

    from gibbsjax.models import mixtures

    features = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]] * 2)
    data = mixtures.bernoulli_data(features)
    idata = gibbsjax.sample(mixtures.bernoulli(2), data, seed=0, num_chains=2, num_warmup=10, num_draws=5,
                            progress=False)
    pi, p = idata.posterior["pi"].values[0, 4], idata.posterior["p"].values[0, 4].astype(np.float64)
    expected = [logsumexp(np.log(pi) + stats.bernoulli.logpmf(row, p).sum(axis=1)) for row in features]
    np.testing.assert_allclose(idata.log_likelihood["x"].values[0, 4], expected, rtol=1e-4)
