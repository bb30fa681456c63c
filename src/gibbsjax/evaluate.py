"""Model-agnostic evaluation of fitted text models: label accuracy, top words.

Plain numpy on posterior summaries (not JAX): these run once after sampling.

* :func:`accuracy` -- fraction of predicted labels equal to the known ones.
* :func:`confusion_matrix` -- counts of (true label, predicted label).
* :func:`matched_accuracy` -- accuracy of unsupervised clusters after the best
  one-to-one matching of clusters to labels (Hungarian algorithm).
* :func:`top_words` -- the highest-probability words of each row of a
  class/topic-by-word matrix (optionally with their probabilities).
* :func:`coherence` -- coherence of each topic's top words, by default as
  gensim computes it (``u_mass``, ``c_npmi``, ``c_v``), and the
  UMass sum Mimno et al. (2011) define (``umass_sum``).
* :func:`pyldavis_data` -- the five arrays ``pyLDAvis.prepare`` takes, without
  depending on pyLDAvis.

Held-out perplexity needs a model's inference for new documents, so it lives
with the model (:func:`gibbsjax.models.lda.heldout_perplexity`); label
switching lives in :mod:`gibbsjax.labels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gibbsjax.corpus import inputs
from gibbsjax.corpus import Corpus

__all__ = [
    "accuracy",
    "confusion_matrix",
    "matched_accuracy",
    "top_words",
    "coherence",
    "COHERENCE_KINDS",
    "COHERENCE_WINDOW_SIZES",
    "WINDOW_COUNTS",
    "pyldavis_data",
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

    Parameters
    ----------
    pred : array_like of int
        Predicted labels.
    truth : array_like of int
        Known labels; entries ``< 0`` (unknown) are left out.
    mask : array_like of bool, optional
        Where false, the entry is left out (e.g. ``mask`` = the labels hidden from
        the sampler).

    Returns
    -------
    float
        The fraction; NaN when no document is left.

    Examples
    --------
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
    """Counts of (true label, predicted label) over the known labels.

    Parameters
    ----------
    pred, truth : array_like of int
        As in :func:`accuracy`.
    num_classes : int, optional
        The matrix's size (default: one more than the largest label).
    mask : array_like of bool, optional
        Where false, the entry is left out.

    Returns
    -------
    numpy.ndarray
        ``M[i, j]`` = number of documents with true label i predicted as j.

    Examples
    --------
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
    (``scipy.optimize.linear_sum_assignment``).

    Parameters
    ----------
    pred : array_like of int
        Cluster of each document.
    truth : array_like of int
        Known labels (``< 0``: unknown, left out).
    mask : array_like of bool, optional
        Where false, the entry is left out.

    Returns
    -------
    accuracy : float
        The accuracy after matching.
    mapping : numpy.ndarray
        ``mapping[c]`` is the label of cluster ``c`` (``-1`` if unmatched).

    Examples
    --------
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


