"""Hidden Markov models sampled by forward filtering, backward sampling (FFBS).

Model (K hidden states; S sequences y_s of lengths T_s)::

    π ~ Dirichlet(α_init)                 initial distribution
    A_j ~ Dirichlet(α_trans_j)            transition rows, A_jk = p(z_t = k | z_{t-1} = j)
    z_s1 ~ Categorical(π),  z_st | z_s,t-1 ~ Categorical(A_{z_s,t-1})
    emissions, either
      categorical (:func:`categorical`):  B_k ~ Dirichlet(β_k),  y_st | z_st = k ~ Categorical(B_k)
      Gaussian    (:func:`gaussian`):     (μ_k, τ_k) ~ NormalGamma(μ0, λ, a, b),
                                          y_st | z_st = k ~ N(μ_k, 1/τ_k)

The Gibbs sweep draws

1. :func:`sample_paths`: every hidden path z_s | θ, y_s jointly by FFBS
   (Carter & Kohn 1996, cited in the CSE 5523 lecture notes 23 §23.2; Frühwirth-Schnatter 1994):
   :func:`~gibbsjax.models.ffbs.forward_filter` computes the filtered distributions
   p(z_t | y_1..t) in log space, normalised by a logsumexp at every step (so
   it is stable for any length), then :func:`~gibbsjax.models.ffbs.ffbs` samples backwards
   z_T ~ p(z_T | y_1..T), z_t | z_t+1 ∝ p(z_t | y_1..t) A_{z_t, z_t+1}, one
   categorical draw (one uniform) per step.  Exact; sequences are
   independent given θ, so they are sampled side by side (vmap).
2. :func:`sample_parameters`, one block, as these are independent given the
   paths: log π | z ~ log Dirichlet(α_init + counts of z_s1)
   (:func:`initial_posterior`); log A_j | z ~ log Dirichlet(α_trans_j + n_j·),
   n_jk = #{(s, t): z_s,t-1 = j, z_st = k} (:func:`transition_posterior`);
   emissions: log B_k | z, y ~ log Dirichlet(β_k + counts of each symbol in
   state k) (:func:`emission_posterior`) or (μ_k, τ_k) | z, y from their
   Normal-Gamma posteriors (:func:`gaussian_emission_posterior`,
   :mod:`gibbsjax.conjugate_normal`).

Sequences of different lengths are padded to a common length T (data
constructors :func:`categorical_data`, :func:`gaussian_data`) and carry their
``lengths``; padding steps (t >= T_s) change nothing: the forward pass carries
its state through them, the backward pass starts at t = T_s − 1, padded path
entries are 0 and all counts skip them.  Step t of sequence s uses the key
``fold_in(fold_in(key, s), t)``, so a sequence's path does not depend on the
padded length nor on the other sequences.  One compiled kernel serves every
data set of the same padded shape (pass ``pad_to`` to fix it).

Gaussian priors: proper, data-scaled by default, exactly as in
:mod:`gibbsjax.models.gaussian_mixture` (μ0 = data mean, λ = 0.01, a = 3/2,
b = a s²/K², Fraley & Raftery 2007); zeros need ``allow_improper=True``, and
then a state that no observation visits has no proper posterior (NaN).

Label switching
---------------
With exchangeable priors (scalar concentrations, the default) states are
interchangeable.  Raw per-state records (``initial`` (state),
``transition`` (state, state_to), ``emission`` (state, symbol) or ``mu``,
``sigma`` (state)) compare across chains only after :func:`gibbsjax.specs.hmm.align`.
Label-invariant as recorded: ``lp`` (log joint, ``sample_stats``),
``log_lik`` (Σ_s log p(y_s | θ), paths summed out by the forward pass), and
the states sorted by their emission mean (Σ_v v B_kv, or μ_k):
``emission_sorted`` / ``mu_sorted``, ``sigma_sorted``, ``initial_sorted``,
``transition_sorted`` (dims ``rank``, ``rank_to``).  Paths are not recorded
per draw; ``posterior_mean["state_probs"]`` (sequence, step, state) holds each
chain's posterior probability of every state at every step (the frequency of
the sampled paths, accumulated by the runner; 0 at padding; aligned by
:func:`gibbsjax.specs.hmm.align`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gibbsjax import conjugate as cj
from gibbsjax import conjugate_normal as cn
from gibbsjax._checks import check_concentration, check_int
from gibbsjax import random as gr
from gibbsjax._checks import init_checker
from gibbsjax import rows as rw
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.models.ffbs import ffbs, forward_log_likelihood, sample_markov_path
from gibbsjax.models.hmm_data import CategoricalHMMData, GaussianHMMData, categorical_data, gaussian_data, step_mask
from gibbsjax.rows import Rows

__all__ = [
    "CategoricalHMMData",
    "GaussianHMMData",
    "CategoricalHMMState",
    "GaussianHMMState",
    "categorical_data",
    "gaussian_data",
    "categorical",
    "gaussian",
    "emission_log_lik",
    "sequence_log_likelihoods",
    "sample_paths",
    "initial_posterior",
    "transition_posterior",
    "emission_posterior",
    "gaussian_emission_posterior",
    "sample_parameters",
]


# ============================================================================ states and conditionals
class CategoricalHMMState(NamedTuple):
    """One chain's state of the categorical HMM.

    Parameters
    ----------
    z : jax.Array
        (S, T) int32: the hidden paths.
    log_initial : jax.Array
        (K,): log π.
    log_transition : jax.Array
        (K, K): log A, row j for A_j.
    log_emission : jax.Array
        (K, V): log B, row k for state k.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import hmm
    >>> d = hmm.categorical_data([[0, 1, 1, 2], [2, 2, 0]])
    >>> state = hmm.categorical(2).init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('CategoricalHMMState', ('z', 'log_initial', 'log_transition', 'log_emission'))
    """

    z: jax.Array
    log_initial: jax.Array
    log_transition: jax.Array
    log_emission: jax.Array


class GaussianHMMState(NamedTuple):
    """One chain's state of the Gaussian HMM.

    Parameters
    ----------
    z : jax.Array
        (S, T) int32: the hidden paths.
    log_initial : jax.Array
        (K,): log π.
    log_transition : jax.Array
        (K, K): log A, row j for A_j.
    mu : jax.Array
        (K,): the states' means.
    tau : jax.Array
        (K,): the states' precisions.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.models import hmm
    >>> d = hmm.gaussian_data([[0.1, 0.3, 2.5], [2.2, 0.0]])
    >>> state = hmm.gaussian(2).init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('GaussianHMMState', ('z', 'log_initial', 'log_transition', 'mu', 'tau'))
    """

    z: jax.Array
    log_initial: jax.Array
    log_transition: jax.Array
    mu: jax.Array
    tau: jax.Array


def emission_log_lik(state, d) -> jax.Array:
    """log p(y_st | z_st = k) for every sequence, step and state.

    Parameters
    ----------
    state : CategoricalHMMState or GaussianHMMState
        The emission parameters (the paths are not read).
    d : CategoricalHMMData or GaussianHMMData
        The sequences.

    Returns
    -------
    jax.Array
        (S, T, K); finite junk at padding steps.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> ll = emission_log_lik(s, d)
    >>> ll.shape, [round(float(v), 4) for v in ll[0, 0]]   # y = 0 at the first step: log 0.8, log 0.1
    ((2, 3, 2), [-0.2231, -2.3026])
    """
    if isinstance(state, CategoricalHMMState):
        return jnp.take(state.log_emission.T, d.y, axis=0)
    return cn.log_normal(d.y[..., None], state.mu, state.tau)


def sequence_log_likelihoods(state, d) -> jax.Array:
    """log p(y_s | π, A, emissions) per sequence, by the forward pass (paths summed out).

    Parameters
    ----------
    state : CategoricalHMMState or GaussianHMMState
        The parameters (the paths are not read).
    d : CategoricalHMMData or GaussianHMMData
        The sequences.

    Returns
    -------
    jax.Array
        (S,): one log-likelihood per sequence.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> ll = sequence_log_likelihoods(s, d)
    >>> ll.shape, round(float(ll[1]), 4)   # sequence 1 is y = [2]: log(0.5 * 0.1 + 0.5 * 0.8)
    ((2,), -0.7985)
    """
    ll = emission_log_lik(state, d)
    return jax.vmap(forward_log_likelihood, in_axes=(None, None, 0, 0))(
        state.log_initial, state.log_transition, ll, d.lengths
    )


def _sequence_keys(key, num_sequences, rows: Rows | None = None):
    """``fold_in(key, s)`` for every sequence s (with ``rows``: the global index of each local sequence)."""
    ids = jnp.arange(num_sequences) if rows is None else rows.ids
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, ids)


def sample_paths(key, state, d, rows: Rows | None = None) -> jax.Array:
    """z_s | π, A, emissions, y_s for every sequence s, by :func:`ffbs` (exact, blocked).

    Parameters
    ----------
    key : jax.Array
        PRNG key; sequence s uses ``fold_in(key, s)``.
    state : CategoricalHMMState or GaussianHMMState
        The current state (the parameters are read).
    d : CategoricalHMMData or GaussianHMMData
        The sequences.
    rows : gibbsjax.rows.Rows, optional
        Sequences split over devices (:mod:`gibbsjax.rows`); sequence s's path is
        drawn with the key of its global index, as on one device.

    Returns
    -------
    jax.Array
        (S, T) int32: the new paths, 0 at padding steps.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> z = sample_paths(jax.random.key(0), s, d)
    >>> z.shape, z.dtype, z[1, 1:].tolist()   # sequence 1 has one step; the rest is padding
    ((2, 3), dtype('int32'), [0, 0])
    """
    ll = emission_log_lik(state, d)
    keys = _sequence_keys(key, d.y.shape[0], rows)
    return jax.vmap(ffbs, in_axes=(0, None, None, 0, 0))(
        keys, state.log_initial, state.log_transition, ll, d.lengths
    )


def initial_posterior(state, d, *, alpha_init, rows: Rows | None = None) -> jax.Array:
    """π | z ~ Dirichlet(α_init + n), n_k = #{s : z_s1 = k}.

    Parameters
    ----------
    state : CategoricalHMMState or GaussianHMMState
        The current state (the paths are read).
    d : CategoricalHMMData or GaussianHMMData
        The sequences (not read; for a uniform signature).
    alpha_init : float or array_like
        Dirichlet concentration of π (a number or K numbers).
    rows : gibbsjax.rows.Rows, optional
        Sequences split over devices, the counts summed over them (likewise in the
        other posteriors).

    Returns
    -------
    jax.Array
        (K,): the posterior concentrations α_init + n.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> initial_posterior(s, d, alpha_init=1.0).tolist()   # one sequence starts in each state
    [2.0, 2.0]
    """
    k = state.log_initial.shape[0]
    dtype = state.log_initial.dtype
    n = rw.total(rows, cj.counts(rw.here(rows, state.z[:, 0], k), k))
    return jnp.asarray(alpha_init, dtype) + n.astype(dtype)


def transition_posterior(state, d, *, alpha_trans, rows: Rows | None = None) -> jax.Array:
    """A_j | z ~ Dirichlet(α_trans_j + n_j·), n_jk = #{(s, t) : z_s,t-1 = j, z_st = k, t < T_s}.

    Parameters
    ----------
    state : CategoricalHMMState or GaussianHMMState
        The current state (the paths are read).
    d : CategoricalHMMData or GaussianHMMData
        The sequences (their lengths are read).
    alpha_trans : float or array_like
        Dirichlet concentration of the transition rows (a number, K numbers or K × K).
    rows : gibbsjax.rows.Rows, optional
        Sequences split over devices.

    Returns
    -------
    jax.Array
        (K, K): the posterior concentrations, row j for A_j.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> transition_posterior(s, d, alpha_trans=1.0).tolist()   # transitions 0 -> 1 and 1 -> 1
    [[1.0, 2.0], [1.0, 2.0]]
    """
    k = state.log_initial.shape[0]
    dtype = state.log_initial.dtype
    mask = step_mask(d.lengths, state.z.shape[1])[:, 1:]
    n = rw.total(rows, cj.counts(state.z[:, :-1] * k + state.z[:, 1:], k * k, mask))
    return jnp.asarray(alpha_trans, dtype) + n.astype(dtype).reshape(k, k)


def emission_posterior(state: CategoricalHMMState, d: CategoricalHMMData, *, beta,
                       rows: Rows | None = None) -> jax.Array:
    """B_k | z, y ~ Dirichlet(β_k + m_k·), m_kv = #{(s, t) : z_st = k, y_st = v, t < T_s}.

    Parameters
    ----------
    state : CategoricalHMMState
        The current state (the paths are read).
    d : CategoricalHMMData
        The sequences.
    beta : float or array_like
        Dirichlet concentration of the emission rows (a number, V numbers or K × V).
    rows : gibbsjax.rows.Rows, optional
        Sequences split over devices.

    Returns
    -------
    jax.Array
        (K, V): the posterior concentrations, row k for B_k.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> emission_posterior(s, d, beta=1.0).tolist()   # state 0 emits 0; state 1 emits 1, 1 and 2
    [[2.0, 1.0, 1.0], [1.0, 3.0, 2.0]]
    """
    k, v = state.log_emission.shape
    dtype = state.log_emission.dtype
    mask = step_mask(d.lengths, state.z.shape[1])
    m = rw.total(rows, cj.counts(state.z * v + d.y, k * v, mask))
    return jnp.asarray(beta, dtype) + m.astype(dtype).reshape(k, v)


def gaussian_emission_posterior(state: GaussianHMMState, d: GaussianHMMData, *, mu0=None,
                                lam=cn.DEFAULT_LAM, a=cn.DEFAULT_A, b=None,
                                rows: Rows | None = None) -> cn.NormalGamma:
    """(μ_k, τ_k) | z, y ~ NormalGamma(μ_n, λ_n, a_n, b_n) over the real steps in state k.

    λ_n = λ + N_k, μ_n = (λ μ0 + N_k ȳ_k)/λ_n, a_n = a + N_k/2,
    b_n = b + SS_k/2 + λ N_k (ȳ_k − μ0)²/(2 λ_n).

    Parameters
    ----------
    state : GaussianHMMState
        The current state (the paths are read).
    d : GaussianHMMData
        The sequences.
    mu0 : float, optional
        Prior mean (default: data-scaled, the mean of all observations).
    lam : float, default ``gibbsjax.conjugate_normal.DEFAULT_LAM``
        Prior pseudo-count of the mean.
    a : float, default ``gibbsjax.conjugate_normal.DEFAULT_A``
        Gamma shape of the precision.
    b : float, optional
        Gamma rate of the precision (default: data-scaled).
    rows : gibbsjax.rows.Rows, optional
        Sequences split over devices.

    Returns
    -------
    gibbsjax.conjugate_normal.NormalGamma
        The posterior parameters (μ_n, λ_n, a_n, b_n), (K, 1) arrays.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> g = gaussian_data([[0.5, 1.5], [2.0]])
    >>> s = GaussianHMMState(z=jnp.array([[0, 1], [1, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                      log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                      mu=jnp.array([0.0, 2.0]), tau=jnp.array([1.0, 1.0]))
    >>> post = gaussian_emission_posterior(s, g, mu0=0.0, lam=1.0, a=1.0, b=1.0)
    >>> [round(float(m), 4) for m in post.mu0.ravel()], post.lam.ravel().tolist(), post.a.ravel().tolist()
    ([0.25, 1.1667], [2.0, 3.0], [1.5, 2.0])
    """
    k = state.mu.shape[0]
    prior = cn.data_scaled_prior(d.center, d.scale2, k, mu0=mu0, lam=lam, a=a, b=b)
    mask = step_mask(d.lengths, d.y.shape[1]).reshape(-1)
    stats = cn.component_stats(d.y.reshape(-1, 1), state.z.reshape(-1), k, weights=mask,
                               total=None if rows is None else rows.sum)
    return cn.posterior(prior, *stats)


def sample_parameters(key, state, d, *, alpha_init, alpha_trans, emission: Callable, rows: Rows | None = None):
    """Draw π | z, A | z and the emission parameters | z, y as one block.

    Given the paths these are independent (:func:`initial_posterior`,
    :func:`transition_posterior` and ``emission``), so one Gamma call draws them all
    (:func:`gibbsjax.conjugate_normal.sample_conjugate`).

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    state : CategoricalHMMState or GaussianHMMState
        The current state (the paths are read).
    d : CategoricalHMMData or GaussianHMMData
        The sequences.
    alpha_init : float or array_like
        Dirichlet concentration of π.
    alpha_trans : float or array_like
        Dirichlet concentration of the transition rows.
    emission : callable
        ``emission(state, d) -> (list of Dirichlet concentrations, NormalGamma or None)``:
        the emission posteriors (it takes ``rows=`` too when ``rows`` is given).
    rows : gibbsjax.rows.Rows, optional
        Sequences split over devices.

    Returns
    -------
    tuple
        ``(log_initial, log_transition, emission log-probabilities (a list), (mu, tau) or None)``.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> s = CategoricalHMMState(z=jnp.array([[0, 1, 1], [1, 0, 0]]), log_initial=jnp.log(jnp.array([0.5, 0.5])),
    ...                         log_transition=jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]])),
    ...                         log_emission=jnp.log(jnp.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))
    >>> emission = lambda state, data: ([emission_posterior(state, data, beta=1.0)], None)
    >>> log_pi, log_a, log_b, normal = sample_parameters(jax.random.key(0), s, d, alpha_init=1.0,
    ...                                                  alpha_trans=1.0, emission=emission)
    >>> log_pi.shape, log_a.shape, log_b[0].shape, normal
    ((2,), (2, 2), (2, 3), None)
    >>> jnp.exp(log_a).sum(axis=1).round(4).tolist()
    [1.0, 1.0]
    """
    dirichlets, ng = emission(state, d) if rows is None else emission(state, d, rows=rows)
    (log_initial, log_transition, *rest), mu_tau = cn.sample_conjugate(
        key,
        [initial_posterior(state, d, alpha_init=alpha_init, rows=rows),
         transition_posterior(state, d, alpha_trans=alpha_trans, rows=rows), *dirichlets],
        ng,
        dtype=state.log_initial.dtype,
    )
    return log_initial, log_transition, rest, mu_tau


# ============================================================================ kernels
class _Emission(NamedTuple):
    """What differs between emission families; the HMM kernel is built around it."""

    data_type: type
    state_type: type
    check: Callable  # data -> None (raises ValueError)
    init: Callable  # key, data -> dict of emission fields (a random start)
    init_reads_data: bool  # whether init looks at the observations (then sharded runs gather them once)
    posterior: Callable  # state, data, rows=None -> (Dirichlet concentrations, NormalGamma or None)
    prior: Callable  # data -> (Dirichlet concentrations, NormalGamma or None)
    fields: Callable  # (Dirichlet log-probabilities, (mu, tau) or None) -> dict of emission fields
    log_prior: Callable  # state, data -> scalar
    proper: bool  # whether the prior can be sampled
    simulate: Callable  # key, state, data -> data
    sort_key: Callable  # state -> (K,) scalar summary per state, for label-invariant records
    record: Callable  # state, order -> dict
    dims: dict


def _param_dtype(d):
    return d.y.dtype if jnp.issubdtype(d.y.dtype, jnp.floating) else jnp.zeros(()).dtype


def _build(K: int, alpha_init, alpha_trans, em: _Emission, name: str) -> Kernel:
    def check(d):
        if not isinstance(d, em.data_type):
            raise ValueError(
                f"data must be built with gibbsjax.models.hmm.{_DATA_BUILDER[em.data_type]}(...), "
                f"got {type(d).__name__}"
            )
        em.check(d)

    def dirichlet_prior(d):
        dtype = _param_dtype(d)
        a0 = jnp.broadcast_to(jnp.asarray(alpha_init, dtype), (K,))
        at = jnp.asarray(alpha_trans, dtype)
        at = jnp.broadcast_to(at if at.ndim != 1 else at[None, :], (K, K))
        return a0, at

    def functions(rows: Rows | None):
        """The kernel's functions on all sequences (``rows`` None) or on one device's
        sequences (:mod:`gibbsjax.rows`)."""

        def init(key, d):
            if rows is None:
                check(d)
            k1, k2, k3 = jax.random.split(key, 3)
            dtype = _param_dtype(d)
            log_initial = jnp.full((K,), -np.log(K), dtype)
            log_transition = jax.nn.log_softmax(gr.normal(k1, shape=(K, K), dtype=dtype), axis=-1)
            whole = d
            if rows is not None and em.init_reads_data:  # the start picks observations of the whole data
                whole = d._replace(y=rows.gather(d.y), lengths=rows.gather(d.lengths))
            state = em.state_type(
                z=jnp.zeros(d.y.shape, jnp.int32), log_initial=log_initial, log_transition=log_transition,
                **em.init(k2, whole),
            )
            return state._replace(z=sample_paths(k3, state, d, rows))

        def update_parameters(key, state, d):
            log_initial, log_transition, log_probs, mu_tau = sample_parameters(
                key, state, d, alpha_init=alpha_init, alpha_trans=alpha_trans, emission=em.posterior, rows=rows
            )
            return state._replace(log_initial=log_initial, log_transition=log_transition,
                                  **em.fields(log_probs, mu_tau))

        def log_joint(state, d):
            """log p(π, A, emissions, z, y) (up to a constant when the prior is improper)."""
            if rows is None:
                check(d)
            a0, at = dirichlet_prior(d)
            mask = step_mask(d.lengths, d.y.shape[1])
            lp = cj.log_dirichlet_density(state.log_initial, a0)
            lp += jnp.sum(cj.log_dirichlet_density(state.log_transition, at))
            lp += em.log_prior(state, d)
            lp += rw.row_sum(rows, state.log_initial[state.z[:, 0]])
            trans = state.log_transition[state.z[:, :-1], state.z[:, 1:]]
            ll = jnp.take_along_axis(emission_log_lik(state, d), state.z[..., None], axis=-1)[..., 0]
            # padding sequences have length 0: the masks leave them out
            return lp + rw.total(rows, jnp.sum(jnp.where(mask[:, 1:], trans, 0.0)) + jnp.sum(jnp.where(mask, ll, 0.0)))

        def record(state, d):
            order = jnp.argsort(em.sort_key(state))
            initial = jnp.exp(state.log_initial)
            transition = jnp.exp(state.log_transition)
            out = {
                "initial": initial,
                "transition": transition,
                "initial_sorted": initial[order],
                "transition_sorted": transition[order][:, order],
                "log_lik": rw.row_sum(rows, sequence_log_likelihoods(state, d)),
            }
            out.update(em.record(state, order))
            return out

        def accumulate(state, d):
            # posterior state probabilities per sequence and step (0 at padding), averaged by the runner
            mask = step_mask(d.lengths, d.y.shape[1])
            return {"state_probs": jax.nn.one_hot(state.z, K, dtype=_param_dtype(d)) * mask[..., None]}

        step = sweep(("z", functools.partial(sample_paths, rows=rows)), update_parameters)
        def log_likelihood(state, d):
            # log p(y_s | θ) per sequence, paths summed out by the forward pass
            return {"y": sequence_log_likelihoods(state, d)}

        return {"init": init, "step": step, "record": record, "log_joint": log_joint, "accumulate": accumulate,
                "log_likelihood": log_likelihood}

    def sample_prior(key, d):
        check(d)
        k1, k2 = jax.random.split(key)
        a0, at = dirichlet_prior(d)
        dirichlets, ng = em.prior(d)
        (log_initial, log_transition, *rest), mu_tau = cn.sample_conjugate(
            k1, [a0, at, *dirichlets], ng, dtype=_param_dtype(d)
        )
        s, t = d.y.shape
        z = jax.vmap(sample_markov_path, in_axes=(0, None, None, 0, None))(
            _sequence_keys(k2, s), log_initial, log_transition, d.lengths, t
        )
        return em.state_type(z=z, log_initial=log_initial, log_transition=log_transition,
                             **em.fields(rest, mu_tau))

    # shard: sequences split over devices (:mod:`gibbsjax.rows`)
    return rw.kernel(
        functions, check=check, num_rows=lambda d: int(d.y.shape[0]),
        padded=lambda d, p, r: rw.pad_row_fields(d, ["y", "lengths"], p, r),
        state_specs=em.state_type(rw.P(rw.AXIS), *([rw.P()] * (len(em.state_type._fields) - 1))),
        row_accumulators=("state_probs",), what="sequences",
        dims={
            "initial": ("state",),
            "transition": ("state", "state_to"),
            "initial_sorted": ("rank",),
            "transition_sorted": ("rank", "rank_to"),
            "log_lik": (),
            "state_probs": ("sequence", "step", "state"),
            "y": ("sequence",),  # the pointwise log likelihood
            **em.dims,
        },
        observed_data=lambda d: {"y": (("sequence", "step", *(("dim",) if d.y.ndim == 3 else ())), d.y),
                                 "lengths": (("sequence",), d.lengths)},
        sample_prior=sample_prior if em.proper else None,
        simulate_data=em.simulate,
        name=name,
        label_dims=("state", "state_to"),
        check_init=init_checker(
            positive=("tau",), log_simplex=("log_initial", "log_transition", "log_emission"), labels={"z": K}
        ),
    )


_DATA_BUILDER = {CategoricalHMMData: "categorical_data", GaussianHMMData: "gaussian_data"}


def _check_hmm_common(K, alpha_init, alpha_trans):
    K = check_int("K", K, 1)
    alpha_init = check_concentration("alpha_init", alpha_init, ((), (K,)))
    alpha_trans = check_concentration("alpha_trans", alpha_trans, ((), (K,), (K, K)))
    return K, alpha_init, alpha_trans


def categorical(K: int = 2, alpha_init: Any = 1.0, alpha_trans: Any = 1.0, beta: Any = 1.0) -> Kernel:
    """Gibbs sampler (FFBS) for an HMM with K states and categorical emissions.

    Data: :func:`categorical_data`.  Random starts: π uniform, A and B rows
    softmax(N(0, 1)) draws, then paths by FFBS.

    Parameters
    ----------
    K : int, default 2
        Number of hidden states.
    alpha_init : float or array_like, default 1.0
        Dirichlet concentration of π (a number or K numbers).
    alpha_trans : float or array_like, default 1.0
        Dirichlet concentration of the transition rows (a number, K numbers for every
        row, or a K × K matrix, row j for A_j; e.g. a larger diagonal for sticky states).
    beta : float or array_like, default 1.0
        Dirichlet concentration of the emission rows (a number, V numbers, or K × V).

    Returns
    -------
    gibbsjax.kernel.Kernel
        The sampler, for :func:`gibbsjax.sample`.

    Raises
    ------
    ValueError
        For a K below 1, or a concentration that is not positive or has the wrong shape.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.datasets.tabular import casino
    >>> d = categorical_data(casino(num_sequences=2, min_length=50, max_length=80)["sequences"], 6)
    >>> idata = gibbsjax.sample(categorical(K=2), d, seed=0, num_warmup=20, num_draws=20,
    ...                         progress=False)
    >>> idata.posterior["emission"].shape
    (4, 20, 2, 6)
    """
    K, alpha_init, alpha_trans = _check_hmm_common(K, alpha_init, alpha_trans)
    if isinstance(beta, bool):
        raise ValueError(f"beta must be a number, V numbers or a K x V matrix, got {beta!r}")
    try:
        shape = np.shape(np.asarray(beta, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"beta must be a number, V numbers or a K x V matrix, got {beta!r}") from None
    if len(shape) > 2 or (len(shape) == 2 and shape[0] != K):
        raise ValueError(f"beta must be a number, V numbers or a K x V matrix (K = {K}), got shape {shape}")
    beta = check_concentration("beta", beta, (shape,))
    return _categorical(K, alpha_init, alpha_trans, beta)


@functools.lru_cache(maxsize=64)
def _categorical(K, alpha_init, alpha_trans, beta) -> Kernel:
    beta_shape = np.shape(beta)

    def check(d):
        v = d.symbol_counts.shape[0]
        if len(beta_shape) >= 1 and beta_shape[-1] != v:
            raise ValueError(f"beta has {beta_shape[-1]} entries per state but the data have V = {v} symbols")

    def beta_array(d):
        v = d.symbol_counts.shape[0]
        return jnp.broadcast_to(jnp.asarray(beta, _param_dtype(d)), (K, v))

    def init(key, d):
        v = d.symbol_counts.shape[0]
        return {"log_emission": jax.nn.log_softmax(gr.normal(key, shape=(K, v), dtype=_param_dtype(d)), axis=-1)}

    def simulate(key, state, d):
        mask = step_mask(d.lengths, d.y.shape[1])
        y = jnp.where(mask, gr.categorical(key, state.log_emission[state.z]), 0)
        return CategoricalHMMData(y, d.lengths, cj.counts(y, d.symbol_counts.shape[0], mask))

    def sort_key(state):
        v = state.log_emission.shape[1]
        return jnp.exp(state.log_emission) @ jnp.arange(v, dtype=state.log_emission.dtype)

    def record(state, order):
        emission = jnp.exp(state.log_emission)
        return {"emission": emission, "emission_sorted": emission[order]}

    em = _Emission(
        data_type=CategoricalHMMData,
        state_type=CategoricalHMMState,
        check=check,
        init=init,
        init_reads_data=False,
        posterior=lambda state, d, rows=None: ([emission_posterior(state, d, beta=beta, rows=rows)], None),
        prior=lambda d: ([beta_array(d)], None),
        fields=lambda log_probs, mu_tau: {"log_emission": log_probs[0]},
        log_prior=lambda state, d: jnp.sum(cj.log_dirichlet_density(state.log_emission, beta_array(d))),
        proper=True,
        simulate=simulate,
        sort_key=sort_key,
        record=record,
        dims={"emission": ("state", "symbol"), "emission_sorted": ("rank", "symbol")},
    )
    return _build(K, alpha_init, alpha_trans, em, "hmm.categorical")


def gaussian(
    K: int = 2,
    alpha_init: Any = 1.0,
    alpha_trans: Any = 1.0,
    mu0: Any = None,
    lam: float = cn.DEFAULT_LAM,
    a: float = cn.DEFAULT_A,
    b: Any = None,
    allow_improper: bool = False,
) -> Kernel:
    """Gibbs sampler (FFBS) for an HMM with K states and univariate Gaussian emissions.

    Data: :func:`gaussian_data`.  Random starts: π uniform, A rows
    softmax(N(0, 1)) draws, μ_k distinct random observations, τ_k = K²/s².

    Parameters
    ----------
    K : int, default 2
        Number of hidden states.
    alpha_init : float or array_like, default 1.0
        Dirichlet concentration of π, as in :func:`categorical`.
    alpha_trans : float or array_like, default 1.0
        Dirichlet concentration of the transition rows, as in :func:`categorical`.
    mu0 : float, optional
        Normal-Gamma prior mean of each state's μ_k (default: data-scaled, see the module docs).
    lam : float, default ``gibbsjax.conjugate_normal.DEFAULT_LAM``
        Prior pseudo-count of the mean.
    a : float, default ``gibbsjax.conjugate_normal.DEFAULT_A``
        Gamma shape of the precision τ_k.
    b : float, optional
        Gamma rate of the precision (default: data-scaled).
    allow_improper : bool, default False
        Accept zeros for ``lam``, ``a``, ``b`` (an improper prior).

    Returns
    -------
    gibbsjax.kernel.Kernel
        The sampler: pass it to :func:`gibbsjax.sample`.

    Raises
    ------
    ValueError
        For a K below 1, a concentration that is not positive, or an invalid prior.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.datasets.tabular import faithful
    >>> d = gaussian_data(faithful()["eruptions_min"])   # one sequence, in time order
    >>> idata = gibbsjax.sample(gaussian(K=2), d, seed=0, num_warmup=100, num_draws=100,
    ...                         progress=False)
    >>> [round(float(m), 1) for m in idata.posterior["mu_sorted"].mean(("chain", "draw"))]
    [2.0, 4.3]
    """
    K, alpha_init, alpha_trans = _check_hmm_common(K, alpha_init, alpha_trans)
    mu0, lam, a, b = cn.check_normal_gamma(mu0, lam, a, b, dim=1, allow_improper=allow_improper)
    return _gaussian(K, alpha_init, alpha_trans, mu0, lam, a, b)


@functools.lru_cache(maxsize=64)
def _gaussian(K, alpha_init, alpha_trans, mu0, lam, a, b) -> Kernel:
    proper = cn.is_proper(lam, a, b)
    hyper = {"mu0": mu0, "lam": lam, "a": a, "b": b}

    def prior(d):
        ng = cn.data_scaled_prior(d.center, d.scale2, K, **hyper)
        return cn.NormalGamma(*(jnp.broadcast_to(v, (K, 1)) for v in ng))

    def init(key, d):
        s, t = d.y.shape
        mask = step_mask(d.lengths, t).reshape(-1)
        idx = jax.random.choice(key, s * t, (K,), replace=K > s * t, p=mask / jnp.sum(mask))
        tau = jnp.full((K,), float(K) ** 2, d.y.dtype) / d.scale2[0]
        return {"mu": d.y.reshape(-1)[idx], "tau": tau}

    def simulate(key, state, d):
        mask = step_mask(d.lengths, d.y.shape[1])
        eps = gr.normal(key, shape=d.y.shape, dtype=d.y.dtype)
        y = state.mu[state.z] + eps * lax.rsqrt(state.tau[state.z])
        return GaussianHMMData(jnp.where(mask, y, 0.0), d.lengths, d.center, d.scale2)

    def record(state, order):
        sigma = lax.rsqrt(state.tau)
        return {"mu": state.mu, "sigma": sigma, "mu_sorted": state.mu[order], "sigma_sorted": sigma[order]}

    em = _Emission(
        data_type=GaussianHMMData,
        state_type=GaussianHMMState,
        check=lambda d: None,
        init=init,
        init_reads_data=True,
        posterior=lambda state, d, rows=None: ([], gaussian_emission_posterior(state, d, **hyper, rows=rows)),
        prior=lambda d: ([], prior(d)),
        fields=lambda log_probs, mu_tau: {"mu": mu_tau[0][:, 0], "tau": mu_tau[1][:, 0]},
        log_prior=lambda state, d: jnp.sum(
            cn.log_density(state.mu[:, None], state.tau[:, None], prior(d), proper=proper)
        ),
        proper=proper,
        simulate=simulate,
        sort_key=lambda state: state.mu,
        record=record,
        dims={"mu": ("state",), "sigma": ("state",), "mu_sorted": ("rank",), "sigma_sorted": ("rank",)},
    )
    return _build(K, alpha_init, alpha_trans, em, "hmm.gaussian")

