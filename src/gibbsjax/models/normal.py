"""Normal models of Wang (2015), "Gibbs Sampler and Its Applications".

* :func:`bivariate` — Example 1: a bivariate normal with unit variances and
  correlation ρ, sampled one coordinate at a time.
* :func:`semiconjugate` — Example 2: y_i ~ N(μ, σ²) with independent priors
  μ ~ N(μ0, σ0²) and σ² ~ InvGamma(a0, b0), on e.g. the body temperature data
  (:func:`gibbsjax.datasets.body_temperature`).

Each full conditional is a small named function (``sample_x1``, ``sample_mu``,
...), composed into a sweep with :func:`gibbsjax.kernel.sweep`.

Typos in Wang (2015), corrected here
------------------------------------
* The inverse-gamma density is printed as b0^a0/Γ(a0) (σ²)^(−a0−1) e^{+b0/σ²};
  the exponent is −b0/σ².
* Step 3 of the sampling scheme sets s² = ω σ0²/n; the derivation above it gives
  the conditional variance ω σ²/n = 1 / (1/σ0² + n/σ²), which is what
  :func:`sample_mu` uses.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import random as gr
from gibbsjax._checks import check_finite as _check_finite
from gibbsjax._checks import check_positive as _check_positive
from gibbsjax._checks import as_numbers, check_fits_dtype, init_checker
from gibbsjax.kernel import Kernel, sweep

__all__ = [
    "BivariateState",
    "NormalData",
    "NormalState",
    "bivariate",
    "data",
    "semiconjugate",
    "sample_x1",
    "sample_x2",
    "sample_mu",
    "sample_sigma2",
]


# ============================================================================ bivariate normal
class BivariateState(NamedTuple):
    """One chain's state: the two coordinates.

    Parameters
    ----------
    x1, x2 : jax.Array
        The coordinates (scalars).

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import normal
    >>> state = normal.bivariate(rho=0.5).init(jax.random.key(0), None)
    >>> type(state).__name__, state._fields
    ('BivariateState', ('x1', 'x2'))
    """

    x1: jax.Array
    x2: jax.Array


def sample_x1(key, state: BivariateState, data, *, rho: float) -> jax.Array:
    """x1 | x2 ~ N(ρ x2, 1 − ρ²)  (Wang 2015, Example 1).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : BivariateState
        The current state.
    data : None
        Unused (the model has no data).
    rho : float
        The correlation ρ.

    Returns
    -------
    jax.Array
        The new x1.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> s = BivariateState(x1=jnp.array(0.0), x2=jnp.array(2.0))
    >>> x1 = jax.vmap(lambda k: sample_x1(k, s, None, rho=0.8))(jax.random.split(jax.random.key(0), 4000))
    >>> bool(abs(x1.mean() - 1.6) < 0.05), bool(abs(x1.var() - 0.36) < 0.05)   # N(0.8 * 2, 1 - 0.8**2)
    (True, True)
    """
    return gr.normal(key, rho * state.x2, math.sqrt(1.0 - rho * rho))


def sample_x2(key, state: BivariateState, data, *, rho: float) -> jax.Array:
    """x2 | x1 ~ N(ρ x1, 1 − ρ²)  (Wang 2015, Example 1).

    Parameters
    ----------
    key, state, data, rho
        As in :func:`sample_x1` (with the roles of x1 and x2 swapped).

    Returns
    -------
    jax.Array
        The new x2: a draw given x1.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> s = BivariateState(x1=jnp.array(-1.0), x2=jnp.array(0.0))
    >>> x2 = jax.vmap(lambda k: sample_x2(k, s, None, rho=0.5))(jax.random.split(jax.random.key(0), 4000))
    >>> bool(abs(x2.mean() + 0.5) < 0.05), bool(abs(x2.var() - 0.75) < 0.05)   # N(0.5 * -1, 1 - 0.5**2)
    (True, True)
    """
    return gr.normal(key, rho * state.x1, math.sqrt(1.0 - rho * rho))


def bivariate(rho: float = 0.8) -> Kernel:
    """Gibbs sampler for (x1, x2) ~ N(0, [[1, ρ], [ρ, 1]]), Wang (2015) Example 1.

    Each sweep draws x1 | x2 then x2 | x1.  The model has no data: pass
    ``data=None`` to :func:`gibbsjax.sample`.  Random starts are drawn from
    N(0, 3²) per coordinate (overdispersed); Wang's (2015) four starting points
    are the corners (±2.5, ±2.5), given with ``init=``.

    Parameters
    ----------
    rho : float, default 0.8
        The correlation ρ, in (−1, 1).

    Returns
    -------
    Kernel
        The sampler (name ``"normal.bivariate"``), recording ``x1`` and ``x2``.

    Examples
    --------
    >>> import gibbsjax
    >>> idata = gibbsjax.sample(bivariate(0.8), seed=0, num_warmup=0, num_draws=100,
    ...     init={"x1": [2.5, -2.5, 2.5, -2.5], "x2": [2.5, 2.5, -2.5, -2.5]}, progress=False)
    >>> float(idata.posterior["x1"][0, 0]) != 2.5
    True
    """
    r = float(_check_finite("rho", rho))  # a number (not a string nor a bool), finite
    if not (-1.0 < r < 1.0):
        raise ValueError(f"rho must lie strictly between -1 and 1, got {rho!r}")
    return _bivariate(r)


@functools.lru_cache(maxsize=64)
def _bivariate(rho: float) -> Kernel:
    one_minus = 1.0 - rho * rho

    def init(key, data):
        k1, k2 = jax.random.split(key)
        return BivariateState(gr.normal(k1, 0.0, 3.0), gr.normal(k2, 0.0, 3.0))

    def record(state, data):
        return {"x1": state.x1, "x2": state.x2}

    def log_joint(state, data):
        x1, x2 = state.x1, state.x2
        return -(x1 * x1 - 2.0 * rho * x1 * x2 + x2 * x2) / (2.0 * one_minus)

    def sample_prior(key, data):
        k1, k2 = jax.random.split(key)
        x1 = gr.normal(k1, 0.0, 1.0)
        return BivariateState(x1, gr.normal(k2, rho * x1, math.sqrt(one_minus)))

    return Kernel(
        init=init,
        step=sweep(
            ("x1", functools.partial(sample_x1, rho=rho)),
            ("x2", functools.partial(sample_x2, rho=rho)),
        ),
        record=record,
        dims={"x1": (), "x2": ()},
        log_joint=log_joint,
        sample_prior=sample_prior,
        simulate_data=lambda key, state, data: data,
        name="normal.bivariate",
    )


# ============================================================================ semi-conjugate normal
class NormalData(NamedTuple):
    """Observations y_1..y_n, with the sufficient statistics the sampler uses.

    ``ybar`` is the mean and ``ss`` = Σ (y_i − ȳ)²; then Σ (y_i − μ)² =
    ss + n (ȳ − μ)² exactly, with no cancellation in float32.  Build it with
    :func:`data`.

    Parameters
    ----------
    y : jax.Array
        The observations, (n,).
    ybar : jax.Array
        Their mean.
    ss : jax.Array
        Σ (y_i − ȳ)².

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> y = normal.data([98.2, 98.6, 99.1])
    >>> type(y).__name__, y._fields
    ('NormalData', ('y', 'ybar', 'ss'))
    """

    y: jax.Array
    ybar: jax.Array
    ss: jax.Array


def _stats(y):
    ybar = jnp.mean(y)
    return NormalData(y, ybar, jnp.sum((y - ybar) ** 2))


def data(y) -> NormalData:
    """Validate observations and build the data for :func:`semiconjugate`.

    Parameters
    ----------
    y : array_like
        The observations, 1-D, finite numbers.

    Returns
    -------
    NormalData
        The observations and their sufficient statistics.

    Raises
    ------
    ValueError
        For empty, non-1-D, non-numeric (strings, bools) or non-finite input.

    Examples
    --------
    >>> d = data([98.2, 98.6, 97.9])
    >>> round(float(d.ybar), 3)
    98.233
    """
    arr = as_numbers("y", y, "a 1-D array of numbers")  # "98.6" is text, not a number
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("y is empty: at least one observation is needed")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"y contains NaN or infinite values (first at index {bad})")
    ybar = arr.mean()
    ss = float(np.sum((arr - ybar) ** 2))
    dtype = jnp.zeros(()).dtype  # float64 under enable_x64, else float32
    check_fits_dtype("y", arr, dtype)
    check_fits_dtype("y's sum of squared deviations", ss, dtype)
    return NormalData(jnp.asarray(arr, dtype), jnp.asarray(ybar, dtype), jnp.asarray(ss, dtype))


class NormalState(NamedTuple):
    """One chain's state: mean μ and variance σ².

    Parameters
    ----------
    mu : jax.Array
        The mean μ.
    sigma2 : jax.Array
        The variance σ².

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import normal
    >>> y = normal.data([98.2, 98.6, 99.1])
    >>> state = normal.semiconjugate(mu0=98.6, sigma0=0.5, a0=1.0, b0=1.0).init(jax.random.key(0), y)
    >>> type(state).__name__, state._fields
    ('NormalState', ('mu', 'sigma2'))
    """

    mu: jax.Array
    sigma2: jax.Array


def sample_mu(key, state: NormalState, data: NormalData, *, mu0: float, sigma0: float) -> jax.Array:
    """μ | σ², y ~ N(ω ȳ + (1 − ω) μ0, ω σ²/n), ω = σ0² / (σ²/n + σ0²)  (Wang 2015, Ex. 2).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : NormalState
        The current state (σ² is used).
    data : NormalData
        The observations.
    mu0, sigma0 : float
        The prior mean and standard deviation of μ.

    Returns
    -------
    jax.Array
        The new μ (a scalar).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([98.2, 98.6, 97.9])
    >>> s = NormalState(mu=jnp.array(98.0), sigma2=jnp.array(0.3))
    >>> mu = jax.vmap(lambda k: sample_mu(k, s, d, mu0=98.0, sigma0=1e3))(jax.random.split(jax.random.key(0), 4000))
    >>> bool(abs(mu.mean() - 98.233) < 0.02), bool(abs(mu.var() - 0.1) < 0.01)   # a flat prior: N(ȳ, σ²/n)
    (True, True)
    """
    n = data.y.shape[0]
    s02 = sigma0 * sigma0
    omega = s02 / (state.sigma2 / n + s02)
    mean = omega * data.ybar + (1.0 - omega) * mu0
    return gr.normal(key, mean, jnp.sqrt(omega * state.sigma2 / n))


def sample_sigma2(key, state: NormalState, data: NormalData, *, a0: float, b0: float) -> jax.Array:
    """σ² | μ, y ~ InvGamma(a0 + n/2, b0 + Σ (y_i − μ)²/2)  (Wang 2015, Ex. 2).

    Parameters
    ----------
    key : jax.Array
        A PRNG key, as for :func:`sample_mu`.
    state : NormalState
        The current state, whose μ is used.
    data : NormalData
        The observations.
    a0, b0 : float
        Shape and scale of the inverse-gamma prior.

    Returns
    -------
    jax.Array
        The new σ².

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([98.2, 98.6, 97.9])
    >>> s = NormalState(mu=jnp.array(98.2), sigma2=jnp.array(1.0))
    >>> s2 = sample_sigma2(jax.random.key(0), s, d, a0=2.0, b0=1.0)
    >>> s2.shape, bool(s2 > 0)
    ((), True)
    """
    n = data.y.shape[0]
    sq = data.ss + n * (data.ybar - state.mu) ** 2
    return gr.inverse_gamma(key, a0 + 0.5 * n, b0 + 0.5 * sq)


def semiconjugate(mu0: float = 98.6, sigma0: float = 0.5, a0: float = 1e-3, b0: float = 1e-3) -> Kernel:
    """Gibbs sampler for y_i ~ N(μ, σ²), μ ~ N(μ0, σ0²), σ² ~ InvGamma(a0, b0).

    Seed 003, Example 2 (defaults are its choices: μ0 = 98.6, σ0 = 0.5,
    a0 = b0 = 0.001).  Each sweep draws μ | σ² (:func:`sample_mu`) then
    σ² | μ (:func:`sample_sigma2`).  Random starts: μ from its prior, σ² the
    sample variance times e^u, u ~ U(−2, 2) (overdispersed).

    Parameters
    ----------
    mu0 : float, default 98.6
        The prior mean of μ.
    sigma0 : float, default 0.5
        The prior standard deviation of μ.
    a0, b0 : float, default 0.001
        Shape and scale of the inverse-gamma prior of σ².

    Returns
    -------
    Kernel
        The sampler, named ``"normal.semiconjugate"``; it records ``mu`` and ``sigma2``.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.datasets import body_temperature
    >>> y = data(body_temperature()["temperature_f"])
    >>> idata = gibbsjax.sample(semiconjugate(), y, seed=0, num_draws=500, progress=False)
    >>> abs(float(idata.posterior["mu"].mean()) - 98.25) < 0.02
    True
    """
    mu0 = _check_finite("mu0", mu0)
    sigma0 = _check_positive("sigma0", sigma0)
    a0 = _check_positive("a0", a0)
    b0 = _check_positive("b0", b0)
    return _semiconjugate(mu0, sigma0, a0, b0)


@functools.lru_cache(maxsize=64)
def _semiconjugate(mu0: float, sigma0: float, a0: float, b0: float) -> Kernel:
    def init(key, data: NormalData):
        k1, k2 = jax.random.split(key)
        n = data.y.shape[0]
        s2 = jnp.where(n > 1, data.ss / jnp.maximum(n - 1, 1), 1.0)
        s2 = jnp.where(s2 > 0, s2, 1.0)
        mu = gr.normal(k1, mu0, sigma0)
        sigma2 = s2 * jnp.exp(jax.random.uniform(k2, minval=-2.0, maxval=2.0))
        return NormalState(mu, sigma2)

    def record(state, data):
        return {"mu": state.mu, "sigma2": state.sigma2}

    def log_joint(state, data: NormalData):
        n = data.y.shape[0]
        mu, s2 = state.mu, state.sigma2
        sq = data.ss + n * (data.ybar - mu) ** 2
        loglik = -0.5 * n * jnp.log(s2) - 0.5 * sq / s2
        logprior_mu = -0.5 * (mu - mu0) ** 2 / (sigma0 * sigma0)
        logprior_s2 = -(a0 + 1.0) * jnp.log(s2) - b0 / s2
        return loglik + logprior_mu + logprior_s2

    def sample_prior(key, data):
        k1, k2 = jax.random.split(key)
        return NormalState(gr.normal(k1, mu0, sigma0), gr.inverse_gamma(k2, a0, b0))

    def log_likelihood(state, data: NormalData):
        # log N(y_i; mu, sigma2), one value per observation
        return {"y": -0.5 * (jnp.log(2 * jnp.pi * state.sigma2) + (data.y - state.mu) ** 2 / state.sigma2)}

    def simulate_data(key, state: NormalState, data: NormalData):
        y = state.mu + jnp.sqrt(state.sigma2) * jax.random.normal(key, data.y.shape, data.y.dtype)
        return _stats(y)

    return Kernel(
        init=init,
        step=sweep(
            ("mu", functools.partial(sample_mu, mu0=mu0, sigma0=sigma0)),
            ("sigma2", functools.partial(sample_sigma2, a0=a0, b0=b0)),
        ),
        record=record,
        dims={"mu": (), "sigma2": (), "y": ("observation",)},
        log_joint=log_joint,
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="normal.semiconjugate",
        log_likelihood=log_likelihood,
        observed_data=lambda data: {"y": (("observation",), data.y)},
        data_type=NormalData,
        check_init=init_checker(positive=("sigma2",)),
    )

