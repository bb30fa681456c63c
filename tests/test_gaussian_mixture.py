"""Gaussian mixture (seed 002 §23.4): Geweke tests, Old Faithful, label switching, bad input."""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import gibbsjax
from gibbsjax import conjugate_normal as cn
from gibbsjax.config import load_config
from gibbsjax.datasets.tabular import faithful
from gibbsjax.kernel import sweep
from gibbsjax.models import gaussian_mixture as gm
from gibbsjax.testing import default_test_functions, geweke_test
from gibbsjax.specs import gaussian_mixture as gm_spec

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


# --------------------------------------------------------------------------- Geweke
def _test_functions(kernel, data):
    """Recorded values and squares, plus functions of assignments and data (power against z bugs)."""
    fns = default_test_functions(kernel, data)
    fns["n0"] = lambda s, d: jnp.sum(s.z == 0)
    fns["x_z"] = lambda s, d: jnp.sum(d.x.reshape(d.x.shape[0], -1) * (2 * s.z - 1)[:, None], axis=0)
    fns["x_x"] = lambda s, d: jnp.sum(d.x**2)
    return fns


@pytest.mark.slow  # the diagonal (multivariate) Geweke test runs by default
def test_geweke_univariate():
    kernel = gm.normal_gamma(K=2, alpha=(0.8, 2.1), mu0=1.3, lam=0.45, a=3.4, b=1.9)
    data = gm.data(np.linspace(-1.0, 1.0, 6))
    geweke_test(kernel, data, _test_functions(kernel, data), num_chains=1000, num_steps=200, seed=1).assert_passes()


def test_geweke_diagonal():
    kernel = gm.normal_gamma(K=2, alpha=(1.2, 0.7), mu0=[0.6, -1.1], lam=0.55, a=3.3, b=[2.3, 0.8], dim=2)
    data = gm.data(np.zeros((5, 2)))
    geweke_test(kernel, data, _test_functions(kernel, data), num_chains=1000, num_steps=200, seed=2).assert_passes()


@pytest.mark.slow
def test_geweke_univariate_with_data_scaled_defaults():
    kernel = gm.normal_gamma(K=3, alpha=(0.9, 1.6, 2.2), lam=0.5, a=3.0)
    data = gm.data(np.array([0.0, 1.0, 2.5, 3.0]))
    geweke_test(kernel, data, _test_functions(kernel, data), num_chains=1000, num_steps=200, seed=3).assert_passes()


@pytest.mark.slow
def test_geweke_flags_the_seeds_sum_of_squares():
    """Power: b_n = b + SS (the seed's formula) instead of b + SS/2 is caught."""
    hyper = {"mu0": 0.0, "lam": 1.0, "a": 3.0, "b": 2.0}
    good = gm.normal_gamma(K=2, alpha=1.5, **hyper)

    def wrong(key, state, d):
        post = gm.components_posterior(state, d, **hyper)
        _, _, ss = cn.component_stats(d.x[:, None], state.z, 2)
        post = post._replace(b=post.b + 0.5 * ss)  # bug: the whole sum of squares
        (log_w,), (mu, tau) = cn.sample_conjugate(key, [gm.weights_posterior(state, d, alpha=1.5)], post)
        return state._replace(log_weights=log_w, mu=mu[:, 0], tau=tau[:, 0])

    bad = good._replace(step=sweep(("z", gm.sample_z), wrong), name="wrong")
    data = gm.data(np.linspace(-1.0, 1.0, 6))
    assert not geweke_test(bad, data, _test_functions(bad, data), num_chains=1000, num_steps=200, seed=1).passed


# --------------------------------------------------------------------------- Old Faithful
@functools.lru_cache(maxsize=1)
def _faithful_run():
    config = load_config(CONFIGS / "old-faithful.toml")
    idata = gibbsjax.sample(config.kernel, config.data, seed=11, num_chains=4, num_warmup=500,
                            num_draws=2000, progress=False)
    return config, idata


def test_old_faithful_config():
    config = load_config(CONFIGS / "old-faithful.toml")
    assert config.model == "gaussian_mixture.normal_gamma" and config.hyperparameters["K"] == 2
    assert config.data.x.shape == (272,)
    assert abs(float(config.data.center[0]) - 3.4878) < 1e-3
    assert config.sampler.num_chains == 4


