"""LDA's APPROXIMATE warm-up sweeps: collapsed z-updates run during warm-up only, never sampling.

Both give every token i the collapsed conditional's weights
(n_kw + η)/(n_k + Vη) · (n_dk,−i + α), its own old topic taken out of all three counts,
documents in parallel (the lanes of the grid) and each document's tokens in sequence,
each token's uniform keyed by its document and position
(:func:`~gibbsjax.models.lda.token_uniforms`).  They differ in which word–topic counts
n_kw, n_k a token sees:

* :func:`sample_z_collapsed_frozen` (``warmup="fast"``): the counts at the START of the
  sweep, frozen for the whole sweep.  Nothing depends on the lanes, on how the documents
  are split into shards or on the devices: the same draws for any layout.  One count
  table per sweep, no scatter inside the loop.
* :func:`sample_z_collapsed_parallel` (``warmup="fast_grid"``): the counts refreshed
  after every step of the lane grid (a scatter-add per step), so a token sees the
  updates of earlier steps: its draws depend on the number of lanes and, with documents
  sharded (AD-LDA across shards), on the number of shards.

Neither leaves the posterior invariant (Newman et al. 2009 call such updates AD-LDA);
the kernels use them only as ``Kernel.warmup_step`` (:mod:`gibbsjax.models.lda.kernels`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gibbsjax.models.lda.conditionals import LANES_UNROLL, doc_starts, draw_by_prefix_products
from gibbsjax.models.lda.layout import LDAData, LDAState, token_uniforms, topic_counts, vocab_size_of

__all__ = ["sample_z_collapsed_frozen", "sample_z_collapsed_parallel"]

#: the Parameters, Returns and Examples sections of both warm-up sweeps (one text, put into each docstring below)
_PARAMETERS = """Parameters
    ----------
    key, state, d, K, alpha
        As in :func:`~gibbsjax.models.lda.sample_z_partially_collapsed`.
    eta : float or jax.Array
        η: a number or a traced scalar.
    word_topic : tuple of jax.Array, optional
        (n_kw (K, V), n_k (K,)) of the whole corpus to start from (default: the counts of ``d``'s tokens).

    Returns
    -------
    jax.Array
        The new topics: (S, R) int32, 0 at padding.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = lda.partially_collapsed(2).init(jax.random.key(0), d)
    >>> {name}(jax.random.key(1), s, d, K=2, alpha=0.1, eta=0.01).shape
    (3, 2)
"""


def _counts(z, d: LDAData, K: int, word_topic):
    """(n_dk, n_kw, n_k, V) of topics ``z``; n_kw and n_k those of ``word_topic`` when given."""
    ndk, nkw, nk = topic_counts(z, d, K)
    if word_topic is not None:
        nkw, nk = word_topic
    return ndk, nkw, nk, vocab_size_of(d)


def _with_parameters(fn):
    fn.__doc__ = fn.__doc__.replace("{parameters}\n", _PARAMETERS.replace("{name}", fn.__name__))
    return fn


@_with_parameters
def sample_z_collapsed_frozen(key, state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float,
                              word_topic=None):
    """APPROXIMATE (for warm-up only): a collapsed sweep from the word–topic counts frozen at its start.

    Every token i gets p(z_i = k) ∝ (n_kw,−i + η)/(n_k,−i + Vη) · (n_dk,−i + α), where
    n_kw and n_k are the counts at the start of the sweep with only token i's own old
    topic taken out, and n_dk follows token i's own document in sequence (each token
    sees the earlier updates of its document, as the exact z-updates do).  So a token's
    draw depends on the sweep's key, the counts at the start and its own document only:
    the same for any number of lanes, shards or devices.  It does not leave the
    posterior invariant (every token ignores the other documents' updates of this
    sweep); used only as the warm-up transition (``warmup="fast"``).

    ``word_topic`` (optional): the word–topic counts (n_kw (K, V), n_k (K,)) of the whole
    corpus, when ``d`` holds only part of it (a shard, :mod:`gibbsjax.models.lda.shard`).

    {parameters}
    """
    z = state.z
    ndk, nkw, nk, v = _counts(z, d, K, word_topic)
    # the word part of every weight, (V, K): the token's own topic kept (a) or taken out (b)
    counts = nkw.T.astype(jnp.float32)
    keep = (counts + eta) * (1.0 / (nk + v * eta))
    drop = (counts - 1.0 + eta) * (1.0 / (nk - 1 + v * eta))
    u = token_uniforms(key, d)
    onehot = jnp.arange(K)

    def step(nd, x):
        w, doc, z_old, ui, start, m = x  # (R,) each
        nd = jnp.where(start[:, None], ndk[doc], nd)
        old = (z_old[:, None] == onehot) & m[:, None]
        n_d = nd - old.astype(jnp.int32)
        weights = jnp.where(old, drop[w], keep[w]) * (n_d + alpha)
        z_new = draw_by_prefix_products(weights, ui)
        return n_d + ((z_new[:, None] == onehot) & m[:, None]).astype(jnp.int32), z_new

    rows = jnp.zeros((z.shape[1], K), jnp.int32)
    _, z_new = jax.lax.scan(step, rows, (d.words, d.docs, z, u, doc_starts(d), d.mask), unroll=LANES_UNROLL)
    return jnp.where(d.mask, z_new, 0)


@_with_parameters
def sample_z_collapsed_parallel(key, state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float,
                                word_topic=None):
    """APPROXIMATE (for warm-up only): a document-parallel collapsed sweep on the lane grid.

    Every token i gets p(z_i = k) ∝ (n_kw + η)/(n_k + Vη) · (n_dk,−i + α), its
    own old topic taken out of all three counts, with the word–topic counts
    n_kw and n_k refreshed after every step of the lane grid: each token sees
    every update of earlier steps and of its own document, but not those of
    the other R − 1 tokens drawn in the same step (AD-LDA-style staleness,
    Newman et al. 2009).  So it does not leave the posterior invariant, and its
    draws depend on the number of lanes R; used only as the warm-up transition
    ``warmup="fast_grid"``.  (:func:`sample_z_collapsed_frozen`, ``warmup="fast"``,
    is the layout-independent one.)

    ``word_topic`` (optional): the word–topic counts (n_kw (K, V), n_k (K,)) to
    start from instead of those of ``d``'s own tokens: with documents split over
    devices (:mod:`gibbsjax.models.lda.shard`) every shard starts from the summed
    counts and sees only its own updates within the sweep (AD-LDA across shards).

    {parameters}
    """
    z = state.z
    ndk, nkw, nk, v = _counts(z, d, K, word_topic)
    u = token_uniforms(key, d)
    onehot = jnp.arange(K)

    def step(carry, x):
        nd, nwk, nk = carry
        w, doc, z_old, ui, start, m = x  # (R,) each
        nd = jnp.where(start[:, None], ndk[doc], nd)
        old = ((z_old[:, None] == onehot) & m[:, None]).astype(jnp.int32)
        n_d = nd - old
        # 1 / (n_k,−i + Vη) by selecting between two (K,) reciprocals, not a division per lane
        inv = jnp.where(old == 1, 1.0 / (nk - 1 + v * eta), 1.0 / (nk + v * eta))
        weights = (nwk[w] - old + eta) * inv * (n_d + alpha)
        z_new = draw_by_prefix_products(weights, ui)
        change = ((z_new[:, None] == onehot) & m[:, None]).astype(jnp.int32) - old
        return (nd + change, nwk.at[w].add(change), nk + jnp.sum(change, axis=0)), z_new

    carry = (jnp.zeros((z.shape[1], K), jnp.int32), nkw.T, nk)
    _, z_new = jax.lax.scan(step, carry, (d.words, d.docs, z, u, doc_starts(d), d.mask), unroll=LANES_UNROLL)
    return jnp.where(d.mask, z_new, 0)
