"""Sharded LDA data: a corpus's documents split into shards, each packed into its own grid.

The data side of :mod:`gibbsjax.models.lda.shard` (which re-exports these names):
:func:`shard_data` assigns whole documents to shards, balanced by tokens (longest first
to the lightest shard), and packs each shard into its own (S × R) grid of the same
shape; the result is an :class:`~gibbsjax.models.lda.LDAData` with a leading shard
axis.  :func:`from_parts` does the same for a corpus read in parts, one per process
(``jax.distributed``); :func:`tokens_in_corpus_order` and :func:`docs_in_corpus_order`
map sharded arrays back to corpus order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from gibbsjax._checks import check_int
from gibbsjax.corpus import Corpus
from gibbsjax.models.lda import layout
from gibbsjax.models.lda.layout import LDAData
from gibbsjax.rows import check_devices

__all__ = [
    "AXIS",
    "shard_data",
    "from_parts",
    "corpus_of",
    "tokens_in_corpus_order",
    "docs_in_corpus_order",
    "host_array",
]

#: the mesh axis the documents are split along
AXIS = "docs"


# ============================================================================ data
def corpus_of(d: LDAData) -> Corpus:
    """The corpus packed in ``d`` (tokens in corpus order; words named by their ids).

    Parameters
    ----------
    d : LDAData
        An unsharded packed corpus (:func:`gibbsjax.models.lda.data`).

    Returns
    -------
    gibbsjax.corpus.Corpus
        The corpus, its vocabulary the word ids as strings.

    Examples
    --------
    >>> from gibbsjax.models import lda
    >>> c = Corpus.from_token_lists([["a", "b"], ["b"]])
    >>> corpus_of(lda.data(c)).tokens.tolist() == c.tokens.tolist()
    True
    """
    lengths = np.asarray(d.doc_lengths, np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    vocab = tuple(str(i) for i in range(d.word_counts.shape[-1]))
    return Corpus(layout.tokens_in_corpus_order(d, d.words), offsets, vocab)


def shard_data(corpus: Corpus | LDAData, num_shards: int, *, num_lanes: int | None = None) -> LDAData:
    """Split a corpus's documents into ``num_shards`` shards and pack each for the LDA samplers.

    Whole documents go to shards balanced by tokens (longest first, each to the shard
    with the fewest tokens so far: the rule :func:`gibbsjax.models.lda.data` uses for
    lanes); each shard holds its documents in corpus order as local rows and is packed
    into an (S × R) grid, the same S and R for every shard (shorter grids padded).

    Parameters
    ----------
    corpus : gibbsjax.corpus.Corpus or LDAData
        The documents (an unsharded ``LDAData`` is unpacked first).
    num_shards : int
        P, the number of shards (at most the number of documents).
    num_lanes : int, optional
        R, the same on every shard (so one shard and many run the same per-row
        arithmetic); default the rule of ``lda.data`` applied to the largest shard:
        ceil(tokens / longest document).

    Returns
    -------
    LDAData
        Every field with a leading shard axis: ``words``/``docs``/``mask`` (P, S, R),
        ``doc_lengths`` (P, D_s) (unused rows: 0), ``word_counts`` (P, V) (the shard's
        own), ``first_step`` and ``doc_ids`` (P, D_s + 1) (``doc_ids``: each row's
        document in the corpus, −1 for unused rows and the dummy row D_s).

    Raises
    ------
    ValueError
        For bad input, as ``lda.data``, already sharded data, or more shards than documents.

    Examples
    --------
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> sd = shard_data(c, 2)
    >>> sd.words.shape[0], int(sd.mask.sum())
    (2, 7)
    """
    if isinstance(corpus, LDAData):
        if corpus.words.ndim != 2:
            raise ValueError("corpus is already sharded (its grid has a leading shard axis)")
        corpus = corpus_of(corpus)
    _check_corpus(corpus)
    num_shards = check_int("num_shards", num_shards, 1)
    d, n = corpus.num_docs, corpus.num_tokens
    if num_shards > d:
        raise ValueError(f"num_shards ({num_shards}) must be at most the number of documents ({d})")
    lengths = corpus.doc_lengths
    shard_of, _, _ = layout.pack(lengths, num_shards)
    members = [np.flatnonzero(shard_of == p) for p in range(num_shards)]
    tokens = np.array([int(lengths[m].sum()) for m in members])
    rows = max(m.size for m in members)
    if num_lanes is None:
        num_lanes = min(rows, max(1, math.ceil(int(tokens.max()) / int(lengths.max()))))
    num_lanes = check_int("num_lanes", num_lanes, 1)
    pieces = [{"grid": layout.grid(corpus.subset(m), min(num_lanes, m.size)), "lengths": lengths[m], "ids": m}
              for m in members]
    steps = max(pc["grid"][0].shape[0] for pc in pieces)
    del n
    out = _stack_shards(pieces, rows, steps, num_lanes)
    return LDAData(*(jnp.asarray(out[name]) for name in LDAData._fields))


def _stack_shards(pieces: list[dict], rows: int, steps: int, num_lanes: int) -> dict:
    """Per-shard host arrays padded to the common (S × R) grid and D_s rows, stacked (P, ...)."""
    out = {name: [] for name in LDAData._fields}
    for piece in pieces:
        words, docs, mask, word_counts, first_step = piece["grid"]
        lengths, ids = piece["lengths"], piece["ids"]
        s, r = words.shape
        pad = ((0, steps - s), (0, num_lanes - r))
        out["words"].append(np.pad(words, pad))
        out["docs"].append(np.pad(np.where(mask, docs, rows), pad, constant_values=rows))
        out["mask"].append(np.pad(mask, pad))
        out["doc_lengths"].append(np.pad(lengths.astype(np.int32), (0, rows - lengths.size)))
        out["word_counts"].append(word_counts.reshape(-1))
        out["first_step"].append(np.pad(first_step[:lengths.size], (0, rows + 1 - lengths.size)))
        out["doc_ids"].append(np.pad(ids.astype(np.int32), (0, rows + 1 - lengths.size), constant_values=-1))
    return {name: np.stack(v) for name, v in out.items()}


def from_parts(part: Corpus, devices: Sequence | None = None, num_shards: int | None = None, *,
               num_lanes: int | None = None) -> LDAData:
    """Shard a corpus read in parts, one per process: each process packs only its own documents.

    Call it on every process of a ``jax.distributed`` run (several hosts, or several
    processes on one), process ``p`` passing its part of the corpus, the ``p``-th of a
    split of the documents into contiguous ranges in corpus order: typically
    ``read_uci(path, vocab, part=(jax.process_index(), jax.process_count()))`` (or
    ``read_ldac``).  The shards held by a process's own devices (of ``devices``, default
    ``jax.devices()``; ``num_shards`` a multiple of their number, default one per device)
    get its documents, balanced by tokens as in :func:`shard_data`; each document keeps
    its index in the whole corpus: the documents of the processes before it (in process
    order) come first, so with ``empty="drop"`` the index is the one a whole-file read
    followed by the same drop gives, and every draw (keyed by document and position,
    :func:`gibbsjax.models.lda.token_uniforms`) is the one of a single process that
    read everything.  A few integers per process are exchanged (sizes, so that every
    shard's grid has the same shape); nothing token-sized leaves a process.

    Parameters
    ----------
    part : gibbsjax.corpus.Corpus
        This process's part of the corpus.
    devices : sequence of jax.Device, optional
        The devices of all processes that hold shards (default ``jax.devices()``).
    num_shards : int, optional
        A multiple of the number of devices (default: one shard per device).
    num_lanes : int, optional
        R, the same on every shard (default as in :func:`shard_data`, over all processes).

    Returns
    -------
    LDAData
        As :func:`shard_data` gives it, its arrays global ``jax.Array`` s split over
        ``devices`` along the shard axis; pass it to :func:`gibbsjax.sample` with
        ``devices`` (``jax.device_count()``) and fewer chains than devices (or ``shard="data"``).

    Raises
    ------
    ValueError
        On every process, for a part with an empty document, parts over different
        vocabularies, a process with fewer documents than shards or no device, or parts
        out of order (when the documents are named by their index in the file, as
        :func:`~gibbsjax.corpus.read_ldac` and :func:`~gibbsjax.corpus.read_uci` name them).

    Examples
    --------
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> sd = from_parts(c, jax.devices()[:1], 2)   # one process: its part is the whole corpus
    >>> sd.words.shape[0], docs_in_corpus_order(sd, sd.doc_lengths).tolist()
    (2, [3, 1, 2, 1])
    """
    devices, num_shards = check_devices(devices, num_shards)
    sharding = NamedSharding(Mesh(np.array(devices), (AXIS,)), P(AXIS))
    mine = sorted({i for idx in sharding.addressable_devices_indices_map((num_shards,)).values()
                   for i in range(num_shards)[idx[0]]})
    # a problem found here is raised on every process (the others would wait for this one)
    problem, message = 0, ""
    try:
        _check_corpus(part)
    except ValueError as e:
        problem, message = 2, str(e)
        part = Corpus.from_token_lists([["-"]])  # a stand-in, to take part in the exchange below
    if not problem and not mine:
        problem = 3
    if not problem and len(mine) > part.num_docs:
        problem = 1
    lengths = part.doc_lengths
    members: list[np.ndarray] = []
    if not problem and mine:
        shard_of, _, _ = layout.pack(lengths, len(mine))
        members = [np.flatnonzero(shard_of == p) for p in range(len(mine))]
    names = np.array([int(n) if n.isdigit() else -1 for n in (part.doc_names[0], part.doc_names[-1])], np.int64)
    tokens = max((int(lengths[m].sum()) for m in members), default=0)
    rows = max((m.size for m in members), default=0)
    stats = np.array([part.num_docs, part.vocab_size, rows, tokens, int(lengths.max()), len(mine), problem,
                      *names], np.int64)
    every = np.asarray(multihost_utils.process_allgather(stats)).reshape(-1, stats.size)
    here = jax.process_index()
    if (every[:, 6] == 2).any():
        p = int(np.flatnonzero(every[:, 6] == 2)[0])
        raise ValueError(message if p == here else f"the part of process {p} cannot be sampled (an empty "
                         "document, or no tokens); see the error on that process")
    if (every[:, 6] == 3).any():
        p = int(np.flatnonzero(every[:, 6] == 3)[0])
        raise ValueError(f"process {p} has no device among devices, so its documents would have no shard: give "
                         "devices of every process (default: jax.devices())")
    if (every[:, 6] > 0).any():
        p = int(np.flatnonzero(every[:, 6])[0])
        raise ValueError(f"process {p} holds {every[p, 0]} documents but {every[p, 5]} shards: every shard needs "
                         "a document; give fewer shards (or devices), or that process a larger part")
    if len(set(every[:, 1].tolist())) > 1:
        raise ValueError(f"the parts have different vocabulary sizes ({sorted(set(every[:, 1].tolist()))}): give "
                         "every process the same vocabulary file")
    named = every[:, 7:]
    if (named >= 0).all() and (np.any(named[:, 1] < named[:, 0]) or np.any(named[1:, 0] <= named[:-1, 1])):
        raise ValueError("the parts are not in corpus order: process p must read the p-th part "
                         "(e.g. part=(jax.process_index(), jax.process_count()))")
    first_id = int(every[:here, 0].sum())
    if num_lanes is None:
        num_lanes = min(int(every[:, 2].max()), max(1, math.ceil(int(every[:, 3].max()) / int(every[:, 4].max()))))
    num_lanes = check_int("num_lanes", num_lanes, 1)
    pieces = [{"grid": layout.grid(part.subset(m), min(num_lanes, m.size)), "lengths": lengths[m],
               "ids": first_id + m} for m in members]
    steps_here = max((pc["grid"][0].shape[0] for pc in pieces), default=0)
    steps = int(np.asarray(multihost_utils.process_allgather(np.array([steps_here], np.int64))).max())
    local = _stack_shards(pieces, int(every[:, 2].max()), steps, num_lanes)
    where = {shard: j for j, shard in enumerate(mine)}

    def global_array(host):
        shape = (num_shards,) + host.shape[1:]

        def piece(idx):
            return host[[where[i] for i in range(num_shards)[idx[0]]]]

        return jax.make_array_from_callback(shape, sharding, piece)

    return LDAData(*(global_array(local[name]) for name in LDAData._fields))


def _check_corpus(corpus) -> None:
    """``lda.data``'s ``ValueError`` for a non-corpus, an empty corpus or an empty document."""
    if not isinstance(corpus, Corpus) or corpus.num_docs == 0 or corpus.num_tokens == 0 \
            or np.any(corpus.doc_lengths == 0):
        layout.data(corpus, num_lanes=1)  # raises, naming what is wrong


def host_array(x) -> np.ndarray:
    """``x`` on the host, gathered from every process when it is a global array of several.

    With ``jax.distributed`` this is a collective: every process must call it.

    Parameters
    ----------
    x : array_like
        A NumPy array, a ``jax.Array`` or a global array over several processes.

    Returns
    -------
    numpy.ndarray
        The whole array.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> host_array(jnp.arange(3)).tolist()
    [0, 1, 2]
    """
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)


