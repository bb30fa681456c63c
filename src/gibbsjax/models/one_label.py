"""The one-label document models: every document d has one label z_d (a class or a cluster).

The Dirichlet-multinomial naive Bayes model (Resnik & Hardisty 2010), the mixture of unigrams
(Sarkar's lecture notes 21, uncollapsed and with π collapsed) and the Bernoulli mixture
(Padó 2012) are one model family: the labels share class proportions
π ~ Dir(α), and each class has its own conjugate distribution over the document's
observations.  The models in :mod:`gibbsjax.models.naive_bayes` and
:mod:`gibbsjax.models.mixtures` are thin compositions of what is here (one layer below
them; the general conjugate maths they also use is in :mod:`gibbsjax.conjugate`):

* data: :class:`Documents` (flat int32 tokens + doc ids, labels with ``-1`` =
  latent) built by :func:`documents` from a :class:`~gibbsjax.corpus.Corpus`, and
  :class:`BinaryData` (a D × F 0/1 matrix) built by :func:`binary_data`; both
  validate their input and raise ``ValueError`` naming the argument; documents
  split over devices (:func:`pad_documents`, :func:`local_documents`, for
  :mod:`gibbsjax.rows`);
* counts and likelihoods of the family: :func:`word_counts`, :func:`feature_counts`,
  per-document log-likelihoods Σ_i log β[k, w_i] as a segment sum over the flat
  tokens (:func:`doc_log_likelihood`; never a dense D × V matrix),
  :func:`bernoulli_log_likelihood`, :func:`token_log_likelihood`;
* label updates: all at once given the parameters (:func:`sample_labels_parallel`)
  or one document after another with π collapsed (:func:`sample_labels_sequential`,
  a ``lax.scan`` over documents carrying the class counts), and the matching
  Rao-Blackwellised label probabilities (:func:`label_probs`,
  :func:`collapsed_label_probs`);
* the uncollapsed unigram-document sampler that the mixture of unigrams and naive
  Bayes with π drawn share: its state (:class:`UnigramState`), conditionals
  (:func:`pi_posterior`, :func:`beta_posterior`, :func:`sample_pi_beta`,
  :func:`sample_z`) and kernel functions (:func:`unigram_functions`);
* simulation for Geweke tests (:func:`simulate_tokens`, :func:`simulate_binary`);
* post-processing and report of a run (:func:`one_label_postprocess`,
  :func:`one_label_report`): per-document label probabilities, word distributions,
  top words and accuracies in an ``estimates`` group, and its text.

Everything that samples is a pure JAX function of arrays, safe under ``jit`` and
``vmap``; sizes (K, V, D) are static.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import PartitionSpec as P

from gibbsjax import conjugate as cj
from gibbsjax import random as gr
from gibbsjax import rows as rw
from gibbsjax._checks import check_int
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.rows import Rows

__all__ = [
    "DocInfo",
    "Documents",
    "BinaryData",
    "documents",
    "binary_data",
    "check_documents",
    "pad_documents",
    "local_documents",
    "merge_labels",
    "current_labels",
    "word_counts",
    "feature_counts",
    "doc_log_likelihood",
    "bernoulli_log_likelihood",
    "token_log_likelihood",
    "sample_labels_parallel",
    "sample_labels_sequential",
    "label_probs",
    "collapsed_label_probs",
    "uniform_log",
    "UnigramState",
    "pi_posterior",
    "beta_posterior",
    "sample_pi_beta",
    "sample_z",
    "unigram_functions",
    "simulate_tokens",
    "simulate_binary",
]


# ============================================================================ data
class DocInfo:
    """Names that travel with the data as static (hashable) pytree metadata.

    ``items`` are the vocabulary (text) or feature names (binary data),
    ``label_names`` the class names and ``doc_names`` the document names.  The
    hash is computed once, so a jitted call does not re-hash a large vocabulary.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import mixtures
    >>> d = mixtures.unigram_data(Corpus.from_texts(['a b a', 'c d', 'a a b']))
    >>> type(d.info).__name__
    'DocInfo'
    """

    __slots__ = ("items", "label_names", "doc_names", "_hash")

    def __init__(self, items: Sequence[str], label_names: Sequence[str], doc_names: Sequence[str]):
        self.items = tuple(str(v) for v in items)
        self.label_names = tuple(str(v) for v in label_names)
        self.doc_names = tuple(str(v) for v in doc_names)
        self._hash = hash((self.items, self.label_names, self.doc_names))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: Any) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, DocInfo)
            and self._hash == other._hash
            and self.items == other.items
            and self.label_names == other.label_names
            and self.doc_names == other.doc_names
        )

    def __repr__(self) -> str:
        return f"DocInfo({len(self.items)} items, labels {self.label_names}, {len(self.doc_names)} docs)"


@dataclass(frozen=True, eq=False)
class Documents:
    """Documents as flat tokens, with one label per document (``-1`` = latent).

    Built (and validated) by :func:`documents`.  Array fields are pytree leaves;
    ``vocab_size``, ``num_classes`` and ``info`` are static metadata, so the same
    shapes and names never recompile.

    Attributes
    ----------
    tokens : int32 (N,)
        Word id w_i of every token, documents one after another.
    doc_ids : int32 (N,)
        Document d(i) of every token (sorted).
    doc_lengths : int32 (D,)
        Tokens per document (all >= 1).
    labels : int32 (D,)
        Observed labels, held fixed by the samplers; ``-1`` where the label is
        latent (sampled).
    latent : int32 (M,)
        Indices of the documents whose label is latent (``labels == -1``), in order.
    true_labels : int32 (D,)
        Known labels for evaluation only (``-1`` = unknown); no sampler reads them.
        A hidden label is one with ``labels == -1`` and ``true_labels >= 0``.
    vocab_size : int
        V (static).
    num_classes : int
        K implied by the labels (static; 0 when the data carry no labels).
    info : DocInfo
        Vocabulary, label names and document names (static).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import mixtures
    >>> d = mixtures.unigram_data(Corpus.from_texts(['a b a', 'c d', 'a a b']))
    >>> type(d).__name__
    'Documents'
    """

    tokens: jax.Array
    doc_ids: jax.Array
    doc_lengths: jax.Array
    labels: jax.Array
    latent: jax.Array
    true_labels: jax.Array
    vocab_size: int
    num_classes: int
    info: DocInfo

    @property
    def num_docs(self) -> int:
        return int(self.doc_lengths.shape[0])

    @property
    def num_tokens(self) -> int:
        return int(self.tokens.shape[0])

    @property
    def vocab(self) -> tuple[str, ...]:
        return self.info.items

    @property
    def observed(self) -> jax.Array:
        """Boolean (D,): the label of the document is observed (held fixed)."""
        return self.labels >= 0

    def __repr__(self) -> str:
        m = int(self.latent.shape[0])
        return (
            f"Documents({self.num_docs} documents, {self.num_tokens} tokens, vocabulary of "
            f"{self.vocab_size}, {self.num_docs - m} labels observed, {m} latent)"
        )


jax.tree_util.register_dataclass(
    Documents,
    data_fields=["tokens", "doc_ids", "doc_lengths", "labels", "latent", "true_labels"],
    meta_fields=["vocab_size", "num_classes", "info"],
)


@dataclass(frozen=True, eq=False)
class BinaryData:
    """A D × F matrix of binary features, one row per document.

    Built (and validated) by :func:`binary_data`.

    Attributes
    ----------
    x : int32 (D, F)
        x_df ∈ {0, 1}.
    true_labels : int32 (D,)
        Known labels for evaluation only (``-1`` = unknown).
    num_classes : int
        Classes implied by the known labels (static; 0 when there are none).
    info : DocInfo
        Feature names, label names and document names (static).

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.models import mixtures
    >>> d = mixtures.bernoulli_data(np.array([[1, 0, 1], [0, 1, 1]]))
    >>> type(d).__name__
    'BinaryData'
    """

    x: jax.Array
    true_labels: jax.Array
    num_classes: int
    info: DocInfo

    @property
    def num_docs(self) -> int:
        return int(self.x.shape[0])

    @property
    def num_features(self) -> int:
        return int(self.x.shape[1])

    def __repr__(self) -> str:
        return f"BinaryData({self.num_docs} documents × {self.num_features} binary features)"


jax.tree_util.register_dataclass(
    BinaryData, data_fields=["x", "true_labels"], meta_fields=["num_classes", "info"]
)




def _int_labels(name: str, labels: Any, num_docs: int) -> np.ndarray:
    try:
        arr = np.asarray(labels)
    except Exception:  # noqa: BLE001
        raise ValueError(f"{name} must be an integer array of shape ({num_docs},)") from None
    if arr.shape != (num_docs,):
        raise ValueError(f"{name} must have shape ({num_docs},) (one per document), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise ValueError(f"{name} must hold integers (-1 = unknown), got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < -1:
        raise ValueError(f"{name} must be >= -1 (-1 marks an unknown label), got {int(arr.min())}")
    return arr


def _resolve_num_classes(num_classes, label_names, labels: np.ndarray | None, *, required: bool) -> int:
    if num_classes is not None:
        k = check_int("num_classes", num_classes, 2)
    elif label_names:
        k = len(label_names)
    elif labels is not None and labels.size and labels.max() >= 0:
        k = int(labels.max()) + 1
    else:
        k = 0
    if required and k < 2:
        raise ValueError(
            f"num_classes must be >= 2, got {k} (from "
            + ("label_names" if label_names else "the largest label + 1")
            + "); pass num_classes explicitly, or labels of at least two classes"
        )
    if labels is not None and k and labels.size and labels.max() >= k:
        bad = int(np.flatnonzero(labels >= k)[0])
        raise ValueError(
            f"labels out of range: document {bad} has label {int(labels[bad])}, but num_classes = {k} "
            f"(labels must lie in 0..{k - 1}, or -1 for unknown)"
        )
    return k


def _hide(labels: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Labels with a random ``fraction`` of the known ones set to -1."""
    known = np.flatnonzero(labels >= 0)
    n_hide = int(round(fraction * known.size))
    out = labels.copy()
    if n_hide:
        rng = np.random.default_rng(seed)
        out[rng.choice(known, size=n_hide, replace=False)] = -1
    return out


