"""Statistical and structural tests of gibbsjax.random.

Moments are compared with their exact values, with tolerances of Z standard
errors of the Monte Carlo estimate; distributions with Kolmogorov-Smirnov and
chi-square tests at p > 1e-4.  Seeds are fixed, so the tests are
deterministic; `test_checks_detect_wrong_distributions` shows that the same
checks reject slightly wrong samplers, i.e. that they can fail.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

from gibbsjax import random as gr

N = 100_000
Z = 5.0  # tolerance, in Monte Carlo standard errors
P_MIN = 1e-4  # smallest acceptable p-value of KS and chi-square tests


def key(i):
    return jax.random.key(i)


# Most draws below have shape (N,) with a parameter array of shape (N,), so
# that each sampler compiles once for the whole file.


def gamma_n(i, a):
    return gr.gamma(key(i), jnp.full(N, a, jnp.float32))


def log_gamma_n(i, a):
    return gr.log_gamma(key(i), jnp.full(N, a, jnp.float32))


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def check_mean(x, mean, var, what=""):
    """|sample mean - mean| < Z sd / sqrt(n)."""
    x = np.asarray(x, np.float64)
    se = math.sqrt(var / x.size)
    err = abs(x.mean() - mean)
    assert err < Z * se, f"{what}: mean {x.mean():.6g} vs {mean:.6g} ({err / se:.1f} standard errors)"


def check_var(x, var, mu4, what=""):
    """|sample variance - var| < Z sd(s^2), with Var(s^2) ~= (mu4 - var^2) / n."""
    x = np.asarray(x, np.float64)
    se = math.sqrt((mu4 - var**2) / x.size)
    err = abs(x.var() - var)
    assert err < Z * se, f"{what}: variance {x.var():.6g} vs {var:.6g} ({err / se:.1f} standard errors)"


def check_moments(x, dist, what=""):
    """Mean and variance against a frozen scipy distribution."""
    mean, var, kurt = (float(v) for v in dist.stats(moments="mvk"))
    check_mean(x, mean, var, what)
    check_var(x, var, (kurt + 3) * var**2, what)


def check_ks(x, cdf, what=""):
    p = st.kstest(np.asarray(x, np.float64), cdf).pvalue
    assert p > P_MIN, f"{what}: KS p-value {p:.2g}"


def check_frequencies(draws, probs, what=""):
    """Chi-square test of category counts, on bins of expected count >= 20."""
    draws = np.asarray(draws).ravel()
    probs = np.asarray(probs, np.float64)
    counts = np.bincount(draws, minlength=probs.size)
    assert counts.size == probs.size, f"{what}: index out of range"
    assert counts[probs == 0].sum() == 0, f"{what}: drew a category of probability 0"
    bins, current, expected = [], [], 0.0
    for k in np.flatnonzero(probs > 0):
        current.append(k)
        expected += probs[k] * draws.size
        if expected >= 20:
            bins.append(current)
            current, expected = [], 0.0
    if current:
        bins[-1] += current
    observed = np.array([counts[b].sum() for b in bins])
    expected = np.array([probs[b].sum() * draws.size for b in bins])
    p = st.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue
    assert p > P_MIN, f"{what}: chi-square p-value {p:.2g} over {len(bins)} bins"


def log_gamma_cdf(a):
    """CDF of log G, G ~ Gamma(a, 1); P(G <= x) ~= x^a / Gamma(a + 1) for tiny x."""

    def cdf(y):
        y = np.asarray(y, np.float64)
        tail = np.exp(a * np.minimum(y, 0.0) - sp.gammaln(a + 1))
        return np.where(y < -30, tail, sp.gammainc(a, np.exp(np.minimum(y, 700.0))))

    return cdf


def log_gamma_cumulants(a):
    """Mean, variance and fourth central moment of log G (cumulants polygamma(k-1, a))."""
    k2, k4 = sp.polygamma(1, a), sp.polygamma(3, a)
    return sp.digamma(a), k2, k4 + 3 * k2**2


# ---------------------------------------------------------------------------
# Gamma
# ---------------------------------------------------------------------------

SHAPES = [1e-3, 0.1, 0.5, 1.0, 2.5, 30.0, 1000.0]


@pytest.mark.parametrize("i, a", list(enumerate(SHAPES)))
def test_gamma_moments(i, a):
    x = gamma_n(i, a)
    assert x.shape == (N,) and x.dtype == jnp.float32
    assert bool(jnp.all(jnp.isfinite(x)) & jnp.all(x >= 0))
    check_moments(x, st.gamma(a), f"gamma({a})")
    if a < 0.01:
        # Most draws underflow to 0 in float32; the log of the same draws,
        # from log_gamma with the same key, carries the information.
        lg = log_gamma_n(i, a)
        mean, var, mu4 = log_gamma_cumulants(a)
        check_mean(lg, mean, var, f"E log gamma({a})")
        check_var(lg, var, mu4, f"Var log gamma({a})")


@pytest.mark.parametrize("i, a", list(enumerate([0.1, 0.7, 1.0, 2.5, 30.0, 1e4])))
def test_gamma_ks(i, a):
    check_ks(gamma_n(100 + i, a), st.gamma(a).cdf, f"gamma({a})")


def test_gamma_and_log_gamma_are_the_same_draws():
    a = jnp.repeat(jnp.array([0.3, 1.0, 4.0, 200.0]), N // 4)
    x = gr.gamma(key(7), a)
    lg = gr.log_gamma(key(7), a)
    np.testing.assert_allclose(np.exp(np.asarray(lg, np.float64)), x, rtol=2e-5)


def test_gamma_is_the_first_accepted_proposal():
    """However many vectorised rounds and however large the chunks, each draw is
    the first accepted proposal of the same sequence: the fallback loop
    continues the rounds exactly where they stopped."""
    a = jnp.repeat(jnp.array([1.0, 0.3, 3.0, 1.0]), N // 4)
    x = gr.gamma(key(11), a)
    # One round in chunks of 1000: about 5 % of the shape-1 elements, and
    # all but a few chunks, go through the fallback loop.
    y = gr._gamma_draw(gr._key_pair(key(11)), a, jnp.float32, log=False, rounds=1, chunk=1000)
    np.testing.assert_allclose(x, y, rtol=1e-6)
    # Three unrolled rounds (the default before 2026-11-28; now every proposal is the loop's).
    y3 = gr._gamma_draw(gr._key_pair(key(11)), a, jnp.float32, log=False, rounds=3)
    np.testing.assert_allclose(x, y3, rtol=1e-6)
    check_ks(y[: N // 4], st.gamma(1.0).cdf, "gamma(1) with fallback")


@pytest.mark.parametrize("i, a", list(enumerate([1e-4, 1e-3, 0.01])))
def test_log_gamma_tiny_shape(i, a):
    lg = log_gamma_n(200 + i, a)
    assert lg.dtype == jnp.float32
    assert bool(jnp.all(jnp.isfinite(lg)))
    mean, var, mu4 = log_gamma_cumulants(a)
    check_mean(lg, mean, var, f"E log gamma({a})")
    check_var(lg, var, mu4, f"Var log gamma({a})")
    check_ks(lg, log_gamma_cdf(a), f"log gamma({a})")


def test_log_gamma_finite_over_range():
    shapes = np.logspace(-4, 6, 50).astype(np.float32)
    lg = gr.log_gamma(key(3), jnp.repeat(shapes, N // 50))
    assert bool(jnp.all(jnp.isfinite(lg)))
    mean = np.asarray(lg, np.float64).reshape(50, -1).mean(1)
    a = shapes.astype(np.float64)
    se = np.sqrt(sp.polygamma(1, a) / (N // 50))
    assert np.all(np.abs(mean - sp.digamma(a)) < Z * se)


def test_gamma_invalid_shape_gives_nan():
    a = np.full(N, 2.0, np.float32)
    a[:4] = [-1.0, 0.0, np.nan, np.inf]
    x = gr.gamma(key(0), a)  # returns, rather than looping for ever
    assert bool(jnp.all(jnp.isnan(x[:4]))) and bool(jnp.all(jnp.isfinite(x[4:])))


# ---------------------------------------------------------------------------
# Dirichlet, beta, inverse gamma, normal-gamma, normal, uniform
# ---------------------------------------------------------------------------


def test_dirichlet_moments():
    """A batch of two concentration vectors; each component is Beta(a_k, a_0 - a_k)."""
    alpha = np.array([[0.05, 0.5, 1.0, 2.0, 7.5], [3.0, 0.2, 0.2, 1.0, 0.01]])
    lp = gr.log_dirichlet(key(20), alpha, shape=(N // 2, 2))
    assert lp.shape == (N // 2, 2, 5) and lp.dtype == jnp.float32
    p = np.exp(np.asarray(lp, np.float64))
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-5)
    for r in range(2):
        a0 = alpha[r].sum()
        for k, ak in enumerate(alpha[r]):
            check_moments(p[:, r, k], st.beta(ak, a0 - ak), f"dirichlet row {r} component {k}")
    assert jax.eval_shape(lambda: gr.dirichlet(key(22), alpha)).shape == (2, 5)
    with pytest.raises(ValueError):
        gr.dirichlet(key(22), alpha, shape=(3,))


def test_dirichlet_tiny_concentrations_float32():
    alpha = jnp.full(50, 1e-3, jnp.float32)
    rows = 20_000
    p = gr.dirichlet(key(21), alpha, shape=(rows,))
    assert p.dtype == jnp.float32 and p.shape == (rows, 50)
    assert not bool(jnp.any(jnp.isnan(p)))
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-5)
    assert bool(jnp.all(p.max(-1) > 0)), "an all-zero row"
    # Each component is Beta(1e-3, 49e-3): mean 1/50; rows are independent.
    for k in (0, 17, 49):
        check_moments(p[:, k], st.beta(1e-3, 49e-3), f"dirichlet(1e-3) component {k}")


@pytest.mark.parametrize("i, a, b", [(0, 2.0, 6.0), (1, 0.02, 0.05), (2, 50.0, 30.0), (3, 0.5, 0.5)])
def test_beta(i, a, b):
    x = gr.beta(key(30 + i), a, b, shape=(N,))
    assert bool(jnp.all((x >= 0) & (x <= 1)))
    check_moments(x, st.beta(a, b), f"beta({a}, {b})")
    if min(a, b) >= 0.5:
        check_ks(x, st.beta(a, b).cdf, f"beta({a}, {b})")


def test_inverse_gamma():
    # Mean b / (a - 1); variance b^2 / ((a - 1)^2 (a - 2)); fourth moment finite for a > 4.
    a, b = 10.0, 8.0
    x = gr.inverse_gamma(key(40), a, b, shape=(N,))
    check_mean(x, b / (a - 1), b**2 / ((a - 1) ** 2 * (a - 2)), "inverse gamma mean")
    check_moments(x, st.invgamma(a, scale=b), "inverse gamma")
    check_ks(x, st.invgamma(a, scale=b).cdf, "inverse gamma")
    # Heavy tail: only the mean exists beyond a = 1.
    a, b = 3.0, 0.5
    x = gr.inverse_gamma(key(41), a, b, shape=(N,))
    check_ks(x, st.invgamma(a, scale=b).cdf, "inverse gamma(3, 0.5)")


def test_normal_gamma():
    mu0, lam, a, b = 1.5, 2.0, 3.0, 4.0
    mu, tau = gr.normal_gamma(key(50), mu0, lam, a, b, shape=(N,))
    assert mu.shape == tau.shape == (N,)
    check_moments(tau, st.gamma(a, scale=1 / b), "normal-gamma tau")
    # mu | tau ~ N(mu0, 1 / (lam tau)): the standardised mu is N(0, 1),
    # independent of tau.
    zscore = (np.asarray(mu, np.float64) - mu0) * np.sqrt(lam * np.asarray(tau, np.float64))
    check_ks(zscore, st.norm.cdf, "normal-gamma standardised mu")
    # Marginally, mu - mu0 is Student t with 2a degrees of freedom, scale sqrt(b / (a lam)).
    check_ks(mu, st.t(2 * a, loc=mu0, scale=math.sqrt(b / (a * lam))).cdf, "normal-gamma mu")


def test_normal_gamma_small_shape():
    # tau ~ Gamma(1e-3) is mostly below 1e-38, so sd(mu) = (lam tau)^(-1/2)
    # genuinely exceeds the float32 range: mu may overflow, but is never NaN.
    mu, tau = gr.normal_gamma(key(51), 0.0, 1.0, 1e-3, 1.0, shape=(N,))
    assert not bool(jnp.any(jnp.isnan(mu))) and bool(jnp.all(tau >= 0))
    # With a = 0.05, about 1.3 % of the tau underflow to 0 (tau < 1e-45), yet
    # sd(mu) < 3e38 unless tau < 1e-77 (probability 1.4e-4): mu must stay
    # finite for nearly all of them.
    mu, tau = gr.normal_gamma(key(52), 0.0, 1.0, 0.05, 1.0, shape=(N,))
    mu, tau = np.asarray(mu), np.asarray(tau)
    assert (tau == 0).sum() > 500
    assert np.isfinite(mu[tau == 0]).mean() > 0.95
    assert np.isfinite(mu).mean() > 0.999


def test_normal():
    x = gr.normal(key(60), 3.0, 2.0, shape=(N,))
    check_moments(x, st.norm(3.0, 2.0), "normal")
    check_ks(x, st.norm(3.0, 2.0).cdf, "normal")


def test_uniform():
    u = gr.uniform(key(70), (N,))
    assert u.dtype == jnp.float32
    assert bool(jnp.all((u > 0) & (u <= 1)))
    check_ks(u, st.uniform.cdf, "uniform")


# ---------------------------------------------------------------------------
# Categorical
# ---------------------------------------------------------------------------


def probabilities(logits):
    logits = np.asarray(logits, np.float64)
    w = np.exp(logits - logits[np.isfinite(logits)].max())
    return w / w.sum()


@pytest.mark.parametrize("k", [6, 40, 300, 700])
def test_categorical_frequencies(k):
    """One walk (k <= 128), two levels unrolled (300) and reduced (700)."""
    rng = np.random.default_rng(k)
    logits = rng.normal(size=k) * 1.5
    logits[rng.random(k) < 0.25] = -np.inf
    logits[[1, k // 2, k - 2]] = 0.0
    logits[[0, -1]] = -np.inf  # zero weight at both ends
    draws = gr.categorical(key(80 + k), jnp.asarray(logits, jnp.float32), shape=(N,))
    assert draws.shape == (N,) and draws.dtype == jnp.int32
    check_frequencies(draws, probabilities(logits), f"categorical K={k}")


def test_categorical_rows_and_axis():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 6)) * 2
    logits[1, 2] = -np.inf
    draws = gr.categorical(key(90), jnp.asarray(logits.T, jnp.float32), axis=0, shape=(N // 3, 3))
    assert draws.shape == (N // 3, 3)
    for r in range(3):
        check_frequencies(draws[:, r], probabilities(logits[r]), f"row {r}")


def test_categorical_one_weight_dominates():
    logits = jnp.array([-40.0, -35.0, 0.0, -50.0, -jnp.inf])
    draws = gr.categorical(key(91), logits, shape=(N,))
    assert bool(jnp.all(draws == 2))
    # Alone among zero weights, first, inside or last.
    logits = jnp.full((3, 5), -jnp.inf).at[0, 0].set(3.0).at[1, 2].set(-30.0).at[2, 4].set(0.0)
    draws = gr.categorical(key(92), logits, shape=(N // 3, 3))
    assert bool(jnp.all(draws == jnp.array([0, 2, 4])))


def test_categorical_never_draws_zero_weight():
    """Many rows with most categories at -inf, including the last ones, where
    a rounded-up target would otherwise land."""
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(20_000, 30)) * 3
    logits[rng.random(logits.shape) < 0.7] = -np.inf
    logits[:, -5:] = -np.inf
    logits[np.arange(20_000), rng.integers(0, 25, 20_000)] = rng.normal(size=20_000)
    draws = np.asarray(gr.categorical(key(94), jnp.asarray(logits, jnp.float32)))
    assert np.all(np.isfinite(logits[np.arange(20_000), draws]))


def test_categorical_row_without_weight_gives_zero():
    logits = jnp.full((2, 4), -jnp.inf).at[1, 3].set(0.0)
    assert np.asarray(gr.categorical(key(95), logits)).tolist() == [0, 3]


# ---------------------------------------------------------------------------
# Transformations, shapes, dtypes
# ---------------------------------------------------------------------------


def test_jit_and_vmap_over_chains():
    keys = jax.random.split(key(100), 4)

    @jax.jit
    def sweep(k, a, alpha, logits):
        k1, k2, k3 = jax.random.split(k, 3)
        return (gr.gamma(k1, a, shape=(20_000,)), gr.dirichlet(k2, alpha),
                gr.categorical(k3, logits, shape=(7,)))

    a = jnp.linspace(0.5, 3.0, 4)  # one shape per chain
    alpha = jnp.array([0.5, 1.0, 2.0])
    logits = jnp.log(jnp.array([0.2, 0.0, 0.8]))
    g, p, z = jax.vmap(sweep, in_axes=(0, 0, None, None))(keys, a, alpha, logits)
    assert g.shape == (4, 20_000) and p.shape == (4, 3) and z.shape == (4, 7)
    assert g.dtype == jnp.float32 and p.dtype == jnp.float32 and z.dtype == jnp.int32
    assert bool(jnp.all(z != 1))
    assert not bool(jnp.all(p[0] == p[1])), "chains must differ"
    # The fallback while-loop runs under vmap too; each chain gets its own shape.
    for i in range(4):
        check_mean(g[i], float(a[i]), float(a[i]), f"vmapped gamma({float(a[i])})")
    # vmapped draws equal the unbatched ones (element i of a draw depends only
    # on the key, the parameter and i, so a longer draw extends a shorter one).
    k1 = jax.random.split(keys[2], 3)[0]
    np.testing.assert_allclose(g[2], gr.gamma(k1, jnp.full(N, a[2]))[:20_000], rtol=1e-6)


def test_shapes_and_dtypes():
    k = key(110)

    def aval(f):  # shape and dtype, traced without compiling
        out = jax.eval_shape(f)
        return out.shape, out.dtype

    assert aval(lambda: gr.gamma(k, jnp.ones((2, 3)))) == ((2, 3), jnp.float32)
    assert aval(lambda: gr.gamma(k, jnp.ones(3), shape=(4, 2, 3))) == ((4, 2, 3), jnp.float32)
    assert aval(lambda: gr.gamma(k, 2.0, shape=5)) == ((5,), jnp.float32)
    assert aval(lambda: gr.log_gamma(k, 2.0, dtype=jnp.bfloat16)) == ((), jnp.bfloat16)
    assert aval(lambda: gr.beta(k, jnp.ones(3), 2.0)) == ((3,), jnp.float32)
    assert aval(lambda: gr.inverse_gamma(k, 3.0, jnp.ones((2, 1)), shape=(2, 5))) == ((2, 5), jnp.float32)
    assert aval(lambda: gr.normal(k)) == ((), jnp.float32)
    assert aval(lambda: gr.normal(k, jnp.zeros(2), jnp.ones((3, 1)))) == ((3, 2), jnp.float32)
    assert aval(lambda: gr.uniform(k, (2, 2), jnp.float16)) == ((2, 2), jnp.float16)
    assert aval(lambda: gr.log_dirichlet(k, jnp.ones(4), shape=(2,))) == ((2, 4), jnp.float32)
    mu, tau = jax.eval_shape(lambda: gr.normal_gamma(k, 0.0, 1.0, jnp.ones(3), 1.0))
    assert mu.shape == tau.shape == (3,)
    assert aval(lambda: gr.categorical(k, jnp.zeros((5, 3)))) == ((5,), jnp.int32)
    assert aval(lambda: gr.categorical(k, jnp.zeros((5, 3)), axis=0, shape=(2, 3))) == ((2, 3), jnp.int32)
    assert aval(lambda: gr.categorical(k, jnp.zeros(3), shape=(4, 2))) == ((4, 2), jnp.int32)
    with pytest.raises(ValueError):
        gr.gamma(k, jnp.ones(3), shape=(4,))
    with pytest.raises(TypeError):
        gr.gamma(k, 1.0, dtype=jnp.int32)
    with pytest.raises(ValueError):
        gr.gamma(jax.random.split(k, 2), 1.0)
    with pytest.raises(ValueError):
        gr.categorical(k, jnp.zeros((5, 3)), shape=(4,))
    # Legacy uint32 keys and other key implementations work too.
    assert aval(lambda: gr.gamma(jax.random.PRNGKey(0), 1.0, shape=(3,))) == ((3,), jnp.float32)
    x = gr.gamma(jax.random.key(0, impl="rbg"), jnp.full(N, 2.0))
    check_moments(x, st.gamma(2.0), "gamma with an rbg key")


def test_float64():
    with jax.enable_x64(True):
        for i, a in enumerate([1e-3, 0.7, 50.0]):
            lg = gr.log_gamma(key(120 + i), jnp.full(N, a), dtype=jnp.float64)
            assert lg.dtype == jnp.float64
            check_ks(lg, log_gamma_cdf(a), f"log gamma({a}) float64")
        z = gr.categorical(key(122), jnp.log(jnp.array([0.1, 0.0, 0.3, 0.6])), shape=(N,))
        check_frequencies(z, [0.1, 0.0, 0.3, 0.6], "categorical float64")


# ---------------------------------------------------------------------------
# The checks themselves
# ---------------------------------------------------------------------------


def test_checks_detect_wrong_distributions():
    """The tolerances above are tight enough to catch small errors."""
    wrong = gamma_n(130, 2.5 * 1.03)  # shape off by 3 %
    with pytest.raises(AssertionError):
        check_moments(wrong, st.gamma(2.5))
    with pytest.raises(AssertionError):
        check_ks(wrong, st.gamma(2.5).cdf)
    wrong_log = log_gamma_n(131, 1.1e-3)  # 1e-3 off by 10 %
    with pytest.raises(AssertionError):
        mean, var, _ = log_gamma_cumulants(1e-3)
        check_mean(wrong_log, mean, var)
    draws = gr.categorical(key(132), jnp.log(jnp.array([0.25, 0.25, 0.26, 0.24])), shape=(N,))
    with pytest.raises(AssertionError):
        check_frequencies(draws, [0.25, 0.25, 0.25, 0.25])
    with pytest.raises(AssertionError):
        check_frequencies(jnp.array([0, 1, 2]), [0.5, 0.0, 0.5])