def tokens_in_corpus_order(sd: LDAData, values) -> np.ndarray:
    """Map a sharded grid array (P, S, R) (e.g. a state's ``z``) to corpus order (N,), on the host.

    Parameters
    ----------
    sd : LDAData
        Sharded data (:func:`shard_data`, :func:`from_parts`).
    values : array_like
        (P, S, R): one value per grid slot.

    Returns
    -------
    numpy.ndarray
        (N,): the values of the real slots, in corpus order.

    Examples
    --------
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> sd = shard_data(c, 2)
    >>> tokens_in_corpus_order(sd, sd.words).tolist() == c.tokens.tolist()
    True
    """
    vals = host_array(values)
    sd = LDAData(*(host_array(f) for f in sd))
    ids = sd.doc_ids[:, :-1]
    lengths = sd.doc_lengths
    num_docs = int(ids.max()) + 1
    full = np.zeros(num_docs, np.int64)
    full[ids[ids >= 0]] = lengths[ids >= 0]
    offsets = np.concatenate([[0], np.cumsum(full)])
    out = np.empty(int(offsets[-1]), vals.dtype)
    for p in range(vals.shape[0]):
        real = ids[p] >= 0
        local = LDAData(*(np.asarray(f[p]) for f in sd))
        local = local._replace(doc_lengths=lengths[p][real])
        flat = layout.tokens_in_corpus_order(local, vals[p])
        # the shard's documents, in corpus order, one after another
        starts = offsets[ids[p][real]]
        pos = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths[p][real])[:-1]]), lengths[p][real])
        out[pos + np.arange(flat.size)] = flat
    return out


