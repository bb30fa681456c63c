"""Normal-Gamma and Dirichlet conjugate updates shared by the Gaussian models.

One layer below :mod:`gibbsjax.models`: the Gaussian mixture
(:mod:`gibbsjax.models.gaussian_mixture`) and the Gaussian-emission HMM
(:mod:`gibbsjax.models.hmm`) both draw per-component (μ_k, τ_k) from
Normal-Gamma posteriors given hard assignments z, and both draw weights or
transition rows from Dirichlet posteriors given counts.

Parameterisation (precision τ = 1/σ², rate b)::

    τ ~ Gamma(a, rate b),        μ | τ ~ N(μ0, 1/(λ τ)).

Given the n observations x_1..x_n assigned to a component, with mean x̄ and
SS = Σ (x_i − x̄)², the posterior is Normal-Gamma(μ_n, λ_n, a_n, b_n) with

    λ_n = λ + n,   μ_n = (λ μ0 + n x̄) / λ_n,   a_n = a + n/2,
    b_n = b + SS/2 + λ n (x̄ − μ0)² / (2 λ_n).

Multivariate data with a diagonal precision is handled dimension by dimension
(independent Normal-Gamma per dimension): every array here has a trailing
dimension axis D, and the univariate case is D = 1.

Data-scaled defaults (:func:`data_scaled_prior`) follow the conjugate prior
Fraley & Raftery (2007) use as mclust's default ("Bayesian regularization for
normal mixture estimation and model-based clustering", J. Classification
24:155–181): μ0 = the data mean, λ = 0.01, and an inverse-χ² prior on σ² with
ν = 3 degrees of freedom and scale ς² = s² / K^(2/D) (s² the data variance,
K components), i.e. a = ν/2 = 3/2 and b = ν ς²/2 = a s² / K^(2/D).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import as_numbers, check_values
from gibbsjax._checks import hashable as _hashable
from jax.scipy.special import gammaln

from gibbsjax import random as gr

__all__ = [
    "NormalGamma",
    "DEFAULT_LAM",
    "DEFAULT_A",
    "check_normal_gamma",
    "is_proper",
    "data_scaled_prior",
    "reference_scale",
    "component_stats",
    "posterior",
    "sample",
    "log_density",
    "log_normal",
    "sample_conjugate",
]

#: default prior sample size λ of the component means (Fraley & Raftery 2007)
DEFAULT_LAM = 0.01
#: default Gamma shape a of the precisions: ν/2 with ν = 3 (Fraley & Raftery 2007, d = 1)
DEFAULT_A = 1.5


class NormalGamma(NamedTuple):
    """Normal-Gamma parameters: τ ~ Gamma(a, rate b), μ | τ ~ N(mu0, 1/(lam τ)).

    Fields are arrays broadcasting against the (K, D) component parameters.

    Examples
    --------
    >>> from gibbsjax.conjugate_normal import NormalGamma
    >>> prior = NormalGamma(mu0=0.0, lam=1.0, a=2.0, b=2.0)
    >>> prior.a / prior.b
    1.0
    """

    mu0: jax.Array
    lam: jax.Array
    a: jax.Array
    b: jax.Array


# ============================================================================ validation
def _as_float_array(name: str, value: Any) -> np.ndarray:
    return as_numbers(name, value)  # strings and bools are not numbers


def _check_shape(name: str, arr: np.ndarray, shapes: tuple[tuple[int, ...], ...]) -> None:
    if arr.shape not in shapes:
        want = " or ".join("a scalar" if s == () else f"shape {s}" for s in shapes)
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")


def check_normal_gamma(
    mu0: Any, lam: Any, a: Any, b: Any, *, dim: int, allow_improper: bool
) -> tuple[Any, float, float, Any]:
    """Validate Normal-Gamma hyperparameters; returns hashable ``(mu0, lam, a, b)``.

    ``mu0`` and ``b`` may be ``None`` (data-scaled defaults, see
    :func:`data_scaled_prior`), a number, or ``dim`` numbers (one per data
    dimension); ``lam`` and ``a`` are numbers.  A proper prior needs λ > 0,
    a > 0 and b > 0.  Zeros (the improper "uninformative" limit λ = a = b = 0
    of the CSE 5523 lecture notes 23) are accepted only with ``allow_improper=True``;
    negative or non-finite values never.
    """
    if not isinstance(allow_improper, bool):
        raise ValueError(f"allow_improper must be true or false, got {allow_improper!r}")
    shapes = ((), (dim,))
    out = []
    for name, value, vector in (("mu0", mu0, True), ("lam", lam, False), ("a", a, False), ("b", b, True)):
        if value is None and vector:
            out.append(None)
            continue
        arr = _as_float_array(name, value)
        _check_shape(name, arr, shapes if vector else ((),))
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {value!r}")
        # in the range a run in the working dtype can use (μ0 a location; λ, a, b positive, or 0 when improper)
        check_values(name, arr, "real" if name == "mu0" else "nonnegative")
        if name != "mu0":
            if np.any(arr < 0):
                raise ValueError(f"{name} must be positive, got {value!r}")
            if np.any(arr == 0) and not allow_improper:
                raise ValueError(
                    f"{name} = 0 makes the Normal-Gamma prior improper (the CSE 5523 lecture notes' 'uninformative' "
                    f"mu0 = lam = a = b = 0); give {name} > 0, or pass allow_improper=True "
                    "if you accept an improper posterior (see the model's docs)"
                )
        out.append(_hashable(arr))
    return tuple(out)  # type: ignore[return-value]


def is_proper(lam: float, a: float, b: Any) -> bool:
    """True when λ > 0, a > 0 and b > 0 (``b=None``, data-scaled, counts as positive when a > 0)."""
    if lam <= 0 or a <= 0:
        return False
    if b is None:
        return True
    return bool(np.all(np.asarray(b) > 0))


def reference_scale(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-dimension mean and variance (ddof = 1) of observations ``x`` of shape (N, D).

    These are the data's *reference* location and scale for data-scaled
    priors.  A dimension without spread (N = 1, or all values equal) gets
    variance 1, so a data-scaled b stays positive.
    """
    center = x.mean(axis=0)
    if x.shape[0] > 1:
        var = x.var(axis=0, ddof=1)
    else:
        var = np.ones(x.shape[1])
    var = np.where(np.isfinite(var) & (var > 0), var, 1.0)
    return center, var


