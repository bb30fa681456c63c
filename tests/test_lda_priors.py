"""LDA with learned priors: the slice sampler, the accurate log Γ differences, Geweke tests of
the α/η updates (with wrong variants that must fail), Minka's fixed point against an
independent optimiser, and the API (states, records, bad input)."""

from __future__ import annotations

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import gammaln as sp_gammaln

import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import priors as lda_priors
from gibbsjax.testing import chi_square_test, geweke_test
from gibbsjax.specs import lda as lda_spec

K = 2
ALPHA_PRIOR = (2.0, 2.0)  # shape 2: a missing Jacobian (shape 2 -> 1) halves the mean
ETA_PRIOR = (2.0, 3.0)
GEWEKE_DOCS = [["a", "b"], ["b", "c", "c"], ["a", "c"]]


def _geweke_data():
    return lda.data(Corpus.from_token_lists(GEWEKE_DOCS, vocab=["a", "b", "c"]))


# ----------------------------------------------------------------------------- log Γ differences
RELATIVE_STEPS = (-0.999, -0.9, -0.1, -1e-3, 1e-4, 0.02, 1.5, 40.0, 3000.0)


@pytest.mark.parametrize("a0", [1e-3, 0.05, 1.46, 12.0, 300.0])
def test_log_rising_shift_matches_a_float64_reference(a0):
    """[log Γ(n + a) − log Γ(a)] − [log Γ(n + a0) − log Γ(a0)] in float32 against scipy in float64."""
    n = np.array([0, 1, 2, 3, 7, 8, 9, 20, 150, 2_000, 60_000, 1_000_000])
    a0 = np.float32(a0)
    lg = jax.scipy.special.gammaln
    for rel in RELATIVE_STEPS:
        delta = np.float32(a0 * rel)
        a_exact = np.float64(a0) + np.float64(delta)  # a = a0 + δ, the reference's a
        a = np.float32(a_exact)
        got = np.asarray(lda_priors.log_rising_shift(jnp.asarray(n), jnp.asarray(a0), jnp.asarray(delta),
                                                     jnp.asarray(a)), np.float64)
        a0_64 = np.float64(a0)
        ref = sp_gammaln(n + a_exact) - sp_gammaln(a_exact) - sp_gammaln(n + a0_64) + sp_gammaln(a0_64)
        # float32 rounding (~16 ulp) of the terms summed: the result, log(a/a0), and δ log n from the Stirling part
        scale = np.abs(ref) + np.abs(np.log(a_exact / a0_64)) + np.abs(np.float64(delta)) * np.log1p(n)
        tol = 1e-8 + 2e-6 * scale
        assert np.all(np.abs(got - ref) <= tol), (rel, float(np.max(np.abs(got - ref) / tol)))
        assert got[0] == 0
        if rel == 1e-4:  # the naive float32 form (differences of large log Γ) misses that by far
            naive = np.asarray(lg(jnp.float32(n) + a) - lg(a) - lg(jnp.float32(n) + a0) + lg(a0), np.float64)
            assert np.max(np.abs(naive - ref) / tol) > 100


@pytest.mark.parametrize("cap", [3, 40])
def test_count_summaries_give_the_sum_over_every_entry(cap):
    """Histograms of counts ≤ cap plus the list of larger counts: Σ over entries, per row and in all."""
    rng = np.random.default_rng(2)
    table = rng.geometric(0.15, size=(4, 30)) - 1  # counts 0..~60, rows are topics
    rows = np.repeat(np.arange(4), 30)
    max_big = int(table.sum()) // (cap + 1)
    summary = lda_priors.count_summary(jnp.asarray(table.ravel(), jnp.int32), jnp.asarray(rows, jnp.int32), 4, cap,
                                       max_big)
    a0, delta = np.float32(0.3), np.float32(0.05)
    a = np.float32(0.35)

    def exact(n):
        return sp_gammaln(n + 0.35) - sp_gammaln(0.35) - sp_gammaln(n + 0.3) + sp_gammaln(0.3)

    for row in (None, 0, 3):
        counts = table.ravel() if row is None else table[row]
        got = float(lda_priors.rising_sum((*lda_priors.summary_terms(summary, row), a0, delta, a)))
        assert got == pytest.approx(exact(counts).sum(), rel=1e-5), row


# ----------------------------------------------------------------------------- the slice sampler
SHAPE, RATE = 0.7, 2.0  # u = log α, α ~ Gamma(0.7, rate 2): density ∝ exp(0.7 u − 2 e^u)


def _log_target(u):
    return SHAPE * u - RATE * jnp.exp(u)


