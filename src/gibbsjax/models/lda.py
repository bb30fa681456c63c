"""Latent Dirichlet allocation by exact Gibbs sampling (source document 003 §4).

Model (Blei, Ng & Jordan 2003, in the source document's notation): topics
φ_k ~ Dir_V(η), document proportions θ_d ~ Dir_K(α), and for every token i of
document d a topic z_i | θ_d ~ Cat(θ_d) and a word w_i | z_i, φ ~ Cat(φ_{z_i}).

Three exact samplers, all with state ``LDAState(z, log_phi)``:

* :func:`collapsed` — the source document's sampler, θ and φ integrated out, token by token:
  p(z_i = k | z_−i, w) ∝ (n_kw,−i + η) / (n_k,−i + Vη) · (n_dk,−i + α)
  (seed eq. 20; its factor 1/(n_d,−i + Kα) does not depend on k).  Every token
  sees every earlier update: the reference, vectorised over chains only.
* :func:`partially_collapsed` (the default) — Magnusson, Jonsson, Villani &
  Broman (2018, JCGS 27(2)): each sweep draws φ_k ~ Dir(n_k· + η), then, θ
  integrated out, p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α).  Given φ
  documents are independent, so all documents are updated in parallel and the
  tokens of a document in sequence: exact, not an approximation.
* :func:`uncollapsed` — θ_d ~ Dir(n_d· + α) and φ_k ~ Dir(n_k· + η), then every
  token at once: p(z_i = k | θ, φ, w) ∝ θ_{d,k} φ_{k,w_i} (all z are
  conditionally independent given θ and φ).  Fully parallel; mixes slower per
  sweep.  Natural on a GPU.

Ragged documents are packed into ``R`` *lanes* (``data``): an (S steps × R
lanes) grid where each lane holds whole documents one after another, so the
partially collapsed sampler scans S ≈ (longest document) steps, updating R
documents per step, with little padding.  The collapsed sampler visits the same
grid in step-major order one token at a time (any fixed visiting order is a
valid systematic scan).  Shapes depend only on (S, R, D, V), so corpora packed
to the same grid reuse compiled code.

Options of the partially collapsed sampler: ``z_update`` picks how the
z-update runs — ``"lanes"`` (each lane carries its document's count row;
cumulative sums by matrix products: the fastest on a CPU), ``"dense"`` (the
reference XLA scan), ``"pallas"`` (a fused GPU kernel,
:mod:`gibbsjax.models.lda_pallas`) — all the same exact conditional;
``"auto"`` chooses by backend (:func:`resolve_z_update`).  Every sampler takes
``warmup``: ``"fast"`` (the default) runs approximate document-parallel
collapsed sweeps during warm-up only (``Kernel.warmup_step``; they reach the
typical set in fewer sweeps and are discarded), ``"exact"`` warms up with the
sampling sweep; sampling sweeps are always exact, and ``attrs["warmup"]``
records which warm-up ran.

Learned priors (``learn_alpha``, ``asymmetric_alpha``, ``learn_eta``, ``alpha_prior``,
``eta_prior`` of every factory): α (symmetric, or one α_k per topic) and η get gamma
hyperpriors and are sampled within the sweep by exact slice-sampling updates of their
logs (θ, resp. φ, integrated out; :func:`sample_log_alpha`, :func:`sample_log_eta`),
recorded per draw as ``alpha`` and ``eta``; the state is then an
:class:`LDALearnedState` (``z, log_phi, log_alpha, log_eta``), so kernels with fixed
priors keep ``LDAState`` and their saved results.  ``learn_alpha="minka"`` estimates α
by Minka's fixed point during warm-up only (tomotopy's behaviour).

``lp`` (``sample_stats``) is log p(w, z) with θ and φ integrated out — the same
label-invariant quantity for every sampler.  ``posterior_mean`` holds, per
chain, E[φ | z, w] (``topic_word``, K × V) and E[θ | z, w] (``doc_topic``,
D × K), Rao-Blackwellised; ``posterior`` records each topic's share of tokens.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln

from gibbsjax import conjugate as cj
from gibbsjax import random as gr
from gibbsjax._checks import check_int, check_positive
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import Kernel, sweep

__all__ = [
    "LDAData",
    "LDAState",
    "data",
    "collapsed",
    "partially_collapsed",
    "uncollapsed",
    "SAMPLERS",
    "log_joint_collapsed",
    "topic_counts",
    "token_uniforms",
    "hashed_uniforms",
    "initial_topics",
    "sample_z_collapsed",
    "sample_z_partially_collapsed",
    "sample_z_uncollapsed",
    "sample_z_lanes",
    "sample_z_collapsed_parallel",
    "resolve_z_update",
    "Z_UPDATES",
    "WARMUPS",
    "sample_log_phi",
    "LDALearnedState",
    "LearnedPriors",
    "LEARN_ALPHA",
    "learned_priors",
    "slice_sample",
    "sample_log_alpha",
    "sample_log_eta",
    "minka_log_alpha",
    "log_joint_learned",
    "infer_doc_topics",
    "heldout_perplexity",
    "recorded_indices",
    "theta_draws",
    "postprocess",
    "report",
    "SPECS",
]


# ============================================================================ data
class LDAData(NamedTuple):
    """A corpus packed into an (S steps × R lanes) grid (see the module docs).

    ``words``/``docs``/``mask`` are (S, R); padding slots have ``mask`` False,
    word 0 and document ``D`` (a dummy row).  ``doc_lengths`` (D,) and
    ``word_counts`` (V,) fix D and V statically.  ``first_step`` (D + 1,) is the
    grid step of each document's first token (row D: 0), so the token in slot
    (s, r) is at position ``s − first_step[docs[s, r]]`` of its document;
    ``doc_ids`` (D + 1,) names each row's document in the whole corpus (``d``
    for :func:`data`; a shard's rows of :func:`gibbsjax.models.lda_shard.shard_data`
    hold its own documents; −1 for the dummy row and unused rows).  Together
    they key each token's uniform (:func:`token_uniforms`), so draws do not
    depend on the packing.
    """

    words: jax.Array
    docs: jax.Array
    mask: jax.Array
    doc_lengths: jax.Array
    word_counts: jax.Array
    first_step: jax.Array
    doc_ids: jax.Array


#: tokens placed per block when packing a corpus into the grid (and back): the host-side
#: temporaries of :func:`data` and :func:`tokens_in_corpus_order` are O(block), not O(tokens)
PACK_BLOCK_TOKENS = 1 << 16


def _pack(doc_lengths: np.ndarray, num_lanes: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Assign documents to lanes by the longest-processing-time rule (Graham 1969):
    longest document first, each to the lane with the least load so far (ties: the
    lowest lane; equal lengths: corpus order).

    Returns (lane of each doc, start step of each doc within its lane, S), the
    first two int32 (D,).  A heap over lanes, O(D log R): data preparation, run
    once per corpus, not per sweep."""
    import heapq

    d = doc_lengths.size
    order = np.argsort(-doc_lengths, kind="stable")
    lane = np.empty(d, np.int32)
    start = np.empty(d, np.int32)
    heap = [(0, r) for r in range(num_lanes)]
    lengths = doc_lengths.tolist()
    for doc in order.tolist():
        load, r = heapq.heappop(heap)
        lane[doc] = r
        start[doc] = load
        heapq.heappush(heap, (load + lengths[doc], r))
    return lane, start, max(load for load, _ in heap) if d else 0


def _token_slots(doc_offsets: np.ndarray, first_slot: np.ndarray, num_lanes: int):
    """Yield ``(lo, hi, docs, slots)`` for consecutive blocks of whole documents of
    about :data:`PACK_BLOCK_TOKENS` tokens (a longer document is a block of its own): corpus
    tokens ``lo:hi`` sit at ``slots`` of the flattened (S · R) grid, and belong to
    the documents ``docs`` (int32).  ``first_slot[d]`` is the flat slot of
    document d's first token; its i-th token is ``R · i`` slots further on (one
    lane, consecutive steps).

    Only the block's arrays are token-sized, so packing a corpus of N tokens
    needs O(block) temporary memory beyond the grid, not several int64 arrays
    of length N."""
    block = PACK_BLOCK_TOKENS
    num_docs = doc_offsets.size - 1
    n = int(doc_offsets[-1])
    # document holding the first token of each block of `block` tokens
    cuts = np.searchsorted(doc_offsets, np.arange(0, n, block, dtype=np.int64), side="right") - 1
    cuts = np.unique(np.append(cuts, num_docs))
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        lo, hi = int(doc_offsets[a]), int(doc_offsets[b])
        lengths = np.diff(doc_offsets[a:b + 1])
        # slot of token j of the block = first_slot[doc] + R · (j − offset of doc in the block)
        base = first_slot[a:b] - num_lanes * (doc_offsets[a:b] - lo)
        slots = np.repeat(base, lengths) + num_lanes * np.arange(hi - lo, dtype=np.int64)
        yield lo, hi, np.repeat(np.arange(a, b, dtype=np.int32), lengths), slots


def data(corpus: Corpus, *, num_lanes: int | None = None) -> LDAData:
    """Validate a :class:`~gibbsjax.corpus.Corpus` and pack it for the LDA samplers.

    ``num_lanes`` (R) defaults to ceil(N / longest document), at most D: the
    grid then has about as many steps as the longest document and little
    padding.  Raises ``ValueError`` for an empty corpus, a zero-length document
    or a corpus that is not a :class:`Corpus`.

    Host memory: the grid (9 bytes per slot: int32 words and documents, a bool
    mask) plus temporaries of :data:`PACK_BLOCK_TOKENS` tokens, whatever the
    corpus size.

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b"], ["b", "c", "c"], ["a"]]))
    >>> d.words.shape, int(d.mask.sum())
    ((3, 2), 6)
    """
    if not isinstance(corpus, Corpus):
        raise ValueError(f"corpus must be a gibbsjax.corpus.Corpus, got {type(corpus).__name__}")
    if corpus.num_docs == 0 or corpus.num_tokens == 0:
        raise ValueError("corpus is empty: LDA needs at least one document with tokens")
    lengths = corpus.doc_lengths
    if np.any(lengths == 0):
        bad = int(np.flatnonzero(lengths == 0)[0])
        raise ValueError(
            f"corpus has zero-length documents (first: {corpus.doc_names[bad]!r}); "
            "drop them first (e.g. corpus.subset(corpus.doc_lengths > 0))"
        )
    d, n = corpus.num_docs, corpus.num_tokens
    if num_lanes is None:
        num_lanes = min(d, max(1, math.ceil(n / int(lengths.max()))))
    num_lanes = min(check_int("num_lanes", num_lanes, 1), d)
    words, docs, mask, word_counts, first_step = _grid(corpus, num_lanes)
    doc_ids = np.arange(d + 1, dtype=np.int32)
    doc_ids[d] = -1
    return LDAData(
        jnp.asarray(words), jnp.asarray(docs), jnp.asarray(mask),
        jnp.asarray(lengths.astype(np.int32)), jnp.asarray(word_counts),
        jnp.asarray(first_step), jnp.asarray(doc_ids),
    )


def _grid(corpus: Corpus, num_lanes: int) -> tuple[np.ndarray, ...]:
    """The host-side packing of :func:`data`: (words, docs, mask) grids (S, R),
    word counts (V,), all filled block by block (:func:`_token_slots`), and each
    document's first step (D + 1,; the dummy row D: 0)."""
    d = corpus.num_docs
    lane, start, steps = _pack(corpus.doc_lengths, num_lanes)
    words = np.zeros((steps, num_lanes), np.int32)
    docs = np.full((steps, num_lanes), d, np.int32)
    mask = np.zeros((steps, num_lanes), bool)
    word_counts = np.zeros(corpus.vocab_size, np.int32)
    flat_words, flat_docs, flat_mask = words.reshape(-1), docs.reshape(-1), mask.reshape(-1)
    first_slot = start.astype(np.int64) * num_lanes + lane
    for lo, hi, doc_ids, slots in _token_slots(corpus.doc_offsets, first_slot, num_lanes):
        block = corpus.tokens[lo:hi]
        flat_words[slots] = block
        flat_docs[slots] = doc_ids
        flat_mask[slots] = True
        word_counts += np.bincount(block, minlength=corpus.vocab_size).astype(np.int32)
    first_step = np.zeros(d + 1, np.int32)
    first_step[:d] = start
    return words, docs, mask, word_counts, first_step


