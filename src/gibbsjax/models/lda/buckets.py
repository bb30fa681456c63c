"""Bucket sizes of the LDA data (:func:`gibbsjax.models.lda.layout.data` with ``bucket=True``): the grid's
steps and lanes and the documents padded to a few sizes, so that corpora of nearby sizes share one
compiled program.  Padding slots and documents hold no tokens; every token's uniform is keyed by its
document and position, so the draws do not change.  Host-side numpy only.
"""

from __future__ import annotations

import jax
import numpy as np

__all__ = ["BUCKET_MINIMUMS", "bucket_size", "padded_grid", "num_real_docs"]


#: the smallest padded sizes of :func:`data`'s ``bucket`` (steps, lanes, documents): small corpora
#: share one program; the padding costs the native kernels a pass over empty slots
BUCKET_MINIMUMS = {"steps": 16, "lanes": 512, "documents": 512}


def bucket_size(n: int, minimum: int = 1) -> int:
    """The smallest size of the form 2^e or 3 · 2^e that is at least ``max(n, minimum)``: sizes
    about 1.4 times apart, so padding adds at most half.

    Parameters
    ----------
    n : int
        The size to pad.
    minimum : int, default 1
        The smallest size returned.

    Returns
    -------
    int
        The bucket size.

    Examples
    --------
    >>> [bucket_size(n) for n in (1, 3, 5, 7, 250, 300, 1000)]
    [1, 3, 6, 8, 256, 384, 1024]
    >>> bucket_size(250, 512), bucket_size(300, 512)
    (512, 512)
    """
    n = max(int(n), int(minimum), 1)
    power = 1 << (n - 1).bit_length()  # the smallest power of two >= n
    return 3 * power // 4 if power >= 4 and 3 * power // 4 >= n else power


def padded_grid(words, docs, mask, lengths, first_step, doc_ids, pad_lanes: bool = True):
    """The host arrays of :func:`gibbsjax.models.lda.layout.data` padded to bucket sizes (its ``bucket``):
    empty lanes and steps (padding slots of the dummy row, which moves to the new last row), empty
    documents (length 0, document id −1).

    Parameters
    ----------
    words, docs, mask : numpy.ndarray
        (S, R): the grid's words, documents (padding: D) and mask.
    lengths : numpy.ndarray
        (D,) document lengths.
    first_step, doc_ids : numpy.ndarray
        (D + 1,): each document's first step and id (the dummy row last).
    pad_lanes : bool, default True
        Pad the lanes too (False: lanes given by hand stay as they are, and the steps are padded to
        as many slots at least as the smallest grid of padded lanes has).

    Returns
    -------
    tuple of numpy.ndarray
        The same six arrays, of the bucket sizes (:data:`BUCKET_MINIMUMS`, :func:`bucket_size`).

    Examples
    --------
    >>> w = np.ones((2, 3), np.int32); d = np.array([[0, 1, 2], [0, 3, 2]], np.int32)
    >>> out = padded_grid(w, d, w > 0, np.array([2, 1, 2], np.int32), np.zeros(4, np.int32), np.array([0, 1, 2, -1]))
    >>> out[0].shape, int(out[1][0, 1]), int(out[1][1, 1]), out[3].shape, out[5][[2, 3, 512]].tolist()
    ((16, 512), 1, 512, (512,), [2, -1, -1])
    """
    s, r = words.shape
    d = lengths.size
    r2 = bucket_size(r, BUCKET_MINIMUMS["lanes"]) if pad_lanes else r
    # lanes kept: as many slots at least as the smallest grid of padded lanes (small corpora share one program)
    least = BUCKET_MINIMUMS["steps"] * max(1, BUCKET_MINIMUMS["lanes"] // r2)
    s2 = bucket_size(s, least)
    d2 = bucket_size(d, BUCKET_MINIMUMS["documents"])
    grow = ((0, s2 - s), (0, r2 - r))
    docs = np.where(docs == d, d2, docs).astype(np.int32)
    out_ids = np.full(d2 + 1, -1, np.int32)
    out_ids[:d] = doc_ids[:d]
    out_first = np.zeros(d2 + 1, np.int32)
    out_first[:d] = first_step[:d]
    return (np.pad(words, grow), np.pad(docs, grow, constant_values=d2), np.pad(mask, grow),
            np.pad(lengths, (0, d2 - d)), out_first, out_ids)


def num_real_docs(d) -> int:
    """The number of the corpus's documents in ``d``: its rows with a document id (``doc_ids`` >= 0),
    without the empty ones that ``data(bucket=True)`` adds; the number of rows where the ids cannot
    be read here (traced, or spread over processes).

    Parameters
    ----------
    d : LDAData
        The packed corpus.

    Returns
    -------
    int
        D without the padding.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda.layout import data, num_docs_of
    >>> c = Corpus.from_token_lists([["a", "b"], ["b"]])
    >>> num_docs_of(data(c, bucket=True)), num_real_docs(data(c, bucket=True)), num_real_docs(data(c))
    (512, 2, 2)
    """
    ids = d.doc_ids
    try:
        if isinstance(ids, jax.Array) and not ids.is_fully_addressable:
            return d.doc_lengths.shape[0]
        host = np.asarray(ids)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return d.doc_lengths.shape[0]
    return int(np.count_nonzero(host >= 0))
