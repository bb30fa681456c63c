"""Stable topics: the topics that recur across many chains, found by clustering the topics of all chains.

LDA posteriors have many modes and chains of an exact sampler settle in
different ones, so "which topics does every chain reproduce" (the
``agreement`` group, :mod:`gibbsjax.labels`) is often "few".  With many chains
(cheap: they run side by side) the useful question is which topics *recur*:
a topic that most chains find is one a user can rely on, whatever the chains
do with their other topics (gensim's ``EnsembleLda`` keeps topics that recur
across models in the same spirit; Greene, O'Callaghan & Cunningham 2014 score
a number of topics K by how well runs agree, see :mod:`gibbsjax.topics.choose_k`).

:func:`stable_topics` clusters the topics of all chains by Hellinger distance
and reports every cluster that at least ``min_share`` of the chains hold (and
at least two chains) as a stable topic (:class:`StableTopics`): how many
chains hold it, how far they spread around its centre, its top words, R-hat
of its share of tokens over the chains that hold it, and its estimate, the
mean of those chains' estimates only.  Clusters held by fewer chains are kept
apart as *rare topics*, never blended into a stable one.

:func:`add_stable_topics` stores the result as the ``stable_topics`` group of
an InferenceData (the LDA post-processing does, so ``gibbsjax run`` and
:class:`gibbsjax.LDA` results carry it); :func:`stable_topics_of` reads it back
(or computes it); :func:`report_lines` words it for the reports.

>>> import numpy as np
>>> est = np.array([[[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]],
...                 [[0.1, 0.1, 0.8], [0.8, 0.1, 0.1]],     # the same two topics, other slots
...                 [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]]])    # a third topic in one chain only
>>> st = stable_topics(est, vocab=["apple", "bond", "cat"])
>>> st.verdict
'stable topics: 2 of 2 (held by >= 50% of 3 chains)'
>>> st.recurrence.tolist(), st.top_words[0][0], st.num_rare
([3, 2, 1], 'apple', 1)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from numbers import Real

import numpy as np

from gibbsjax._checks import first_where
from gibbsjax.agreement import AGREEMENT_THRESHOLD, reference_chain
from gibbsjax.spec import replace_group

__all__ = ["MIN_SHARE", "RULE", "SEED_CHAINS", "StableTopics", "stable_topics", "stable_topics_of",
           "add_stable_topics", "summary_rows", "report_lines"]

#: default share of chains a cluster needs to be a stable topic: a majority (at least half) of the
#: chains; whatever the share, at least two chains (a topic one chain holds is never stable)
MIN_SHARE = 0.5

#: the clustering rule, as stored in the ``stable_topics`` group's attributes
RULE = ("leader clustering of the topics of all chains by Hellinger distance, seeded by the reference chain's "
        "topics (the chain with the highest mean lp), then by unassigned topics in chain order; a topic joins "
        "the nearest cluster within the threshold, at most one topic per chain per cluster (greedy, nearest "
        "pairs first); one refinement pass with the clusters' mean word distributions as centres; a cluster "
        "held by at least min_share of the chains (and at least 2) is a stable topic, its estimate the mean "
        "of those chains' topics")

#: chains whose topics seed the clusters (the first ones, and the reference chain): a topic that a
#: share s of the chains holds is among their topics with probability 1 − (1 − s)^64 (> 1 − 1e-19
#: for a majority, 96% for s = 5%)
SEED_CHAINS = 64

#: bytes of square-root probabilities (float32) held at once while comparing topics with centres
BLOCK_BYTES = 2**27


@dataclass(frozen=True)
class StableTopics:
    """Topics clustered across chains, from :func:`stable_topics`.

    Clusters are numbered stable first, then rare, each part by decreasing
    recurrence (then increasing spread).  The fields, in order:

    Parameters
    ----------
    assignment : numpy.ndarray of int, shape (chain, K)
        The cluster of each chain's topic slot (−1: none).
    recurrence : numpy.ndarray of int, shape (M,)
        How many chains hold each cluster (one topic per chain at most).
    spread_mean, spread_max : numpy.ndarray, shape (M,)
        Mean and largest Hellinger distance of the members to the cluster's centre
        (the mean of their word distributions).
    rhat : numpy.ndarray, shape (M,)
        R-hat of the cluster's share of tokens over the chains that hold it (NaN
        without per-draw values or with fewer than 2 such chains).
    topic_word : numpy.ndarray, shape (S, V)
        The stable topics' estimates (mean over the chains that hold them).
    num_stable : int
        S, the number of stable topics (clusters ``0 .. S-1``).
    num_chains : int
        Number of chains.
    num_topics : int
        K, the number of topics per chain.
    threshold : float
        The Hellinger distance within which a topic joins a cluster.
    min_share : float
        Share of the chains a stable topic needs.
    min_chains : int
        Chains a stable topic needs (at least 2).
    reference_chain : int
        The chain whose topics seeded the clusters.
    top_words : tuple of tuple of str, default ()
        The top words of every cluster (empty without a vocabulary).
    rule : str, default RULE
        The clustering rule, in words (:data:`RULE`).
    num_unclustered : int, default 0
        Topics (of chains beyond the ``seed_chains`` that seeded the clusters) that
        match no cluster, ``assignment`` −1: rare, each held by one chain as far as
        the clustering looked.
    seed_chains : int, default SEED_CHAINS
        Chains whose topics seeded the clusters.

    Examples
    --------
    >>> st = stable_topics(np.array([[[0.9, 0.1]], [[0.88, 0.12]]]))
    >>> st.num_stable, st.share.tolist(), st.holders(0)
    (1, [1.0], ([0, 1], [0, 0]))
    """

    assignment: np.ndarray
    recurrence: np.ndarray
    spread_mean: np.ndarray
    spread_max: np.ndarray
    rhat: np.ndarray
    topic_word: np.ndarray
    num_stable: int
    num_chains: int
    num_topics: int
    threshold: float
    min_share: float
    min_chains: int
    reference_chain: int
    top_words: tuple = ()
    rule: str = RULE
    num_unclustered: int = 0
    seed_chains: int = SEED_CHAINS

    @property
    def num_clusters(self) -> int:
        """M, the number of clusters, stable and rare."""
        return int(self.recurrence.size)

    @property
    def num_rare(self) -> int:
        """The number of rare clusters, M − S."""
        return self.num_clusters - self.num_stable

    @property
    def share(self) -> np.ndarray:
        """(M,) the share of chains that hold each cluster."""
        return self.recurrence / float(self.num_chains)

    @property
    def stable_share(self) -> float:
        """Stable topics per topic of a chain, S / K (1.0: every topic of a chain is stable)."""
        return self.num_stable / float(self.num_topics)

    def holders(self, cluster: int) -> tuple[list[int], list[int]]:
        """The chains that hold ``cluster`` and the topic slot each holds it in.

        Parameters
        ----------
        cluster : int
            A cluster index.

        Returns
        -------
        chains : list of int
            The chains that hold the cluster, in increasing order.
        slots : list of int
            The topic slot of each of those chains.

        Examples
        --------
        >>> st = stable_topics(np.array([[[0.9, 0.1]], [[0.88, 0.12]]]))
        >>> st.holders(0)  # both chains hold cluster 0, each in its topic slot 0
        ([0, 1], [0, 0])
        """
        chains, slots = np.nonzero(self.assignment == int(cluster))
        return chains.tolist(), slots.tolist()

    @property
    def verdict(self) -> str:
        """One line: ``"stable topics: 6 of 8 (held by >= 50% of 16 chains)"``."""
        if self.num_chains < 2:
            return "stable topics: none (one chain: a stable topic needs at least 2 chains that hold it)"
        count = f"{self.num_stable} of {self.num_topics}" if self.num_stable <= self.num_topics else \
            f"{self.num_stable} (more than the {self.num_topics} each chain has: chains hold different subsets)"
        return f"stable topics: {count} (held by >= {self.min_share:.0%} of {self.num_chains} chains)"

    def table(self, *, rare: bool = False) -> list[dict]:
        """One dict per stable topic (with ``rare=True``, per rare cluster).

        Parameters
        ----------
        rare : bool, default False
            List the rare clusters instead of the stable topics.

        Returns
        -------
        list of dict
            Keys ``cluster``, ``chains``, ``share``, ``spread_mean``, ``spread_max``,
            ``rhat``, ``top_words``.

        Examples
        --------
        >>> stable_topics(np.array([[[0.9, 0.1]], [[0.88, 0.12]]])).table()[0]["chains"]
        2
        """
        index = range(self.num_stable, self.num_clusters) if rare else range(self.num_stable)
        return [{"cluster": m, "chains": int(self.recurrence[m]), "share": float(self.share[m]),
                 "spread_mean": float(self.spread_mean[m]), "spread_max": float(self.spread_max[m]),
                 "rhat": float(self.rhat[m]),
                 "top_words": list(self.top_words[m]) if self.top_words else []} for m in index]

    def to_dataset(self):
        """The ``stable_topics`` InferenceData group.

        Returns
        -------
        xarray.Dataset
            Variables ``assignment`` (chain, topic), ``recurrence``, ``spread_mean``,
            ``spread_max``, ``rhat``, ``stable`` (cluster), ``topic_word``
            (stable_topic, word); attributes ``rule``, ``threshold``, ``min_share``,
            ``min_chains``, ``num_stable``, ``num_topics``, ``reference_chain``,
            ``verdict``, ``top_words`` (JSON, per cluster), ``num_unclustered``,
            ``seed_chains``.

        Examples
        --------
        >>> st = stable_topics(np.array([[[0.9, 0.1]], [[0.88, 0.12]]]))
        >>> StableTopics.from_dataset(st.to_dataset()).verdict == st.verdict
        True
        """
        import xarray as xr

        m = self.num_clusters
        return xr.Dataset(
            {"assignment": (("chain", "topic"), self.assignment.astype(np.int32)),
             "recurrence": (("cluster",), self.recurrence.astype(np.int32)),
             "spread_mean": (("cluster",), self.spread_mean.astype(np.float64)),
             "spread_max": (("cluster",), self.spread_max.astype(np.float64)),
             "rhat": (("cluster",), self.rhat.astype(np.float64)),
             "stable": (("cluster",), (np.arange(m) < self.num_stable).astype(np.int8)),
             "topic_word": (("stable_topic", "word"), self.topic_word.astype(np.float32))},
            coords={"chain": np.arange(self.num_chains), "topic": np.arange(self.num_topics),
                    "cluster": np.arange(m), "stable_topic": np.arange(self.num_stable)},
            attrs={"rule": self.rule, "threshold": float(self.threshold), "min_share": float(self.min_share),
                   "min_chains": int(self.min_chains), "num_stable": int(self.num_stable),
                   "num_topics": int(self.num_topics), "reference_chain": int(self.reference_chain),
                   "verdict": self.verdict, "top_words": json.dumps([list(w) for w in self.top_words]),
                   "num_unclustered": int(self.num_unclustered), "seed_chains": int(self.seed_chains)},
        )

    @classmethod
    def from_dataset(cls, ds) -> StableTopics:
        """Read back the group :meth:`to_dataset` wrote.

        Parameters
        ----------
        ds : xarray.Dataset
            The group (e.g. ``idata.stable_topics`` of a saved file).

        Returns
        -------
        StableTopics
            The stable topics it holds.

        Examples
        --------
        See :meth:`to_dataset`.
        """
        a = ds.attrs
        words = json.loads(str(a.get("top_words", "[]")) or "[]")
        return cls(assignment=np.asarray(ds["assignment"].transpose("chain", "topic").values, np.int64),
                   recurrence=np.asarray(ds["recurrence"].values, np.int64),
                   spread_mean=np.asarray(ds["spread_mean"].values, np.float64),
                   spread_max=np.asarray(ds["spread_max"].values, np.float64),
                   rhat=np.asarray(ds["rhat"].values, np.float64),
                   topic_word=np.asarray(ds["topic_word"].transpose("stable_topic", "word").values, np.float64),
                   num_stable=int(a["num_stable"]), num_chains=int(ds.sizes["chain"]),
                   num_topics=int(a["num_topics"]), threshold=float(a["threshold"]),
                   min_share=float(a["min_share"]), min_chains=int(a["min_chains"]),
                   reference_chain=int(a["reference_chain"]), top_words=tuple(tuple(w) for w in words),
                   rule=str(a["rule"]), num_unclustered=int(a.get("num_unclustered", 0)),
                   seed_chains=int(a.get("seed_chains", SEED_CHAINS)))


# ============================================================================ checks
def _check_share(min_share) -> float:
    if isinstance(min_share, bool) or not isinstance(min_share, Real) or not 0.0 < float(min_share) <= 1.0:
        raise ValueError(f"min_share must be a share of chains in (0, 1], got {min_share!r}")
    return float(min_share)


def _check_estimates(estimates) -> np.ndarray:
    est = np.asarray(estimates)
    if est.ndim != 3 or 0 in est.shape:
        raise ValueError(f"estimates must have shape (chain, K, V) with no empty axis, got {est.shape}")
    if est.dtype.kind not in "fiu":
        raise ValueError(f"estimates must be numbers, got dtype {est.dtype}")
    if est.dtype != np.float64:
        est = est.astype(np.float32, copy=False)
    for bad, what in ((lambda e: ~np.isfinite(e), "estimates contain NaN or infinite values"),
                      (lambda e: e < 0, "estimates must be word probabilities (non-negative)")):
        where = first_where(est, bad)
        if where is not None:
            raise ValueError(f"{what}, got {est[where].item()!r} at (chain {where[0]}, topic {where[1]}, "
                             f"word {where[2]})")
    where = first_where(est.sum(-1), lambda t: t <= 0)
    if where is not None:
        raise ValueError(f"every topic of estimates needs a positive total, got {est[where].sum().item()!r} for "
                         f"(chain {where[0]}, topic {where[1]})")
    return est


# ============================================================================ clustering
def _roots(est: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """sqrt of the normalised word distributions of chains lo..hi, (chains·K, V) float32."""
    p = est[lo:hi].reshape(-1, est.shape[-1]).astype(np.float32)
    p /= p.sum(-1, keepdims=True)
    return np.sqrt(p, out=p)


def _blocks(est: np.ndarray):
    """(lo, hi) chain ranges whose square-root probabilities fit in :data:`BLOCK_BYTES`."""
    per_chain = 4 * est.shape[1] * est.shape[2]
    step = max(1, BLOCK_BYTES // max(per_chain, 1))
    return [(lo, min(lo + step, est.shape[0])) for lo in range(0, est.shape[0], step)]


def _hellinger(roots: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """H = sqrt(1 − BC) with BC = sqrt(p)·sqrt(q), one matrix product (rows × centres)."""
    return np.sqrt(np.clip(1.0 - roots @ centres.T, 0.0, 1.0))


def _match(dist: np.ndarray, threshold: float) -> np.ndarray:
    """(n, K) cluster of each topic of n chains (−1: none within ``threshold``), at most one
    topic per chain per cluster: greedy, the nearest (topic, cluster) pair of each chain first
    (ties: the first in (topic, cluster) order), then the nearest of the pairs left, and so on;
    only the pairs within the threshold are visited, in order of distance."""
    n, k, m = dist.shape
    out = np.full((n, k), -1, np.int64)
    flat = dist.reshape(n, -1)
    chain, pair = np.nonzero(flat <= threshold)
    if chain.size == 0:
        return out
    order = np.lexsort((pair, flat[chain, pair], chain))  # by chain, then distance, then (topic, cluster)
    slot, cluster = np.divmod(pair[order], m)
    used_slot = np.zeros((n, k), bool)
    used_cluster = np.zeros((n, m), bool)
    for c, s, j in zip(chain[order].tolist(), slot.tolist(), cluster.tolist()):
        if not used_slot[c, s] and not used_cluster[c, j]:
            used_slot[c, s] = used_cluster[c, j] = True
            out[c, s] = j
    return out


def _assign(est: np.ndarray, centres: np.ndarray, threshold: float) -> np.ndarray:
    """Every topic of every chain matched to ``centres`` (square roots, (M, V)), chain blocks."""
    n, k = est.shape[:2]
    out = np.full((n, k), -1, np.int64)
    if centres.shape[0] == 0:
        return out
    for lo, hi in _blocks(est):
        dist = _hellinger(_roots(est, lo, hi), centres).reshape(hi - lo, k, -1)
        out[lo:hi] = _match(dist, threshold)
    return out


def _gather_roots(est: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Square-root probabilities of the topics at ``positions`` ((n, 2): chain, slot)."""
    p = est[positions[:, 0], positions[:, 1]].astype(np.float32)
    p /= p.sum(-1, keepdims=True)
    return np.sqrt(p)


