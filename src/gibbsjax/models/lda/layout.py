"""LDA's data layout: a corpus packed into lanes, the state, counts and per-token uniforms.

Ragged documents are packed into ``R`` *lanes* (:func:`data`): an (S steps × R
lanes) grid where each lane holds whole documents one after another, so the
partially collapsed sampler scans S ≈ (longest document) steps, updating R
documents per step, with little padding.  The collapsed sampler visits tokens one at
a time (any fixed order is a valid systematic scan).  Shapes depend only on
(S, R, D, V), so corpora packed to the same grid reuse compiled code.

Every token's uniform is keyed by its document and its position in it
(:func:`token_uniforms`), so draws depend neither on the packing nor on how the
documents are spread over devices (:mod:`gibbsjax.models.lda.shard`).  The bottom
of :mod:`gibbsjax.models.lda`: it imports no other module of the package.
"""

from __future__ import annotations

import functools
import heapq
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import conjugate as cj
from gibbsjax import random as gr
from gibbsjax._checks import check_int
from gibbsjax.corpus import Corpus
from gibbsjax.models.lda.buckets import padded_grid

__all__ = [
    "LDAData",
    "PACK_BLOCK_TOKENS",
    "LANE_FRACTIONS",
    "default_lanes",
    "pack",
    "grid",
    "data",
    "tokens_in_corpus_order",
    "LDAState",
    "num_docs_of",
    "vocab_size_of",
    "hashed_uniforms",
    "token_uniforms",
    "initial_topics",
    "initial_log_phi",
    "topic_counts",
    "word_topic_counts",
]


# ============================================================================ data
class LDAData(NamedTuple):
    """A corpus packed into an (S steps × R lanes) grid (see the module docs).

    ``first_step`` and ``doc_ids`` together key each token's uniform
    (:func:`token_uniforms`), so draws do not depend on the packing.

    Parameters
    ----------
    words : jax.Array
        (S, R) int32: the word of every slot (padding: 0).
    docs : jax.Array
        (S, R) int32: the document (row) of every slot (padding: ``D``, a dummy row).
    mask : jax.Array
        (S, R) bool: False at padding slots.
    doc_lengths : jax.Array
        (D,): the documents' lengths (fixes D statically).
    word_counts : jax.Array
        (V,): how often each word occurs (fixes V statically).
    first_step : jax.Array
        (D + 1,): the grid step of each document's first token (row D: 0), so the
        token in slot (s, r) is at position ``s − first_step[docs[s, r]]`` of its document.
    doc_ids : jax.Array
        (D + 1,): each row's document in the whole corpus (``d`` for :func:`data`; a
        shard's rows of :func:`gibbsjax.models.lda.shard.shard_data` hold its own
        documents; −1 for the dummy row and unused rows).

    Examples
    --------
    >>> from gibbsjax.datasets import abc_corpus
    >>> type(data(abc_corpus())).__name__
    'LDAData'
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


def pack(doc_lengths: np.ndarray, num_lanes: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Assign documents to lanes by the longest-processing-time rule (Graham 1969):
    longest document first, each to the lane with the least load so far (ties: the
    lowest lane; equal lengths: corpus order).

    Returns (lane of each doc, start step of each doc within its lane, S), the first two int32
    (D,).  The R longest documents open the R empty lanes in order (every load is 0, the lowest
    lane first); the rest go through a heap of the lanes keyed ``load · R + lane`` (the least
    load first, ties to the lowest lane), O((D − R) log R), once per corpus."""
    d = doc_lengths.size
    order = np.argsort(-doc_lengths, kind="stable")
    lane = np.empty(d, np.int32)
    start = np.empty(d, np.int32)
    first = min(num_lanes, d)
    lane[order[:first]] = np.arange(first, dtype=np.int32)
    start[order[:first]] = 0
    lengths = np.asarray(doc_lengths, np.int64)
    keys = np.arange(num_lanes, dtype=np.int64)
    keys[:first] += lengths[order[:first]] * num_lanes
    heap = keys.tolist()  # Python ints: no overflow
    heapq.heapify(heap)
    taken = []  # the key of the lane each of the other documents goes to, in order
    for extra in (lengths[order[first:]] * num_lanes).tolist():
        key = heap[0]
        taken.append(key)
        heapq.heapreplace(heap, key + extra)
    load, r = np.divmod(np.asarray(taken, np.int64), num_lanes)
    lane[order[first:]] = r
    start[order[first:]] = load
    return lane, start, max(heap) // num_lanes if d else 0


#: the numbers of lanes :func:`default_lanes` tries, as fractions of ⌈N / longest document⌉
LANE_FRACTIONS = (1.0, 0.9, 0.8, 0.75)


