"""Conjugate building blocks one layer below the models: counting, the Dirichlet family.

What several models share (the one-label document models of :mod:`gibbsjax.models.one_label`,
the discrete Bayesian network, the HMMs, the Gaussian mixture, LDA):

* hyperparameters: :func:`concentration_vector` (a number or one value per class);
* counting into int32 tables by scatter-add (:func:`counts`, the one counting helper;
  :func:`class_counts`, :func:`table_counts`);
* conjugate draws in log space (:func:`sample_log_dirichlet_rows`,
  :func:`sample_log_dirichlet_padded`, :func:`sample_log_dirichlets`,
  :func:`sample_log_bernoulli`);
* log densities for log joints: Dirichlet-multinomial (Pólya) marginals
  (:func:`log_dirichlet_multinomial`), Dirichlet and Beta densities
  (:func:`log_dirichlet_density`, :func:`log_beta_density`) with 0 · log 0 = 0
  (:func:`xlogy`).

Everything is a pure JAX function of arrays, safe under ``jit`` and ``vmap``;
sizes are static.  The Normal-Gamma family is in :mod:`gibbsjax.conjugate_normal`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from gibbsjax import random as gr

__all__ = [
    "concentration_vector",
    "counts",
    "class_counts",
    "table_counts",
    "sample_log_dirichlet_rows",
    "sample_log_dirichlet_padded",
    "sample_log_dirichlets",
    "sample_log_bernoulli",
    "log_dirichlet_multinomial",
    "log_dirichlet_density",
    "log_beta_density",
    "xlogy",
]


# ============================================================================ hyperparameters
def concentration_vector(name: str, value: float | tuple[float, ...], k: int, dtype=None) -> jax.Array:
    """The concentration as a length-``k`` array; a tuple must have ``k`` entries.

    Called while a kernel is traced, when K is known from the data or factory.
    """
    if isinstance(value, tuple):
        if len(value) != k:
            raise ValueError(f"{name} has {len(value)} entries, but the model has K = {k} classes")
        return jnp.asarray(value, dtype or jnp.result_type(float))
    return jnp.full((k,), value, dtype or jnp.result_type(float))


# ============================================================================ counting
def counts(index, shape, weights: jax.Array | None = None) -> jax.Array:
    """The one counting helper: an int32 table of how often each index occurs (a scatter-add).

    ``index`` is an integer array (a table of ``shape = (n,)``) or a tuple of
    equal-shaped integer arrays, one per axis of ``shape``; ``weights`` (0/1 or
    small integers, same shape as the index arrays) counts some entries zero
    times (padding) or several.  Counts are int32, exact beyond 2^24; convert
    them to a float dtype only where they become Dirichlet concentrations.

    >>> counts(jnp.array([0, 2, 2]), (3,)).tolist()
    [1, 0, 2]
    >>> counts((jnp.array([0, 1, 1]), jnp.array([1, 0, 0])), (2, 2)).tolist()
    [[0, 1], [2, 0]]
    """
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    idx = tuple(index) if isinstance(index, tuple) else (index,)
    if len(idx) != len(shape):
        raise ValueError(f"counts: {len(idx)} index arrays for a table of {len(shape)} axes")
    return _counts(idx, tuple(int(n) for n in shape), weights)


# jitted: inlined in a sweep; called on its own (packing a corpus, a test) one compiled program
# per shape instead of one per operation
@functools.partial(jax.jit, static_argnames=("shape",))
def _counts(idx, shape, weights):
    w = 1 if weights is None else weights.astype(jnp.int32)
    return jnp.zeros(shape, jnp.int32).at[idx].add(w)


def class_counts(labels: jax.Array, num_classes: int) -> jax.Array:
    """C_k = #{d : z_d = k}, int32 (K,)."""
    return counts(labels, (num_classes,))


def table_counts(rows: jax.Array, values: jax.Array, num_rows: int, num_values: int) -> jax.Array:
    """n_rk = #{i : rows_i = r, values_i = k}, int32 (num_rows, num_values), by scatter-add.

    The generic form of :func:`gibbsjax.models.one_label.word_counts` (rows = class of each token's
    document, values = word ids): counts of child values per CPT row for a
    discrete Bayesian network, with any index arrays of one shape.
    """
    return counts((rows, values), (num_rows, num_values))


