"""LDA packing (`lda.data`, `lda.layout.tokens_in_corpus_order`): the grid equals an independent
reference packing on random corpora, and host memory beyond the grid does not grow with
the number of tokens (no token-length temporaries)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from gibbsjax.corpus import Corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import layout


def reference_grid(doc_tokens: list[list[int]], num_lanes: int):
    """The packing rule of `lda.data`, written out with plain loops: documents by
    decreasing length (ties in corpus order), each to the least-loaded lane (ties to the
    lowest lane), its tokens in consecutive steps of that lane from the lane's load."""
    num_docs = len(doc_tokens)
    order = sorted(range(num_docs), key=lambda doc: (-len(doc_tokens[doc]), doc))
    loads = [0] * num_lanes
    placed = {}
    for doc in order:
        lane = min(range(num_lanes), key=lambda r: (loads[r], r))
        placed[doc] = (lane, loads[lane])
        loads[lane] += len(doc_tokens[doc])
    steps = max(loads)
    words = np.zeros((steps, num_lanes), np.int32)
    docs = np.full((steps, num_lanes), num_docs, np.int32)
    mask = np.zeros((steps, num_lanes), bool)
    for doc, tokens in enumerate(doc_tokens):
        lane, start = placed[doc]
        for i, w in enumerate(tokens):
            words[start + i, lane] = w
            docs[start + i, lane] = doc
            mask[start + i, lane] = True
    return words, docs, mask, placed


def random_corpus(rng, num_docs: int, vocab_size: int, max_len: int) -> tuple[Corpus, list[list[int]]]:
    lengths = rng.integers(1, max_len + 1, size=num_docs)
    if num_docs > 3:  # a few long documents and repeated lengths, so ties and spills occur
        lengths[rng.integers(0, num_docs, 2)] = 3 * max_len
        lengths[: num_docs // 3] = lengths[0]
    doc_tokens = [rng.integers(0, vocab_size, size=n).tolist() for n in lengths]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    tokens = np.array([w for doc in doc_tokens for w in doc], np.int32)
    return Corpus(tokens, offsets, tuple(f"w{i}" for i in range(vocab_size))), doc_tokens


def reference_default_lanes(doc_tokens) -> int:
    """The default number of lanes by its rule, from the plain-loop packing above: of R =
    ⌈N / longest⌉ and 0.9, 0.8, 0.75 of it (rounded up), the grid of fewest slots; a smaller R
    only when it saves more than 1 % of them."""
    widest = min(len(doc_tokens), math.ceil(sum(map(len, doc_tokens)) / max(map(len, doc_tokens))))
    best = None
    for r in sorted({max(1, math.ceil(widest * f)) for f in (1.0, 0.9, 0.8, 0.75)}, reverse=True):
        slots = reference_grid(doc_tokens, r)[0].size
        if best is None or slots < 0.99 * best[0]:
            best = (slots, r)
    return best[1]


def test_default_lanes_pack_documents_of_similar_lengths_tightly():
    """Documents of Poisson(100) lengths: ⌈N / longest⌉ lanes hold one or two documents each
    (lanes of ~100 or ~200 tokens, a third of the grid padding); the default packs them in
    fewer lanes with little padding, and never more slots than the widest grid."""
    lengths = np.random.default_rng(0).poisson(100, 3000) + 1
    widest = math.ceil(lengths.sum() / lengths.max())
    r = lda.default_lanes(lengths)
    assert layout.pack(lengths, widest)[2] * widest / lengths.sum() > 1.25  # the old default's padding
    assert layout.pack(lengths, r)[2] * r / lengths.sum() < 1.12
    assert r < widest and layout.pack(lengths, r)[2] < 1.1 * layout.pack(lengths, widest)[2]  # few more steps
    assert lda.default_lanes([5]) == 1 and lda.default_lanes([3, 3, 3]) == 3  # one lane per document: no padding


@pytest.mark.parametrize("seed", range(6))
def test_grid_equals_reference_packing(seed):
    rng = np.random.default_rng(seed)
    num_docs = int(rng.integers(1, 120))
    corpus, doc_tokens = random_corpus(rng, num_docs, vocab_size=int(rng.integers(1, 50)),
                                       max_len=int(rng.integers(1, 40)))
    default = reference_default_lanes(doc_tokens)
    for lanes in (None, 1, int(rng.integers(1, num_docs + 1)), num_docs, num_docs + 5):
        d = lda.data(corpus, num_lanes=lanes)
        r = default if lanes is None else min(lanes, num_docs)
        words, docs, mask, _ = reference_grid(doc_tokens, r)
        np.testing.assert_array_equal(np.asarray(d.words), words)
        np.testing.assert_array_equal(np.asarray(d.docs), docs)
        np.testing.assert_array_equal(np.asarray(d.mask), mask)
        for field in (d.words, d.docs, d.doc_lengths, d.word_counts):
            assert field.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(d.doc_lengths), [len(t) for t in doc_tokens])
        expected_counts = np.zeros(corpus.vocab_size, int)
        for tokens in doc_tokens:
            for w in tokens:
                expected_counts[w] += 1
        np.testing.assert_array_equal(np.asarray(d.word_counts), expected_counts)
        # and back: the grid of words gives the corpus, the grid of documents each token's document
        np.testing.assert_array_equal(lda.layout.tokens_in_corpus_order(d, d.words), corpus.tokens)
        np.testing.assert_array_equal(lda.layout.tokens_in_corpus_order(d, d.docs), corpus.doc_ids)