def test_old_faithful_four_chains_agree_and_find_both_modes():
    import arviz as az

    config, idata = _faithful_run()
    aligned = gm_spec.align(idata)
    rhat = {
        "lp": float(az.rhat(idata.sample_stats["lp"].values)),
        "log_lik": float(az.rhat(idata.posterior["log_lik"].values)),
    }
    for name in ("mu_sorted", "sigma_sorted", "weights_sorted"):
        for k in range(2):
            rhat[f"{name}[{k}]"] = float(az.rhat(idata.posterior[name].values[:, :, k]))
    for name in ("mu", "sigma", "weights"):
        for k in range(2):
            rhat[f"aligned {name}[{k}]"] = float(az.rhat(aligned.posterior[name].values[:, :, k]))
    assert max(rhat.values()) < 1.01, rhat
    mu = idata.posterior["mu_sorted"].mean(("chain", "draw")).values
    assert abs(mu[0] - 2.0) < 0.1 and abs(mu[1] - 4.3) < 0.1, mu
    sigma = idata.posterior["sigma_sorted"].mean(("chain", "draw")).values
    assert 0.2 < sigma[0] < 0.35 and 0.35 < sigma[1] < 0.5, sigma
    weights = idata.posterior["weights_sorted"].mean(("chain", "draw")).values
    assert abs(weights[0] - 0.36) < 0.05, weights
    # aligned raw means agree with the sorted ones (no within-chain switching here)
    np.testing.assert_allclose(np.sort(aligned.posterior["mu"].mean(("chain", "draw")).values), mu, atol=1e-4)
    assert "component_permutations" in aligned.posterior.attrs
    # responsibilities: per chain, aligned with the components; a 1.8-minute eruption is short
    member = aligned.posterior_mean["membership"].transpose("chain", "obs", "component").values
    assert member.shape == (4, 272, 2)
    np.testing.assert_allclose(member.sum(-1), 1.0, rtol=1e-5)
    short = int(np.argmin(aligned.posterior["mu"].mean(("chain", "draw")).values))
    x = np.asarray(config.data.x)
    assert np.all(member[:, x < 2.5, short] > 0.95) and np.all(member[:, x > 4.0, short] < 0.05)


def test_align_undoes_a_relabelled_chain():
    _, idata = _faithful_run()
    swapped = idata.copy()
    for name in ("mu", "sigma", "weights"):
        values = swapped.posterior[name].values.copy()
        values[1] = values[1, :, ::-1]
        swapped.posterior[name] = swapped.posterior[name].copy(data=values)
    aligned = gm_spec.align(swapped)
    raw = swapped.posterior["mu"].mean("draw").values
    assert not np.allclose(raw[0], raw[1], atol=0.2)  # chains disagree before alignment
    np.testing.assert_allclose(aligned.posterior["mu"].mean("draw").values[1],
                               aligned.posterior["mu"].mean("draw").values[0], atol=0.05)


@pytest.mark.slow
def test_old_faithful_both_columns_diagonal():
    x = gm.data(np.stack([faithful()["eruptions_min"], faithful()["waiting_min"]], axis=1))
    idata = gibbsjax.sample(gm.normal_gamma(K=2, dim=2), x, seed=1, num_warmup=500, num_draws=1000,
                            progress=False)
    mu = idata.posterior["mu_sorted"].mean(("chain", "draw")).values
    np.testing.assert_allclose(mu, [[2.04, 54.5], [4.29, 80.0]], rtol=0.03)


# --------------------------------------------------------------------------- log joint, priors
def test_log_joint_matches_scipy():
    kernel = gm.normal_gamma(K=2, alpha=[2.0, 3.0], mu0=0.5, lam=2.0, a=3.0, b=1.5)
    x = np.array([0.3, -1.2, 2.2, 0.9])
    with jax.enable_x64(True):
        d = gm.data(x)
        state = gm.MixtureState(
            z=jnp.array([0, 1, 1, 0], jnp.int32),
            log_weights=jnp.log(jnp.array([0.3, 0.7])),
            mu=jnp.array([0.1, 1.8]),
            tau=jnp.array([2.0, 0.5]),
        )
        got = float(jax.jit(kernel.log_joint)(state, d))
    w, mu, tau, z = np.array([0.3, 0.7]), np.array([0.1, 1.8]), np.array([2.0, 0.5]), np.array([0, 1, 1, 0])
    want = stats.dirichlet.logpdf(w, [2.0, 3.0])
    want += np.sum(stats.gamma.logpdf(tau, 3.0, scale=1 / 1.5) + stats.norm.logpdf(mu, 0.5, 1 / np.sqrt(2.0 * tau)))
    want += np.sum(np.log(w[z]) + stats.norm.logpdf(x, mu[z], 1 / np.sqrt(tau[z])))
    assert abs(got - want) < 1e-9


def test_default_prior_is_data_scaled():
    x = faithful()["eruptions_min"]
    p = gm.prior(gm.data(x), 2)
    assert abs(float(p.mu0[0]) - x.mean()) < 1e-4
    assert float(p.lam) == pytest.approx(0.01) and float(p.a) == 1.5
    assert float(p.b[0]) == pytest.approx(1.5 * x.var(ddof=1) / 4, rel=1e-5)
    both = gm.data(np.stack([x, 2 * x], axis=1))
    p2 = gm.prior(both, 2, b=None)  # K^(2/D) = 2 for D = 2
    np.testing.assert_allclose(p2.b, 1.5 * np.array([1, 4]) * x.var(ddof=1) / 2, rtol=1e-5)