def top_words(matrix: Any, vocab: Sequence[str], n: int = 10, *, with_probabilities: bool = False) -> list[list]:
    """The ``n`` highest-valued words of every row of a (K, V) matrix, best first.

    ``matrix`` is e.g. the posterior mean of a topic-word or class-word
    distribution; ties are broken by word id.  With ``with_probabilities=True``
    every entry is a pair ``(word, value)`` (the value a Python float), as
    gensim's ``show_topic`` and tomotopy's ``get_topic_words`` give them.

    Parameters
    ----------
    matrix : array_like
        (K, V), e.g. the posterior mean of a topic-word or class-word distribution.
    vocab : sequence of str
        The V words.
    n : int, default 10
        Words per row.
    with_probabilities : bool, default False
        Give ``(word, value)`` pairs instead of words.

    Returns
    -------
    list of list
        One list of words (or pairs) per row, best first.

    Examples
    --------
    >>> top_words([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]], ["a", "b", "c"], n=2)
    [['b', 'c'], ['a', 'c']]
    >>> top_words([[0.1, 0.6, 0.3]], ["a", "b", "c"], n=1, with_probabilities=True)
    [[('b', 0.6)]]
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D (rows × words), got shape {m.shape}")
    if len(vocab) != m.shape[1]:
        raise ValueError(f"vocab has {len(vocab)} words for a matrix with {m.shape[1]} columns")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    order = _top_indices(m, n)
    if with_probabilities:
        return [[(str(vocab[j]), float(m[k, j])) for j in row] for k, row in enumerate(order)]
    return [[str(vocab[j]) for j in row] for row in order]


# ============================================================================ topic models
def as_corpus(X, name: str, vocab_size: int | None = None):
    """A corpus or document-term matrix as a :class:`~gibbsjax.corpus.Corpus`.

    Kept for callers of this name: :func:`gibbsjax.corpus.inputs.as_corpus` converts every input.

    Parameters
    ----------
    X : Corpus or array_like or scipy.sparse matrix
        The documents.
    name : str
        The argument's name, for error messages.
    vocab_size : int, optional
        The vocabulary size ``X`` must have.

    Returns
    -------
    Corpus
        The corpus.

    Raises
    ------
    ValueError
        Naming ``name``, when ``X`` is not a corpus or count matrix of that size.

    Examples
    --------
    >>> as_corpus([[1, 0], [0, 2]], "X").num_tokens
    3
    """
    return inputs.as_corpus(X, name, vocab_size=vocab_size)


def _top_indices(matrix, n: int) -> np.ndarray:
    """The columns of the ``n`` largest entries of every row, largest first, ties by column.

    Exactly ``np.argsort(-matrix, axis=1, kind="stable")[:, :n]``.  For a few words (n ≤ 32)
    of finite floats, n passes of a row-wise ``argmax`` (which gives the first, i.e. lowest,
    column of a tie), each taking its winner out: O(n · K · V), never a sort of whole rows.
    K = 100 rows of V = 10,000 words, n = 10, on the 2-core CPU here: 2 ms, where the sort
    takes 12 ms on rows like posterior means (many tied words) and 75-290 ms on rows without
    ties.  More words, integers, NaN or infinite entries: the sort.

    Parameters
    ----------
    matrix : array_like
        (K, V) numbers.
    n : int
        Columns per row (at most V are returned).

    Returns
    -------
    numpy.ndarray
        (K, min(n, V)) int64 column indices.

    Examples
    --------
    >>> _top_indices(np.array([[0.1, 0.6, 0.3, 0.6], [0.5, 0.2, 0.3, 0.0]]), 3).tolist()
    [[1, 3, 2], [0, 2, 1]]
    """
    m = np.asarray(matrix)
    k, v = m.shape
    n = min(int(n), v)
    if n > 32 or n == v or m.dtype.kind != "f" or not np.isfinite(m).all():
        return np.argsort(-m, axis=1, kind="stable")[:, :n]
    work = m.astype(np.float64)  # a copy: winners are taken out below
    rows = np.arange(k)
    out = np.empty((k, n), np.intp)
    for i in range(n):  # n passes over the rows (n ≤ 32), not a loop over rows or words
        best = np.argmax(work, axis=1)
        out[:, i] = best
        work[rows, best] = -np.inf  # below every finite entry: never a winner again
    return out


#: The coherence measures of :func:`coherence`, each with the convention it follows.
COHERENCE_KINDS = {
    "u_mass": "gensim's u_mass (the default): the mean over the pairs (w_m, w_l), l < m, of "
              "log((D(w_m, w_l)/D + eps) / (D(w_l)/D)); document co-occurrence, eps = 1e-12",
    "c_npmi": "gensim's c_npmi: the mean over ordered pairs of NPMI "
              "log((P(w_i, w_j) + eps) / (P(w_i) P(w_j))) / -log(P(w_i, w_j) + eps); probabilities over "
              "sliding windows of 10 tokens (window_size) counted as gensim counts them (window_count)",
    "c_v": "C_V of Röder, Both & Hinneburg (2015), as gensim's c_v computes it: NPMI over sliding windows of "
           "110 tokens (window_size) counted as gensim counts them (window_count), cosine of each word's NPMI "
           "vector with the topic's, mean",
    "umass_sum": "UMass as Mimno et al. (2011) define it: the sum (not the mean) over the same pairs as u_mass "
                 "of log((D(w_m, w_l) + 1) / D(w_l))",
}

#: Default sliding window of each window-based kind, in tokens (gensim's).
COHERENCE_WINDOW_SIZES = {"c_npmi": 10, "c_v": 110}

# another name for the same measure
_COHERENCE_ALIASES = {"umass_gensim": "u_mass"}
# names whose meaning changed: refused with the new names
_COHERENCE_RENAMED = {
    "umass": "kind='umass' is ambiguous and was renamed: 'u_mass' is gensim's mean over word pairs (the default), "
             "'umass_sum' is Mimno et al.'s sum (what 'umass' gave before)",
    "npmi": "kind='npmi' was renamed: 'c_npmi' is gensim's NPMI over sliding windows of 10 tokens; "
            "kind='c_npmi', window_size='document' counts whole documents (what 'npmi' gave before)",
}


def _coherence_kind(kind) -> str:
    if isinstance(kind, str) and kind in _COHERENCE_RENAMED:
        raise ValueError(_COHERENCE_RENAMED[kind])
    kind = _COHERENCE_ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if kind not in COHERENCE_KINDS:
        raise ValueError(f"kind must be one of {tuple(COHERENCE_KINDS)}, got {kind!r}")
    return kind


def _coherence_window(kind: str, window_size):
    """The window of a window-based kind: an int (tokens) or "document"; None for the document-based kinds."""
    if kind not in COHERENCE_WINDOW_SIZES:
        if window_size is not None:
            raise ValueError(f"window_size applies to the sliding-window kinds {tuple(COHERENCE_WINDOW_SIZES)}; "
                             f"{kind!r} counts documents, got window_size={window_size!r}")
        return None
    if window_size is None:
        return COHERENCE_WINDOW_SIZES[kind]
    if isinstance(window_size, str) and window_size == "document":
        return "document"
    if isinstance(window_size, bool) or not isinstance(window_size, (int, np.integer)) or window_size < 1:
        raise ValueError(f"window_size must be a positive integer (tokens) or 'document', got {window_size!r}")
    return int(window_size)


def coherence(topic_word, X, *, kind: str = "u_mass", n: int = 10, eps: float = 1e-12,
              window_size: int | str | None = None, window_count: str = "gensim") -> np.ndarray:
    """Coherence of each topic's top ``n`` words in a reference corpus ``X``; higher is better.

    The defaults give the numbers gensim 4.4's ``CoherenceModel(coherence=kind,
    topn=n)`` gives for the same top words and texts (the kinds are named as
    there; checked against gensim in ``tests/test_coherence.py``); the sum Mimno
    et al. define is ``"umass_sum"``.  D(w) is the number of documents (or
    windows) holding w, D(w, w') those holding both, D the number of documents
    (or windows), P(·) = D(·)/D; w_1, ..., w_n are a topic's top words, most
    probable first; ε = ``eps`` (gensim's 1e-12).

    * ``"u_mass"`` (default) -- gensim's ``u_mass``:
      C_k = mean over the n(n−1)/2 pairs l < m of log((D(w_m, w_l)/D + ε) / (D(w_l)/D)),
      document co-occurrence.  ≤ 0 up to ε; a pair that never co-occurs scores
      about log(ε D / D(w_l)) ≈ −25, a pair whose word w_l never occurs in ``X``
      scores 0 (as in gensim).
    * ``"c_npmi"`` -- gensim's ``c_npmi``: the mean over the n(n−1) ordered
      pairs i ≠ j of NPMI(w_i, w_j) = log((P(w_i, w_j) + ε) / (P(w_i) P(w_j))) /
      −log(P(w_i, w_j) + ε) (Bouma 2009; as a coherence: Aletras & Stevenson
      2013, Lau, Newman & Baldwin 2014), with P over sliding windows of
      ``window_size`` tokens (default 10; see below).  In [−1, 1].
    * ``"c_v"`` -- C_V of Röder, Both & Hinneburg (WSDM 2015), with gensim's
      choices: NPMI(w_i, w_j) as for ``c_npmi`` over sliding windows
      of ``window_size`` tokens (default 110); the context vector of w_i is
      (NPMI(w_i, w_j))_j over the topic's words, the topic's vector the sum of
      these; C_V is the mean over i of the cosine between the two.  Roughly in
      [0, 1].
    * ``"umass_sum"`` -- UMass as Mimno, Wallach, Talley, Leenders & McCallum
      (EMNLP 2011) define it: C_k = Σ_{m=2}^{n} Σ_{l<m} log((D(w_m, w_l) + 1) / D(w_l)),
      a *sum* over the same pairs with +1 smoothing (a word that never occurs
      counts as D(w_l) = 1), e.g. −100 for ten loosely related words.  Not
      ``u_mass`` times the number of pairs: a pair that never co-occurs costs
      log(1/D(w_l)) here and log(ε D/D(w_l)) there.  Quote which one you report.

    Sliding windows (``c_npmi``, ``c_v``): a document of L tokens has
    max(L − window_size + 1, 1) windows (one when L ≤ window_size, also when
    L = 0, as in gensim), window j holding its tokens j, ..., j + window_size − 1.
    They need the tokens in reading order, so ``X`` must be a
    :class:`~gibbsjax.corpus.Corpus` built from texts or token lists;
    ``window_size="document"`` makes every document one window (document
    co-occurrence; any ``X``).  Which windows a word counts in follows
    ``window_count``:

    * ``"gensim"`` (default) -- gensim 4.4's rule (``WordOccurrenceAccumulator``
      in ``gensim.topic_coherence.text_analysis``): sliding from one window to
      the next, the word of the token that leaves is marked absent, then the
      word of the token that enters present.  A word repeated within
      ``window_size`` tokens is therefore marked absent when its first
      occurrence leaves although another is still inside, until it enters
      again: in ``a b a c`` with windows of 3, ``a`` counts in 1 window, not 2.
      This gives gensim's numbers (to rounding).
    * ``"boolean"`` -- a word counts in every window that holds it (the boolean
      sliding window of Röder et al. 2015 as defined): higher probabilities for
      repeated words, so ``c_npmi`` and ``c_v`` differ from gensim's on texts
      that repeat a top word within ``window_size`` tokens (``c_v`` by 0.02 to
      0.4 on random texts longer than the window); equal where none does.

    A top word that never occurs in ``X`` makes its topic's ``c_npmi`` and
    ``c_v`` NaN (gensim: inf or NaN).

    tomotopy 0.14's ``Coherence(corpus, coherence=kind, targets=<the topic's
    words>)`` gives the same ``u_mass`` where every pair co-occurs in some
    document; otherwise, and for ``c_npmi`` and ``c_v``, it differs by rules of
    its own (checked against tomotopy in ``tests/test_coherence.py``, tomotopy being
    in the ``test`` extra; numbers in ``benchmarks/README.md``):

    * windows: a document of L ≥ ``window_size`` tokens has the same
      L − ``window_size`` + 1 windows, but tomotopy's window j holds tokens
      j + 1, ..., j + ``window_size`` − 1 (not token j), each word counted
      once per window (boolean); a document with none of the ``targets`` counts
      no window.  Its ``c_npmi`` and ``c_v`` with ``window_size=w`` are ours with
      ``window_count="boolean"``, ``window_size=w - 1`` on the documents holding
      a topic word, the first token dropped from those of w tokens or more
      (equal to 1e-10; ``c_v`` to 1e-7, tomotopy's vectors being float32).
    * ε: tomotopy's u_mass term is log(P(w_m, w_l)/(P(w_l) + ε) + ε): a
      pair that never co-occurs scores log ε (ours log(ε D/D(w_l))), a word in
      no document log ε (ours 0).  Its NPMI(w, w) is 1 by definition; ours (as
      gensim's) is log(1 + ε)/−log(1 + ε) = −1 for a word in every window
      (e.g. a topic whose words fill every window: tomotopy's ``c_v`` 0.5, ours 1).
    * ``c_v`` with one ``Coherence`` for all topics (``targets`` = all their
      words, as when built from a tomotopy model): the context vector of w_i
      runs over all those words, not over the topic's own.

    On stdlib_docs (each label's ten most frequent words as a topic) tomotopy's
    numbers differ from ours by up to 0.46 (``u_mass``), 0.2 (``c_npmi``) and
    0.5 (``c_v``): compare measures from one library only.

    Older names: ``"umass_gensim"`` is accepted for ``"u_mass"``; ``"umass"``
    (which was the sum, now ``"umass_sum"``) and ``"npmi"`` (document
    co-occurrence, now ``"c_npmi"`` with ``window_size="document"``) raise a
    ValueError naming the new ones.

    ``X`` is the reference corpus (a Corpus or document-term matrix with the
    same vocabulary), usually the training corpus.  Returns one value per topic.

    Parameters
    ----------
    topic_word : array_like
        (K, V) topic-word probabilities (or any scores ranking the words).
    X : Corpus or array_like or scipy.sparse matrix
        The reference corpus, with the same vocabulary.
    kind : {"u_mass", "c_npmi", "c_v", "umass_sum"}, default "u_mass"
        The measure (see above).
    n : int, default 10
        Top words per topic.
    eps : float, default 1e-12
        ε, the smoothing of ``u_mass``, ``c_npmi`` and ``c_v``.
    window_size : int or "document", optional
        The sliding window of ``c_npmi`` (default 10) and ``c_v`` (default 110);
        ``"document"`` makes every document one window.
    window_count : {"gensim", "boolean"}, default "gensim"
        How a word repeated inside a sliding window is counted (see above).

    Returns
    -------
    numpy.ndarray
        One value per topic (K,).

    Raises
    ------
    ValueError
        For an unknown ``kind`` (naming the new names of the old ones), a
        ``window_size`` or ``window_count`` given to a kind that counts documents,
        an unknown ``window_count``, or sliding windows
        asked of an ``X`` without tokens in reading order.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3, 2, 0, 0], [2, 1, 0, 0], [0, 0, 4, 1], [0, 0, 1, 3]])
    >>> good = np.array([[.5, .5, 0, 0], [0, 0, .5, .5]])
    >>> bad = np.array([[.5, 0, .5, 0], [0, .5, 0, .5]])
    >>> bool(coherence(good, X, n=2).mean() > coherence(bad, X, n=2).mean())
    True
    >>> coherence(good, X, n=2).round(3).tolist(), coherence(good, X, n=2, kind="umass_sum").round(3).tolist()
    ([0.0, 0.0], [0.405, 0.405])
    >>> coherence(good, X, n=2, kind="c_npmi", window_size="document").round(3).tolist()
    [1.0, 1.0]
    >>> from gibbsjax.corpus import Corpus
    >>> texts = Corpus.from_token_lists([["a", "b", "a", "c"], ["c", "d", "a", "b"]])
    >>> ab = [[.4, .3, .2, .1]]  # vocabulary a, b, c, d: top words a, b
    >>> coherence(ab, texts, n=2, kind="c_npmi", window_size=3).round(3).tolist()  # gensim's
    [-0.17]
    >>> coherence(ab, texts, n=2, kind="c_npmi", window_size=3, window_count="boolean").round(3).tolist()
    [0.0]
    """
    kind = _coherence_kind(kind)
    tw = np.asarray(topic_word, dtype=np.float64)
    if tw.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {tw.shape}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= tw.shape[1]:
        raise ValueError(f"n must be an integer in [2, V={tw.shape[1]}], got {n!r}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not 0 <= eps < 1:
        raise ValueError(f"eps must be a number in [0, 1), got {eps!r}")
    window = _coherence_window(kind, window_size)
    if window_count not in WINDOW_COUNTS:
        raise ValueError(f"window_count must be one of {WINDOW_COUNTS}, got {window_count!r}")
    if window is None and window_count != "gensim":
        raise ValueError(f"window_count applies to the sliding-window kinds {tuple(COHERENCE_WINDOW_SIZES)}; "
                         f"{kind!r} counts documents, got window_count={window_count!r}")
    if isinstance(window, int) and not isinstance(X, Corpus):
        raise ValueError(f"{kind} counts words in sliding windows of the texts, so X must be a Corpus built from "
                         "texts or token lists (a count matrix has lost the word order; window_size='document' "
                         f"counts whole documents), got {type(X).__name__}")
    corpus = inputs.as_corpus(X, "X", vocab_size=tw.shape[1])
    top = _top_indices(tw, n)
    if window is None:
        return _umass(corpus, top, kind, float(eps))
    words, index = np.unique(top, return_inverse=True)
    if window == "document":  # every document is one window, in which both rules count a word that occurs
        counts, total = _document_counts(corpus, words)
    else:
        counts, total = _window_counts(corpus, words, window, window_count)
    joint = counts / total  # P(w_i, w_j); P(w_i) on the diagonal
    return (_c_v if kind == "c_v" else _c_npmi)(joint, index.reshape(top.shape), float(eps))


def _umass(corpus, top: np.ndarray, kind: str, eps: float) -> np.ndarray:
    """u_mass (mean, ε) or umass_sum (sum, +1) from document co-occurrence.

    The counts of every topic's pairs come from one co-occurrence matrix of all the top words
    (:func:`_document_counts`: only their occurrences, not a document-term matrix of the whole
    corpus), the same integers as per-topic products of the indicator, so the same scores."""
    words, index = np.unique(top, return_inverse=True)
    every, num_docs = _document_counts(corpus, words)
    scores = np.empty(top.shape[0])
    m, l = np.tril_indices(top.shape[1], k=-1)  # pairs (m, l) with l < m: w_l is the more probable word
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, idx in enumerate(index.reshape(top.shape)):  # topics, not tokens: K small matrices
            co = every[np.ix_(idx, idx)]  # (n, n): D(w_m, w_l); diagonal D(w)
            df = np.diag(co)
            if kind == "umass_sum":
                scores[k] = np.sum(np.log((co[m, l] + 1.0) / np.maximum(df[l], 1.0)))
            else:
                terms = np.log((co[m, l] / num_docs + eps) / (df[l] / num_docs))
                scores[k] = np.mean(np.where(df[l] > 0, terms, 0.0))
    return scores


def _npmi_matrix(joint: np.ndarray, idx: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """NPMI of every pair of the words ``idx`` from the joint window probabilities (diagonal:
    each word's own probability), log((P_ij + ε)/(P_i P_j)) / −log(P_ij + ε); and the P_i."""
    pj = joint[np.ix_(idx, idx)]
    p = np.diag(pj)
    return np.log((pj + eps) / (p[:, None] * p[None, :])) / -np.log(pj + eps), p


def _c_npmi(joint: np.ndarray, index: np.ndarray, eps: float) -> np.ndarray:
    off_diagonal = ~np.eye(index.shape[1], dtype=bool)  # the ordered pairs i != j
    scores = np.empty(index.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, idx in enumerate(index):  # topics, not tokens
            npmi, p = _npmi_matrix(joint, idx, eps)
            scores[k] = np.mean(npmi[off_diagonal]) if np.all(p > 0) else np.nan
    return scores


#: How :func:`coherence` counts a word in a sliding window: gensim's rule (the default) or a true boolean window.
WINDOW_COUNTS = ("gensim", "boolean")


def _window_intervals(pos: np.ndarray, group: np.ndarray, per_doc: np.ndarray, window: int,
                      rule: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The windows (within its document) in which each occurrence marks its word present.

    ``pos`` is each top-word token's position in its document, ``group`` a key of its
    (document, word), ``per_doc`` its document's number of windows.  Returns ``(keep, lo, hi)``:
    the occurrences ``keep`` mark windows ``lo ... hi`` (at most ``window`` of them).

    * ``"boolean"``: window j holds tokens j ... j + window − 1, so a token at p lies in
      windows max(0, p − window + 1) ... min(p, last).
    * ``"gensim"``: the rule of gensim 4.4's ``WordOccurrenceAccumulator``
      (``gensim.topic_coherence.text_analysis``), which keeps a set of present words and,
      sliding from window t − 1 to t, first marks the word that left (token t − 1) absent and
      then the word that entered (token t + window − 1) present.  So an occurrence at p is
      marked present at window max(0, p − window + 1) (its *enter* time) and absent at window
      p + 1 (its *leave* time), leaves before enters within a step, and the word's state in a
      window is that of its latest event: a word that leaves while another of its occurrences
      is still inside the window is absent until it enters again.  Each enter event marks the
      windows up to the word's next event (in the same document), so the marked intervals of
      a word are disjoint.  Vectorised: one sort of the events by (document, word, time, phase).
    """
    enter = np.maximum(pos - window + 1, 0)
    if rule == "boolean":
        return np.ones(pos.size, bool), enter, np.minimum(pos, per_doc - 1)
    m = pos.size
    # events: enters (phase 1) and leaves (phase 0, processed first) of every occurrence
    time = np.concatenate([enter, pos + 1])
    phase = np.concatenate([np.ones(m, np.int64), np.zeros(m, np.int64)])
    key = np.concatenate([group, group])
    order = np.lexsort((phase, time, key))
    t_sorted, k_sorted = time[order], key[order]
    limit = np.concatenate([per_doc, per_doc])[order]  # windows of the event's document
    same = np.append(k_sorted[1:] == k_sorted[:-1], False)
    next_time = np.where(same, np.append(t_sorted[1:], 0), limit)
    stop = np.minimum(next_time, limit) - 1  # last window marked by this event, if an enter
    is_enter = order < m
    occurrence = order[is_enter]
    hi = np.empty(m, np.int64)
    hi[occurrence] = stop[is_enter]
    return hi >= enter, enter, hi


def _occurrences(corpus, words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every token of ``words`` in ``corpus``: its index in ``corpus.tokens``, its document and
    the index of its word in ``words`` (int64 each).  One int32 gather per token of the corpus."""
    column = np.full(corpus.vocab_size, -1, np.int32)
    column[words] = np.arange(len(words))
    cols = column[corpus.tokens]
    where = np.flatnonzero(cols >= 0)
    doc = np.searchsorted(corpus.doc_offsets, where, side="right") - 1
    return where, doc, cols[where].astype(np.int64)


def _document_counts(corpus, words: np.ndarray) -> tuple[np.ndarray, int]:
    """Document co-occurrence: ``C[a, b]`` = documents holding both ``words[a]`` and ``words[b]``
    (``C[a, a]``: documents holding ``words[a]``), and the number of documents (each one window,
    an empty one too, as gensim counts them).  One sparse document × word indicator and its
    product: memory of the order of the top words' occurrences."""
    from scipy import sparse  # here: `import gibbsjax` stays light (tests/test_plots.py)

    u = len(words)
    _, doc, cols = _occurrences(corpus, words)
    present = sparse.csr_matrix((np.ones(doc.size), (doc, cols)), shape=(corpus.num_docs, u))
    present.data[:] = 1.0  # duplicates summed by the constructor: presence, not counts
    return (present.T @ present).toarray(), int(corpus.num_docs)


def _window_counts(corpus, words: np.ndarray, window: int, rule: str = "gensim",
                   cells: int = 1 << 22) -> tuple[np.ndarray, int]:
    """Sliding windows: ``C[a, b]`` = windows holding both ``words[a]`` and ``words[b]``
    (``C[a, a]``: windows holding ``words[a]``), and the number of windows.

    A document of L tokens has max(L − window + 1, 1) windows (one when L ≤ window,
    also when L = 0, as gensim counts them: ``gensim.utils.iter_windows`` with
    ``ignore_below_size=False``); window j holds its tokens j ... j + window − 1.  Which
    windows a word counts in follows ``rule`` (:func:`_window_intervals`).  Every
    occurrence marks an interval of at most ``window`` windows, so each window's
    occurrences are a cumulative sum of interval ends, computed a block of windows at a
    time (``cells`` = windows × words per block; no loop over documents or tokens)."""
    from scipy import sparse  # here: `import gibbsjax` stays light

    u = len(words)
    lengths = corpus.doc_lengths
    per_doc = np.maximum(lengths - window + 1, 1)
    first = np.concatenate([[0], np.cumsum(per_doc)])
    total = int(first[-1])
    where, doc, cols = _occurrences(corpus, words)
    pos = where - corpus.doc_offsets[doc]
    keep, lo, hi = _window_intervals(pos, doc * u + cols, per_doc[doc], window, rule)
    lo, hi, cols = lo[keep] + first[doc[keep]], hi[keep] + first[doc[keep]], cols[keep]
    order = np.argsort(lo, kind="stable")
    lo, hi, cols = lo[order], hi[order], cols[order]
    counts = np.zeros((u, u))
    block = max(cells // max(u, 1), 1)
    for b0 in range(0, total, block):
        b1 = min(b0 + block, total)
        # intervals starting in [b0 − window + 1, b1) are the only ones that can reach the block
        i0, i1 = np.searchsorted(lo, b0 - window + 1, side="left"), np.searchsorted(lo, b1, side="left")
        start = np.maximum(lo[i0:i1], b0) - b0
        stop = np.minimum(hi[i0:i1], b1 - 1) - b0 + 1
        inside = stop > start
        if not inside.any():
            continue
        size = b1 - b0 + 1
        c = cols[i0:i1][inside]
        diff = (np.bincount(start[inside] * u + c, minlength=size * u)
                - np.bincount(stop[inside] * u + c, minlength=size * u))
        # a window holds few top words: the product of the sparse indicator is cheap
        present = sparse.csr_matrix((np.cumsum(diff.reshape(size, u), axis=0)[:-1] > 0).astype(np.float64))
        counts += (present.T @ present).toarray()  # exact: integers far below 2^53
    return counts, total


def _c_v(joint: np.ndarray, index: np.ndarray, eps: float) -> np.ndarray:
    scores = np.empty(index.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, idx in enumerate(index):  # topics, not tokens
            npmi, _ = _npmi_matrix(joint, idx, eps)
            topic = npmi.sum(axis=0)  # the topic's context vector: Σ_i NPMI(w_i, w_j)
            cosine = npmi @ topic / (np.linalg.norm(npmi, axis=1) * np.linalg.norm(topic))
            scores[k] = np.mean(cosine)
    return scores


def pyldavis_data(topic_word, doc_topic, X, vocab: Sequence[str] | None = None) -> dict[str, Any]:
    """The five arrays ``pyLDAvis.prepare`` takes, as a dict.

    ``pyLDAvis.prepare(**pyldavis_data(phi, theta, X))`` draws the topics
    (gibbsjax does not depend on pyLDAvis).  Documents without tokens are left out
    (pyLDAvis weighs documents by their length).  pyLDAvis divides by
    ``term_frequency``: a word that never occurs in ``X`` (possible with a
    vocabulary fixed in advance) gives it infinities, so drop such words first.

    Parameters
    ----------
    topic_word : array_like
        (K, V) topic-word distributions.
    doc_topic : array_like
        (D, K) document-topic proportions of the documents of ``X``.
    X : Corpus or array_like or scipy.sparse matrix
        The documents (usually the training corpus).
    vocab : sequence of str, optional
        The words (default: the corpus's own).

    Returns
    -------
    dict
        * ``topic_term_dists`` (K × V): ``topic_word`` as float64, rows rescaled to sum to 1;
        * ``doc_topic_dists`` (D × K): ``doc_topic`` likewise;
        * ``doc_lengths`` (D,): tokens per document of ``X``;
        * ``vocab`` (V,): the words;
        * ``term_frequency`` (V,): occurrences of every word in ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> d = pyldavis_data([[.5, .5, 0], [0, .2, .8]], [[1, 0], [.3, .7]], np.array([[2, 1, 0], [0, 1, 3]]))
    >>> sorted(d), d["doc_lengths"].tolist(), d["term_frequency"].tolist()
    (['doc_lengths', 'doc_topic_dists', 'term_frequency', 'topic_term_dists', 'vocab'], [3, 4], [2, 2, 3])
    """
    phi = np.asarray(topic_word, dtype=np.float64)
    theta = np.asarray(doc_topic, dtype=np.float64)
    if phi.ndim != 2 or theta.ndim != 2:
        raise ValueError(f"topic_word (K × V) and doc_topic (D × K) must be 2-D, got shapes {phi.shape} "
                         f"and {theta.shape}")
    if theta.shape[1] != phi.shape[0]:
        raise ValueError(f"doc_topic has {theta.shape[1]} topics, topic_word {phi.shape[0]}")
    corpus = inputs.as_corpus(X, "X", vocab_size=phi.shape[1])
    if corpus.num_docs != theta.shape[0]:
        raise ValueError(f"X has {corpus.num_docs} documents, doc_topic {theta.shape[0]} rows")
    words = corpus.vocab if vocab is None else tuple(str(w) for w in vocab)
    if len(words) != phi.shape[1]:
        raise ValueError(f"vocab has {len(words)} words for {phi.shape[1]} columns of topic_word")
    for name, m in (("topic_word", phi), ("doc_topic", theta)):
        if not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(m.sum(axis=1) <= 0):
            raise ValueError(f"{name} must hold non-negative probabilities with positive row sums")
    lengths = corpus.doc_lengths
    keep = lengths > 0
    return {
        "topic_term_dists": phi / phi.sum(axis=1, keepdims=True),
        "doc_topic_dists": theta[keep] / theta[keep].sum(axis=1, keepdims=True),
        "doc_lengths": lengths[keep],
        "vocab": list(words),
        "term_frequency": corpus.word_counts,
    }
