"""Conjugate building blocks shared by the one-label-per-document models.

The Dirichlet-multinomial naive Bayes model (source document 000), the mixture of unigrams
(source document 001, uncollapsed and with π collapsed) and the Bernoulli mixture
(source document 004) are the same model family: every document d carries one label
z_d ∈ {0..K-1}, the labels share class proportions π ~ Dir(α), and each class
has its own conjugate distribution over the document's observations.  The
models in :mod:`gibbsjax.models.naive_bayes` and :mod:`gibbsjax.models.mixtures`
are thin compositions of what is here:

* data: :class:`Documents` (flat int32 tokens + doc ids, labels with ``-1`` =
  latent) built by :func:`documents` from a :class:`~gibbsjax.corpus.Corpus`, and
  :class:`BinaryData` (a D × F 0/1 matrix) built by :func:`binary_data`; both
  validate their input and raise ``ValueError`` naming the argument;
* counting into int32 tables by scatter-add (:func:`class_counts`,
  :func:`word_counts`, :func:`feature_counts`);
* per-document log-likelihoods Σ_i log β[k, w_i] as a segment sum over the flat
  tokens (:func:`doc_log_likelihood`; never a dense D × V matrix);
* conjugate draws (:func:`sample_log_dirichlet_rows`, :func:`sample_log_bernoulli`);
* label updates: all at once given the parameters (:func:`sample_labels_parallel`)
  or one document after another with π collapsed (:func:`sample_labels_sequential`,
  a ``lax.scan`` over documents carrying the class counts), and the matching
  Rao-Blackwellised label probabilities (:func:`label_probs`,
  :func:`collapsed_label_probs`);
* log densities for log joints: Dirichlet-multinomial (Pólya) marginals
  (:func:`log_dirichlet_multinomial`), Dirichlet densities
  (:func:`log_dirichlet_density`);
* simulation for Geweke tests (:func:`simulate_tokens`).

Everything is a pure JAX function of arrays, safe under ``jit`` and ``vmap``;
sizes (K, V, D) are static.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int as _check_int
from jax import lax
from jax.scipy.special import gammaln

from gibbsjax import random as gr

__all__ = [
    "DocInfo",
    "Documents",
    "BinaryData",
    "documents",
    "binary_data",
    "concentration_vector",
    "merge_labels",
    "counts",
    "class_counts",
    "word_counts",
    "feature_counts",
    "doc_log_likelihood",
    "bernoulli_log_likelihood",
    "sample_log_dirichlet_rows",
    "sample_log_dirichlets",
    "sample_log_bernoulli",
    "sample_labels_parallel",
    "sample_labels_sequential",
    "label_probs",
    "collapsed_label_probs",
    "log_dirichlet_multinomial",
    "log_dirichlet_density",
    "log_beta_density",
    "xlogy",
    "token_log_likelihood",
    "simulate_tokens",
    "simulate_binary",
    "table_counts",
    "sample_log_dirichlet_padded",
]


# ============================================================================ data
class DocInfo:
    """Names that travel with the data as static (hashable) pytree metadata.

    ``items`` are the vocabulary (text) or feature names (binary data),
    ``label_names`` the class names and ``doc_names`` the document names.  The
    hash is computed once, so a jitted call does not re-hash a large vocabulary.
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
        k = _check_int("num_classes", num_classes, 2)
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
    from gibbsjax.corpus import Corpus

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
    split_seed = _check_int("split_seed", split_seed, 0)
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
    if not (np.issubdtype(x.dtype, np.number)) or not np.all((x == 0) | (x == 1)):
        raise ValueError("features must be binary: every entry 0 or 1 (True/False)")
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


# ============================================================================ hyperparameters
def concentration_vector(name: str, value: float | tuple[float, ...], k: int, dtype=None) -> jax.Array:
    """The concentration as a length-``k`` array; a tuple must have ``k`` entries.

    Called while a kernel is traced, when K is known from the data or factory.
    """
    if isinstance(value, tuple):
        if len(value) != k:
            raise ValueError(f"{name} has {len(value)} entries, but the model has K = {k} classes")
        return jnp.asarray(value, dtype or jnp.result_type(float))
    return jnp.full((k,), value, dtype or jnp.result_type(float))


