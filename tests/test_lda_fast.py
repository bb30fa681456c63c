"""LDA z-update options and the approximate warm-ups: exactness of every z-update, its draws against
the reference z-update, the cumulative-sum draw, the warm-ups' wiring, the frozen-count warm-up
against a NumPy reference and across layouts, and what the lane-grid warm-up buys."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import kernels, native, z_updates
from gibbsjax.models.lda import shard as lda_shard
from gibbsjax.models.lda.conditionals import draw_by_prefix_products
from gibbsjax.testing import chi_square_test, geweke_test

from test_lda import ALPHA, ETA, K, TINY_DOCS, _lp_test_functions, _state_counts, exact_posterior, final_states

# the fused Pallas z-update has its own enumeration and Geweke tests (tests/test_lda_pallas.py)
Z_UPDATES = ["dense", "lanes"]


def _tiny():
    corpus = Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"])
    return lda.data(corpus)


# ---------------------------------------------------------------- exactness of each z-update
@pytest.mark.parametrize("z_update", Z_UPDATES)
def test_visit_frequencies_match_exact_enumeration(z_update):
    """p(z | w) over all 2^7 assignments of the tiny corpus, against 20,000 chains after 25 sweeps."""
    data = _tiny()
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    kernel = lda.partially_collapsed(K, alpha=ALPHA, eta=ETA, z_update=z_update)
    z = final_states(kernel, data, num_chains=20_000, num_sweeps=25, seed=7)
    result = chi_square_test(_state_counts(z, K), probs)
    assert result.p_value > 1e-4, (z_update, result)


@pytest.mark.slow  # the default run checks both z-updates against exact enumeration above
@pytest.mark.parametrize("z_update, k", [("dense", K), ("lanes", 40)])
def test_geweke(z_update, k):
    """K = 40 runs the two-level (blocked) cumulative sums of the lanes z-update (slow run; the
    default run checks that draw against its weights at K = 40 and 100 below); lanes at K = 2 is
    the default of ``partially_collapsed`` on a CPU, checked in tests/test_lda.py."""
    data = _tiny()
    kernel = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA, z_update=z_update)
    result = geweke_test(kernel, data, _lp_test_functions(k, ALPHA, ETA), num_chains=1000, num_steps=60, seed=11)
    result.assert_passes()


@pytest.mark.parametrize("k", [3, 7, 40, 100])
def test_prefix_product_draw_matches_its_weights(k):
    """One-level (K ≤ 32) and two-level draws, including a padded last block (K = 40: 6 blocks of 7),
    against the normalised weights: chi-square over 200,000 draws from one weight row."""
    rng = np.random.default_rng(k)
    w = rng.gamma(0.3, size=k).astype(np.float32) + 1e-3
    n = 200_000
    u = jax.random.uniform(jax.random.key(k), (n,))
    idx = np.asarray(jax.jit(draw_by_prefix_products)(jnp.broadcast_to(jnp.asarray(w), (n, k)), u))
    assert idx.min() >= 0 and idx.max() < k
    result = chi_square_test(np.bincount(idx, minlength=k), w / w.sum())
    assert result.p_value > 1e-4, result


def test_prefix_product_draw_is_an_inverse_cdf():
    """For u on a grid, the draw is the index whose cumulative interval holds u·total (float64 reference),
    except within float32 rounding of a boundary."""
    rng = np.random.default_rng(0)
    for k in (5, 40, 100):
        w = rng.random(k).astype(np.float32) + 0.01
        u = np.linspace(0.0, 0.999999, 5001, dtype=np.float32)
        idx = np.asarray(draw_by_prefix_products(jnp.broadcast_to(jnp.asarray(w), (u.size, k)), jnp.asarray(u)))
        c = np.cumsum(w.astype(np.float64))
        ref = np.searchsorted(c, u * c[-1], side="right")
        near = np.min(np.abs(c[None, :] - (u * c[-1])[:, None]), axis=1) < 1e-5 * c[-1]
        assert np.all((idx == ref) | near), k


@pytest.mark.parametrize("k", [20, 100])
def test_lanes_draws_equal_the_dense_draws_for_the_same_key(k):
    """Same conditional, same uniforms: the lanes z-update reproduces the reference draws token for
    token, except where a uniform falls within float32 rounding of a cumulative boundary (then the rest
    of that document may differ).  A wrong conditional (stale counts, the token's own topic counted,
    a wrong α) changes almost every document."""
    corpus, _, _ = lda_corpus(num_docs=300, num_topics=k, vocab_size=400, doc_length=60, seed=5)
    d = lda.data(corpus)
    kernel = lda.partially_collapsed(k, z_update="dense", warmup="exact")
    state = kernel.step(jax.random.key(2), kernel.init(jax.random.key(1), d), d)
    z_dense = np.asarray(lda.sample_z_partially_collapsed(jax.random.key(3), state, d, K=k, alpha=0.1))
    z_lanes = np.asarray(lda.sample_z_lanes(jax.random.key(3), state, d, K=k, alpha=0.1))
    mask, docs = np.asarray(d.mask), np.asarray(d.docs)
    assert np.all(z_lanes[~mask] == 0)
    differing_docs = np.unique(docs[(z_dense != z_lanes) & mask])
    assert differing_docs.size <= 3, differing_docs.size  # of 300


# ---------------------------------------------------------------- options and wiring
def test_auto_resolution_and_bad_options(monkeypatch):
    cpu_auto = "native" if native.available() else "lanes"  # tests/test_lda_native.py checks both cases
    assert lda.resolve_z_update("auto", backend="cpu") == cpu_auto
    monkeypatch.setattr(z_updates, "pallas_module", lambda: None)
    monkeypatch.setattr(z_updates, "_warned_fallback", set())
    monkeypatch.setattr(z_updates.fused_triton, "jax_triton_importable", lambda: False)  # as on most GPUs today
    with pytest.warns(RuntimeWarning, match="falls back to the XLA scan"):  # never silent
        assert lda.resolve_z_update("auto", backend="gpu") == "dense"
    with pytest.raises(ValueError, match="cannot be imported"):
        lda.resolve_z_update("pallas")

    class Available:
        @staticmethod
        def available():
            return True

    monkeypatch.setattr(z_updates, "pallas_module", lambda: Available)
    assert lda.resolve_z_update("auto", backend="gpu") == "pallas"
    assert lda.resolve_z_update("auto", backend="cpu") == cpu_auto
    with pytest.raises(ValueError, match="z_update"):
        lda.partially_collapsed(3, z_update="fastest")
    with pytest.raises(ValueError, match="warmup"):
        lda.partially_collapsed(3, warmup="quick")
    with pytest.raises(ValueError, match="warmup"):
        lda.uncollapsed(3, warmup=None)
    assert lda.resolve_warmup("auto", backend="cpu") == "fast" and lda.resolve_warmup("auto", backend="gpu") == "exact"
    assert lda.resolve_warmup("fast_grid", backend="gpu") == "fast_grid"
    with pytest.raises(ValueError, match="warmup"):
        lda.resolve_warmup("frozen")


def test_config_keys_choose_the_options():
    from gibbsjax.config import ConfigError, parse_config

    doc = {"model": {"name": "lda.partially_collapsed", "K": 3, "z_update": "dense", "warmup": "exact"},
           "data": {"corpus": "abc"}, "sampler": {"seed": 0}}
    config = parse_config(doc)
    # no priors
    assert config.kernel is kernels.build_kernel(3, 0.1, 0.01, "partially_collapsed", "dense", "exact", None,
                                                 lda.resolve_dirichlet_draw())
    assert config.kernel.warmup_step is None
    doc["model"]["z_update"] = "fastest"
    with pytest.raises(ConfigError, match="z_update"):
        parse_config(doc)


@pytest.mark.parametrize("sampler, warmup", [("partially_collapsed", "fast"), ("uncollapsed", "fast"),
                                             ("collapsed", "fast"), ("partially_collapsed", "fast_grid")])
def test_the_sampling_step_does_not_depend_on_the_warmup(sampler, warmup):
    data = _tiny()
    fast = lda.SAMPLERS[sampler](K, alpha=ALPHA, eta=ETA, warmup=warmup)
    exact = lda.SAMPLERS[sampler](K, alpha=ALPHA, eta=ETA, warmup="exact")
    assert exact.warmup_step is None and fast.warmup_step is not None
    assert "approximate" in fast.warmup_name and fast.name == exact.name == f"lda.{sampler}"
    state = exact.init(jax.random.key(0), data)
    for t in range(3):
        a = fast.step(jax.random.key(t), state, data)
        b = exact.step(jax.random.key(t), state, data)
        jax.tree_util.tree_map(np.testing.assert_array_equal, a, b)
        state = a


def test_result_records_which_warmup_ran():
    data = _tiny()
    for warmup in ("fast", "exact"):
        kernel = lda.partially_collapsed(K, alpha=ALPHA, eta=ETA, warmup=warmup)
        idata = gibbsjax.sample(kernel, data, seed=0, num_chains=2, num_warmup=3, num_draws=2, progress=False)
        expected = kernel.warmup_name if warmup != "exact" else "the sampling kernel (lda.partially_collapsed)"
        assert idata.attrs["warmup"] == expected
        assert warmup == "exact" or expected.startswith(warmup + ":") and "approximate" in expected
    # the frozen-count warm-up (the CPU's default: tests/test_lda_gpu_path.py) says it is layout-independent
    assert lda.partially_collapsed(K, warmup="fast").warmup_name.startswith("fast: ")
    assert "the same draws for any lanes, shards or devices" in lda.partially_collapsed(K, warmup="fast").warmup_name
    assert "depend on the number of lanes" in lda.partially_collapsed(K, warmup="fast_grid").warmup_name


def test_warmup_sweep_keeps_counts_consistent():
    """The warm-up transition returns a valid state: topics in range, padding 0, φ untouched."""
    corpus, _, _ = lda_corpus(num_docs=50, num_topics=4, vocab_size=30, doc_length=20, seed=1)
    d = lda.data(corpus)
    kernel = lda.partially_collapsed(4, warmup="fast")  # the CPU's default
    state = kernel.init(jax.random.key(0), d)
    new = kernel.warmup_step(jax.random.key(1), state, d)
    z, mask = np.asarray(new.z), np.asarray(d.mask)
    assert z.min() >= 0 and z.max() < 4 and np.all(z[~mask] == 0)
    np.testing.assert_array_equal(np.asarray(new.log_phi), np.asarray(state.log_phi))
    assert np.mean(z[mask] != np.asarray(state.z)[mask]) > 0.3  # it moved


def test_fast_grid_warmup_reaches_higher_log_joint_in_few_sweeps():
    """On a synthetic corpus (K = 8, 400 documents), the log joint after 5 warm-up sweeps is
    higher with the lane-grid warm-up ("fast_grid") than with exact sweeps, by more than 4 standard
    errors of the difference (from the spread across 12 chains each; measured: 10-14), and the
    fast chains end nearer the typical set: closer to the mean lp that the exact chains reach after
    100 sweeps.  The frozen-count warm-up ("fast", the CPU default) does not gain per sweep this
    early: its counts at a sweep's start carry as little signal as the exact sweep's φ (measured,
    mean lp of 12 chains after 5 / 10 / 20 / 50 sweeps: fast -96,210 / -81,717 / -72,266 / -70,221,
    exact -95,708 / -81,857 / -73,484 / -70,656, fast_grid -86,856 / -75,829 / -70,217 / -69,370;
    standard errors 300-590); its gain is a cheaper sweep (``benchmarks/warmup_study.py``)."""
    k, alpha, eta = 8, 0.1, 0.05
    corpus, _, _ = lda_corpus(num_docs=400, num_topics=k, vocab_size=300, doc_length=40, alpha=alpha, eta=eta,
                              seed=4)
    d = lda.data(corpus)
    keys = jax.random.split(jax.random.key(3), 12)

    def lp_after(warmup):
        """log p(w, z) of 12 chains after n warm-up sweeps, as a function of n (compiled once)."""
        kernel = lda.partially_collapsed(k, alpha=alpha, eta=eta, warmup=warmup)
        warm = kernel.warmup_step or kernel.step

        def chain(key, n):
            key_init, key_run = jax.random.split(key)
            state = kernel.init(key_init, d)
            state = jax.lax.fori_loop(0, n, lambda t, s: warm(jax.random.fold_in(key_run, t), s, d), state)
            return kernel.log_joint(state, d)

        run = jax.jit(jax.vmap(chain, in_axes=(0, None)))
        return lambda n: np.asarray(run(keys, n))

    exact_lp = lp_after("exact")
    fast, exact = lp_after("fast_grid")(5), exact_lp(5)
    se = np.sqrt(fast.var(ddof=1) / fast.size + exact.var(ddof=1) / exact.size)
    assert fast.mean() - exact.mean() > 4 * se, (fast.mean(), exact.mean(), se)
    typical = exact_lp(100).mean()
    assert abs(fast.mean() - typical) < abs(exact.mean() - typical), (fast.mean(), exact.mean(), typical)


# ---------------------------------------------------------------- the frozen-count warm-up ("fast")
def _frozen_reference(words, doc_lengths, z, z_followed, u, K, V, alpha, eta, own_topic_out=True):
    """The frozen-count recursion in NumPy (float64), token by token in corpus order: per token the
    inverse-CDF draw of (n_kw,−i + η)/(n_k,−i + Vη) · (n_dk,−i + α) with n_kw, n_k the counts at the
    start of the sweep, n_dk following ``z_followed`` (the draws under test, so one draw within
    rounding of a boundary does not change the rest of its document); also whether u·total lies
    within float32 rounding of a cumulative boundary."""
    nkw = np.zeros((K, V))
    np.add.at(nkw, (z, words), 1)
    nk = nkw.sum(axis=1)
    draws, near = np.zeros(z.size, int), np.zeros(z.size, bool)
    start = 0
    for n in doc_lengths:
        nd = np.bincount(z[start:start + n], minlength=K).astype(float)
        for i in range(start, start + n):
            nd[z[i]] -= 1
            own = np.eye(K)[z[i]] if own_topic_out else np.zeros(K)
            p = (nkw[:, words[i]] - own + eta) / (nk - own + V * eta) * (nd + alpha)
            c = np.cumsum(p)
            t = u[i] * c[-1]
            draws[i] = min(np.searchsorted(c, t, side="right"), K - 1)
            near[i] = np.min(np.abs(c - t)) < 1e-5 * c[-1]
            nd[z_followed[i]] += 1
        start += n
    return draws, near


@pytest.mark.parametrize("k", [5, pytest.param(40, marks=pytest.mark.slow)])  # one-/two-level prefix sums
def test_frozen_warmup_samples_the_conditional_it_claims(k):
    """One frozen-count sweep against a NumPy reference of the same recursion with the same uniforms:
    every draw equal, except within float32 rounding of a cumulative boundary; the same reference
    with the token's own old topic left in n_kw, n_k (a wrong variant) disagrees on many tokens."""
    corpus, _, _ = lda_corpus(num_docs=40, num_topics=4, vocab_size=30, doc_length=10, seed=2)
    d = lda.data(corpus, num_lanes=7)
    alpha, eta = 0.3, 0.05
    state = lda.partially_collapsed(k).init(jax.random.key(0), d)
    key = jax.random.key(5)
    new = lda.sample_z_collapsed_frozen(key, state, d, K=k, alpha=alpha, eta=eta)
    flat = lambda a: np.asarray(lda.layout.tokens_in_corpus_order(d, np.asarray(a)))  # noqa: E731
    words, z, drawn, u = flat(d.words), flat(state.z), flat(new), flat(lda.token_uniforms(key, d))
    args = (words, np.asarray(d.doc_lengths), z, drawn, u.astype(np.float64), k, int(d.word_counts.shape[0]),
            alpha, eta)
    ref, near = _frozen_reference(*args)
    assert np.mean(drawn != z) > 0.3  # it moved
    assert np.all((drawn == ref) | near), np.flatnonzero((drawn != ref) & ~near)[:10]
    wrong, _ = _frozen_reference(*args, own_topic_out=False)
    assert np.sum(drawn != wrong) > 10, np.sum(drawn != wrong)