def default_lanes(doc_lengths) -> int:
    """The number of lanes R of :func:`data`'s default grid: the one of fewest slots (S · R).

    With R = ⌈N / longest document⌉ lanes the average lane holds the longest document's worth of
    tokens, but documents of similar lengths do not share lanes evenly when a lane holds one or
    two of them (Poisson(100) lengths: lanes of ~100 or ~200 tokens, 1.36 slots a token).  A few
    smaller R (:data:`LANE_FRACTIONS`) are packed by :func:`pack` (their loads only, no grid) and
    the one with the fewest slots is kept; a smaller R must save more than 1 % of the slots to be
    preferred (more lanes: more parallel work, fewer sequential steps).  The draws do not depend
    on the packing; only the work per sweep does.  Measured on the 2-core CPU (10,000 documents
    of Poisson(100) tokens, one chain, second call): 1.36 → 1.07 slots a token and 11.8 → 13.9 M
    tokens/s at K = 20; 1.39 → 1.16 and 3.7 → 4.4 M at K = 100.

    Parameters
    ----------
    doc_lengths : array_like
        (D,) positive document lengths.

    Returns
    -------
    int
        R, between 1 and D.

    Examples
    --------
    >>> import numpy as np
    >>> lengths = np.random.default_rng(0).poisson(100, 2000) + 1
    >>> r = default_lanes(lengths)
    >>> widest = int(np.ceil(lengths.sum() / lengths.max()))
    >>> r <= widest, pack(lengths, r)[2] * r <= pack(lengths, widest)[2] * widest
    (True, True)
    """
    lengths = np.asarray(doc_lengths, np.int64)
    d, n = lengths.size, int(lengths.sum())
    widest = min(d, max(1, math.ceil(n / int(lengths.max()))))
    best_slots, best = None, widest
    for r in sorted({max(1, math.ceil(widest * f)) for f in LANE_FRACTIONS}, reverse=True):
        slots = pack(lengths, r)[2] * r
        if best_slots is None or slots < 0.99 * best_slots:
            best_slots, best = slots, r
    return best


def _token_slots(doc_offsets: np.ndarray, first_slot: np.ndarray, num_lanes: int):
    """Yield ``(lo, hi, docs, slots)`` for consecutive blocks of whole documents of
    about :data:`PACK_BLOCK_TOKENS` tokens (a longer document is a block of its own): corpus
    tokens ``lo:hi`` sit at ``slots`` of the flattened (S · R) grid, and belong to
    the documents ``docs`` (int32).  ``first_slot[d]`` is the flat slot of
    document d's first token; its i-th token is ``R · i`` slots further on (one
    lane, consecutive steps).

    Only the block's arrays are token-sized: O(block) temporary memory beyond the grid."""
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


def data(corpus: Corpus, *, num_lanes: int | None = None, bucket: bool = False) -> LDAData:
    """Validate a :class:`~gibbsjax.corpus.Corpus` and pack it for the LDA samplers.

    Host memory: the grid (9 bytes per slot) plus temporaries of :data:`PACK_BLOCK_TOKENS` tokens.

    Parameters
    ----------
    corpus : gibbsjax.corpus.Corpus
        The documents.
    num_lanes : int, optional
        R, the number of lanes; default :func:`default_lanes` (at most ⌈N / longest
        document⌉ and at most D: the grid has about as many steps as the longest
        document, with the fewest padding slots of a few candidates).
    bucket : bool, default False
        Pad the shapes to a few sizes (:func:`~gibbsjax.models.lda.buckets.bucket_size`): steps, lanes and documents
        (empty documents after the corpus's, with ``doc_ids`` −1), so that corpora of
        nearby sizes share one compiled program.  The draws of the corpus's tokens do
        not change (every token's uniform is keyed by its document and position;
        :func:`~gibbsjax.models.lda.buckets.num_real_docs` tells the corpus's documents from the padding).  For
        samplers whose cost does not grow with empty slots (the native CPU kernels); lanes given by hand
        are kept.

    Returns
    -------
    LDAData
        The packed corpus.

    Raises
    ------
    ValueError
        For an empty corpus, a zero-length document or a corpus that is not a
        :class:`~gibbsjax.corpus.Corpus`.

    Examples
    --------
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
    d = corpus.num_docs
    pad_lanes = num_lanes is None
    if num_lanes is None:
        num_lanes = default_lanes(lengths)
    num_lanes = min(check_int("num_lanes", num_lanes, 1), d)
    words, docs, mask, word_counts, first_step = grid(corpus, num_lanes)
    lengths = lengths.astype(np.int32)
    doc_ids = np.arange(d + 1, dtype=np.int32)
    doc_ids[d] = -1
    if bucket:
        words, docs, mask, lengths, first_step, doc_ids = padded_grid(words, docs, mask, lengths, first_step, doc_ids,
                                                                      pad_lanes)
    return LDAData(
        jnp.asarray(words), jnp.asarray(docs), jnp.asarray(mask),
        jnp.asarray(lengths), jnp.asarray(word_counts),
        jnp.asarray(first_step), jnp.asarray(doc_ids),
    )


def grid(corpus: Corpus, num_lanes: int) -> tuple[np.ndarray, ...]:
    """The host-side packing of :func:`data`: (words, docs, mask) grids (S, R),
    word counts (V,), all filled block by block (:func:`_token_slots`), and each
    document's first step (D + 1,; the dummy row D: 0)."""
    d = corpus.num_docs
    lane, start, steps = pack(corpus.doc_lengths, num_lanes)
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

    Parameters
    ----------
    d : LDAData
        The packed corpus.
    values : array_like
        (S, R): one value per grid slot.

    Returns
    -------
    numpy.ndarray
        (N,): the values of the real slots, in corpus order.

    Raises
    ------
    ValueError
        If ``values`` does not have the grid's shape.

    Examples
    --------
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
    num_docs, num_lanes = num_docs_of(d), docs.shape[1]
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
    """One chain's state (fixed priors).

    Parameters
    ----------
    z : jax.Array
        (S, R) int32: the topic of every grid slot (padding: 0).
    log_phi : jax.Array
        (K, V): log φ.

    Examples
    --------
    >>> LDAState(jnp.zeros((2, 3), jnp.int32), jnp.log(jnp.full((4, 5), 0.2)))._fields
    ('z', 'log_phi')
    """

    z: jax.Array
    log_phi: jax.Array


