"""Model-agnostic evaluation of fitted text models: label accuracy, top words.

Plain numpy on posterior summaries (not JAX): these run once after sampling.

* :func:`accuracy` -- fraction of predicted labels equal to the known ones.
* :func:`confusion_matrix` -- counts of (true label, predicted label).
* :func:`matched_accuracy` -- accuracy of unsupervised clusters after the best
  one-to-one matching of clusters to labels (Hungarian algorithm).
* :func:`top_words` -- the highest-probability words of each row of a
  class/topic-by-word matrix.
* :func:`coherence` -- UMass or NPMI coherence of each topic's top words.

Held-out perplexity needs a model's inference for new documents, so it lives
with the model (:func:`gibbsjax.models.lda.heldout_perplexity`); label
switching lives in :mod:`gibbsjax.labels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "accuracy",
    "confusion_matrix",
    "matched_accuracy",
    "top_words",
    "coherence",
    "as_corpus",
]


def _labels(name: str, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer labels, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _pair(pred: Any, truth: Any, mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    p, t = _labels("pred", pred), _labels("truth", truth)
    if p.shape != t.shape:
        raise ValueError(f"pred and truth must have the same shape, got {p.shape} and {t.shape}")
    keep = t >= 0
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != t.shape:
            raise ValueError(f"mask must have shape {t.shape}, got {m.shape}")
        keep &= m
    return p[keep], t[keep]


def accuracy(pred: Any, truth: Any, mask: Any = None) -> float:
    """Fraction of documents with ``pred == truth``, over those with a known label.

    Entries with ``truth < 0`` (unknown) are left out, and so are those where
    ``mask`` is false (e.g. ``mask`` = the labels hidden from the sampler).
    Returns NaN when no document is left.

    >>> accuracy([0, 1, 1, 0], [0, 1, 0, -1])
    0.6666666666666666
    >>> accuracy([0, 1, 1, 0], [0, 1, 0, -1], mask=[False, True, True, True])
    0.5
    """
    p, t = _pair(pred, truth, mask)
    if t.size == 0:
        return float("nan")
    return float(np.mean(p == t))


def confusion_matrix(pred: Any, truth: Any, num_classes: int | None = None, mask: Any = None) -> np.ndarray:
    """``M[i, j]`` = number of documents with true label i predicted as j (known labels only).

    >>> confusion_matrix([0, 1, 1], [0, 1, 0]).tolist()
    [[1, 1], [0, 1]]
    """
    p, t = _pair(pred, truth, mask)
    if np.any(p < 0):
        raise ValueError("pred must hold labels >= 0")
    k = num_classes if num_classes is not None else int(max(p.max(initial=-1), t.max(initial=-1)) + 1)
    if p.size and max(p.max(), t.max()) >= k:
        raise ValueError(f"a label is out of range for num_classes={k}")
    m = np.zeros((k, k), dtype=np.int64)
    np.add.at(m, (t, p), 1)
    return m


def matched_accuracy(pred: Any, truth: Any, mask: Any = None) -> tuple[float, np.ndarray]:
    """Accuracy of clusters against labels after the best one-to-one matching.

    Clusters of an unsupervised mixture have no names; each cluster is mapped
    to at most one label so as to maximise the number of agreements
    (``scipy.optimize.linear_sum_assignment``).  Returns ``(accuracy, mapping)``
    where ``mapping[c]`` is the label of cluster ``c`` (``-1`` if unmatched).

    >>> acc, mapping = matched_accuracy([1, 1, 0, 0], [0, 0, 1, 1])
    >>> acc, mapping.tolist()
    (1.0, [1, 0])
    """
    from scipy.optimize import linear_sum_assignment

    p, t = _pair(pred, truth, mask)
    n_clusters = int(p.max(initial=-1)) + 1
    n_labels = int(t.max(initial=-1)) + 1
    mapping = np.full(max(n_clusters, 0), -1, dtype=np.int64)
    if t.size == 0:
        return float("nan"), mapping
    agree = np.zeros((n_clusters, n_labels), dtype=np.int64)
    np.add.at(agree, (p, t), 1)
    rows, cols = linear_sum_assignment(-agree)
    mapping[rows] = cols
    return float(agree[rows, cols].sum() / t.size), mapping


def top_words(matrix: Any, vocab: Sequence[str], n: int = 10) -> list[list[str]]:
    """The ``n`` highest-valued words of every row of a (K, V) matrix, best first.

    ``matrix`` is e.g. the posterior mean of a topic-word or class-word
    distribution; ties are broken by word id.

    >>> top_words([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]], ["a", "b", "c"], n=2)
    [['b', 'c'], ['a', 'c']]
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D (rows × words), got shape {m.shape}")
    if len(vocab) != m.shape[1]:
        raise ValueError(f"vocab has {len(vocab)} words for a matrix with {m.shape[1]} columns")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    order = np.argsort(-m, axis=1, kind="stable")[:, : min(n, m.shape[1])]
    return [[str(vocab[j]) for j in row] for row in order]