def documents(
    corpus,
    *,
    observed: bool = False,
    labels: Any = None,
    num_classes: int | None = None,
    hide_labels: float = 0.0,
    split_seed: int = 0,
) -> Documents:
    """Validate a :class:`~gibbsjax.corpus.Corpus` and build :class:`Documents`.

    Parameters
    ----------
    corpus
        The documents; every document must have at least one token.
    observed
        If true, known labels (``labels``, default ``corpus.labels``) are
        observed: held fixed by the samplers (naive Bayes).  If false, every
        label is latent and known labels are kept for evaluation only (mixtures).
    labels
        Labels per document (``-1`` = unknown) overriding ``corpus.labels``.
    num_classes
        K; default ``len(corpus.label_names)``, else the largest label + 1.
        Required to be >= 2 when ``observed``.
    hide_labels
        Fraction in [0, 1) of the known labels to hide from the sampler (set to
        ``-1`` in ``labels``, kept in ``true_labels``), chosen at random with
        ``split_seed``: a semi-supervised run whose accuracy on the hidden labels
        can be measured.  Only with ``observed``.

    Raises ``ValueError`` naming the argument: not a Corpus, an empty corpus, a
    document without tokens, labels of the wrong shape or out of range,
    ``num_classes < 2``, ``hide_labels`` outside [0, 1).

    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "b"], ["b"]], labels=[0, -1], label_names=["x", "y"])
    >>> d = documents(c, observed=True)
    >>> d.labels.tolist(), d.latent.tolist(), d.num_classes
    ([0, -1], [1], 2)
    """
    if not isinstance(corpus, Corpus):
        raise ValueError(f"corpus must be a gibbsjax.corpus.Corpus, got {type(corpus).__name__}")
    if corpus.num_docs == 0 or corpus.num_tokens == 0:
        raise ValueError(f"corpus is empty ({corpus.num_docs} documents, {corpus.num_tokens} tokens)")
    lengths = corpus.doc_lengths
    if np.any(lengths == 0):
        bad = int(np.flatnonzero(lengths == 0)[0])
        raise ValueError(
            f"corpus: document {bad} ({corpus.doc_names[bad]!r}) has no tokens; drop empty documents "
            "first, e.g. corpus.subset(corpus.doc_lengths > 0)"
        )
    if not isinstance(observed, (bool, np.bool_)):
        raise ValueError(f"observed must be True or False, got {observed!r}")
    if isinstance(hide_labels, bool) or not isinstance(hide_labels, (int, float, np.number)) or not (
        0.0 <= float(hide_labels) < 1.0
    ):
        raise ValueError(f"hide_labels must be a fraction in [0, 1), got {hide_labels!r}")
    split_seed = check_int("split_seed", split_seed, 0)
    if hide_labels and not observed:
        raise ValueError("hide_labels needs observed=True (labels are hidden from a sampler that sees them)")

    D = corpus.num_docs
    given = corpus.labels if labels is None else labels
    truth = None if given is None else _int_labels("labels", given, D)
    if observed and truth is None:
        raise ValueError("labels: observed=True needs labels (corpus.labels is None and none were given)")
    label_names = corpus.label_names
    k = _resolve_num_classes(num_classes, label_names, truth, required=observed)
    if label_names and k and len(label_names) != k:
        label_names = ()  # names that do not match K are dropped, classes are numbered
    if truth is None:
        truth = np.full(D, -1, np.int64)
    obs = _hide(truth, float(hide_labels), split_seed) if observed else np.full(D, -1, np.int64)
    latent = np.flatnonzero(obs < 0)

    info = DocInfo(corpus.vocab, label_names, corpus.doc_names)
    return Documents(
        tokens=jnp.asarray(corpus.tokens, jnp.int32),
        doc_ids=jnp.asarray(corpus.doc_ids, jnp.int32),
        doc_lengths=jnp.asarray(lengths, jnp.int32),
        labels=jnp.asarray(obs, jnp.int32),
        latent=jnp.asarray(latent, jnp.int32),
        true_labels=jnp.asarray(truth, jnp.int32),
        vocab_size=corpus.vocab_size,
        num_classes=k,
        info=info,
    )


