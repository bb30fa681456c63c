"""The sparse z-update (``z_update="sparse"``, :mod:`gibbsjax.models.lda.sparse`): exactness.

* one z sweep from a fixed state and φ: each document's new topics against the exact transition
  probabilities Π_i p(z'_i | z'_<i, z_>i, φ), enumerated in float64 numpy (independent code),
  symmetric and per-topic α, K spanning several α-term blocks with a padded last block;
* the whole sampler's visit frequencies against exact enumeration of p(z | w) (tests/test_lda.py);
* a deliberately wrong variant (the token's own old topic kept in the document term: n_dk instead
  of n_dk,−i) that both tests reject;
* the α-term draw alone against its weights at K = 10,000; a Geweke test (slow run).
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_lda import ALPHA, ETA, K, TINY_DOCS, _lp_test_functions, _state_counts, exact_posterior, final_states

from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import native, sparse, z_updates
from gibbsjax.testing import chi_square_test, geweke_test

# 4 documents in 2 lanes: one lane walks two documents (lengths 3 + 1 and 3 + 2 by the packing)
DOCS = [["a", "b", "c"], ["b", "c"], ["d"], ["c", "a", "d"]]
VOCAB = ["a", "b", "c", "d"]


def _problem(k, seed):
    """The packed corpus, a random state z and a random φ (rows of Dirichlet(0.5): uneven, so
    the document term and the α-term both carry mass)."""
    rng = np.random.default_rng(seed)
    d = lda.data(Corpus.from_token_lists(DOCS, vocab=VOCAB), num_lanes=2)
    z = jnp.asarray(rng.integers(0, k, size=d.words.shape) * np.asarray(d.mask), jnp.int32)
    log_phi = jnp.asarray(np.log(rng.dirichlet(np.full(len(VOCAB), 0.5), size=k)), jnp.float32)
    return d, lda.LDAState(z, log_phi)


def _exact_transition(words, z_old, phi, alpha):
    """P(z' | z, φ) of one document's sequential sweep over all K^L outcomes (itertools order)."""
    k = phi.shape[0]
    alpha = np.broadcast_to(np.asarray(alpha, float), (k,))
    outcomes = list(itertools.product(range(k), repeat=len(words)))
    probs = np.empty(len(outcomes))
    for o, z_new in enumerate(outcomes):
        z = list(z_old)
        p = 1.0
        for i, w in enumerate(words):
            n = np.bincount([z[j] for j in range(len(z)) if j != i], minlength=k)
            weights = phi[:, w] * (n + alpha)
            p *= weights[z_new[i]] / weights.sum()
            z[i] = z_new[i]
        probs[o] = p
    return probs


def _sweep_p_values(k, alpha, *, keep_current=False, draws=20_000, seed=0):
    """Chi-square p-value per document of ``draws`` one-sweep z-updates from one fixed state."""
    d, state = _problem(k, seed)
    f = functools.partial(sparse.sample_z_sparse, K=k, alpha=alpha, keep_current=keep_current)
    z = np.asarray(jax.jit(jax.vmap(lambda key: f(key, state, d)))(jax.random.split(jax.random.key(seed), draws)))
    words, docs, mask = (np.asarray(a) for a in (d.words, d.docs, d.mask))
    phi = np.exp(np.asarray(state.log_phi, np.float64))
    z_old = np.asarray(state.z)
    p_values = []
    for doc in range(len(DOCS)):
        slots = np.nonzero((docs == doc) & mask)  # steps in order within the document's lane
        probs = _exact_transition(words[slots], z_old[slots], phi, alpha)
        index = np.zeros(draws, np.int64)
        for z_i in z[:, slots[0], slots[1]].T:
            index = index * k + z_i
        p_values.append(chi_square_test(np.bincount(index, minlength=probs.size), probs).p_value)
    return np.array(p_values)


@pytest.mark.parametrize("k, alpha", [(3, 0.3), (7, 0.5), (7, "asymmetric")])
def test_one_sweep_against_the_exact_transition(k, alpha):
    """K = 7: three α-term blocks of 3 topics, the last padded; an asymmetric α as learned priors pass."""
    if alpha == "asymmetric":
        alpha = jnp.asarray(np.linspace(0.05, 1.5, k), jnp.float32)
    p = _sweep_p_values(k, alpha)
    assert p.min() * p.size > 1e-4, p  # Bonferroni over the documents


def test_one_sweep_rejects_the_wrong_variant():
    """n_dk instead of n_dk,−i in the document term: the same test flags it."""
    p = _sweep_p_values(3, 0.3, keep_current=True)
    assert p.min() < 1e-6, p


def _sparse_kernel(k, alpha, eta, *, keep_current=False):
    """``partially_collapsed`` with the sparse z-update (or its wrong variant)."""
    base = lda.partially_collapsed(k, alpha=alpha, eta=eta, z_update="sparse")
    if not keep_current:
        return base
    z_update = functools.partial(sparse.sample_z_sparse, K=k, alpha=alpha, keep_current=True)
    step = sweep(("log_phi", functools.partial(lda.sample_log_phi, K=k, eta=eta)), ("z", z_update))
    return base._replace(step=step, name="sparse-keep-current")


@pytest.mark.parametrize("keep_current", [False, True])
def test_visit_frequencies_against_exact_enumeration(keep_current):
    """p(z | w) over the 2^7 assignments of the tiny corpus (two lanes for three documents, so one
    lane walks two documents) against 20,000 chains after 25 sweeps; the wrong variant must fail."""
    data = lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=2)
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    z = final_states(_sparse_kernel(K, ALPHA, ETA, keep_current=keep_current), data,
                     num_chains=20_000, num_sweeps=25, seed=7)
    p_value = chi_square_test(_state_counts(z, K), probs).p_value
    if keep_current:
        assert p_value < 1e-4, p_value
    else:
        assert p_value > 1e-4, p_value


@pytest.mark.parametrize("k", [997, 10_000])
def test_alpha_term_draw_against_its_weights(k):
    """The two-level inverse CDF (K = 10,000: 100 blocks of 100 topics; K = 997: 32 blocks of 32,
    the last one's window shifted back inside the K topics) against its weights α_k φ_kw for two
    words: chi-square over 400,000 draws, rare topics pooled."""
    rng = np.random.default_rng(3)
    phi_t = jnp.asarray(rng.gamma(0.05, size=(2, k)) + 1e-30, jnp.float32)
    alpha = jnp.asarray(rng.uniform(0.5, 2.0, size=k), jnp.float32)
    cumulative = sparse.alpha_term_tables(phi_t, alpha)
    n = 200_000
    words = jnp.repeat(jnp.arange(2), n)
    u = jax.random.uniform(jax.random.key(4), (2 * n,))
    topics = np.asarray(jax.jit(sparse.draw_alpha_term)(phi_t, alpha, cumulative, words, u))
    weights = np.asarray(phi_t, np.float64) * np.asarray(alpha, np.float64)
    np.testing.assert_allclose(np.asarray(cumulative[:, -1]), weights.sum(1), rtol=1e-5)
    for w in range(2):
        counts = np.bincount(topics[w * n:(w + 1) * n], minlength=k)
        assert chi_square_test(counts, weights[w] / weights[w].sum()).p_value > 1e-4


def test_resolution_and_wiring(monkeypatch):
    """``"sparse"`` is an explicit choice; "auto" keeps the measured fastest: on a CPU without the
    native kernels (here made unavailable; tests/test_lda_native.py checks the other case) lanes below
    SPARSE_FROM_TOPICS_ON_CPU topics, sparse from there on (the factory passes its K); on a GPU
    the fused kernel whatever K."""
    monkeypatch.setattr(native, "_load", lambda: (None, "made unavailable by the test"))
    monkeypatch.setattr(native, "_warned", {"made unavailable by the test"})  # its one-time warning: given
    assert "sparse" in lda.Z_UPDATES
    assert lda.resolve_z_update("sparse") == "sparse"
    assert lda.resolve_z_update("auto", backend="cpu") == "lanes"
    many = z_updates.SPARSE_FROM_TOPICS_ON_CPU
    assert lda.resolve_z_update("auto", backend="cpu", K=many - 1) == "lanes"
    assert lda.resolve_z_update("auto", backend="cpu", K=many) == "sparse"
    assert lda.resolve_z_update("auto", backend="cpu", K=np.int64(many)) == "sparse"  # a grid search's K
    assert lda.resolve_z_update("lanes", backend="cpu", K=many) == "lanes"  # an explicit choice stays
    if jax.default_backend() == "cpu":  # the factories' kernels are cached per resolved option
        assert lda.partially_collapsed(many) is lda.partially_collapsed(many, z_update="sparse")
        assert lda.partially_collapsed(many - 1) is lda.partially_collapsed(many - 1, z_update="lanes")
        learned = dict(learn_alpha="sample", asymmetric_alpha=True)
        assert lda.partially_collapsed(many, **learned) is lda.partially_collapsed(many, z_update="sparse", **learned)
    kernel = lda.partially_collapsed(3, z_update="sparse", learn_alpha="sample", asymmetric_alpha=True)
    d = lda.data(Corpus.from_token_lists(DOCS, vocab=VOCAB), num_lanes=2)
    state = kernel.step(jax.random.key(1), kernel.init(jax.random.key(0), d), d)
    assert state.z.shape == d.words.shape and int(state.z.max()) < 3


@pytest.mark.slow  # ~30 s; the default run checks the transition and the stationary distribution above
@pytest.mark.parametrize("k", [K, 12])
def test_geweke(k):
    data = lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=2)
    result = geweke_test(_sparse_kernel(k, ALPHA, ETA), data, _lp_test_functions(k, ALPHA, ETA),
                         num_chains=1000, num_steps=60, seed=11)
    result.assert_passes()


@pytest.mark.slow
def test_geweke_flags_the_wrong_variant():
    data = lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=2)
    result = geweke_test(_sparse_kernel(K, 0.2, 0.2, keep_current=True), data, _lp_test_functions(K, 0.2, 0.2),
                         num_chains=1000, num_steps=60, seed=11)
    assert not result.passed, result


def draws_for_packings(z_update, k: int = 50):
    """The new topics, in corpus order, of one z-update from the same state and φ with the corpus packed
    into 1, 3 and 7 lanes; ``z_update(key, state, d, K=..., alpha=...)``.  Shared with
    tests/test_lda_native.py."""
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, _, _ = lda_corpus(30, 5, 40, 12, alpha=0.3, eta=0.1, seed=5)
    rng = np.random.default_rng(5)
    log_phi = jnp.asarray(np.log(rng.dirichlet(np.full(40, 0.3), size=k)), jnp.float32)
    z_corpus = rng.integers(0, k, size=corpus.num_tokens)
    draws = []
    for lanes in (1, 3, 7):
        d = lda.data(corpus, num_lanes=lanes)
        z = np.zeros(d.words.shape, np.int32)
        slots = np.asarray(lda.layout.tokens_in_corpus_order(d, np.arange(z.size).reshape(z.shape)))
        z.reshape(-1)[slots] = z_corpus
        new = z_update(jax.random.key(9), lda.LDAState(jnp.asarray(z), log_phi), d, K=k, alpha=0.2)
        draws.append(lda.layout.tokens_in_corpus_order(d, new))
    return draws


def test_draws_do_not_depend_on_the_packing():
    """Each token's uniforms are keyed by its document and position, and a document's other tokens
    are visited in position order whatever its lane: 1, 3 or 7 lanes give the same new topics (up
    to float32 summation order, which the cumulative sums' blocks follow)."""
    draws = draws_for_packings(sparse.sample_z_sparse)
    for other in draws[1:]:
        assert np.mean(other != draws[0]) <= 0.01, np.mean(other != draws[0])


@pytest.mark.parametrize("z_update", ["sparse", "lanes"])
def test_the_gpu_program_of_the_sparse_sweep_has_no_per_token_topic_vectors(z_update, monkeypatch):
    """One sweep lowered for CUDA (no GPU needed; the backend reported as "gpu"): with "sparse" no
    array of the program is (lanes × K), so no token does O(K) work; "lanes", the dense update,
    shows that the check would see one."""
    from jax import export

    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    k, lanes = 1009, 7  # K prime and far from every other size here
    docs = [[f"w{(3 * i + j) % 5}" for j in range(2 + i % 4)] for i in range(14)]
    d = lda.data(Corpus.from_token_lists(docs), num_lanes=lanes)
    assert d.words.shape[1] == lanes
    kernel = lda.partially_collapsed(k, z_update=z_update, warmup="exact")
    state = kernel.init(jax.random.key(0), d)
    text = export.export(jax.jit(kernel.step), platforms=["cuda"])(jax.random.key(1), state, d).mlir_module()
    per_token = f"tensor<{lanes}x{k}x" in text
    assert per_token == (z_update == "lanes")