def _new_clusters(est: np.ndarray, assign: np.ndarray, centres: np.ndarray, threshold: float,
                  batch: int = 256) -> np.ndarray:
    """Leader clustering of the free topics (``assign`` −1; changed in place): in chain order, a
    topic not within ``threshold`` of an earlier new leader becomes one (up to ``batch`` leaders
    at a time); every free topic within the threshold of a leader joins the nearest (one per
    chain and cluster).  Returns the centres with the leaders appended."""
    k = est.shape[1]
    row_block = max(1, BLOCK_BYTES // (4 * est.shape[2]))  # gathered roots per matrix product: few, large products
    while True:
        free = np.argwhere(assign == -1)
        if free.size == 0:
            return centres
        cand = _gather_roots(est, free[:batch])
        near = _hellinger(cand, cand) <= threshold
        leaders: list[int] = []
        for i in range(len(cand)):  # (a loop over at most `batch` candidates, not over chains)
            if not leaders or not near[i, leaders].any():
                leaders.append(i)
        lead = cand[leaders]
        chains, row = np.unique(free[:, 0], return_inverse=True)
        dist = np.full((chains.size, k, len(leaders)), np.inf, np.float32)
        for lo in range(0, len(free), row_block):
            part = slice(lo, lo + row_block)
            dist[row[part], free[part, 1]] = _hellinger(_gather_roots(est, free[part]), lead)
        joined = _match(dist, threshold)
        sub = assign[chains]
        hit = joined >= 0
        sub[hit] = joined[hit] + centres.shape[0]
        assign[chains] = sub
        centres = np.concatenate([centres, lead])


def _means(est: np.ndarray, assign: np.ndarray, m: int) -> np.ndarray:
    """(m, V) float64 sums of the members' normalised word distributions, per cluster (rows sorted
    by cluster and summed with ``np.add.reduceat``, per chain block: O(chains · K · V))."""
    v = est.shape[2]
    total = np.zeros((m, v))
    for lo, hi in _blocks(est):
        a = assign[lo:hi].ravel()
        ok = np.flatnonzero(a >= 0)
        if ok.size == 0:
            continue
        order = ok[np.argsort(a[ok], kind="stable")]
        p = est[lo:hi].reshape(-1, v)[order].astype(np.float64)
        p /= p.sum(-1, keepdims=True)
        labels = a[order]
        starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
        total[labels[starts]] += np.add.reduceat(p, starts, axis=0)
    return total


def _spread(est: np.ndarray, assign: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(chain, K) Hellinger distance of every assigned topic to its cluster's centre (NaN if none)."""
    n, k = assign.shape
    out = np.full((n, k), np.nan)
    for lo, hi in _blocks(est):
        r = _roots(est, lo, hi)
        a = assign[lo:hi].ravel()
        ok = a >= 0
        bc = np.einsum("nv,nv->n", r[ok], centres[a[ok]])
        flat = np.full(r.shape[0], np.nan)
        flat[ok] = np.sqrt(np.clip(1.0 - bc, 0.0, 1.0))
        out[lo:hi] = flat.reshape(hi - lo, k)
    return out


def _centres(sums: np.ndarray) -> np.ndarray:
    """Square roots of the normalised cluster sums: the clusters' mean word distributions."""
    return np.sqrt(sums / sums.sum(-1, keepdims=True)).astype(np.float32)


def _relabel(assign: np.ndarray, order: np.ndarray, m: int) -> np.ndarray:
    """``assign`` with old cluster ``order[i]`` renamed ``i``; clusters not in ``order`` (of ``m``) −1."""
    new = np.full(m + 1, -1, np.int64)
    new[order] = np.arange(order.size)
    return np.where(assign >= 0, new[np.where(assign >= 0, assign, m)], assign)


def _cluster_rhat(draws: np.ndarray, assign: np.ndarray, m: int) -> np.ndarray:
    """R-hat of each cluster's share of tokens over the chains that hold it (a loop over clusters)."""
    from gibbsjax.diagnostics import rhat

    out = np.full(m, np.nan)
    for c in range(m):
        chains, slots = np.nonzero(assign == c)
        if chains.size >= 2:
            out[c] = rhat(draws[chains, :, slots][:, :, None])[0]
    return out


def stable_topics(estimates, *, lp=None, draws=None, min_share: float = MIN_SHARE,
                  threshold: float = AGREEMENT_THRESHOLD, vocab=None, n_words: int = 10,
                  reference: int | None = None, seed_chains: int = SEED_CHAINS) -> StableTopics:
    """Cluster the topics of all chains and report those that recur as stable topics.

    Parameters
    ----------
    estimates : array_like, shape (chain, K, V)
        Every chain's estimate of its K topics' word distributions (e.g.
        ``idata.posterior_mean["topic_word"]``; rows are normalised; aligned or
        not, slots do not matter).
    lp : array_like, shape (chain,) or (chain, draw), optional
        Picks the reference chain (:func:`gibbsjax.agreement.reference_chain`, the
        highest mean lp) whose topics seed the clusters; chain 0 without ``lp``
        or ``reference``.
    draws : array_like, shape (chain, draw, K), optional
        Per-draw values of each topic slot (LDA's ``topic_share``), for R-hat per
        cluster.
    min_share : float, default MIN_SHARE
        Share of the chains (at least 2) that must hold a cluster for it to be a
        stable topic.
    threshold : float, default gibbsjax.agreement.AGREEMENT_THRESHOLD
        Hellinger distance, in (0, 1], within which a topic joins a cluster.
    vocab : sequence of str, optional
        The V words, for the clusters' top words.
    n_words : int, default 10
        Top words kept per cluster.
    reference : int, optional
        The reference chain, by index (instead of ``lp``).
    seed_chains : int, default SEED_CHAINS
        Chains (the first ones, and the reference chain) whose topics seed the
        clusters.

    Returns
    -------
    StableTopics
        The clusters, stable topics first.

    Raises
    ------
    ValueError
        When an argument has the wrong shape or lies out of range (e.g.
        ``threshold`` outside (0, 1], ``vocab`` of another length than V).

    Notes
    -----
    The rule (:data:`RULE`): Hellinger distance H = sqrt(1 − Σ sqrt(p q)); a
    topic joins a cluster when H to the cluster's centre is at most
    ``threshold`` (default :data:`gibbsjax.agreement.AGREEMENT_THRESHOLD` = 0.4,
    measured there: a chain's own topic from two halves of its run differs by
    0.09–0.24, two different topics are at least 0.83 apart), at most one
    topic per chain per cluster, nearest pairs first.  Clusters start as the
    reference chain's topics; unassigned topics start new clusters (leader
    clustering, in chain order); then one refinement pass re-matches every
    topic to the clusters' mean word distributions.  A cluster held by at least
    ``min_share`` of the chains (default :data:`MIN_SHARE` = 0.5, a majority)
    and by at least 2 chains is a stable topic; its estimate is the mean of
    those chains' topics only.  The others are rare topics.

    Cost: each pass over the topics is blocks of chains (:data:`BLOCK_BYTES` of
    float32 square roots) times the centres, one matrix product:
    O(chains · K · clusters · V) flops and O(block + clusters · V) memory, with
    two matching passes (all chains against the centres, then against the refined
    centres) and two elementwise ones (means, spread).  Clusters are seeded
    from the topics of the first ``seed_chains`` chains (:data:`SEED_CHAINS` =
    64) and the reference chain (leader clustering among them is all pairs,
    (64 K)² · V); beyond them, only clusters that two seed chains hold are
    matched, and a topic of another chain that matches none stays unclustered
    (``num_unclustered``: rare, never stable), so thousands of chains that each
    hold topics of their own never make thousands of clusters.  4,096 chains
    × K = 20 × V = 2,000 (8 shared topics, 12 per chain of its own) take 2.9 s
    on the 2-core CPU here (``tests/test_stable_topics.py::test_four_thousand_chains_give_the_stable_topics``,
    slow-marked); 1,024 × 20 × 500 take 0.3 s.

    Examples
    --------
    >>> est = np.array([[[0.9, 0.1], [0.1, 0.9]], [[0.1, 0.9], [0.85, 0.15]]])
    >>> st = stable_topics(est)
    >>> st.num_stable, st.assignment.tolist()
    (2, [[1, 0], [0, 1]])
    """
    est = _check_estimates(estimates)
    min_share = _check_share(min_share)
    if isinstance(threshold, bool) or not isinstance(threshold, Real) or not 0.0 < float(threshold) <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1] (a Hellinger distance), got {threshold!r}")
    threshold = float(threshold)
    n, k, v = est.shape
    if isinstance(n_words, bool) or not isinstance(n_words, (int, np.integer)) or n_words < 1:
        raise ValueError(f"n_words must be a positive integer, got {n_words!r}")
    if vocab is not None and len(vocab) != v:
        raise ValueError(f"vocab must name the {v} words of estimates, got {len(vocab)} words")
    if draws is not None:
        draws = np.asarray(draws, np.float64)
        if draws.ndim != 3 or draws.shape[0] != n or draws.shape[2] != k:
            raise ValueError(f"draws must have shape (chain={n}, draw, K={k}), got {draws.shape}")
    if reference is None:
        if lp is not None:
            lp = np.asarray(lp, np.float64)
            if lp.ndim not in (1, 2) or lp.shape[0] != n:
                raise ValueError(f"lp must have shape ({n},) or ({n}, draw), one row per chain, got {lp.shape}")
            reference = reference_chain(lp)
        else:
            reference = 0
    elif isinstance(reference, bool) or not isinstance(reference, (int, np.integer)) or not 0 <= reference < n:
        raise ValueError(f"reference must be a chain index in [0, {n}), got {reference!r}")
    reference = int(reference)
    if isinstance(seed_chains, bool) or not isinstance(seed_chains, (int, np.integer)) or seed_chains < 1:
        raise ValueError(f"seed_chains must be a positive integer, got {seed_chains!r}")

    # 1. seeds: the reference chain's topics, then leader clustering of the topics of the seed chains
    seeds = np.union1d(np.arange(min(seed_chains, n)), [reference])
    sub = np.ascontiguousarray(est[seeds])
    centres = _gather_roots(est, np.stack([np.full(k, reference), np.arange(k)], axis=1))
    a_sub = _assign(sub, centres, threshold)
    centres = _new_clusters(sub, a_sub, centres, threshold)
    counts = np.bincount(a_sub[a_sub >= 0], minlength=centres.shape[0])
    # beyond the seed chains, only clusters that two seed chains hold seed the full pass
    keep = np.flatnonzero(counts >= (2 if seeds.size < n else 1))
    centres = _centres(_means(sub, _relabel(a_sub, keep, counts.size), keep.size))
    # 2. every topic of every chain matched to the centres; 3. refined: the clusters' means as centres
    assign = _assign(est, centres, threshold)
    counts = np.bincount(assign[assign >= 0], minlength=centres.shape[0])
    keep = np.flatnonzero(counts > 0)
    assign = _relabel(assign, keep, counts.size)
    assign = _assign(est, _centres(_means(est, assign, keep.size)), threshold)
    # 4. the seed chains' topics left over start new clusters; other chains' left-overs stay unclustered
    outside = np.ones(n, bool)
    outside[seeds] = False
    assign[outside[:, None] & (assign < 0)] = -2
    m0 = int(assign.max(initial=-1)) + 1
    m = _new_clusters(est, assign, np.zeros((m0, v), np.float32), threshold).shape[0]
    assign[assign == -2] = -1
    counts = np.bincount(assign[assign >= 0], minlength=m)
    keep = np.flatnonzero(counts > 0)
    assign = _relabel(assign, keep, m)
    counts = counts[keep]
    sums = _means(est, assign, keep.size)
    final = _centres(sums)
    spread = _spread(est, assign, final)
    m = keep.size
    flat_a, flat_s = assign.ravel(), spread.ravel()
    ok = flat_a >= 0
    s_mean = np.bincount(flat_a[ok], weights=flat_s[ok], minlength=m) / counts
    s_max = np.full(m, 0.0)
    np.maximum.at(s_max, flat_a[ok], flat_s[ok])
    min_chains = max(2, math.ceil(min_share * n - 1e-9))
    stable = counts >= min_chains
    order = np.lexsort((s_mean, -counts, ~stable))
    assign = _relabel(assign, order, m)
    counts, sums, s_mean, s_max, stable = counts[order], sums[order], s_mean[order], s_max[order], stable[order]
    num_stable = int(stable.sum())
    topic_word = sums[:num_stable] / counts[:num_stable, None]
    rhat = _cluster_rhat(draws, assign, m) if draws is not None else np.full(m, np.nan)
    words: tuple = ()
    if vocab is not None:
        from gibbsjax.evaluate import top_words

        words = tuple(tuple(w) for w in top_words(sums / counts[:, None], list(vocab), n_words))
    return StableTopics(assignment=assign, recurrence=counts.astype(np.int64), spread_mean=s_mean,
                        spread_max=s_max, rhat=rhat, topic_word=topic_word, num_stable=num_stable,
                        num_chains=n, num_topics=k, threshold=threshold, min_share=min_share,
                        min_chains=min_chains, reference_chain=reference, top_words=words,
                        num_unclustered=int((assign < 0).sum()), seed_chains=int(min(seed_chains, n)))


# ============================================================================ InferenceData
def _compute_of(idata, **kwargs) -> StableTopics:
    if "posterior_mean" not in idata.groups() or "topic_word" not in idata.posterior_mean:
        raise ValueError("this result has no per-chain topic estimates (posterior_mean['topic_word']): "
                         "not an LDA result")
    tw = idata.posterior_mean["topic_word"].transpose("chain", "topic", "word")
    if "lp" not in kwargs and "reference" not in kwargs and "sample_stats" in idata.groups() \
            and "lp" in idata.sample_stats:
        kwargs["lp"] = idata.sample_stats["lp"].transpose("chain", "draw").values
    if "draws" not in kwargs and "topic_share" in idata.posterior:
        kwargs["draws"] = idata.posterior["topic_share"].transpose("chain", "draw", "topic").values
    if "vocab" not in kwargs and "word" in tw.coords and tw["word"].dtype.kind in "OUS":
        kwargs["vocab"] = [str(w) for w in tw["word"].values]
    return stable_topics(tw.values, **kwargs)


def stable_topics_of(idata, **kwargs) -> StableTopics:
    """The stable topics of an LDA result, read back or computed.

    Its ``stable_topics`` group is read back; for a result without one, or with
    ``kwargs``, they are computed from ``posterior_mean["topic_word"]``,
    ``sample_stats.lp`` and ``posterior.topic_share``.

    Parameters
    ----------
    idata : arviz.InferenceData
        An LDA result.
    **kwargs
        Arguments of :func:`stable_topics` (e.g. ``min_share=0.8``); any forces
        a new computation.

    Returns
    -------
    StableTopics
        The stable topics.

    Raises
    ------
    ValueError
        When ``idata`` has no per-chain topic estimates (not an LDA result).

    Examples
    --------
    >>> st = stable_topics_of(model.idata_, min_share=0.75)    # doctest: +SKIP
    """
    if not kwargs and "stable_topics" in idata.groups():
        return StableTopics.from_dataset(idata.stable_topics)
    return _compute_of(idata, **kwargs)


def add_stable_topics(idata, **kwargs):
    """Compute the stable topics and store them as the ``stable_topics`` group.

    Parameters
    ----------
    idata : arviz.InferenceData
        An LDA result.
    **kwargs
        Arguments of :func:`stable_topics`.

    Returns
    -------
    idata : arviz.InferenceData
        ``idata`` with the ``stable_topics`` group (added or replaced).
    stable : StableTopics
        The stable topics.

    Raises
    ------
    ValueError
        As in :func:`stable_topics_of` (not an LDA result).

    Examples
    --------
    >>> idata, st = add_stable_topics(model.idata_, min_share=0.75)    # doctest: +SKIP
    """
    stable = _compute_of(idata, **kwargs)
    return replace_group(idata, "stable_topics", stable.to_dataset()), stable


def summary_rows(idata, stable: StableTopics | None = None):
    """Summary-table rows, one per stable topic.

    Row ``stable_topic_share[s]`` summarises the stable topic's share of tokens
    (``posterior.topic_share`` at the slot each chain holds it in) over the chains
    that hold it.

    Parameters
    ----------
    idata : arviz.InferenceData
        An LDA result.
    stable : StableTopics, optional
        Its stable topics (default: :func:`stable_topics_of` ``(idata)``).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`gibbsjax.diagnostics.summary`; empty without
        ``topic_share`` or stable topics.

    Examples
    --------
    >>> summary_rows(model.idata_).index[0]    # doctest: +SKIP
    'stable_topic_share[0]'
    """
    import pandas as pd

    from gibbsjax.diagnostics import summary_table, to_inference_data

    stable = stable_topics_of(idata) if stable is None else stable
    if "topic_share" not in idata.posterior or stable.num_stable == 0:
        return pd.DataFrame()
    draws = idata.posterior["topic_share"].transpose("chain", "draw", "topic").values
    tables = []
    for m in range(stable.num_stable):  # (a loop over stable topics)
        chains, slots = stable.holders(m)
        table = summary_table(to_inference_data({"s": draws[chains, :, slots]}), include_lp=False)
        tables.append(table.rename(index={"s": f"stable_topic_share[{m}]"}))
    return pd.concat(tables)


def report_lines(stable: StableTopics, *, max_rows: int = 20, max_rare: int = 5, n_words: int = 8,
                 compact: bool = False) -> list[str]:
    """Report lines: the verdict, the stable topics and the most recurrent rare topics.

    Parameters
    ----------
    stable : StableTopics
        The stable topics.
    max_rows : int, default 20
        Stable topics listed at most.
    max_rare : int, default 5
        Rare topics listed at most (0: only their count).
    n_words : int, default 8
        Top words shown per topic.
    compact : bool, default False
        The answer alone: per stable topic its chains, share of chains and top
        words (no spread, no R-hat), and the rare topics counted, not listed.

    Returns
    -------
    list of str
        The verdict, then a table of the stable topics (chains, share, spread,
        R-hat, top words) and of the most recurrent rare topics.

    Examples
    --------
    >>> est = np.array([[[0.9, 0.1], [0.1, 0.9]], [[0.1, 0.9], [0.85, 0.15]]])
    >>> report_lines(stable_topics(est, vocab=["a", "b"]))[0]
    'stable topics: 2 of 2 (held by >= 50% of 2 chains)'
    >>> report_lines(stable_topics(est, vocab=["a", "b"]), compact=True)[2:]
    ['  topic  chains  share  top words', '     0       2   100%  b a', '     1       2   100%  a b']
    """
    lines = [stable.verdict]
    if stable.num_chains < 2:
        return lines
    lines.append(f"  (clusters of the topics of all chains within Hellinger {stable.threshold:g} of their centre; "
                 f"stable: held by >= {stable.min_chains} chains)")

    def rows(entries):
        out = []
        for e in entries:
            words = " ".join(e["top_words"][:n_words])
            if compact:
                out.append(f"  {e['cluster']:4d}  {e['chains']:6d} {e['share']:6.0%}  {words}")
                continue
            rhat = f"{e['rhat']:6.3f}" if np.isfinite(e["rhat"]) else "     -"
            out.append(f"  {e['cluster']:4d}  {e['chains']:6d} {e['share']:6.0%}  {e['spread_mean']:5.2f} "
                       f"{e['spread_max']:5.2f}  {rhat}  {words}")
        return out

    header = "  topic  chains  share  top words" if compact else "  topic  chains  share  spread  max   R-hat  top words"
    table = stable.table()
    if table:
        lines.append(header)
        lines += rows(table[:max_rows])
        if len(table) > max_rows:
            lines.append(f"  ... {len(table) - max_rows} more stable topics")
    if compact:
        max_rare = 0
    if stable.num_rare:
        rare = stable.table(rare=True)
        lines.append(f"rare topics (held by fewer chains, never blended into the stable ones): {len(rare)}"
                     + (f", the {min(max_rare, len(rare))} most recurrent:" if rare and max_rare else ""))
        if max_rare:
            lines += rows(rare[:max_rare])
    return lines