def binary_data(
    features: Any,
    *,
    labels: Any = None,
    feature_names: Sequence[str] | None = None,
    label_names: Sequence[str] = (),
    doc_names: Sequence[str] | None = None,
) -> BinaryData:
    """Validate a binary D × F matrix (dense or scipy.sparse) and build :class:`BinaryData`.

    ``labels`` (``-1`` = unknown) are for evaluation only.  Raises ``ValueError``
    naming the argument for a matrix that is not 2-D, empty, or not 0/1, and for
    labels or names of the wrong length.

    >>> d = binary_data([[1, 0, 1], [0, 0, 1]])
    >>> d.x.shape, d.num_classes
    ((2, 3), 0)
    """
    import scipy.sparse as sp

    if sp.issparse(features):
        features = features.toarray()
    try:
        x = np.asarray(features)
    except Exception:  # noqa: BLE001
        raise ValueError("features must be a 2-D (documents × features) 0/1 matrix") from None
    if x.ndim != 2:
        raise ValueError(f"features must be a 2-D (documents × features) 0/1 matrix, got shape {x.shape}")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"features is empty (shape {x.shape}): need at least one document and one feature")
    if x.dtype == bool:
        x = x.astype(np.int32)
    if not np.issubdtype(x.dtype, np.number):
        raise ValueError(f"features must be binary: every entry 0 or 1 (True/False), got dtype {x.dtype}")
    if not np.all((x == 0) | (x == 1)):
        d, f = (int(i) for i in np.argwhere((x != 0) & (x != 1))[0])
        raise ValueError(f"features must be binary: every entry 0 or 1 (True/False), got {x[d, f].item()!r} at "
                         f"(document {d}, feature {f})")
    D, F = x.shape
    if feature_names is None:
        feature_names = tuple(str(f) for f in range(F))
    elif len(feature_names) != F:
        raise ValueError(f"feature_names has {len(feature_names)} names for {F} features")
    if doc_names is None:
        doc_names = tuple(str(d) for d in range(D))
    elif len(doc_names) != D:
        raise ValueError(f"doc_names has {len(doc_names)} names for {D} documents")
    truth = np.full(D, -1, np.int64) if labels is None else _int_labels("labels", labels, D)
    k = _resolve_num_classes(None, tuple(label_names), truth, required=False)
    return BinaryData(
        x=jnp.asarray(x, jnp.int32),
        true_labels=jnp.asarray(truth, jnp.int32),
        num_classes=k,
        info=DocInfo(feature_names, tuple(label_names), doc_names),
    )