def data_scaled_prior(
    center: jax.Array,
    scale2: jax.Array,
    num_components: int,
    *,
    mu0: Any = None,
    lam: float = DEFAULT_LAM,
    a: float = DEFAULT_A,
    b: Any = None,
) -> NormalGamma:
    """Resolve hyperparameters, filling ``None`` ones from the data's reference scale.

    ``center`` and ``scale2`` have shape (D,): the data mean and variance s²
    (frozen when the data were built).  Defaults (Fraley & Raftery 2007):
    μ0 = center, b = a s² / K^(2/D) (an inverse-χ² prior on σ² with ν = 2a
    degrees of freedom and scale ς² = s² / K^(2/D): K components share the
    data's spread, each covering about 1/K of it per unit of D-volume).
    λ = 0.01 makes the prior on μ_k about 10 component standard deviations
    wide (sd σ_k/√λ) and shrinks a component mean by λ/(λ + n_k), < 1 % with
    one assigned point.

    Returns a :class:`NormalGamma` of arrays of shape (D,).
    """
    dtype = center.dtype
    d = center.shape[-1]
    mu0_ = center if mu0 is None else jnp.broadcast_to(jnp.asarray(mu0, dtype), (d,))
    if b is None:
        b_ = jnp.asarray(a, dtype) * scale2 / float(num_components) ** (2.0 / d)
    else:
        b_ = jnp.broadcast_to(jnp.asarray(b, dtype), (d,))
    return NormalGamma(mu0_, jnp.asarray(lam, dtype), jnp.asarray(a, dtype), b_.astype(dtype))


# ============================================================================ conditionals
def component_stats(x: jax.Array, z: jax.Array, num_components: int, weights: jax.Array | None = None,
                    total=None):
    """Counts, means and within-component sums of squares of assigned observations.

    ``x`` is (N, D), ``z`` (N,) integer labels in [0, K), ``weights`` (N,)
    optional 0/1 (or non-negative) weights, e.g. a padding mask.  Returns
    ``(n, xbar, ss)`` of shapes (K,), (K, D), (K, D), with x̄ = 0 for an empty
    component.  Two passes (the means first, then Σ w (x − x̄_z)²), so the sums
    of squares do not cancel in float32.  ``total``: with observations split over
    devices (:mod:`gibbsjax.rows`), the sum over the devices of each pass's sums.
    """
    total = (lambda t: t) if total is None else total
    w = jnp.ones(x.shape[0], x.dtype) if weights is None else weights.astype(x.dtype)
    n, sums = total((jax.ops.segment_sum(w, z, num_segments=num_components),
                     jax.ops.segment_sum(w[:, None] * x, z, num_segments=num_components)))
    xbar = sums / jnp.maximum(n, 1)[:, None]
    dev = x - xbar[z]
    ss = total(jax.ops.segment_sum(w[:, None] * dev * dev, z, num_segments=num_components))
    return n, xbar, ss


def posterior(prior: NormalGamma, n: jax.Array, xbar: jax.Array, ss: jax.Array) -> NormalGamma:
    """Normal-Gamma posterior given (n, x̄, SS) per component (module docs for the formulas).

    ``n`` is (K,), ``xbar`` and ``ss`` are (K, D); returns (K, D) arrays.
    """
    n = n[:, None]
    lam_n = prior.lam + n
    # with an improper prior (lam = 0) and n = 0 this is 0/0 = NaN: the posterior does not exist
    shrink = n / lam_n
    dev = xbar - prior.mu0
    mu_n = prior.mu0 + shrink * dev
    a_n = prior.a + 0.5 * n
    b_n = prior.b + 0.5 * ss + 0.5 * prior.lam * shrink * dev * dev
    shape = jnp.broadcast_shapes(mu_n.shape, a_n.shape, b_n.shape)
    return NormalGamma(*(jnp.broadcast_to(p, shape) for p in (mu_n, lam_n, a_n, b_n)))


