"""Slice and random-walk Metropolis steps (gibbsjax.steps) and the eight-schools model that uses them.

The steps are checked as the exact conditionals are: exact moments of known densities, Geweke's
joint-distribution test and simulation-based calibration, on two models:

* a Poisson model with log rates that have no closed-form conditional (written here as a user
  would write one): y_gi ~ Poisson(e^{η_g}), η_g ~ N(m, s²), m ~ N(m0, s0²); m | η is exact, η by
  a slice or Metropolis step (element-wise, coordinate-wise or one block);
* the eight-schools model (gibbsjax.models.eight_schools): θ and μ exact, log τ by a slice or
  Metropolis step, in the collapsed and the centred sweep.

Planted wrong variants (one piece of gibbsjax.steps replaced while a test runs) must fail: a slice
step that accepts candidates without testing them against the slice, one that shrinks the wrong end
of the interval, a Metropolis step without the acceptance ratio, and one with an asymmetric
(drifting) proposal left uncorrected.  The eight-schools posterior means are compared with exact
values (quadrature over log τ) and with NumPyro's NUTS, in units of Monte Carlo standard error.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gibbsjax
from gibbsjax import random as gr
from gibbsjax import steps
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.models import eight_schools as es
from gibbsjax.steps import metropolis, metropolis_step, slice_sample, slice_step
from gibbsjax.testing import assert_moments, geweke_test, sbc

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("benchmark_eight_schools", ROOT / "benchmarks" / "eight_schools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ============================================================================ exact moments of known densities
def _chains(transition, x0, num_chains=200, num_steps=300, seed=0):
    """(chains, steps, ...) draws of ``transition(key, x)`` from ``x0``, vmapped and scanned."""
    def chain(key):
        def one(x, k):
            x = transition(k, x)
            return x, x
        return jax.lax.scan(one, x0, jax.random.split(key, num_steps))[1]

    return np.asarray(jax.jit(jax.vmap(chain))(jax.random.split(jax.random.key(seed), num_chains)))


def _gamma3(x):  # Gamma(3, 1): mean 3, variance 3; zero density for x <= 0
    return jnp.where(x > 0, 2.0 * jnp.log(jnp.where(x > 0, x, 1.0)) - x, -jnp.inf)


def test_slice_sample_draws_a_density_with_a_boundary():
    draws = _chains(lambda k, x: slice_sample(k, x, _gamma3, width=0.5), jnp.float32(1.0))
    assert_moments(draws[:, 20:], mean=3.0, var=3.0)


def test_coordinatewise_slice_draws_a_correlated_normal():
    rho = 0.8

    def log_density(x):  # N(0, [[1, ρ], [ρ, 1]]): coordinates depend on each other
        return -(x[0] ** 2 - 2 * rho * x[0] * x[1] + x[1] ** 2) / (2 * (1 - rho**2))

    draws = _chains(lambda k, x: slice_sample(k, x, log_density, width=[1.0, 2.0]), jnp.zeros(2))
    assert_moments(draws[:, 20:], mean=[0.0, 0.0], var=[1.0, 1.0], corr=rho)


def test_elementwise_steps_draw_independent_coordinates():
    loc, sd = jnp.array([-3.0, 0.0, 5.0]), jnp.array([0.5, 1.0, 4.0])

    def log_density(x):
        return -0.5 * ((x - loc) / sd) ** 2

    x0 = jnp.zeros(3)
    s = _chains(lambda k, x: slice_sample(k, x, log_density, elementwise=True), x0, seed=1)
    assert_moments(s[:, 50:], mean=loc, sd=sd)
    m = _chains(lambda k, x: metropolis(k, x, log_density, 2.4 * sd, elementwise=True), x0, num_steps=600, seed=2)
    assert_moments(m[:, 100:], mean=loc, sd=sd)
    b = _chains(lambda k, x: metropolis(k, x, lambda v: jnp.sum(log_density(v)), 1.4 * sd), x0,  # one block
                num_steps=900, seed=3)
    assert_moments(b[:, 150:], mean=loc, sd=sd)


def test_the_shrinkage_bound_keeps_the_chain_exact():
    """max_shrinks = 1 with a far too wide interval: most updates keep the current value, and the
    draws still have the exact moments (Neal's truncated shrinkage is reversible)."""
    draws = _chains(lambda k, x: slice_sample(k, x, _gamma3, width=40.0, max_steps_out=1, max_shrinks=1),
                    jnp.float32(2.0), num_steps=1500)
    assert_moments(draws[:, 100:], mean=3.0, var=3.0)
    assert np.mean(draws[:, 1:] == draws[:, :-1]) > 0.5  # the bound was reached often


def test_steps_compile_once_for_many_chains():
    """One trace of the log density for a jitted, vmapped sweep called twice (no Python loop over
    chains, no recompilation for the same shapes)."""
    traces = []

    def log_eta(state, y):
        traces.append(1)
        return jnp.sum(y * state["eta"] - jnp.exp(state["eta"])) - 0.5 * state["eta"] ** 2

    step = jax.jit(jax.vmap(sweep(slice_step("eta", log_eta)), in_axes=(0, 0, None)))
    state = {"eta": jnp.zeros(500)}
    y = jnp.array([3.0, 1.0])
    for seed in (0, 1):
        state = step(jax.random.split(jax.random.key(seed), 500), state, y)
    n = len(traces)
    state = step(jax.random.split(jax.random.key(2), 500), state, y)
    assert len(traces) == n and state["eta"].shape == (500,)


# ============================================================================ a Poisson model, written as a user would
M0, S0, S = 0.4, 0.7, 0.6  # m ~ N(M0, S0²), η_g ~ N(m, S²)


class PoissonState(NamedTuple):
    m: jax.Array
    eta: jax.Array


def _log_eta(state, y):
    """log p(η_g | m, y) per group, up to a constant."""
    return jnp.sum(y, axis=1) * state.eta - y.shape[1] * jnp.exp(state.eta) - 0.5 * jnp.square((state.eta - state.m) / S)


def _sample_m(key, state, y):
    g = state.eta.shape[0]
    precision = 1.0 / S0**2 + g / S**2
    mean = (M0 / S0**2 + jnp.sum(state.eta) / S**2) / precision
    return gr.normal(key, mean, 1.0 / jnp.sqrt(precision))


def poisson_kernel(how: str) -> Kernel:
    """The Poisson log-rate model, η moved by ``how``."""
    total = lambda s, y: jnp.sum(_log_eta(s, y))  # noqa: E731  (one scalar: coordinate-wise or block)
    eta_step = {
        "slice elementwise": slice_step("eta", _log_eta, width=1.0, elementwise=True),
        "slice coordinatewise": slice_step("eta", total, width=1.0),
        "metropolis elementwise": metropolis_step("eta", _log_eta, 0.8, elementwise=True),
        "metropolis block": metropolis_step("eta", total, 0.4),
    }[how]

    def sample_prior(key, y):
        k1, k2 = jax.random.split(key)
        m = gr.normal(k1, M0, S0)
        return PoissonState(m, gr.normal(k2, m, S, shape=(y.shape[0],)))

    def simulate_data(key, state, y):
        return jax.random.poisson(key, jnp.exp(state.eta)[:, None], y.shape).astype(y.dtype)

    return Kernel(
        init=lambda key, y: PoissonState(jnp.float32(M0), jnp.zeros(y.shape[0])),
        step=sweep(("m", _sample_m), eta_step),
        record=lambda s, y: {"m": s.m, "eta": s.eta},
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name=f"poisson ({how})",
    )


POISSON_DATA = jnp.zeros((3, 4), jnp.float32)  # 3 groups of 4 counts (a template: counts are simulated)


def _poisson_functions():
    return {
        "m": lambda s, y: s.m, "m^2": lambda s, y: s.m**2,
        "eta": lambda s, y: s.eta, "eta^2": lambda s, y: s.eta**2,
        "eta*ybar": lambda s, y: s.eta * jnp.mean(y, axis=1),
    }


POISSON_STEPS = ["slice elementwise", "slice coordinatewise", "metropolis elementwise", "metropolis block"]


@pytest.mark.parametrize("how", POISSON_STEPS)
def test_geweke_poisson(how):
    geweke_test(poisson_kernel(how), POISSON_DATA, _poisson_functions(), num_chains=500, num_steps=100,
                seed=11).assert_passes()


@pytest.mark.parametrize("how", ["slice elementwise", "metropolis elementwise"])
def test_sbc_poisson(how):
    sbc(poisson_kernel(how), POISSON_DATA, num_replications=400, num_draws=49, num_warmup=30, thin=3,
        seed=12).assert_passes()


# ============================================================================ the eight-schools model
SCHOOLS = es.data([2.0, -1.0, 5.0, 0.5], [2.0, 3.0, 1.5, 4.0])  # a template: estimates are simulated
HYPER = {"mu_loc": 1.3, "mu_scale": 4.0, "tau_scale": 3.0}


def _schools_functions():
    """Test functions with finite moments (τ's half-Cauchy prior has no mean; θ none either)."""
    return {
        "mu": lambda s, d: s.mu, "mu^2": lambda s, d: s.mu**2,
        "log_tau": lambda s, d: s.log_tau, "log_tau^2": lambda s, d: s.log_tau**2,
        "z": lambda s, d: (s.theta - s.mu) * jnp.exp(-s.log_tau),
        "z^2": lambda s, d: jnp.square((s.theta - s.mu) * jnp.exp(-s.log_tau)),
        "resid": lambda s, d: jnp.tanh((d.y - s.theta) / d.sigma),
        "atan_tau": lambda s, d: jnp.arctan(jnp.exp(s.log_tau)),
    }


SCHOOL_VARIANTS = {
    "slice, collapsed": {},
    "metropolis, collapsed": {"tau_step": "metropolis"},
    "slice, centred": {"collapsed": False},
    "metropolis, centred": {"collapsed": False, "tau_step": "metropolis"},
}


@pytest.mark.parametrize("variant", list(SCHOOL_VARIANTS))
def test_geweke_eight_schools(variant):
    kernel = es.hierarchical(**HYPER, **SCHOOL_VARIANTS[variant])
    geweke_test(kernel, SCHOOLS, _schools_functions(), num_chains=500, num_steps=100, seed=13).assert_passes()


@pytest.mark.parametrize("variant", ["slice, collapsed", "metropolis, collapsed"])
def test_sbc_eight_schools(variant):
    kernel = es.hierarchical(**HYPER, **SCHOOL_VARIANTS[variant])
    sbc(kernel, SCHOOLS, num_replications=400, num_draws=49, num_warmup=30, thin=2, seed=14).assert_passes()


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(SCHOOL_VARIANTS))
def test_geweke_and_sbc_eight_schools_long(variant):
    kernel = es.hierarchical(**HYPER, **SCHOOL_VARIANTS[variant])
    geweke_test(kernel, SCHOOLS, _schools_functions(), num_chains=1000, num_steps=300, seed=23).assert_passes()
    thin = 2 if "collapsed" in variant else 10
    sbc(kernel, SCHOOLS, num_replications=1000, num_draws=99, num_warmup=100, thin=thin, seed=24).assert_passes()


