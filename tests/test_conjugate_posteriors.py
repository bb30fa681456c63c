"""Every conjugate posterior against a hand-written formula on asymmetric inputs.

Each update is recomputed here in float64 NumPy from its textbook form, with
hyperparameters that are all distinct, asymmetric matrices and vectors, a non-zero prior
mean and λ ≠ 1, so that a transposed matrix, a forgotten prior mean or a dropped λ changes
the answer.  No sampling: these are exact comparisons.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax import conjugate_normal as cn
from gibbsjax.corpus import Corpus
from gibbsjax.models import bayes_net as bn
from gibbsjax.models import gaussian_mixture as gm
from gibbsjax.models import hmm, mixtures

MU0 = np.array([1.3, -0.7])
LAM = 0.6
A = 2.2
B = np.array([0.9, 1.7])


def normal_gamma_by_hand(x, z, k, mu0, lam, a, b):
    """NormalGamma posterior from the raw sums (not from (n, x̄, SS)):
    λ_n = λ + n, μ_n = (λ μ0 + Σx)/λ_n, a_n = a + n/2, b_n = b + (Σx² + λ μ0² − λ_n μ_n²)/2."""
    x = np.asarray(x, float).reshape(len(z), -1)
    out = {name: [] for name in ("mu0", "lam", "a", "b")}
    for c in range(k):
        xs = x[np.asarray(z) == c]
        n, s, s2 = len(xs), xs.sum(0), (xs**2).sum(0)
        lam_n = lam + n
        mu_n = (lam * mu0 + s) / lam_n
        out["mu0"].append(mu_n)
        out["lam"].append(np.broadcast_to(lam_n, mu_n.shape))
        out["a"].append(np.broadcast_to(a + n / 2, mu_n.shape))
        out["b"].append(b + 0.5 * (s2 + lam * mu0**2 - lam_n * mu_n**2))
    return {name: np.array(v) for name, v in out.items()}


X2 = np.array([[0.4, 2.1], [1.9, -0.3], [-1.2, 0.8], [3.3, 1.1], [0.0, -2.5], [2.6, 0.7]])
Z2 = np.array([1, 2, 1, 1, 2, 1])  # component 0 empty: its posterior is the prior


def test_normal_gamma_posterior_matches_the_raw_sum_formula():
    with jax.enable_x64(True):
        prior = cn.NormalGamma(*(jnp.asarray(v, jnp.float64) for v in (MU0, LAM, A, B)))
        stats = cn.component_stats(jnp.asarray(X2), jnp.asarray(Z2), 3)
        post = cn.posterior(prior, *stats)
        got = {name: np.asarray(getattr(post, name)) for name in ("mu0", "lam", "a", "b")}
    want = normal_gamma_by_hand(X2, Z2, 3, MU0, LAM, A, B)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(got["mu0"][0], MU0)  # the empty component keeps the prior
    np.testing.assert_allclose(got["b"][0], B)


def test_gaussian_mixture_posteriors_match_hand_formulas():
    alpha = (0.7, 1.9, 3.1)
    with jax.enable_x64(True):
        d = gm.data(X2)
        state = gm.MixtureState(jnp.asarray(Z2, jnp.int32), jnp.zeros(3), jnp.zeros((3, 2)), jnp.ones((3, 2)))
        w = np.asarray(gm.weights_posterior(state, d, alpha=alpha))
        post = gm.components_posterior(state, d, mu0=tuple(MU0), lam=LAM, a=A, b=tuple(B))
        got = {name: np.asarray(getattr(post, name)) for name in ("mu0", "lam", "a", "b")}
    np.testing.assert_allclose(w, np.array(alpha) + np.bincount(Z2, minlength=3))
    want = normal_gamma_by_hand(X2, Z2, 3, MU0, LAM, A, B)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, err_msg=name)


# --------------------------------------------------------------------------- HMM
SEQS = [[0, 2, 1, 1, 3], [3, 3, 0], [1, 0, 2, 2, 2, 1, 0]]
PATHS = [[0, 1, 1, 2, 0], [2, 2, 1], [1, 0, 0, 2, 1, 1, 2]]
ALPHA_INIT = np.array([0.4, 1.3, 2.6])
ALPHA_TRANS = np.array([[2.0, 0.3, 0.7], [0.4, 1.1, 3.0], [0.9, 2.5, 0.2]])  # not symmetric
BETA = np.array([[0.5, 1.5, 2.5, 3.5], [1.2, 0.2, 0.8, 0.6], [2.2, 1.7, 0.1, 0.9]])


def _hmm_counts(k, v):
    init = np.zeros(k)
    trans = np.zeros((k, k))
    emit = np.zeros((k, v))
    for seq, path in zip(SEQS, PATHS):
        init[path[0]] += 1
        for t in range(1, len(path)):
            trans[path[t - 1], path[t]] += 1  # row = from, column = to
        for y, zz in zip(seq, path):
            emit[zz, y] += 1
    return init, trans, emit


def _padded_paths(num_steps):
    z = np.zeros((len(PATHS), num_steps), np.int32)
    for s, p in enumerate(PATHS):
        z[s, : len(p)] = p
        z[s, len(p):] = 2  # garbage in the padding must not count
    return jnp.asarray(z)


@pytest.mark.parametrize("alpha_trans", [ALPHA_TRANS, ALPHA_TRANS[1]])
def test_hmm_dirichlet_posteriors_match_hand_counts(alpha_trans):
    d = hmm.categorical_data(SEQS, num_symbols=4, pad_to=9)
    state = hmm.CategoricalHMMState(_padded_paths(9), jnp.zeros(3), jnp.zeros((3, 3)), jnp.zeros((3, 4)))
    init, trans, emit = _hmm_counts(3, 4)
    np.testing.assert_allclose(hmm.initial_posterior(state, d, alpha_init=tuple(ALPHA_INIT)), ALPHA_INIT + init,
                               rtol=1e-6)
    got = np.asarray(hmm.transition_posterior(state, d, alpha_trans=alpha_trans))
    # row j is A_j's posterior: alpha_trans[j, k] (or alpha_trans[k] for a vector) + n_jk
    want = np.broadcast_to(alpha_trans, (3, 3)) + trans
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not np.allclose(want, want.T)
    np.testing.assert_allclose(hmm.emission_posterior(state, d, beta=BETA), BETA + emit, rtol=1e-6)


def test_hmm_gaussian_emission_posterior_matches_the_raw_sum_formula():
    ys = [[0.4, 2.1, -1.0, 0.3, 1.9], [3.3, 0.0, -0.2], [1.1, -0.5, 2.6, 0.9, 0.8, 1.4, -2.2]]
    with jax.enable_x64(True):
        d = hmm.gaussian_data(ys, pad_to=8)
        z = _padded_paths(8)
        state = hmm.GaussianHMMState(z, jnp.zeros(3), jnp.zeros((3, 3)), jnp.zeros(3), jnp.ones(3))
        post = hmm.gaussian_emission_posterior(state, d, mu0=MU0[0], lam=LAM, a=A, b=B[1])
        got = {name: np.asarray(getattr(post, name)) for name in ("mu0", "lam", "a", "b")}
    flat_y = np.concatenate(ys)
    flat_z = np.concatenate(PATHS)
    want = normal_gamma_by_hand(flat_y, flat_z, 3, MU0[:1], LAM, A, B[1:])
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, err_msg=name)


# --------------------------------------------------------------------------- document mixtures
DOCS = [[0, 1, 1, 3], [2, 2], [3, 0, 0, 1, 2], [1], [2, 3, 3]]
LABELS = np.array([1, 0, 2, 1, 2])


def test_unigram_mixture_posteriors_match_hand_counts():
    corpus = Corpus.from_token_lists([[str(w) for w in doc] for doc in DOCS], vocab=["0", "1", "2", "3"])
    d = mixtures.unigram_data(corpus)
    alpha, lam = (0.3, 1.7, 2.9), 0.45
    state = mixtures.UnigramState(jnp.zeros(3), jnp.zeros((3, 4)), jnp.asarray(LABELS, jnp.int32))
    np.testing.assert_allclose(mixtures.pi_posterior(state, d, alpha=alpha),
                               np.array(alpha) + np.bincount(LABELS, minlength=3), rtol=1e-6)
    m = np.zeros((3, 4))
    for doc, z in zip(DOCS, LABELS):
        for w in doc:
            m[z, w] += 1
    np.testing.assert_allclose(mixtures.beta_posterior(state, d, lam=lam), m + lam, rtol=1e-6)


def test_bernoulli_mixture_posterior_matches_hand_counts():
    x = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [1, 0, 0], [0, 1, 1]])
    d = mixtures.bernoulli_data(x)
    a, b = 0.8, 2.3
    state = mixtures.BernoulliState(jnp.zeros(3), jnp.zeros((3, 3)), jnp.zeros((3, 3)),
                                    jnp.asarray(LABELS, jnp.int32))
    got = np.asarray(mixtures.p_posterior(state, d, a=a, b=b))
    n1 = np.array([x[LABELS == k].sum(0) for k in range(3)])
    n0 = np.array([(1 - x[LABELS == k]).sum(0) for k in range(3)])
    np.testing.assert_allclose(got[..., 0], a + n1, rtol=1e-6)  # a pseudo-counts of "on"
    np.testing.assert_allclose(got[..., 1], b + n0, rtol=1e-6)


# --------------------------------------------------------------------------- Bayesian network
def test_bayes_net_cpt_posterior_matches_hand_counts():
    variables = [("A", 2, []), ("B", 3, ["A"]), ("C", 2, ["A", "B"])]
    conc = {"A": [[1.5, 0.7]], "B": [[0.2, 1.1, 2.4], [3.0, 0.6, 0.9]],
            "C": [[0.5, 1.0], [1.3, 0.6], [2.0, 0.1], [0.9, 1.8], [0.4, 0.3], [2.7, 1.2]]}
    net = bn.network(variables, concentration=conc)
    rows = np.array([[0, 2, 1], [1, 0, 0], [1, 2, 1], [0, 1, 1], [1, 2, 0]])
    d = bn.data(net, rows)
    state = bn.NetState(jnp.zeros((net.num_rows, net.max_card)), jnp.asarray(rows, jnp.int32))
    got = np.asarray(bn.cpt_posterior(state, d))
    counts = {"A": np.zeros((1, 2)), "B": np.zeros((2, 3)), "C": np.zeros((6, 2))}
    for a_, b_, c_ in rows:
        counts["A"][0, a_] += 1
        counts["B"][a_, b_] += 1
        counts["C"][a_ * 3 + b_, c_] += 1  # parent configuration (A, B), A most significant
    for v, (name, card, _) in enumerate(variables):
        q = counts[name].shape[0]
        block = got[net.offset[v]:net.offset[v] + q, :card]
        np.testing.assert_allclose(block, np.asarray(conc[name]) + counts[name], rtol=1e-6, err_msg=name)