def test_blocks_smaller_than_documents_and_grid(monkeypatch):
    """Blocks of 1, 2 and 7 tokens (each document a block, or several per block) pack identically."""
    rng = np.random.default_rng(11)
    corpus, doc_tokens = random_corpus(rng, 40, vocab_size=9, max_len=12)
    words, docs, mask, placed = reference_grid(doc_tokens, 6)
    values = np.arange(words.size, dtype=np.float32).reshape(words.shape)
    expected = [values[placed[doc][1] + i, placed[doc][0]] for doc, t in enumerate(doc_tokens) for i in range(len(t))]
    for block in (1, 2, 7, 10**6):
        monkeypatch.setattr(layout, "PACK_BLOCK_TOKENS", block)
        d = lda.data(corpus, num_lanes=6)
        np.testing.assert_array_equal(np.asarray(d.words), words)
        np.testing.assert_array_equal(np.asarray(d.docs), docs)
        np.testing.assert_array_equal(np.asarray(d.mask), mask)
        np.testing.assert_array_equal(lda.layout.tokens_in_corpus_order(d, values), expected)


def test_tokens_in_corpus_order_rejects_wrong_shape():
    d = lda.data(Corpus.from_token_lists([["a", "b"], ["b"]]))
    with pytest.raises(ValueError, match="grid's shape"):
        lda.layout.tokens_in_corpus_order(d, np.zeros((5, 5)))


def _peak_beyond_grid(corpus: Corpus) -> tuple[int, int]:
    """Peak host memory traced while packing, minus the grid and word counts it returns."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        d = lda.data(corpus)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    grid = d.words.size * (4 + 4 + 1) + d.word_counts.size * 4
    return peak - before - grid, corpus.num_tokens


def _poisson_corpus(num_docs: int, seed: int) -> Corpus:
    rng = np.random.default_rng(seed)
    lengths = np.maximum(rng.poisson(200, num_docs), 1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    tokens = rng.integers(0, 500, int(offsets[-1]), dtype=np.int32)
    return Corpus(tokens, offsets, tuple(f"w{i}" for i in range(500)))


def test_packing_memory_does_not_grow_with_tokens():
    """Beyond the grid (9 bytes a slot), packing needs O(block) temporaries: going from
    ~0.4 M to ~1.6 M tokens adds less than 1 byte of traced peak per extra token.  One
    temporary int32 array of token length would add 4 bytes a token; the former packing
    (int64 positions, steps and lanes) added about 40."""
    lda.data(_poisson_corpus(5, 0))  # imports and first-call caches outside the measurement
    small, n_small = _peak_beyond_grid(_poisson_corpus(2_000, 1))
    large, n_large = _peak_beyond_grid(_poisson_corpus(8_000, 2))
    per_token = (large - small) / (n_large - n_small)
    assert per_token < 1.0, f"packing memory grows by {per_token:.2f} bytes per token"