@pytest.mark.slow
@pytest.mark.parametrize("how", POISSON_STEPS)
def test_geweke_and_sbc_poisson_long(how):
    geweke_test(poisson_kernel(how), POISSON_DATA, _poisson_functions(), num_chains=1000, num_steps=300,
                seed=21).assert_passes()
    sbc(poisson_kernel(how), POISSON_DATA, num_replications=1000, num_draws=99, num_warmup=50, thin=3,
        seed=22).assert_passes()


# ============================================================================ planted wrong variants
def _no_rejection(value, level):
    """Bug: every probe counts as inside the slice (stepping out runs to its bound, the first
    shrinkage candidate is accepted): uniform on the stepped-out interval."""
    return jnp.ones(jnp.shape(value), bool)


def _shrink_to_x0(lo, hi, candidate, x0, rejected):
    """Bug (a typo): a rejected candidate left of x0 moves the left end to x0, not to the candidate,
    so after it the chain can only move right."""
    lo = jnp.where(rejected & (candidate < x0), x0, lo)
    hi = jnp.where(rejected & (candidate >= x0), candidate, hi)
    return lo, hi


def _no_ratio(log_new, log_old):
    """Bug: the acceptance ratio is left out; every proposal is accepted."""
    return jnp.zeros(jnp.shape(log_new)) + jnp.inf