def _slice_chains(log_density, u_start, num_steps, seed, **caps):
    def chain(key, u):
        def body(u, t):
            ratio = lambda x, u0=u: log_density(x) - log_density(u0)  # noqa: E731
            return lda.slice_sample(jax.random.fold_in(key, t), u, ratio, **caps), None
        u, _ = jax.lax.scan(body, u, jnp.arange(num_steps))
        return u

    keys = jax.random.split(jax.random.key(seed), u_start.shape[0])
    return np.asarray(jax.jit(jax.vmap(chain))(keys, u_start))


def _binned(u, num_bins=20):
    """Counts of e^u in equiprobable bins of Gamma(SHAPE, RATE), from the exact quantiles."""
    edges = stats.gamma.ppf(np.linspace(0, 1, num_bins + 1)[1:-1], SHAPE, scale=1 / RATE)
    return np.bincount(np.searchsorted(edges, np.exp(u)), minlength=num_bins), np.full(num_bins, 1 / num_bins)


@pytest.mark.parametrize("caps", [dict(), dict(width=0.2, max_steps_out=1, max_shrinks=1),
                                  dict(width=5.0, max_steps_out=2, max_shrinks=2)])
def test_slice_sampler_keeps_an_exact_start_exact_even_with_tight_bounds(caps):
    """Chains started at exact draws stay exact after bounded transitions (tight bounds bind often)."""
    start = np.log(stats.gamma.rvs(SHAPE, scale=1 / RATE, size=20_000, random_state=1)).astype(np.float32)
    u = _slice_chains(_log_target, jnp.asarray(start), 4, seed=2, **caps)
    assert not np.allclose(u, start)  # it moved
    assert chi_square_test(*_binned(u)).p_value > 1e-4


def test_slice_sampler_converges_from_a_bad_start():
    u = _slice_chains(_log_target, jnp.full(20_000, 4.0, jnp.float32), 30, seed=3)
    assert chi_square_test(*_binned(u)).p_value > 1e-4


def test_slice_invariance_test_has_power():
    """The same test flags a target that misses the Jacobian of u = log α."""
    start = np.log(stats.gamma.rvs(SHAPE, scale=1 / RATE, size=20_000, random_state=1)).astype(np.float32)
    u = _slice_chains(lambda x: (SHAPE - 1) * x - RATE * jnp.exp(x), jnp.asarray(start), 4, seed=2)
    assert chi_square_test(*_binned(u)).p_value < 1e-4


# ----------------------------------------------------------------------------- Geweke
def _test_functions(priors: lda.LearnedPriors):
    def lp(s, d):
        return lda.log_joint_learned(s, d, K=K, priors=priors)

    def first_topic_share(s, d):
        return jnp.sum((s.z == 0) * d.mask) / jnp.sum(d.mask)

    def topics_per_doc(s, d):  # small when α is small: couples α with z
        ndk, _, _ = lda.topic_counts(s.z, d, K)
        return jnp.mean(jnp.sum(ndk[:-1] > 0, axis=1))

    def words_per_topic(s, d):  # couples η with z and w
        _, nkw, _ = lda.topic_counts(s.z, d, K)
        return jnp.sum(nkw > 0) / K

    fns = {
        "lp": lp,
        "phi": lambda s, d: jnp.exp(s.log_phi),
        "share0": first_topic_share,
        "topics_per_doc": topics_per_doc,
        "words_per_topic": words_per_topic,
        "word0": lambda s, d: jnp.sum((d.words == 0) * d.mask) / jnp.sum(d.mask),
    }
    if priors.alpha == "sample":
        fns |= {"alpha": lambda s, d: jnp.exp(s.log_alpha), "log_alpha": lambda s, d: s.log_alpha,
                "alpha^2": lambda s, d: jnp.exp(2 * s.log_alpha),
                "alpha/(1+alpha)": lambda s, d: jax.nn.sigmoid(s.log_alpha),  # bounded: heavy tails cannot hide a shift
                "alpha_x_topics": lambda s, d: jnp.sum(jnp.exp(s.log_alpha)) * topics_per_doc(s, d)}
    if priors.eta:
        fns |= {"eta": lambda s, d: jnp.exp(s.log_eta), "log_eta": lambda s, d: s.log_eta,
                "eta^2": lambda s, d: jnp.exp(2 * s.log_eta),
                "eta/(1+eta)": lambda s, d: jax.nn.sigmoid(s.log_eta),
                "eta_x_words": lambda s, d: jnp.exp(s.log_eta) * words_per_topic(s, d)}
    return fns


