"""The partially collapsed LDA sampler with documents sharded over devices (and hosts).

Magnusson, Jonsson, Villani & Broman (2018): given φ the documents are independent,
so each device updates the topics of its own documents, and a sweep exchanges only
the K × V topic–word counts.  One sweep, inside ``jax.shard_map`` over the mesh axis
:data:`AXIS`:

1. φ_k ~ Dir(n_k· + η) from the summed counts of the previous sweep, with the SAME
   key on every device: every device holds the same φ, bit for bit;
2. each device updates its documents' topics, p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i}
   (n_dk,−i + α), with the fastest z-update for the backend
   (:func:`gibbsjax.models.lda.z_updates.resolve_z_update`) and each token's uniform keyed by
   its document and position (:func:`gibbsjax.models.lda.token_uniforms`);
3. the local counts n_kw are summed across devices (``jax.lax.psum``, one all-reduce
   of K × V int32) and kept in the state for the next sweep, for ``record``
   (topic shares), ``accumulate`` (E[φ | z, w]) and ``lp``, which then need no
   communication but a gather of one float per shard (``lp``'s document part).

So a chain's draws do not depend on the number of devices, nor on the packing:
with ``warmup="exact"`` (or no warm-up) they are bit-identical to the unsharded
sampler on one device; ``lp`` equal up to float summation order (its document part
is summed shard by shard).  The fast warm-up (``warmup="fast"``, approximate,
discarded) runs the document-parallel collapsed sweep on every shard from the summed
counts, so it is AD-LDA across shards too: its path depends on the number of shards
(not on the number of devices that hold them).

Data: :func:`shard_data` assigns whole documents to shards, balanced by tokens
(longest first to the lightest shard), and packs each shard into its own (S × R)
grid of the same shape; the result is an :class:`~gibbsjax.models.lda.LDAData` with
a leading shard axis.  The runner does all this for ``sample(..., devices=N)`` when
the chains do not fill the devices (``Kernel.shard``); per-chain ``doc_topic`` means
come back in corpus order.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.scipy.special import gammaln
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from gibbsjax import conjugate as cj
from gibbsjax._checks import check_int
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import Kernel, Sharded
from gibbsjax.models.lda import layout
from gibbsjax.models.lda.conditionals import log_phi_given_counts, sample_z_collapsed_parallel
from gibbsjax.models.lda.layout import LDAData, LDAState
from gibbsjax.models.lda.z_updates import FAST_WARMUP_NAME, SAMPLE_Z
from gibbsjax.rows import check_devices
from gibbsjax.sources import is_number, read_corpus
from gibbsjax.spec import ConfigError, DataWithExtras

__all__ = [
    "AXIS",
    "LDAShardState",
    "shard_data",
    "from_parts",
    "config_data",
    "corpus_of",
    "tokens_in_corpus_order",
    "docs_in_corpus_order",
    "sharded_kernel",
    "plan",
    "bytes_exchanged_per_sweep",
    "collective_bytes",
]

#: the mesh axis the documents are split along
AXIS = "docs"


# ============================================================================ data
def corpus_of(d: LDAData) -> Corpus:
    """The corpus packed in ``d`` (tokens in corpus order; words named by their ids).

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
    ``num_lanes`` (R, the same on every shard, so one shard and many run the same
    per-row arithmetic) defaults to the rule of ``lda.data`` applied to the largest
    shard: ceil(tokens / longest document).

    Returns an :class:`~gibbsjax.models.lda.LDAData` whose every field has a leading
    shard axis: ``words``/``docs``/``mask`` (P, S, R), ``doc_lengths`` (P, D_s) (unused
    rows: 0), ``word_counts`` (P, V) (the shard's own), ``first_step`` and
    ``doc_ids`` (P, D_s + 1) (``doc_ids``: each row's document in the corpus, −1 for
    unused rows and the dummy row D_s).  ``ValueError`` for bad input, as ``lda.data``,
    or more shards than documents.

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

    Returns the :class:`~gibbsjax.models.lda.LDAData` of :func:`shard_data`, its arrays
    global ``jax.Array`` s split over ``devices`` along the shard axis; pass it to
    :func:`gibbsjax.sample` with ``devices`` (``jax.device_count()``) and fewer chains than
    devices (or ``shard="data"``).  ``ValueError`` (on every process) for a part with an
    empty document, parts over different vocabularies, a process with fewer documents
    than shards, or parts out of order (when the documents are named by their index in the
    file, as :func:`~gibbsjax.corpus.read_ldac` and :func:`~gibbsjax.corpus.read_uci` name them).

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


def config_data(section, base_dir):
    """A config's ``[data]`` for ``lda.partially_collapsed`` run by several processes
    (``jax.distributed``): this process's part of an ``ldac`` / ``uci`` ``file``
    (``part=(jax.process_index(), jax.process_count())``) packed by :func:`from_parts`.

    Keys as for one process (``file``, ``format``, ``vocab``, ``num_lanes``); ``vocab``
    is required for ``ldac``; ``heldout`` is refused (a held-out split would differ
    from the one of a whole-file read).  The extras hold no corpus (no process has it
    all), so the postprocess names no words by text beyond the vocabulary's ids and
    computes no coherence.  Returns a :class:`~gibbsjax.spec.DataWithExtras`.

    >>> import pathlib, tempfile
    >>> from gibbsjax.corpus import write_uci
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_uci(Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"]]), d / "dw.txt", d / "v.txt")
    >>> config_data({"file": "dw.txt", "vocab": "v.txt", "format": "uci"}, d).data.words.shape[0] == len(jax.devices())
    True
    """
    heldout = section.get("heldout", 0.0)
    if not is_number(heldout) or float(heldout) != 0.0:
        raise ConfigError("[data] heldout is not available when every process reads its part of the corpus")
    corpus = read_corpus(section, base_dir, ("heldout", "split_seed", "num_lanes"),
                         part=(jax.process_index(), jax.process_count()))
    return DataWithExtras(from_parts(corpus, num_lanes=section.get("num_lanes")), {"corpus": None, "heldout": None})


def _check_corpus(corpus) -> None:
    """``lda.data``'s ``ValueError`` for a non-corpus, an empty corpus or an empty document."""
    if not isinstance(corpus, Corpus) or corpus.num_docs == 0 or corpus.num_tokens == 0 \
            or np.any(corpus.doc_lengths == 0):
        layout.data(corpus, num_lanes=1)  # raises, naming what is wrong


def _host(x) -> np.ndarray:
    """``x`` on the host, gathered from every process when it is a global array of several
    (``jax.distributed``; then a collective: every process must call it)."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)


def tokens_in_corpus_order(sd: LDAData, values) -> np.ndarray:
    """Map a sharded grid array (P, S, R) (e.g. a state's ``z``) to corpus order (N,), on the host.

    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> sd = shard_data(c, 2)
    >>> tokens_in_corpus_order(sd, sd.words).tolist() == c.tokens.tolist()
    True
    """
    vals = _host(values)
    sd = LDAData(*(_host(f) for f in sd))
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


def docs_in_corpus_order(sd: LDAData, values) -> np.ndarray:
    """Map per-shard document rows (..., P, D_s, ...) to corpus order (..., D, ...), on the host:
    ``values`` has the shard axis and the row axis next to each other, anywhere (chains first allowed).

    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> sd = shard_data(c, 2)
    >>> docs_in_corpus_order(sd, sd.doc_lengths).tolist()
    [3, 1, 2, 1]
    """
    vals = _host(values)
    ids = _host(sd.doc_ids)[:, :-1]
    p, rows = ids.shape
    axis = next(i for i in range(vals.ndim - 1) if vals.shape[i:i + 2] == (p, rows))
    merged = vals.reshape(vals.shape[:axis] + (p * rows,) + vals.shape[axis + 2:])
    flat = ids.reshape(-1)
    order = np.argsort(np.where(flat >= 0, flat, np.iinfo(np.int32).max), kind="stable")[: int((flat >= 0).sum())]
    return np.take(merged, order, axis=axis)


# ============================================================================ kernel
class LDAShardState(NamedTuple):
    """One chain's state with documents sharded: ``z`` (P, S, R) split over the devices,
    ``log_phi`` (K, V) and the summed counts ``nkw`` (K, V) int32 of ``z``, the same on
    every device."""

    z: jax.Array
    log_phi: jax.Array
    nkw: jax.Array


def _counts(z, d: LDAData, K: int):
    """n_kw (K, V) of the local shards' tokens (any leading axes), summed over the devices."""
    local = cj.counts((z, d.words), (K, d.word_counts.shape[-1]), d.mask)
    return jax.lax.psum(local, AXIS)


@functools.lru_cache(maxsize=32)
def sharded_kernel(K: int, alpha: float, eta: float, z_update: str, warmup: str, mesh: Mesh,
                   dirichlet_draw: str = "sparse") -> Kernel:
    """The partially collapsed LDA kernel on data from :func:`shard_data`, its shards split
    over ``mesh`` (one axis, :data:`AXIS`; several shards per device allowed).

    The same sweep as ``lda.partially_collapsed(K, alpha, eta, z_update=..., warmup=..., dirichlet_draw=...)``
    (φ | z, then z | φ), the same keys and uniforms, written for sharded data (see the
    module docs); its state is an :class:`LDAShardState`.  Cached per arguments.

    >>> import jax
    >>> from jax.sharding import Mesh
    >>> import numpy as np
    >>> mesh = Mesh(np.array(jax.devices()[:1]), (AXIS,))
    >>> k = sharded_kernel(2, 0.1, 0.01, "lanes", "exact", mesh)
    >>> k.name
    'lda.partially_collapsed'
    """
    sample_z = SAMPLE_Z[z_update]
    data_spec, rep = P(AXIS), P()

    def on_shards(fn, in_specs, out_specs):
        # check_vma=False: the z-updates' scans start from fresh (unsharded) carries; what
        # leaves as replicated (P()) is replicated by construction (psum, same key)
        return jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)

    def per_shard(fn, *args):
        """``fn`` on each local shard (the leading axis of the data-shaped arguments)."""
        return jax.vmap(fn)(*args)

    def init(key, sd: LDAData):
        def local(key, sd):
            k1, k2 = jax.random.split(key)
            z = per_shard(lambda d: layout.initial_topics(k1, d, K), sd)
            nkw = _counts(z, sd, K)
            return z, log_phi_given_counts(k2, nkw, eta, dirichlet_draw), nkw

        z, log_phi, nkw = on_shards(local, (rep, data_spec), (data_spec, rep, rep))(key, sd)
        return LDAShardState(z, log_phi, nkw)

    def z_sweep(key, state: LDAShardState, sd: LDAData):
        def local(key, z, nkw, sd):
            k_phi, k_z = jax.random.split(key)  # as sweep(("log_phi", ...), ("z", ...))
            log_phi = log_phi_given_counts(k_phi, nkw, eta, dirichlet_draw)
            z = per_shard(lambda z, d: sample_z(k_z, LDAState(z, log_phi), d, K=K, alpha=alpha), z, sd)
            return z, log_phi, _counts(z, sd, K)

        z, log_phi, nkw = on_shards(local, (rep, data_spec, rep, data_spec), (data_spec, rep, rep))(
            key, state.z, state.nkw, sd)
        return LDAShardState(z, log_phi, nkw)

    def fast_warmup(key, state: LDAShardState, sd: LDAData):
        def local(key, z, log_phi, nkw, sd):
            (k_z,) = jax.random.split(key, 1)  # as sweep(("z", ...))

            def one(z, d):
                return sample_z_collapsed_parallel(k_z, LDAState(z, log_phi), d, K=K, alpha=alpha, eta=eta,
                                                   word_topic=(nkw, nkw.sum(axis=1)))

            z = per_shard(one, z, sd)
            return z, _counts(z, sd, K)

        z, nkw = on_shards(local, (rep, data_spec, rep, rep, data_spec), (data_spec, rep))(
            key, state.z, state.log_phi, state.nkw, sd)
        return LDAShardState(z, state.log_phi, nkw)

    def record(state: LDAShardState, sd: LDAData):
        nk = state.nkw.sum(axis=1)
        return {"topic_share": nk.astype(jnp.float32) / jnp.sum(sd.doc_lengths)}

    def doc_parts(state: LDAShardState, sd: LDAData):
        """Σ over each shard's documents of Σ_k log Γ(n_dk + α) − log Γ(n_d + Kα), (P,)."""
        def local(z, sd):
            def one(z, d):
                ndk = layout.topic_counts(z, d, K)[0][:-1]
                real = d.doc_ids[:-1] >= 0
                terms = jnp.sum(gammaln(ndk + alpha), axis=1) - gammaln(d.doc_lengths + K * alpha)
                return jnp.sum(jnp.where(real, terms, 0.0))

            return jax.lax.all_gather(per_shard(one, z, sd), AXIS, tiled=True)

        return on_shards(local, (data_spec, data_spec), rep)(state.z, sd)

    def log_joint(state: LDAShardState, sd: LDAData):
        """log p(w, z), θ and φ integrated out, as ``lda.log_joint_collapsed``."""
        nkw = state.nkw
        v = sd.word_counts.shape[-1]
        num_docs = jnp.sum(sd.doc_ids[:, :-1] >= 0)
        doc_part = jnp.sum(doc_parts(state, sd)) + num_docs * (gammaln(K * alpha) - K * gammaln(alpha))
        topic_part = jnp.sum(gammaln(nkw + eta)) - jnp.sum(gammaln(nkw.sum(axis=1) + v * eta))
        topic_part += K * (gammaln(v * eta) - v * gammaln(eta))
        return doc_part + topic_part

    def accumulate(state: LDAShardState, sd: LDAData):
        nkw = state.nkw
        v = sd.word_counts.shape[-1]
        topic_word = (nkw + eta) / (nkw.sum(axis=1)[:, None] + v * eta)

        def local(z, sd):
            def one(z, d):
                ndk = layout.topic_counts(z, d, K)[0]
                return (ndk[:-1] + alpha) / (d.doc_lengths[:, None] + K * alpha)

            return per_shard(one, z, sd)

        doc_topic = on_shards(local, (data_spec, data_spec), data_spec)(state.z, sd)
        return {"topic_word": topic_word, "doc_topic": doc_topic}

    return Kernel(
        init=init,
        step=z_sweep,
        record=record,
        dims={"topic_share": ("topic",), "topic_word": ("topic", "word"),
              "doc_topic": ("shard", "shard_document", "topic")},
        log_joint=log_joint,
        name="lda.partially_collapsed",
        accumulate=accumulate,
        warmup_step=fast_warmup if warmup == "fast" else None,
        warmup_name=(FAST_WARMUP_NAME + "; with documents sharded, every shard starts from the summed "
                     "counts (AD-LDA across shards)") if warmup == "fast" else "",
        label_dims=("topic",),
        data_type=LDAData,
    )


def plan(data: LDAData | Corpus, devices: Sequence | None = None, num_shards: int | None = None, *,
         K: int, alpha: float, eta: float, z_update: str, warmup: str, num_lanes: int | None = None,
         dirichlet_draw: str = "sparse") -> Sharded:
    """``Kernel.shard`` of ``lda.partially_collapsed``: the documents of ``data`` split into
    ``num_shards`` shards (default: one per device) over ``devices`` (default: all of
    ``jax.devices()``), with the sharded kernel and the partition specs.

    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> p = lda.partially_collapsed(2).shard(lda.data(c), jax.devices()[:1], 2)
    >>> p.num_shards, p.data.words.shape[0]
    (2, 2)
    """
    devices, num_shards = check_devices(devices, num_shards)
    if isinstance(data, LDAData) and data.words.ndim == 3:
        sd = data
        if sd.words.shape[0] != num_shards:
            raise ValueError(f"data has {sd.words.shape[0]} shards, num_shards is {num_shards}")
    else:
        sd = shard_data(data, num_shards, num_lanes=num_lanes)
    mesh = Mesh(np.array(devices), (AXIS,))
    kernel = sharded_kernel(K, alpha, eta, z_update, warmup, mesh, dirichlet_draw)
    spec = P(AXIS)
    return Sharded(
        kernel=kernel,
        data=sd,
        mesh=mesh,
        data_specs=LDAData(*([spec] * len(LDAData._fields))),
        state_specs=LDAShardState(spec, P(), P()),
        acc_specs={"topic_word": P(), "doc_topic": spec},
        means=functools.partial(_means_in_corpus_order, sd._replace(doc_ids=_host(sd.doc_ids))),
        num_shards=num_shards,
        description=f"documents split into {num_shards} shards over {len(devices)} "
                    f"{devices[0].platform} device{'s' if len(devices) > 1 else ''} "
                    f"({sd.words.shape[1]} x {sd.words.shape[2]} slots per shard)",
    )


def _means_in_corpus_order(sd: LDAData, means: dict) -> dict:
    out = dict(means)
    if "doc_topic" in out:
        out["doc_topic"] = docs_in_corpus_order(sd, out["doc_topic"])
    return out


# ============================================================================ communication
#: XLA collective operations (the async ``-start`` forms on GPUs counted once)
_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")
_HLO_LINE = re.compile(r"=\s*(?P<type>.+?)\s+(?P<op>" + "|".join(_COLLECTIVES) + r")(?:-start)?\(")
_SHAPE = re.compile(r"(pred|[suf]\d+|bf16)\[([\d,]*)\]")


def collective_bytes(hlo_text: str) -> dict[str, int]:
    """Bytes of the results of every collective operation in compiled HLO text
    (``jax.jit(f).lower(...).compile().as_text()``), by operation (all-reduce: the
    summed array, which is also its operand; all-gather: the gathered array).

    >>> collective_bytes("%a = s32[20,500]{1,0} all-reduce(%x), channel_id=1")
    {'all-reduce': 40000}
    """
    out: dict[str, int] = {}
    for line in hlo_text.splitlines():
        if "-done" in line.split("=", 1)[-1].split("(", 1)[0]:
            continue
        m = _HLO_LINE.search(line)
        if m is None:
            continue
        total = 0
        for dtype, dims in _SHAPE.findall(m.group("type")):
            size = 1 if dtype == "pred" else max(1, int(re.sub(r"\D", "", dtype)) // 8)
            if dtype == "bf16":
                size = 2
            total += size * int(np.prod([int(x) for x in dims.split(",") if x] or [1]))
        out[m.group("op")] = out.get(m.group("op"), 0) + total
    return out


def bytes_exchanged_per_sweep(sharded: Sharded) -> dict[str, int]:
    """Bytes one chain's sweep exchanges between devices, read from XLA's compiled code of
    ``sharded.kernel.step`` (and of ``record`` + ``log_joint``, what a kept draw adds), on
    abstract arguments (nothing runs): ``{"sweep": ..., "record": ...}``.  For the LDA
    sampler the sweep's is the K × V int32 count table, whatever the number of tokens.

    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    >>> p = lda.partially_collapsed(2).shard(lda.data(c), jax.devices()[:1])
    >>> bytes_exchanged_per_sweep(p)["sweep"] in (0, 2 * 3 * 4)
    True
    """
    k = sharded.kernel
    key = jax.random.key(0)
    state = jax.eval_shape(k.init, key, sharded.data)

    def text(fn, *args):
        return jax.jit(fn).lower(*args).compile().as_text()

    def records(state, data):
        return k.record(state, data), k.log_joint(state, data)

    sweep_bytes = sum(collective_bytes(text(k.step, key, state, sharded.data)).values())
    record_bytes = sum(collective_bytes(text(records, state, sharded.data)).values())
    return {"sweep": sweep_bytes, "record": record_bytes}