def tokens_in_corpus_order(d: LDAData, values) -> np.ndarray:
    """Map a grid-shaped (S, R) array back to flat corpus order (N,), on the host.

    The inverse of the packing of :func:`data`: ``tokens_in_corpus_order(d, d.words)``
    is the corpus's ``tokens``.  Temporaries are O(grid) booleans plus
    O(:data:`PACK_BLOCK_TOKENS`), not int64 arrays of the corpus's length.

    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "b"], ["b", "c", "c"], ["a"]])
    >>> tokens_in_corpus_order(data(c), data(c).words).tolist() == c.tokens.tolist()
    True
    """
    docs = np.asarray(d.docs)
    mask = np.asarray(d.mask)
    vals = np.asarray(values)
    if vals.shape != docs.shape:
        raise ValueError(f"values must have the grid's shape {docs.shape}, got {vals.shape}")
    num_docs, num_lanes = _num_docs(d), docs.shape[1]
    # a document's first slot: a real slot whose lane held another document one step before
    starts = mask.copy()
    starts[1:] &= docs[1:] != docs[:-1]
    step_idx, lane_idx = np.nonzero(starts)  # (D,) each
    first_slot = np.empty(num_docs, np.int64)
    first_slot[docs[step_idx, lane_idx]] = step_idx * num_lanes + lane_idx
    offsets = np.zeros(num_docs + 1, np.int64)
    np.cumsum(np.asarray(d.doc_lengths), out=offsets[1:])
    flat = vals.reshape(-1)
    out = np.empty(int(offsets[-1]), vals.dtype)
    for lo, hi, _, slots in _token_slots(offsets, first_slot, num_lanes):
        out[lo:hi] = flat[slots]
    return out


# ============================================================================ state and counts
class LDAState(NamedTuple):
    """Topic of every grid slot (S, R) (padding: 0) and log φ (K, V)."""

    z: jax.Array
    log_phi: jax.Array


def _num_docs(d: LDAData) -> int:
    return d.doc_lengths.shape[0]


def _vocab_size(d: LDAData) -> int:
    return d.word_counts.shape[0]


def _unit_interval(bits):
    """uint32 random bits -> float32 uniforms in [0, 1): the top 23 bits as the mantissa of
    a number in [1, 2), minus 1 (the construction of ``jax.random.uniform``)."""
    mantissa = jax.lax.shift_right_logical(bits, jnp.uint32(9)) | jnp.uint32(0x3F800000)
    return jax.lax.bitcast_convert_type(mantissa, jnp.float32) - 1.0


def hashed_uniforms(key, a, b):
    """One float32 uniform in [0, 1) per pair (a_i, b_i) of integers (any equal shapes):
    the Threefry-2x32 hash (Salmon et al. 2011, the counter-based generator behind
    ``jax.random``) of the counter (a_i, b_i) under a 64-bit key drawn from ``key``.
    Each uniform depends on ``key`` and its own pair only, not on the other pairs
    nor on the array's shape or order; distinct pairs give independent uniforms.

    >>> import jax, jax.numpy as jnp
    >>> u = hashed_uniforms(jax.random.key(0), jnp.array([0, 1, 2]), jnp.array([5, 5, 5]))
    >>> bool(u[1] == hashed_uniforms(jax.random.key(0), jnp.array([1]), jnp.array([5]))[0])
    True
    """
    from jax.extend.random import threefry_2x32

    a = jnp.asarray(a)
    pair = jax.random.bits(key, (2,), jnp.uint32)  # the hash's key: works for every PRNG implementation
    n = a.size
    # threefry_2x32 hashes element i of the first half of its counts with element i of
    # the second half: pass (a, b) as the two halves, keep the first output half
    counts = jnp.concatenate([a.reshape(-1).astype(jnp.uint32), jnp.asarray(b).reshape(-1).astype(jnp.uint32)])
    return _unit_interval(threefry_2x32(pair, counts)[:n]).reshape(a.shape)


def token_uniforms(key, d: LDAData):
    """The uniform of every grid slot (S, R) float32: the uniform of the token at position j
    of document doc is :func:`hashed_uniforms` of (doc, j) under ``key``, with doc the
    document's index in the whole corpus (``d.doc_ids``) and j = step − ``d.first_step[doc]``.

    So a token's uniform, and every draw made from it, depends on the sweep's key, the
    document and the position only, not on the number of lanes nor on how documents are
    spread over devices (:mod:`gibbsjax.models.lda_shard`).  Every z-update of this module
    uses it.  Padding slots get uniforms too (of the dummy row); they are discarded.

    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b"], ["a"]])
    >>> u2 = tokens_in_corpus_order(data(c, num_lanes=2), token_uniforms(jax.random.key(0), data(c, num_lanes=2)))
    >>> u1 = tokens_in_corpus_order(data(c, num_lanes=1), token_uniforms(jax.random.key(0), data(c, num_lanes=1)))
    >>> bool((u1 == u2).all())
    True
    """
    steps = jnp.arange(d.docs.shape[0], dtype=jnp.int32)[:, None]
    return hashed_uniforms(key, d.doc_ids[d.docs], steps - d.first_step[d.docs])


def initial_topics(key, d: LDAData, K: int):
    """Topics drawn uniformly at random for every token (S, R) int32 (padding: 0), from
    :func:`token_uniforms`: a chain's start does not depend on the packing either.

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> initial_topics(jax.random.key(0), d, 3).shape == d.words.shape
    True
    """
    k = jnp.floor(token_uniforms(key, d) * K).astype(jnp.int32)
    return jnp.where(d.mask, jnp.minimum(k, K - 1), 0).astype(jnp.int32)


def topic_counts(z, d: LDAData, K: int):
    """n_dk (D + 1, K; row D is padding), n_kw (K, V), n_k (K), int32, from the topics ``z`` (S, R)."""
    ndk = cj.counts((d.docs, z), (_num_docs(d) + 1, K), d.mask)
    nkw = cj.counts((z, d.words), (K, _vocab_size(d)), d.mask)
    return ndk, nkw, nkw.sum(axis=1)


def _inverse_cdf(weights, u):
    """Index k with cumsum_{<k} <= u·total < cumsum_{≤k}, along the last axis.

    ``weights`` ≥ 0 with a positive total; ``u`` in [0, 1), one per draw.
    Clamped to the last positive weight so rounding never returns a zero-weight
    index."""
    c = jnp.cumsum(weights, axis=-1)
    target = u[..., None] * c[..., -1:]
    k = jnp.sum(c <= target, axis=-1)
    last = weights.shape[-1] - 1 - jnp.argmax(jnp.flip(weights > 0, axis=-1), axis=-1)
    return jnp.minimum(k, last).astype(jnp.int32)


def log_joint_collapsed(state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float):
    """log p(w, z) with θ and φ integrated out (Griffiths & Steyvers 2004, eq. 2–3)."""
    ndk, nkw, nk = topic_counts(state.z, d, K)
    v = _vocab_size(d)
    nd = d.doc_lengths.astype(jnp.float32)
    doc_part = jnp.sum(gammaln(ndk[:-1] + alpha)) - jnp.sum(gammaln(nd + K * alpha))
    doc_part += _num_docs(d) * (gammaln(K * alpha) - K * gammaln(alpha))
    topic_part = jnp.sum(gammaln(nkw + eta)) - jnp.sum(gammaln(nk + v * eta))
    topic_part += K * (gammaln(v * eta) - v * gammaln(eta))
    return doc_part + topic_part


# ============================================================================ conditionals
# Every conditional has the house shape ``(key, state, data, *, hyperparameters)``
# and returns the new value of one state field; the kernels compose them with
# :func:`gibbsjax.kernel.sweep`.
def sample_log_phi(key, state: LDAState, d: LDAData, *, K: int, eta: float):
    """log φ_k ~ log Dir(n_k· + η), all topics at once (log space: no underflow).

    Drawn by :func:`gibbsjax.random.log_dirichlet_counts`: most n_kw are 0, and
    the Gamma(η) variates of those entries (η < 1) take a cheap exact sampler;
    only the nonzero counts take Marsaglia-Tsang."""
    _, nkw, _ = topic_counts(state.z, d, K)
    return log_phi_given_counts(key, nkw, eta)


def log_phi_given_counts(key, nkw, eta: float):
    """log φ ~ log Dir(n_kw + η) from the (K, V) int counts: the draw of :func:`sample_log_phi`
    (also used by the sharded sampler, from counts summed over devices)."""
    return gr.log_dirichlet_counts(key, nkw, jnp.asarray(eta, jnp.float32))


def sample_z_collapsed(key, state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float):
    """Token by token: p(z_i = k | z_−i, w) ∝ (n_kw,−i + η)/(n_k,−i + Vη) · (n_dk,−i + α)."""
    z = state.z
    ndk, nkw, nk = topic_counts(z, d, K)
    v = _vocab_size(d)
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
        z_new = jnp.where(m, _inverse_cdf(p, ui), z_old)
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


def _phi_by_word(log_phi):
    """φᵀ (V, K), each word's row scaled to a largest entry of 1 and floored at
    e^LOG_PHI_FLOOR: a per-word scale does not change z's conditional, and the
    floor keeps every weight φ_kw (n_dk + α) strictly positive in float32."""
    scaled = jnp.maximum(log_phi - jnp.max(log_phi, axis=0, keepdims=True), LOG_PHI_FLOOR)
    return jnp.exp(scaled).T


