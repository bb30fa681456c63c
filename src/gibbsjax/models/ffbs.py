"""Forward filtering, backward sampling (FFBS; Carter & Kohn 1996, Frühwirth-Schnatter 1994): a hidden
Markov chain's path drawn jointly given its initial distribution, transitions and per-step likelihoods.

:func:`forward_filter` computes the filtered distributions p(z_t | y_1..t) in log space, normalised
by a logsumexp at every step; :func:`ffbs` samples backwards z_T ~ p(z_T | y_1..T),
z_t | z_t+1 ∝ p(z_t | y_1..t) A_{z_t, z_t+1}, one categorical draw (one uniform) per step;
:func:`forward_log_likelihood` is log p(y_1..T) with the path summed out; :func:`sample_markov_path`
draws a path from the chain's prior.  Padding steps (t >= ``length``) change nothing.  Used by
:mod:`gibbsjax.models.hmm`.
"""

from __future__ import annotations


import jax
import jax.numpy as jnp
from jax import lax

from gibbsjax import random as gr


__all__ = ["forward_filter", "forward_log_likelihood", "ffbs", "sample_markov_path"]


def _length(log_lik, length):
    return log_lik.shape[0] if length is None else length


def forward_filter(log_initial, log_transition, log_lik, length=None):
    """Filtered log-probabilities log p(z_t | y_1..t) and the log normalisers, one sequence.

    Recursion: log α̃_t(k) = logsumexp_j(log α_t-1(j) + log A_jk) + log_lik[t, k]
    (log π_k + log_lik[0, k] at t = 0), c_t = logsumexp_k log α̃_t(k),
    log α_t = log α̃_t − c_t.  At padding steps α is carried unchanged and c_t = 0.

    Parameters
    ----------
    log_initial : jax.Array
        (K,): log π.
    log_transition : jax.Array
        (K, K): row j is log p(z_t = · | z_t-1 = j).
    log_lik : jax.Array
        (T, K): ``log_lik[t, k] = log p(y_t | z_t = k)``.
    length : int or jax.Array, optional
        The number of real steps (default T); steps t >= length are padding.

    Returns
    -------
    log_filtered : jax.Array
        (T, K): log α_t = log p(z_t | y_1..t), normalised at every step.
    log_norm : jax.Array
        (T,): c_t = log p(y_t | y_1..t-1), so Σ_t c_t = log p(y_1..T).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> li = jnp.log(jnp.array([0.5, 0.5])); lt = jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]]))
    >>> ll = jnp.log(jnp.array([[0.5, 0.1]] * 3))
    >>> log_filtered, log_norm = forward_filter(li, lt, ll, length=2)
    >>> log_filtered.shape, float(log_norm[2])   # step 2 is padding
    ((3, 2), 0.0)
    """
    length = _length(log_lik, length)
    a0 = log_initial + log_lik[0]
    c0 = jax.nn.logsumexp(a0)
    a0 = a0 - c0

    def step(prev, inputs):
        t, ll = inputs
        pred = jax.nn.logsumexp(prev[:, None] + log_transition, axis=0)
        unnorm = pred + ll
        c = jax.nn.logsumexp(unnorm)
        valid = t < length
        new = jnp.where(valid, unnorm - c, prev)
        c = jnp.where(valid, c, jnp.zeros_like(c))
        return new, (new, c)

    steps = jnp.arange(1, log_lik.shape[0])
    _, (rest, cs) = lax.scan(step, a0, (steps, log_lik[1:]))
    return jnp.concatenate([a0[None], rest]), jnp.concatenate([c0[None], cs])


