"""LDA's conditionals: the collapsed log joint, the φ draw and the z-updates.

Every conditional has the house shape ``(key, state, data, *, hyperparameters)`` and
returns the new value of one state field; the kernels
(:mod:`gibbsjax.models.lda.kernels`) compose them with :func:`gibbsjax.kernel.sweep`.

* :func:`sample_log_phi`: log φ_k ~ log Dir(n_k· + η);
* :func:`sample_z_collapsed`: the token-by-token collapsed update (Griffiths & Steyvers 2004);
* :func:`sample_z_partially_collapsed` (the reference XLA scan) and :func:`sample_z_lanes`
  (the same conditional organised for the CPU): z | φ with θ integrated out, documents in
  parallel (Magnusson et al. 2018); the fused GPU form is :mod:`gibbsjax.models.lda.pallas`;
* :func:`sample_z_uncollapsed`: θ drawn, then every token at once.

The APPROXIMATE warm-up sweeps are in :mod:`gibbsjax.models.lda.warmups`.

Which z-update a kernel runs is chosen in :mod:`gibbsjax.models.lda.z_updates`.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from gibbsjax import random as gr
from gibbsjax.models.lda import native
from gibbsjax.models.lda.layout import (LDAData, LDAState, hashed_uniforms, num_docs_of, token_uniforms, topic_counts,
                                        vocab_size_of, word_topic_counts)

__all__ = [
    "inverse_cdf",
    "log_joint_collapsed",
    "sample_log_phi",
    "log_phi_given_counts",
    "DIRICHLET_ROWS",
    "sample_z_collapsed",
    "SCAN_UNROLL",
    "LOG_PHI_FLOOR",
    "phi_by_word",
    "sample_z_partially_collapsed",
    "PREFIX_ONE_LEVEL_MAX_K",
    "draw_by_prefix_products",
    "LANES_UNROLL",
    "doc_starts",
    "sample_z_lanes",
    "UNCOLLAPSED_BLOCK_ELEMENTS",
    "THETA_BLOCK_ELEMENTS",
    "sample_z_uncollapsed",
]


def inverse_cdf(weights, u):
    """Index k with cumsum_{<k} <= u·total < cumsum_{≤k}, along the last axis.

    ``weights`` ≥ 0 with a positive total; ``u`` in [0, 1), one per draw.
    Clamped to the last positive weight so rounding never returns a zero-weight
    index."""
    c = jnp.cumsum(weights, axis=-1)
    target = u[..., None] * c[..., -1:]
    k = jnp.sum(c <= target, axis=-1)
    last = weights.shape[-1] - 1 - jnp.argmax(jnp.flip(weights > 0, axis=-1), axis=-1)
    return jnp.minimum(k, last).astype(jnp.int32)


def log_joint_collapsed(state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float, native_sums: bool = False):
    """log p(w, z) with θ and φ integrated out (Griffiths & Steyvers 2004, eq. 2–3).

    With ``native_sums`` both tables' terms run in C++ over their nonzero entries only, in float64,
    rows summed in order (:func:`~gibbsjax.models.lda.native.log_dm_sum`): the same quantity, without
    evaluating log Γ at every zero count, and unchanged by the empty documents of a bucket's padding.

    Parameters
    ----------
    state, d, K
        As in :func:`sample_z_partially_collapsed` (only the topics ``z`` are read).
    alpha : float
        The symmetric θ concentration α.
    eta : float
        The symmetric φ concentration η.
    native_sums : bool, default False
        Sum the log-gamma terms of the count tables in C++ (the CPU's native kernels).

    Returns
    -------
    jax.Array
        Scalar float32.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a"]]))   # one token, one topic: log p(w) = log(1/V) = 0
    >>> s = partially_collapsed(1).init(jax.random.key(0), d)
    >>> float(log_joint_collapsed(s, d, K=1, alpha=0.1, eta=0.01))
    0.0
    """
    ndk, nkw, nk = (native.topic_counts if native_sums else topic_counts)(state.z, d, K)
    v = vocab_size_of(d)
    nd = d.doc_lengths.astype(jnp.float32)
    if native_sums:  # per table: Σ over rows of the Dirichlet-multinomial terms
        doc_part = native.log_dm_sum(ndk[:-1], alpha)
        topic_part = native.log_dm_sum(nkw, eta)
        return doc_part + topic_part
    doc_part = jnp.sum(gammaln(ndk[:-1] + alpha)) - jnp.sum(gammaln(nd + K * alpha))
    doc_part += num_docs_of(d) * (gammaln(K * alpha) - K * gammaln(alpha))
    topic_part = jnp.sum(gammaln(nkw + eta)) - jnp.sum(gammaln(nk + v * eta))
    topic_part += K * (gammaln(v * eta) - v * gammaln(eta))
    return doc_part + topic_part


#: the exact draws of Dirichlet rows log p ~ log Dir(n + c) from counts, by name (the LDA kernels'
#: ``dirichlet_draw``, chosen per backend by :func:`gibbsjax.models.lda.resolve_dirichlet_draw`):
#: ``"sparse"`` (:func:`gibbsjax.random.log_dirichlet_counts`: a cheap exact sampler for the many
#: zero counts, the fastest on a CPU) and ``"dense"`` (:func:`gibbsjax.random.log_dirichlet_dense`:
#: ``jax.random.loggamma`` on every entry, the fastest on a GPU)
DIRICHLET_ROWS = {"sparse": gr.log_dirichlet_counts, "dense": gr.log_dirichlet_dense,
                  "native": native.log_dirichlet_native}


def sample_log_phi(key, state: LDAState, d: LDAData, *, K: int, eta: float, draw: str = "sparse"):
    """log φ_k ~ log Dir(n_k· + η), all topics at once (log space: no underflow).

    n_kw from one scatter-add (:func:`~gibbsjax.models.lda.layout.word_topic_counts`), then
    the rows drawn by ``DIRICHLET_ROWS[draw]``: ``"sparse"``
    (:func:`gibbsjax.random.log_dirichlet_counts`: most n_kw are 0, and the Gamma(η)
    variates of those entries (η < 1) take a cheap exact sampler; only the nonzero counts
    take Marsaglia-Tsang) or ``"dense"`` (``jax.random.loggamma``).  Both are exact.

    Parameters
    ----------
    key, state, d, K
        As in :func:`sample_z_partially_collapsed` (only the topics ``z`` are read).
    eta, draw
        As in :func:`log_phi_given_counts`.

    Returns
    -------
    jax.Array
        (K, V): the new log φ.

    Examples
    --------
    >>> from gibbsjax.models import lda
    >>> from gibbsjax.corpus import Corpus
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))   # V = 3 words
    >>> s = lda.partially_collapsed(2).init(jax.random.key(0), d)
    >>> phi = jnp.exp(sample_log_phi(jax.random.key(1), s, d, K=2, eta=0.01))
    >>> phi.shape, bool(jnp.allclose(phi.sum(axis=1), 1.0, atol=1e-5))
    ((2, 3), True)
    """
    nkw = native.topic_counts(state.z, d, K)[1] if draw == "native" else word_topic_counts(state.z, d, K)
    return log_phi_given_counts(key, nkw, eta, draw)


def log_phi_given_counts(key, nkw, eta: float, draw: str = "sparse"):
    """log φ ~ log Dir(n_kw + η) from the counts: the draw of :func:`sample_log_phi`.

    Also used by the sharded sampler, from counts summed over devices.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    nkw : jax.Array
        (K, V) int topic-word counts.
    eta : float or jax.Array
        η: a number or a traced scalar.
    draw : {"sparse", "dense"}, default "sparse"
        The Dirichlet draw, a key of ``DIRICHLET_ROWS``.

    Returns
    -------
    jax.Array
        (K, V): log φ.

    Examples
    --------
    >>> phi = jnp.exp(log_phi_given_counts(jax.random.key(0), jnp.array([[5, 0, 0], [0, 3, 2]]), eta=0.01))
    >>> phi.shape, bool(jnp.allclose(phi.sum(axis=1), 1.0, atol=1e-5))
    ((2, 3), True)
    """
    return DIRICHLET_ROWS[draw](key, nkw, jnp.asarray(eta, jnp.float32))


def sample_z_collapsed(key, state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float):
    """Token by token: p(z_i = k | z_−i, w) ∝ (n_kw,−i + η)/(n_k,−i + Vη) · (n_dk,−i + α).

    Every token sees every earlier update (the reference, vectorised over chains only).

    Parameters
    ----------
    key, state, d, K, alpha
        As in :func:`sample_z_partially_collapsed`.
    eta : float or jax.Array
        η: a number or a traced scalar.

    Returns
    -------
    jax.Array
        The new topics, as :func:`sample_z_partially_collapsed` returns them.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2).init(jax.random.key(0), d)
    >>> z = sample_z_collapsed(jax.random.key(1), s, d, K=2, alpha=0.1, eta=0.01)
    >>> z.shape == d.words.shape, bool(((z >= 0) & (z < 2)).all())
    (True, True)
    """
    z = state.z
    ndk, nkw, nk = topic_counts(z, d, K)
    v = vocab_size_of(d)
    shape = z.shape
    u = token_uniforms(key, d).reshape(-1)
    words, docs, mask = d.words.reshape(-1), d.docs.reshape(-1), d.mask.reshape(-1)
    onehot = jnp.arange(K)

    def token(carry, x):
        ndk, nkw, nk = carry
        w, doc, m, z_old, ui = x
        old = (onehot == z_old).astype(jnp.int32) * m
        n_d = ndk[doc] - old
        n_w = nkw[:, w] - old
        n_k = nk - old
        p = (n_w + eta) / (n_k + v * eta) * (n_d + alpha)
        z_new = jnp.where(m, inverse_cdf(p, ui), z_old)
        new = (onehot == z_new).astype(jnp.int32) * m
        ndk = ndk.at[doc].set(n_d + new)
        nkw = nkw.at[:, w].set(n_w + new)
        return (ndk, nkw, n_k + new), z_new

    _, z_flat = jax.lax.scan(token, (ndk, nkw, nk), (words, docs, mask, z.reshape(-1), u))
    return z_flat.reshape(shape)


#: scan steps fused per loop iteration in the partially collapsed sampler (measured: 4 was ~2x faster than 1)
SCAN_UNROLL = 4
#: log φ is floored at this many nats below each word's largest topic, so every
#: weight φ_kw (n_dk + α) is strictly positive in float32; e^-80 ≈ 1.8e-35 of the
#: largest weight, far below what a float32 cumulative sum can resolve (~6e-8).
LOG_PHI_FLOOR = -80.0


def _positive_weights_draw(weights, u):
    """Inverse CDF for strictly positive weights: the clamp to K − 1 is always valid."""
    c = jnp.cumsum(weights, axis=-1)
    k = jnp.sum(c <= u[..., None] * c[..., -1:], axis=-1)
    return jnp.minimum(k, weights.shape[-1] - 1).astype(jnp.int32)


def phi_by_word(log_phi):
    """φᵀ (V, K), each word's row scaled to a largest entry of 1 and floored at
    e^LOG_PHI_FLOOR: a per-word scale does not change z's conditional, and the
    floor keeps every weight φ_kw (n_dk + α) strictly positive in float32.

    >>> import jax.numpy as jnp
    >>> phi_by_word(jnp.log(jnp.array([[0.5, 0.2], [0.25, 0.8]]))).tolist()
    [[1.0, 0.5], [0.25, 1.0]]
    """
    scaled = jnp.maximum(log_phi - jnp.max(log_phi, axis=0, keepdims=True), LOG_PHI_FLOOR)
    return jnp.exp(scaled).T


def sample_z_partially_collapsed(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    """Given φ, documents in parallel, tokens in sequence:
    p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α).

    Padding slots point at the dummy document row D, so they need no masking
    inside the loop (they only ever touch that row; real documents each sit in
    one lane, so no two real slots of a step share a row); their topics are
    reset to 0 after the scan.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    state : LDAState or LDALearnedState
        The current state (its topics ``z`` and log φ are read).
    d : LDAData
        The packed corpus (:func:`~gibbsjax.models.lda.data`).
    K : int
        Number of topics.
    alpha : float or jax.Array
        α: a number, a traced scalar, or (K,) one per topic.

    Returns
    -------
    jax.Array
        (S, R) int32: the new topic of every grid slot, 0 at padding.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2).init(jax.random.key(0), d)
    >>> z = sample_z_partially_collapsed(jax.random.key(1), s, d, K=2, alpha=0.1)
    >>> z.shape == d.words.shape, bool(((z >= 0) & (z < 2)).all())
    (True, True)
    """
    z = state.z
    ndk, _, _ = topic_counts(z, d, K)
    phi_t = phi_by_word(state.log_phi)  # (V, K)
    u = token_uniforms(key, d)
    onehot = jnp.arange(K)

    def step(ndk, x):
        w, doc, z_old, ui = x  # (R,) each
        old = (z_old[:, None] == onehot).astype(jnp.int32)
        n_d = ndk[doc] - old
        z_new = _positive_weights_draw(phi_t[w] * (n_d + alpha), ui)
        ndk = ndk.at[doc].add((z_new[:, None] == onehot).astype(jnp.int32) - old)
        return ndk, z_new

    _, z_new = jax.lax.scan(step, ndk, (d.words, d.docs, z, u), unroll=SCAN_UNROLL)
    return jnp.where(d.mask, z_new, 0)


#: up to this many topics one (K × K) matrix product gives a draw's cumulative
#: sums; above it, two levels of blocks of about √K topics (less arithmetic)
PREFIX_ONE_LEVEL_MAX_K = 32


def _upper_ones(n: int, dtype):
    """(n, n) with 1 where row ≤ column: ``w @ _upper_ones(n)`` is the inclusive cumulative sum of ``w``."""
    return jnp.triu(jnp.ones((n, n), dtype))


def draw_by_prefix_products(weights, u):
    """Inverse-CDF draw along the last axis of ``weights`` (R, K), all > 0, one uniform ``u`` (R,) per row.

    Returns the index k with c_{k−1} ≤ u·c_{K−1} < c_k, c the cumulative sums,
    exactly as :func:`_positive_weights_draw` does, but the cumulative sums
    are formed by matrix products at full float32 precision instead of
    ``jnp.cumsum``, which XLA's CPU backend lowers to a reduce-window that is
    quadratic in K and, inside the per-step loop of a z-update, costs several
    times more than the rest of the step.  Up to
    :data:`PREFIX_ONE_LEVEL_MAX_K` topics: one (K × K) product.  Above: K is
    split into B blocks of G ≈ √K topics; block sums pick the block, a
    (G × G) product within the chosen block picks the topic (O(K + B² + G²)
    work per draw).  The sums are added in a different order than a
    sequential cumulative sum, so a ``u`` within float32 rounding of a
    boundary can pick the neighbouring topic: an error of order 1e-7 in the
    probabilities, as for any float32 inverse CDF.

    >>> import jax.numpy as jnp
    >>> w = jnp.array([[1.0, 2.0, 1.0], [1.0, 1.0, 6.0]])
    >>> draw_by_prefix_products(w, jnp.array([0.5, 0.1])).tolist()
    [1, 0]
    """
    r, k = weights.shape
    hi = jax.lax.Precision.HIGHEST
    if k <= PREFIX_ONE_LEVEL_MAX_K:
        c = jnp.matmul(weights, _upper_ones(k, weights.dtype), precision=hi)
        idx = jnp.sum(c <= (u * c[:, -1])[:, None], axis=-1)
        return jnp.minimum(idx, k - 1).astype(jnp.int32)
    g = int(math.ceil(math.sqrt(k)))
    b = -(-k // g)
    blocks = jnp.pad(weights, ((0, 0), (0, b * g - k))).reshape(r, b, g)
    sums = jnp.sum(blocks, axis=-1)  # (R, B)
    c_blocks = jnp.matmul(sums, _upper_ones(b, weights.dtype), precision=hi)
    target = u * c_blocks[:, -1]
    block = jnp.minimum(jnp.sum(c_blocks <= target[:, None], axis=-1), b - 1)
    row = jnp.take_along_axis(blocks, block[:, None, None], axis=1)[:, 0]  # (R, G)
    before = (jnp.take_along_axis(c_blocks, block[:, None], axis=1)
              - jnp.take_along_axis(sums, block[:, None], axis=1))[:, 0]
    c_row = jnp.matmul(row, _upper_ones(g, weights.dtype), precision=hi)
    within = jnp.minimum(jnp.sum(c_row <= (target - before)[:, None], axis=-1), g - 1)
    # padded topics (weight 0) sit at the end of the last block: clamp onto the last real one
    return jnp.minimum(block * g + within, k - 1).astype(jnp.int32)


def doc_starts(d: LDAData):
    """(S, R): True where a slot holds another document than the slot before it in its lane.

    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data
    >>> doc_starts(data(Corpus.from_token_lists([["a", "b"], ["c"], ["a"]]), num_lanes=1)).ravel().tolist()
    [True, False, True, True]
    """
    before = jnp.concatenate([jnp.full_like(d.docs[:1], -1), d.docs[:-1]], axis=0)
    return d.docs != before


#: scan steps fused per loop iteration in the lane-carried z-updates
LANES_UNROLL = 2


def sample_z_lanes(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    """The partially collapsed z-update, p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α),
    organised for the CPU: the same conditional, draws and visiting order as
    :func:`sample_z_partially_collapsed` (equal draws for equal keys, up to
    float32 summation order).

    Each lane carries the count row n_d· of the document it is visiting
    (loaded from the count table when the lane reaches a new document), so a
    step reads and writes no (D × K) table; the cumulative sums of the draw
    are matrix products (:func:`draw_by_prefix_products`).  Measured on a
    2-core CPU (Reuters, K = 20 and 100) the z-update is several times faster
    than the table-and-cumsum form.  Padding slots (dummy document D) may see
    negative weights for topic 0; their draws are discarded (reset to 0).

    Parameters
    ----------
    key, state, d, K, alpha
        As in :func:`sample_z_partially_collapsed`.

    Returns
    -------
    jax.Array
        The new topics (:func:`sample_z_partially_collapsed`'s form).

    Examples
    --------
    The lanes' draws are the table-and-cumsum form's (up to float32 summation order):

    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2).init(jax.random.key(0), d)
    >>> z, ref = (f(jax.random.key(1), s, d, K=2, alpha=0.1)
    ...           for f in (sample_z_lanes, sample_z_partially_collapsed))
    >>> bool((z == ref).all())
    True
    """
    z = state.z
    ndk, _, _ = topic_counts(z, d, K)
    phi_t = phi_by_word(state.log_phi)  # (V, K)
    u = token_uniforms(key, d)
    onehot = jnp.arange(K)

    def step(nd, x):
        w, doc, z_old, ui, start = x  # (R,) each
        nd = jnp.where(start[:, None], ndk[doc], nd)
        n_d = nd - (z_old[:, None] == onehot)
        z_new = draw_by_prefix_products(phi_t[w] * (n_d + alpha), ui)
        return n_d + (z_new[:, None] == onehot), z_new

    rows = jnp.zeros((z.shape[1], K), jnp.int32)
    _, z_new = jax.lax.scan(step, rows, (d.words, d.docs, z, u, doc_starts(d)), unroll=LANES_UNROLL)
    return jnp.where(d.mask, z_new, 0)


#: tokens × topics per block of the uncollapsed z-update: a few float32 copies of a block's (tokens × K)
#: weights are its largest per-block temporaries, 64 MiB a copy whatever the corpus size (blocks of 16 grid
#: steps × R lanes held 4 GiB a copy at 100 M tokens); 600 blocks at 100 M tokens, K = 100.  A sweep on a
#: 2-core CPU (10^6 tokens, K = 100) took 0.52 s with 2^24, 0.57 s with 2^22, 0.70 s with 2^20 and 1.18 s
#: with 2^26 (0.56 s with the blocks of 16 grid steps)
UNCOLLAPSED_BLOCK_ELEMENTS = 1 << 24
#: Dirichlet rows × K per block of the uncollapsed θ draw: a gamma draw's temporaries take about 130 bytes
#: per entry (XLA's buffer assignment on a CPU), 13 GiB for θ of 10^6 documents × K = 100 in one draw
THETA_BLOCK_ELEMENTS = 1 << 22
#: a token's weights θ̃_dk φ̃_kw (θ̃, φ̃ scaled to a largest entry of 1 per row) summing below this
#: send its block to the log-space path, where the largest weight is 1
_TINY_TOTAL = 1e-20
#: every weight is at least this (the smallest normal float32 is 1.2e-38), so the draw never
#: meets a zero weight; against a total of at least 1e-20 it is a relative error below 1e-15
_WEIGHT_FLOOR = 1e-37


def _log_theta(key, ndk, alpha, draw: str):
    """log θ_d ~ log Dir(n_d· + α) for every row of ``ndk`` by ``DIRICHLET_ROWS[draw]``: in one draw
    up to :data:`THETA_BLOCK_ELEMENTS` entries, else by blocks of rows, block b from ``fold_in(key, b)``
    (the last block ends at the last row and draws its first rows again, each row's last draw kept:
    every row is still one independent exact draw)."""
    rows, k = ndk.shape
    per = max(1, THETA_BLOCK_ELEMENTS // k)
    if rows <= per:
        return DIRICHLET_ROWS[draw](key, ndk, alpha)

    def block(b, out):
        start = jnp.minimum(b * per, rows - per)
        counts = jax.lax.dynamic_slice_in_dim(ndk, start, per)
        return jax.lax.dynamic_update_slice_in_dim(out, DIRICHLET_ROWS[draw](jax.random.fold_in(key, b), counts,
                                                                             alpha), start, 0)

    return jax.lax.fori_loop(0, -(-rows // per), block, jnp.zeros(ndk.shape, jnp.result_type(alpha)))


def sample_z_uncollapsed(key, state: LDAState, d: LDAData, *, K: int, alpha: float, draw: str = "sparse"):
    """θ_d ~ Dir(n_d· + α), then all tokens at once: p(z_i = k | θ, φ, w) ∝ θ_{d,k} φ_{k,w_i}.

    θ is drawn by ``DIRICHLET_ROWS[draw]`` (as φ is, :func:`sample_log_phi`), by blocks of
    rows beyond :data:`THETA_BLOCK_ELEMENTS` entries (a draw's temporaries are token-sized).  The
    tokens are drawn in blocks of :data:`UNCOLLAPSED_BLOCK_ELEMENTS` / K consecutive grid
    slots (``lax.fori_loop`` writing the new topics in place), so no (tokens × K) array and
    no other token-sized temporary is formed: each token's weights are the product of its
    document's row of θ̃ and its word's row of φ̃ᵀ, each scaled to a largest entry of 1 (a
    per-row scale does not change the conditional), and the draw is an inverse CDF with the
    token's uniform (:func:`token_uniforms`, hashed inside the block: the same uniforms).
    Where a token's weights sum below 1e-20 (the document's and the word's topics disagree
    so much that products underflow), its block is recomputed from log θ + log φ, whose
    largest weight is 1.

    Parameters
    ----------
    key, state, d, K, alpha
        As in :func:`sample_z_partially_collapsed`.
    draw : {"sparse", "dense"}, default "sparse"
        The Dirichlet draw of θ, a key of ``DIRICHLET_ROWS``.

    Returns
    -------
    jax.Array
        The new topics ((S, R) int32; 0 at padding).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, uncollapsed
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = uncollapsed(2).init(jax.random.key(0), d)
    >>> sample_z_uncollapsed(jax.random.key(1), s, d, K=2, alpha=0.1).shape == d.words.shape
    True
    """
    k_theta, k_z = jax.random.split(key)
    ndk, _, _ = topic_counts(state.z, d, K)
    log_theta = _log_theta(k_theta, ndk, jnp.asarray(alpha, state.log_phi.dtype), draw)  # (D + 1, K)
    theta = jnp.exp(log_theta - jnp.max(log_theta, axis=1, keepdims=True))
    log_phi_t = state.log_phi.T
    phi_t = jnp.exp(log_phi_t - jnp.max(log_phi_t, axis=1, keepdims=True))
    lanes = d.words.shape[1]
    words, docs, mask, z_old = (x.reshape(-1) for x in (d.words, d.docs, d.mask, state.z))
    n = words.shape[0]
    size = max(1, min(n, UNCOLLAPSED_BLOCK_ELEMENTS // K))

    def block(b, z):
        start = jnp.minimum(b * size, n - size)  # the last block ends at n, redoing slots (same uniforms)
        w, doc, m, old = (jax.lax.dynamic_slice_in_dim(x, start, size) for x in (words, docs, mask, z_old))
        step = (start + jnp.arange(size, dtype=jnp.int32)) // lanes
        ui = hashed_uniforms(k_z, d.doc_ids[doc], step - d.first_step[doc])  # = token_uniforms(k_z, d) there
        weights = theta[doc] * phi_t[w]

        def from_logs():
            logits = log_theta[doc] + log_phi_t[w]
            return jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True))

        weights = jax.lax.cond(jnp.any(jnp.sum(weights, axis=1) < _TINY_TOTAL), from_logs, lambda: weights)
        new = draw_by_prefix_products(jnp.maximum(weights, _WEIGHT_FLOOR), ui)
        return jax.lax.dynamic_update_slice_in_dim(z, jnp.where(m, new, old), start, 0)

    z = jax.lax.fori_loop(0, -(-n // size), block, z_old)
    return z.reshape(d.words.shape)