def test_posterior_update_by_hand():
    prior = cn.NormalGamma(jnp.array([1.0]), jnp.array(2.0), jnp.array(3.0), jnp.array([4.0]))
    x = jnp.array([[0.0], [2.0], [7.0]])
    n, xbar, ss = cn.component_stats(x, jnp.array([0, 0, 1]), 2)
    post = cn.posterior(prior, n, xbar, ss)
    # component 0: n = 2, mean 1, SS = 2; component 1: n = 1, mean 7, SS = 0
    np.testing.assert_allclose(post.lam[:, 0], [4.0, 3.0])
    np.testing.assert_allclose(post.mu0[:, 0], [1.0, (2 * 1 + 7) / 3])
    np.testing.assert_allclose(post.a[:, 0], [4.0, 3.5])
    np.testing.assert_allclose(post.b[:, 0], [4.0 + 1.0, 4.0 + 0.5 * 2 * 1 * 36 / 3], rtol=1e-6)


@pytest.mark.parametrize("dim, x", [(None, np.arange(5.0)), (2, np.arange(10.0).reshape(5, 2))])
def test_recorded_shapes_match_the_declared_dims(dim, x):
    """What ArviZ needs, checked abstractly (no compilation)."""
    kernel, data = gm.normal_gamma(K=3, dim=dim), gm.data(x)
    state = jax.eval_shape(kernel.init, jax.random.key(0), data)
    recorded = jax.eval_shape(kernel.record, state, data)
    recorded.update(jax.eval_shape(kernel.accumulate, state, data))
    recorded.update(jax.eval_shape(kernel.log_likelihood, state, data))
    assert set(recorded) == set(kernel.dims)
    for name, value in recorded.items():
        assert value.ndim == len(kernel.dims[name]), name


def test_same_hyperparameters_reuse_the_kernel():
    assert gm.normal_gamma(K=2) is gm.normal_gamma(K=2)
    assert gm.normal_gamma(K=3, mu0=[0, 1], b=[1, 2], dim=2) is gm.normal_gamma(K=3, mu0=(0.0, 1.0), b=(1.0, 2.0), dim=2)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"K": 0}, "K must be an integer >= 1"),
        ({"K": 2.5}, "K must be an integer"),
        ({"K": True}, "K must be an integer"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": [1.0, -1.0]}, "alpha"),
        ({"alpha": [1.0, 1.0, 1.0]}, "alpha must be"),
        ({"lam": 0.0}, "lam = 0 makes the Normal-Gamma prior improper.*allow_improper"),
        ({"a": 0.0}, "allow_improper"),
        ({"b": 0.0}, "allow_improper"),
        ({"lam": -1.0, "allow_improper": True}, "lam must be positive"),
        ({"mu0": float("inf")}, "mu0 must be finite"),
        ({"mu0": [0.0, 1.0]}, "mu0 must be a scalar or shape \\(1,\\)"),
        ({"b": [1.0, 2.0, 3.0], "dim": 2}, "b must be"),
        ({"dim": 0}, "dim"),
        ({"lam": "x"}, "lam must be a number"),
        ({"allow_improper": "yes"}, "allow_improper"),
    ],
)
def test_factory_rejects_bad_hyperparameters(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        gm.normal_gamma(**kwargs)


def test_improper_prior_needs_the_opt_in_and_then_has_no_prior_sampler():
    kernel = gm.normal_gamma(K=2, mu0=0.0, lam=0.0, a=0.0, b=0.0, allow_improper=True)
    assert kernel.sample_prior is None
    with pytest.raises(ValueError, match="sample_prior"):
        geweke_test(kernel, gm.data([1.0, 2.0]))


@pytest.mark.parametrize(
    "x, msg",
    [
        ([], "empty"),
        ([1.0, float("nan")], "NaN"),
        ([[1.0, np.inf]], "NaN or infinite"),
        (np.zeros((2, 2, 2)), "shape \\(N,\\) or \\(N, D\\)"),
        (["a"], "numbers"),
        (np.zeros((3, 0)), "no dimensions"),
    ],
)
def test_data_rejects_bad_input(x, msg):
    with pytest.raises(ValueError, match=msg):
        gm.data(x)


def test_kernel_rejects_data_of_the_wrong_shape():
    with pytest.raises(ValueError, match="dim=2"):
        gm.normal_gamma(K=2).init(jax.random.key(0), gm.data(np.zeros((4, 2))))
    with pytest.raises(ValueError, match="dim=3"):
        gm.normal_gamma(K=2, dim=3).init(jax.random.key(0), gm.data(np.zeros((4, 2))))
    with pytest.raises(ValueError, match="gaussian_mixture.data"):
        gm.normal_gamma(K=2).init(jax.random.key(0), np.zeros(4))