def num_docs_of(d: LDAData) -> int:
    """D, the number of documents of ``d`` (static: the length of ``d.doc_lengths``)."""
    return d.doc_lengths.shape[0]


def vocab_size_of(d: LDAData) -> int:
    """V, the size of ``d``'s vocabulary (static: the length of ``d.word_counts``)."""
    return d.word_counts.shape[0]


def _unit_interval(bits):
    """uint32 random bits -> float32 uniforms in [0, 1): the top 23 bits as the mantissa of
    a number in [1, 2), minus 1 (the construction of ``jax.random.uniform``)."""
    mantissa = jax.lax.shift_right_logical(bits, jnp.uint32(9)) | jnp.uint32(0x3F800000)
    return jax.lax.bitcast_convert_type(mantissa, jnp.float32) - 1.0


def hashed_uniforms(key, a, b):
    """One float32 uniform in [0, 1) per pair (a_i, b_i) of integers.

    The Threefry-2x32 hash (Salmon et al. 2011, the counter-based generator behind
    ``jax.random``) of the counter (a_i, b_i) under a 64-bit key drawn from ``key``.
    Each uniform depends on ``key`` and its own pair only, not on the other pairs
    nor on the array's shape or order; distinct pairs give independent uniforms.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    a : array_like of int
        First integers of the pairs.
    b : array_like of int
        Second integers of the pairs (the same shape as ``a``).

    Returns
    -------
    jax.Array
        float32 uniforms in [0, 1), of ``a``'s shape.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> u = hashed_uniforms(jax.random.key(0), jnp.array([0, 1, 2]), jnp.array([5, 5, 5]))
    >>> bool(u[1] == hashed_uniforms(jax.random.key(0), jnp.array([1]), jnp.array([5]))[0])
    True
    """
    return _hashed_uniforms(key, jnp.asarray(a), jnp.asarray(b))


# The samplers' helpers below are jitted: inlined inside a sweep, one compiled program on their own.
@jax.jit
def _hashed_uniforms(key, a, b):
    pair = jax.random.bits(key, (2,), jnp.uint32)  # the hash's key: works for every PRNG implementation
    # The first word of jax.extend.random.threefry_2x32(pair, [a, b]), bit for bit (the draws of
    # every earlier release), computed element-wise: XLA fuses it into the z-update reading it.
    first, _ = gr.threefry2x32(pair[0], pair[1], a.astype(jnp.uint32), b.astype(jnp.uint32))
    return _unit_interval(first)


def token_uniforms(key, d: LDAData):
    """The uniform of every grid slot: :func:`hashed_uniforms` of (document, position).

    The uniform of the token at position j of document doc is :func:`hashed_uniforms`
    of (doc, j) under ``key``, with doc the document's index in the whole corpus
    (``d.doc_ids``) and j = step − ``d.first_step[doc]``.

    So a token's uniform, and every draw made from it, depends on the sweep's key, the
    document and the position only, not on the number of lanes nor on how documents are
    spread over devices (:mod:`gibbsjax.models.lda.shard`).  Every z-update
    (:mod:`gibbsjax.models.lda.conditionals`) uses it.  Padding slots get uniforms too (of the
    dummy row); they are discarded.

    Parameters
    ----------
    key : jax.Array
        PRNG key (of the sweep).
    d : LDAData
        The packed corpus.

    Returns
    -------
    jax.Array
        (S, R) float32 uniforms in [0, 1).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b"], ["a"]])
    >>> u2 = tokens_in_corpus_order(data(c, num_lanes=2), token_uniforms(jax.random.key(0), data(c, num_lanes=2)))
    >>> u1 = tokens_in_corpus_order(data(c, num_lanes=1), token_uniforms(jax.random.key(0), data(c, num_lanes=1)))
    >>> bool((u1 == u2).all())
    True
    """
    return _token_uniforms(key, d)