def _drifting(key, x, scale):
    """Bug: an asymmetric proposal (a drift of half a scale), with no Hastings correction."""
    return x + scale * (gr.normal(key, shape=x.shape, dtype=x.dtype) + 0.5)


PLANTED = {
    "slice without rejection": ("_inside", _no_rejection, "slice"),
    "slice shrinking to the current point": ("_shrink", _shrink_to_x0, "slice"),
    "metropolis without the ratio": ("_log_accept_ratio", _no_ratio, "metropolis"),
    "metropolis with a drifting proposal": ("_propose", _drifting, "metropolis"),
}


@pytest.mark.parametrize("bug", list(PLANTED))
def test_geweke_flags_a_planted_wrong_step(bug, monkeypatch):
    name, wrong, kind = PLANTED[bug]
    monkeypatch.setattr(steps, name, wrong)
    poisson = poisson_kernel(f"{kind} elementwise")
    assert not geweke_test(poisson, POISSON_DATA, _poisson_functions(), num_chains=500, num_steps=100,
                           seed=11).passed, bug
    schools = es.hierarchical(**HYPER, tau_step=kind)
    assert not geweke_test(schools, SCHOOLS, _schools_functions(), num_chains=500, num_steps=100,
                           seed=13).passed, bug


@pytest.mark.parametrize("bug", ["slice without rejection", "metropolis with a drifting proposal"])
def test_sbc_flags_a_planted_wrong_step(bug, monkeypatch):
    name, wrong, kind = PLANTED[bug]
    monkeypatch.setattr(steps, name, wrong)
    result = sbc(es.hierarchical(**HYPER, tau_step=kind), SCHOOLS, num_replications=400, num_draws=49,
                 num_warmup=30, thin=2, seed=14)
    assert not result.passed, bug