def _learned(sampler="partially_collapsed", **kw):
    options = dict(learn_alpha="sample", learn_eta=True, alpha_prior=ALPHA_PRIOR, eta_prior=ETA_PRIOR)
    options.update(kw)
    if sampler == "partially_collapsed":
        options["z_update"] = "dense"
    return lda.SAMPLERS[sampler](K, **options)


def _geweke(kernel, priors, seed=11, **kw):
    kw.setdefault("num_chains", 1000)
    kw.setdefault("num_steps", 40)
    return geweke_test(kernel, _geweke_data(), _test_functions(priors), seed=seed, **kw)


@pytest.mark.parametrize("sampler,asymmetric", [
    ("partially_collapsed", True),
    pytest.param("partially_collapsed", False, marks=pytest.mark.slow),
    pytest.param("collapsed", False, marks=pytest.mark.slow)])  # all six, longer: test_geweke_long (slow)
def test_geweke_alpha_and_eta_from_their_hyperprior(sampler, asymmetric):
    kernel = _learned(sampler, asymmetric_alpha=asymmetric)
    priors = lda.learned_priors("sample", asymmetric, True, ALPHA_PRIOR, ETA_PRIOR)
    _geweke(kernel, priors).assert_passes()


def _alpha_without_jacobian(key, s, d):
    """WRONG: the gamma density of α used as the density of log α (no Jacobian e^u)."""
    ndk, _, _ = lda.topic_counts(s.z, d, K)
    nd = d.doc_lengths.astype(jnp.float32)
    shape, rate = ALPHA_PRIOR

    def log_p(u):  # symmetric α, written out directly
        a = jnp.exp(u)
        like = jnp.sum(jax.scipy.special.gammaln(ndk[:-1] + a) - jax.scipy.special.gammaln(a))
        like += jnp.sum(jax.scipy.special.gammaln(K * a) - jax.scipy.special.gammaln(nd + K * a))
        return (shape - 1) * u - rate * a + like

    return lda.slice_sample(key, s.log_alpha, lambda u: log_p(u) - log_p(s.log_alpha))


def _eta_without_hyperprior(key, s, d):
    """WRONG: η's conditional without its hyperprior (a flat prior on log η)."""
    _, nkw, nk = lda.topic_counts(s.z, d, K)
    v = d.word_counts.shape[0]

    def log_p(u):
        e = jnp.exp(u)
        like = jnp.sum(jax.scipy.special.gammaln(nkw + e) - jax.scipy.special.gammaln(e))
        return like + jnp.sum(jax.scipy.special.gammaln(v * e) - jax.scipy.special.gammaln(nk + v * e))

    return lda.slice_sample(key, s.log_eta, lambda u: log_p(u) - log_p(s.log_eta))


def _phi_given_state(key, s, d):
    return lda.sample_log_phi(key, s, d, K=K, eta=jnp.exp(s.log_eta))


def _z_given_state(key, s, d):
    return lda.sample_z_partially_collapsed(key, s, d, K=K, alpha=jnp.exp(s.log_alpha))


_ALPHA = ("log_alpha", functools.partial(lda.sample_log_alpha, K=K, prior=ALPHA_PRIOR))
_ETA = ("log_eta", functools.partial(lda.sample_log_eta, K=K, prior=ETA_PRIOR))
WRONG_SWEEPS = {
    "alpha without Jacobian": sweep(_ETA, ("log_phi", _phi_given_state), ("z", _z_given_state),
                                    ("log_alpha", _alpha_without_jacobian)),
    "eta without hyperprior": sweep(("log_eta", _eta_without_hyperprior), ("log_phi", _phi_given_state),
                                    ("z", _z_given_state), _ALPHA),
    # η | z (φ integrated out) AFTER φ | z, η: the old φ stays with the new η, not a blocked draw
    "phi before eta": sweep(("log_phi", _phi_given_state), _ETA, ("z", _z_given_state), _ALPHA),
}


@pytest.mark.slow  # each wrong variant must be flagged (the power of the default test_geweke_alpha_and_eta...)
@pytest.mark.parametrize("variant", sorted(WRONG_SWEEPS))
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # a wrong η may run off to inf
def test_geweke_flags_wrong_alpha_eta_updates(variant):
    kernel = _learned()
    priors = lda.learned_priors("sample", False, True, ALPHA_PRIOR, ETA_PRIOR)
    result = _geweke(kernel._replace(step=WRONG_SWEEPS[variant]), priors)
    assert not result.passed, variant