# ============================================================================ conjugate draws
def sample_log_dirichlet_rows(key, counts: jax.Array, prior) -> jax.Array:
    """log of a draw of each row from Dir(counts_k + prior), (K, V).

    The conjugate update of a Dirichlet prior after categorical observations
    with counts ``counts``; drawn in log space (:func:`gibbsjax.random.log_dirichlet`),
    so tiny concentrations never give log 0.
    """
    return gr.log_dirichlet(key, counts.astype(jnp.result_type(float)) + prior)


def sample_log_dirichlet_padded(key, counts: jax.Array, prior, valid: jax.Array) -> jax.Array:
    """log of a draw of each row from Dir(counts_r + prior_r) over its ``valid`` entries; −inf elsewhere.

    For rows of different lengths padded to one width: the whole padded row is
    drawn by :func:`sample_log_dirichlet_rows` (padding needs a positive
    concentration, e.g. 1, and zero counts), then the padding is dropped and
    the rest renormalised.  Exact: normalised independent gamma variates of a
    subset of the entries are Dirichlet with that subset's concentrations.
    """
    lp = jnp.where(valid, sample_log_dirichlet_rows(key, counts, prior), -jnp.inf)
    return lp - jax.nn.logsumexp(lp, axis=-1, keepdims=True)


def sample_log_dirichlets(key, *alphas) -> list[jax.Array]:
    """Independent log-Dirichlet draws for several concentration arrays, with one gamma call.

    Each ``alphas[j]`` has shape (..., K_j) and gives a draw of that shape
    (Dirichlet along the last axis), exactly as :func:`gibbsjax.random.log_dirichlet`
    would; all gamma variates come from a single :func:`gibbsjax.random.log_gamma`
    call, which keeps compiled code small where several are needed at once
    (``sample_prior``).
    """
    f = jnp.result_type(float)
    alphas = [jnp.asarray(a, f) for a in alphas]
    flat = gr.log_gamma(key, jnp.concatenate([a.ravel() for a in alphas]))
    out, start = [], 0
    for a in alphas:
        lg = flat[start:start + a.size].reshape(a.shape)
        start += a.size
        out.append(lg - jax.nn.logsumexp(lg, axis=-1, keepdims=True))
    return out


def sample_log_bernoulli(key, n1: jax.Array, n0: jax.Array, a, b) -> tuple[jax.Array, jax.Array]:
    """(log p, log(1 − p)) for p ~ Beta(a + n1, b + n0), elementwise.

    A Beta draw is a two-category Dirichlet draw; in log space both log p and
    log(1 − p) stay accurate when p is close to 0 or 1.
    """
    f = jnp.result_type(float)
    conc = jnp.stack([n1.astype(f) + a, n0.astype(f) + b], axis=-1)
    lp = gr.log_dirichlet(key, conc)
    return lp[..., 0], lp[..., 1]


# ============================================================================ log densities
def log_dirichlet_multinomial(counts: jax.Array, alpha) -> jax.Array:
    """log ∫ Π_k θ_k^{n_k} Dir(θ; α) dθ along the last axis (an ordered sequence, no multinomial coefficient).

    = log Γ(Σα) − log Γ(Σα + n) + Σ_k [log Γ(α_k + n_k) − log Γ(α_k)].
    """
    f = jnp.result_type(float)
    n = counts.astype(f)
    a = jnp.broadcast_to(jnp.asarray(alpha, f), n.shape)
    return (
        gammaln(a.sum(-1)) - gammaln(a.sum(-1) + n.sum(-1)) + jnp.sum(gammaln(a + n) - gammaln(a), axis=-1)
    )


def xlogy(c, log_x):
    """c · log x with 0 · log 0 = 0 (c a constant or array)."""
    return jnp.where(c == 0, 0.0, c * log_x)


def log_dirichlet_density(log_p: jax.Array, alpha) -> jax.Array:
    """log Dir(p; α) along the last axis, given log p: log Γ(Σα) − Σ log Γ(α) + Σ (α − 1) log p."""
    f = log_p.dtype
    a = jnp.broadcast_to(jnp.asarray(alpha, f), log_p.shape)
    return gammaln(a.sum(-1)) - jnp.sum(gammaln(a), -1) + jnp.sum(xlogy(a - 1, log_p), -1)


def log_beta_density(log_p: jax.Array, log1m_p: jax.Array, a, b) -> jax.Array:
    """log Beta(p; a, b) elementwise, given log p and log(1 − p)."""
    return (
        gammaln(a + b) - gammaln(a) - gammaln(b)
        + xlogy(jnp.asarray(a - 1.0, log_p.dtype), log_p)
        + xlogy(jnp.asarray(b - 1.0, log_p.dtype), log1m_p)
    )