@jax.jit
def _token_uniforms(key, d: LDAData):
    steps = jnp.arange(d.docs.shape[0], dtype=jnp.int32)[:, None]
    return _hashed_uniforms(key, d.doc_ids[d.docs], steps - d.first_step[d.docs])


def initial_log_phi(nkw, eta: float):
    """log φ of a chain's start: log (n_kw + η) / (n_k + V η), the mean of φ's conditional.

    Every LDA sweep draws φ | z (or integrates φ out) before anything reads log φ, so the
    log φ a chain starts with is never used by a draw: a random draw here would be discarded
    by the first sweep.  The kernels' ``init`` therefore stores this deterministic value
    (a valid point of the simplex, the conditional mean given the initial topics): no
    Dirichlet draw is compiled into the program that starts the chains, which saved about
    1 s of XLA compile time per program on a CPU, and every later draw is unchanged.

    Parameters
    ----------
    nkw : jax.Array
        (K, V) topic-word counts of the initial topics.
    eta : float
        η, the Dirichlet concentration of every topic.

    Returns
    -------
    jax.Array
        (K, V) float32: log φ, each row normalised.

    Examples
    --------
    >>> lp = initial_log_phi(jnp.array([[3, 0, 1], [0, 2, 0]]), eta=0.5)
    >>> [round(float(x), 4) for x in jnp.exp(lp[0])]
    [0.6364, 0.0909, 0.2727]
    """
    return _initial_log_phi(jnp.asarray(nkw), eta)


@jax.jit
def _initial_log_phi(nkw, eta):
    a = nkw.astype(jnp.float32) + jnp.asarray(eta, jnp.float32)
    return jnp.log(a) - jnp.log(jnp.sum(a, axis=-1, keepdims=True))


def initial_topics(key, d: LDAData, K: int):
    """Topics drawn uniformly at random for every token, from :func:`token_uniforms`.

    A chain's start does not depend on the packing either.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    d, K
        As in :func:`topic_counts`.

    Returns
    -------
    jax.Array
        (S, R) int32 topics (padding: 0).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> initial_topics(jax.random.key(0), d, 3).shape == d.words.shape
    True
    """
    return _initial_topics(key, d, K)


@functools.partial(jax.jit, static_argnames=("K",))
def _initial_topics(key, d: LDAData, K: int):
    k = jnp.floor(_token_uniforms(key, d) * K).astype(jnp.int32)
    return jnp.where(d.mask, jnp.minimum(k, K - 1), 0).astype(jnp.int32)


def topic_counts(z, d: LDAData, K: int):
    """The count tables n_dk, n_kw and n_k of the topics ``z``.

    Parameters
    ----------
    z : jax.Array
        (S, R) int: the topic of every grid slot.
    d : LDAData
        The packed corpus (:func:`data`).
    K : int
        Number of topics.

    Returns
    -------
    ndk : jax.Array
        (D + 1, K) int32 document-topic counts (row D is padding).
    nkw : jax.Array
        (K, V) int32 topic-word counts.
    nk : jax.Array
        (K,) int32 tokens per topic.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> ndk, nkw, nk = topic_counts(jnp.where(d.mask, 1, 0), d, 2)   # every token in topic 1
    >>> ndk.tolist(), nk.tolist()
    ([[0, 3], [0, 2], [0, 0]], [0, 5])
    """
    ndk = cj.counts((d.docs, z), (num_docs_of(d) + 1, K), d.mask)
    nkw = word_topic_counts(z, d, K)
    return ndk, nkw, nkw.sum(axis=1)


def word_topic_counts(z, d: LDAData, K: int):
    """The topic-word counts n_kw alone, by one scatter-add: what the φ draw needs.

    A sweep builds each count table once; the z-updates build or carry n_dk themselves.

    Parameters
    ----------
    z, d, K
        As in :func:`topic_counts`: the topics, the packed corpus and K.

    Returns
    -------
    jax.Array
        (K, V) int32: n_kw.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data
    >>> d = data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))
    >>> word_topic_counts(jnp.zeros_like(d.words), d, 2).tolist()   # every token in topic 0: a, b, c
    [[2, 2, 1], [0, 0, 0]]
    """
    return cj.counts((z, d.words), (K, vocab_size_of(d)), d.mask)