# ============================================================================ topic models
def as_corpus(X, name: str, vocab_size: int | None = None):
    """``X`` as a :class:`~gibbsjax.corpus.Corpus` (a Corpus, or a document-term
    matrix), checked against ``vocab_size``; errors name ``name``.

    >>> as_corpus([[1, 0], [0, 2]], "X").num_tokens
    3
    """
    from gibbsjax.corpus import Corpus

    if isinstance(X, Corpus):
        corpus = X
    else:
        try:
            corpus = Corpus.from_dtm(X, empty="keep")
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    if vocab_size is not None and corpus.vocab_size != vocab_size:
        raise ValueError(
            f"{name} has a vocabulary of {corpus.vocab_size} words but the topics have {vocab_size}"
        )
    return corpus


def _top_indices(topic_word, n: int) -> np.ndarray:
    tw = np.asarray(topic_word)
    return np.argsort(-tw, axis=1, kind="stable")[:, :n]


def coherence(topic_word, X, *, kind: str = "umass", n: int = 10, eps: float = 1e-12) -> np.ndarray:
    """Coherence of each topic's top ``n`` words, from document co-occurrence in ``X``.

    * ``"umass"`` (Mimno, Wallach, Talley, Leenders & McCallum, EMNLP 2011):
      C_k = Σ_{m=2}^{n} Σ_{l<m} log((D(w_m, w_l) + 1) / D(w_l)), words ordered by
      probability, D(·) document (co-)frequencies; higher (closer to 0) is better.
    * ``"npmi"`` (Bouma 2009; Aletras & Stevenson 2013): the mean over word pairs
      of log(P(w_i, w_j) / (P(w_i) P(w_j))) / −log P(w_i, w_j), probabilities
      as document fractions (ε-smoothed); in [−1, 1], higher is better.

    ``X`` is the reference corpus (a Corpus or document-term matrix with the
    same vocabulary), usually the training corpus.  Returns one value per topic.

    >>> import numpy as np
    >>> X = np.array([[3, 2, 0, 0], [2, 1, 0, 0], [0, 0, 4, 1], [0, 0, 1, 3]])
    >>> good = np.array([[.5, .5, 0, 0], [0, 0, .5, .5]])
    >>> bad = np.array([[.5, 0, .5, 0], [0, .5, 0, .5]])
    >>> bool(coherence(good, X, n=2).mean() > coherence(bad, X, n=2).mean())
    True
    """
    if kind not in ("umass", "npmi"):
        raise ValueError(f"kind must be 'umass' or 'npmi', got {kind!r}")
    tw = np.asarray(topic_word, dtype=np.float64)
    if tw.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {tw.shape}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= tw.shape[1]:
        raise ValueError(f"n must be an integer in [2, V={tw.shape[1]}], got {n!r}")
    corpus = as_corpus(X, "X", tw.shape[1])
    binary = (corpus.to_dtm() > 0).astype(np.float64).tocsc()
    num_docs = corpus.num_docs
    top = _top_indices(tw, n)
    scores = np.empty(tw.shape[0])
    lower = np.tril_indices(n, k=-1)  # pairs (m, l) with l < m
    for k, words in enumerate(top):  # topics, not tokens: K small co-occurrence matrices
        sub = binary[:, words]
        co = np.asarray((sub.T @ sub).todense())  # (n, n): D(w_m, w_l); diagonal D(w)
        df = np.diag(co)
        if kind == "umass":
            m, l = lower
            scores[k] = np.sum(np.log((co[m, l] + 1.0) / np.maximum(df[l], 1.0)))
        else:
            p = df / num_docs
            m, l = lower
            pj = co[m, l] / num_docs
            pmi = np.log((pj + eps) / (p[m] * p[l] + eps))
            scores[k] = np.mean(pmi / -np.log(pj + eps))
    return scores