def _warmed_z(sweep, d, k=5, sweeps=2):
    """Topics (corpus order) after ``sweeps`` of the warm-up z-update ``sweep`` from the initial topics."""
    @jax.jit
    def run(key):
        z = lda.initial_topics(jax.random.key(1), d, k)
        step = lambda t, z: sweep(jax.random.fold_in(key, t), lda.LDAState(z, None), d, K=k, alpha=0.1, eta=0.01)  # noqa: E731
        return jax.lax.fori_loop(0, sweeps, step, z)

    return lda.layout.tokens_in_corpus_order(d, run(jax.random.key(2)))


def test_frozen_warmup_draws_do_not_depend_on_the_lanes():
    """The frozen-count sweep ("fast"): two sweeps give bit-identical topics for 1, 3 and 7 lanes; the
    lane-grid sweep ("fast_grid") does depend on the lanes (so this comparison can fail).  The same
    with documents over 4 devices: tests/test_lda_shard.py."""
    corpus, _, _ = lda_corpus(num_docs=40, num_topics=4, vocab_size=30, doc_length=10, seed=0)
    if jax.default_backend() == "cpu":  # the CPU's default is this warm-up (a GPU's is exact sweeps); with the
        # native kernels it runs natively (tests/test_lda_native.py)
        assert lda.partially_collapsed(5).warmup_step is not None
        assert lda.partially_collapsed(5) is lda.partially_collapsed(5, warmup="fast")
    one, *others = (_warmed_z(lda.sample_z_collapsed_frozen, lda.data(corpus, num_lanes=r)) for r in (1, 3, 7))
    for z in others:
        np.testing.assert_array_equal(z, one)
    d = lda.data(corpus, num_lanes=1)
    assert np.mean(one != lda.layout.tokens_in_corpus_order(d, lda.initial_topics(jax.random.key(1), d, 5))) > 0.3
    assert not np.array_equal(*(_warmed_z(lda.sample_z_collapsed_parallel, lda.data(corpus, num_lanes=r))
                                for r in (1, 7)))