# ============================================================================ eight schools: exact and NumPyro
def _z(a, b, se_a, se_b):
    return (np.asarray(a) - np.asarray(b)) / np.sqrt(np.square(se_a) + np.square(se_b))


def test_eight_schools_posterior_means_are_exact():
    """Rubin's data: posterior means of μ, τ and θ against quadrature over log τ, within 4 MCSE."""
    bench = _bench()
    exact = bench.exact_means(es.RUBIN_Y, es.RUBIN_SIGMA)
    for options in ({}, {"tau_step": "metropolis"}):
        idata = gibbsjax.sample(es.hierarchical(**options), es.rubin_1981(), seed=3, num_chains=4,
                                num_warmup=300, num_draws=4000, progress=False)
        for name in ("mu", "tau", "theta"):
            assert_moments(idata.posterior[name], mean=exact[name], name=name)


def _compare_with_nuts(draws, warmup, seed):
    bench = _bench()
    _, ours = bench.run_gibbsjax(seed, draws, warmup)
    _, nuts = bench.run_numpyro(bench.make_numpyro(draws, warmup), seed)
    a, b = bench.means_and_mcse(ours), bench.means_and_mcse(nuts)
    z = np.concatenate([np.ravel(_z(a[k][0], b[k][0], a[k][1], b[k][1])) for k in bench.NAMES])
    assert np.all(np.abs(z) < 4.0), dict(zip(["mu", "tau"] + [f"theta[{j}]" for j in range(8)], z.round(2)))
    return z


def test_eight_schools_agrees_with_numpyro_nuts():
    pytest.importorskip("numpyro")
    _compare_with_nuts(draws=2000, warmup=500, seed=5)


@pytest.mark.slow
def test_eight_schools_agrees_with_numpyro_nuts_long():
    pytest.importorskip("numpyro")
    _compare_with_nuts(draws=20000, warmup=1000, seed=6)


def test_eight_schools_config_runs():
    import dataclasses

    from gibbsjax.config import load_config, run_config

    config = load_config(ROOT / "configs" / "eight-schools.toml")
    assert config.model == "eight_schools.hierarchical"
    assert np.allclose(config.data.y, es.RUBIN_Y)
    short = dataclasses.replace(config.sampler, num_warmup=50, num_draws=100)
    idata = run_config(dataclasses.replace(config, sampler=short), progress=False)
    assert idata.posterior["theta"].shape == (config.sampler.num_chains, 100, 8)


# ============================================================================ bad input, before compilation
def _log(state, data):
    return -0.5 * state["x"] ** 2