def sample(key: jax.Array, params: NormalGamma, dtype=jnp.float32) -> tuple[jax.Array, jax.Array]:
    """(μ, τ) ~ Normal-Gamma(params), elementwise (:func:`gibbsjax.random.normal_gamma`)."""
    return gr.normal_gamma(key, params.mu0, params.lam, params.a, params.b, dtype=dtype)


def log_density(mu: jax.Array, tau: jax.Array, prior: NormalGamma, *, proper: bool = True) -> jax.Array:
    """log NormalGamma(μ, τ; μ0, λ, a, b), elementwise.

    With ``proper=False`` (an improper prior, some of λ, a, b zero) only the
    terms that vary with (μ, τ) are kept: (a − 1) log τ − b τ, plus
    ½ log τ − λ τ (μ − μ0)²/2 when λ > 0.
    """
    log_tau = jnp.log(tau)
    quad = 0.5 * prior.lam * tau * (mu - prior.mu0) ** 2
    if proper:
        return (
            prior.a * jnp.log(prior.b) - gammaln(prior.a) + (prior.a - 1.0) * log_tau - prior.b * tau
            + 0.5 * (jnp.log(prior.lam) + log_tau - math.log(2.0 * math.pi)) - quad
        )
    flat_mu = jnp.asarray(prior.lam) == 0
    mu_part = jnp.where(flat_mu, 0.0, 0.5 * log_tau - quad)
    return (prior.a - 1.0) * log_tau - prior.b * tau + mu_part


def log_normal(x: jax.Array, mu: jax.Array, tau: jax.Array) -> jax.Array:
    """log N(x; μ, 1/τ), elementwise with broadcasting."""
    return 0.5 * (jnp.log(tau) - math.log(2.0 * math.pi)) - 0.5 * tau * (x - mu) ** 2


# ============================================================================ joint conjugate draws
def sample_conjugate(key, dirichlet=(), normal_gamma: NormalGamma | None = None, dtype=jnp.float32):
    """Independent draws from several Dirichlets and one Normal-Gamma, with a single Gamma call.

    ``dirichlet``: a sequence of concentration arrays, each (..., C) with
    categories along the last axis (rows are independent Dirichlets);
    ``normal_gamma``: a :class:`NormalGamma` of equal-shaped arrays, or None.
    Returns ``(log_probs, mu_tau)``: a list of log-probability arrays (one per
    concentration array, shapes kept) and ``(mu, tau)`` or None.

    The draws are exactly those of :func:`gibbsjax.random.log_dirichlet` and
    :func:`gibbsjax.random.normal_gamma` (log p = log G − logsumexp(log G);
    log τ = log G − log b, μ = μ0 + ε / sqrt(λ τ)), but every Gamma variate
    comes from one :func:`gibbsjax.random.log_gamma` call on the concatenated
    shapes.  Gibbs blocks that are conditionally independent (mixture weights
    and component parameters given z; an HMM's initial distribution,
    transition rows and emissions given the paths) are drawn together this way:
    the result is the same joint draw, and the compiled sweep holds one Gamma
    sampler instead of several (each costs about a second of XLA compile time
    on a CPU).
    """
    parts = [jnp.asarray(c, dtype) for c in dirichlet]
    shapes = [p.shape for p in parts]
    flat = [p.reshape(-1) for p in parts]
    if normal_gamma is not None:
        ng = NormalGamma(*(jnp.asarray(v, dtype) for v in normal_gamma))
        ng_shape = jnp.broadcast_shapes(*(v.shape for v in ng))
        ng = NormalGamma(*(jnp.broadcast_to(v, ng_shape) for v in ng))
        flat.append(ng.a.reshape(-1))
    if not flat:
        return [], None
    key_gamma, key_normal = jax.random.split(key)
    log_g = gr.log_gamma(key_gamma, jnp.concatenate(flat), dtype=dtype)
    out, start = [], 0
    for shape in shapes:
        size = math.prod(shape)
        lg = log_g[start:start + size].reshape(shape)
        out.append(lg - jax.nn.logsumexp(lg, axis=-1, keepdims=True))
        start += size
    mu_tau = None
    if normal_gamma is not None:
        log_tau = log_g[start:].reshape(ng_shape) - jnp.log(ng.b)
        eps = gr.normal(key_normal, shape=ng_shape, dtype=dtype)
        mu = ng.mu0 + eps * jnp.exp(-0.5 * (jnp.log(ng.lam) + log_tau))
        mu_tau = (mu, jnp.exp(log_tau))
    return out, mu_tau
