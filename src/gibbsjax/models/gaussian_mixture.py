"""Gaussian mixture with Normal-Gamma priors (the CSE 5523 lecture notes 23, §23.4).

Model (K components; D = 1, or D > 1 dimensions with a diagonal precision)::

    w ~ Dirichlet(α)                               mixing weights
    (μ_kd, τ_kd) ~ NormalGamma(μ0_d, λ, a, b_d)     τ ~ Gamma(a, rate b), μ | τ ~ N(μ0, 1/(λ τ))
    z_n | w ~ Categorical(w)
    x_nd | z_n = k ~ N(μ_kd, σ_kd²),  σ = τ^(-1/2)

The Gibbs sweep (:func:`normal_gamma`) draws, in order,

1. :func:`sample_z`: all assignments at once.  Given the parameters the z_n
   are independent, so this is exact: z_n ~ Categorical(w ⊙ b_n) with the
   backward message (b_n)_k = N(x_n; μ_k, σ_k) of the seed
   (:func:`backward_messages`).
2. :func:`sample_parameters`: the weights, log w | z ~ log Dirichlet(α + counts)
   (:func:`weights_posterior`), and (μ_k, τ_k) | z, x from their Normal-Gamma
   posteriors (:func:`components_posterior`); independent given z, so drawn
   as one block.

Priors: improper by default in the CSE 5523 notes, proper here
--------------------------------------------------------------
The CSE 5523 lecture notes' "uninformative" μ0 = λ = α = β = 0 is an improper prior, and with
it the mixture posterior is improper too: every configuration with an empty
component has infinite mass (Diebolt & Robert 1994, JRSS B 56:363–375), and a
component holding one point has an unbounded likelihood as σ_k → 0.  So λ, a
and b must be positive here; ``allow_improper=True`` accepts zeros, at your own
risk: a component that empties (or holds one point) gets a Gamma(0, 0) or
N(x̄, 1/0) "posterior", its parameters become NaN or infinite, and the chain
cannot recover; ``sample_prior`` is then unavailable (no Geweke test).

Defaults are data-scaled, following mclust's conjugate prior (Fraley &
Raftery 2007, J. Classification 24:155–181): μ0 = the data mean, λ = 0.01,
a = 3/2 and b = a s²/K^(2/D) (s² the data variance), i.e. an inverse-χ² prior
on σ² with 3 degrees of freedom and scale s²/K^(2/D); see
:func:`gibbsjax.conjugate_normal.data_scaled_prior`.  The data mean and
variance are computed once by :func:`data` and stored with the data
(``center``, ``scale2``); ``simulate_data`` keeps them, so the prior does not
move with simulated data (the Geweke test stays valid).

Typos in the CSE 5523 notes, corrected here
-------------------------------------------
The CSE 5523 lecture notes' posterior NormalGamma(Σ[Z_n=k] x_n, N, N/2, Σ[Z_n=k](x_n − x̄)²)
(with μ0 = λ = α = β = 0) means: the component mean x̄_k = Σ[Z_n=k] x_n / N_k
(not the sum), λ_n = N_k and a_n = N_k/2 with N_k the component's count (not
the data size N), and b_n = SS_k/2 (half the sum of squares, not all of it).

Label switching
---------------
With exchangeable priors (a scalar ``alpha``, the default) components are
interchangeable, so raw per-component draws (``weights``, ``mu``,
``sigma``; dim ``component``) are comparable across chains only after
:func:`gibbsjax.specs.gaussian_mixture.align` (Hungarian matching of chain means,
:func:`gibbsjax.labels.align_chains`).  Label-invariant records, with
meaningful R-hat as they are: ``lp`` (the log joint, in ``sample_stats``),
``log_lik`` (log p(x | w, μ, τ), z summed out), and the components
sorted by their (first-dimension) mean: ``mu_sorted``, ``sigma_sorted``,
``weights_sorted`` (dim ``rank``).

Per-observation output: ``posterior_mean["membership"]`` (obs, component), each
chain's posterior mean of p(z_n = k | w, μ, τ, x_n) (Rao-Blackwellised
responsibilities, accumulated by the runner, aligned by :func:`gibbsjax.specs.gaussian_mixture.align`).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import conjugate as cj
from gibbsjax import conjugate_normal as cn
from gibbsjax._checks import check_concentration, check_int
from gibbsjax import random as gr
from gibbsjax._checks import as_numbers, check_fits_dtype, init_checker
from gibbsjax import rows as rw
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.rows import Rows

__all__ = [
    "MixtureData",
    "MixtureState",
    "data",
    "normal_gamma",
    "prior",
    "backward_messages",
    "log_likelihood",
    "sample_z",
    "weights_posterior",
    "components_posterior",
    "sample_parameters",
]


# ============================================================================ data
class MixtureData(NamedTuple):
    """Observations and their frozen reference scale.

    Parameters
    ----------
    x : jax.Array
        (N,) or (N, D) observations.
    center : jax.Array
        (D,) mean of the observed data, used only by data-scaled default hyperparameters.
    scale2 : jax.Array
        (D,) variance (ddof 1; 1 where there is no spread), used likewise.

    Examples
    --------
    >>> from gibbsjax.models import gaussian_mixture
    >>> d = gaussian_mixture.data([1.0, 1.2, 4.8, 5.1])
    >>> type(d).__name__
    'MixtureData'
    """

    x: jax.Array
    center: jax.Array
    scale2: jax.Array


def data(x) -> MixtureData:
    """Validate observations for :func:`normal_gamma`: (N,) univariate or (N, D) diagonal.

    Parameters
    ----------
    x : array_like
        (N,) univariate or (N, D) observations.

    Returns
    -------
    MixtureData
        The validated data.

    Raises
    ------
    ValueError
        For empty, non-numeric, NaN/infinite or wrongly shaped input.

    Examples
    --------
    >>> d = data([1.0, 2.0, 4.0])
    >>> d.x.shape, round(float(d.center[0]), 4), round(float(d.scale2[0]), 4)
    ((3,), 2.3333, 2.3333)
    """
    if isinstance(x, MixtureData):
        return x
    arr = as_numbers("x", x, "an array of numbers, shape (N,) or (N, D)")  # strings and bools refused
    if arr.ndim not in (1, 2):
        raise ValueError(f"x must have shape (N,) or (N, D), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("x is empty: at least one observation is needed")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"x has no dimensions (shape {arr.shape}); expected (N, D) with D >= 1")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"x contains NaN or infinite values (first at index {tuple(int(i) for i in bad)})")
    center, var = cn.reference_scale(arr.reshape(arr.shape[0], -1))
    dtype = jnp.zeros(()).dtype  # float64 under enable_x64, else float32
    check_fits_dtype("x", arr, dtype)
    check_fits_dtype("x's variance", var, dtype)
    return MixtureData(jnp.asarray(arr, dtype), jnp.asarray(center, dtype), jnp.asarray(var, dtype))


def _x2(d: MixtureData) -> jax.Array:
    return d.x.reshape(d.x.shape[0], -1)


def _p2(p: jax.Array) -> jax.Array:
    return p if p.ndim == 2 else p[:, None]


# ============================================================================ state & conditionals
class MixtureState(NamedTuple):
    """One chain's state.

    Parameters
    ----------
    z : jax.Array
        (N,) int32 assignments.
    log_weights : jax.Array
        (K,) log mixing weights.
    mu : jax.Array
        (K,) univariate or (K, D) diagonal: component means.
    tau : jax.Array
        Component precisions (σ = τ^(-1/2)), shaped like ``mu``.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import gaussian_mixture
    >>> d = gaussian_mixture.data([1.0, 1.2, 4.8, 5.1])
    >>> state = gaussian_mixture.normal_gamma(2).init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('MixtureState', ('z', 'log_weights', 'mu', 'tau'))
    """

    z: jax.Array
    log_weights: jax.Array
    mu: jax.Array
    tau: jax.Array


def prior(d: MixtureData, num_components: int, *, mu0=None, lam=cn.DEFAULT_LAM, a=cn.DEFAULT_A, b=None):
    """The Normal-Gamma hyperparameters in force for data ``d``: ``None`` ones data-scaled.

    See :func:`gibbsjax.conjugate_normal.data_scaled_prior`.

    Parameters
    ----------
    d : MixtureData
        The data.
    num_components : int
        K.
    mu0, lam, a, b : float or array_like, optional
        As in :func:`normal_gamma`.

    Returns
    -------
    gibbsjax.conjugate_normal.NormalGamma
        The hyperparameters as (D,) arrays.

    Examples
    --------
    >>> p = prior(data([1.0, 2.0, 4.0]), 2)
    >>> [round(float(v.squeeze()), 3) for v in p]   # mu0, lam, a, b = a s^2 / K^2
    [2.333, 0.01, 1.5, 0.875]
    """
    return cn.data_scaled_prior(d.center, d.scale2, num_components, mu0=mu0, lam=lam, a=a, b=b)


def backward_messages(state: MixtureState, d: MixtureData) -> jax.Array:
    """log (b_n)_k = Σ_d log N(x_nd; μ_kd, σ_kd): the CSE 5523 lecture notes' backward message, (N, K).

    Parameters
    ----------
    state : MixtureState
        The current state.
    d : MixtureData
        The data.

    Returns
    -------
    jax.Array
        (N, K) log messages.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([1.0, 2.0, 4.0])
    >>> s = MixtureState(z=jnp.array([0, 0, 1]), log_weights=jnp.log(jnp.array([0.5, 0.5])),
    ...                  mu=jnp.array([1.5, 4.0]), tau=jnp.array([1.0, 1.0]))
    >>> b = backward_messages(s, d)
    >>> b.shape, round(float(b[0, 0]), 4)   # log N(1; 1.5, 1) = -log(2 pi)/2 - 0.125
    ((3, 2), -1.0439)
    """
    x = _x2(d)
    return jnp.sum(cn.log_normal(x[:, None, :], _p2(state.mu)[None], _p2(state.tau)[None]), axis=-1)


def log_likelihood(state: MixtureState, d: MixtureData, rows: Rows | None = None) -> jax.Array:
    """log p(x | w, μ, τ) = Σ_n log Σ_k w_k N(x_n; μ_k, σ_k): z summed out, label-invariant.

    Parameters
    ----------
    state : MixtureState
        The current state.
    d : MixtureData
        The data.
    rows : Rows, optional
        Observations split over devices: summed over the devices.

    Returns
    -------
    jax.Array
        The log likelihood, a scalar.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([1.0, 2.0, 4.0])
    >>> s = MixtureState(z=jnp.array([0, 0, 1]), log_weights=jnp.log(jnp.array([0.5, 0.5])),
    ...                  mu=jnp.array([1.5, 4.0]), tau=jnp.array([1.0, 1.0]))
    >>> round(float(log_likelihood(s, d)), 3)
    -4.888
    """
    return rw.row_sum(rows, jax.nn.logsumexp(state.log_weights + backward_messages(state, d), axis=-1))


def sample_z(key, state: MixtureState, d: MixtureData, rows: Rows | None = None) -> jax.Array:
    """z_n | w, μ, τ, x ~ Categorical(w_k (b_n)_k), (b_n)_k = N(x_n; μ_k, σ_k), all n at once.

    Exact: given the parameters the z_n are independent.  One uniform per draw.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : MixtureState
        The current state.
    d : MixtureData
        The data.
    rows : Rows, optional
        Observations split over devices (:mod:`gibbsjax.rows`); observation n's
        draw is the same as on one device.

    Returns
    -------
    jax.Array
        (N,) int32: the new assignments.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([1.0, 2.0, 4.0])
    >>> s = MixtureState(z=jnp.array([0, 0, 1]), log_weights=jnp.log(jnp.array([0.5, 0.5])),
    ...                  mu=jnp.array([1.5, 4.0]), tau=jnp.array([1.0, 1.0]))
    >>> z = sample_z(jax.random.key(0), s, d)
    >>> z.shape, z.dtype
    ((3,), dtype('int32'))
    """
    logits = state.log_weights + backward_messages(state, d)
    return gr.categorical(key, logits) if rows is None else rows.categorical(key, logits)


def weights_posterior(state: MixtureState, d: MixtureData, *, alpha, rows: Rows | None = None) -> jax.Array:
    """w | z ~ Dirichlet(α + n), n_k = #{n : z_n = k}.

    Parameters
    ----------
    state : MixtureState
        The current state (``z`` is used).
    d : MixtureData
        The data.
    alpha : float or jax.Array
        The concentration α.
    rows : Rows, optional
        Observations split over devices: counts summed over the devices.

    Returns
    -------
    jax.Array
        The concentrations α + n, (K,).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([1.0, 2.0, 4.0])
    >>> s = MixtureState(z=jnp.array([0, 0, 1]), log_weights=jnp.log(jnp.array([0.5, 0.5])),
    ...                  mu=jnp.array([1.5, 4.0]), tau=jnp.array([1.0, 1.0]))
    >>> weights_posterior(s, d, alpha=1.0).tolist()   # two points in component 0, one in 1
    [3.0, 2.0]
    """
    k = state.log_weights.shape[0]
    dtype = d.x.dtype
    return jnp.asarray(alpha, dtype) + rw.total(rows, cj.counts(rw.here(rows, state.z, k), k)).astype(dtype)


def components_posterior(state: MixtureState, d: MixtureData, *, mu0=None, lam=cn.DEFAULT_LAM,
                         a=cn.DEFAULT_A, b=None, rows: Rows | None = None) -> cn.NormalGamma:
    """(μ_kd, τ_kd) | z, x ~ NormalGamma(μ_n, λ_n, a_n, b_n), independently per k and d.

    With N_k, x̄_k and SS_k the count, mean and sum of squares of the points
    assigned to k: λ_n = λ + N_k, μ_n = (λ μ0 + N_k x̄_k)/λ_n, a_n = a + N_k/2,
    b_n = b + SS_k/2 + λ N_k (x̄_k − μ0)²/(2 λ_n)  (the CSE 5523 lecture notes 23 §23.4 with a proper
    prior).

    Parameters
    ----------
    state : MixtureState
        The current state (``z`` is used).
    d : MixtureData
        The data.
    mu0, lam, a, b : float or array_like, optional
        The prior, as in :func:`normal_gamma`.
    rows : Rows, optional
        Observations split over devices: sums over the devices.

    Returns
    -------
    gibbsjax.conjugate_normal.NormalGamma
        The posterior parameters, (K, D) arrays.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([1.0, 2.0, 4.0])
    >>> s = MixtureState(z=jnp.array([0, 0, 1]), log_weights=jnp.log(jnp.array([0.5, 0.5])),
    ...                  mu=jnp.array([1.5, 4.0]), tau=jnp.array([1.0, 1.0]))
    >>> post = components_posterior(s, d, mu0=0.0, lam=1.0, a=1.0, b=1.0)
    >>> post.mu0.ravel().tolist(), post.lam.ravel().tolist(), post.a.ravel().tolist(), post.b.ravel().tolist()
    ([1.0, 2.0], [3.0, 2.0], [2.0, 1.5], [2.0, 5.0])
    """
    k = state.log_weights.shape[0]
    ng = prior(d, k, mu0=mu0, lam=lam, a=a, b=b)
    if rows is None:
        return cn.posterior(ng, *cn.component_stats(_x2(d), state.z, k))
    return cn.posterior(ng, *cn.component_stats(_x2(d), state.z, k, weights=rows.real, total=rows.sum))


def sample_parameters(key, state: MixtureState, d: MixtureData, *, alpha, mu0=None,
                      lam=cn.DEFAULT_LAM, a=cn.DEFAULT_A, b=None, rows: Rows | None = None) -> MixtureState:
    """Draw log w | z (:func:`weights_posterior`) and (μ, τ) | z, x (:func:`components_posterior`).

    Given z the weights and the component parameters are independent, so the
    two conditionals are drawn as one block, with one Gamma call
    (:func:`gibbsjax.conjugate_normal.sample_conjugate`); log w is drawn in
    log space (safe for tiny α).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : MixtureState
        The current state (``z`` is used).
    d : MixtureData
        The data.
    alpha : float or jax.Array
        The concentration of the weights.
    mu0, lam, a, b : float or array_like, optional
        The prior, as in :func:`normal_gamma`.
    rows : Rows, optional
        Observations split over devices: sums over the devices.

    Returns
    -------
    MixtureState
        The state with new log weights, μ and τ.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = data([1.0, 2.0, 4.0])
    >>> s = MixtureState(z=jnp.array([0, 0, 1]), log_weights=jnp.log(jnp.array([0.5, 0.5])),
    ...                  mu=jnp.array([1.5, 4.0]), tau=jnp.array([1.0, 1.0]))
    >>> new = sample_parameters(jax.random.key(0), s, d, alpha=1.0, mu0=0.0, lam=1.0, a=1.0, b=1.0)
    >>> new.mu.shape, bool((new.tau > 0).all()), round(float(jnp.exp(new.log_weights).sum()), 4)
    ((2,), True, 1.0)
    """
    post_w = weights_posterior(state, d, alpha=alpha, rows=rows)
    post_c = components_posterior(state, d, mu0=mu0, lam=lam, a=a, b=b, rows=rows)
    (log_w,), (mu, tau) = cn.sample_conjugate(key, [post_w], post_c, dtype=d.x.dtype)
    shape = state.mu.shape
    return state._replace(log_weights=log_w, mu=mu.reshape(shape), tau=tau.reshape(shape))


# ============================================================================ the kernel
def normal_gamma(
    K: int = 2,
    alpha: Any = 1.0,
    mu0: Any = None,
    lam: float = cn.DEFAULT_LAM,
    a: float = cn.DEFAULT_A,
    b: Any = None,
    dim: int | None = None,
    allow_improper: bool = False,
) -> Kernel:
    """Gibbs sampler for a K-component Gaussian mixture with Normal-Gamma priors.

    Data: :func:`data`.  Records: module docs (label switching).  Random
    starts: K data points drawn without replacement as means, precisions
    K^(2/D)/s², equal weights.

    Parameters
    ----------
    K : int, default 2
        Number of components (>= 1).
    alpha : float or sequence of float, default 1.0
        Dirichlet concentration of the weights: a positive number or K numbers.
    mu0 : float or array_like, optional
        Normal-Gamma prior mean (μ | τ ~ N(μ0, 1/(λτ))); ``None``: the data mean.
        May be given per dimension.
    lam : float, default 0.01
        λ, the prior's precision multiplier.
    a : float, default 1.5
        The shape of τ ~ Gamma(a, rate b).
    b : float or array_like, optional
        The rate of τ; ``None``: a s²/K^(2/D) (module docs).  May be given per dimension.
    dim : int, optional
        ``None`` for univariate data x of shape (N,); an integer D for data of
        shape (N, D) with a diagonal precision (independent Normal-Gamma per
        dimension).
    allow_improper : bool, default False
        Accept λ, a or b equal to 0 (module docs: what can go wrong).

    Returns
    -------
    Kernel
        The sampler; run it with :func:`gibbsjax.sample`.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.datasets.tabular import faithful
    >>> x = data(faithful()["eruptions_min"])
    >>> idata = gibbsjax.sample(normal_gamma(K=2), x, seed=0, num_warmup=200, num_draws=200,
    ...                         progress=False)
    >>> [round(float(m), 1) for m in idata.posterior["mu_sorted"].mean(("chain", "draw"))]
    [2.0, 4.3]
    """
    K = check_int("K", K, 1)
    if dim is not None:
        dim = check_int("dim", dim, 1)
    alpha = check_concentration("alpha", alpha, ((), (K,)))
    mu0, lam, a, b = cn.check_normal_gamma(
        mu0, lam, a, b, dim=1 if dim is None else dim, allow_improper=allow_improper
    )
    return _normal_gamma(K, alpha, mu0, lam, a, b, dim, allow_improper)


@functools.lru_cache(maxsize=64)
def _normal_gamma(K, alpha, mu0, lam, a, b, dim, allow_improper) -> Kernel:
    proper = cn.is_proper(lam, a, b)
    hyper = {"mu0": mu0, "lam": lam, "a": a, "b": b}

    def check(d):
        if not isinstance(d, MixtureData):
            raise ValueError(
                "data must be built with gibbsjax.models.gaussian_mixture.data(x), "
                f"got {type(d).__name__}"
            )
        if dim is None and d.x.ndim != 1:
            raise ValueError(
                f"this kernel is univariate (dim=None) and needs x of shape (N,), got {d.x.shape}; "
                f"use normal_gamma(..., dim={d.x.shape[-1]}) for (N, D) data"
            )
        if dim is not None and (d.x.ndim != 2 or d.x.shape[1] != dim):
            raise ValueError(f"this kernel has dim={dim} and needs x of shape (N, {dim}), got {d.x.shape}")

    def shape(d):
        return (K,) if dim is None else (K, dim)

    def functions(rows: Rows | None):
        """The kernel's functions on all observations (``rows`` None) or on one device's
        observations (:mod:`gibbsjax.rows`)."""

        def init(key, d):
            if rows is None:
                check(d)
            k1, k2 = jax.random.split(key)
            n = d.x.shape[0] if rows is None else rows.num_rows
            if K <= n:
                idx = jax.random.permutation(k1, n)[:K]
            else:
                idx = jax.random.randint(k1, (K,), 0, n)
            ndim = 1 if dim is None else dim
            # the start picks K observations of the whole data (gathered once when they are split)
            x_all = _x2(d) if rows is None else rows.gather(_x2(d))
            mu = x_all[idx].reshape(shape(d))
            tau = jnp.broadcast_to(float(K) ** (2.0 / ndim) / d.scale2, (K, ndim)).reshape(shape(d))
            log_w = jnp.full((K,), -np.log(K), d.x.dtype)
            state = MixtureState(jnp.zeros(d.x.shape[0], jnp.int32), log_w, mu.astype(d.x.dtype),
                                 tau.astype(d.x.dtype))
            return state._replace(z=sample_z(k2, state, d, rows))

        def record(state, d):
            order = jnp.argsort(_p2(state.mu)[:, 0])
            weights = jnp.exp(state.log_weights)
            sigma = jax.lax.rsqrt(state.tau)
            return {
                "weights": weights,
                "mu": state.mu,
                "sigma": sigma,
                "weights_sorted": weights[order],
                "mu_sorted": state.mu[order],
                "sigma_sorted": sigma[order],
                "log_lik": log_likelihood(state, d, rows),
            }

        def accumulate(state, d):
            # Rao-Blackwellised: p(z_n = k | w, μ, τ, x_n), averaged over draws by the runner
            return {"membership": jax.nn.softmax(state.log_weights + backward_messages(state, d), axis=-1)}

        def log_joint(state, d):
            """log p(w, μ, τ, z, x) (up to a constant when the prior is improper)."""
            if rows is None:
                check(d)
            ng = prior(d, K, **hyper)
            alpha_ = jnp.broadcast_to(jnp.asarray(alpha, d.x.dtype), (K,))
            lp = cj.log_dirichlet_density(state.log_weights, alpha_)
            lp += jnp.sum(cn.log_density(_p2(state.mu), _p2(state.tau), ng, proper=proper))
            msgs = backward_messages(state, d)
            lp += rw.row_sum(rows, jnp.take_along_axis(state.log_weights[None, :] + msgs, state.z[:, None], axis=1))
            return lp

        step = sweep(("z", functools.partial(sample_z, rows=rows)),
                     functools.partial(sample_parameters, alpha=alpha, **hyper, rows=rows))
        def pointwise(state, d):
            # log p(x_n | w, μ, τ) = log Σ_k w_k N(x_n; μ_k, σ_k), one value per observation (z summed out)
            return {"x": jax.nn.logsumexp(state.log_weights + backward_messages(state, d), axis=-1)}

        return {"init": init, "step": step, "record": record, "log_joint": log_joint, "accumulate": accumulate,
                "log_likelihood": pointwise}

    def sample_prior(key, d):
        check(d)
        k1, k2 = jax.random.split(key)
        dtype = d.x.dtype
        alpha_ = jnp.broadcast_to(jnp.asarray(alpha, dtype), (K,))
        ng = prior(d, K, **hyper)
        ng = cn.NormalGamma(*(jnp.broadcast_to(v, (K, ng.mu0.shape[0])) for v in ng))
        (log_w,), (mu, tau) = cn.sample_conjugate(k1, [alpha_], ng, dtype=dtype)
        z = gr.categorical(k2, log_w, shape=(d.x.shape[0],))
        return MixtureState(z, log_w, mu.reshape(shape(d)), tau.reshape(shape(d)))

    def simulate_data(key, state, d):
        mu, tau = _p2(state.mu)[state.z], _p2(state.tau)[state.z]
        eps = gr.normal(key, shape=mu.shape, dtype=d.x.dtype)
        x = mu + eps * jax.lax.rsqrt(tau)
        return MixtureData(x.reshape(d.x.shape), d.center, d.scale2)

    comp = ("component",) if dim is None else ("component", "dim")
    rank = ("rank",) if dim is None else ("rank", "dim")
    # shard: observations split over devices (:mod:`gibbsjax.rows`)
    return rw.kernel(
        functions, check=check, num_rows=lambda d: int(d.x.shape[0]),
        padded=lambda d, p, r: rw.pad_row_fields(d, ["x"], p, r),
        state_specs=MixtureState(rw.P(rw.AXIS), rw.P(), rw.P(), rw.P()), row_accumulators=("membership",),
        what="observations",
        dims={
            "weights": ("component",),
            "mu": comp,
            "sigma": comp,
            "weights_sorted": ("rank",),
            "mu_sorted": rank,
            "sigma_sorted": rank,
            "log_lik": (),
            "membership": ("obs", "component"),
            "x": ("obs",),  # the pointwise log likelihood
        },
        observed_data=lambda d: {"x": (("obs",) if dim is None else ("obs", "dim"), d.x)},
        sample_prior=sample_prior if proper else None,
        simulate_data=simulate_data,
        check_init=init_checker(positive=("tau",), log_simplex=("log_weights",), labels={"z": K}),
        name="gaussian_mixture.normal_gamma",
        label_dims=("component",),
    )