def forward_log_likelihood(log_initial, log_transition, log_lik, length=None):
    """log p(y_1..T | π, A, emissions) = Σ_t log p(y_t | y_1..t-1), by :func:`forward_filter`.

    Parameters
    ----------
    log_initial, log_transition, log_lik
        As in :func:`forward_filter`.
    length : int or jax.Array, optional
        The number of real steps (default T); padding steps contribute 0.

    Returns
    -------
    jax.Array
        Scalar: the log-likelihood of the sequence, paths summed out.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> li = jnp.log(jnp.array([0.5, 0.5])); lt = jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]]))
    >>> ll = jnp.log(jnp.array([[0.5, 0.1]] * 3))
    >>> round(float(forward_log_likelihood(li, lt, ll, length=1)), 4)   # log(0.5*0.5 + 0.5*0.1)
    -1.204
    """
    return jnp.sum(forward_filter(log_initial, log_transition, log_lik, length)[1])


def ffbs(key, log_initial, log_transition, log_lik, length=None):
    """Draw a hidden path z_1..T ~ p(z | y, π, A) exactly: forward filtering, backward sampling.

    After the forward pass, draws z_L ~ α_L (L = length − 1, the last real step) and,
    for t = L − 1 down to 0, z_t ~ Categorical(α_t(·) A_{·, z_t+1}) (in log space),
    one uniform per step; step t uses ``fold_in(key, t)``, so the draws do not depend
    on the padded length.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    log_initial, log_transition, log_lik, length
        As in :func:`forward_filter`.

    Returns
    -------
    jax.Array
        (T,) int32: the path, 0 at padding steps.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> li = jnp.log(jnp.array([0.5, 0.5])); lt = jnp.log(jnp.array([[0.9, 0.1], [0.2, 0.8]]))
    >>> ll = jnp.log(jnp.array([[1.0, 1e-9]] * 4))   # every step is observed in state 0
    >>> ffbs(jax.random.key(0), li, lt, ll, length=3).tolist()
    [0, 0, 0, 0]
    """
    length = _length(log_lik, length)
    log_filtered, _ = forward_filter(log_initial, log_transition, log_lik, length)

    def back(z_next, inputs):
        t, key_t, la = inputs
        last = t == length - 1
        logits = la + jnp.where(last, jnp.zeros_like(la), log_transition[:, z_next])
        z = gr.categorical(key_t, logits)
        valid = t < length
        return jnp.where(valid, z, z_next), jnp.where(valid, z, 0)

    t = jnp.arange(log_lik.shape[0])
    _, path = lax.scan(back, jnp.zeros((), jnp.int32), (t, _step_keys(key, t), log_filtered), reverse=True)
    return path


def _step_keys(key, t):
    """``fold_in(key, t)`` for every step, computed before a scan rather than inside it."""
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, t)


def sample_markov_path(key, log_initial, log_transition, length, num_steps):
    """z_0 ~ π, z_t ~ A_{z_t-1} for t < length; 0 at padding steps (the prior of one path).

    Parameters
    ----------
    key : jax.Array
        PRNG key; step t uses ``fold_in(key, t)``.
    log_initial : jax.Array
        (K,) log π.
    log_transition : jax.Array
        (K, K) log A, rows: from.
    length : int or jax.Array
        Real steps of the path.
    num_steps : int
        Padded length (static).

    Returns
    -------
    jax.Array
        (num_steps,) int32 states.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> path = sample_markov_path(jax.random.key(0), jnp.log(jnp.array([1.0, 0.0])),
    ...                           jnp.log(jnp.array([[0.0, 1.0], [1.0, 0.0]])), 3, 5)
    >>> path.tolist()
    [0, 1, 0, 0, 0]
    """

    def step(z_prev, inputs):
        t, key_t = inputs
        logits = jnp.where(t == 0, log_initial, log_transition[z_prev])
        z = gr.categorical(key_t, logits)
        valid = t < length
        return jnp.where(valid, z, z_prev), jnp.where(valid, z, 0)

    t = jnp.arange(num_steps)
    _, path = lax.scan(step, jnp.zeros((), jnp.int32), (t, _step_keys(key, t)))
    return path