def sample_z_partially_collapsed(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    """Given φ, documents in parallel, tokens in sequence:
    p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α).

    Padding slots point at the dummy document row D, so they need no masking
    inside the loop (they only ever touch that row; real documents each sit in
    one lane, so no two real slots of a step share a row); their topics are
    reset to 0 after the scan."""
    z = state.z
    ndk, _, _ = topic_counts(z, d, K)
    phi_t = _phi_by_word(state.log_phi)  # (V, K)
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


def _draw_by_prefix_products(weights, u):
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
    >>> _draw_by_prefix_products(w, jnp.array([0.5, 0.1])).tolist()
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


def _doc_starts(d: LDAData):
    """(S, R): True where a slot holds another document than the slot before it in its lane."""
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
    are matrix products (:func:`_draw_by_prefix_products`).  Measured on a
    2-core CPU (Reuters, K = 20 and 100) the z-update is several times faster
    than the table-and-cumsum form.  Padding slots (dummy document D) may see
    negative weights for topic 0; their draws are discarded (reset to 0).

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> kernel = partially_collapsed(2)
    >>> s = kernel.init(jax.random.key(0), d)
    >>> sample_z_lanes(jax.random.key(1), s, d, K=2, alpha=0.1).shape == d.words.shape
    True
    """
    z = state.z
    ndk, _, _ = topic_counts(z, d, K)
    phi_t = _phi_by_word(state.log_phi)  # (V, K)
    u = token_uniforms(key, d)
    onehot = jnp.arange(K)

    def step(nd, x):
        w, doc, z_old, ui, start = x  # (R,) each
        nd = jnp.where(start[:, None], ndk[doc], nd)
        n_d = nd - (z_old[:, None] == onehot)
        z_new = _draw_by_prefix_products(phi_t[w] * (n_d + alpha), ui)
        return n_d + (z_new[:, None] == onehot), z_new

    rows = jnp.zeros((z.shape[1], K), jnp.int32)
    _, z_new = jax.lax.scan(step, rows, (d.words, d.docs, z, u, _doc_starts(d)), unroll=LANES_UNROLL)
    return jnp.where(d.mask, z_new, 0)


def sample_z_collapsed_parallel(key, state: LDAState, d: LDAData, *, K: int, alpha: float, eta: float,
                                word_topic=None):
    """APPROXIMATE (for warm-up only): a document-parallel collapsed sweep.

    Every token i gets p(z_i = k) ∝ (n_kw + η)/(n_k + Vη) · (n_dk,−i + α), its
    own old topic taken out of all three counts, with the word–topic counts
    n_kw and n_k refreshed after every step of the lane grid: each token sees
    every update of earlier steps and of its own document, but not those of
    the other R − 1 tokens drawn in the same step (AD-LDA-style staleness,
    Newman et al. 2009).  So it does not leave the posterior invariant; used
    only as the warm-up transition (``warmup="fast"``), where it reaches the
    typical set in fewer sweeps than the exact sampler, whose φ drawn from
    nearly uniform counts carries little signal at first.

    ``word_topic`` (optional): the word–topic counts (n_kw (K, V), n_k (K,)) to
    start from instead of those of ``d``'s own tokens: with documents split over
    devices (:mod:`gibbsjax.models.lda_shard`) every shard starts from the summed
    counts and sees only its own updates within the sweep (AD-LDA across shards).

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2).init(jax.random.key(0), d)
    >>> sample_z_collapsed_parallel(jax.random.key(1), s, d, K=2, alpha=0.1, eta=0.01).shape
    (3, 2)
    """
    z = state.z
    ndk, nkw, nk = topic_counts(z, d, K)
    if word_topic is not None:
        nkw, nk = word_topic
    v = _vocab_size(d)
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
        z_new = _draw_by_prefix_products(weights, ui)
        change = ((z_new[:, None] == onehot) & m[:, None]).astype(jnp.int32) - old
        return (nd + change, nwk.at[w].add(change), nk + jnp.sum(change, axis=0)), z_new

    carry = (jnp.zeros((z.shape[1], K), jnp.int32), nkw.T, nk)
    _, z_new = jax.lax.scan(step, carry, (d.words, d.docs, z, u, _doc_starts(d), d.mask), unroll=LANES_UNROLL)
    return jnp.where(d.mask, z_new, 0)


#: grid steps per block of the uncollapsed z-update: its (steps · R × K) weights are its largest temporary
UNCOLLAPSED_BLOCK_STEPS = 16
#: a token's weights θ̃_dk φ̃_kw (θ̃, φ̃ scaled to a largest entry of 1 per row) summing below this
#: send its block to the log-space path, where the largest weight is 1
_TINY_TOTAL = 1e-20
#: every weight is at least this (the smallest normal float32 is 1.2e-38), so the draw never
#: meets a zero weight; against a total of at least 1e-20 it is a relative error below 1e-15
_WEIGHT_FLOOR = 1e-37


def sample_z_uncollapsed(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    """θ_d ~ Dir(n_d· + α), then all tokens at once: p(z_i = k | θ, φ, w) ∝ θ_{d,k} φ_{k,w_i}.

    θ is drawn by :func:`gibbsjax.random.log_dirichlet_counts` (sparse counts).  The
    tokens are drawn in blocks of :data:`UNCOLLAPSED_BLOCK_STEPS` grid steps
    (``lax.map``), so no (tokens × K) array is formed: each token's weights are the
    product of its document's row of θ̃ and its word's row of φ̃ᵀ, each scaled to a
    largest entry of 1 (a per-row scale does not change the conditional), and the
    draw is an inverse CDF with the token's uniform (:func:`token_uniforms`).  Where
    a token's weights sum below 1e-20 (the document's and the word's topics
    disagree so much that products underflow), its block is recomputed from
    log θ + log φ, whose largest weight is 1.

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = uncollapsed(2).init(jax.random.key(0), d)
    >>> sample_z_uncollapsed(jax.random.key(1), s, d, K=2, alpha=0.1).shape == d.words.shape
    True
    """
    k_theta, k_z = jax.random.split(key)
    ndk, _, _ = topic_counts(state.z, d, K)
    log_theta = gr.log_dirichlet_counts(k_theta, ndk, jnp.asarray(alpha, state.log_phi.dtype))  # (D + 1, K)
    theta = jnp.exp(log_theta - jnp.max(log_theta, axis=1, keepdims=True))
    log_phi_t = state.log_phi.T
    phi_t = jnp.exp(log_phi_t - jnp.max(log_phi_t, axis=1, keepdims=True))
    u = token_uniforms(k_z, d)
    steps, lanes = d.words.shape
    blocks = -(-steps // UNCOLLAPSED_BLOCK_STEPS)

    def by_block(x):
        x = jnp.pad(x, ((0, blocks * UNCOLLAPSED_BLOCK_STEPS - steps), (0, 0)))
        return x.reshape(blocks, UNCOLLAPSED_BLOCK_STEPS * lanes)

    def block(x):
        w, doc, ui = x
        weights = theta[doc] * phi_t[w]

        def from_logs():
            logits = log_theta[doc] + log_phi_t[w]
            return jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True))

        weights = jax.lax.cond(jnp.any(jnp.sum(weights, axis=1) < _TINY_TOTAL), from_logs, lambda: weights)
        return _draw_by_prefix_products(jnp.maximum(weights, _WEIGHT_FLOOR), ui)

    z = jax.lax.map(block, (by_block(d.words), by_block(d.docs), by_block(u)))
    return jnp.where(d.mask, z.reshape(-1, lanes)[:steps], state.z)


# ---------------------------------------------------------------------------- learned concentrations
# With ``learn_alpha``/``learn_eta`` (see :func:`partially_collapsed`) the state is an
# :class:`LDALearnedState`: the concentrations join the sweep.  Hyperpriors are gamma
# distributions on every concentration, α ~ Gamma(a_α, b_α) (per topic: α_k iid) and
# η ~ Gamma(a_η, b_η), shape a and rate b.  The conditionals below are exact given the
# other state components at the point of the sweep where they run:
#
# * log α | z, with θ integrated out (θ is never part of the state):
#   p(α | z) ∝ p(α) Π_d Γ(Σα)/Γ(n_d + Σα) Π_k Γ(n_dk + α_k)/Γ(α_k);
#   α ⟂ (φ, η, w) given z, so this is α's full conditional.
# * log η | z, with φ integrated out:
#   p(η | z, w) ∝ p(η) Π_k Γ(Vη)/Γ(n_k + Vη) Π_w Γ(n_kw + η)/Γ(η),
#   always immediately followed by φ | z, η: the pair is one blocked draw of (η, φ) from
#   p(η, φ | z, w) (the old φ is not used), which leaves the posterior invariant and
#   mixes far better than η | φ (φ's V·K entries pin η down).
#
# Both are sampled by slice sampling on the log concentration (Neal 2003, Ann. Statist.
# 31(3) 705-767, §4: stepping out, shrinkage), with the Jacobian of the log transform:
# the density of u = log α is p(α = e^u | ·) e^u.  Log densities are sums over
# histograms of the counts (how many documents have n_dk = n, ...), so an evaluation
# costs O(longest document), not O(D·K) or O(K·V), and differences of log Γ are formed
# without cancelling two large numbers (:func:`_log_rising_shift`), so they stay accurate in
# float32 on big corpora.

class LDALearnedState(NamedTuple):
    """The LDA state when α or η is learned: :class:`LDAState`'s ``z`` (S, R) and
    ``log_phi`` (K, V), plus ``log_alpha`` (() symmetric, (K,) per topic) and
    ``log_eta`` (()).  A concentration that is not learned stays at its given value.
    Kernels with fixed priors keep :class:`LDAState`, so their saved results resume
    unchanged."""

    z: jax.Array
    log_phi: jax.Array
    log_alpha: jax.Array
    log_eta: jax.Array


class LearnedPriors(NamedTuple):
    """Which concentrations a kernel learns, and their gamma hyperpriors (shape, rate).

    ``alpha``: ``"fixed"``, ``"sample"`` (slice-sampled in every sweep) or ``"minka"``
    (Minka's fixed point during warm-up only, then fixed); ``asymmetric``: one α_k per
    topic instead of one α; ``eta``: η sampled.  Built by :func:`learned_priors`."""

    alpha: str = "fixed"
    asymmetric: bool = False
    eta: bool = False
    alpha_prior: tuple[float, float] = (1.0, 1.0)
    eta_prior: tuple[float, float] = (1.0, 1.0)


#: ways to learn α (``learn_alpha``): keep it, sample it, or Minka's fixed point during warm-up
LEARN_ALPHA = ("fixed", "sample", "minka")
#: slice sampling of a log concentration: initial interval width (in log units), Neal's
#: bound m on the stepping-out steps (J = ⌊mV⌋ to the left, m − 1 − J to the right) and
#: the most shrinkage steps; if none is accepted the current value is kept.  Each
#: bound keeps the transition reversible (see :func:`slice_sample`).
SLICE_WIDTH = 1.0
SLICE_MAX_STEPS_OUT = 8
SLICE_MAX_SHRINKS = 32
#: count histograms (:func:`_count_summary`) have bins 0..min(S, HISTOGRAM_CAP); larger counts are listed
HISTOGRAM_CAP = 4096
#: Minka fixed-point iterations per warm-up sweep, and the floor it keeps α_k above
MINKA_ITERATIONS = 5
MINKA_MIN_ALPHA = 1e-5
#: from here on :func:`_log_rising_shift` uses Stirling's series (its truncation error < 3e-10)
_STIRLING_MIN = 8.0


def learned_priors(learn_alpha: str = "fixed", asymmetric_alpha: bool = False, learn_eta: bool = False,
                   alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0)) -> LearnedPriors | None:
    """Validate the learned-prior options of the LDA factories; ``None`` when nothing is learned.

    >>> learned_priors()
    >>> learned_priors("sample", learn_eta=True, eta_prior=[2, 20]).eta_prior
    (2.0, 20.0)
    """
    learn_alpha = _check_choice("learn_alpha", learn_alpha, LEARN_ALPHA)
    for name, flag in (("asymmetric_alpha", asymmetric_alpha), ("learn_eta", learn_eta)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if asymmetric_alpha and learn_alpha == "fixed":
        raise ValueError("asymmetric_alpha=True needs a learned alpha (learn_alpha='sample' or 'minka'): "
                         "a fixed alpha is one symmetric concentration")
    priors = []
    for name, value in (("alpha_prior", alpha_prior), ("eta_prior", eta_prior)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
            raise ValueError(f"{name} must be a pair (shape, rate) of a gamma hyperprior, got {value!r}")
        priors.append((check_positive(f"{name}[0] (shape)", value[0]), check_positive(f"{name}[1] (rate)", value[1])))
    if learn_alpha == "fixed" and not learn_eta:
        return None
    return LearnedPriors(learn_alpha, bool(asymmetric_alpha), bool(learn_eta), *priors)


def slice_sample(key, x0, log_density_ratio, *, width: float = SLICE_WIDTH,
                 max_steps_out: int = SLICE_MAX_STEPS_OUT, max_shrinks: int = SLICE_MAX_SHRINKS):
    """One slice-sampling transition of a scalar (Neal 2003, §4.1-4.2): stepping out, then shrinkage.

    ``log_density_ratio(x)`` is log f(x) − log f(x0) for the target density f (0 at
    ``x0``; a non-finite value counts as −∞).  The level is y = −E, E ~ Exp(1); an
    interval of ``width`` placed uniformly around x0 is stepped out by Neal's bounded
    procedure (J = ⌊mV⌋ steps at most to the left, m − 1 − J to the right, m =
    ``max_steps_out``, V uniform), which is exact for every m ≥ 1; then points drawn
    uniformly from the interval are accepted if above the level, else the interval
    shrinks to them.  Shrinkage stops after ``max_shrinks`` proposals and then keeps
    x0: Neal's reversibility argument pairs every path of rejected points from x0 to x1
    with the path of the same rejected points, equally likely, from x1 to x0 — of the
    same length — so the transition truncated at any fixed length is still reversible
    with respect to f.  One ``lax.while_loop`` evaluates the density at most
    ``max_steps_out + 1 + max_shrinks`` times (vmap-safe; chains stop independently).

    >>> import jax, jax.numpy as jnp
    >>> x = slice_sample(jax.random.key(0), jnp.float32(0.0), lambda x: -0.5 * x**2)
    >>> bool(jnp.isfinite(x))
    True
    """
    x0 = jnp.asarray(x0)
    dtype = x0.dtype
    # every uniform the transition may use, drawn at once (one generator, compiled once)
    u = gr.uniform(key, (3 + max_shrinks,), dtype)
    level = jnp.log(u[0])  # = −Exp(1), relative to f(x0) = 0
    left = x0 - width * u[1]
    steps_left = jnp.floor(max_steps_out * u[2]).astype(jnp.int32)
    steps_left = jnp.minimum(steps_left, max_steps_out - 1)  # U = 1 is possible: keep J ≤ m − 1
    # One loop, one evaluation of the density per iteration (so it is compiled once):
    # phase 0 probes the left end and steps it out, phase 1 the right end, phase 2
    # shrinks; phase 3 is done.
    _LEFT, _RIGHT, _SHRINK, _DONE = 0, 1, 2, 3

    def cond(c):
        return c[0] < _DONE

    def body(c):
        phase, lo, hi, n_left, n_right, i, x1 = c
        candidate = lo + u[3 + jnp.minimum(i, max_shrinks - 1)] * (hi - lo)
        probe = jnp.where(phase == _LEFT, lo, jnp.where(phase == _RIGHT, hi, candidate))
        v = log_density_ratio(probe)
        inside = jnp.isfinite(v) & (v > level)
        # stepping out (Neal's bounded procedure): move the probed end while inside and steps remain
        go_left = (phase == _LEFT) & inside & (n_left > 0)
        go_right = (phase == _RIGHT) & inside & (n_right > 0)
        lo = jnp.where(go_left, lo - width, lo)
        hi = jnp.where(go_right, hi + width, hi)
        n_left = n_left - go_left
        n_right = n_right - go_right
        # shrinkage: accept the candidate, or shrink the interval to it
        shrinking = phase == _SHRINK
        accepted = shrinking & inside
        rejected = shrinking & ~inside
        lo = jnp.where(rejected & (candidate < x0), candidate, lo)
        hi = jnp.where(rejected & (candidate >= x0), candidate, hi)
        x1 = jnp.where(accepted, candidate, x1)
        i = i + shrinking
        next_phase = jnp.where(phase == _LEFT, jnp.where(go_left, _LEFT, _RIGHT),
                               jnp.where(phase == _RIGHT, jnp.where(go_right, _RIGHT, _SHRINK),
                                         jnp.where(accepted | (i >= max_shrinks), _DONE, _SHRINK)))
        return next_phase, lo, hi, n_left, n_right, i, x1

    start = (jnp.int32(_LEFT), left, left + width, steps_left, max_steps_out - 1 - steps_left, jnp.int32(0), x0)
    return jax.lax.while_loop(cond, body, start)[-1]


def _stirling_tail(x):
    """log Γ(x) − [(x − ½) log x − x + ½ log 2π] for x ≥ 8: 1/(12x) − 1/(360x³) + 1/(1260x⁵)."""
    r = 1.0 / (x * x)
    return (1.0 / 12.0 - r * (1.0 / 360.0 - r / 1260.0)) / x


def _log_ratio(p, q, delta):
    """log(p / q) for p = q + δ > 0, q > 0: log1p(δ / q) near 1, a difference of logs far from it."""
    r = delta / q
    return jnp.where(r > -0.5, jnp.log1p(r), jnp.log(p) - jnp.log(q))


def _stirling_shift(y0, y1, delta):
    """log Γ(y1) − log Γ(y0) for y0, y1 = y0 + δ ≥ 8, by Stirling's series written as a
    difference, (y0 − ½) log(y1/y0) + δ (log y1 − 1) + t(y1) − t(y0): every term is of the
    size of the result, whereas two log Γ of size y log y, subtracted, would lose it to
    float32 rounding on long documents."""
    return (y0 - 0.5) * _log_ratio(y1, y0, delta) + delta * (jnp.log(y1) - 1.0) \
        + _stirling_tail(y1) - _stirling_tail(y0)


def _log_rising_shift(n, a0, delta, a):
    """[log Γ(n + a) − log Γ(a)] − [log Γ(n + a0) − log Γ(a0)] for counts n ≥ 0 and a0 > 0,
    a = a0 + δ > 0 (both given, each accurately): the change of the log rising factorial, the
    Pólya term of one count n; exactly 0 for n = 0.  Scalar parameters with counts of any
    shape, or parameters of shape (G,) with counts (G, L), one group per row.

    Below m = 8 it is the sum Σ_{j<n} log((a + j)/(a0 + j)) (cumulative sums of 8 terms);
    from 8 on, Stirling differences (:func:`_stirling_shift`) at n + a0 and at a0 + m,
    with the same m terms for log Γ(a + m) − log Γ(a): accurate to float32 rounding of
    the result's own size.

    >>> from scipy.special import gammaln as lg
    >>> v = _log_rising_shift(jnp.float32(5000.0), jnp.float32(0.1), jnp.float32(0.002), jnp.float32(0.102))
    >>> bool(abs(float(v) - (lg(5000.102) - lg(0.102) - lg(5000.1) + lg(0.1))) < 1e-6)
    True
    """
    a0, delta, a = jnp.asarray(a0), jnp.asarray(delta), jnp.asarray(a)
    n = jnp.asarray(n)
    if a0.ndim == 0:  # one group
        out = _log_rising_shift(n.reshape(1, -1), a0[None], jnp.reshape(delta, (1,)), jnp.reshape(a, (1,)))
        return out.reshape(n.shape)
    m = int(_STIRLING_MIN)
    a0, delta, a = a0[:, None], delta[:, None], a[:, None]  # (G, 1)
    j = jnp.arange(m, dtype=jnp.result_type(a0, delta))
    steps = jnp.cumsum(_log_ratio(a + j, a0 + j, delta), axis=-1)  # (G, m)
    rising = jnp.concatenate([jnp.zeros_like(steps[:, :1]), steps], axis=-1)  # (G, m + 1): n = 0..m
    small = n < m
    nf = jnp.where(small, m, n).astype(j.dtype)
    large = _stirling_shift(nf + a0, nf + a, delta) - _stirling_shift(a0 + m, a + m, delta) + rising[:, m:]
    index = jnp.broadcast_to(jnp.clip(n, 0, m).astype(jnp.int32), large.shape)
    return jnp.where(small, jnp.take_along_axis(rising, index, axis=-1), large)


def _rising_sum(*groups):
    """Σ over groups (n, w, a0, δ, a) of Σ_l w_l · :func:`_log_rising_shift` (n_l; a0, δ, a):
    the Pólya terms of several count tables, each with its parameters and weights (how often
    each count occurs, with a sign), in one call, so a density is one compiled expression."""
    length = max(int(g[0].shape[0]) for g in groups)
    dtype = jnp.result_type(*(g[2] for g in groups))

    def pad(x, dt):
        x = jnp.asarray(x, dt)
        return jnp.pad(x, (0, length - x.shape[0]))

    n = jnp.stack([pad(g[0], jnp.int32) for g in groups])
    w = jnp.stack([pad(g[1], dtype) for g in groups])
    a0, delta, a = (jnp.stack([jnp.asarray(g[i], dtype) for g in groups]) for i in (2, 3, 4))
    return jnp.sum(w * _log_rising_shift(n, a0, delta, a))


class _CountSummary(NamedTuple):
    """A table of non-negative counts with row labels, as histograms: ``hist[r, n]`` entries of
    row r equal n (n ≤ cap), and the (at most ``max_big``) entries above cap listed with their rows
    (``big``, ``big_row``; unused slots hold count 0)."""

    hist: jax.Array
    big: jax.Array
    big_row: jax.Array


def _summary_sizes(d: LDAData) -> tuple[int, int]:
    """(cap, max_big): every count here is at most the longest document ≤ S, or a word's count;
    at most S·R / (cap + 1) entries of a table summing to N ≤ S·R can exceed cap."""
    s, r = d.words.shape
    cap = min(s, HISTOGRAM_CAP)
    return cap, max(1, (s * r) // (cap + 1))


def _count_summary(values, rows, num_rows: int, cap: int, max_big: int) -> _CountSummary:
    small = values <= cap
    hist = cj.counts((rows, jnp.where(small, values, 0)), (num_rows, cap + 1), small)
    if max_big == 0:  # no entry can exceed cap
        empty = jnp.zeros((0,), values.dtype)
        return _CountSummary(hist, empty, empty.astype(jnp.int32))
    (idx,) = jnp.nonzero(~small, size=max_big, fill_value=0)
    used = jnp.arange(max_big) < jnp.sum(~small)
    return _CountSummary(hist, jnp.where(used, values[idx], 0), jnp.where(used, rows[idx], -1))


def _summary_terms(summary: _CountSummary, row=None):
    """(counts, weights) listing a table's entries (of one ``row``, or all): every count
    0..cap with how many entries have it, then each count above cap once."""
    cap = summary.hist.shape[-1] - 1
    hist = summary.hist.sum(axis=0) if row is None else summary.hist[row]
    in_row = summary.big > 0 if row is None else summary.big_row == row
    return (jnp.concatenate([jnp.arange(cap + 1, dtype=jnp.int32), summary.big.astype(jnp.int32)]),
            jnp.concatenate([hist, in_row.astype(hist.dtype)]))


def _doc_topic_summaries(state, d: LDAData, K: int) -> tuple[_CountSummary, _CountSummary]:
    """Summaries of n_dk (rows: topics) and of the document lengths n_d (one row)."""
    ndk, _, _ = topic_counts(state.z, d, K)
    cap, max_big = _summary_sizes(d)
    if cap >= d.words.shape[0]:  # n_dk ≤ n_d ≤ S: every count fits the histogram
        max_big = 0
    counts = ndk[:-1]
    topics = jnp.broadcast_to(jnp.arange(K, dtype=jnp.int32), counts.shape)
    by_topic = _count_summary(counts.reshape(-1), topics.reshape(-1), K, cap, max_big)
    lengths = _count_summary(d.doc_lengths, jnp.zeros_like(d.doc_lengths), 1, cap, max_big)
    return by_topic, lengths


def _log_prior_shift(u, u0, prior):
    """log of the Gamma(shape, rate) density of e^u times the Jacobian e^u, minus the same at u0:
    shape (u − u0) − rate (e^u − e^u0)."""
    shape, rate = prior
    return shape * (u - u0) - rate * jnp.exp(u0) * jnp.expm1(u - u0)


def sample_log_alpha(key, state: LDALearnedState, d: LDAData, *, K: int, prior=(1.0, 1.0)):
    """log α | z, θ integrated out, by slice sampling (:func:`slice_sample`):
    p(α | z) ∝ Gamma(α; a, b) Π_d Γ(Σα)/Γ(n_d + Σα) Π_k Γ(n_dk + α_k)/Γ(α_k), on u = log α
    (density times the Jacobian e^u).

    ``state.log_alpha`` of shape () is one symmetric α (α_k = α for every k); of shape
    (K,) one α_k per topic, a ~ Gamma(shape, rate) each independently (equivalently
    Σα ~ Gamma(K·shape, rate) and α/Σα ~ Dir(shape, ..., shape), a base measure), updated
    one coordinate after another (each coordinate's conditional given the others).

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2, learn_alpha="sample").init(jax.random.key(0), d)
    >>> sample_log_alpha(jax.random.key(1), s, d, K=2).shape
    ()
    """
    by_topic, lengths = _doc_topic_summaries(state, d, K)
    u0 = state.log_alpha
    if u0.ndim == 0:
        alpha0 = jnp.exp(u0)

        tokens, docs = _summary_terms(by_topic), _summary_terms(lengths, row=0)

        def ratio(u):
            delta, a = alpha0 * jnp.expm1(u - u0), jnp.exp(u)
            return _log_prior_shift(u, u0, prior) + _rising_sum(
                (*tokens, alpha0, delta, a), (docs[0], -docs[1], K * alpha0, K * delta, K * a))

        return slice_sample(key, u0, ratio)

    def one_topic(log_alpha, x):
        k, key_k = x
        alpha = jnp.exp(log_alpha)
        uk, ak = log_alpha[k], alpha[k]
        total = jnp.sum(alpha)
        others = total - ak

        tokens = _summary_terms(by_topic, row=k)

        def ratio(u):
            delta, a = ak * jnp.expm1(u - uk), jnp.exp(u)
            return _log_prior_shift(u, uk, prior) + _rising_sum(
                (*tokens, ak, delta, a), (docs[0], -docs[1], total, delta, others + a))

        return log_alpha.at[k].set(slice_sample(key_k, uk, ratio)), None

    docs = _summary_terms(lengths, row=0)
    log_alpha, _ = jax.lax.scan(one_topic, u0, (jnp.arange(K), jax.random.split(key, K)))
    return log_alpha


def sample_log_eta(key, state: LDALearnedState, d: LDAData, *, K: int, prior=(1.0, 1.0)):
    """log η | z, w, φ integrated out, by slice sampling (:func:`slice_sample`):
    p(η | z, w) ∝ Gamma(η; a, b) Π_k Γ(Vη)/Γ(n_k + Vη) Π_w Γ(n_kw + η)/Γ(η), on u = log η.

    It does not look at φ, so a sweep must draw φ | z, η right after it: together they
    draw (η, φ) from p(η, φ | z, w) as one block.

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2, learn_eta=True).init(jax.random.key(0), d)
    >>> sample_log_eta(jax.random.key(1), s, d, K=2).shape
    ()
    """
    _, nkw, nk = topic_counts(state.z, d, K)
    v = _vocab_size(d)
    cap, max_big = _summary_sizes(d)
    flat = nkw.reshape(-1)
    words = _count_summary(flat, jnp.zeros_like(flat), 1, cap, max_big)
    u0 = state.log_eta
    eta0 = jnp.exp(u0)

    cells = _summary_terms(words)

    def ratio(u):
        delta, e = eta0 * jnp.expm1(u - u0), jnp.exp(u)
        return _log_prior_shift(u, u0, prior) + _rising_sum(
            (*cells, eta0, delta, e), (nk, -jnp.ones(K), v * eta0, v * delta, v * e))

    return slice_sample(key, u0, ratio)


def minka_log_alpha(key, state: LDALearnedState, d: LDAData, *, K: int, iterations: int = MINKA_ITERATIONS):
    """NOT a Gibbs update (a point estimate, for warm-up only): Minka's fixed point for the
    Dirichlet-multinomial maximum likelihood α given z (Minka 2000, "Estimating a Dirichlet
    distribution", eq. 55), ``iterations`` times:
    α_k ← α_k Σ_d [ψ(n_dk + α_k) − ψ(α_k)] / Σ_d [ψ(n_d + Σα) − ψ(Σα)]
    (symmetric, shape (): α ← α Σ_dk [ψ(n_dk + α) − ψ(α)] / (K Σ_d [ψ(n_d + Kα) − ψ(Kα)])),
    kept ≥ :data:`MINKA_MIN_ALPHA`.  tomotopy's α optimisation; ``key`` is unused.

    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> s = partially_collapsed(2, learn_alpha="minka", asymmetric_alpha=True).init(jax.random.key(0), d)
    >>> minka_log_alpha(None, s, d, K=2).shape
    (2,)
    """
    from jax.scipy.special import digamma

    del key
    by_topic, lengths = _doc_topic_summaries(state, d, K)
    symmetric = state.log_alpha.ndim == 0
    ns = jnp.arange(by_topic.hist.shape[-1])
    big_topic = jnp.maximum(by_topic.big_row, 0)
    doc_n, doc_w = _summary_terms(lengths, row=0)

    def iterate(log_alpha, _):
        alpha = jnp.broadcast_to(jnp.exp(log_alpha), (K,))
        total = jnp.sum(alpha)
        den = jnp.sum(doc_w * (digamma(doc_n + total) - digamma(total)))
        a = alpha[:, None]
        num = jnp.sum(by_topic.hist * (digamma(ns + a) - digamma(a)), axis=1)
        a_big = alpha[big_topic]
        big = jnp.where(by_topic.big_row >= 0, digamma(by_topic.big + a_big) - digamma(a_big), 0.0)
        num = num + jax.ops.segment_sum(big, big_topic, num_segments=K)
        new = alpha * num / den
        if symmetric:
            new = jnp.sum(new) / K
        return jnp.log(jnp.maximum(new, MINKA_MIN_ALPHA)).astype(log_alpha.dtype), None

    log_alpha, _ = jax.lax.scan(iterate, state.log_alpha, None, length=iterations)
    return log_alpha


def log_joint_learned(state: LDALearnedState, d: LDAData, *, K: int, priors: LearnedPriors):
    """log p(w, z | α, η) (θ, φ integrated out; α may differ per topic) plus, for each
    sampled concentration, its hyperprior as a density of the log concentration (the
    coordinates the sampler moves): log Gamma(e^u; a, b) + u."""
    ndk, nkw, nk = topic_counts(state.z, d, K)
    v = _vocab_size(d)
    alpha = jnp.broadcast_to(jnp.exp(state.log_alpha), (K,))
    eta = jnp.exp(state.log_eta)
    total = jnp.sum(alpha)
    nd = d.doc_lengths.astype(alpha.dtype)
    doc_part = jnp.sum(gammaln(ndk[:-1] + alpha)) - jnp.sum(gammaln(nd + total))
    doc_part += _num_docs(d) * (gammaln(total) - jnp.sum(gammaln(alpha)))
    topic_part = jnp.sum(gammaln(nkw + eta)) - jnp.sum(gammaln(nk + v * eta))
    topic_part += K * (gammaln(v * eta) - v * gammaln(eta))
    out = doc_part + topic_part

    def log_prior(u, prior):
        shape, rate = prior
        return jnp.sum(shape * math.log(rate) - math.lgamma(shape) + shape * u - rate * jnp.exp(u))

    if priors.alpha == "sample":
        out += log_prior(state.log_alpha, priors.alpha_prior)
    if priors.eta:
        out += log_prior(state.log_eta, priors.eta_prior)
    return out


# ============================================================================ kernels
def _check(K, alpha, eta) -> tuple[int, float, float]:
    return check_int("K", K, 1), check_positive("alpha", alpha), check_positive("eta", eta)


#: z-updates of :func:`partially_collapsed`, all sampling the same exact conditional
Z_UPDATES = ("auto", "dense", "lanes", "pallas")
#: warm-up transitions of the LDA kernels
WARMUPS = ("fast", "exact")
_FAST_WARMUP_NAME = (
    "fast: document-parallel collapsed sweeps (approximate: word-topic counts refreshed after every "
    "step of the lane grid; φ not drawn); sampling sweeps exact"
)


def _pallas():
    """The fused Pallas z-update module, or None where it cannot be imported."""
    try:
        from gibbsjax.models import lda_pallas
    except ImportError:
        return None
    return lda_pallas


def _check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def resolve_z_update(z_update: str = "auto", backend: str | None = None) -> str:
    """The z-update :func:`partially_collapsed` runs for ``z_update`` on ``backend``.

    ``"auto"`` picks the fastest measured option for the backend: on a GPU the
    fused Pallas kernel (:mod:`gibbsjax.models.lda_pallas`) where it is
    available, else ``"dense"``; on a CPU ``"lanes"`` (several times faster
    there than ``"dense"``).  ``backend`` defaults to JAX's default backend.
    Raises ``ValueError`` for an unknown option, or for ``"pallas"`` where the
    Pallas module cannot be imported.

    >>> resolve_z_update("auto", backend="cpu")
    'lanes'
    >>> resolve_z_update("dense")
    'dense'
    """
    _check_choice("z_update", z_update, Z_UPDATES)
    backend = backend or jax.default_backend()
    if z_update == "auto":
        if backend == "cpu":
            return "lanes"
        pallas = _pallas() if backend == "gpu" else None
        return "pallas" if pallas is not None and pallas.available() else "dense"
    if z_update == "pallas" and _pallas() is None:
        raise ValueError("z_update='pallas' needs gibbsjax.models.lda_pallas, which cannot be imported here")
    return z_update


def _sample_z_pallas(key, state: LDAState, d: LDAData, *, K: int, alpha: float):
    return _pallas().sample_z_pallas(key, state, d, K=K, alpha=alpha)


_SAMPLE_Z = {"dense": sample_z_partially_collapsed, "lanes": sample_z_lanes, "pallas": _sample_z_pallas}


def _words_given_phi(key, state: LDAState, d: LDAData):
    """w_i ~ Cat(φ_{z_i}): the likelihood given (z, φ)."""
    return gr.categorical(key, state.log_phi[state.z])


_MINKA_WARMUP_NAME = (
    "Minka's fixed-point estimate of alpha after every warm-up sweep (a point estimate, as tomotopy's "
    "optimisation; alpha is then fixed for the sampling sweeps)"
)


def _with_concentrations(sample, *, alpha: bool, eta: bool, **static):
    """``sample`` as an update of a learned state: α and/or η read from the state (exp of its logs)."""
    def update(key, state, d):
        kw = dict(static)
        if alpha:
            kw["alpha"] = jnp.exp(state.log_alpha)
        if eta:
            kw["eta"] = jnp.exp(state.log_eta)
        return sample(key, state, d, **kw)

    update.__name__ = getattr(sample, "__name__", "update")
    return update


def _learned_kernel(K: int, alpha: float, eta: float, sampler: str, z_update: str, warmup: str,
                    priors: LearnedPriors) -> Kernel:
    """The kernel of :func:`_kernel` with α and/or η in the state (:class:`LDALearnedState`).

    One sweep, for ``partially_collapsed`` and ``uncollapsed``:
    log η | z (φ integrated out) → log φ | z, η → z | φ, α → log α | z (θ integrated out);
    for ``collapsed``: z | α, η → log α | z → log η | z → log φ | z, η.
    Every update samples its full conditional given the state it sees, or (the slice
    updates) is a transition that leaves that conditional invariant, so each leaves
    p(z, φ, α, η | w) invariant and so does the sweep: α ⟂ (φ, η, w) | z with θ never in
    the state, so p(α | z) is α's full conditional; η | z with φ integrated out followed
    at once by φ | z, η is one blocked draw of (η, φ) from p(η, φ | z, w), the old φ
    unused; z's conditionals are the fixed-prior ones at the current α, η.
    """
    sample_alpha = priors.alpha == "sample"
    phi = ("log_phi", _with_concentrations(sample_log_phi, alpha=False, eta=True, K=K))
    extra_alpha = [("log_alpha", functools.partial(sample_log_alpha, K=K, prior=priors.alpha_prior))] \
        if sample_alpha else []
    extra_eta = [("log_eta", functools.partial(sample_log_eta, K=K, prior=priors.eta_prior))] if priors.eta else []
    if sampler == "collapsed":
        z = ("z", _with_concentrations(sample_z_collapsed, alpha=True, eta=True, K=K))
        step = sweep(z, *extra_alpha, *extra_eta, phi)
    else:
        sample_z = {"partially_collapsed": _SAMPLE_Z[z_update], "uncollapsed": sample_z_uncollapsed}[sampler]
        z = ("z", _with_concentrations(sample_z, alpha=True, eta=False, K=K))
        step = sweep(*extra_eta, phi, z, *extra_alpha)
    # Warm-up: the fast z-sweeps (approximate) or the sampling sweep, the learned
    # concentrations updated as in sampling, and Minka's fixed point for α if asked.
    minka = [("log_alpha", functools.partial(minka_log_alpha, K=K))] if priors.alpha == "minka" else []
    warmup_step, names = None, []
    if warmup == "fast":
        fast = ("z", _with_concentrations(sample_z_collapsed_parallel, alpha=True, eta=True, K=K))
        warmup_step = sweep(fast, *extra_alpha, *extra_eta, *minka)
        names.append(_FAST_WARMUP_NAME)
    elif minka:
        warmup_step = sweep(step, *minka)
    if minka:
        names.append(_MINKA_WARMUP_NAME)
    alpha_shape = (K,) if priors.asymmetric else ()

    def init(key, d: LDAData):
        k1, k2 = jax.random.split(key)
        z = initial_topics(k1, d, K)
        log_alpha = jnp.full(alpha_shape, math.log(alpha), jnp.float32)
        log_eta = jnp.asarray(math.log(eta), jnp.float32)
        log_phi = sample_log_phi(k2, LDAState(z, None), d, K=K, eta=eta)
        return LDALearnedState(z, log_phi, log_alpha.astype(log_phi.dtype), log_eta.astype(log_phi.dtype))

    def record(state: LDALearnedState, d: LDAData):
        _, _, nk = topic_counts(state.z, d, K)
        out = {"topic_share": nk.astype(jnp.float32) / jnp.sum(d.doc_lengths)}
        if sample_alpha:
            out["alpha"] = jnp.exp(state.log_alpha)
        if priors.eta:
            out["eta"] = jnp.exp(state.log_eta)
        return out

    def accumulate(state: LDALearnedState, d: LDAData):
        ndk, nkw, nk = topic_counts(state.z, d, K)
        v = _vocab_size(d)
        a, e = jnp.exp(state.log_alpha), jnp.exp(state.log_eta)
        out = {"topic_word": (nkw + e) / (nk[:, None] + v * e),
               "doc_topic": (ndk[:-1] + a) / (d.doc_lengths[:, None] + jnp.sum(jnp.broadcast_to(a, (K,))))}
        if priors.alpha != "fixed":
            out["alpha"] = a
        if priors.eta:
            out["eta"] = e
        return out

    def sample_prior(key, d: LDAData):
        k_hyper, k1, k3 = jax.random.split(key, 3)
        dtype = jnp.zeros(()).dtype
        # α (or α_k) ~ Gamma(shape, rate) and η ~ Gamma(shape, rate) in one log-gamma draw;
        # a fixed concentration takes its given value
        num_alpha = int(np.prod(alpha_shape))
        shapes = np.array([priors.alpha_prior[0]] * num_alpha + [priors.eta_prior[0]])
        rates = np.array([priors.alpha_prior[1]] * num_alpha + [priors.eta_prior[1]])
        fixed = np.array([not sample_alpha] * num_alpha + [not priors.eta])
        given = np.array([math.log(alpha)] * num_alpha + [math.log(eta)])
        draws = gr.log_gamma(k_hyper, jnp.asarray(shapes, dtype), dtype=dtype) - jnp.asarray(np.log(rates), dtype)
        logs = jnp.where(jnp.asarray(fixed), jnp.asarray(given, dtype), draws)
        log_alpha, log_eta = logs[:num_alpha].reshape(alpha_shape), logs[num_alpha]
        # θ_d ~ Dir(α) and φ_k ~ Dir(η) from one log-gamma draw (normalised row by row)
        rows, v = _num_docs(d) + 1, _vocab_size(d)
        a = jnp.broadcast_to(jnp.exp(log_alpha), (rows, K)).reshape(-1)
        lg = gr.log_gamma(k1, jnp.concatenate([a, jnp.full((K * v,), jnp.exp(log_eta))]), dtype=dtype)
        log_theta, log_phi = lg[:rows * K].reshape(rows, K), lg[rows * K:].reshape(K, v)
        log_theta = log_theta - jax.nn.logsumexp(log_theta, axis=-1, keepdims=True)
        log_phi = log_phi - jax.nn.logsumexp(log_phi, axis=-1, keepdims=True)
        z = gr.categorical(k3, log_theta[d.docs])
        return LDALearnedState(jnp.where(d.mask, z, 0).astype(jnp.int32), log_phi, log_alpha, log_eta)

    def simulate_data(key, state: LDALearnedState, d: LDAData):
        words = jnp.where(d.mask, _words_given_phi(key, state, d), 0).astype(jnp.int32)
        return d._replace(words=words, word_counts=cj.counts(words, (_vocab_size(d),), d.mask))

    dims = {"topic_share": ("topic",), "topic_word": ("topic", "word"), "doc_topic": ("document", "topic")}
    if priors.alpha != "fixed":
        dims["alpha"] = ("topic",) if priors.asymmetric else ()
    if priors.eta:
        dims["eta"] = ()
    return Kernel(
        init=init,
        step=step,
        record=record,
        dims=dims,
        log_joint=functools.partial(log_joint_learned, K=K, priors=priors),
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name=f"lda.{sampler}",
        accumulate=accumulate,
        warmup_step=warmup_step,
        warmup_name="; ".join(names),
        label_dims=("topic",),
        shard=functools.partial(_cannot_shard, f"lda.{sampler} with learned priors"),
    )


def _cannot_shard(name: str, *args, **kwargs):
    """``Kernel.shard`` of the LDA kernels that cannot split their documents over devices."""
    raise ValueError(
        f"{name} cannot split its documents over devices: only lda.partially_collapsed with fixed alpha and "
        "eta, recording no phi or theta per draw, can (the collapsed sampler visits tokens in one sequence; "
        "the uncollapsed one draws theta by document row; learned priors need count histograms of every "
        "device); spread chains instead (num_chains a multiple of devices)")


@functools.lru_cache(maxsize=64)
def _kernel(K: int, alpha: float, eta: float, sampler: str, z_update: str = "dense",
            warmup: str = "exact", priors: LearnedPriors | None = None) -> Kernel:
    if priors is not None:
        return _learned_kernel(K, alpha, eta, sampler, z_update, warmup, priors)
    phi = ("log_phi", functools.partial(sample_log_phi, K=K, eta=eta))
    if sampler == "collapsed":
        # z | w with θ and φ integrated out; then φ | z, w (a valid extra block:
        # φ is not in z's conditional), which keeps log φ in the state for
        # simulation and makes the state a joint draw of (z, φ).
        step = sweep(("z", functools.partial(sample_z_collapsed, K=K, alpha=alpha, eta=eta)), phi)
    else:
        sample_z = {"partially_collapsed": _SAMPLE_Z[z_update],
                    "uncollapsed": sample_z_uncollapsed}[sampler]
        step = sweep(phi, ("z", functools.partial(sample_z, K=K, alpha=alpha)))
    # Warm-up only: z by approximate collapsed sweeps; log φ is left as it is,
    # since every sampling sweep draws φ | z before anything uses it.
    warmup_step = None
    if warmup == "fast":
        warmup_step = sweep(("z", functools.partial(sample_z_collapsed_parallel, K=K, alpha=alpha, eta=eta)))

    def init(key, d: LDAData):
        k1, k2 = jax.random.split(key)
        z = initial_topics(k1, d, K)
        return LDAState(z, sample_log_phi(k2, LDAState(z, None), d, K=K, eta=eta))

    def record(state: LDAState, d: LDAData):
        _, _, nk = topic_counts(state.z, d, K)
        return {"topic_share": nk.astype(jnp.float32) / jnp.sum(d.doc_lengths)}

    def accumulate(state: LDAState, d: LDAData):
        ndk, nkw, nk = topic_counts(state.z, d, K)
        v = _vocab_size(d)
        topic_word = (nkw + eta) / (nk[:, None] + v * eta)
        doc_topic = (ndk[:-1] + alpha) / (d.doc_lengths[:, None] + K * alpha)
        return {"topic_word": topic_word, "doc_topic": doc_topic}

    def sample_prior(key, d: LDAData):
        k1, k2, k3 = jax.random.split(key, 3)
        log_theta = gr.log_dirichlet(k1, jnp.full((_num_docs(d) + 1, K), alpha))
        log_phi = gr.log_dirichlet(k2, jnp.full((K, _vocab_size(d)), eta))
        z = gr.categorical(k3, log_theta[d.docs])
        return LDAState(jnp.where(d.mask, z, 0).astype(jnp.int32), log_phi)

    def simulate_data(key, state: LDAState, d: LDAData):
        words = jnp.where(d.mask, _words_given_phi(key, state, d), 0).astype(jnp.int32)
        return d._replace(words=words, word_counts=cj.counts(words, (_vocab_size(d),), d.mask))

    if sampler == "partially_collapsed":
        from gibbsjax.models import lda_shard

        shard = functools.partial(lda_shard.plan, K=K, alpha=alpha, eta=eta, z_update=z_update, warmup=warmup)
    else:
        shard = functools.partial(_cannot_shard, f"lda.{sampler}")
    return Kernel(
        init=init,
        step=step,
        record=record,
        dims={"topic_share": ("topic",), "topic_word": ("topic", "word"), "doc_topic": ("document", "topic")},
        shard=shard,
        log_joint=functools.partial(log_joint_collapsed, K=K, alpha=alpha, eta=eta),
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name=f"lda.{sampler}",
        accumulate=accumulate,
        warmup_step=warmup_step,
        warmup_name=_FAST_WARMUP_NAME if warmup_step is not None else "",
        label_dims=("topic",),
    )


# ============================================================================ the posterior, per draw
def _check_recorded(record_phi, record_theta) -> tuple:
    """``record_phi`` / ``record_theta`` of the factories as hashable values, or ``ValueError``."""
    out = []
    for name, value, what in (("record_phi", record_phi, "word ids"), ("record_theta", record_theta,
                                                                     "document indices")):
        if value is None or value == "all":
            out.append(value)
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            out.append(check_int(name, value, 1))
        elif isinstance(value, (list, tuple, np.ndarray)) and not isinstance(value, str):
            ids = np.asarray(value)
            if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer) or np.any(ids < 0):
                raise ValueError(f"{name} must be a non-empty sequence of non-negative {what}, got {value!r}")
            if np.unique(ids).size != ids.size:
                raise ValueError(f"{name} has repeated {what}: {value!r}")
            out.append(tuple(int(i) for i in ids))
        else:
            raise ValueError(f"{name} must be None, 'all', a positive int or a sequence of {what}, got {value!r}")
    return tuple(out)


def recorded_indices(spec, counts, name: str = "record_phi") -> np.ndarray | None:
    """The word ids (``spec`` of ``record_phi``, ``counts`` the corpus's word counts)
    or document indices (``record_theta``, ``counts`` the document lengths) whose
    φ or θ a kernel records per draw, in increasing order; None when nothing is.
    An int M picks the M most frequent words (ties to the lower id) for φ, and
    the first M documents for θ.  ``ValueError`` for an index out of range.

    >>> recorded_indices(2, np.array([5, 1, 9, 5]))
    array([0, 2])
    >>> recorded_indices(2, np.array([5, 1, 9, 5]), "record_theta")
    array([0, 1])
    """
    if spec is None:
        return None
    counts = np.asarray(counts)
    n = counts.shape[0]
    if spec == "all":
        return np.arange(n)
    if isinstance(spec, int):
        if spec > n:
            what = "words" if name == "record_phi" else "documents"
            raise ValueError(f"{name}={spec}, but the corpus has only {n} {what}")
        if name == "record_phi":
            return np.sort(np.argsort(-counts.astype(np.int64), kind="stable")[:spec])
        return np.arange(spec)
    ids = np.asarray(spec, np.int64)
    if ids.max() >= n:
        what = "word id" if name == "record_phi" else "document index"
        raise ValueError(f"{name} has {what} {int(ids.max())}, but the corpus has only {n}")
    return np.sort(ids)


def theta_draws(concentration, seed=0) -> np.ndarray:
    """θ_d ~ Dir(``concentration``), one draw per entry of the leading axes (float64,
    normalised gamma draws; NumPy, on the host; ``seed`` anything
    ``numpy.random.default_rng`` takes): what :func:`postprocess` makes of a
    recorded ``theta_concentration`` (n_d· + α at each draw).

    >>> theta_draws(np.array([[[1.0, 2.0, 3.0]]]), seed=1).sum(-1).round(6).tolist()
    [[1.0]]
    """
    conc = np.asarray(concentration, np.float64)
    if conc.size and (not np.all(np.isfinite(conc)) or np.any(conc <= 0)):
        raise ValueError("theta concentrations must be finite and > 0")
    g = np.random.default_rng(seed).standard_gamma(conc)
    total = g.sum(axis=-1, keepdims=True)
    # a tiny concentration can underflow every gamma draw of a row to 0: the largest log-gamma wins
    with np.errstate(invalid="ignore", divide="ignore"):
        out = g / total
    bad = ~np.isfinite(out).all(axis=-1)
    if np.any(bad):
        out[bad] = np.eye(conc.shape[-1])[np.argmax(conc[bad], axis=-1)]
    return out


@functools.lru_cache(maxsize=64)
def _kernel_recording(K, alpha, eta, sampler, z_update, warmup, priors, record_phi, record_theta) -> Kernel:
    """:func:`_kernel`, recording φ of some words and the θ conditionals of some documents per draw."""
    kernel = _kernel(K, alpha, eta, sampler, z_update, warmup, priors)
    if record_phi is None and record_theta is None:
        return kernel
    base_record = kernel.record

    def alpha_of(state):
        return jnp.exp(state.log_alpha) if isinstance(state, LDALearnedState) else alpha

    def record(state, d: LDAData):
        out = dict(base_record(state, d))
        if record_phi is not None:
            out["phi"] = jnp.exp(state.log_phi[:, _recorded_ids(record_phi, d.word_counts, "record_phi")])
        if record_theta is not None:
            ndk, _, _ = topic_counts(state.z, d, K)
            docs = _recorded_ids(record_theta, d.doc_lengths, "record_theta")
            out["theta_concentration"] = ndk[docs].astype(jnp.float32) + alpha_of(state)
        return out

    def coords(d: LDAData):
        out = {}
        if record_phi is not None:
            out["phi_word"] = recorded_indices(record_phi, np.asarray(d.word_counts))
        if record_theta is not None:
            out["theta_document"] = recorded_indices(record_theta, np.asarray(d.doc_lengths), "record_theta")
        return out

    dims = dict(kernel.dims)
    dims.update({"phi": ("topic", "phi_word"), "theta_concentration": ("theta_document", "topic")})
    cannot = functools.partial(_cannot_shard, f"lda.{sampler} recording phi or theta per draw (record_phi, "
                                              "record_theta)")
    return kernel._replace(record=record, dims=dims, coords=coords, shard=cannot)


def _recorded_ids(spec, counts, name: str):
    """:func:`recorded_indices` inside a traced function: the same ids from (possibly
    traced) ``counts``, whose length is static ("all", an int M: top M by a stable sort)."""
    n = counts.shape[0]
    if spec == "all":
        return jnp.arange(n)
    if isinstance(spec, int):
        recorded_indices(spec, np.zeros(n), name)  # the range check
        if name == "record_phi":
            return jnp.sort(jnp.argsort(-counts.astype(jnp.int32), stable=True)[:spec])
        return jnp.arange(spec)
    return jnp.asarray(recorded_indices(spec, np.zeros(n), name))


def partially_collapsed(K: int, alpha: float = 0.1, eta: float = 0.01, *, z_update: str = "auto",
                        warmup: str = "fast", learn_alpha: str = "fixed", asymmetric_alpha: bool = False,
                        learn_eta: bool = False, alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0),
                        record_phi=None, record_theta=None) -> Kernel:
    """The default LDA sampler: φ drawn, θ integrated out, documents in parallel.

    Exact (Magnusson et al. 2018): given φ, the documents' topic assignments are
    independent, so updating all documents at once while each document's
    tokens go in sequence samples every token from its full conditional
    p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α).  One sweep is
    ``sweep(("log_phi", sample_log_phi), ("z", <z-update>))``.

    ``z_update`` chooses how that conditional is computed (the same
    conditional and visiting order in every case): ``"dense"``
    (:func:`sample_z_partially_collapsed`), ``"lanes"`` (:func:`sample_z_lanes`,
    the fast one on a CPU), ``"pallas"`` (the fused GPU kernel of
    :mod:`gibbsjax.models.lda_pallas`, interpret mode elsewhere) or
    ``"auto"`` (the fastest measured one for JAX's default backend, see
    :func:`resolve_z_update`).  ``warmup``: ``"fast"`` runs approximate
    document-parallel collapsed sweeps (:func:`sample_z_collapsed_parallel`)
    during warm-up, which reach the typical set in fewer sweeps and cost less
    than exact ones; ``"exact"`` warms up with the sampling sweep itself.
    Sampling sweeps are always exact; ``attrs["warmup"]`` of a result says
    which warm-up ran.

    Learned priors (every sampler takes these; the state is then an
    :class:`LDALearnedState`, and ``alpha``, ``eta`` are the starting values):

    * ``learn_alpha="sample"``: α is sampled in every sweep from p(α | z), θ
      integrated out (:func:`sample_log_alpha`), and recorded per draw as ``alpha``
      in the posterior (R-hat in the summary); ``"minka"``: Minka's fixed-point
      estimate of α after every warm-up sweep (:func:`minka_log_alpha`, tomotopy's
      behaviour; a point estimate, fixed while sampling); ``"fixed"`` (default).
    * ``asymmetric_alpha=True``: one α_k per topic (dim ``topic``, aligned with the
      topics) instead of one symmetric α.
    * ``learn_eta=True``: the symmetric η is sampled from p(η | z, w), φ integrated
      out (:func:`sample_log_eta`), just before φ | z, η, and recorded as ``eta``.
    * ``alpha_prior``, ``eta_prior``: (shape, rate) of the gamma hyperprior of α (of
      each α_k) and of η; default (1, 1), an exponential with mean 1.

    The full posterior, per draw (default: neither; thinned with the run's ``thin``):

    * ``record_phi``: φ for some words, recorded as ``phi`` (dims ``topic``,
      ``phi_word``): ``"all"`` (K × V per draw: only when that fits), an int M
      (the M most frequent words of the corpus, ties to the lower word id; a
      topic's own top words are not known before sampling) or a sequence of
      word ids.  Credible intervals of φ_kw come from these draws.
    * ``record_theta``: the documents whose θ_d is kept per draw: ``"all"``, an
      int n (the first n documents) or a sequence of document indices.  θ is
      integrated out of the samplers, so each draw records the parameters of
      its exact conditional, ``theta_concentration`` = n_d· + α (dims
      ``theta_document``, ``topic``); :func:`theta_draws` (and
      :func:`postprocess`, which ``gibbsjax run`` and :class:`gibbsjax.LDA`
      apply) turn them into draws θ_d ~ Dir(n_d· + α), one per recorded draw:
      jointly with z, a draw from the posterior of θ_d.

    The ``phi_word`` and ``theta_document`` coordinates hold the word ids and
    document indices (post-processing names them).

    Learned concentrations also appear per chain in ``posterior_mean`` (``alpha``,
    ``eta``); ``lp`` then adds their log hyperprior densities (on the log scale).
    With a learned α, ``z_update="auto"`` never picks ``"pallas"`` (its α is a
    compile-time constant) and ``"pallas"`` is refused.

    >>> import gibbsjax
    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b", "c"], ["b", "a", "a"]])
    >>> idata = gibbsjax.sample(partially_collapsed(2), data(c), seed=0, num_warmup=20,
    ...                         num_draws=20, progress=False)
    >>> idata.posterior_mean["topic_word"].shape
    (4, 2, 3)
    """
    priors = learned_priors(learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior)
    learned_alpha = priors is not None and priors.alpha != "fixed"
    if learned_alpha and z_update == "pallas":
        raise ValueError("z_update='pallas' needs a fixed alpha (a compile-time constant of the fused kernel); "
                         "with learn_alpha use z_update='auto', 'dense' or 'lanes'")
    z_update = resolve_z_update(z_update)
    if learned_alpha and z_update == "pallas":
        z_update = "dense"
    warmup = _check_choice("warmup", warmup, WARMUPS)
    return _kernel_recording(*_check(K, alpha, eta), "partially_collapsed", z_update, warmup, priors,
                             *_check_recorded(record_phi, record_theta))


def uncollapsed(K: int, alpha: float = 0.1, eta: float = 0.01, *, warmup: str = "fast",
                learn_alpha: str = "fixed", asymmetric_alpha: bool = False, learn_eta: bool = False,
                alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0), record_phi=None, record_theta=None) -> Kernel:
    """θ and φ drawn, then every token at once (exact: z are independent given θ, φ).

    ``warmup``, the learned priors (``learn_alpha``, ``asymmetric_alpha``,
    ``learn_eta``, ``alpha_prior``, ``eta_prior``) and the per-draw records
    (``record_phi``, ``record_theta``) as for :func:`partially_collapsed`.

    >>> kernel = uncollapsed(10, alpha=0.5)
    """
    warmup = _check_choice("warmup", warmup, WARMUPS)
    priors = learned_priors(learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior)
    return _kernel_recording(*_check(K, alpha, eta), "uncollapsed", "dense", warmup, priors,
                             *_check_recorded(record_phi, record_theta))


def collapsed(K: int, alpha: float = 0.1, eta: float = 0.01, *, warmup: str = "fast",
              learn_alpha: str = "fixed", asymmetric_alpha: bool = False, learn_eta: bool = False,
              alpha_prior=(1.0, 1.0), eta_prior=(1.0, 1.0), record_phi=None, record_theta=None) -> Kernel:
    """The source document's collapsed sampler, one token at a time (the reference; slow on big corpora).

    ``warmup``, the learned priors (``learn_alpha``, ``asymmetric_alpha``,
    ``learn_eta``, ``alpha_prior``, ``eta_prior``) and the per-draw records
    (``record_phi``, ``record_theta``) as for :func:`partially_collapsed`.

    >>> kernel = collapsed(10, learn_alpha="sample", learn_eta=True)
    """
    warmup = _check_choice("warmup", warmup, WARMUPS)
    priors = learned_priors(learn_alpha, asymmetric_alpha, learn_eta, alpha_prior, eta_prior)
    return _kernel_recording(*_check(K, alpha, eta), "collapsed", "dense", warmup, priors,
                             *_check_recorded(record_phi, record_theta))


SAMPLERS = {
    "partially_collapsed": partially_collapsed,
    "collapsed": collapsed,
    "uncollapsed": uncollapsed,
}


# ============================================================================ new documents
def _check_alpha(alpha, k: int):
    """One positive α (a float) or K of them (a float32 array), else ``ValueError``."""
    from gibbsjax._checks import check_concentration

    value = check_concentration("alpha", alpha, ((), (k,)))
    return value if isinstance(value, float) else jnp.asarray(value, jnp.float32)



@functools.partial(jax.jit, static_argnames=("num_sweeps", "num_burn", "k"))
def _infer(key, log_phi, d: LDAData, *, k: int, alpha: float, num_sweeps: int, num_burn: int):
    ndk0 = jnp.zeros((_num_docs(d) + 1, k), jnp.float32)
    key, k_init = jax.random.split(key)
    z0 = initial_topics(k_init, d, k)

    def one_sweep(carry, t):
        z, acc = carry
        z = sample_z_partially_collapsed(jax.random.fold_in(key, t), LDAState(z, log_phi), d, K=k, alpha=alpha)
        ndk, _, _ = topic_counts(z, d, k)
        acc = acc + jnp.where(t >= num_burn, ndk.astype(jnp.float32), 0.0)
        return (z, acc), None

    (z, acc), _ = jax.lax.scan(one_sweep, (z0, ndk0), jnp.arange(num_sweeps))
    kept = num_sweeps - num_burn
    total = k * alpha if jnp.ndim(alpha) == 0 else jnp.sum(alpha)  # one α, or one α_k per topic
    theta = (acc[:-1] / kept + alpha) / (d.doc_lengths[:, None] + total)
    return theta


def infer_doc_topics(topic_word, corpus: Corpus, *, alpha: float = 0.1, num_sweeps: int = 100,
                     num_burn: int = 50, seed: int = 0, num_lanes: int | None = None) -> np.ndarray:
    """Topic proportions θ (D × K) of new documents with the topics φ held fixed.

    Runs the partially collapsed z-update (exact given φ) ``num_sweeps`` times
    and averages E[θ_d | z] over the sweeps after ``num_burn``.  ``topic_word``
    is a K × V matrix of word probabilities (e.g. a fitted model's
    ``topic_word_``); the corpus must use the same vocabulary size V.  ``alpha``
    is one symmetric concentration or K of them (a learned asymmetric α).

    >>> import numpy as np
    >>> from gibbsjax.corpus import Corpus
    >>> phi = np.array([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]])
    >>> theta = infer_doc_topics(phi, Corpus.from_token_lists([["a", "a", "c"]], vocab=["a", "b", "c"]))
    >>> theta.shape
    (1, 2)
    """
    phi = np.asarray(topic_word, dtype=np.float64)
    if phi.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {phi.shape}")
    if not np.all(np.isfinite(phi)) or np.any(phi < 0):
        raise ValueError("topic_word must hold finite non-negative probabilities")
    k, v = phi.shape
    if corpus.vocab_size != v:
        raise ValueError(
            f"corpus has a vocabulary of {corpus.vocab_size} words but topic_word has {v} columns"
        )
    alpha = _check_alpha(alpha, k)
    if not (isinstance(num_sweeps, int) and isinstance(num_burn, int) and 0 <= num_burn < num_sweeps):
        raise ValueError(f"need integers 0 <= num_burn < num_sweeps, got {num_burn}, {num_sweeps}")
    d = data(corpus, num_lanes=num_lanes)
    log_phi = jnp.log(jnp.asarray(phi, jnp.float32) + 1e-30)
    theta = _infer(jax.random.key(seed), log_phi, d, k=k, alpha=alpha, num_sweeps=num_sweeps, num_burn=num_burn)
    return np.asarray(theta)


# ============================================================================ evaluation
def heldout_perplexity(topic_word, X_heldout, *, alpha: float = 0.1, fraction: float = 0.5,
                       num_sweeps: int = 100, num_burn: int = 50, seed: int = 0,
                       shuffle_seed: int | None = 0) -> float:
    """Held-out perplexity by document completion (Wallach, Murray, Salakhutdinov & Mimno, ICML 2009).

    For every held-out document, θ_d is estimated from its first ``fraction`` of
    tokens with the topics φ (``topic_word``, K × V) held fixed (the exact
    partially collapsed z-sampler, :func:`infer_doc_topics`), and the remaining
    tokens are scored:
    perplexity = exp(−Σ_d Σ_{i ∈ second part} log Σ_k θ_dk φ_{k,w_i} / #scored tokens).
    Lower is better; a model that knows nothing (uniform over V words) scores V.
    ``alpha``: the θ prior of the completion, one α or K of them.
    Tokens are shuffled within each document first (``shuffle_seed``; ``None``
    keeps their order), since documents read from a count matrix are sorted by
    word id.  Documents with fewer than two tokens are skipped.

    >>> import numpy as np
    >>> phi = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    >>> X = np.array([[6, 2, 0], [0, 2, 6]])
    >>> round(heldout_perplexity(phi, X, num_sweeps=40, num_burn=10), 1) < 3.0
    True
    """
    from gibbsjax.evaluate import as_corpus

    phi = np.asarray(topic_word, dtype=np.float64)
    if phi.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {phi.shape}")
    corpus = as_corpus(X_heldout, "X_heldout", phi.shape[1])
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    keep = corpus.doc_lengths >= 2
    if not np.any(keep):
        raise ValueError("X_heldout has no document with at least two tokens")
    corpus = corpus.subset(keep)
    observed, scored = corpus.split_tokens(fraction, seed=shuffle_seed)
    ok = (observed.doc_lengths > 0) & (scored.doc_lengths > 0)
    observed, scored = observed.subset(ok), scored.subset(ok)
    theta = infer_doc_topics(phi, observed, alpha=alpha, num_sweeps=num_sweeps, num_burn=num_burn, seed=seed)
    phi = phi / phi.sum(axis=1, keepdims=True)
    # p(w_i | θ_d, φ) for every scored token, without a loop over documents
    probs = np.einsum("nk,kn->n", theta[scored.doc_ids], phi[:, scored.tokens])
    return float(np.exp(-np.mean(np.log(np.maximum(probs, 1e-300)))))


# ============================================================================ spec: config data, postprocess, report
def _config_data(section, base_dir):
    """``[data]`` for LDA: a corpus (``corpus = "stdlib_docs"`` | ``"abc"``, or a file), with
    ``heldout`` (a fraction of documents kept out for perplexity), ``split_seed`` and ``num_lanes``.
    Run by several processes (``jax.distributed``, ``gibbsjax run --distributed``) on an
    ``ldac`` / ``uci`` file, each process reads only its part
    (:func:`gibbsjax.models.lda_shard.config_data`)."""
    from gibbsjax.sources import is_number, read_corpus
    from gibbsjax.spec import ConfigError, DataWithExtras

    if jax.process_count() > 1 and section.get("format") in ("ldac", "uci") and "file" in section:
        # several processes (jax.distributed): each reads and packs only its part of the file
        from gibbsjax.models import lda_shard

        return lda_shard.config_data(section, base_dir)
    corpus = read_corpus(section, base_dir, ("heldout", "split_seed", "num_lanes"))
    heldout = section.get("heldout", 0.0)
    if not is_number(heldout) or not 0.0 <= float(heldout) < 1.0:
        raise ConfigError(f"[data] heldout must be a fraction in [0, 1), got {heldout!r}")
    seed = section.get("split_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"[data] split_seed must be a non-negative integer, got {seed!r}")
    test = None
    if float(heldout) > 0:
        corpus, test = corpus.split(float(heldout), seed=seed)
    return DataWithExtras(data(corpus, num_lanes=section.get("num_lanes")), {"corpus": corpus, "heldout": test})


def postprocess(idata, kernel, d, extras):
    """Name words and documents, align topics across chains, measure how well the chains
    agree, and store the topics of one mode with their top words, coherence and (with
    ``extras["heldout"]``) held-out perplexity in a ``topics`` group.

    Topics are aligned (:func:`gibbsjax.labels.align_chains`, Hellinger matching of
    the per-chain ``topic_word``), then :func:`gibbsjax.reports.add_agreement`
    stores the ``agreement`` group: Hellinger distances between the chains' topics,
    which chains reproduce each topic of the reference chain (the chain with the
    highest mean ``lp`` over the sampling phase) and R-hat of each aligned topic's
    share of tokens.  The estimates in ``topics`` never average across modes: they
    come from ``extras["chains"]`` (default ``"best"``, the reference chain alone;
    ``"agreeing"``, the mean of the chains that reproduce every topic of the
    reference chain; :data:`gibbsjax.labels.ESTIMATE_RULES`), recorded in its
    attributes ``estimate_chains`` (JSON) and ``estimate_rule``.  Per-chain
    estimates stay in ``posterior_mean``.  ``extras``: ``corpus`` (the training
    corpus), ``heldout`` (a Corpus or None), ``hyperparameters`` (``alpha`` is
    used) and ``chains``.  Shared by ``gibbsjax run`` and :class:`gibbsjax.LDA`.
    With learned priors the posterior means of α and η from the estimate chains
    are stored as ``learned_alpha``/``learned_eta`` (JSON) and that α is used
    for held-out perplexity.
    """
    import json

    import xarray as xr

    from gibbsjax import evaluate
    from gibbsjax.labels import ESTIMATE_RULES, align_chains, reference_chain
    from gibbsjax.reports import add_agreement
    from gibbsjax.spec import replace_group

    corpus = extras.get("corpus")
    alpha = float(extras["hyperparameters"]["alpha"])
    which = extras.get("chains", "best")
    if which not in ESTIMATE_RULES:
        raise ValueError(f"chains must be one of {tuple(ESTIMATE_RULES)}, got {which!r}")
    if corpus is not None:
        idata.posterior_mean = idata.posterior_mean.assign_coords(
            word=list(corpus.vocab), document=list(corpus.doc_names)
        )
    idata = _recorded_draws(idata, corpus)
    num_topics = idata.posterior_mean.sizes["topic"]
    perms = np.arange(num_topics)[None]
    if idata.posterior.sizes["chain"] > 1:
        # match every chain to the reference chain's topics first (lp is label-invariant)
        ref = reference_chain(idata.sample_stats["lp"].values) if "lp" in idata.sample_stats else 0
        idata, perms = align_chains(idata, "topic_word", "topic", distance="hellinger", reference_chain=ref)
    idata, agreement = add_agreement(idata, idata.posterior_mean["topic_word"], "topic",
                                     rhat_vars=("topic_share",))
    chains = agreement.estimate_chains(which)
    phi = idata.posterior_mean["topic_word"].isel(chain=chains).mean("chain").values
    attrs: dict = {"estimate_chains": json.dumps(chains), "estimate_rule": ESTIMATE_RULES[which]}
    # learned priors (learn_alpha / learn_eta): their posterior means from the same chains
    for name in ("alpha", "eta"):
        if name in idata.posterior_mean:
            value = idata.posterior_mean[name].isel(chain=chains).mean("chain").values
            attrs[f"learned_{name}"] = json.dumps(np.round(np.asarray(value, np.float64), 6).tolist())
            if name == "alpha":
                alpha = value
    if corpus is not None:
        attrs["top_words"] = json.dumps(evaluate.top_words(phi, corpus.vocab, 10))
        n = min(10, phi.shape[1])
        if n >= 2:
            for kind in ("umass", "npmi"):
                values = evaluate.coherence(phi, corpus, kind=kind, n=n)
                attrs[kind] = json.dumps([round(float(x), 3) for x in values])
    test = extras.get("heldout")
    if test is not None and test.num_docs:
        attrs["heldout_perplexity"] = heldout_perplexity(phi, test, alpha=alpha)
        attrs["heldout_docs"] = int(test.num_docs)
    topics = xr.Dataset({"topic_word": (("topic", "word"), phi), "permutation": (("chain", "topic"), perms)},
                        attrs=attrs)
    return replace_group(idata, "topics", topics)


def _recorded_draws(idata, corpus):
    """Per-draw records of ``record_phi`` / ``record_theta``: θ drawn from each recorded
    conditional (:func:`theta_draws`, seeded by the run's seed), words and documents named."""
    seed = int(idata.attrs.get("seed", 0))
    for group in ("posterior", "warmup_posterior"):
        if group not in idata.groups():
            continue
        post = idata[group]
        if "theta_concentration" in post:
            conc = post["theta_concentration"]
            theta = theta_draws(conc.values, seed=np.random.SeedSequence([seed, 0x7E7A, group == "posterior"]))
            post = post.drop_vars("theta_concentration").assign(theta=(conc.dims, theta.astype(np.float32)))
        if corpus is not None:
            if "phi_word" in post.coords:
                post = post.assign_coords(phi_word=[corpus.vocab[i] for i in post["phi_word"].values.tolist()])
            if "theta_document" in post.coords:
                post = post.assign_coords(
                    theta_document=[corpus.doc_names[i] for i in post["theta_document"].values.tolist()])
        setattr(idata, group, post)
    return idata


def report(idata) -> str:
    """Top words per topic (from the chains named in ``topics``) with UMass coherence,
    held-out perplexity, the agreement of the chains with R-hat per aligned topic, R-hat
    of lp, and whether the chains disagree (:func:`gibbsjax.reports.chains_disagree`, the
    decision :class:`gibbsjax.LDA` warns with) and what helps."""
    import json

    from gibbsjax.reports import agreement_lines

    if "topic_share" not in idata.posterior:
        raise ValueError("not an LDA result: its posterior has no variable 'topic_share'")
    lines = []
    if "topics" in idata.groups():
        attrs = idata.topics.attrs
        words = json.loads(attrs["top_words"]) if "top_words" in attrs else None
        umass = json.loads(attrs["umass"]) if "umass" in attrs else None
        if words:
            source = "aligned across chains"
            if "estimate_chains" in attrs:
                chains = json.loads(str(attrs["estimate_chains"]))
                source = f"from chain{'s' if len(chains) > 1 else ''} {', '.join(map(str, chains))}"
            lines.append(f"top words per topic ({source}; UMass coherence):")
            for k, ws in enumerate(words):
                c = f"{umass[k]:8.2f}" if umass else ""
                lines.append(f"  topic {k:2d} {c}  {' '.join(ws)}")
        learned = [f"{name} = {attrs[f'learned_{name}']}" for name in ("alpha", "eta") if f"learned_{name}" in attrs]
        if learned:
            lines.append(f"learned priors (posterior means): {'; '.join(learned)}")
        if "heldout_perplexity" in attrs:
            lines.append(f"held-out perplexity (document completion, {int(attrs['heldout_docs'])} documents): "
                         f"{float(attrs['heldout_perplexity']):.1f}")
    lines += agreement_lines(idata)
    return "\n".join(lines)


def _specs():
    from gibbsjax.spec import ModelSpec

    return tuple(
        ModelSpec(f"lda.{name}", factory, _config_data, postprocess, report,
                  description=f"latent Dirichlet allocation, {name.replace('_', ' ')} Gibbs sampler (source document 003 §4)")
        for name, factory in SAMPLERS.items()
    )


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
