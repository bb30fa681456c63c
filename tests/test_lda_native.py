"""The native CPU kernels (``z_update="native"``, ``dirichlet_draw="native"``,
:mod:`gibbsjax.models.lda.native`): exactness, draws that depend on neither threads nor packing,
and the pure-XLA fallback.

* one z sweep from a fixed state and φ: each document's new topics against the exact transition
  probabilities Π_i p(z'_i | z'_<i, z_>i, φ), enumerated in float64 numpy (the independent code of
  tests/test_lda_sparse.py), for the dense form and the sparse form (several 32-topic blocks of the
  word table, the last one partial), symmetric and per-topic α;
* the whole sampler's visit frequencies against exact enumeration of p(z | w) (tests/test_lda.py),
  both forms;
* a planted wrong variant (the token's own topic kept in its document's count: n_dk instead of
  n_dk,−i) that both tests reject;
* the Dirichlet rows: every marginal of Dir(n + c) is Beta(n_j + c_j, Σ − n_j − c_j), checked by a
  Kolmogorov–Smirnov test against scipy's Beta, and the means and variances within Monte Carlo error;
* the same draws with 1 and 2 threads, for any packing, and as the XLA z-update's from the same
  uniforms (the dense form sums in another order only);
* Geweke's joint-distribution test (slow run; the default run checks the transition and the
  stationary distribution above).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from test_lda import ALPHA, ETA, K, TINY_DOCS, _lp_test_functions, _state_counts, exact_posterior, final_states
from test_lda_sparse import _exact_transition, draws_for_packings

import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import native, z_updates
from gibbsjax.testing import chi_square_test, geweke_test

pytestmark = pytest.mark.skipif(not native.available(),
                                reason=f"native kernels not built here: {native.unavailable_reason()}")

DOCS = [["a", "b", "c"], ["b", "c"], ["d"], ["c", "a", "d"]]
SHORT_DOCS = [["a", "b"], ["c"], ["d", "a"], ["b"]]  # for K = 40: 1,600 outcomes a document at most
VOCAB = ["a", "b", "c", "d"]
DENSE, SPARSE = 10**9, 1  # sparse_from: never, always


def _problem(k, seed, docs=DOCS):
    rng = np.random.default_rng(seed)
    d = lda.data(Corpus.from_token_lists(docs, vocab=VOCAB), num_lanes=2)
    z = jnp.asarray(rng.integers(0, k, size=d.words.shape) * np.asarray(d.mask), jnp.int32)
    log_phi = jnp.asarray(np.log(rng.dirichlet(np.full(len(VOCAB), 0.5), size=k)), jnp.float32)
    return d, lda.LDAState(z, log_phi)


def _sweep_p_values(k, alpha, *, sparse_from, keep_own=False, draws=20_000, seed=0, docs=DOCS):
    """Chi-square p-value per document of ``draws`` one-sweep z-updates from one fixed state."""
    d, state = _problem(k, seed, docs)
    f = functools.partial(native.sample_z_native, K=k, alpha=alpha, keep_own=keep_own, sparse_from=sparse_from)
    z = np.asarray(jax.jit(jax.vmap(lambda key: f(key, state, d)))(jax.random.split(jax.random.key(seed), draws)))
    words, docs_grid, mask = (np.asarray(a) for a in (d.words, d.docs, d.mask))
    phi = np.exp(np.asarray(state.log_phi, np.float64))
    z_old = np.asarray(state.z)
    p_values = []
    for doc in range(len(docs)):
        slots = np.nonzero((docs_grid == doc) & mask)
        probs = _exact_transition(words[slots], z_old[slots], phi, alpha)
        index = np.zeros(draws, np.int64)
        for z_i in z[:, slots[0], slots[1]].T:
            index = index * k + z_i
        p_values.append(chi_square_test(np.bincount(index, minlength=probs.size), probs).p_value)
    return np.array(p_values)


@pytest.mark.parametrize("k, alpha, sparse_from, docs", [
    (3, 0.3, DENSE, DOCS), (7, 0.5, DENSE, DOCS), (7, "asymmetric", DENSE, DOCS),
    (3, 0.3, SPARSE, DOCS), (7, "asymmetric", SPARSE, DOCS),
    (40, "asymmetric", SPARSE, SHORT_DOCS),  # two word-table blocks, the second one of 8 topics
])
def test_one_sweep_against_the_exact_transition(k, alpha, sparse_from, docs):
    if alpha == "asymmetric":
        alpha = jnp.asarray(np.linspace(0.05, 1.5, k), jnp.float32)
    p = _sweep_p_values(k, alpha, sparse_from=sparse_from, docs=docs)
    assert p.min() * p.size > 1e-4, p  # Bonferroni over the documents


@pytest.mark.parametrize("sparse_from", [DENSE, SPARSE])
def test_one_sweep_rejects_the_wrong_variant(sparse_from):
    p = _sweep_p_values(3, 0.3, sparse_from=sparse_from, keep_own=True)
    assert p.min() < 1e-6, p


def _native_kernel(k, alpha, eta, *, sparse_from=None, keep_own=False):
    """``partially_collapsed`` with the native z-update and Dirichlet draw (or a variant of them)."""
    base = lda.partially_collapsed(k, alpha=alpha, eta=eta, z_update="native", dirichlet_draw="native",
                                   warmup="exact")
    if sparse_from is None and not keep_own:
        return base
    z_update = functools.partial(native.sample_z_native, K=k, alpha=alpha, keep_own=keep_own, sparse_from=sparse_from)
    step = sweep(("log_phi", functools.partial(lda.sample_log_phi, K=k, eta=eta, draw="native")), ("z", z_update))
    return base._replace(step=step, name="native-variant")


@pytest.mark.parametrize("sparse_from, keep_own", [(None, False), (SPARSE, False), (None, True), (SPARSE, True)])
def test_visit_frequencies_against_exact_enumeration(sparse_from, keep_own):
    """p(z | w) over the 2^7 assignments of the tiny corpus against 20,000 chains after 25 sweeps
    (two lanes for three documents: one lane walks two); the wrong variant must fail."""
    data = lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=2)
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    z = final_states(_native_kernel(K, ALPHA, ETA, sparse_from=sparse_from, keep_own=keep_own), data,
                     num_chains=20_000, num_sweeps=25, seed=7)
    p_value = chi_square_test(_state_counts(z, K), probs).p_value
    if keep_own:
        assert p_value < 1e-4, p_value
    else:
        assert p_value > 1e-4, p_value


@pytest.mark.parametrize("conc", [0.01, 0.3, 2.5])
def test_dirichlet_rows_have_beta_marginals(conc):
    """Each coordinate of Dir(a) is Beta(a_j, Σa − a_j): KS against scipy over 4,000 rows drawn at
    once (each row its own entries' random numbers), for zero and nonzero counts; the means and
    variances of the coordinates within 5 Monte Carlo standard errors."""
    counts = np.array([0, 0, 1, 3, 0, 12, 0, 2], np.int32)
    rows = 4000
    logp = native.log_dirichlet_native(jax.random.key(5), jnp.tile(counts, (rows, 1)), conc)
    p = np.exp(np.asarray(logp, np.float64))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
    a = counts + conc
    total = a.sum()
    p_values = [stats.kstest(p[:, j], stats.beta(a[j], total - a[j]).cdf).pvalue for j in range(a.size)]
    assert min(p_values) * a.size > 1e-4, p_values
    mean = a / total
    var = mean * (1 - mean) / (total + 1)
    se_mean = np.sqrt(var / rows)
    assert np.all(np.abs(p.mean(axis=0) - mean) < 5 * se_mean + 1e-7)
    # the variance's standard error from the Beta's fourth central moment
    m4 = stats.beta(a, total - a).moment(4) - 4 * mean * stats.beta(a, total - a).moment(3) \
        + 6 * mean**2 * stats.beta(a, total - a).moment(2) - 3 * mean**4
    se_var = np.sqrt(np.maximum(m4 - var**2, 0) / rows)
    assert np.all(np.abs(p.var(axis=0) - var) < 5 * se_var + 1e-9)


def test_dirichlet_rows_of_tiny_concentration_stay_finite_and_differ_by_key():
    """η = 0.001 over 50,000 words of zero counts (log G far below float32's smallest normal): the
    log draw stays finite (log space), the rows sum to 1, two keys give other draws and one key
    the same draw again."""
    counts = jnp.zeros((3, 50_000), jnp.int32).at[:, :5].set(4)
    a = native.log_dirichlet_native(jax.random.key(1), counts, 0.001)
    b = native.log_dirichlet_native(jax.random.key(2), counts, 0.001)
    assert bool(jnp.isfinite(a).all()) and a.dtype == jnp.float32
    np.testing.assert_allclose(np.exp(np.asarray(a, np.float64)).sum(axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(native.log_dirichlet_native(jax.random.key(1), counts,
                                                                                        0.001)))


def _run_chains(k, threads):
    """Four chains × 12 sweeps of a synthetic corpus with ``threads`` threads: their records and final z."""
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, _, _ = lda_corpus(60, 5, 50, 30, alpha=0.3, eta=0.1, seed=4)
    before = native.num_threads()
    native.set_num_threads(threads)
    try:
        idata = gibbsjax.sample(lda.partially_collapsed(k), lda.data(corpus), seed=6, num_chains=4, num_warmup=4,
                                num_draws=8, progress=False)
    finally:
        native.set_num_threads(before)
    return idata


@pytest.mark.parametrize("k", [6, 80])  # the dense and the sparse form
def test_draws_do_not_depend_on_the_number_of_threads(k):
    one, two = _run_chains(k, 1), _run_chains(k, 2)
    for group in ("posterior", "sample_stats", "posterior_mean"):
        for v in one[group].data_vars:
            np.testing.assert_array_equal(one[group][v].values, two[group][v].values, err_msg=f"{group}.{v}")
    np.testing.assert_array_equal(one.sampler_state["state__z"].values, two.sampler_state["state__z"].values)


@pytest.mark.parametrize("sparse_from", [DENSE, SPARSE])
def test_draws_do_not_depend_on_the_packing(sparse_from):
    """1, 3 and 7 lanes: the same new topics in corpus order (uniforms keyed by document and position)."""
    draws = draws_for_packings(functools.partial(native.sample_z_native, sparse_from=sparse_from))
    for other in draws[1:]:
        np.testing.assert_array_equal(other, draws[0])
    assert len(np.unique(draws[0])) > 10


def test_the_dense_form_draws_from_the_xla_updates_uniforms():
    """From one state and φ, the dense native update and the XLA reference draw each token from the
    same uniform: their topics agree except where a uniform falls within float32 rounding of a
    boundary of the cumulative weights (summed in another order)."""
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, _, _ = lda_corpus(200, 8, 300, 40, alpha=0.3, eta=0.1, seed=2)
    d = lda.data(corpus)
    k = 12
    rng = np.random.default_rng(2)
    state = lda.LDAState(jnp.asarray(rng.integers(0, k, size=d.words.shape) * np.asarray(d.mask), jnp.int32),
                         jnp.asarray(np.log(rng.dirichlet(np.full(300, 0.2), size=k)), jnp.float32))
    a = native.sample_z_native(jax.random.key(3), state, d, K=k, alpha=0.2, sparse_from=DENSE)
    b = lda.sample_z_partially_collapsed(jax.random.key(3), state, d, K=k, alpha=0.2)
    mask = np.asarray(d.mask)
    agree = np.mean(np.asarray(a)[mask] == np.asarray(b)[mask])
    assert agree > 0.999, agree  # a disagreement sends the rest of its document another way
    np.testing.assert_array_equal(np.asarray(a)[~mask], 0)


def test_auto_picks_the_native_kernels_on_a_cpu_and_refuses_them_elsewhere():
    assert lda.resolve_z_update("auto", backend="cpu") == "native"
    assert lda.resolve_z_update("auto", backend="cpu", K=5000) == "native"
    assert lda.resolve_dirichlet_draw("auto", backend="cpu") == "native"
    assert lda.resolve_dirichlet_draw("auto", backend="gpu") == "dense"
    with pytest.raises(ValueError, match="z_update='native' runs on a CPU only"):
        lda.resolve_z_update("native", backend="gpu")
    with pytest.raises(ValueError, match="dirichlet_draw='native' runs on a CPU only"):
        lda.resolve_dirichlet_draw("native", backend="gpu")
    if jax.default_backend() == "cpu":
        assert lda.partially_collapsed(5) is lda.partially_collapsed(5, z_update="native", warmup="fast",
                                                                     dirichlet_draw="native")
        # a learned α goes through the native update too (α read from the state, per topic)
        kernel = lda.partially_collapsed(4, learn_alpha="sample", asymmetric_alpha=True)
        d = lda.data(Corpus.from_token_lists(DOCS, vocab=VOCAB))
        state = kernel.step(jax.random.key(1), kernel.init(jax.random.key(0), d), d)
        assert state.z.shape == d.words.shape and int(state.z.max()) < 4


def test_set_num_threads_checks_its_argument():
    with pytest.raises(ValueError, match="positive integer"):
        native.set_num_threads(0)
    with pytest.raises(ValueError, match="positive integer"):
        native.set_num_threads(1.5)


_FALLBACK = """
import warnings
import numpy as np, jax
import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import native
assert not native.available() and "GIBBSJAX_NATIVE=0" in native.unavailable_reason()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    k1 = lda.partially_collapsed(3)
    k2 = lda.partially_collapsed(4)
msgs = [str(w.message) for w in caught if "native CPU kernels" in str(w.message)]
assert len(msgs) == 1, msgs                                   # once, not per kernel
assert "pure-XLA" in msgs[0] and "GIBBSJAX_NATIVE=0" in msgs[0], msgs[0]
assert lda.resolve_z_update("auto", backend="cpu", K=3) == "lanes"
assert lda.resolve_dirichlet_draw("auto", backend="cpu") == "sparse"
try:
    lda.partially_collapsed(3, z_update="native")
except ValueError as err:
    assert "GIBBSJAX_NATIVE=0" in str(err), err
else:
    raise AssertionError("native accepted")
d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b", "c"], ["b", "a", "a"]]))
idata = gibbsjax.sample(k1, d, seed=0, num_chains=2, num_warmup=5, num_draws=5, progress=False)
assert np.isfinite(idata.sample_stats["lp"].values).all()
print("fallback ok")
"""


def test_without_the_native_kernels_the_xla_updates_run_with_one_warning(tmp_path):
    env = dict(os.environ, GIBBSJAX_NATIVE="0", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", _FALLBACK], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "fallback ok" in proc.stdout


@pytest.mark.slow  # ~30 s; the default run checks the transition and the stationary distribution above
@pytest.mark.parametrize("sparse_from", [None, SPARSE])
def test_geweke(sparse_from):
    data = lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=2)
    result = geweke_test(_native_kernel(K, ALPHA, ETA, sparse_from=sparse_from), data,
                         _lp_test_functions(K, ALPHA, ETA), num_chains=1000, num_steps=60, seed=11)
    result.assert_passes()


@pytest.mark.slow
def test_geweke_flags_the_wrong_variant():
    data = lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=2)
    result = geweke_test(_native_kernel(K, 0.2, 0.2, keep_own=True), data, _lp_test_functions(K, 0.2, 0.2),
                         num_chains=1000, num_steps=60, seed=11)
    assert not result.passed, result


def test_z_updates_registry_lists_native():
    assert "native" in lda.Z_UPDATES and "native" in z_updates.SAMPLE_Z
    assert "native" in z_updates.DIRICHLET_DRAWS


def test_native_log_joint_matches_a_float64_reference():
    """lp with the log-gamma sums in C++ (nonzero counts only) against scipy in float64 from counts
    made by numpy; the XLA form agrees too, within float32 rounding of its larger terms."""
    from scipy.special import gammaln

    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, _, _ = lda_corpus(120, 6, 80, 25, alpha=0.3, eta=0.1, seed=8)
    d = lda.data(corpus)
    k, alpha, eta = 30, 0.2, 0.05
    rng = np.random.default_rng(8)
    z = jnp.asarray(rng.integers(0, k, size=d.words.shape) * np.asarray(d.mask), jnp.int32)
    state = lda.LDAState(z, jnp.zeros((k, corpus.vocab_size), jnp.float32))
    mask = np.asarray(d.mask)
    words, docs, zz = np.asarray(d.words)[mask], np.asarray(d.docs)[mask], np.asarray(z)[mask]
    ndk = np.zeros((corpus.num_docs, k))
    nkw = np.zeros((k, corpus.vocab_size))
    np.add.at(ndk, (docs, zz), 1)
    np.add.at(nkw, (zz, words), 1)
    v = corpus.vocab_size
    want = (np.sum(gammaln(ndk + alpha)) - np.sum(gammaln(ndk.sum(1) + k * alpha))
            + corpus.num_docs * (gammaln(k * alpha) - k * gammaln(alpha))
            + np.sum(gammaln(nkw + eta)) - np.sum(gammaln(nkw.sum(1) + v * eta))
            + k * (gammaln(v * eta) - v * gammaln(eta)))
    got = float(lda.log_joint_collapsed(state, d, K=k, alpha=alpha, eta=eta, native_sums=True))
    xla = float(lda.log_joint_collapsed(state, d, K=k, alpha=alpha, eta=eta))
    assert abs(got - want) <= 2e-6 * abs(want), (got, want)
    assert abs(xla - want) <= 2e-5 * abs(want), (xla, want)
    assert lda.partially_collapsed(k, alpha=alpha, eta=eta).log_joint.keywords["native_sums"]


def _exact_frozen_transition(words, z_old, nkw, alpha, eta):
    """P(z' | z) of one document's frozen-count sweep over all K^L outcomes (itertools order): token i
    weighs (n_kw,−i + η)/(n_k,−i + Vη)(n_dk,−i + α), n_kw and n_k frozen at the sweep's start."""
    import itertools

    k, v = nkw.shape
    alpha = np.broadcast_to(np.asarray(alpha, float), (k,))
    nk = nkw.sum(axis=1)
    outcomes = list(itertools.product(range(k), repeat=len(words)))
    probs = np.empty(len(outcomes))
    for o, z_new in enumerate(outcomes):
        z = list(z_old)
        p = 1.0
        for i, w in enumerate(words):
            own = np.arange(k) == z_old[i]
            n_d = np.bincount([z[j] for j in range(len(z)) if j != i], minlength=k)
            weights = (nkw[:, w] - own + eta) / (nk - own + v * eta) * (n_d + alpha)
            p *= weights[z_new[i]] / weights.sum()
            z[i] = z_new[i]
        probs[o] = p
    return probs


@pytest.mark.parametrize("k, sparse_from", [(3, DENSE), (3, SPARSE), (7, SPARSE)])
def test_frozen_warmup_sweep_against_its_exact_transition(k, sparse_from):
    """The approximate warm-up (``warmup="fast"``) in the native kernel: one sweep from a fixed state
    against the transition it is defined by (frozen word–topic counts, the token's own topic out),
    enumerated in float64; 20,000 sweeps, chi-square per document."""
    d, state = _problem(k, 1)
    eta, alpha, draws = 0.3, 0.4, 20_000
    f = functools.partial(native.sample_z_native_frozen, K=k, alpha=alpha, eta=eta, sparse_from=sparse_from)
    z = np.asarray(jax.jit(jax.vmap(lambda key: f(key, state, d)))(jax.random.split(jax.random.key(1), draws)))
    words, docs_grid, mask = (np.asarray(a) for a in (d.words, d.docs, d.mask))
    z_old = np.asarray(state.z)
    nkw = np.zeros((k, len(VOCAB)))
    np.add.at(nkw, (z_old[mask], words[mask]), 1)
    p_values = []
    for doc in range(len(DOCS)):
        slots = np.nonzero((docs_grid == doc) & mask)
        probs = _exact_frozen_transition(words[slots], z_old[slots], nkw, alpha, eta)
        index = np.zeros(draws, np.int64)
        for z_i in z[:, slots[0], slots[1]].T:
            index = index * k + z_i
        p_values.append(chi_square_test(np.bincount(index, minlength=probs.size), probs).p_value)
    assert min(p_values) * len(p_values) > 1e-4, p_values


def test_the_frozen_warmup_draws_as_the_xla_one():
    """Dense form: the native and the XLA frozen-count sweeps draw each token from the same uniform."""
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, _, _ = lda_corpus(200, 8, 300, 40, alpha=0.3, eta=0.1, seed=3)
    d = lda.data(corpus)
    k = 12
    rng = np.random.default_rng(3)
    state = lda.LDAState(jnp.asarray(rng.integers(0, k, size=d.words.shape) * np.asarray(d.mask), jnp.int32),
                         jnp.zeros((k, 300), jnp.float32))
    a = native.sample_z_native_frozen(jax.random.key(4), state, d, K=k, alpha=0.2, eta=0.05, sparse_from=DENSE)
    b = lda.sample_z_collapsed_frozen(jax.random.key(4), state, d, K=k, alpha=0.2, eta=0.05)
    mask = np.asarray(d.mask)
    assert np.mean(np.asarray(a)[mask] == np.asarray(b)[mask]) > 0.999
    if jax.default_backend() == "cpu":  # the default CPU kernel warms up by it
        kernel = lda.partially_collapsed(k)
        assert kernel.warmup_name.startswith("fast: ")
        s1 = kernel.warmup_step(jax.random.key(4), state, d)
        assert np.array_equal(np.asarray(s1.z), np.asarray(native.sample_z_native_frozen(
            jax.random.split(jax.random.key(4), 1)[0], state, d, K=k, alpha=0.1, eta=0.01)))
