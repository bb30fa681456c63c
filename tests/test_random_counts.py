"""gibbsjax.random.log_dirichlet_counts: the sparse-count Dirichlet of LDA's φ and θ draws
(and its GPU twin log_dirichlet_dense, which must have the same distribution).

Its gammas come from two samplers: shapes below 1 from an exponential-envelope
rejection sampler with a boost (``_log_gamma_below_one``), the others from
Marsaglia-Tsang on their gathered indices.  Checked against the exact log-gamma
distribution (KS, cumulants) and Dirichlet moments, with tolerances in Monte
Carlo standard errors and fixed seeds (the checks of test_random.py); a sampler
that skips the rejection step fails the same checks.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp

from gibbsjax import random as gr
from test_random import N, check_ks, check_mean, check_var, log_gamma_cdf, log_gamma_cumulants


@functools.partial(jax.jit, static_argnames=("rounds", "chunk"))
def _mixed(key, a, rounds=gr._SMALL_ROUNDS, chunk=gr._CHUNK):
    return gr._log_gamma_mixed(key, a, jnp.float32, rounds, chunk)


def mixed(i, a, **kw):
    """log G for every shape in ``a`` (flat), through the mixed sampler."""
    return np.asarray(_mixed(jax.random.key(i), jnp.asarray(a, jnp.float32), **kw), np.float64)


@pytest.mark.parametrize("i, a", list(enumerate([1e-3, 0.01, 0.1, 0.5, 0.95])))
def test_small_shapes_have_the_log_gamma_distribution(i, a):
    lg = mixed(300 + i, np.full(N, a))
    assert np.all(np.isfinite(lg))
    mean, var, mu4 = log_gamma_cumulants(a)
    check_mean(lg, mean, var, f"E log gamma({a})")
    check_var(lg, var, mu4, f"Var log gamma({a})")
    check_ks(lg, log_gamma_cdf(a), f"log gamma({a})")


def test_mixed_shapes_each_have_their_distribution():
    """Shapes below and above 1 interleaved at random positions (as zero and nonzero counts
    of a topic-word table): each group has its own exact distribution."""
    rng = np.random.default_rng(0)
    shapes = np.array([0.01, 1.01, 3.01, 40.01])
    which = rng.choice(4, size=N, p=[0.7, 0.1, 0.1, 0.1])
    lg = mixed(310, shapes[which])
    assert np.all(np.isfinite(lg))
    for j, a in enumerate(shapes):
        check_ks(lg[which == j], log_gamma_cdf(a), f"log gamma({a}) among mixed shapes")


def test_draws_do_not_depend_on_chunking_or_rounds(monkeypatch):
    """Each element's draw is the first accepted proposal of its own counter streams: neither the
    small shapes' rounds and chunks nor the Marsaglia-Tsang rounds of the others change it, and
    the one-chunk path (``base``: 5,000 shapes, both samplers on every element) gives the draws of
    the gathered chunks."""
    import gibbsjax.random as random_module

    rng = np.random.default_rng(1)
    a = np.where(rng.random(5000) < 0.9, 0.3, 2.0 + rng.random(5000))
    base = mixed(320, a)
    np.testing.assert_allclose(mixed(320, a, rounds=1, chunk=1000), base, rtol=1e-6)
    np.testing.assert_allclose(mixed(320, a, rounds=3, chunk=256), base, rtol=1e-6)
    for large_rounds, chunk in ((1, 1024), (4, 768)):  # another chunk: traced anew, with these rounds
        monkeypatch.setattr(random_module, "_LARGE_ROUNDS", large_rounds)
        np.testing.assert_allclose(mixed(320, a, chunk=chunk), base, rtol=1e-6)


def test_each_marsaglia_tsang_proposal_is_compiled_once():
    """Unrolled proposal rounds do not change the draws (the test above) but each is another copy
    of the proposal in every program that draws a gamma, compiled again each time (the test suite's
    time is mostly compilation).  The Marsaglia-Tsang proposal, counted by its one inverse error
    function in the lowered program, appears once: in the general sampler and in the sparse-count
    draw, for a table of one chunk and of several; three unrolled rounds would add three."""
    def copies(f, *args):
        return jax.jit(f).lower(*args).as_text().count("erf_inv")

    k = jax.random.key(0)
    for n in (300, 3 * gr._CHUNK):
        a = jnp.full((n,), 2.0)
        assert copies(lambda k, a: gr.gamma(k, a), k, a) == 1
        assert copies(lambda k, a: gr._log_gamma_mixed(k, a, jnp.float32), k, a) == 1
        counts = jnp.zeros((3, n // 3), jnp.int32)
        assert copies(lambda k, c: gr.log_dirichlet_counts(k, c, 0.01), k, counts) == 1
        # the count sees copies: three unrolled rounds and the loop's proposal
        assert copies(lambda k, a: gr._gamma_draw(gr._key_pair(k), a, jnp.float32, False, rounds=3), k, a) == 4


def test_invalid_shapes_give_nan():
    a = np.full(N, 0.5)
    a[:4] = [-1.0, 0.0, np.nan, np.inf]
    lg = mixed(330, a)
    assert np.all(np.isnan(lg[:4])) and np.all(np.isfinite(lg[4:]))


#: the two exact Dirichlet-from-counts draws (LDA picks one per backend)
DRAWS = [gr.log_dirichlet_counts, gr.log_dirichlet_dense]


@pytest.mark.parametrize("draw", DRAWS, ids=lambda f: f.__name__)
def test_dirichlet_counts_moments(draw):
    """Rows Dir(n + c) with sparse counts: each component is Beta(a_k, a_0 − a_k)."""
    counts = np.array([[0, 0, 3, 0, 1], [7, 0, 0, 0, 0]])
    c = 0.05
    lp = draw(jax.random.key(340), np.repeat(counts[None], N // 10, axis=0), c)
    assert lp.shape == (N // 10, 2, 5) and lp.dtype == jnp.float32
    p = np.exp(np.asarray(lp, np.float64))
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-5)
    a = counts + c
    a0 = a.sum(-1, keepdims=True)
    mean = a / a0
    var = mean * (1 - mean) / (a0 + 1)
    for r in range(2):
        for k in range(5):
            check_mean(p[:, r, k], mean[r, k], var[r, k], f"E p[{r},{k}]")
    # the log of a component with count 0 is log G(c) − log of the total: its mean is
    # ψ(c) − ψ(a_0) exactly (log p_k = log B(a_k, a_0 − a_k) variate's log)
    lk = np.asarray(lp, np.float64)[:, 1, 3]
    m = sp.digamma(c) - sp.digamma(a0[1, 0])
    v = sp.polygamma(1, c) - sp.polygamma(1, a0[1, 0])
    check_mean(lk, m, v, "E log p of a zero count")


@pytest.mark.parametrize("draw", DRAWS, ids=lambda f: f.__name__)
def test_per_category_concentration_and_bad_input(draw):
    lp = draw(jax.random.key(350), jnp.zeros((3, 4), jnp.int32), jnp.array([0.1, 0.2, 0.5, 2.0]))
    assert lp.shape == (3, 4) and bool(jnp.all(jnp.isfinite(lp)))
    with pytest.raises(ValueError, match="at least one dimension"):
        draw(jax.random.key(0), 3, 0.1)
    with pytest.raises(ValueError, match="does not broadcast"):
        draw(jax.random.key(0), jnp.zeros((3, 4)), jnp.ones((2, 3, 4)))


def test_dense_draw_of_a_tiny_concentration_has_the_log_gamma_law():
    """η = 0.01 on zero counts (most of LDA's φ): log p_k = log G(c) − log Σ G; with one large
    count in the row the total is dominated by it, so check log p_k's mean ψ(c) − ψ(a_0) and
    its variance ψ'(c) − ψ'(a_0) (exact for a Dirichlet component's log)."""
    c, n = 0.01, 50
    counts = np.zeros((N, 4), np.int64)
    counts[:, 0] = n
    lp = np.asarray(gr.log_dirichlet_dense(jax.random.key(351), counts, c), np.float64)
    assert np.all(np.isfinite(lp))
    a0 = n + 4 * c
    m = sp.digamma(c) - sp.digamma(a0)
    v = sp.polygamma(1, c) - sp.polygamma(1, a0)
    check_mean(lp[:, 2], m, v, "E log p of a zero count (dense)")


def test_the_checks_reject_a_sampler_without_its_rejection_step():
    """(1 + a) E for G(1 + a) without the acceptance test is a slightly wrong law: caught."""
    a = 0.5
    u = np.asarray(gr.uniform(jax.random.key(360), (2, N)), np.float64)
    wrong = np.log1p(a) + np.log(-np.log(u[0])) + np.log(u[1]) / a
    with pytest.raises(AssertionError):
        check_ks(wrong, log_gamma_cdf(a))
