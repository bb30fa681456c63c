"""Tests of gibbsjax.testing: the Geweke test, moment checks, chi-square test and SBC."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax.kernel import Kernel, sweep
from gibbsjax.testing import (
    ChiSquareResult,
    GewekeResult,
    assert_moments,
    chi_square_test,
    default_test_functions,
    geweke_test,
    moment_zscores,
    plot_sbc_ranks,
    recorded_test_functions,
    sbc,
    SBCResult,
)

# ---------------------------------------------------------------------------
# A tiny semi-conjugate model: y_i ~ N(mu, 1/tau), mu ~ N(0, 1), tau ~ Gamma(2, 1)
# ---------------------------------------------------------------------------

A0, B0 = 2.0, 1.0  # Gamma(shape, rate) prior of tau


class Data(NamedTuple):
    y: jax.Array
    n: int  # a static (non-array) leaf: must stay fixed in the Geweke test


class State(NamedTuple):
    mu: jax.Array
    tau: jax.Array


def make_kernel(bug: str | None = None) -> Kernel:
    def sample_mu(key, s, d):
        prior_prec = 0.0 if bug == "drop_prior" else 1.0
        prec = prior_prec + d.n * s.tau
        m = s.tau * jnp.sum(d.y) / prec
        scale = 1.0 / prec if bug == "var_for_sd" else 1.0 / jnp.sqrt(prec)
        return m + scale * jax.random.normal(key)

    def sample_tau(key, s, d):
        shape = A0 + d.n / 2.0
        rate = B0 + 0.5 * jnp.sum(jnp.square(d.y - s.mu))
        return jax.random.gamma(key, shape) / rate

    def sample_prior(key, d):
        k1, k2 = jax.random.split(key)
        return State(jax.random.normal(k1), jax.random.gamma(k2, A0) / B0)

    def simulate_data(key, s, d):
        y = s.mu + jax.random.normal(key, d.y.shape) / jnp.sqrt(s.tau)
        return d._replace(y=y)

    return Kernel(
        init=sample_prior,
        step=sweep(("mu", sample_mu), ("tau", sample_tau)),
        record=lambda s, d: {"mu": s.mu, "tau": s.tau},
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name=f"normal-gamma({bug or 'correct'})",
    )


DATA = Data(y=jnp.array([0.3, -1.2, 0.8, 1.5, 0.1]), n=5)


# ---------------------------------------------------------------------------
# Geweke
# ---------------------------------------------------------------------------


def test_geweke_passes_for_correct_kernel():
    result = geweke_test(make_kernel(), DATA, num_chains=1000, num_steps=200, seed=0)
    assert isinstance(result, GewekeResult)
    assert result.names == ("mu", "mu^2", "tau", "tau^2")
    assert result.passed, str(result)
    result.assert_passes()
    # Both simulators estimate the prior moments: E mu = 0, E mu^2 = 1, E tau = 2, E tau^2 = 6.
    np.testing.assert_allclose(result.mean_mc, [0.0, 1.0, 2.0, 6.0], atol=0.05)
    np.testing.assert_allclose(result.mean_sc, [0.0, 1.0, 2.0, 6.0], atol=0.15)
    assert result.num_prior_draws == 200_000
    assert np.all(result.se_sc > result.se_mc)  # autocorrelated chains vs iid draws
    assert "PASSED" in str(result) and "tau^2" in str(result)


@pytest.mark.parametrize("bug", ["var_for_sd", "drop_prior"])
def test_geweke_flags_wrong_conditional(bug):
    result = geweke_test(make_kernel(bug), DATA, num_chains=500, num_steps=100, seed=0)
    assert not result.passed, str(result)
    assert result.failures
    with pytest.raises(AssertionError, match="FAIL"):
        result.assert_passes()


def test_geweke_custom_array_test_functions():
    fns = default_test_functions(make_kernel(), DATA)
    fns["mu_y"] = lambda s, d: s.mu * d.y  # array-valued: one test per element
    fns["n_is_static"] = lambda s, d: jnp.asarray(d.n, jnp.float32)
    result = geweke_test(make_kernel(), DATA, fns, num_chains=300, num_steps=50, seed=1)
    assert result.names[4:] == tuple(f"mu_y[{i}]" for i in range(5)) + ("n_is_static",)
    assert result.mean_mc[-1] == result.mean_sc[-1] == 5.0
    assert result.z[-1] == 0.0  # zero-variance function with equal means
    assert result.passed, str(result)
    # E[mu * y_i] = E[mu^2] = 1
    np.testing.assert_allclose(result.mean_mc[4:9], 1.0, atol=0.1)


def test_geweke_float64():
    with jax.enable_x64(True):
        data = Data(y=jnp.zeros(5), n=5)
        assert data.y.dtype == jnp.float64
        result = geweke_test(make_kernel(), data, num_chains=200, num_steps=20, seed=jax.random.key(3))
    assert result.passed, str(result)


def test_geweke_rejects_bad_simulated_shapes():
    k = make_kernel()
    bad = k._replace(simulate_data=lambda key, s, d: d._replace(y=jnp.zeros(3)))
    with pytest.raises(ValueError, match="shapes"):
        geweke_test(bad, DATA, num_chains=2, num_steps=1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kernel=make_kernel()._replace(sample_prior=None)), "sample_prior"),
        (dict(kernel=make_kernel()._replace(simulate_data=None)), "simulate_data"),
        (dict(num_chains=1), "num_chains"),
        (dict(num_chains=10.5), "num_chains"),
        (dict(num_steps=0), "num_steps"),
        (dict(num_prior_draws=1), "num_prior_draws"),
        (dict(alpha=0.0), "alpha"),
        (dict(test_functions={}), "test_functions"),
        (dict(test_functions={"a": 1.0}), "test_functions"),
        (dict(seed="x"), "seed"),
    ],
)
def test_geweke_argument_errors(kwargs, match):
    args = dict(kernel=make_kernel(), data=DATA)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        geweke_test(**args)


# ---------------------------------------------------------------------------
# Moments
# ---------------------------------------------------------------------------


def ar1(rng, phi, num_chains, num_draws, mean=0.0, sd=1.0):
    """AR(1) chains started in stationarity: N(mean, sd^2) marginals."""
    x = np.empty((num_chains, num_draws))
    x[:, 0] = rng.normal(size=num_chains)
    eps = rng.normal(size=(num_chains, num_draws)) * np.sqrt(1 - phi**2)
    for t in range(1, num_draws):
        x[:, t] = phi * x[:, t - 1] + eps[:, t]
    return mean + sd * x


def test_assert_moments_iid():
    rng = np.random.default_rng(0)
    cov = np.array([[4.0, 1.2], [1.2, 1.0]])  # corr 0.6
    x = rng.multivariate_normal([1.0, -2.0], cov, size=(4, 2000))
    checks = assert_moments(x, mean=[1.0, -2.0], var=[4.0, 1.0], sd=[2.0, 1.0], corr=0.6, name="theta")
    assert [c.label for c in checks] == [
        "mean(theta[0])", "mean(theta[1])", "var(theta[0])", "var(theta[1])",
        "sd(theta[0])", "sd(theta[1])", "corr(theta[0], theta[1])",
    ]
    # iid: MCSE of the mean is about sd / sqrt(N)
    assert checks[0].mcse == pytest.approx(2.0 / np.sqrt(8000), rel=0.1)
    # var of a normal: sqrt(2) sigma^2 / sqrt(N); corr: (1 - rho^2) / sqrt(N)
    assert checks[2].mcse == pytest.approx(np.sqrt(2) * 4.0 / np.sqrt(8000), rel=0.1)
    assert checks[6].mcse == pytest.approx((1 - 0.36) / np.sqrt(8000), rel=0.1)


def test_assert_moments_ar1_accounts_for_autocorrelation():
    rng = np.random.default_rng(1)
    phi = 0.9
    x = ar1(rng, phi, 4, 5000, mean=3.0, sd=2.0)
    checks = assert_moments(x, mean=3.0, var=4.0, sd=2.0)
    # MCSE of the mean: sd * sqrt((1 + phi) / (1 - phi) / N), about 4.4x the naive one
    expected = 2.0 * np.sqrt((1 + phi) / (1 - phi) / x.size)
    assert checks[0].mcse == pytest.approx(expected, rel=0.2)
    # A shift of 2 naive standard errors is fine for the correlated chain ...
    naive = 2.0 / np.sqrt(x.size)
    assert_moments(x + 2 * naive, mean=3.0)
    # ... but a shift of 6 true MCSEs is not.
    with pytest.raises(AssertionError, match="mean"):
        assert_moments(x + 6 * expected, mean=3.0)


def test_assert_moments_raises_with_clear_message():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 1000))
    with pytest.raises(AssertionError) as info:
        assert_moments(x + 0.2, mean=0.0, sd=1.0)
    msg = str(info.value)
    assert "mean(x)" in msg and "expected 0" in msg and "MCSE" in msg and "z = " in msg
    assert "FAIL" in msg
    with pytest.raises(AssertionError, match="var"):
        assert_moments(x * 1.2, var=1.0)
    y = np.stack([x, x * 0.5 + rng.normal(size=x.shape)], axis=-1)  # corr 0.447
    assert_moments(y, corr=0.5 / np.sqrt(1.25))
    with pytest.raises(AssertionError, match="corr"):
        assert_moments(y, corr=0.3)


def test_moment_zscores_inferencedata_and_nan_skip():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(3)
    idata = az.from_dict(posterior={"beta": rng.normal(size=(2, 500, 3))})
    checks = moment_zscores(idata.posterior["beta"], mean=[0.0, np.nan, 0.0])
    assert [c.label for c in checks] == ["mean(beta[0])", "mean(beta[2])"]
    assert all(abs(c.z) < 4 for c in checks)
    with pytest.raises(TypeError):
        moment_zscores(idata, mean=0.0)


def test_moment_argument_errors():
    x = np.zeros((2, 100))
    with pytest.raises(ValueError, match="at least one"):
        moment_zscores(x)
    with pytest.raises(ValueError, match="chain, draw"):
        moment_zscores(np.zeros(100), mean=0.0)
    with pytest.raises(ValueError, match="broadcast"):
        moment_zscores(np.zeros((2, 100, 3)), mean=[0.0, 1.0])
    with pytest.raises(ValueError, match="corr"):
        moment_zscores(x, corr=0.5)
    # constant draws equal to the expectation: z = 0, not NaN
    assert moment_zscores(x, mean=0.0)[0].z == 0.0


# ---------------------------------------------------------------------------
# Chi-square
# ---------------------------------------------------------------------------


def test_chi_square_passes_and_fails():
    rng = np.random.default_rng(0)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    res = chi_square_test(rng.multinomial(5000, p), p)
    assert isinstance(res, ChiSquareResult)
    stat, dof, pval = res
    assert dof == 3 and pval > 1e-3
    q = np.array([0.37, 0.32, 0.2, 0.11])
    assert chi_square_test(rng.multinomial(5000, q), p).p_value < 1e-4


def test_chi_square_pooling():
    rng = np.random.default_rng(1)
    # 3 big bins + 20 tiny ones (expected 0.5 each at n=1000): pooled into one bin of 10
    p = np.concatenate([[0.3, 0.3, 0.39], np.full(20, 0.0005)])
    counts = rng.multinomial(1000, p)
    stat, dof, pval = chi_square_test(counts, p)
    assert dof == 3
    assert pval > 1e-3
    # pooled bin below min_expected: merged into the smallest remaining bin
    p2 = np.array([0.5, 0.49, 0.005, 0.005])
    assert chi_square_test(rng.multinomial(200, p2), p2).dof == 1
    # impossible states pooled with nothing: visiting one fails outright
    p3 = np.array([0.5, 0.5, 0.0])
    assert chi_square_test([10, 10, 0], p3).dof == 1
    assert chi_square_test([10, 10, 1], p3) == (np.inf, 1, 0.0)
    # without pooling, the sparse bins would dominate: all 20 tiny bins over-visited
    bad = counts.copy()
    bad[3:] += 3
    assert chi_square_test(bad, p).p_value < 1e-6


def test_chi_square_errors():
    with pytest.raises(ValueError, match="shape"):
        chi_square_test([1, 2, 3], [0.5, 0.5])
    with pytest.raises(ValueError, match="sum to 1"):
        chi_square_test([1, 2], [0.5, 0.6])
    with pytest.raises(ValueError, match="non-negative"):
        chi_square_test([1, -2], [0.5, 0.5])
    with pytest.raises(ValueError, match="fewer than two bins"):
        chi_square_test([3, 2], [0.5, 0.5])


# ---------------------------------------------------------------------------
# Python floats from one-element arrays of any rank (numpy 2.5 forbids float() of those)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [np.float64(0.25), np.array(0.25), np.array([0.25]), np.array([[0.25]]),
                                   jnp.array([0.25])])
def test_scalar_helper_returns_a_python_float(value):
    from gibbsjax.testing.moments import _scalar

    out = _scalar(value)
    assert type(out) is float and out == 0.25
    with pytest.raises(ValueError, match="single number"):
        _scalar(np.array([0.25, 0.5]))


def test_moment_checks_accept_an_mcse_returned_as_a_one_element_array(monkeypatch):
    """Whatever shape ArviZ gives the MCSE of one variable (0-d here, 1-element arrays in
    other versions), the checks hold Python floats; ``float()`` of a (1,) array raises
    on numpy 2.5, ``.item()`` does not."""
    import arviz as az

    real = az.mcse
    monkeypatch.setattr(az, "mcse", lambda x, method: np.atleast_1d(np.asarray(real(x, method=method))))
    x = np.random.default_rng(0).normal(2.0, 3.0, size=(4, 500))
    checks = moment_zscores(x, mean=2.0, sd=3.0)
    for c in checks:
        assert all(type(v) is float for v in (c.estimate, c.expected, c.mcse, c.z)), c
    corr = moment_zscores(np.stack([x, x + np.random.default_rng(1).normal(size=x.shape)], -1), corr=np.array(0.9))
    assert type(corr[0].mcse) is float


# ---------------------------------------------------------------------------
# Simulation-based calibration
# ---------------------------------------------------------------------------


def test_sbc_passes_for_correct_kernel():
    result = sbc(make_kernel(), DATA, num_replications=600, num_draws=99, num_warmup=10, seed=0)
    assert isinstance(result, SBCResult)
    assert result.names == ("mu", "tau")
    assert result.ranks.shape == (600, 2) and result.ranks.min() >= 0 and result.ranks.max() <= 99
    assert result.num_bins == 20 and np.allclose(result.bin_probabilities(), 0.05)
    assert result.bin_counts().sum(axis=1).tolist() == [600, 600]
    assert result.passed, str(result)
    result.assert_passes()
    assert "PASSED" in str(result) and "tau" in str(result)


def test_sbc_flags_wrong_conditional():
    """A variance where a standard deviation belongs: posteriors of mu too narrow.  (Dropping the
    N(0, 1) prior of mu is too small a change with 5 observations for 600 replications; the
    Geweke test above catches it.)"""
    result = sbc(make_kernel("var_for_sd"), DATA, num_replications=600, num_draws=99, num_warmup=10, seed=0)
    assert not result.passed, str(result)
    with pytest.raises(AssertionError, match="FAIL"):
        result.assert_passes()


def test_sbc_ranks_of_a_discrete_parameter_are_uniform_with_ties_broken():
    """theta ~ Bernoulli(0.3), y | theta ~ Bernoulli(0.8 if theta else 0.2): the sampler draws
    the exact posterior independently each sweep.  Without tie-breaking the ranks would take
    few values; with it, they are uniform on 0..19.  An overconfident posterior (likelihood
    0.95 / 0.05 instead of 0.8 / 0.2) fails.  (Sampling the prior instead of the posterior would
    pass: SBC cannot see that bug, the Geweke test can.)"""

    def posterior_p(y, high=0.8):
        like1 = jnp.where(y == 1, high, 1 - high)
        like0 = jnp.where(y == 1, 1 - high, high)
        return 0.3 * like1 / (0.3 * like1 + 0.7 * like0)

    def make(p_of):
        return Kernel(
            init=lambda key, y: jnp.int32(0),
            step=lambda key, th, y: jax.random.bernoulli(key, p_of(y)).astype(jnp.int32),
            record=lambda th, y: {"theta": th},
            sample_prior=lambda key, y: jax.random.bernoulli(key, 0.3).astype(jnp.int32),
            simulate_data=lambda key, th, y: jax.random.bernoulli(key, jnp.where(th == 1, 0.8, 0.2)).astype(jnp.int32),
        )

    good = sbc(make(posterior_p), jnp.int32(0), num_replications=1000, num_draws=19, num_warmup=1, seed=1)
    assert good.passed, str(good)
    assert len(np.unique(good.ranks)) == 20
    bad = sbc(make(lambda y: posterior_p(y, 0.95)), jnp.int32(0), num_replications=1000, num_draws=19, num_warmup=1, seed=1)
    assert not bad.passed, str(bad)


def test_sbc_array_functions_chains_and_recorded_defaults():
    fns = recorded_test_functions(make_kernel(), DATA)
    assert sorted(fns) == ["mu", "tau"]
    fns["mu_y"] = lambda s, d: s.mu * d.y
    result = sbc(make_kernel(), DATA, fns, num_replications=100, num_draws=20, num_chains=4, thin=2,
                 num_warmup=5, num_bins=7, seed=jax.random.key(2))
    assert result.names == ("mu", "tau") + tuple(f"mu_y[{i}]" for i in range(5))
    assert result.ranks.shape == (100, 7) and result.ranks.max() <= 20
    assert result.num_bins == 7
    np.testing.assert_allclose(result.bin_probabilities().sum(), 1.0)
    fig = plot_sbc_ranks(result, ["mu", "tau", "mu_y[0]"], ncols=2)
    assert sum(ax.get_visible() for ax in fig.axes) == 3
    import matplotlib.pyplot as plt

    plt.close(fig)
    with pytest.raises(ValueError, match="names"):
        plot_sbc_ranks(result, ["nope"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_replications": 1}, "num_replications"),
        ({"num_draws": 0}, "num_draws"),
        ({"num_draws": 10, "num_chains": 3}, "multiple of num_chains"),
        ({"thin": 0}, "thin"),
        ({"num_warmup": -1}, "num_warmup"),
        ({"num_bins": 200}, "num_bins"),
        ({"alpha": 2.0}, "alpha"),
        ({"test_functions": {}}, "test_functions"),
        ({"seed": "x"}, "seed"),
    ],
)
def test_sbc_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sbc(make_kernel(), DATA, **kwargs)
    with pytest.raises(ValueError, match="sample_prior"):
        sbc(make_kernel()._replace(sample_prior=None), DATA)
