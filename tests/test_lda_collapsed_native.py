"""The native collapsed z-update (``lda.collapsed(K, z_update="native")``,
:func:`gibbsjax.models.lda.native.sample_z_collapsed_native`) and its state of topics only
(:mod:`gibbsjax.models.lda.topics_only`).

* the sampler's visit frequencies against p(z | w) enumerated in float64 numpy (independent code
  here: a product of Dirichlet-multinomial terms), for the dense and the sparse (bucket) form, a
  symmetric α and one α_k per topic, K = 2 (every state visited) and K = 5 (the sparse form's
  three buckets all reached); a planted wrong variant (each token drawn with its own topic still
  counted) that the test rejects;
* the same draws with 1 and 2 threads, and for any packing into lanes and a bucket's padding;
* the selection: ``"auto"`` picks it on a CPU where the kernels run, not where φ must be recorded;
* Geweke's joint-distribution test (slow run), with data drawn from p(w | z) (φ from its prior).
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln
from test_lda import _lp_test_functions, _state_counts, final_states

import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import native
from gibbsjax.models.lda.topics_only import LDATopicState
from gibbsjax.testing import chi_square_test, geweke_test

pytestmark = pytest.mark.skipif(not native.available(),
                                reason=f"native kernels not built here: {native.unavailable_reason()}")

DENSE, SPARSE = 10**9, 1  # sparse_from: never, always
TINY = [["a", "b"], ["b", "c", "c"], ["a", "c"]]
SHORT = [["a", "b"], ["c"], ["b", "a", "c"]]  # 6 tokens: 5^6 = 15,625 states at K = 5
VOCAB = ["a", "b", "c"]


def exact_posterior(docs, vocab, k, alpha, eta):
    """p(z | w) over all K^N assignments in corpus order (float64; α of shape (K,)):
    Π_d DirMult(n_d· | α) Π_k DirMult(n_k· | η), the terms that depend on z."""
    alpha = np.broadcast_to(np.asarray(alpha, np.float64), (k,))
    words = np.array([vocab.index(w) for doc in docs for w in doc])
    doc_of = np.array([d for d, doc in enumerate(docs) for _ in doc])
    v = len(vocab)
    states = np.array(list(itertools.product(range(k), repeat=len(words))))
    logp = np.zeros(len(states))
    for d in range(len(docs)):
        ndk = np.stack([(states[:, doc_of == d] == j).sum(axis=1) for j in range(k)], axis=1)
        logp += (gammaln(ndk + alpha) - gammaln(alpha)).sum(axis=1)
    for j in range(k):
        nkw = np.stack([((states == j) & (words == w)).sum(axis=1) for w in range(v)], axis=1)
        logp += (gammaln(nkw + eta) - gammaln(eta)).sum(axis=1) - (gammaln(nkw.sum(axis=1) + v * eta)
                                                                   - gammaln(v * eta))
    p = np.exp(logp - logp.max())
    return p / p.sum()


def _kernel(k, alpha, eta, *, sparse_from=None, keep_own=False):
    base = lda.collapsed(k, alpha=alpha, eta=eta, z_update="native")
    if sparse_from is None and not keep_own:
        return base
    z = functools.partial(native.sample_z_collapsed_native, K=k, alpha=jnp.asarray(alpha, jnp.float32), eta=eta,
                          keep_own=keep_own, sparse_from=sparse_from)
    return base._replace(step=sweep(("z", z)), name="collapsed-variant")


@pytest.mark.parametrize("docs, k, alpha, sparse_from, keep_own", [
    (TINY, 2, 0.6, DENSE, False), (TINY, 2, 0.6, SPARSE, False),
    (SHORT, 5, "asymmetric", DENSE, False), (SHORT, 5, "asymmetric", SPARSE, False),
    (TINY, 2, 0.6, DENSE, True), (TINY, 2, 0.6, SPARSE, True),
])
def test_visit_frequencies_against_exact_enumeration(docs, k, alpha, sparse_from, keep_own):
    """The final states of 20,000 chains after 25 sweeps against p(z | w); the wrong variant fails."""
    eta = 0.35
    if alpha == "asymmetric":
        alpha = np.linspace(0.2, 1.4, k)
    data = lda.data(Corpus.from_token_lists(docs, vocab=VOCAB), num_lanes=2)
    probs = exact_posterior(docs, VOCAB, k, alpha, eta)
    kernel = (_kernel(k, alpha, eta, sparse_from=sparse_from, keep_own=keep_own) if np.ndim(alpha) == 0
              else _kernel_asym(k, alpha, eta, sparse_from))
    z = final_states(kernel, data, num_chains=20_000, num_sweeps=25, seed=7)
    p_value = chi_square_test(_state_counts(z, k), probs).p_value
    if keep_own:
        assert p_value < 1e-6, p_value
    else:
        assert p_value > 1e-4, p_value


def _kernel_asym(k, alpha, eta, sparse_from):
    """One α_k per topic: the z-update with the vector α (the factories take a symmetric α)."""
    base = lda.collapsed(k, alpha=0.5, eta=eta, z_update="native")
    z = functools.partial(native.sample_z_collapsed_native, K=k, alpha=jnp.asarray(alpha, jnp.float32), eta=eta,
                          sparse_from=sparse_from)
    return base._replace(step=sweep(("z", z)), name="collapsed-asymmetric")


def _corpus(num_docs=60, vocab=40, seed=3):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(vocab)]
    docs = [[words[j] for j in rng.integers(0, vocab, size=rng.integers(1, 30))] for _ in range(num_docs)]
    return Corpus.from_token_lists(docs, vocab=words)


def _run(kernel, d, sweeps=6, chains=3, seed=0):
    keys = jax.random.split(jax.random.key(seed), chains)

    def chain(key):
        k0, k1 = jax.random.split(key)
        state = kernel.init(k0, d)
        state = jax.lax.scan(lambda s, t: (kernel.step(jax.random.fold_in(k1, t), s, d), None), state,
                             jnp.arange(sweeps))[0]
        return state.z

    z = np.asarray(jax.jit(jax.vmap(chain))(keys))
    return np.stack([lda.layout.tokens_in_corpus_order(d, zc) for zc in z])


@pytest.mark.parametrize("k", [5, 50])  # the dense and the sparse form
def test_draws_do_not_depend_on_threads_lanes_or_padding(k):
    corpus = _corpus()
    kernel = lda.collapsed(k, z_update="native")
    before = native.num_threads()
    try:
        native.set_num_threads(1)
        one = _run(kernel, lda.data(corpus, num_lanes=4))
        native.set_num_threads(2)
        two = _run(kernel, lda.data(corpus, num_lanes=4))
        other_lanes = _run(kernel, lda.data(corpus, num_lanes=7))
        padded = _run(kernel, lda.data(corpus, bucket=True))
    finally:
        native.set_num_threads(before)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, other_lanes)
    np.testing.assert_array_equal(one, padded[:, :one.shape[1]])
    assert len(np.unique(one)) > 1 and not np.array_equal(one[0], one[1])  # chains move, and differ


def test_auto_picks_it_on_a_cpu_unless_phi_is_recorded():
    assert lda.collapsed(4) is lda.collapsed(4, z_update="native", warmup="exact")
    assert isinstance(lda.collapsed(4).init(jax.random.key(0), lda.data(_corpus())), LDATopicState)
    # recording φ per draw needs φ in the state: "auto" keeps the XLA sweep, "native" is refused
    assert lda.collapsed(4, record_phi=3).init(jax.random.key(0), lda.data(_corpus())).log_phi.shape == (4, 40)
    with pytest.raises(ValueError, match="record_phi needs phi in the state"):
        lda.collapsed(4, z_update="native", record_phi=3)
    with pytest.raises(ValueError, match="z_update of the collapsed sampler must be one of"):
        lda.collapsed(4, z_update="lanes")
    # learned priors keep φ in the state and run the native z-update
    learned = lda.collapsed(4, learn_alpha="sample", learn_eta=True)
    assert learned is lda.collapsed(4, learn_alpha="sample", learn_eta=True, z_update="native")


def test_a_fit_of_the_native_collapsed_sampler_summarises_and_resumes():
    """gibbsjax.sample runs it as any kernel (topic shares, means, lp), and a run resumed from its
    saved state of topics only goes on as one longer run would."""
    d = lda.data(_corpus())
    kernel = lda.collapsed(6, z_update="native")
    whole = gibbsjax.sample(kernel, d, num_chains=2, num_warmup=4, num_draws=6, seed=5, progress=False)
    first = gibbsjax.sample(kernel, d, num_chains=2, num_warmup=4, num_draws=3, seed=5, progress=False)
    rest = gibbsjax.resume(first, kernel, d, num_draws=3, progress=False)
    np.testing.assert_array_equal(whole.posterior["topic_share"].values,
                                  rest.posterior["topic_share"].values)
    assert np.isfinite(whole.sample_stats["lp"].values).all()
    np.testing.assert_allclose(whole.posterior_mean["topic_word"].values.sum(axis=-1), 1.0, rtol=1e-5)


def _lp_only(k, alpha, eta):
    """The test functions of tests/test_lda.py that read z and w only (the state holds no φ)."""
    return {name: f for name, f in _lp_test_functions(k, alpha, eta).items() if name != "phi"}


@pytest.mark.slow  # ~1 min; the default run checks the stationary distribution by enumeration above
@pytest.mark.parametrize("sparse_from", [DENSE, SPARSE])
def test_geweke(sparse_from):
    data = lda.data(Corpus.from_token_lists(TINY, vocab=VOCAB), num_lanes=2)
    result = geweke_test(_kernel(2, 0.6, 0.35, sparse_from=sparse_from), data, _lp_only(2, 0.6, 0.35),
                         num_chains=1000, num_steps=60, seed=11)
    result.assert_passes()


@pytest.mark.slow
def test_geweke_flags_the_wrong_variant():
    data = lda.data(Corpus.from_token_lists(TINY, vocab=VOCAB), num_lanes=2)
    result = geweke_test(_kernel(2, 0.2, 0.2, keep_own=True), data, _lp_only(2, 0.2, 0.2),
                         num_chains=1000, num_steps=60, seed=11)
    assert not result.passed, result