# ============================================================================ counting
def merge_labels(labels: jax.Array, observed_labels: jax.Array) -> jax.Array:
    """Observed labels where ``observed_labels >= 0``, else ``labels``."""
    return jnp.where(observed_labels >= 0, observed_labels, labels)


def counts(index, shape, weights: jax.Array | None = None) -> jax.Array:
    """The one counting helper: an int32 table of how often each index occurs (a scatter-add).

    ``index`` is an integer array (a table of ``shape = (n,)``) or a tuple of
    equal-shaped integer arrays, one per axis of ``shape``; ``weights`` (0/1 or
    small integers, same shape as the index arrays) counts some entries zero
    times (padding) or several.  Counts are int32, exact beyond 2^24; convert
    them to a float dtype only where they become Dirichlet concentrations.

    >>> counts(jnp.array([0, 2, 2]), (3,)).tolist()
    [1, 0, 2]
    >>> counts((jnp.array([0, 1, 1]), jnp.array([1, 0, 0])), (2, 2)).tolist()
    [[0, 1], [2, 0]]
    """
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    idx = tuple(index) if isinstance(index, tuple) else (index,)
    if len(idx) != len(shape):
        raise ValueError(f"counts: {len(idx)} index arrays for a table of {len(shape)} axes")
    w = 1 if weights is None else weights.astype(jnp.int32)
    return jnp.zeros(shape, jnp.int32).at[idx].add(w)


def class_counts(labels: jax.Array, num_classes: int) -> jax.Array:
    """C_k = #{d : z_d = k}, int32 (K,)."""
    return counts(labels, (num_classes,))


def word_counts(labels: jax.Array, docs: Documents, num_classes: int) -> jax.Array:
    """n_kv = #{tokens i : z_{d(i)} = k, w_i = v}, int32 (K, V), by scatter-add over the tokens."""
    return counts((labels[docs.doc_ids], docs.tokens), (num_classes, docs.vocab_size))


def feature_counts(labels: jax.Array, x: jax.Array, num_classes: int) -> tuple[jax.Array, jax.Array]:
    """(n1, n0): n1_kf = #{d : z_d = k, x_df = 1}, n0_kf = #{d : z_d = k, x_df = 0}; int32 (K, F)."""
    n1 = jax.ops.segment_sum(x, labels, num_segments=num_classes)
    n0 = class_counts(labels, num_classes)[:, None] - n1
    return n1, n0


def table_counts(rows: jax.Array, values: jax.Array, num_rows: int, num_values: int) -> jax.Array:
    """n_rk = #{i : rows_i = r, values_i = k}, int32 (num_rows, num_values), by scatter-add.

    The generic form of :func:`word_counts` (rows = class of each token's
    document, values = word ids): counts of child values per CPT row for a
    discrete Bayesian network, with any index arrays of one shape.
    """
    return counts((rows, values), (num_rows, num_values))


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


# ============================================================================ conjugate draws
def sample_log_dirichlet_rows(key, counts: jax.Array, prior) -> jax.Array:
    """log of a draw of each row from Dir(counts_k + prior), (K, V).

    The conjugate update of a Dirichlet prior after categorical observations
    with counts ``counts``; drawn in log space (:func:`gibbsjax.random.log_dirichlet`),
    so tiny concentrations never give log 0.
    """
    return gr.log_dirichlet(key, counts.astype(jnp.result_type(float)) + prior)


def sample_log_dirichlet_padded(key, counts: jax.Array, prior, valid: jax.Array) -> jax.Array:
    """log of a draw of each row from Dir(counts_r + prior_r) over its ``valid`` entries; −inf elsewhere.

    For rows of different lengths padded to one width: the whole padded row is
    drawn by :func:`sample_log_dirichlet_rows` (padding needs a positive
    concentration, e.g. 1, and zero counts), then the padding is dropped and
    the rest renormalised.  Exact: normalised independent gamma variates of a
    subset of the entries are Dirichlet with that subset's concentrations.
    """
    lp = jnp.where(valid, sample_log_dirichlet_rows(key, counts, prior), -jnp.inf)
    return lp - jax.nn.logsumexp(lp, axis=-1, keepdims=True)


