"""The eight-schools hierarchical normal model (Rubin 1981), with a step for τ that has no closed form.

Rubin (1981), "Estimation in parallel randomized experiments", J. Educ. Statist.
6(4):377-401; the model as in Gelman et al., *Bayesian Data Analysis* (3rd ed.), §5.5:

    y_j | θ_j ~ N(θ_j, σ_j²)  (σ_j known),   θ_j | μ, τ ~ N(μ, τ²),
    μ ~ N(μ0, s_μ²),   τ ~ half-Cauchy(s_τ)   (Gelman 2006, "Prior distributions for
    variance parameters in hierarchical models", Bayesian Analysis 1(3)).

θ and μ have normal full conditionals; τ under a half-Cauchy prior has none, so it
is moved by a slice step (:func:`gibbsjax.steps.slice_step`) or a random-walk
Metropolis step (:func:`gibbsjax.steps.metropolis_step`) on u = log τ, whose
density carries the Jacobian τ.

Two sweeps (:func:`hierarchical`'s ``collapsed``):

* collapsed (default), a partially collapsed Gibbs sampler (van Dyk & Park 2008,
  "Partially collapsed Gibbs samplers", JASA 103(482)): log τ | y with μ and θ
  integrated out (:func:`log_tau_marginal`), then μ | τ, y (:func:`sample_mu_marginal`),
  then θ | μ, τ, y (:func:`sample_theta`).  The last two draw what the first
  integrated out, in that order, so the sweep leaves the joint posterior invariant;
  it does not suffer the funnel between τ and θ.
* centred (``collapsed=False``): θ | μ, τ, y, then μ | θ, τ (:func:`sample_mu`),
  then log τ | θ, μ (:func:`log_tau_conditional`), the textbook Gibbs sampler; it
  mixes slowly when τ is small (the funnel), and is here for comparison.

With τ² = e^{2u}, w_j = τ² / (τ² + σ_j²):

* θ_j | μ, τ, y ~ N(μ + w_j (y_j − μ), w_j σ_j²);
* μ | θ, τ ~ N(ω θ̄ + (1 − ω) μ0, 1 / (1/s_μ² + J/τ²)), ω = (J/τ²) / (1/s_μ² + J/τ²);
* μ | τ, y ~ N(m, 1/P), v_j = σ_j² + τ², P = 1/s_μ² + Σ 1/v_j, m = (μ0/s_μ² + Σ y_j/v_j) / P;
* log p(u | y) = −log(1 + τ²/s_τ²) + u − ½ Σ log v_j − ½ log P
  − ½ [Σ (y_j − m)²/v_j + (m − μ0)²/s_μ²] + const;
* log p(u | θ, μ) = −log(1 + τ²/s_τ²) + (1 − J) u − Σ (θ_j − μ)² / (2τ²) + const.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import random as gr
from gibbsjax._checks import as_numbers, check_choice, check_fits_dtype
from gibbsjax._checks import check_finite as _check_finite
from gibbsjax._checks import check_positive as _check_positive
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.steps import metropolis_step, slice_step

__all__ = [
    "SchoolsData",
    "SchoolsState",
    "RUBIN_Y",
    "RUBIN_SIGMA",
    "data",
    "rubin_1981",
    "hierarchical",
    "sample_theta",
    "sample_mu",
    "sample_mu_marginal",
    "log_tau_marginal",
    "log_tau_conditional",
]

#: the estimated treatment effects of the eight schools (Rubin 1981, Table 2; BDA3 Table 5.2)
RUBIN_Y = (28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0)
#: their standard errors
RUBIN_SIGMA = (15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0)


class SchoolsData(NamedTuple):
    """Estimates y_j and their known standard errors σ_j; build it with :func:`data`.

    Parameters
    ----------
    y : jax.Array
        (J,): the estimates.
    sigma : jax.Array
        Their standard errors, (J,), positive.

    Examples
    --------
    >>> from gibbsjax.models import eight_schools
    >>> d = eight_schools.rubin_1981()
    >>> type(d).__name__, d.y.shape
    ('SchoolsData', (8,))
    """

    y: jax.Array
    sigma: jax.Array


class SchoolsState(NamedTuple):
    """One chain's state.

    Parameters
    ----------
    mu : jax.Array
        The population mean μ (a scalar).
    log_tau : jax.Array
        u = log τ, the log of the population standard deviation (a scalar).
    theta : jax.Array
        The school effects θ_j, (J,).

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import eight_schools
    >>> d = eight_schools.rubin_1981()
    >>> state = eight_schools.hierarchical().init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('SchoolsState', ('mu', 'log_tau', 'theta'))
    """

    mu: jax.Array
    log_tau: jax.Array
    theta: jax.Array


def data(y, sigma) -> SchoolsData:
    """Validate estimates and standard errors and build the data for :func:`hierarchical`.

    Parameters
    ----------
    y : array_like
        The estimates, 1-D, finite numbers.
    sigma : array_like
        Their standard errors, 1-D of ``y``'s length, positive and finite.

    Returns
    -------
    SchoolsData
        The data, in the working float dtype.

    Raises
    ------
    ValueError
        Naming ``y`` or ``sigma`` and the first bad entry.

    Examples
    --------
    >>> d = data([28, 8, -3], [15, 10, 16])
    >>> d.y.shape, float(d.sigma[1])
    ((3,), 10.0)
    >>> data([28, 8], [15, 0])
    Traceback (most recent call last):
    ...
    ValueError: sigma[1] must be a positive finite number, got 0.0
    """
    dtype = jnp.zeros(()).dtype  # float64 under enable_x64, else float32
    arrays = {}
    for name, value in (("y", y), ("sigma", sigma)):
        arr = as_numbers(name, value, "a 1-D array of numbers")
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
        bad = ~np.isfinite(arr) if name == "y" else ~(np.isfinite(arr) & (arr > 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            want = "finite" if name == "y" else "a positive finite number"
            raise ValueError(f"{name}[{i}] must be {want}, got {float(arr[i])!r}")
        check_fits_dtype(name, arr, dtype)
        arrays[name] = arr
    if arrays["y"].shape != arrays["sigma"].shape:
        raise ValueError(f"y and sigma must have the same length, got {arrays['y'].size} and {arrays['sigma'].size}")
    if np.any(arrays["sigma"] ** 2 > float(np.finfo(dtype).max)):
        raise ValueError(f"sigma has a value whose square overflows {np.dtype(dtype).name}: rescale the data")
    return SchoolsData(jnp.asarray(arrays["y"], dtype), jnp.asarray(arrays["sigma"], dtype))


def rubin_1981() -> SchoolsData:
    """The eight schools' data (Rubin 1981; :data:`RUBIN_Y`, :data:`RUBIN_SIGMA`).

    Returns
    -------
    SchoolsData
        Eight estimates and their standard errors.

    Examples
    --------
    >>> rubin_1981().y.tolist()
    [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]
    """
    return data(RUBIN_Y, RUBIN_SIGMA)


# ============================================================================ conditionals
def sample_theta(key, state: SchoolsState, data: SchoolsData) -> jax.Array:
    """θ_j | μ, τ, y ~ N(μ + w_j (y_j − μ), w_j σ_j²), w_j = τ² / (τ² + σ_j²), independently.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : SchoolsState
        The current state (μ and log τ are used).
    data : SchoolsData
        The estimates and standard errors.

    Returns
    -------
    jax.Array
        The new θ, (J,).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([10.0, -10.0], [1.0, 1.0])
    >>> s = SchoolsState(mu=jnp.float32(0.0), log_tau=jnp.float32(0.0), theta=jnp.zeros(2))
    >>> th = jax.vmap(lambda k: sample_theta(k, s, d))(jax.random.split(jax.random.key(0), 4000))
    >>> [round(float(m)) for m in th.mean(0)], bool(abs(th.var(0)[0] - 0.5) < 0.05)   # w = 1/2
    ([5, -5], True)
    """
    two_log_sigma = 2.0 * jnp.log(data.sigma)
    w = jax.nn.sigmoid(2.0 * state.log_tau - two_log_sigma)  # τ²/(τ² + σ²), stable for every τ
    mean = state.mu + w * (data.y - state.mu)
    return gr.normal(key, mean, data.sigma * jnp.sqrt(w))


def sample_mu(key, state: SchoolsState, data: SchoolsData, *, mu_loc: float, mu_scale: float) -> jax.Array:
    """μ | θ, τ ~ N(ω θ̄ + (1 − ω) μ0, 1 / (1/s_μ² + J/τ²)), ω = (J/τ²) / (1/s_μ² + J/τ²).

    Parameters
    ----------
    key : jax.Array
        A PRNG key (as for :func:`sample_theta`).
    state : SchoolsState
        The current state; θ and log τ are used.
    data : SchoolsData
        The data (its length J).
    mu_loc, mu_scale : float
        μ0 and s_μ, the prior mean and standard deviation of μ.

    Returns
    -------
    jax.Array
        The new μ.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> s = SchoolsState(mu=jnp.float32(0.0), log_tau=jnp.float32(0.0), theta=jnp.array([1.0, 3.0]))
    >>> mu = jax.vmap(lambda k: sample_mu(k, s, data([0, 0], [1, 1]), mu_loc=0.0,
    ...     mu_scale=1e4))(jax.random.split(jax.random.key(0), 4000))
    >>> bool(abs(mu.mean() - 2.0) < 0.05), bool(abs(mu.var() - 0.5) < 0.05)   # flat prior: N(θ̄, τ²/J)
    (True, True)
    """
    J = data.y.shape[0]
    omega = jax.nn.sigmoid(math.log(J) - 2.0 * (state.log_tau - math.log(mu_scale)))
    mean = omega * jnp.mean(state.theta) + (1.0 - omega) * mu_loc
    var = 1.0 / (1.0 / (mu_scale * mu_scale) + J * jnp.exp(-2.0 * state.log_tau))
    return gr.normal(key, mean, jnp.sqrt(var))


def _marginal(state: SchoolsState, data: SchoolsData, mu_loc: float, mu_scale: float):
    """log v_j, P and m of μ | τ, y (θ integrated out)."""
    log_v = jnp.logaddexp(2.0 * jnp.log(data.sigma), 2.0 * state.log_tau)
    inv_v = jnp.exp(-log_v)
    precision = 1.0 / (mu_scale * mu_scale) + jnp.sum(inv_v)
    mean = (mu_loc / (mu_scale * mu_scale) + jnp.sum(data.y * inv_v)) / precision
    return log_v, inv_v, precision, mean


def sample_mu_marginal(key, state: SchoolsState, data: SchoolsData, *, mu_loc: float, mu_scale: float) -> jax.Array:
    """μ | τ, y ~ N(m, 1/P) with θ integrated out: v_j = σ_j² + τ², P = 1/s_μ² + Σ 1/v_j,
    m = (μ0/s_μ² + Σ y_j/v_j) / P.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : SchoolsState
        The current state (log τ is used).
    data : SchoolsData
        The estimates and standard errors.
    mu_loc, mu_scale : float
        As in :func:`sample_mu`.

    Returns
    -------
    jax.Array
        The new μ (θ integrated out).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> s = SchoolsState(mu=jnp.float32(0.0), log_tau=jnp.float32(0.0), theta=jnp.zeros(2))
    >>> mu = jax.vmap(lambda k: sample_mu_marginal(k, s, data([1.0, 3.0], [1.0, 1.0]), mu_loc=0.0,
    ...     mu_scale=1e4))(jax.random.split(jax.random.key(0), 4000))
    >>> bool(abs(mu.mean() - 2.0) < 0.05), bool(abs(mu.var() - 1.0) < 0.07)   # v_j = 2: N(ȳ, 2/J)
    (True, True)
    """
    _, _, precision, mean = _marginal(state, data, mu_loc, mu_scale)
    return gr.normal(key, mean, jax.lax.rsqrt(precision))


def _log_half_cauchy(log_tau, tau_scale: float):
    """log of the half-Cauchy(s_τ) density of τ = e^u, up to a constant: −log(1 + τ²/s_τ²)."""
    return -jax.nn.softplus(2.0 * (log_tau - math.log(tau_scale)))


def log_tau_marginal(state: SchoolsState, data: SchoolsData, *, mu_loc: float, mu_scale: float,
                     tau_scale: float) -> jax.Array:
    """log p(u | y), u = log τ, with μ and θ integrated out, up to a constant (module notes).

    Parameters
    ----------
    state : SchoolsState
        The state (only ``log_tau`` is used).
    data : SchoolsData
        The estimates and standard errors.
    mu_loc, mu_scale : float
        μ0 and s_μ.
    tau_scale : float
        s_τ, the scale of τ's half-Cauchy prior.

    Returns
    -------
    jax.Array
        The log density (a scalar).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> s = SchoolsState(mu=jnp.float32(0.0), log_tau=jnp.float32(1.0), theta=jnp.zeros(8))
    >>> bool(jnp.isfinite(log_tau_marginal(s, rubin_1981(), mu_loc=0.0, mu_scale=5.0, tau_scale=5.0)))
    True
    """
    log_v, inv_v, precision, mean = _marginal(state, data, mu_loc, mu_scale)
    quad = jnp.sum(jnp.square(data.y - mean) * inv_v) + jnp.square(mean - mu_loc) / (mu_scale * mu_scale)
    return (_log_half_cauchy(state.log_tau, tau_scale) + state.log_tau
            - 0.5 * jnp.sum(log_v) - 0.5 * jnp.log(precision) - 0.5 * quad)


def log_tau_conditional(state: SchoolsState, data: SchoolsData, *, tau_scale: float) -> jax.Array:
    """log p(u | θ, μ), u = log τ, up to a constant: −log(1 + τ²/s_τ²) + (1 − J) u − Σ (θ_j − μ)² / (2τ²).

    Parameters
    ----------
    state : SchoolsState
        The state (``log_tau``, ``theta`` and ``mu`` are used).
    data : SchoolsData
        The data (its length J).
    tau_scale : float
        As in :func:`log_tau_marginal`.

    Returns
    -------
    jax.Array
        The log density, a scalar.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> s = SchoolsState(mu=jnp.float32(0.0), log_tau=jnp.float32(0.0), theta=jnp.ones(8))
    >>> round(float(log_tau_conditional(s, rubin_1981(), tau_scale=1.0)), 4)   # -log 2 - 8/2
    -4.6931
    """
    J = data.y.shape[0]
    ss = jnp.sum(jnp.square(state.theta - state.mu))
    return (_log_half_cauchy(state.log_tau, tau_scale) + (1.0 - J) * state.log_tau
            - 0.5 * ss * jnp.exp(-2.0 * state.log_tau))


# ============================================================================ the kernel
def hierarchical(mu_loc: float = 0.0, mu_scale: float = 5.0, tau_scale: float = 5.0, tau_step: str = "slice",
                 step_size: float = 2.0, collapsed: bool = True) -> Kernel:
    """Gibbs sampler for the eight-schools model: exact steps for θ and μ, a slice or Metropolis step for log τ.

    The model and both sweeps are in the module notes.  Random starts: μ from its
    prior, log τ = log s_τ + U(−2, 2), θ_j = y_j + σ_j Z_j (overdispersed).

    Parameters
    ----------
    mu_loc : float, default 0.0
        μ0, the prior mean of μ.
    mu_scale : float, default 5.0
        s_μ, the prior standard deviation of μ.
    tau_scale : float, default 5.0
        s_τ, the scale of τ's half-Cauchy prior.
    tau_step : {"slice", "metropolis"}, default "slice"
        How log τ moves: :func:`gibbsjax.steps.slice_step` (stepping out and
        shrinkage) or :func:`gibbsjax.steps.metropolis_step` (random walk).
    step_size : float, default 2.0
        On the log τ scale: the slice's initial interval width, or the
        Metropolis proposal's standard deviation (fixed while sampling).
    collapsed : bool, default True
        True: log τ | y with μ, θ integrated out, then μ | τ, y, then θ | μ, τ, y.
        False: the centred sweep θ | μ, τ, y; μ | θ, τ; log τ | θ, μ.

    Returns
    -------
    Kernel
        The sampler (name ``"eight_schools.hierarchical"``), recording ``mu``,
        ``tau`` and ``theta`` (dims ``("school",)``).

    Examples
    --------
    >>> import gibbsjax
    >>> idata = gibbsjax.sample(hierarchical(), rubin_1981(), seed=0, num_warmup=200, num_draws=500,
    ...                         progress=False)
    >>> 2.0 < float(idata.posterior["mu"].mean()) < 6.5
    True
    >>> hierarchical(tau_step="nuts")
    Traceback (most recent call last):
    ...
    ValueError: tau_step must be one of 'slice', 'metropolis', got 'nuts'
    """
    mu_loc = _check_finite("mu_loc", mu_loc)
    mu_scale = _check_positive("mu_scale", mu_scale)
    tau_scale = _check_positive("tau_scale", tau_scale)
    tau_step = check_choice("tau_step", tau_step, ("slice", "metropolis"))
    step_size = _check_positive("step_size", step_size)
    if not isinstance(collapsed, (bool, np.bool_)):
        raise ValueError(f"collapsed must be true or false, got {collapsed!r}")
    return _hierarchical(mu_loc, mu_scale, tau_scale, tau_step, step_size, bool(collapsed))


def _tau_update(tau_step: str, log_density, step_size: float):
    if tau_step == "slice":
        return slice_step("log_tau", log_density, width=step_size)
    return metropolis_step("log_tau", log_density, step_size)


@functools.lru_cache(maxsize=64)
def _hierarchical(mu_loc: float, mu_scale: float, tau_scale: float, tau_step: str, step_size: float,
                  collapsed: bool) -> Kernel:
    theta_update = ("theta", sample_theta)
    if collapsed:
        log_tau = functools.partial(log_tau_marginal, mu_loc=mu_loc, mu_scale=mu_scale, tau_scale=tau_scale)
        step = sweep(_tau_update(tau_step, log_tau, step_size),
                     ("mu", functools.partial(sample_mu_marginal, mu_loc=mu_loc, mu_scale=mu_scale)),
                     theta_update)
    else:
        log_tau = functools.partial(log_tau_conditional, tau_scale=tau_scale)
        step = sweep(theta_update,
                     ("mu", functools.partial(sample_mu, mu_loc=mu_loc, mu_scale=mu_scale)),
                     _tau_update(tau_step, log_tau, step_size))

    def init(key, data: SchoolsData):
        k1, k2, k3 = jax.random.split(key, 3)
        dtype = data.y.dtype
        mu = gr.normal(k1, mu_loc, mu_scale, dtype=dtype)
        log_tau = math.log(tau_scale) + jax.random.uniform(k2, (), dtype, -2.0, 2.0)
        return SchoolsState(mu, log_tau, gr.normal(k3, data.y, data.sigma))

    def record(state, data):
        return {"mu": state.mu, "tau": jnp.exp(state.log_tau), "theta": state.theta}

    def log_joint(state, data: SchoolsData):
        """log p(μ, u, θ, y) up to a constant, u = log τ (the Jacobian τ included)."""
        J = data.y.shape[0]
        tau2 = jnp.exp(2.0 * state.log_tau)
        return (-0.5 * jnp.square(state.mu - mu_loc) / (mu_scale * mu_scale)
                + _log_half_cauchy(state.log_tau, tau_scale) + state.log_tau
                - J * state.log_tau - 0.5 * jnp.sum(jnp.square(state.theta - state.mu)) / tau2
                - 0.5 * jnp.sum(jnp.square((data.y - state.theta) / data.sigma)))

    def sample_prior(key, data: SchoolsData):
        k1, k2, k3 = jax.random.split(key, 3)
        dtype = data.y.dtype
        mu = gr.normal(k1, mu_loc, mu_scale, dtype=dtype)
        # |Z1 / Z2| is half-Cauchy(1); gr.normal never returns 0, so the log is finite
        z = gr.normal(k2, shape=(2,), dtype=dtype)
        log_tau = math.log(tau_scale) + jnp.log(jnp.abs(z[0])) - jnp.log(jnp.abs(z[1]))
        theta = mu + jnp.exp(log_tau) * gr.normal(k3, shape=data.y.shape, dtype=dtype)
        return SchoolsState(mu, log_tau, theta)

    def simulate_data(key, state: SchoolsState, data: SchoolsData):
        return SchoolsData(gr.normal(key, state.theta, data.sigma), data.sigma)

    def check_init(values, label=None):
        for field, value in values.items():
            arr = np.asarray(value, dtype=np.float64)
            bad = ~np.isfinite(arr)
            if bad.any():
                at = tuple(int(i) for i in np.argwhere(bad)[0])
                name = f"init[{field!r}]" if label is None else label(field)
                raise ValueError(f"{name} must be finite, got {float(arr[at])!r} (chain {at[0]})")

    return Kernel(
        init=init,
        step=step,
        record=record,
        dims={"mu": (), "tau": (), "theta": ("school",), "y": ("school",)},
        log_joint=log_joint,
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="eight_schools.hierarchical",
        # log N(y_j; theta_j, sigma_j^2), one value per school
        log_likelihood=lambda state, data: {"y": -0.5 * (jnp.log(2 * jnp.pi * jnp.square(data.sigma))
                                                          + jnp.square((data.y - state.theta) / data.sigma))},
        observed_data=lambda data: {"y": (("school",), data.y)},
        data_type=SchoolsData,
        check_init=check_init,
    )