@pytest.mark.parametrize("kwargs, match", [
    ({"width": 0.0}, r"width must be a positive finite number, got 0\.0"),
    ({"width": -1.0}, r"width must be a positive finite number, got -1\.0"),
    ({"width": math.inf}, r"width must be a positive finite number, got inf"),
    ({"width": [1.0, math.nan]}, r"width\[1\] must be a positive finite number, got nan"),
    ({"width": "1"}, r"width must be a positive number"),
    ({"max_steps_out": 0}, r"max_steps_out must be an integer >= 1, got 0"),
    ({"max_steps_out": 2.5}, r"max_steps_out must be an integer >= 1, got 2\.5"),
    ({"max_shrinks": 0}, r"max_shrinks must be an integer >= 1, got 0"),
    ({"elementwise": "yes"}, r"elementwise must be True or False, got 'yes'"),
])
def test_slice_step_refuses_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        slice_step("x", _log, **kwargs)
    with pytest.raises(ValueError, match=match):
        slice_sample(jax.random.key(0), 0.0, lambda x: -x**2, **kwargs)


@pytest.mark.parametrize("scale, match", [
    (0.0, r"scale must be a positive finite number, got 0\.0"),
    (-2.0, r"scale must be a positive finite number, got -2\.0"),
    (math.nan, r"scale must be a positive finite number, got nan"),
    ([0.5, 0.0], r"scale\[1\] must be a positive finite number, got 0\.0"),
    (None, r"scale must be a positive number"),
])
def test_metropolis_refuses_bad_scales(scale, match):
    with pytest.raises(ValueError, match=match):
        metropolis_step("x", _log, scale)
    with pytest.raises(ValueError, match=match):
        metropolis(jax.random.key(0), 0.0, lambda x: -x**2, scale)


def test_steps_refuse_bad_points_fields_and_densities():
    with pytest.raises(ValueError, match=r"x must be finite \(the current point of the chain\), got nan"):
        slice_sample(jax.random.key(0), jnp.float32(jnp.nan), lambda x: -x**2)
    with pytest.raises(ValueError, match=r"x\[1\] must be finite .* got inf"):
        metropolis(jax.random.key(0), jnp.array([0.0, jnp.inf]), lambda x: -jnp.sum(x**2), 1.0)
    with pytest.raises(ValueError, match=r"field must be the name of a state field"):
        slice_step(3, _log)
    with pytest.raises(ValueError, match=r"log_density must be a callable"):
        metropolis_step("x", 1.0, 1.0)
    with pytest.raises(ValueError, match=r"the state has no field 'y'"):
        slice_step("y", _log)(jax.random.key(0), {"x": jnp.float32(0.0)}, None)
    with pytest.raises(ValueError, match=r"field 'n' must hold floating-point numbers"):
        slice_step("n", _log)(jax.random.key(0), {"n": jnp.int32(1)}, None)
    with pytest.raises(ValueError, match=r"log_density of field 'x' must return a scalar, got shape \(2,\)"):
        slice_step("x", lambda s, d: -s["x"] ** 2)(jax.random.key(0), {"x": jnp.zeros(2)}, None)
    with pytest.raises(ValueError, match=r"one log density per element, shape \(2,\), got shape \(\)"):
        metropolis_step("x", lambda s, d: -jnp.sum(s["x"] ** 2), 1.0, elementwise=True)(
            jax.random.key(0), {"x": jnp.zeros(2)}, None)
    with pytest.raises(ValueError, match=r"width of shape \(3,\) does not broadcast to the variable's shape \(2,\)"):
        slice_sample(jax.random.key(0), jnp.zeros(2), lambda x: -jnp.sum(x**2), width=[1.0, 1.0, 1.0])


def test_eight_schools_refuses_bad_input():
    with pytest.raises(ValueError, match=r"sigma\[2\] must be a positive finite number, got -1\.0"):
        es.data([1.0, 2.0, 3.0], [1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match=r"y\[0\] must be finite, got nan"):
        es.data([math.nan], [1.0])
    with pytest.raises(ValueError, match=r"y and sigma must have the same length, got 2 and 3"):
        es.data([1.0, 2.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"y must be a 1-D array of numbers, got 'a'"):
        es.data(["a"], [1.0])
    with pytest.raises(ValueError, match=r"tau_scale must be positive, got 0"):
        es.hierarchical(tau_scale=0.0)
    with pytest.raises(ValueError, match=r"step_size must be positive, got -1"):
        es.hierarchical(step_size=-1.0)
    with pytest.raises(ValueError, match=r"collapsed must be true or false, got 'no'"):
        es.hierarchical(collapsed="no")
    with pytest.raises(ValueError, match=r"init\['log_tau'\] contains NaN or infinite values"):
        gibbsjax.sample(es.hierarchical(), es.rubin_1981(), num_chains=2, num_draws=5, progress=False,
                        init={"log_tau": [0.0, math.nan]})