def sample_log_dirichlets(key, *alphas) -> list[jax.Array]:
    """Independent log-Dirichlet draws for several concentration arrays, with one gamma call.

    Each ``alphas[j]`` has shape (..., K_j) and gives a draw of that shape
    (Dirichlet along the last axis), exactly as :func:`gibbsjax.random.log_dirichlet`
    would; all gamma variates come from a single :func:`gibbsjax.random.log_gamma`
    call, which keeps compiled code small where several are needed at once
    (``sample_prior``).
    """
    f = jnp.result_type(float)
    alphas = [jnp.asarray(a, f) for a in alphas]
    flat = gr.log_gamma(key, jnp.concatenate([a.ravel() for a in alphas]))
    out, start = [], 0
    for a in alphas:
        lg = flat[start:start + a.size].reshape(a.shape)
        start += a.size
        out.append(lg - jax.nn.logsumexp(lg, axis=-1, keepdims=True))
    return out


def sample_log_bernoulli(key, n1: jax.Array, n0: jax.Array, a, b) -> tuple[jax.Array, jax.Array]:
    """(log p, log(1 − p)) for p ~ Beta(a + n1, b + n0), elementwise.

    A Beta draw is a two-category Dirichlet draw; in log space both log p and
    log(1 − p) stay accurate when p is close to 0 or 1.
    """
    f = jnp.result_type(float)
    conc = jnp.stack([n1.astype(f) + a, n0.astype(f) + b], axis=-1)
    lp = gr.log_dirichlet(key, conc)
    return lp[..., 0], lp[..., 1]


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
    counts = class_counts(labels, k)
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
    others = class_counts(labels, k).astype(loglik.dtype)[None, :] - onehot
    return label_probs(jnp.log(others + alpha.astype(loglik.dtype)) + loglik, observed_labels)


# ============================================================================ log densities
def log_dirichlet_multinomial(counts: jax.Array, alpha) -> jax.Array:
    """log ∫ Π_k θ_k^{n_k} Dir(θ; α) dθ along the last axis (an ordered sequence, no multinomial coefficient).

    = log Γ(Σα) − log Γ(Σα + n) + Σ_k [log Γ(α_k + n_k) − log Γ(α_k)].
    """
    f = jnp.result_type(float)
    n = counts.astype(f)
    a = jnp.broadcast_to(jnp.asarray(alpha, f), n.shape)
    return (
        gammaln(a.sum(-1)) - gammaln(a.sum(-1) + n.sum(-1)) + jnp.sum(gammaln(a + n) - gammaln(a), axis=-1)
    )


def xlogy(c, log_x):
    """c · log x with 0 · log 0 = 0 (c a constant or array)."""
    return jnp.where(c == 0, 0.0, c * log_x)


def log_dirichlet_density(log_p: jax.Array, alpha) -> jax.Array:
    """log Dir(p; α) along the last axis, given log p: log Γ(Σα) − Σ log Γ(α) + Σ (α − 1) log p."""
    f = log_p.dtype
    a = jnp.broadcast_to(jnp.asarray(alpha, f), log_p.shape)
    return gammaln(a.sum(-1)) - jnp.sum(gammaln(a), -1) + jnp.sum(xlogy(a - 1, log_p), -1)


def log_beta_density(log_p: jax.Array, log1m_p: jax.Array, a, b) -> jax.Array:
    """log Beta(p; a, b) elementwise, given log p and log(1 − p)."""
    return (
        gammaln(a + b) - gammaln(a) - gammaln(b)
        + xlogy(jnp.asarray(a - 1.0, log_p.dtype), log_p)
        + xlogy(jnp.asarray(b - 1.0, log_p.dtype), log1m_p)
    )


# ============================================================================ simulation
def simulate_tokens(key, log_beta: jax.Array, labels: jax.Array, docs: Documents) -> jax.Array:
    """New words w_i ~ Cat(β_{z_{d(i)}}) for every token position, (N,) int32.

    Keeps document lengths and token positions; for Geweke tests and
    simulation studies (it forms an N × V array of log-probabilities, so it is
    meant for small corpora).
    """
    return gr.categorical(key, log_beta[labels[docs.doc_ids]])


def simulate_binary(key, log_p: jax.Array, labels: jax.Array) -> jax.Array:
    """New x_df ~ Bernoulli(p_{z_d f}), (D, F) int32."""
    u = gr.uniform(key, (labels.shape[0], log_p.shape[1]), dtype=log_p.dtype)
    return (jnp.log(u) < log_p[labels]).astype(jnp.int32)
