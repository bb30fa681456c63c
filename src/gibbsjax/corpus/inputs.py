"""Documents as users hold them, turned into a :class:`~gibbsjax.corpus.Corpus`: :func:`as_corpus`.

One converter for every front door that takes documents (:class:`gibbsjax.LDA`'s
``fit``, ``transform``, ``perplexity``, ``coherence``; :mod:`gibbsjax.evaluate`).
It accepts

* a :class:`~gibbsjax.corpus.Corpus`;
* a document-term count matrix (D × V, scipy.sparse or dense, e.g. from
  scikit-learn's ``CountVectorizer``), with ``vocab=`` naming its columns
  (without it a DataFrame's column names when all are strings, else the words
  are ``"0"``, ..., ``"V-1"``);
* gensim's bag of words: an iterable of documents ``[(id, count), ...]`` (what
  ``Dictionary.doc2bow`` or an ``MmCorpus`` gives), counts non-negative integers
  (``2.0`` is 2), with ``vocab=`` mapping ids to words: any mapping id -> word (a
  gensim ``Dictionary``; the words in increasing id order) or a sequence of words
  (id ``i`` is ``vocab[i]``).  Without it the words are the ids as strings,
  ``"0"``, ..., ``"m"`` (``m`` the largest id); for a fitted model, ids are
  positions in its vocabulary (a gensim ``Dictionary``'s ids when it was fitted
  with one whose ids are ``0``, ..., ``V-1``, as ``compactify`` leaves them);
* an iterable of token lists (``[["cat", "sat"], ...]``,
  :meth:`Corpus.from_token_lists <gibbsjax.corpus.Corpus.from_token_lists>`);
* an iterable of raw strings, tokenised by
  :meth:`Corpus.from_texts <gibbsjax.corpus.Corpus.from_texts>` (lower-cased, words
  the matches of ``token_pattern``, by default scikit-learn's).

When the vocabulary is built from the documents (texts and token lists, no
``model_vocab``), :func:`filter_words` applies ``stop_words``, ``min_df`` and
``max_df`` as scikit-learn's ``CountVectorizer`` does (document frequency);
:func:`check_word_filters` checks them.  Other inputs carry their vocabulary, so
these filters are a ``ValueError`` for them.

A mix (strings and token lists, ragged rows of numbers) is a ``ValueError``.
Documents for a fitted model (``model_vocab``) are matched to its words *by name*
whenever both sides have names: a Corpus or a matrix with ``vocab=`` in another word
order is reordered, and one whose vocabulary differs is refused (``ValueError``
naming a word); token lists and texts are encoded with the model's vocabulary,
words it does not know being ignored.  A matrix without names can only be checked
for its number of columns.  Every error names the argument (``name``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real

import numpy as np

from gibbsjax.corpus.core import Corpus, apply_empty, corpus_from_matrix, rank_message
from gibbsjax.corpus.text import TOKEN_PATTERN, stop_word_set

__all__ = ["as_corpus", "is_anonymous", "column_names", "check_word_filters", "filter_words", "word_filters",
           "WORD_FILTER_DEFAULTS"]

#: the estimator's word filters at their defaults (scikit-learn's): no stop words, every word
WORD_FILTER_DEFAULTS = {"stop_words": None, "min_df": 1, "max_df": 1.0}


def is_anonymous(vocab: Sequence[str]) -> bool:
    """A vocabulary ``("0", "1", ..., "V-1")``: columns of a matrix given without words.

    >>> is_anonymous(("0", "1", "2")), is_anonymous(("cat", "dog"))
    (True, False)
    """
    return tuple(vocab) == tuple(str(i) for i in range(len(vocab)))


def as_corpus(X, name: str = "X", *, vocab: Sequence[str] | Mapping[int, str] | None = None,
              model_vocab: Sequence[str] | None = None, vocab_size: int | None = None, empty: str = "keep",
              stop_words=None, min_df: int | float = 1, max_df: int | float = 1.0,
              token_pattern=TOKEN_PATTERN) -> Corpus:
    """``X`` (any input of the module docstring) as a Corpus of every input document.

    ``vocab`` names the columns of a matrix or the ids of bag-of-words documents.
    ``stop_words``, ``min_df``, ``max_df``: the word filters of :func:`filter_words`, for
    texts and token lists without ``model_vocab`` (``ValueError`` for other inputs).
    ``model_vocab``: the words of a fitted model, which the documents are matched to
    (see the module docstring).  ``token_pattern``: the words of texts
    (:meth:`Corpus.from_texts <gibbsjax.corpus.Corpus.from_texts>`).
    ``vocab_size``: the words are known only by column number (a topic-word
    matrix without names, as in :mod:`gibbsjax.evaluate`), so ``X`` must be a
    Corpus or a document-term matrix with that many words.  ``empty``: documents
    without tokens are kept (``"keep"``, the default), or dropped with a warning
    or refused as the corpus readers do (:func:`gibbsjax.corpus.apply_empty`).
    Errors are ``ValueError`` naming ``name``.

    >>> as_corpus([[1, 0], [0, 2]], "X").num_tokens
    3
    >>> as_corpus([["b", "a", "z"]], model_vocab=("a", "b")).tokens.tolist()
    [1, 0]
    >>> as_corpus([[(0, 2), (2, 1)], [(1, 1)]], vocab={0: "cat", 1: "dog", 2: "pet"}).to_token_lists()
    [['cat', 'cat', 'pet'], ['dog']]
    >>> as_corpus(["the cat", "the dog", "the end"], stop_words=["end"], max_df=0.9).vocab
    ('cat', 'dog')
    """
    filters = {"stop_words": stop_words, "min_df": min_df, "max_df": max_df}
    check_word_filters(filters)
    if vocab_size is not None:
        corpus = _columns_only(X, name, vocab_size)
    else:
        corpus = _documents(X, name, vocab, None if model_vocab is None else tuple(model_vocab), filters,
                            token_pattern)
    if empty == "keep":
        return corpus
    return apply_empty(corpus, empty, where=f" in {name}", stacklevel=4)


def _columns_only(X, name: str, vocab_size: int) -> Corpus:
    """A Corpus or a document-term matrix, checked against ``vocab_size``."""
    if isinstance(X, Corpus):
        corpus = X
    else:
        corpus = corpus_from_matrix(X, None, name=name)
    if corpus.vocab_size != vocab_size:
        raise ValueError(
            f"{name} has a vocabulary of {corpus.vocab_size} words but the topics have {vocab_size}"
        )
    return corpus


def _documents(X, name: str, vocab, known, filters, token_pattern=TOKEN_PATTERN) -> Corpus:
    """``X`` as a Corpus of every input document (empty ones kept), matched to
    the model's vocabulary ``known`` when there is one, or with the word
    ``filters`` applied when it is built from texts or token lists."""
    import scipy.sparse as sp  # as gibbsjax.corpus does: not imported with gibbsjax (a quarter of a second)

    if vocab is not None and not isinstance(vocab, Mapping):
        vocab = _check_vocab(vocab)
    kind = _given_kind(X)
    if kind != "documents" and _filtering(filters):
        raise ValueError(f"stop_words, min_df and max_df filter the words of texts and token lists; {name} is "
                         f"{kind}, which carries its vocabulary: filter it before (e.g. CountVectorizer(min_df=..."
                         "), Corpus.filter_vocab, gensim's Dictionary.filter_extremes)")
    if isinstance(vocab, Mapping) and kind != "documents":
        raise ValueError(f"a mapping id -> word names the ids of bag-of-words documents; {name} is {kind}: "
                         "give vocab as the words in column order")
    if isinstance(X, Corpus):
        if vocab is not None:
            raise ValueError(f"vocab names the columns of a document-term matrix; {name} is a Corpus, "
                             "which carries its own vocabulary")
        if len(set(X.vocab)) != len(X.vocab):
            _check_vocab(X.vocab, f"{name}'s vocabulary")
        return X if known is None else _match_corpus(X, name, known)
    if X is None or isinstance(X, (str, bytes)):
        got = "a single string" if X is not None else "None"
        raise ValueError(f"{name} must be a collection of documents (a Corpus, a document-term matrix, "
                         f"bag-of-words documents, token lists or strings), got {got}")
    shape = getattr(X, "shape", None)
    if shape is not None and not sp.issparse(X) and len(shape) != 2 and _numeric(X):
        raise ValueError(rank_message(name, tuple(shape)))  # (an array of texts is documents)
    if sp.issparse(X) or len(getattr(X, "shape", ())) == 2:  # also pandas, JAX arrays
        if vocab is None:
            vocab = column_names(X)
        return _matrix(X, name, vocab, known)
    try:
        docs = list(X)
    except TypeError:
        raise ValueError(f"{name} must be a Corpus, a document-term matrix, an iterable of bag-of-words "
                         f"documents, token lists or strings, got {type(X).__name__}") from None
    if not docs:
        raise ValueError(f"{name} holds no documents")
    kind = _kind_of_documents(docs, name)
    if kind != "texts" and kind != "token lists" and _filtering(filters):
        raise ValueError(f"stop_words, min_df and max_df filter the words of texts and token lists; {name} "
                         f"holds {kind}, which carry their vocabulary: filter it before (e.g. gensim's "
                         "Dictionary.filter_extremes)")
    if kind == "bag-of-words documents":
        return _bag_of_words(docs, name, vocab, known)
    if isinstance(vocab, Mapping):
        raise ValueError(f"a mapping id -> word names the ids of bag-of-words documents; {name} holds {kind}")
    if kind == "counts":
        try:
            matrix = np.asarray(docs)
        except ValueError:
            raise ValueError(f"{name}: rows of numbers must all have one length (a document-term "
                             "matrix)") from None
        return _matrix(matrix, name, vocab, known)
    if vocab is not None:
        raise ValueError(f"vocab names the columns of a document-term matrix (or the ids of bag-of-words "
                         f"documents); {name} holds {kind}")
    if kind == "texts":
        if known is not None and is_anonymous(known):
            raise ValueError(f"{name} holds texts, but this model was fitted on a matrix without words; "
                             "name them with set_vocab(words) first, or pass a document-term matrix")
        corpus = Corpus.from_texts(docs, vocab=known, empty="keep", token_pattern=token_pattern)
        if known is not None:
            return corpus
        if filters["stop_words"] is not None:  # a stop word split by the pattern stops its pieces too
            filters = {**filters, "stop_words": stop_word_set(filters["stop_words"], token_pattern)}
        return filter_words(corpus, name, **filters)
    # token lists
    if known is not None:
        if is_anonymous(known):
            raise ValueError(f"{name} holds token lists, but this model was fitted on a matrix without "
                             "words; name them with set_vocab(words) first, or pass a document-term matrix")
        index = set(known)
        docs = [[w for w in d if w in index] for d in docs]  # words the model does not know: ignored
        return Corpus.from_token_lists(docs, vocab=known, empty="keep")
    return filter_words(Corpus.from_token_lists(docs, empty="keep"), name, **filters)


def column_names(X) -> tuple[str, ...] | None:
    """The column names of a table (a pandas DataFrame) when all are strings (scikit-learn's
    rule for ``feature_names_in_``), as the words of its columns; else None.

    Parameters
    ----------
    X : object
        A document-term matrix, perhaps a DataFrame.

    Returns
    -------
    tuple of str or None
        The names, or None.

    Examples
    --------
    >>> import pandas as pd
    >>> column_names(pd.DataFrame({"cat": [1], "dog": [0]})), column_names(pd.DataFrame([[1, 0]]))
    (('cat', 'dog'), None)
    """
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, (str, bytes)):
        return None
    names = list(columns)
    if not names or not all(isinstance(c, str) for c in names):
        return None
    return _check_vocab(names, f"the column names of {type(X).__name__}")


def _given_kind(X) -> str:
    """What ``X`` is, for messages: "a Corpus", "a document-term matrix" or "documents"."""
    import scipy.sparse as sp

    if isinstance(X, Corpus):
        return "a Corpus"
    if sp.issparse(X) or len(getattr(X, "shape", ())) == 2:
        return "a document-term matrix"
    return "documents"


def _filtering(filters) -> bool:
    """Whether the word filters (checked) would remove anything from some corpus."""
    min_df, max_df = filters["min_df"], filters["max_df"]
    no_min = min_df == 1 if isinstance(min_df, Integral) else min_df == 0.0
    return filters["stop_words"] is not None or not no_min or isinstance(max_df, Integral) or max_df < 1.0


def word_filters(params: Mapping) -> dict:
    """The word filters (``stop_words``, ``min_df``, ``max_df``) among an estimator's ``params``.

    >>> word_filters({"num_topics": 5, "stop_words": None, "min_df": 2, "max_df": 1.0})
    {'stop_words': None, 'min_df': 2, 'max_df': 1.0}
    """
    return {key: params[key] for key in WORD_FILTER_DEFAULTS}


def check_word_filters(filters: Mapping) -> None:
    """``ValueError`` naming the argument unless ``filters`` (``stop_words``, ``min_df``,
    ``max_df``) are what scikit-learn's ``CountVectorizer`` takes: ``stop_words`` None,
    ``"english"`` (:func:`gibbsjax.corpus.english_stop_words`) or a list of words;
    ``min_df`` and ``max_df`` an int >= 1 (a number of documents) or a float in
    [0, 1] (a share of the documents).

    >>> check_word_filters({"stop_words": "english", "min_df": 2, "max_df": 0.9})
    >>> check_word_filters({"stop_words": None, "min_df": 1, "max_df": 1.5})
    Traceback (most recent call last):
    ...
    ValueError: max_df must be an int >= 1 (documents) or a float in [0, 1] (a share of them), got 1.5
    """
    stop_words = filters["stop_words"]
    if isinstance(stop_words, bytes) or (isinstance(stop_words, str) and stop_words != "english"):
        raise ValueError(f"stop_words must be None, 'english' or a list of words, got {stop_words!r}")
    if stop_words is not None and not isinstance(stop_words, str):
        if not isinstance(stop_words, (list, tuple, set, frozenset)):
            raise ValueError(f"stop_words must be None, 'english' or a list of words, got "
                             f"{type(stop_words).__name__}")
        bad = [w for w in stop_words if not isinstance(w, str)]
        if bad:
            raise ValueError(f"stop_words must hold words (str), got {bad[0]!r}")
    for key in ("min_df", "max_df"):
        value = filters[key]
        if isinstance(value, bool) or not isinstance(value, Real) or (
                isinstance(value, Integral) and value < 1) or (
                not isinstance(value, Integral) and not 0.0 <= value <= 1.0):
            raise ValueError(f"{key} must be an int >= 1 (documents) or a float in [0, 1] (a share of them), "
                             f"got {value!r}")


def filter_words(corpus: Corpus, name: str = "X", *, stop_words=None, min_df: int | float = 1,
                 max_df: int | float = 1.0) -> Corpus:
    """``corpus`` without the words scikit-learn's ``CountVectorizer`` would leave out:
    ``stop_words`` (matched exactly: None, ``"english"`` for
    :func:`gibbsjax.corpus.english_stop_words`, or a list), and words whose document
    frequency (the number of documents they occur in) is below ``min_df`` or above
    ``max_df`` -- an int is a number of documents, a float a share of all
    ``D`` documents (empty ones included), ``min_df * D`` and ``max_df * D``.  The
    kept words keep their order; every document is kept (empty ones too).
    ``ValueError`` naming ``name`` when ``max_df`` allows fewer documents than
    ``min_df``, or when no word is left.

    >>> c = Corpus.from_token_lists([["the", "cat"], ["the", "dog"], ["the", "cat"]])
    >>> filter_words(c, min_df=2, max_df=0.9).vocab
    ('cat',)
    >>> filter_words(c, stop_words="english").vocab
    ('cat', 'dog')
    """
    check_word_filters({"stop_words": stop_words, "min_df": min_df, "max_df": max_df})
    num_docs = corpus.num_docs
    low = min_df if isinstance(min_df, Integral) else min_df * num_docs
    high = max_df if isinstance(max_df, Integral) else max_df * num_docs
    if high < low:
        raise ValueError(f"max_df={max_df!r} allows fewer documents ({high:g}) than min_df={min_df!r} "
                         f"({low:g}) among the {num_docs} documents of {name}")
    freqs = corpus.doc_freqs
    stops = stop_word_set(stop_words)
    keep = (freqs >= low) & (freqs <= high) & np.array([w not in stops for w in corpus.vocab], dtype=bool)
    if keep.all():
        return corpus
    if corpus.num_tokens and not keep[corpus.tokens].any():
        raise ValueError(f"no words of {name} are left after stop_words, min_df={min_df!r} and "
                         f"max_df={max_df!r}: lower min_df or raise max_df")
    dropped = [w for w, k in zip(corpus.vocab, keep) if not k]
    return corpus.filter_vocab(stop_words=dropped, min_count=0, empty="keep")


def _bag_of_words(docs: list, name: str, vocab, known) -> Corpus:
    """gensim-style documents ``[(id, count), ...]`` as a Corpus (through a sparse
    matrix, so that a model's words are matched as a matrix's are)."""
    import scipy.sparse as sp

    if isinstance(vocab, Mapping):
        ids = list(vocab)
        bad = next((i for i in ids if isinstance(i, bool) or not isinstance(i, Integral) or i < 0), None)
        if bad is not None:
            raise ValueError(f"vocab maps ids to words; its ids must be ints >= 0, got {bad!r}")
        ids = sorted(int(i) for i in ids)
        words = _check_vocab([vocab[i] for i in ids], "vocab (id -> word)")
        column = {i: c for c, i in enumerate(ids)}
        width = len(ids)
    elif vocab is not None:
        words, column, width = vocab, None, len(vocab)
    else:
        words, column, width = None, None, (None if known is None else len(known))
    rows, cols, counts = [], [], []
    for j, d in enumerate(docs):
        for pair in d:
            i, n = pair
            if isinstance(i, bool) or not isinstance(i, Integral) or i < 0:
                raise ValueError(f"{name}[{j}] has the pair {tuple(pair)!r}: an id must be an int >= 0")
            if isinstance(n, bool) or not isinstance(n, Real) or not np.isfinite(n) or n < 0 or n != int(n):
                raise ValueError(f"{name}[{j}] has the pair {tuple(pair)!r}: a count must be a non-negative "
                                 "integer")
            if column is not None:
                if int(i) not in column:
                    raise ValueError(f"{name}[{j}] has the pair {tuple(pair)!r}, whose id {int(i)} is not in "
                                     "vocab (the id -> word mapping)")
                i = column[int(i)]
            elif width is not None and i >= width:
                what = "vocab has" if vocab is not None else "the model has"
                raise ValueError(f"{name}[{j}] has the pair {tuple(pair)!r}, whose id {int(i)} is out of range: "
                                 f"{what} {width} words (ids 0 to {width - 1})")
            rows.append(j)
            cols.append(int(i))
            counts.append(int(n))
    if width is None:
        width = max(cols, default=-1) + 1
    matrix = sp.csr_matrix((np.asarray(counts, np.int64), (np.asarray(rows, np.int64),
                                                           np.asarray(cols, np.int64))),
                           shape=(len(docs), width))  # repeated ids in a document: their counts add up
    return _matrix(matrix, name, words, known)


def _check_vocab(vocab, name: str = "vocab") -> tuple[str, ...]:
    """``vocab`` as a tuple of words, or ``ValueError`` naming a repeated one (two columns
    with one name could not be told apart when new documents are matched by name)."""
    if isinstance(vocab, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of words (one per column), got a single string {vocab!r}")
    words = tuple(str(w) for w in vocab)
    if len(set(words)) != len(words):
        seen: set[str] = set()
        repeated = next(w for w in words if w in seen or seen.add(w))
        raise ValueError(f"{name} has the word {repeated!r} more than once: every column needs its own name")
    return words


def _kind_of_documents(docs: list, name: str) -> str:
    kinds: dict[str, int] = {}
    for j, d in enumerate(docs):
        if isinstance(d, str):
            kind = "texts"
        elif isinstance(d, bytes):
            raise ValueError(f"{name}[{j}] is bytes: decode texts to str first")
        else:
            try:
                items = list(d)
            except TypeError:
                shape = _array_shape(docs)  # numbers, not documents: a row given as a 1-D array
                if shape is not None:
                    raise ValueError(rank_message(name, shape)) from None
                raise ValueError(f"{name}[{j}] must be a string or a list of words, got "
                                 f"{type(d).__name__}") from None
            words = sum(isinstance(w, str) for w in items)
            numbers = sum(isinstance(w, (int, float, np.integer, np.floating)) and not isinstance(w, bool)
                          for w in items)
            pairs = sum(isinstance(w, (tuple, list, np.ndarray)) and len(w) == 2 for w in items)
            if words and words == len(items):
                kind = "token lists"
            elif numbers and numbers == len(items):
                kind = "counts"
            elif pairs and pairs == len(items):
                kind = "bag-of-words documents"
            elif not items:
                continue  # an empty document: any kind
            elif pairs:
                bad = next(w for w in items if not (isinstance(w, (tuple, list, np.ndarray)) and len(w) == 2))
                raise ValueError(f"{name}[{j}] mixes (id, count) pairs with {bad!r}; a bag-of-words document "
                                 "holds pairs only")
            else:
                shape = None if words else _array_shape(docs)
                if shape is not None:  # e.g. rows of rows of numbers: an array of the wrong rank
                    raise ValueError(rank_message(name, shape))
                bad = next(w for w in items if not isinstance(w, str))
                raise ValueError(f"{name}[{j}] mixes words with {type(bad).__name__} values; a token list "
                                 "holds strings only")
        if kinds and kind not in kinds:
            other, i = next(iter(kinds.items()))
            raise ValueError(f"{name} mixes {other} ({name}[{i}]) and {kind} ({name}[{j}]); give one kind "
                             "of document")
        kinds.setdefault(kind, j)
    if not kinds:  # every document empty
        return "token lists"
    return next(iter(kinds))


def _numeric(X) -> bool:
    """Whether the array-like ``X`` holds numbers (numpy, JAX, pandas dtypes)."""
    try:
        return np.dtype(getattr(X, "dtype", None)).kind in "biufc"
    except TypeError:
        return False


def _array_shape(docs: list) -> tuple | None:
    """The shape of ``docs`` read as a regular numeric array, or None when it is not one."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.asarray(docs)
    except (ValueError, TypeError):
        return None
    return tuple(arr.shape) if arr.dtype.kind in "biuf" else None


