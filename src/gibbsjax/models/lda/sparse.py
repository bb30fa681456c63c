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
a K-iteration loop in XLA, every sweep).  Here each word's table is a *two-level inverse CDF*
(:func:`alpha_term_tables`): the cumulative sums of blocks of G = ⌈√K⌉ topics, (V, ⌈K/G⌉),
built by one parallel reduction and prefix sum over φ per sweep, no extra (V, K) array.  A draw
(:func:`draw_alpha_term`) finds its block by O(√K) comparisons, then its topic within the block
from that block's G weights (one contiguous slice, a parallel prefix sum).  These draws do not
depend on z, so they run for every token in one vectorised pass before the sequential pass
(their O(√K) is never on its critical path), and the sequential pass only picks a token's
candidate when part (b) wins.

The document term (a) runs like :func:`~gibbsjax.models.lda.conditionals.sample_z_lanes`: a
``lax.scan`` over the grid's S steps, all R lanes at once, each lane walking its documents'
tokens in order.  The scan carries the topics of the grid (lanes × steps); at step s each lane
gathers φ_{z_j, w} over the slots of its lane that hold the same document (a masked (R, S)
gather, so the work per token is S, about the longest document under the default packing of
:func:`~gibbsjax.models.lda.data`, not the token's own document length), and picks j by an
inverse CDF (:func:`~gibbsjax.models.lda.conditionals.draw_by_prefix_products`).  So a token
costs O(S + √K) against O(K) for the dense updates.  Measured on a shared 2-core CPU
(``benchmarks/lda_sparse.py``, fastest of 7 interleaved calls; 100,000 tokens in documents of
Poisson(100) tokens, V = 1,000, S = 187): the z-update alone at 0.62× ``"lanes"`` at K = 100,
0.79× at 300, 1.19× at 1,000 and 6.9× at 10,000 (whole sweeps with the sparse-count φ draw:
0.65×, 0.82×, 1.15×, 4.1×).  Longer documents move the crossover up (mean 213 tokens, S = 401:
0.37× at K = 100, 0.93× at 1,000); more lanes shorten S (one document per lane, S = 266: 0.56×
and 1.26×), so with this update pack with ``lda.data(corpus, num_lanes=...)`` large enough that
S is close to the longest document.

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

__all__ = ["SPARSE_ALPHA_BLOCK_ELEMENTS", "alpha_term_tables", "draw_alpha_term", "sample_z_sparse"]

#: the vectorised α-term pass takes tokens in blocks whose temporaries (about √K floats per token
#: for each of the block level and the topic level) hold about this many elements, per backend:
#: on a CPU 2^20 (4 MB of float32, cache-sized: about 5,000 tokens per block at K = 10,000; larger
#: blocks measured slower there), elsewhere 2^26 (256 MB: few sequential blocks on a GPU, where
#: each block is a handful of kernel launches; not yet measured on one)
SPARSE_ALPHA_BLOCK_ELEMENTS = {"cpu": 1 << 20, "other": 1 << 26}


def _alpha_vector(alpha, K: int, dtype):
    """α as a (K,) array: a symmetric α (a number or a traced scalar) broadcast, an asymmetric one as is."""
    return jnp.broadcast_to(jnp.asarray(alpha, dtype), (K,))


def alpha_term_tables(phi_t, alpha):
    """The per-word tables of the α-term α_k φ_{k,w}: cumulative block sums (V, B) over blocks of
    G = ⌈√K⌉ topics (the last block padded with zero weights); the last column is each word's
    total B_w.

    ``phi_t`` is φᵀ (V, K) with each word's row on any positive scale
    (:func:`~gibbsjax.models.lda.conditionals.phi_by_word`); ``alpha`` a number or (K,).

    >>> import jax.numpy as jnp
    >>> alpha_term_tables(jnp.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), 0.5).tolist()
    [[3.0, 7.5]]
    """
    return _alpha_term_tables(jnp.asarray(phi_t), alpha)


@jax.jit  # inlined in a sweep; on its own one program instead of an associative scan's many
def _alpha_term_tables(phi_t, alpha):
    v, k = phi_t.shape
    g = int(math.ceil(math.sqrt(k)))
    b = -(-k // g)
    weighted = jnp.pad(phi_t * _alpha_vector(alpha, k, phi_t.dtype), ((0, 0), (0, b * g - k)))
    sums = jnp.sum(weighted.reshape(v, b, g), axis=-1)
    return jax.lax.associative_scan(jnp.add, sums, axis=1)


def draw_alpha_term(phi_t, alpha, cumulative, words, u):
    """One topic per token from its word's α-term, p(k) ∝ α_k φ_{k,w}, by the two-level inverse CDF
    of :func:`alpha_term_tables` (``cumulative`` from there), one uniform ``u`` per token.

    ``words`` and ``u`` any equal shapes; returns int32 topics of that shape.  The block is the
    one whose cumulative block sums bracket u · (their total): O(B) comparisons; the topic, the
    one whose cumulative sum within that block (a parallel prefix sum of its G weights,
    O(G log G)) brackets the remainder.  Rounding of float32 sums can move a draw to a
    neighbouring topic only for a u within about 1e-7 of a boundary, as for any float32 inverse CDF.

    >>> import jax.numpy as jnp
    >>> phi_t = jnp.array([[1.0, 0.0001, 0.0001, 0.0001, 1.0]])
    >>> c = alpha_term_tables(phi_t, 0.1)
    >>> draw_alpha_term(phi_t, 0.1, c, jnp.array([0, 0]), jnp.array([0.1, 0.9])).tolist()
    [0, 4]
    """
    v, k = phi_t.shape
    g = int(math.ceil(math.sqrt(k)))
    b = cumulative.shape[1]
    a = _alpha_vector(alpha, k, phi_t.dtype)
    shape = jnp.shape(words)
    words, u = jnp.reshape(words, -1), jnp.reshape(u, -1)
    n = words.shape[0]
    elements = SPARSE_ALPHA_BLOCK_ELEMENTS["cpu" if jax.default_backend() == "cpu" else "other"]
    per = min(max(elements // (b + g), 1), max(n, 1))
    chunks = -(-n // per)

    def by_chunk(x):
        return jnp.pad(x, (0, chunks * per - n)).reshape(chunks, per)

    def window(table, rows, starts):  # table[rows[t], starts[t]:starts[t] + g] for every t: (T, G)
        return jax.vmap(lambda r, c: jax.lax.dynamic_slice(table, (r, c), (1, g))[0])(rows, starts)

    def chunk(x):
        w, ui = x
        c = cumulative[w]  # (T, B)
        target = ui * c[:, -1]
        block = jnp.minimum(jnp.sum(c <= target[:, None], axis=-1), b - 1)
        before = jnp.where(block > 0, jnp.take_along_axis(c, jnp.maximum(block - 1, 0)[:, None], axis=1)[:, 0], 0.0)
        # the block's G weights as one contiguous window per token (a slice gather, far cheaper
        # than G single-element gathers); the last block's window starts earlier so that it
        # stays inside the K topics, and its leading topics (of the block before) get weight 0
        start = jnp.minimum(block * g, k - g)
        row = window(phi_t, w, start) * window(a[None, :], jnp.zeros_like(w), start)
        row = jnp.where(jnp.arange(g) >= block[:, None] * g - start[:, None], row, 0.0)
        c_row = jax.lax.associative_scan(jnp.add, row, axis=1)
        within = jnp.minimum(jnp.sum(c_row <= (target - before)[:, None], axis=-1), g - 1)
        return jnp.minimum(start + within, k - 1).astype(jnp.int32)

    out = jax.lax.map(chunk, (by_chunk(words), by_chunk(u)))
    return out.reshape(-1)[:n].reshape(shape)


def sample_z_sparse(key, state: LDAState, d: LDAData, *, K: int, alpha, keep_current: bool = False):
    """The partially collapsed z-update, p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α_k), drawn
    as the exact mixture of the module docs: (a) another token of the document, picked with
    probability ∝ φ_{z_j,w_i}, lends its topic; (b) the word's α-term α_k φ_{k,w_i}.  Documents in
    parallel (lanes), each document's tokens in sequence, as the other z-updates of
    :data:`~gibbsjax.models.lda.z_updates.SAMPLE_Z`; the same conditional, other variates.

    Parameters
    ----------
    key, state, d, K, alpha
        As in :func:`~gibbsjax.models.lda.sample_z_partially_collapsed`.
    keep_current : bool, default False
        A deliberately WRONG variant for the tests: the token's own old topic stays in
        the document term (n_dk instead of n_dk,−i), which the exactness tests must reject.

    Returns
    -------
    jax.Array
        The new topics, (S, R) int32 (padding: 0).

    Examples
    --------
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2).init(jax.random.key(0), d)
    >>> sample_z_sparse(jax.random.key(1), s, d, K=2, alpha=0.1).shape == d.words.shape
    True
    """
    k_part, k_draw = jax.random.split(key)
    u_part, u_draw = token_uniforms(k_part, d), token_uniforms(k_draw, d)
    phi_t = phi_by_word(state.log_phi)  # (V, K), each word's largest entry 1
    cumulative = alpha_term_tables(phi_t, alpha)
    word_mass = cumulative[:, -1]  # B_w
    candidates = draw_alpha_term(phi_t, alpha, cumulative, d.words, u_draw)  # (S, R), part (b)
    steps, lanes = d.words.shape
    v = phi_t.shape[0]
    if v * K < 2**31:  # one flat index per weight: a cheaper gather than a two-index one
        flat = phi_t.reshape(-1)

        def phi_at(w, z):
            return flat[w[:, None] * K + z]
    else:
        def phi_at(w, z):
            return phi_t[w[:, None], z]
    cols = jnp.arange(steps)[None, :]
    lane_ids = jnp.arange(lanes)
    docs_t = d.docs.T  # (R, S): each lane's documents along its steps
    ends = jnp.append(d.first_step[:-1] + d.doc_lengths, 0) - 1  # each document's last step (row D: −1)

    def step(z, x):  # z: (R, S), the lanes' topics, steps before s already updated
        s, w, doc, u_a, u_j, cand = x  # (R,) each but s
        same = docs_t == doc[:, None]  # the slots of each lane's current document
        if not keep_current:
            same = same & (cols != s)
        weights = jnp.where(same, phi_at(w, z), 0.0)  # φ_{z_j, w_i}, (R, S)
        total = jnp.sum(weights, axis=1)  # A, (R,)
        j = draw_by_prefix_products(weights, u_j)
        # float32 rounding of u·A at the end of a block or of the sums can land on a slot without
        # weight: take the last slot with weight (the document's last token, or the one before
        # it when that is token i); an error of order 1e-7, as for any float32 inverse CDF
        last = ends[doc] - ((ends[doc] == s) & (not keep_current))
        j = jnp.where(weights[lane_ids, j] > 0, j, last)
        from_doc = z[lane_ids, j]
        z_new = jnp.where(u_a * (total + word_mass[w]) < total, from_doc, cand)
        return jax.lax.dynamic_update_index_in_dim(z, z_new, s, 1), None

    xs = (jnp.arange(steps), d.words, d.docs, u_part, u_draw, candidates)
    z, _ = jax.lax.scan(step, state.z.T, xs)
    z = z.T
    return jnp.where(d.mask, z, 0)