def check_documents(data, k: int) -> Documents:
    """``data`` if it is :class:`Documents` whose observed labels (if any) have ``k`` classes; ``ValueError``
    otherwise (the unigram mixtures' and naive Bayes' check)."""
    if not isinstance(data, Documents):
        raise ValueError(f"data must be built by mixtures.unigram_data(corpus), got {type(data).__name__}")
    if int(data.latent.shape[0]) < data.num_docs and data.num_classes != k:
        raise ValueError(
            f"the data have observed labels of {data.num_classes} classes, but K = {k}"
        )
    return data


def pad_documents(docs, num_shards: int, per_block: int):
    """``padded`` for :func:`gibbsjax.rows.plan` with :class:`Documents`: documents split
    into ``num_shards`` blocks of ``per_block`` consecutive documents, each block followed
    by at least one padding row (``per_block + 1`` rows a block) and its tokens padded to
    the largest block's count with tokens of that padding row (word 0).  Per-token
    ``doc_ids`` are row positions in the padded layout (a device subtracts
    :attr:`gibbsjax.rows.Rows.offset`); padding rows have length 0 and latent labels.

    >>> from gibbsjax.corpus import Corpus
    >>> d = documents(Corpus.from_token_lists([["a", "b"], ["b"], ["a", "a", "a"]]))
    >>> pd, specs, ids = pad_documents(d, 2, 2)
    >>> ids.tolist(), pd.doc_ids.tolist()
    ([0, 1, 5, 2, 7, 8], [0, 0, 1, 3, 3, 3])
    """
    tokens = np.asarray(docs.tokens)
    lengths = np.asarray(docs.doc_lengths)
    n = lengths.size
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    rows_per_block = per_block + 1
    firsts = [min(p * per_block, n) for p in range(num_shards + 1)]
    width = max(int(offsets[firsts[p + 1]] - offsets[firsts[p]]) for p in range(num_shards))
    out_tokens = np.zeros((num_shards, width), np.int32)
    out_docs = np.zeros((num_shards, width), np.int32)
    out_lengths = np.zeros((num_shards, rows_per_block), np.int32)
    out_labels = np.full((num_shards, rows_per_block), -1, np.int32)
    out_true = np.full((num_shards, rows_per_block), -1, np.int32)
    ids = n + np.arange(num_shards * rows_per_block, dtype=np.int32).reshape(num_shards, rows_per_block)
    labels, true_labels = np.asarray(docs.labels), np.asarray(docs.true_labels)
    for p in range(num_shards):  # per block (a handful), not per document or token
        lo, hi = firsts[p], firsts[p + 1]
        t0, t1 = int(offsets[lo]), int(offsets[hi])
        out_tokens[p, : t1 - t0] = tokens[t0:t1]
        out_docs[p, : t1 - t0] = np.repeat(np.arange(hi - lo), lengths[lo:hi]) + p * rows_per_block
        out_docs[p, t1 - t0:] = p * rows_per_block + per_block  # the block's padding row
        out_lengths[p, : hi - lo] = lengths[lo:hi]
        out_labels[p, : hi - lo] = labels[lo:hi]
        out_true[p, : hi - lo] = true_labels[lo:hi]
        ids[p, : hi - lo] = np.arange(lo, hi)
    padded = dataclasses.replace(
        docs, tokens=jnp.asarray(out_tokens.reshape(-1)), doc_ids=jnp.asarray(out_docs.reshape(-1)),
        doc_lengths=jnp.asarray(out_lengths.reshape(-1)), labels=jnp.asarray(out_labels.reshape(-1)),
        true_labels=jnp.asarray(out_true.reshape(-1)))
    split = P(rw.AXIS)
    specs = dataclasses.replace(jax.tree_util.tree_map(lambda _: P(), padded), tokens=split, doc_ids=split,
                                doc_lengths=split, labels=split, true_labels=split)
    return padded, specs, ids.reshape(-1)


