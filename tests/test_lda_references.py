"""LDA conditionals against references written here, independently of the library's own constants.

Three checks that would each catch a one-line bug the rest of the default suite does not see:

* the log-density ratios that the slice sampler of a learned α (symmetric and per topic) and of
  a learned η is given, against the Pólya formulas written with ``scipy.special.gammaln`` in
  float64 (a symmetric α density that forgot the factor K in Γ(Kα)/Γ(n_d + Kα), say);
* the uncollapsed z-update on a state so peaked that every product θ̃_dk φ̃_kw underflows, so
  it takes its log-space path: the draws follow softmax(log θ_d + log φ_·w) (a path that
  dropped log θ, say, sends the tokens elsewhere);
* the dense and the lanes z-updates replayed token by token in float64 with the exact weights
  φ_kw (n_dk,−i + α) and the same uniforms, on φ peaked 30 nats above its other topics (a
  floor on log φ much higher than the library's would let the other topics win).
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln

from gibbsjax.corpus import Corpus
from gibbsjax.models import lda


def _doc_topic_counts(d, z, K):
    """n_dk (D, K) from the grid, by numpy (not the library's counting)."""
    docs, mask, z = np.asarray(d.docs), np.asarray(d.mask), np.asarray(z)
    out = np.zeros((np.asarray(d.doc_lengths).size + 1, K), np.int64)
    np.add.at(out, (docs[mask], z[mask]), 1)
    return out[:-1]


def _word_topic_counts(d, z, K):
    words, mask, z = np.asarray(d.words), np.asarray(d.mask), np.asarray(z)
    out = np.zeros((K, np.asarray(d.word_counts).size), np.int64)
    np.add.at(out, (z[mask], words[mask]), 1)
    return out


def _ratios(monkeypatch, sample, key, state, d, **kw):
    """The log-density-ratio functions ``sample`` hands to the slice sampler (one per call),
    with the slice sampler replaced by one that records them and keeps the current value."""
    module = sys.modules[sample.__module__]
    seen = []

    def record(key, x0, log_density_ratio, **_):
        seen.append(log_density_ratio)
        return x0

    monkeypatch.setattr(module, "slice_sample", record)
    with jax.disable_jit():  # per-topic updates run as a Python loop: each ratio is concrete
        sample(key, state, d, **kw)
    return seen


def _corpus(seed=0, num_docs=12, vocab=15):
    rng = np.random.default_rng(seed)
    docs = [[f"w{w}" for w in rng.integers(0, vocab, rng.integers(3, 40))] for _ in range(num_docs)]
    return Corpus.from_token_lists(docs, vocab=[f"w{w}" for w in range(vocab)])


GRID = np.log([0.05, 0.3, 0.9, 2.5, 7.0])


@pytest.mark.parametrize("asymmetric", [False, True])
def test_learned_alpha_log_density_ratio_is_the_polya_formula(monkeypatch, asymmetric):
    K, prior = 4, (1.7, 0.6)
    d = lda.data(_corpus())
    kernel = lda.partially_collapsed(K, learn_alpha="sample", asymmetric_alpha=asymmetric, alpha_prior=prior)
    state = kernel.init(jax.random.key(3), d)
    u0 = np.log(np.array([0.4, 0.15, 1.3, 0.8])) if asymmetric else np.float64(np.log(0.35))
    state = state._replace(log_alpha=jnp.asarray(u0, jnp.float32))
    u0 = np.asarray(state.log_alpha, np.float64)
    ratios = _ratios(monkeypatch, lda.sample_log_alpha, jax.random.key(1), state, d, K=K, prior=prior)
    ndk = _doc_topic_counts(d, state.z, K)
    nd = ndk.sum(axis=1)
    shape, rate = prior

    def log_density(log_alpha, k):  # log p(u_k | z, the other α) + const, u = log α_k
        alpha = np.broadcast_to(np.exp(log_alpha), (K,))
        total = alpha.sum()
        return (shape * log_alpha[k] - rate * np.exp(log_alpha[k])
                + np.sum(gammaln(total) - gammaln(nd + total))
                + np.sum(gammaln(ndk + alpha) - gammaln(alpha)))

    assert len(ratios) == (K if asymmetric else 1)
    for k, ratio in enumerate(ratios):
        for u in GRID:
            here = np.array(u0, copy=True).reshape(-1)
            here[k] = u
            start = u0.reshape(-1)
            expected = log_density(here, k) - log_density(start, k)
            got = float(ratio(jnp.float32(u)))
            assert got == pytest.approx(expected, rel=2e-4, abs=2e-3), (k, u)


def test_learned_eta_log_density_ratio_is_the_polya_formula(monkeypatch):
    K, prior = 3, (2.0, 20.0)
    d = lda.data(_corpus(seed=1))
    kernel = lda.partially_collapsed(K, learn_eta=True, eta_prior=prior)
    state = kernel.init(jax.random.key(5), d)
    state = state._replace(log_eta=jnp.float32(np.log(0.02)))
    u0 = float(state.log_eta)
    (ratio,) = _ratios(monkeypatch, lda.sample_log_eta, jax.random.key(2), state, d, K=K, prior=prior)
    nkw = _word_topic_counts(d, state.z, K)
    nk, v = nkw.sum(axis=1), nkw.shape[1]
    shape, rate = prior

    def log_density(u):
        eta = np.exp(u)
        return (shape * u - rate * eta + K * (gammaln(v * eta) - v * gammaln(eta))
                + np.sum(gammaln(nkw + eta)) - np.sum(gammaln(nk + v * eta)))

    for u in np.log([0.001, 0.008, 0.05, 0.4]):
        expected = log_density(u) - log_density(u0)
        assert float(ratio(jnp.float32(u))) == pytest.approx(expected, rel=2e-4, abs=2e-3), u


def test_uncollapsed_log_space_path_draws_from_log_theta_plus_log_phi():
    """Two words, three topics.  Document A (60 tokens of word "a", all now in topic 2):
    log φ_·a = (0, −200, −200), so θ̃_A φ̃_a underflows for every topic and the log-space path
    decides; log θ_A ≈ (−10⁵·E, −10⁵·E', 0) with α = 1e-6, so softmax(log θ_A + log φ_·a) puts
    all mass on topic 2, whereas log φ alone would put it on topic 0.  Document B (4,000 tokens
    of word "b", 1,000 in topic 1 and 3,000 in topic 2): log φ_·b = (0, −300, −300) again
    underflows; given θ_B the tokens pick topic 1 with probability θ_B1 / (θ_B1 + θ_B2), which is
    Beta(1000 + α, 3000 + α), so the number in topic 1 is beta-binomial (mean 1,000, sd 38.7)."""
    K, alpha = 3, 1e-6
    corpus = Corpus.from_token_lists([["a"] * 60, ["b"] * 4000], vocab=["a", "b"])
    d = lda.data(corpus, num_lanes=2)
    docs, mask = np.asarray(d.docs), np.asarray(d.mask)
    pos = np.zeros(docs.shape, np.int64)
    for doc in (0, 1):
        pos[docs == doc] = np.arange(int((docs == doc).sum()))
    z = np.where(docs == 0, 2, np.where(pos < 1000, 1, 2))
    z = np.where(mask, z, 0).astype(np.int32)
    log_phi = np.array([[0.0, 0.0], [-200.0, -300.0], [-200.0, -300.0]], np.float32)
    state = lda.LDAState(jnp.asarray(z), jnp.asarray(log_phi))
    draw = jax.jit(lambda k, s: lda.sample_z_uncollapsed(k, s, d, K=K, alpha=alpha))
    in_topic_1 = []
    for seed in range(4):
        out = np.asarray(draw(jax.random.key(seed), state))
        assert np.all(out[mask & (docs == 0)] == 2), np.bincount(out[mask & (docs == 0)], minlength=K)
        b = out[mask & (docs == 1)]
        assert set(np.unique(b)) <= {1, 2}
        in_topic_1.append(int(np.sum(b == 1)))
    n, a, b = 4000, 1000 + alpha, 3000 + alpha
    mean = n * a / (a + b)
    sd = np.sqrt(n * a * b * (a + b + n) / ((a + b) ** 2 * (a + b + 1)))
    for count in in_topic_1:
        assert abs(count - mean) < 5 * sd, (in_topic_1, mean, sd)


def _replay(d, z, log_phi, u, K, alpha):
    """The partially collapsed z-update by hand, float64: documents one by one, their tokens in
    order, weights φ_kw (n_dk,−i + α) with φ from log φ exactly (no floor), inverse CDF with the
    token's uniform."""
    words, docs, mask = np.asarray(d.words), np.asarray(d.docs), np.asarray(d.mask)
    z_new = np.array(z, np.int64)
    u = np.asarray(u, np.float64)
    phi = np.exp(np.asarray(log_phi, np.float64) - np.max(np.asarray(log_phi, np.float64), axis=0))
    for doc in range(np.asarray(d.doc_lengths).size):
        steps, lanes = np.nonzero(docs == doc)
        order = np.argsort(steps)
        steps, lanes = steps[order], lanes[order]
        n_d = np.bincount(z_new[steps, lanes], minlength=K).astype(np.float64)
        for s, r in zip(steps, lanes):
            n_d[z_new[s, r]] -= 1
            weights = phi[:, words[s, r]] * (n_d + alpha)
            c = np.cumsum(weights)
            k = min(int(np.sum(c <= u[s, r] * c[-1])), K - 1)
            z_new[s, r] = k
            n_d[k] += 1
    return np.where(mask, z_new, 0)


@pytest.mark.parametrize("update", ["dense", "lanes"])
@pytest.mark.parametrize("K", [20, 40])
def test_partially_collapsed_z_updates_match_a_float64_replay_on_peaked_phi(update, K):
    """Every word has one topic 30 nats above all others; every token starts in the topic after
    its word's.  Exactly, φ_kw (n_dk + α) of the other topics is at most e^-30 · 60 against
    α = 0.01 for the word's own topic, so the replay moves (almost) every token to its word's
    topic; a floor on log φ of, say, −8 nats below the top would give the other topics e^-8 ·
    n_dk and keep many tokens where they are."""
    rng = np.random.default_rng(K)
    V, alpha = 60, 0.01
    own = rng.integers(0, K, V)  # each word's topic
    docs = [[f"w{w}" for w in rng.integers(0, V, rng.integers(20, 60))] for _ in range(80)]
    d = lda.data(Corpus.from_token_lists(docs, vocab=[f"w{w}" for w in range(V)]), num_lanes=8)
    log_phi = np.full((K, V), -30.0, np.float32) + rng.normal(0, 0.5, (K, V)).astype(np.float32)
    log_phi[own, np.arange(V)] = 0.0
    words, mask = np.asarray(d.words), np.asarray(d.mask)
    z = np.where(mask, (own[words] + 1) % K, 0).astype(np.int32)
    state = lda.LDAState(jnp.asarray(z), jnp.asarray(log_phi))
    sample = {"dense": lda.sample_z_partially_collapsed, "lanes": lda.sample_z_lanes}[update]
    key = jax.random.key(7)
    got = np.asarray(jax.jit(lambda k, s: sample(k, s, d, K=K, alpha=alpha))(key, state))
    expected = _replay(d, z, log_phi, lda.token_uniforms(key, d), K, alpha)
    assert np.mean(expected[mask] == own[words[mask]]) > 0.999  # the reference itself is as designed
    mismatches = int(np.sum(got[mask] != expected[mask]))
    assert mismatches <= 2, f"{mismatches} of {int(mask.sum())} tokens differ from the float64 replay"
