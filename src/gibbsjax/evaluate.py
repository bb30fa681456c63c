"""Model-agnostic evaluation of fitted text models: label accuracy, top words.

Plain numpy on posterior summaries (not JAX): these run once after sampling.

* :func:`accuracy` -- fraction of predicted labels equal to the known ones.
* :func:`confusion_matrix` -- counts of (true label, predicted label).
* :func:`matched_accuracy` -- accuracy of unsupervised clusters after the best
  one-to-one matching of clusters to labels (Hungarian algorithm).
* :func:`top_words` -- the highest-probability words of each row of a
  class/topic-by-word matrix.
* :func:`relabel_draws` -- undo label switching draw by draw (every draw's
  components matched to a common reference), for mixtures whose chains switch
  labels *within* a chain.

Perplexity and coherence are to come.
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
    "relabel_draws",
    "heldout_perplexity",
    "coherence",
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


def relabel_draws(draws: Any, *, max_iter: int = 20) -> np.ndarray:
    """Per-draw permutations that undo label switching, (chain, draw, K).

    ``draws`` has shape ``(chain, draw, K, ...)``: one estimate of every
    component per draw (e.g. each draw's cluster-word distributions).  Every
    draw's components are matched to a common reference by the Hungarian
    algorithm on squared Euclidean distances; the reference starts as the
    last draw of chain 0 and becomes the mean of the relabelled draws, until
    no permutation changes (the iterative relabelling of Stephens 2000 with a
    quadratic loss).  ``perm[c, t, k]`` is the component of draw ``(c, t)`` that
    plays the role of reference component ``k``.

    Unlike :func:`gibbsjax.diagnostics.align_chains`, which permutes whole
    chains, this also undoes switches *within* a chain, which happen when
    components overlap (small data, e.g. the a/b/c corpus).

    >>> d = np.array([[[[1., 0.], [0., 1.]], [[0., 1.], [1., 0.]]]])   # (1 chain, 2 draws, K=2, 2)
    >>> relabel_draws(d)[0].tolist()   # the reference is the last draw: draw 0 is swapped
    [[1, 0], [0, 1]]
    """
    from scipy.optimize import linear_sum_assignment

    x = np.asarray(draws, dtype=np.float64)
    if x.ndim < 3:
        raise ValueError(f"draws must have shape (chain, draw, K, ...), got {x.shape}")
    n_chain, n_draw, k = x.shape[:3]
    flat = x.reshape(n_chain * n_draw, k, -1)
    if not np.all(np.isfinite(flat)):
        raise ValueError("draws contain NaN or infinite values")
    sq = np.einsum("nkf,nkf->nk", flat, flat)
    reference = flat[(n_draw - 1)]  # last draw of chain 0
    perms = np.tile(np.arange(k), (flat.shape[0], 1))
    for it in range(max_iter):
        # cost[n, i, j] = |reference_i - draw_n,j|^2
        cost = (reference * reference).sum(-1)[None, :, None] + sq[:, None, :] - 2 * np.einsum(
            "if,njf->nij", reference, flat
        )
        new = np.empty_like(perms)
        for n in range(flat.shape[0]):
            rows, cols = linear_sum_assignment(cost[n])
            new[n, rows] = cols
        reference = np.take_along_axis(flat, new[:, :, None], axis=1).mean(axis=0)
        if it > 0 and np.array_equal(new, perms):
            break
        perms = new
    return perms.reshape(n_chain, n_draw, k)


# ============================================================================ topic models
def _as_corpus(X, name: str, vocab_size: int | None = None):
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


def heldout_perplexity(topic_word, X_heldout, *, alpha: float = 0.1, fraction: float = 0.5,
                       num_sweeps: int = 100, num_burn: int = 50, seed: int = 0,
                       shuffle_seed: int | None = 0) -> float:
    """Held-out perplexity by document completion (Wallach, Murray, Salakhutdinov & Mimno, ICML 2009).

    For every held-out document, θ_d is estimated from its first ``fraction`` of
    tokens with the topics φ (``topic_word``, K × V) held fixed (the exact
    partially collapsed z-sampler, :func:`gibbsjax.models.lda.infer_doc_topics`),
    and the remaining tokens are scored:
    perplexity = exp(−Σ_d Σ_{i ∈ second part} log Σ_k θ_dk φ_{k,w_i} / #scored tokens).
    Lower is better; a model that knows nothing (uniform over V words) scores V.
    Tokens are shuffled within each document first (``shuffle_seed``; ``None``
    keeps their order), since documents read from a count matrix are sorted by
    word id.  Documents with fewer than two tokens are skipped.

    >>> import numpy as np
    >>> phi = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    >>> X = np.array([[6, 2, 0], [0, 2, 6]])
    >>> round(heldout_perplexity(phi, X, num_sweeps=40, num_burn=10), 1) < 3.0
    True
    """
    from gibbsjax.models.lda import infer_doc_topics

    phi = np.asarray(topic_word, dtype=np.float64)
    if phi.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {phi.shape}")
    corpus = _as_corpus(X_heldout, "X_heldout", phi.shape[1])
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    keep = corpus.doc_lengths >= 2
    if not np.any(keep):
        raise ValueError("X_heldout has no document with at least two tokens")
    corpus = corpus.subset(keep)
    observed, scored = corpus.split_tokens(fraction, seed=shuffle_seed)
    ok = (observed.doc_lengths > 0) & (scored.doc_lengths > 0)
    observed, scored = observed.subset(ok), scored.subset(ok)
    theta = infer_doc_topics(phi, observed, alpha=alpha, num_sweeps=num_sweeps, num_burn=num_burn, seed=seed)
    phi = phi / phi.sum(axis=1, keepdims=True)
    # p(w_i | θ_d, φ) for every scored token, without a loop over documents
    probs = np.einsum("nk,kn->n", theta[scored.doc_ids], phi[:, scored.tokens])
    return float(np.exp(-np.mean(np.log(np.maximum(probs, 1e-300)))))


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
    corpus = _as_corpus(X, "X", tw.shape[1])
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