@pytest.mark.slow
def test_the_library_sweep_written_out_passes_the_same_geweke_test():
    """The right order with the library's conditionals (what the wrong variants change)."""
    kernel = _learned()
    priors = lda.learned_priors("sample", False, True, ALPHA_PRIOR, ETA_PRIOR)
    step = sweep(_ETA, ("log_phi", _phi_given_state), ("z", _z_given_state), _ALPHA)
    _geweke(kernel._replace(step=step), priors).assert_passes()


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["partially_collapsed", "collapsed", "uncollapsed"])
@pytest.mark.parametrize("asymmetric", [False, True])
def test_geweke_long(sampler, asymmetric):
    kernel = _learned(sampler, asymmetric_alpha=asymmetric)
    priors = lda.learned_priors("sample", asymmetric, True, ALPHA_PRIOR, ETA_PRIOR)
    _geweke(kernel, priors, seed=5, num_chains=4000, num_steps=100).assert_passes()


# ----------------------------------------------------------------------------- Minka's fixed point
def _polya_mle(ndk, nd, symmetric):
    """argmax_α Σ_d log DirMult(n_d | α), float64, by L-BFGS on log α (independent of the library)."""
    k = ndk.shape[1]

    def neg(log_a):
        a = np.exp(np.broadcast_to(log_a, (k,)))
        total = a.sum()
        return -(np.sum(sp_gammaln(ndk + a) - sp_gammaln(a)) + np.sum(sp_gammaln(total) - sp_gammaln(nd + total)))

    x0 = np.zeros(1 if symmetric else k)
    res = optimize.minimize(neg, x0, method="L-BFGS-B", options=dict(ftol=1e-14, gtol=1e-10, maxiter=5000))
    return np.exp(res.x)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_minka_fixed_point_reaches_the_dirichlet_multinomial_mle(asymmetric):
    rng = np.random.default_rng(0)
    k, docs = 4, 60
    true_alpha = np.array([0.3, 0.8, 0.15, 1.5])
    lengths = rng.integers(5, 40, size=docs)
    token_lists, topics = [], []
    for n in lengths:
        theta = rng.dirichlet(true_alpha)
        topics.append(rng.choice(k, size=n, p=theta))
        token_lists.append([f"w{i}" for i in rng.integers(0, 10, size=n)])
    corpus = Corpus.from_token_lists(token_lists)
    d = lda.data(corpus)
    z = np.zeros(d.words.shape, np.int32)
    # place the chosen topics in the grid: tokens_in_corpus_order's inverse by position
    flat_positions = lda.layout.tokens_in_corpus_order(d, np.arange(z.size).reshape(z.shape))
    z.reshape(-1)[flat_positions] = np.concatenate(topics)
    kernel = lda.partially_collapsed(k, alpha=1.0, learn_alpha="minka", asymmetric_alpha=asymmetric)
    state = kernel.init(jax.random.key(0), d)._replace(z=jnp.asarray(z))
    ndk = np.stack([np.bincount(t, minlength=k) for t in topics])
    np.testing.assert_array_equal(np.asarray(lda.topic_counts(state.z, d, k)[0])[:-1], ndk)
    log_alpha = lda.minka_log_alpha(None, state, d, K=k, iterations=2000)
    expected = _polya_mle(ndk.astype(float), lengths.astype(float), symmetric=not asymmetric)
    np.testing.assert_allclose(np.exp(np.asarray(log_alpha, np.float64)), expected.reshape(np.shape(log_alpha)),
                               rtol=2e-3)


# ----------------------------------------------------------------------------- API
def test_fixed_priors_keep_the_old_state_and_kernel():
    d = _geweke_data()
    base = lda.partially_collapsed(K)
    assert lda.partially_collapsed(K, learn_alpha="fixed", learn_eta=False) is base
    assert type(base.init(jax.random.key(0), d)) is lda.LDAState


