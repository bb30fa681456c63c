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
is summed shard by shard).  So are those of the default warm-up on a CPU
(``warmup="fast"``, approximate, discarded): its collapsed sweeps read the word–topic
counts frozen at the start of the sweep, which are the summed counts the state already
holds, so every shard sees what one device would.  Only the opt-in
``warmup="fast_grid"`` (counts refreshed per grid step) runs on every shard from the
summed counts and sees only its own updates within the sweep: AD-LDA across shards, whose
path depends on the number of shards (not on the number of devices that hold them).

Data (:mod:`gibbsjax.models.lda.shard_layout`, re-exported here): :func:`shard_data`
assigns whole documents to shards, balanced by tokens (longest first to the lightest
shard), and packs each shard into its own (S × R) grid of the same shape; the result
is an :class:`~gibbsjax.models.lda.LDAData` with a leading shard axis.  The runner does all this for ``sample(..., devices=N)`` when
the chains do not fill the devices (``Kernel.shard``); per-chain ``doc_topic`` means
come back in corpus order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from gibbsjax import conjugate as cj
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import Kernel, Sharded
from gibbsjax.models.lda import layout
from gibbsjax.models.lda.conditionals import log_phi_given_counts
from gibbsjax.models.lda.layout import LDAData, LDAState
from gibbsjax.models.lda.shard_layout import (AXIS, corpus_of, docs_in_corpus_order, from_parts,
                                              host_array, shard_data, tokens_in_corpus_order)
from gibbsjax.models.lda.z_updates import SAMPLE_Z, WARMUP_NAMES, WARMUP_SWEEPS, resolve_warmup, warmup_sweep
from gibbsjax.rows import check_devices

__all__ = [
    "AXIS",
    "LDAShardState",
    "shard_data",
    "from_parts",
    "corpus_of",
    "tokens_in_corpus_order",
    "docs_in_corpus_order",
    "sharded_kernel",
    "plan",
    "bytes_exchanged_per_sweep",
    "collective_bytes",
]