def docs_in_corpus_order(sd: LDAData, values, axis: int | None = None) -> np.ndarray:
    """Map per-shard document rows (..., P, D_s, ...) to corpus order (..., D, ...), on the host.

    Parameters
    ----------
    sd : LDAData
        Sharded data (:func:`shard_data`, :func:`from_parts`).
    values : array_like
        Has the shard axis and the row axis next to each other, anywhere (chains first allowed).
    axis : int, optional
        The shard axis (negative counts from the end).  Default: the first pair of axes of
        sizes (P, D_s); give it where another axis may have those sizes too (2 chains of a
        corpus of 4 documents in 2 shards: (2, 2, 2, K)).

    Returns
    -------
    numpy.ndarray
        The two axes replaced by one document axis, in corpus order.

    Examples
    --------
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> sd = shard_data(c, 2)
    >>> docs_in_corpus_order(sd, sd.doc_lengths).tolist()
    [3, 1, 2, 1]
    """
    vals = host_array(values)
    ids = host_array(sd.doc_ids)[:, :-1]
    p, rows = ids.shape
    if axis is None:
        axis = next(i for i in range(vals.ndim - 1) if vals.shape[i:i + 2] == (p, rows))
    axis = axis % vals.ndim
    if vals.shape[axis:axis + 2] != (p, rows):
        raise ValueError(f"values of shape {vals.shape} have no ({p} shards, {rows} rows) axes at {axis}")
    merged = vals.reshape(vals.shape[:axis] + (p * rows,) + vals.shape[axis + 2:])
    flat = ids.reshape(-1)
    order = np.argsort(np.where(flat >= 0, flat, np.iinfo(np.int32).max), kind="stable")[: int((flat >= 0).sum())]
    return np.take(merged, order, axis=axis)