def _matrix(X, name: str, vocab, known) -> Corpus:
    import scipy.sparse as sp

    if not sp.issparse(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(rank_message(name, X.shape))
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name}: a document-term matrix holds counts, got dtype {X.dtype}")
    if vocab is not None and len(vocab) != X.shape[1]:
        raise ValueError(f"vocab has {len(vocab)} words for the {X.shape[1]} columns of {name}")
    if known is not None:
        if X.shape[1] != len(known) and (vocab is None or is_anonymous(known) or is_anonymous(vocab)):
            raise ValueError(f"{name} has a vocabulary of {X.shape[1]} words; the model was fitted on "
                             f"{len(known)}")
        if vocab is not None and not is_anonymous(known) and not is_anonymous(vocab) and vocab != known:
            order = _reorder(vocab, name, known)
            X = X[:, order]  # the model's word order
        vocab = known
    return corpus_from_matrix(X, vocab, name=name)  # (errors name it, and a bad count's position)


def _reorder(vocab, name: str, known) -> np.ndarray:
    """Positions in ``vocab`` of the model's words ``known``, or a ValueError naming a word
    one side has and the other lacks."""
    position = {w: i for i, w in enumerate(vocab)}
    if len(position) != len(vocab):
        raise ValueError(f"{name}'s vocabulary has repeated words")
    missing = [w for w in known if w not in position]
    extra = [w for w in vocab if w not in set(known)]
    if missing or extra:
        what = "; ".join(([f"the model's word {missing[0]!r} is not in it"] if missing else [])
                         + ([f"its word {extra[0]!r} is not among the model's"] if extra else []))
        raise ValueError(
            f"{name}'s vocabulary differs from the model's ({len(vocab)} words vs {len(known)}; {what}); "
            "encode new documents with the model's vocabulary, e.g. Corpus.from_texts(texts, "
            "vocab=model.vocab_), or pass the texts or token lists themselves (unknown words are ignored)")
    return np.array([position[w] for w in known], dtype=np.int64)


def _match_corpus(corpus: Corpus, name: str, known) -> Corpus:
    if corpus.vocab == known:
        return corpus
    if is_anonymous(known) or is_anonymous(corpus.vocab):
        if corpus.vocab_size != len(known):
            raise ValueError(f"{name} has a vocabulary of {corpus.vocab_size} words; the model was fitted "
                             f"on {len(known)}")
        return corpus
    order = _reorder(corpus.vocab, name, known)
    new_id = np.empty(len(known), np.int32)
    new_id[order] = np.arange(len(known), dtype=np.int32)
    return Corpus(new_id[corpus.tokens], corpus.doc_offsets, known, corpus.doc_names,
                  corpus.labels, corpus.label_names)