def local_documents(rows: "Rows | None", docs):
    """``docs`` with per-token ``doc_ids`` pointing at this device's rows (padded positions
    minus :attr:`gibbsjax.rows.Rows.offset`); unchanged on one device."""
    if rows is None:
        return docs
    return dataclasses.replace(docs, doc_ids=docs.doc_ids - rows.offset)


# ============================================================================ counting and likelihoods
def merge_labels(labels: jax.Array, observed_labels: jax.Array) -> jax.Array:
    """Observed labels where ``observed_labels >= 0``, else ``labels``."""
    return jnp.where(observed_labels >= 0, observed_labels, labels)


def current_labels(state, data) -> jax.Array:
    """The labels ``state.z``, with the observed ones taken from the data (where it has ``labels``)."""
    labels = getattr(data, "labels", None)
    return state.z if labels is None else merge_labels(state.z, labels)



def word_counts(labels: jax.Array, docs: Documents, num_classes: int) -> jax.Array:
    """n_kv = #{tokens i : z_{d(i)} = k, w_i = v}, int32 (K, V), by scatter-add over the tokens."""
    return cj.counts((labels[docs.doc_ids], docs.tokens), (num_classes, docs.vocab_size))


def feature_counts(labels: jax.Array, x: jax.Array, num_classes: int) -> tuple[jax.Array, jax.Array]:
    """(n1, n0): n1_kf = #{d : z_d = k, x_df = 1}, n0_kf = #{d : z_d = k, x_df = 0}; int32 (K, F)."""
    n1 = jax.ops.segment_sum(x, labels, num_segments=num_classes)
    n0 = cj.class_counts(labels, num_classes)[:, None] - n1
    return n1, n0


def doc_log_likelihood(log_beta: jax.Array, docs: Documents) -> jax.Array:
    """ℓ_dk = Σ_{i in d} log β_{k, w_i}, (D, K): a segment sum over the flat tokens.

    Costs O(N K) time and memory per call (a gather of K log-probabilities per
    token, then a sorted segment sum); no D × V matrix is formed.
    """
    per_token = jnp.take(log_beta.T, docs.tokens, axis=0)  # (N, K)
    return jax.ops.segment_sum(per_token, docs.doc_ids, num_segments=docs.num_docs, indices_are_sorted=True)


def bernoulli_log_likelihood(log_p: jax.Array, log1m_p: jax.Array, x: jax.Array) -> jax.Array:
    """ℓ_dk = Σ_f x_df log p_kf + (1 − x_df) log(1 − p_kf), (D, K).

    Computed as x (log p − log(1 − p))ᵀ + Σ_f log(1 − p_kf): one matrix product.
    """
    xf = x.astype(log_p.dtype)
    return xf @ (log_p - log1m_p).T + jnp.sum(log1m_p, axis=-1)


def token_log_likelihood(log_beta: jax.Array, labels: jax.Array, docs: Documents) -> jax.Array:
    """log p(W | z, β) = Σ_i log β_{z_{d(i)}, w_i} (a scalar)."""
    return jnp.sum(log_beta[labels[docs.doc_ids], docs.tokens])


# ============================================================================ label updates
def sample_labels_parallel(key, logits: jax.Array, observed_labels: jax.Array | None = None) -> jax.Array:
    """z_d ~ Cat(softmax(logits_d)) for every d at once (observed labels kept).

    Exact when the labels are conditionally independent given the parameters
    (uncollapsed mixtures): then the joint conditional of all labels is the
    product of these categoricals, and one draw per document is a draw from it.
    """
    z = gr.categorical(key, logits)
    return z if observed_labels is None else merge_labels(z, observed_labels)