# ============================================================================ kernel
class LDAShardState(NamedTuple):
    """One chain's state with documents sharded.

    Parameters
    ----------
    z : jax.Array
        (P, S, R) int32 topics, split over the devices.
    log_phi : jax.Array
        (K, V): log φ, the same on every device.
    nkw : jax.Array
        (K, V) int32: the counts of ``z`` summed over the shards, the same on every device.

    Examples
    --------
    >>> from gibbsjax.models.lda.shard import LDAShardState
    >>> LDAShardState._fields[:2]
    ('z', 'log_phi')
    """

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

    Parameters
    ----------
    K : int
        Number of topics.
    alpha, eta : float
        Symmetric concentrations of θ and φ.
    z_update : str
        A resolved z-update (:func:`gibbsjax.models.lda.resolve_z_update`).
    warmup : {"fast", "fast_grid", "exact", "auto"}
        The warm-up, as for ``lda.partially_collapsed``.
    mesh : jax.sharding.Mesh
        One axis, :data:`AXIS`.
    dirichlet_draw : {"sparse", "dense"}, default "sparse"
        The φ draw (resolved).

    Returns
    -------
    gibbsjax.kernel.Kernel
        The kernel, on sharded data.

    Examples
    --------
    >>> import jax
    >>> from jax.sharding import Mesh
    >>> import numpy as np
    >>> mesh = Mesh(np.array(jax.devices()[:1]), (AXIS,))
    >>> k = sharded_kernel(2, 0.1, 0.01, "lanes", "exact", mesh)
    >>> k.name
    'lda.partially_collapsed'
    """
    sample_z = SAMPLE_Z[z_update]
    warmup = resolve_warmup(warmup)
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
            k1, _ = jax.random.split(key)  # as the one-device init
            z = per_shard(lambda d: layout.initial_topics(k1, d, K), sd)
            nkw = _counts(z, sd, K)
            return z, layout.initial_log_phi(nkw, eta), nkw  # unread: every sweep draws φ first

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
                return warmup_sweep(warmup, z_update)(k_z, LDAState(z, log_phi), d, K=K, alpha=alpha, eta=eta,
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
        warmup_step=fast_warmup if warmup in WARMUP_SWEEPS else None,
        warmup_name=WARMUP_NAMES.get(warmup, "") + ("; with documents sharded, every shard starts from the "
                                                    "summed counts (AD-LDA across shards)"
                                                    if warmup == "fast_grid" else ""),
        label_dims=("topic",),
        data_type=LDAData,
        check_state=functools.partial(_check_counts, K=K),
    )


def _check_counts(state, sd, label=None, *, K: int) -> None:
    """``Kernel.check_state``: the count table nkw (C, K, V) of a (resumed) state equals the counts of its
    topics z (C, P, S, R; padding masked), or ``ValueError`` naming the first entry that does not."""
    z, nkw = np.asarray(state.z), np.asarray(state.nkw)
    words, mask = np.asarray(sd.words), np.asarray(sd.mask, bool)
    v = nkw.shape[-1]
    flat = words[mask].astype(np.int64)
    for c in range(z.shape[0]):
        want = np.bincount(z[c][mask].astype(np.int64) * v + flat, minlength=K * v).reshape(K, v)
        bad = np.argwhere(nkw[c] != want)
        if bad.size:
            k, w = (int(i) for i in bad[0])
            name, zname = ("init['nkw']", "z") if label is None else (label("nkw"), label("z"))
            raise ValueError(f"{name} holds {int(nkw[c, k, w])} at {(c, k, w)}, but {zname} assigns "
                             f"{int(want[k, w])} tokens of word {w} to topic {k} in chain {c}")


def plan(data: LDAData | Corpus, devices: Sequence | None = None, num_shards: int | None = None, *,
         K: int, alpha: float, eta: float, z_update: str, warmup: str, num_lanes: int | None = None,
         dirichlet_draw: str = "sparse") -> Sharded:
    """``Kernel.shard`` of ``lda.partially_collapsed``: the documents of ``data`` split into
    ``num_shards`` shards (default: one per device) over ``devices`` (default: all of
    ``jax.devices()``), with the sharded kernel and the partition specs.

    Parameters
    ----------
    data : LDAData or gibbsjax.corpus.Corpus
        Unsharded data, or data already sharded into ``num_shards`` shards.
    devices : sequence of jax.Device, optional
        Default: all of ``jax.devices()``.
    num_shards : int, optional
        A multiple of the number of devices (default: one shard per device).
    K, alpha, eta, z_update, warmup
        As for :func:`sharded_kernel`.
    num_lanes : int, optional
        As for :func:`shard_data`.
    dirichlet_draw : {"sparse", "dense"}, default "sparse"
        As for :func:`sharded_kernel`.

    Returns
    -------
    gibbsjax.kernel.Sharded
        The kernel, the sharded data, the mesh and the partition specs.

    Raises
    ------
    ValueError
        For sharded data with another number of shards, or bad devices.

    Examples
    --------
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
        means=functools.partial(_means_in_corpus_order, sd._replace(doc_ids=host_array(sd.doc_ids))),
        num_shards=num_shards,
        description=f"documents split into {num_shards} shards over {len(devices)} "
                    f"{devices[0].platform} device{'s' if len(devices) > 1 else ''} "
                    f"({sd.words.shape[1]} x {sd.words.shape[2]} slots per shard)",
    )


def _means_in_corpus_order(sd: LDAData, means: dict) -> dict:
    out = dict(means)
    if "doc_topic" in out:
        out["doc_topic"] = docs_in_corpus_order(sd, out["doc_topic"], axis=-3)  # (chains, P, D_s, K)
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

    Parameters
    ----------
    hlo_text : str
        Compiled HLO text.

    Returns
    -------
    dict of str to int
        Bytes per operation name.

    Examples
    --------
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

    Parameters
    ----------
    sharded : gibbsjax.kernel.Sharded
        A sharded kernel with its data (e.g. from :func:`plan`).

    Returns
    -------
    dict of str to int
        ``{"sweep": ..., "record": ...}``.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> import jax
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
