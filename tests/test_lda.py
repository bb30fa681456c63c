"""LDA: exact enumeration, Geweke, a stale-count variant that must fail, recovery, bad input."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln

from gibbsjax.corpus import Corpus
from gibbsjax.kernel import Kernel
from gibbsjax.models import lda
from gibbsjax.models.lda.conditionals import inverse_cdf
from gibbsjax.testing import chi_square_test, geweke_test

TINY_DOCS = [["a", "b"], ["b", "c", "c"], ["a", "c"]]
K, ALPHA, ETA = 2, 0.6, 0.35  # distinct: alpha and eta cannot be confused


def _tiny():
    corpus = Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"])
    return corpus, lda.data(corpus)


def exact_posterior(docs, vocab, k, alpha, eta):
    """p(z | w) over all K^N assignments, float64, θ and φ integrated out (independent code)."""
    words = [vocab.index(w) for doc in docs for w in doc]
    doc_of = [d for d, doc in enumerate(docs) for _ in doc]
    v = len(vocab)
    logp = []
    states = list(itertools.product(range(k), repeat=len(words)))
    for z in states:
        ndk = np.zeros((len(docs), k))
        nkw = np.zeros((k, v))
        for zi, wi, di in zip(z, words, doc_of):
            ndk[di, zi] += 1
            nkw[zi, wi] += 1
        lp = np.sum(gammaln(ndk + alpha)) - np.sum(gammaln(ndk.sum(1) + k * alpha))
        lp += np.sum(gammaln(nkw + eta)) - np.sum(gammaln(nkw.sum(1) + v * eta))
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def final_states(kernel: Kernel, data, num_chains: int, num_sweeps: int, seed: int) -> np.ndarray:
    """Final z of many independent chains, in corpus order (chains, N)."""

    def chain(key):
        k_init, k_run = jax.random.split(key)
        state = kernel.init(k_init, data)

        def body(s, t):
            return kernel.step(jax.random.fold_in(k_run, t), s, data), None

        state, _ = jax.lax.scan(body, state, jnp.arange(num_sweeps))
        return state.z

    keys = jax.random.split(jax.random.key(seed), num_chains)
    z_grid = np.asarray(jax.jit(jax.vmap(chain))(keys))
    return np.stack([lda.layout.tokens_in_corpus_order(data, zg) for zg in z_grid])


def _state_counts(z: np.ndarray, k: int) -> np.ndarray:
    n = z.shape[1]
    index = (z * (k ** np.arange(n - 1, -1, -1))).sum(axis=1)  # same order as itertools.product
    return np.bincount(index, minlength=k**n)


@pytest.mark.parametrize("sampler", ["collapsed", "partially_collapsed", "uncollapsed"])
def test_visit_frequencies_match_exact_enumeration(sampler):
    corpus, data = _tiny()
    states, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    kernel = lda.SAMPLERS[sampler](K, alpha=ALPHA, eta=ETA)
    z = final_states(kernel, data, num_chains=20_000, num_sweeps=25, seed=7)
    result = chi_square_test(_state_counts(z, K), probs)
    assert result.p_value > 1e-4, (sampler, result)


def _stale_count_kernel(k, alpha, eta) -> Kernel:
    """AD-LDA style: every token from the collapsed conditional with counts frozen at
    the start of the sweep (what approximate parallel samplers do). Not exact."""
    base = lda.collapsed(k, alpha=alpha, eta=eta)

    def step(key, state, d):
        ndk, nkw, nk = lda.topic_counts(state.z, d, k)
        v = d.word_counts.shape[0]
        onehot = (state.z[..., None] == jnp.arange(k)).astype(jnp.int32) * d.mask[..., None]
        n_d = ndk[d.docs] - onehot
        n_w = nkw.T[d.words] - onehot
        n_k = nk - onehot
        p = (n_w + eta) / (n_k + v * eta) * (n_d + alpha)
        u = jax.random.uniform(key, state.z.shape)
        z = jnp.where(d.mask, inverse_cdf(p, u), state.z)
        return state._replace(z=z)

    return base._replace(step=step, name="stale")


def test_stale_count_variant_fails_the_enumeration_test():
    """The enumeration test has power: simultaneous updates from stale counts are caught."""
    corpus, data = _tiny()
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    z = final_states(_stale_count_kernel(K, ALPHA, ETA), data, num_chains=20_000, num_sweeps=25, seed=7)
    assert chi_square_test(_state_counts(z, K), probs).p_value < 1e-4


def _lp_test_functions(k, alpha, eta):
    def lp(state, d):
        return lda.log_joint_collapsed(state, d, K=k, alpha=alpha, eta=eta)

    def phi(state, d):
        return jnp.exp(state.log_phi)

    def share(state, d):
        return jnp.sum((state.z == 0) * d.mask) / jnp.sum(d.mask)

    def first_word(state, d):  # the data's own statistic: how often word 0 appears
        return jnp.sum((d.words == 0) * d.mask) / jnp.sum(d.mask)

    return {"lp": lp, "phi": phi, "share0": share, "word0": first_word}


@pytest.mark.parametrize("sampler", [  # every sampler is checked against exact enumeration by default
    pytest.param("collapsed", marks=pytest.mark.slow), "partially_collapsed",
    pytest.param("uncollapsed", marks=pytest.mark.slow)])
def test_geweke(sampler):
    corpus, data = _tiny()
    options = {"z_update": "dense"} if sampler == "collapsed" else {}  # with φ in the state (native: its own file)
    kernel = lda.SAMPLERS[sampler](K, alpha=ALPHA, eta=ETA, **options)
    result = geweke_test(kernel, data, _lp_test_functions(K, ALPHA, ETA), num_chains=1000, num_steps=60, seed=11)
    result.assert_passes()


@pytest.mark.slow  # the wrong-variant tests of test_lda_priors.py and test_lda_fast.py show power by default
def test_geweke_flags_the_stale_count_variant():
    corpus = Corpus.from_token_lists([["a", "b", "a", "c"], ["b", "c", "c", "a"]], vocab=["a", "b", "c"])
    data = lda.data(corpus)
    kernel = _stale_count_kernel(K, 0.2, 0.2)

    def step(key, state, d):  # stale z-update, then φ | z so the data simulator has φ
        k1, k2 = jax.random.split(key)
        state = kernel.step(k1, state, d)
        return state._replace(log_phi=lda.sample_log_phi(k2, state, d, K=K, eta=0.2))

    result = geweke_test(kernel._replace(step=step), data, _lp_test_functions(K, 0.2, 0.2),
                         num_chains=1000, num_steps=60, seed=11)
    assert not result.passed


def test_packing_covers_every_token_once():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 40, size=57)
    docs = [[f"w{rng.integers(0, 30)}" for _ in range(n)] for n in lengths]
    corpus = Corpus.from_token_lists(docs)
    for lanes in (None, 1, 5, 57):
        d = lda.data(corpus, num_lanes=lanes)
        assert int(d.mask.sum()) == corpus.num_tokens
        flat = lda.layout.tokens_in_corpus_order(d, d.words)
        np.testing.assert_array_equal(flat, corpus.tokens)
        # a document's tokens are in one lane, in order, in consecutive steps
        docs_grid, mask = np.asarray(d.docs), np.asarray(d.mask)
        for doc in (0, 13, 56):
            steps, lanes_of = np.nonzero((docs_grid == doc) & mask)
            assert len(set(lanes_of)) == 1 and np.all(np.diff(steps) == 1)


@pytest.mark.parametrize(
    "fn, kwargs, msg",
    [
        (lda.partially_collapsed, {"K": 0}, "K"),
        (lda.collapsed, {"K": 2.5}, "K"),
        (lda.uncollapsed, {"K": 3, "alpha": 0}, "alpha"),
        (lda.partially_collapsed, {"K": 3, "eta": -1}, "eta"),
        (lda.partially_collapsed, {"K": 3, "eta": float("nan")}, "eta"),
    ],
)
def test_bad_hyperparameters(fn, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        fn(**kwargs)


def test_bad_data():
    with pytest.raises(ValueError, match="Corpus"):
        lda.data([[0, 1]])
    empty_doc = Corpus.from_token_lists([["a"], []], empty="keep")
    with pytest.raises(ValueError, match="zero-length"):
        lda.data(empty_doc)
    with pytest.raises(ValueError, match="empty"):
        lda.data(Corpus(np.zeros(0, np.int32), np.zeros(1, np.int64), ("a",)))
    with pytest.raises(ValueError, match="num_lanes"):
        lda.data(Corpus.from_token_lists([["a"]]), num_lanes=0)


def test_infer_doc_topics_and_vocabulary_mismatch():
    phi = np.array([[0.8, 0.15, 0.05], [0.05, 0.15, 0.8]])
    new = Corpus.from_token_lists([["a"] * 20, ["c"] * 20], vocab=["a", "b", "c"])
    theta = lda.infer_doc_topics(phi, new, alpha=0.1, num_sweeps=60, num_burn=20)
    assert theta.shape == (2, 2)
    assert theta[0, 0] > 0.9 and theta[1, 1] > 0.9
    with pytest.raises(ValueError, match="vocabulary"):
        lda.infer_doc_topics(phi, Corpus.from_token_lists([["a", "b"]], vocab=["a", "b"]))


@pytest.mark.parametrize("k, v, num_docs", [pytest.param(10, 500, 2000, marks=pytest.mark.slow), (5, 200, 500)])
def test_recovers_synthetic_topics_within_an_oracle_bound(k, v, num_docs):
    """K = 10, V = 500, 2,000 documents from the generative process (by default a smaller
    corpus: K = 5, V = 200, 500 documents, the same bound).

    The bound: an oracle that knew every token's true topic would estimate φ_k
    by its empirical word frequencies, with expected L1 error
    Σ_w sqrt(2 φ_kw (1 − φ_kw) / (π n_k)) (normal approximation of each
    count); the fitted, aligned φ must be within twice that, plus 0.05 for the
    posterior's own spread, topic by topic.  Random topics sit ~1.5–2 apart in
    L1, so the bound rules out merged or split topics.

    LDA posteriors are multimodal and a Gibbs chain can sit in a worse mode (two
    topics merged, one split) for hundreds of sweeps; the log joint tells such
    chains apart.  So: chains in the best mode (mean lp within 1,000 nats of the
    best chain's) must meet the bound, and a chain that misses it must sit
    visibly lower in lp (which R-hat of lp then flags)."""
    from scipy.optimize import linear_sum_assignment

    import gibbsjax
    from gibbsjax.datasets.synthetic import lda_corpus

    eta, alpha = 0.05, 0.1
    corpus, phi, theta = lda_corpus(num_docs=num_docs, num_topics=k, vocab_size=v, doc_length=40,
                                    alpha=alpha, eta=eta, seed=3)
    expected_tokens = corpus.num_tokens * theta.mean(axis=0)
    oracle = np.sum(np.sqrt(2 * phi * (1 - phi) / (np.pi * expected_tokens[:, None])), axis=1)

    idata = gibbsjax.sample(lda.partially_collapsed(k, alpha=alpha, eta=eta), lda.data(corpus), seed=2,
                            num_chains=4, num_warmup=150, num_draws=30, progress=False)
    mean_lp = idata.sample_stats["lp"].values.mean(axis=1)
    best = mean_lp.max()
    within = []
    for c in range(4):
        est = idata.posterior_mean["topic_word"].values[c]
        cost = np.abs(phi[:, None, :] - est[None, :, :]).sum(-1)
        rows, cols = linear_sum_assignment(cost)
        err = cost[rows, cols]
        ok = bool(np.all(err <= 2 * oracle[rows] + 0.05))
        within.append(ok)
        if best - mean_lp[c] < 1000:
            assert ok, (c, np.round(err, 3), np.round(oracle, 3))
        else:
            assert not ok  # lp ranks the chains the way recovery does
    assert any(within)


@pytest.mark.parametrize("name, kernel", [
    ("partially_collapsed", lda.partially_collapsed(3, alpha=0.3, eta=0.2, warmup="exact")),
    ("uncollapsed", lda.uncollapsed(3, alpha=0.3, eta=0.2, warmup="exact")),
    ("collapsed", lda.collapsed(3, alpha=0.3, eta=0.2, z_update="dense")),
    ("learned", lda.partially_collapsed(3, learn_alpha="sample", learn_eta=True, warmup="exact")),
    ("fast warm-up", lda.partially_collapsed(3, alpha=0.3, eta=0.2, warmup="fast")),
])
def test_the_initial_phi_is_never_read(name, kernel):
    """The kernels start log φ at its conditional mean (no Dirichlet draw compiled into the start):
    sound only because every sweep, and every warm-up sweep, draws φ | z (or leaves φ out) before
    anything reads it (warm-up sweeps move z only and carry log φ through to the first sampling
    sweep, which draws it).  Here the start's log φ is replaced by another point of the simplex:
    one sweep gives the same state either way, one warm-up sweep the same z.  A sweep that read the old φ
    (z | φ before φ | z) fails this."""
    _, d = _tiny()
    start = kernel.init(jax.random.key(0), d)
    np.testing.assert_allclose(np.exp(np.asarray(start.log_phi)).sum(axis=1), 1.0, rtol=1e-5)
    other = start._replace(log_phi=jax.nn.log_softmax(jax.random.normal(jax.random.key(9), start.log_phi.shape)))
    a, b = kernel.step(jax.random.key(1), start, d), kernel.step(jax.random.key(1), other, d)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)
    if kernel.warmup_step is not None:  # warm-up sweeps move z (and α, η) only, and carry log φ through
        a, b = kernel.warmup_step(jax.random.key(1), start, d), kernel.warmup_step(jax.random.key(1), other, d)
        np.testing.assert_array_equal(np.asarray(b.log_phi), np.asarray(other.log_phi))
        leaves = [jax.tree_util.tree_leaves(s._replace(log_phi=0)) for s in (a, b)]
        for x, y in zip(*leaves):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)
    # the control: a z-update given φ does read it, so the check can fail
    z_given_phi = lda.sample_z_partially_collapsed
    za = z_given_phi(jax.random.key(1), lda.LDAState(start.z, start.log_phi), d, K=3, alpha=0.3)
    zb = z_given_phi(jax.random.key(1), lda.LDAState(start.z, other.log_phi), d, K=3, alpha=0.3)
    assert not np.array_equal(np.asarray(za), np.asarray(zb))