def sample_labels_sequential(
    key, labels: jax.Array, loglik: jax.Array, alpha: jax.Array, latent: jax.Array
) -> jax.Array:
    """Collapsed (π integrated out) label update, one latent document after another.

    For each latent d in ``latent`` order, with the class counts C^{(−d)} of all
    *other* documents (observed ones included, latent ones at their newest value)

        p(z_d = k | z_{−d}, ℓ) ∝ (C_k^{(−d)} + α_k) · exp(ℓ_dk),

    the Pólya-urn predictive of the Dirichlet-multinomial times the document's
    likelihood ℓ_dk (which does not depend on other labels given the class
    parameters).  Collapsing π couples the labels through the counts, so the
    documents are visited in sequence: a ``lax.scan`` over documents carrying
    the int32 counts (K,).  Each step is an exact draw from the full conditional
    given the current values of all other labels, so the whole scan is a
    systematic-scan Gibbs sweep.  Returns the new labels (D,).
    """
    k = loglik.shape[-1]
    counts = cj.class_counts(labels, k)
    keys = jax.random.split(key, latent.shape[0])
    alpha = alpha.astype(loglik.dtype)

    def visit(counts, x):
        old, ll, key_d = x
        counts = counts.at[old].add(-1)
        new = gr.categorical(key_d, jnp.log(counts.astype(ll.dtype) + alpha) + ll)
        return counts.at[new].add(1), new

    _, new = lax.scan(visit, counts, (labels[latent], loglik[latent], keys))
    return labels.at[latent].set(new)


def label_probs(logits: jax.Array, observed_labels: jax.Array | None = None) -> jax.Array:
    """softmax(logits) per document, one-hot for observed labels, (D, K)."""
    p = jax.nn.softmax(logits, axis=-1)
    if observed_labels is None:
        return p
    onehot = jax.nn.one_hot(observed_labels, logits.shape[-1], dtype=p.dtype)
    return jnp.where((observed_labels >= 0)[:, None], onehot, p)


def collapsed_label_probs(
    labels: jax.Array, loglik: jax.Array, alpha: jax.Array, observed_labels: jax.Array | None = None
) -> jax.Array:
    """p(z_d = k | z_{−d}, ℓ) ∝ (C_k^{(−d)} + α_k) exp(ℓ_dk) for every d at once, (D, K).

    The full conditional of each label given all the others (the one
    :func:`sample_labels_sequential` samples from), evaluated in parallel at one
    state.  Averaged over posterior draws it estimates p(z_d = k | data)
    (Rao-Blackwellisation).  Observed labels give one-hot rows.
    """
    k = loglik.shape[-1]
    onehot = jax.nn.one_hot(labels, k, dtype=loglik.dtype)
    others = cj.class_counts(labels, k).astype(loglik.dtype)[None, :] - onehot
    return label_probs(jnp.log(others + alpha.astype(loglik.dtype)) + loglik, observed_labels)


# ============================================================================ the uncollapsed unigram-document sampler
def uniform_log(*shape: int) -> jax.Array:
    """log of a uniform distribution over the last axis."""
    return jnp.full(shape, -np.log(shape[-1]), jnp.result_type(float))


class UnigramState(NamedTuple):
    """Uncollapsed mixture of unigrams state.

    Parameters
    ----------
    log_pi : jax.Array
        log π, (K,).
    log_beta : jax.Array
        log β, (K, V).
    z : jax.Array
        Z, (D,) int32.

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import mixtures
    >>> d = mixtures.unigram_data(Corpus.from_texts(['a b a', 'c d', 'a a b']))
    >>> state = mixtures.unigrams(2).init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('UnigramState', ('log_pi', 'log_beta', 'z'))
    """

    log_pi: jax.Array
    log_beta: jax.Array
    z: jax.Array


def pi_posterior(state, data, *, alpha, rows: Rows | None = None) -> jax.Array:
    """Concentration of π | {Z_d} ~ Dir(n_1 + α_1, ..., n_K + α_K), n_k = #{d : Z_d = k}.

    Seed 001, 1.; Padó (2012), eq. (16) (corrected: Beta(C_0 + α, C_1 + β) for K = 2).
    ``rows``: with documents split over devices (:mod:`gibbsjax.rows`), the counts of
    every device's documents.

    Parameters
    ----------
    state : NamedTuple
        The current state (labels ``z`` are used).
    data : Documents or BinaryData
        The documents.
    alpha : float or jax.Array
        The concentration α.
    rows : Rows, optional
        With documents split over devices (:mod:`gibbsjax.rows`), the counts of
        every device's documents.

    Returns
    -------
    jax.Array
        (K,) concentrations n_k + α_k.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = documents(Corpus.from_token_lists([["a", "a"], ["b"], ["a", "b"]]))
    >>> s = UnigramState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])),
    ...                  z=jnp.array([0, 1, 0]))
    >>> pi_posterior(s, d, alpha=1.0).tolist()   # two documents in cluster 0, one in 1
    [3.0, 2.0]
    """
    k = state.log_pi.shape[0]
    counts = rw.total(rows, cj.class_counts(rw.here(rows, current_labels(state, data), k), k))
    return counts.astype(jnp.result_type(float)) + cj.concentration_vector("alpha", alpha, k)


