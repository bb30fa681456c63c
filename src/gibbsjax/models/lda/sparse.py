"""The sparse exact z-update of partially collapsed LDA, for many topics (K = 1,000 to 10,000).

Given φ (fixed for the whole z sweep), the conditional of token i of document d with word w,
p(z_i = k | z_−i, φ, w) ∝ φ_{k,w} (n_dk,−i + α_k), is a mixture of two exactly drawable parts
(Magnusson, Jonsson, Villani & Broman 2018, "Sparse partially collapsed MCMC for parallel
inference in topic models", JCGS 27(2); the document and smoothing buckets of SparseLDA,
Yao, Mimno & McCallum 2009):

(a) the document term φ_{k,w} n_dk,−i, of total A = Σ_{j∈d, j≠i} φ_{z_j,w}: pick another token j
    of the document with probability φ_{z_j,w} / A and take k = z_j.  Topic k is then picked
    with probability n_dk,−i φ_{k,w} / A: O(document length) work, not O(K);
(b) the α-term α_k φ_{k,w}, of total B_w = Σ_k α_k φ_{k,w}: a distribution of each word that
    does not change during the sweep (φ is fixed), so every token's candidate from it is
    drawn before the sequential pass, in one vectorised pass independent of z.

Part (a) is chosen with probability A / (A + B_w), from a uniform of its own.  Exact: a draw of
the mixture's component followed by an exact draw from that component.  No Metropolis–Hastings
correction is needed: AliasLDA (Li, Ahmed, Ravi & Smola 2014) and LightLDA (Yuan et al. 2015)
need one because their word proposals come from stale counts; here φ *is* the state the z sweep
conditions on, so the per-word part is exact for the whole sweep.

How (b) is drawn, and why not alias tables: a Walker (1977) / Vose (1991) alias table gives
O(1) draws, but its construction is a sequential worklist pass per word (K dependent steps,
a K-iteration loop in XLA, per sweep).  Here each word's table is a *two-level inverse CDF*:
block sums of G ≈ √K topics ((V, ⌈K/G⌉), one parallel reduction over φ per sweep, no extra
(V, K) array), then per draw the block by the cumulative block sums and the topic within the
block from the G weights of that block, O(√K) per draw (cumulative sums as matrix products, as
in :func:`~gibbsjax.models.lda.conditionals.draw_by_prefix_products`: XLA's CPU cumsum is
quadratic).  The draws of (b) run outside the sequential pass, so their O(√K) is a
vectorised cost, never on the critical path.

The document term (a) runs like :func:`~gibbsjax.models.lda.conditionals.sample_z_lanes`: a
``lax.scan`` over the grid's S steps, all R lanes at once, each lane walking its documents'
tokens in order.  The scan carries the topics of the grid; at step s each lane gathers
φ_{z_j, w} over the slots of its lane that hold the same document (a masked (S, R) gather, so
the work per token is S, about the longest document under the default packing of
:func:`~gibbsjax.models.lda.data`, not the token's own document length), and picks j by an
inverse CDF.  So one token costs O(S + √K) against O(K) for the dense updates: slower at
K = 100, faster where K exceeds the longest documents (measured in ``benchmarks/lda_sparse.py``).

Every token uses two uniforms (:func:`~gibbsjax.models.lda.layout.token_uniforms` of two keys
split from the sweep's key): one picks the part, the other draws within it (the part that is not
picked discards its draw, so one uniform serves both parts).  Draws depend on the document and
position only, not on the packing or the number of devices, as for the other z-updates; they
differ from theirs (the same distribution, not the same variates).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from gibbsjax.models.lda.conditionals import draw_by_prefix_products, phi_by_word
from gibbsjax.models.lda.layout import LDAData, LDAState, token_uniforms

__all__ = ["SPARSE_ALPHA_BLOCK_TOKENS", "alpha_term_tables", "draw_alpha_term", "sample_z_sparse"]

#: tokens per block of the vectorised α-term pass (its temporaries are O(block · √K))
SPARSE_ALPHA_BLOCK_TOKENS = 1 << 13


def _upper_ones(n: int, dtype):
    """(n, n) with 1 where row ≤ column: ``w @ _upper_ones(n)`` is the inclusive cumulative sum of ``w``."""
    return jnp.triu(jnp.ones((n, n), dtype))


def _alpha_vector(alpha, K: int, dtype):
    """α as a (K,) array: a symmetric α (a number or a traced scalar) broadcast, an asymmetric one as is."""
    return jnp.broadcast_to(jnp.asarray(alpha, dtype), (K,))


def alpha_term_tables(phi_t, alpha):
    """The per-word tables of the α-term α_k φ_{k,w}: block sums (V, B) of G = ⌈√K⌉ topics each
    (the last block padded with zero weights) and each word's total B_w (V,).

    ``phi_t`` is φᵀ (V, K) with each word's row on any positive scale
    (:func:`~gibbsjax.models.lda.conditionals.phi_by_word`); ``alpha`` a number or (K,).

    >>> import jax.numpy as jnp
    >>> sums, total = alpha_term_tables(jnp.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), 0.5)
    >>> sums.tolist(), total.tolist()
    ([[3.0, 4.5]], [7.5])
    """
    v, k = phi_t.shape
    g = int(math.ceil(math.sqrt(k)))
    b = -(-k // g)
    weighted = jnp.pad(phi_t * _alpha_vector(alpha, k, phi_t.dtype), ((0, 0), (0, b * g - k)))
    sums = jnp.sum(weighted.reshape(v, b, g), axis=-1)
    return sums, jnp.sum(sums, axis=-1)


def draw_alpha_term(phi_t, alpha, block_sums, words, u):
    """One topic per token from its word's α-term, p(k) ∝ α_k φ_{k,w}, by the two-level inverse CDF
    of :func:`alpha_term_tables` (``block_sums`` from there), one uniform ``u`` per token.

    ``words`` and ``u`` any equal shapes; returns int32 topics of that shape.  The block is the
    one whose cumulative block sums bracket u · (their total); the topic, the one whose cumulative
    sum within that block brackets the remainder.  Rounding of float32 sums can move a draw to a
    neighbouring topic only for a u within about 1e-7 of a boundary, as for any float32 inverse CDF.

    >>> import jax.numpy as jnp
    >>> phi_t = jnp.array([[1.0, 0.0001, 0.0001, 0.0001, 1.0]])
    >>> sums, _ = alpha_term_tables(phi_t, 0.1)
    >>> draw_alpha_term(phi_t, 0.1, sums, jnp.array([0, 0]), jnp.array([0.1, 0.9])).tolist()
    [0, 4]
    """
    v, k = phi_t.shape
    g = int(math.ceil(math.sqrt(k)))
    b = block_sums.shape[1]
    a = _alpha_vector(alpha, k, phi_t.dtype)
    hi = jax.lax.Precision.HIGHEST
    shape = jnp.shape(words)
    words, u = jnp.reshape(words, -1), jnp.reshape(u, -1)
    n = words.shape[0]
    per = min(SPARSE_ALPHA_BLOCK_TOKENS, max(n, 1))
    chunks = -(-n // per)

    def by_chunk(x):
        return jnp.pad(x, (0, chunks * per - n)).reshape(chunks, per)

    def chunk(x):
        w, ui = x
        sums = block_sums[w]  # (T, B)
        c = jnp.matmul(sums, _upper_ones(b, sums.dtype), precision=hi)
        target = ui * c[:, -1]
        block = jnp.minimum(jnp.sum(c <= target[:, None], axis=-1), b - 1)
        before = (jnp.take_along_axis(c, block[:, None], axis=1) - jnp.take_along_axis(sums, block[:, None], axis=1))[:, 0]
        cols = block[:, None] * g + jnp.arange(g)  # (T, G)
        inside = cols < k
        cols = jnp.minimum(cols, k - 1)
        row = jnp.where(inside, phi_t[w[:, None], cols] * a[cols], 0.0)
        c_row = jnp.matmul(row, _upper_ones(g, row.dtype), precision=hi)
        within = jnp.minimum(jnp.sum(c_row <= (target - before)[:, None], axis=-1), g - 1)
        return jnp.minimum(block * g + within, k - 1).astype(jnp.int32)

    out = jax.lax.map(chunk, (by_chunk(words), by_chunk(u)))
    return out.reshape(-1)[:n].reshape(shape)


def sample_z_sparse(key, state: LDAState, d: LDAData, *, K: int, alpha, keep_current: bool = False):
    """The partially collapsed z-update, p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α_k), drawn
    as the exact mixture of the module docs: (a) another token of the document, picked with
    probability ∝ φ_{z_j,w_i}, lends its topic; (b) the word's α-term α_k φ_{k,w_i}.  Documents in
    parallel (lanes), each document's tokens in sequence, as the other z-updates of
    :data:`~gibbsjax.models.lda.z_updates.SAMPLE_Z`; the same conditional, other variates.

    ``alpha``: a number, a traced scalar or one α_k per topic (K,).  ``keep_current=True`` is a
    deliberately WRONG variant for the tests: the token's own old topic stays in the document
    term (n_dk instead of n_dk,−i), which the exactness tests must reject.

    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2).init(jax.random.key(0), d)
    >>> sample_z_sparse(jax.random.key(1), s, d, K=2, alpha=0.1).shape == d.words.shape
    True
    """
    k_part, k_draw = jax.random.split(key)
    u_part, u_draw = token_uniforms(k_part, d), token_uniforms(k_draw, d)
    phi_t = phi_by_word(state.log_phi)  # (V, K), each word's largest entry 1
    block_sums, word_mass = alpha_term_tables(phi_t, alpha)
    candidates = draw_alpha_term(phi_t, alpha, block_sums, d.words, u_draw)  # (S, R), part (b)
    steps, lanes = d.words.shape
    rows = jnp.arange(steps)[:, None]
    lane_ids = jnp.arange(lanes)

    def step(z, x):
        s, w, doc, u_a, u_j, cand = x  # (R,) each but s
        same = d.docs == doc[None, :]  # (S, R): the slots of each lane's current document
        if not keep_current:
            same = same & (rows != s)
        weights = jnp.where(same, phi_t[w[None, :], z], 0.0)  # φ_{z_j, w_i}, (S, R)
        total = jnp.sum(weights, axis=0)  # A, (R,)
        wt = weights.T
        j = draw_by_prefix_products(wt, u_j)
        # a u·A rounded onto the end of the cumulative sums: the last slot with weight
        last = steps - 1 - jnp.argmax(jnp.flip(wt > 0, axis=-1), axis=-1)
        j = jnp.where(wt[lane_ids, j] > 0, j, last)
        from_doc = z[j, lane_ids]
        z_new = jnp.where(u_a * (total + word_mass[w]) < total, from_doc, cand)
        return jax.lax.dynamic_update_index_in_dim(z, z_new, s, 0), None

    xs = (jnp.arange(steps), d.words, d.docs, u_part, u_draw, candidates)
    z, _ = jax.lax.scan(step, state.z, xs)
    return jnp.where(d.mask, z, 0)