@pytest.mark.parametrize("sampler", sorted(lda.SAMPLERS))
def test_learned_state_records_and_dims(sampler):
    d = _geweke_data()
    kernel = lda.SAMPLERS[sampler](3, alpha=0.5, eta=0.2, learn_alpha="sample", asymmetric_alpha=True,
                                   learn_eta=True)
    s = kernel.init(jax.random.key(0), d)
    assert type(s) is lda.LDALearnedState
    np.testing.assert_allclose(np.exp(np.asarray(s.log_alpha)), [0.5] * 3, rtol=1e-6)
    np.testing.assert_allclose(float(np.exp(s.log_eta)), 0.2, rtol=1e-6)
    s2 = kernel.step(jax.random.key(1), s, d)
    assert jax.tree_util.tree_structure(s2) == jax.tree_util.tree_structure(s)
    rec = kernel.record(s2, d)
    assert rec["alpha"].shape == (3,) and rec["eta"].shape == ()
    assert kernel.dims["alpha"] == ("topic",) and kernel.dims["eta"] == ()
    assert set(kernel.accumulate(s2, d)) == {"topic_word", "doc_topic", "alpha", "eta"}
    np.testing.assert_allclose(np.asarray(kernel.accumulate(s2, d)["doc_topic"]).sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("kwargs,match", [
    (dict(learn_alpha="maybe"), "learn_alpha"),
    (dict(asymmetric_alpha=True), "asymmetric_alpha"),
    (dict(learn_eta="yes"), "learn_eta"),
    (dict(learn_alpha="sample", alpha_prior=(0.0, 1.0)), "alpha_prior"),
    (dict(learn_eta=True, eta_prior="flat"), "eta_prior"),
    (dict(learn_eta=True, eta_prior=(1.0, 2.0, 3.0)), "eta_prior"),
    (dict(learn_alpha="sample", z_update="pallas"), "pallas"),
])
def test_bad_prior_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lda.partially_collapsed(3, **kwargs)


@pytest.fixture(scope="module")
def small_run():
    """One short run with α per topic and η learned, on a small corpus with held-out documents."""
    rng = np.random.default_rng(1)
    docs = [[f"w{i}" for i in rng.integers(0, 12, size=rng.integers(4, 12))] for _ in range(30)]
    train, test = Corpus.from_token_lists(docs).split(0.2, seed=0)
    d = lda.data(train)
    kernel = lda.partially_collapsed(3, learn_alpha="sample", asymmetric_alpha=True, learn_eta=True,
                                     z_update="dense", warmup="exact")
    settings = dict(seed=3, num_chains=2, num_warmup=10, progress=False)
    return kernel, d, train, test, gibbsjax.sample(kernel, d, num_draws=16, **settings), settings


def test_a_run_records_alpha_and_eta_with_rhat_and_resumes(small_run):
    kernel, d, _, _, full, settings = small_run
    assert full.posterior["alpha"].dims == ("chain", "draw", "topic") and full.posterior["alpha"].shape == (2, 16, 3)
    assert full.posterior["eta"].shape == (2, 16)
    summary = gibbsjax.summary(full)
    assert np.isfinite(summary.loc["eta", "r_hat"]) and np.all(np.isfinite(summary.loc[
        [f"alpha[{k}]" for k in range(3)], "r_hat"]))
    first = gibbsjax.sample(kernel, d, num_draws=8, **settings)
    resumed = gibbsjax.resume(first, kernel, d, num_draws=8, progress=False)
    for name in ("alpha", "eta", "topic_share"):
        np.testing.assert_array_equal(resumed.posterior[name].values, full.posterior[name].values)


def test_heldout_perplexity_takes_one_alpha_per_topic():
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.ones(6), size=3)
    X = rng.integers(0, 4, size=(8, 6))
    same = lda.heldout_perplexity(phi, X, alpha=0.3, num_sweeps=20, num_burn=5)
    vector = lda.heldout_perplexity(phi, X, alpha=[0.3, 0.3, 0.3], num_sweeps=20, num_burn=5)
    np.testing.assert_allclose(vector, same, rtol=1e-5)
    # a prior that puts the mass on topic 0 changes the completion
    skewed = lda.heldout_perplexity(phi, X, alpha=[5.0, 0.01, 0.01], num_sweeps=20, num_burn=5)
    assert abs(skewed - same) > 1e-3 * same
    with pytest.raises(ValueError, match="alpha"):
        lda.heldout_perplexity(phi, X, alpha=[0.3, 0.3])


def test_postprocess_reports_the_learned_priors_and_scores_with_them(small_run):
    kernel, d, train, test, idata, _ = small_run
    extras = {"corpus": train, "heldout": test, "hyperparameters": {"alpha": 0.1}, "chains": "best"}
    out = lda_spec.postprocess(idata.copy(), kernel, d, extras)
    attrs = out.topics.attrs
    chains = json.loads(attrs["estimate_chains"])
    alpha = out.posterior_mean["alpha"].isel(chain=chains).mean("chain").values
    np.testing.assert_allclose(json.loads(attrs["learned_alpha"]), alpha, atol=1e-6)
    assert np.isfinite(json.loads(attrs["learned_eta"]))
    phi = out.topics["topic_word"].values
    assert attrs["heldout_perplexity"] == pytest.approx(lda.heldout_perplexity(phi, test, alpha=alpha))
    assert "learned priors (posterior means): alpha = [" in lda_spec.report(out)