def beta_posterior(state, data: Documents, *, lam: float, rows: Rows | None = None) -> jax.Array:
    """Concentrations of β_k | {Z_d}, {W_id} ~ Dir(m_k1 + λ, ..., m_kV + λ) for every k (Sarkar's lecture notes 21, 2.).

    m_kv = #{(i, d) : W_id = v, Z_d = k}, counted by scatter-add over the tokens
    (``rows``: summed over the devices).

    Parameters
    ----------
    state : NamedTuple
        The current state (labels ``z`` are used).
    data : Documents
        The documents.
    lam : float
        The concentration λ.
    rows : Rows, optional
        Documents split over devices: counts summed over the devices.

    Returns
    -------
    jax.Array
        (K, V) concentrations m_kv + λ.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = documents(Corpus.from_token_lists([["a", "a"], ["b"], ["a", "b"]]))
    >>> s = UnigramState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])),
    ...                  z=jnp.array([0, 1, 0]))
    >>> beta_posterior(s, d, lam=0.5).tolist()   # cluster 0: a, a, a, b; cluster 1: b
    [[3.5, 1.5], [0.5, 1.5]]
    """
    k = state.log_beta.shape[0]
    counts = rw.total(rows, word_counts(rw.here(rows, current_labels(state, data), k), data, k))
    return counts.astype(jnp.result_type(float)) + lam


def sample_pi_beta(key, state: UnigramState, data: Documents, *, alpha, lam, rows: Rows | None = None) -> UnigramState:
    """π | Z ~ Dir(n + α) and β_k | Z, W ~ Dir(m_k + λ) (Sarkar's lecture notes 21, 1. and 2.), as one block.

    Given Z, π and the β_k are independent (π's Markov blanket is Z; β's is Z
    and W), so drawing them together is the same as drawing them one after the
    other; one gamma call serves both (less compiled code).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : UnigramState
        The current state (labels are used).
    data : Documents
        The documents.
    alpha : float or jax.Array
        The concentration of π.
    lam : float
        The concentration λ of every β_k.
    rows : Rows, optional
        Documents split over devices: counts summed over the devices.

    Returns
    -------
    UnigramState
        The state with new log π and log β.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = documents(Corpus.from_token_lists([["a", "a"], ["b"], ["a", "b"]]))
    >>> s = UnigramState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])),
    ...                  z=jnp.array([0, 1, 0]))
    >>> new = sample_pi_beta(jax.random.key(0), s, d, alpha=1.0, lam=1.0)
    >>> new.log_beta.shape, [round(float(v), 4) for v in jnp.exp(new.log_beta).sum(axis=1)]
    ((2, 2), [1.0, 1.0])
    """
    log_pi, log_beta = cj.sample_log_dirichlets(
        key, pi_posterior(state, data, alpha=alpha, rows=rows), beta_posterior(state, data, lam=lam, rows=rows))
    return state._replace(log_pi=log_pi, log_beta=log_beta)


def _z_logits(state, data: Documents) -> jax.Array:
    return state.log_pi + doc_log_likelihood(state.log_beta, data)


def sample_z(key, state: UnigramState, data: Documents, rows: Rows | None = None) -> jax.Array:
    """Z_d | π, β, W ~ P(Z_d = k) ∝ π_k Π_i β_{k, W_id}, every d at once (Sarkar's lecture notes 21, 3.).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : UnigramState
        The current state.
    data : Documents
        The documents.
    rows : Rows, optional
        Documents split over devices; document d's draw is the same as on one device.

    Returns
    -------
    jax.Array
        The new labels, (D,) int32.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = documents(Corpus.from_token_lists([["a", "a"], ["b"], ["a", "b"]]))
    >>> s = UnigramState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])),
    ...                  z=jnp.array([0, 1, 0]))
    >>> z = sample_z(jax.random.key(0), s, d)
    >>> z.shape, z.dtype
    ((3,), dtype('int32'))
    """
    if rows is None:
        return sample_labels_parallel(key, _z_logits(state, data), data.labels)
    return merge_labels(rows.categorical(key, _z_logits(state, data)), data.labels)