@pytest.mark.slow
def test_default_warmup_draws_do_not_depend_on_lanes_or_shards():
    """The default kernel's warm-up sweeps (K = 40: two-level prefix sums) for 1 and 7 lanes and for
    the documents in 2 and 3 shards on one device: bit-identical."""
    corpus, _, _ = lda_corpus(num_docs=40, num_topics=4, vocab_size=30, doc_length=10, seed=0)
    kernel = lda.partially_collapsed(40)

    def warmed(kernel, d):
        @jax.jit
        def run(key):
            s = kernel.init(jax.random.key(1), d)
            return jax.lax.fori_loop(0, 3, lambda t, s: kernel.warmup_step(jax.random.fold_in(key, t), s, d), s)

        z = run(jax.random.key(2)).z
        return lda.layout.tokens_in_corpus_order(d, z) if d.words.ndim == 2 else lda_shard.tokens_in_corpus_order(d, z)

    results = {r: warmed(kernel, lda.data(corpus, num_lanes=r)) for r in (1, 7)}
    for shards in (2, 3):
        p = kernel.shard(lda.data(corpus, num_lanes=3), jax.devices()[:1], shards)
        assert p.kernel.warmup_name == kernel.warmup_name
        results[f"{shards} shards"] = warmed(p.kernel, p.data)
    for name, z in results.items():
        np.testing.assert_array_equal(z, results[1], err_msg=str(name))