def unigram_functions(k: int, alpha, lam: float, keep_draws: bool):
    """``functions(rows)``: the uncollapsed unigram mixture's ``init``, ``step``, ``record``,
    ``log_joint``, ``accumulate`` and ``log_likelihood`` (per document) on all documents (``rows`` None) or on one device's
    documents (:mod:`gibbsjax.rows`).  Also naive Bayes with π drawn
    (:func:`gibbsjax.models.naive_bayes.uncollapsed`): the same model with some labels observed."""

    def functions(rows: Rows | None):
        def init(key, data: Documents):
            """Z uniform at random; π and β uniform (the first sweep redraws them from Z)."""
            if rows is None:
                check_documents(data, k)
            n = data.num_docs if rows is None else rows.num_rows
            z = rw.take_rows(rows, jax.random.randint(key, (n,), 0, k, dtype=jnp.int32))
            return UnigramState(uniform_log(k), uniform_log(k, data.vocab_size), merge_labels(z, data.labels))

        def big(state: UnigramState, data: Documents, gather=lambda x: x):
            data = local_documents(rows, data)
            return {
                "beta": jnp.exp(state.log_beta),
                "doc_probs": gather(label_probs(_z_logits(state, data), data.labels)),
            }

        def record(state: UnigramState, data: Documents):
            gather = (lambda x: x) if rows is None else rows.gather
            return {"pi": jnp.exp(state.log_pi), **(big(state, data, gather) if keep_draws else {})}

        def log_joint(state: UnigramState, data: Documents):
            """log p(W, Z, π, β)."""
            data = local_documents(rows, data)
            z = current_labels(state, data)
            if rows is None:
                tokens = token_log_likelihood(state.log_beta, z, data)
            else:  # padding rows hold the padding tokens
                per_token = state.log_beta[z[data.doc_ids], data.tokens]
                tokens = rows.sum(jnp.sum(jnp.where(rows.real[data.doc_ids], per_token, 0)))
            return (
                cj.log_dirichlet_density(state.log_pi, cj.concentration_vector("alpha", alpha, k))
                + jnp.sum(cj.log_dirichlet_density(state.log_beta, lam))
                + rw.row_sum(rows, state.log_pi[z])
                + tokens
            )

        def step(key, state: UnigramState, data: Documents):
            sweep_ = sweep(functools.partial(sample_pi_beta, alpha=alpha, lam=lam, rows=rows),
                           ("z", functools.partial(sample_z, rows=rows)))
            return sweep_(key, state, local_documents(rows, data))

        def log_likelihood(state: UnigramState, data: Documents):
            """log p(W_d | π, β) = log Σ_k π_k Π_i β_{k, W_id} per document (Z_d summed out); a document
            with an observed label ℓ: log p(W_d, Z_d = ℓ | π, β) = log π_ℓ + Σ_i log β_{ℓ, W_id}."""
            logits = _z_logits(state, local_documents(rows, data))
            labels = getattr(data, "labels", None)
            out = jax.nn.logsumexp(logits, axis=-1)
            if labels is not None:
                given = jnp.take_along_axis(logits, jnp.maximum(labels, 0)[:, None], axis=1)[:, 0]
                out = jnp.where(labels >= 0, given, out)
            return {"w": out}

        return {"init": init, "step": step, "record": record, "log_joint": log_joint,
                "accumulate": None if keep_draws else big, "log_likelihood": log_likelihood}

    return functions


def observed_tokens(data: Documents) -> dict:
    """``Kernel.observed_data`` of the document models: every token's word and document (``token``
    dims), and the observed labels (``-1``: latent; ``document`` dims), numpy arrays."""
    out = {"w": (("token",), np.asarray(data.tokens)), "token_document": (("token",), np.asarray(data.doc_ids))}
    if getattr(data, "labels", None) is not None:
        out["labels"] = (("document",), np.asarray(data.labels))
    return out


# ============================================================================ simulation
def simulate_tokens(key, log_beta: jax.Array, labels: jax.Array, docs: Documents) -> jax.Array:
    """New words w_i ~ Cat(β_{z_{d(i)}}) for every token position, (N,) int32.

    Keeps document lengths and token positions; for Geweke tests and
    simulation studies (it forms an N × V array of log-probabilities, so it is
    meant for small corpora).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    log_beta : jax.Array
        (K, V): log word probabilities of each cluster.
    labels : jax.Array
        (D,) int: each document's cluster.
    docs : Documents
        The documents (their token positions and lengths are kept).

    Returns
    -------
    jax.Array
        (N,) int32: a new word for every token position.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = documents(Corpus.from_token_lists([["a", "a"], ["b"], ["a", "b"]]))
    >>> s = UnigramState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])),
    ...                  z=jnp.array([0, 1, 0]))
    >>> w = simulate_tokens(jax.random.key(0), jnp.log(jnp.array([[1.0, 0.0], [0.0, 1.0]])), s.z, d)
    >>> w.tolist()   # cluster 0 only says word 0 ("a"), cluster 1 only word 1
    [0, 0, 1, 0, 0]
    """
    return gr.categorical(key, log_beta[labels[docs.doc_ids]])


def simulate_binary(key, log_p: jax.Array, labels: jax.Array) -> jax.Array:
    """New x_df ~ Bernoulli(p_{z_d f}), (D, F) int32.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    log_p : jax.Array
        (K, F): log p_kf, the probability that feature f is on in cluster k.
    labels : jax.Array
        (D,) int: each document's cluster.

    Returns
    -------
    jax.Array
        (D, F) int32: the new 0/1 features.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> log_p = jnp.log(jnp.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))   # certain features
    >>> simulate_binary(jax.random.key(0), log_p, jnp.array([1, 0])).tolist()
    [[0, 1, 0], [1, 0, 1]]
    """
    u = gr.uniform(key, (labels.shape[0], log_p.shape[1]), dtype=log_p.dtype)
    return (jnp.log(u) < log_p[labels]).astype(jnp.int32)

