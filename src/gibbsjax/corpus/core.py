"""The :class:`Corpus` type (flat ``int32`` token ids, document offsets, a
vocabulary), its checks, and what readers do with documents that hold no tokens
(:func:`apply_empty`, :class:`EmptyDocumentWarning`).

>>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]])
>>> c.num_docs, c.vocab_size, c.num_tokens
(2, 3, 5)
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gibbsjax._checks import first_repeated
from gibbsjax.corpus.text import TOKEN_PATTERN, check_token_pattern, stop_word_set, tokenize

__all__ = [
    "Corpus",
    "EmptyDocumentWarning",
    "MAX_TOKENS",
    "apply_empty",
    "check_empty",
    "corpus_from_matrix",
    "token_limit",
    "too_many_tokens",
]


# ---------------------------------------------------------------------- empty documents
_EMPTY_CHOICES = ("drop", "error", "keep")


class EmptyDocumentWarning(UserWarning):
    """Documents with no tokens (after filtering) were dropped by a reader.

    Examples
    --------
    >>> import warnings
    >>> from gibbsjax.corpus import Corpus, EmptyDocumentWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     corpus = Corpus.from_texts(['a cat', ''], empty='drop')
    >>> caught[0].category is EmptyDocumentWarning, corpus.num_docs
    (True, 1)
    """


def check_empty(empty: str) -> None:
    """Check a value of the ``empty`` option: ``"keep"``, ``"drop"`` or ``"error"``.

    Parameters
    ----------
    empty : str
        The value given.

    Raises
    ------
    ValueError
        For any other value, naming it.

    Examples
    --------
    >>> check_empty("drop")
    """
    if empty not in _EMPTY_CHOICES:
        raise ValueError(f"empty must be one of {_EMPTY_CHOICES}, got {empty!r}")


def apply_empty(corpus: Corpus, empty: str, *, min_length: int = 1, where: str = "", stacklevel: int = 3) -> Corpus:
    """Drop / reject / keep documents shorter than ``min_length`` tokens."""
    check_empty(empty)
    short = corpus.doc_lengths < min_length
    n = int(short.sum())
    if n == 0 or empty == "keep":
        return corpus
    what = "empty" if min_length <= 1 else f"shorter than {min_length} tokens"
    first = [corpus.doc_names[i] for i in np.flatnonzero(short)[:5]]
    shown = ", ".join(repr(x) for x in first) + (", ..." if n > len(first) else "")
    if empty == "error":
        raise ValueError(
            f"{n} of {corpus.num_docs} documents{where} are {what} (after filtering): {shown}; "
            f"pass empty='drop' to drop them or empty='keep' to keep them"
        )
    if n == corpus.num_docs:
        raise ValueError(f"all {n} documents{where} are {what} (after filtering): {shown}")
    warnings.warn(
        f"dropped {n} of {corpus.num_docs} documents{where} that are {what} (after filtering): {shown}; "
        f"pass empty='keep' to keep them or empty='error' to raise",
        EmptyDocumentWarning,
        stacklevel=stacklevel,
    )
    return corpus.subset(~short)


# ---------------------------------------------------------------------- checks
def _int_array(name: str, values, dtype, *, low: int | None = None, high: int | None = None) -> np.ndarray:
    """``values`` as an array of ``dtype`` without silent truncation, else ``ValueError`` naming ``name``.

    Integer arrays and floating-point arrays holding whole numbers are
    accepted; a fraction (1.7), a NaN, a boolean or a value outside
    ``[low, high)`` (or outside ``dtype``'s range: an int64 id 2**32 + 1 does
    not become 1) is refused.
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an array of integers") from None
    if arr.dtype == object and arr.size:
        try:
            arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{name} must be an array of integers") from None
    if arr.size == 0:
        return np.zeros(arr.shape, dtype)
    if arr.dtype.kind == "f":
        frac = ~np.isfinite(arr) | (arr != np.round(arr))
        if frac.any():
            at = int(np.flatnonzero(frac.reshape(-1))[0])
            raise ValueError(f"{name} must hold integers, got {arr.reshape(-1)[at].item()!r} at position {at}")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers, got an array of dtype {arr.dtype}")
    info = np.iinfo(dtype)
    lo = info.min if low is None else max(low, info.min)
    hi = info.max + 1 if high is None else min(high, info.max + 1)
    flat = arr.reshape(-1)
    bad = (flat < lo) | (flat >= hi)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: value {int(flat[at])} at position {at} is out of range {lo}..{hi - 1}")
    return np.ascontiguousarray(arr, dtype=dtype)


#: a corpus indexes its tokens with int32 (and the samplers count them in int32)
MAX_TOKENS = 2**31 - 1
#: host bytes one token takes while a corpus is built and used (ids, document ids, copies)
_BYTES_PER_TOKEN = 16


def token_limit() -> int:
    """Most tokens a corpus may hold here: int32 indexing and the host memory available."""
    from gibbsjax.memory import host_available_bytes

    avail = host_available_bytes()
    return MAX_TOKENS if avail is None else min(MAX_TOKENS, avail // _BYTES_PER_TOKEN)


def too_many_tokens(total: int, limit: int) -> str:
    """The message for counts that add up to more tokens than a corpus can hold.

    Parameters
    ----------
    total : int
        The number of tokens the counts add up to.
    limit : int
        The most tokens a corpus can hold.

    Returns
    -------
    str
        The message, naming both numbers.

    Examples
    --------
    >>> too_many_tokens(10, 5)[:35]
    'the counts add up to 10 tokens, mor'
    """
    from gibbsjax.memory import format_bytes

    return (
        f"the counts add up to {total} tokens, more than a corpus can hold here ({limit}: at most "
        f"2**31 - 1, and about {format_bytes(_BYTES_PER_TOKEN)} of host memory per token); is a count wrong?"
    )


def _encode_labels(labels, label_names) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """Labels given as ints (with ``label_names``) or as strings / None (unknown)."""
    if labels is None:
        return None, tuple(label_names)
    labels = list(labels)
    if any(isinstance(x, str) for x in labels):
        names = tuple(label_names) or tuple(sorted({x for x in labels if x is not None}))
        index = {n: i for i, n in enumerate(names)}
        out = []
        for j, x in enumerate(labels):
            if x is None:
                out.append(-1)
            elif x not in index:
                raise ValueError(f"labels[{j}] = {x!r} is not one of label_names {names}")
            else:
                out.append(index[x])
        return np.asarray(out, dtype=np.int32), names
    return np.asarray([-1 if x is None else x for x in labels], dtype=np.int64), tuple(label_names)


# ---------------------------------------------------------------------- the corpus
@dataclass(frozen=True, eq=False)
class Corpus:
    """Tokens of ``num_docs`` documents over a vocabulary of ``vocab_size`` words.

    The arrays are read-only.  The constructor accepts empty documents;
    the readers (``from_*``, ``read_*``) drop them by default (``empty=``).

    Parameters
    ----------
    tokens : int32 array (N,)
        Word id of every token, documents one after another.
    doc_offsets : int64 array (D + 1,)
        Document ``d`` holds ``tokens[doc_offsets[d]:doc_offsets[d + 1]]``.
    vocab : tuple of str
        ``vocab[w]`` is the word with id ``w``.
    doc_names : tuple of str, optional
        A name per document (file name, index, ...); default the positions.
    labels : int32 array (D,), optional
        Document labels (``-1`` = unknown).
    label_names : tuple of str, optional
        The name of each label.

    Raises
    ------
    ValueError
        When the arrays disagree (offsets not increasing, a word id out of the
        vocabulary, a label out of range).

    See Also
    --------
    Corpus.from_texts, Corpus.from_token_lists, Corpus.from_dtm, read_ldac, read_uci, read_folder

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> corpus = Corpus.from_texts(['the cat sat', 'the dog sat down'])
    >>> corpus.num_docs, corpus.vocab_size, corpus.num_tokens
    (2, 5, 7)
    >>> corpus.vocab
    ('cat', 'dog', 'down', 'sat', 'the')
    """

    tokens: np.ndarray
    doc_offsets: np.ndarray
    vocab: tuple[str, ...]
    doc_names: tuple[str, ...] = field(default=())
    labels: np.ndarray | None = None
    label_names: tuple[str, ...] = field(default=())

    def __post_init__(self):
        vocab = tuple(str(v) for v in self.vocab)
        tokens = _int_array("tokens (word ids)", self.tokens, np.int32)
        offsets = _int_array("doc_offsets", self.doc_offsets, np.int64)
        if tokens.ndim != 1:
            raise ValueError(f"tokens must be 1-D, got shape {tokens.shape}")
        if offsets.ndim != 1 or offsets.size < 1:
            raise ValueError(f"doc_offsets must be 1-D with at least one entry, got shape {offsets.shape}")
        if offsets[0] != 0 or offsets[-1] != tokens.size:
            raise ValueError(f"doc_offsets must start at 0 and end at len(tokens) = {tokens.size}, got "
                             f"doc_offsets[0] = {int(offsets[0])} and doc_offsets[-1] = {int(offsets[-1])}")
        if np.any(np.diff(offsets) < 0):
            i = int(np.flatnonzero(np.diff(offsets) < 0)[0])
            raise ValueError(f"doc_offsets must be non-decreasing, got doc_offsets[{i}] = {int(offsets[i])} > "
                             f"doc_offsets[{i + 1}] = {int(offsets[i + 1])}")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= len(vocab)):
            bad = int(np.flatnonzero((tokens < 0) | (tokens >= len(vocab)))[0])
            raise ValueError(
                f"word id {int(tokens[bad])} at token {bad} is out of range for a vocabulary of "
                f"{len(vocab)} words"
            )
        num_docs = offsets.size - 1
        names = tuple(str(n) for n in self.doc_names) if self.doc_names else tuple(str(i) for i in range(num_docs))
        if len(names) != num_docs:
            raise ValueError(f"doc_names has {len(names)} entries for {num_docs} documents")
        labels = self.labels
        if labels is not None:
            labels = np.array(_int_array("labels", labels, np.int32), dtype=np.int32)  # a copy: read-only below
            if labels.shape != (num_docs,):
                raise ValueError(f"labels must have shape ({num_docs},), got {labels.shape}")
            if self.label_names and labels.max(initial=-1) >= len(self.label_names):
                j = int(np.argmax(labels >= len(self.label_names)))
                raise ValueError(f"labels[{j}] = {int(labels[j])} is out of range for the {len(self.label_names)} "
                                 f"label_names (labels 0 to {len(self.label_names) - 1}, -1 unknown)")
            if labels.min(initial=0) < -1:
                j = int(np.argmax(labels < -1))
                raise ValueError(f"labels must be >= -1 (-1 marks an unknown label), got labels[{j}] = "
                                 f"{int(labels[j])}")
            labels.setflags(write=False)
        tokens.setflags(write=False)
        offsets.setflags(write=False)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "doc_offsets", offsets)
        object.__setattr__(self, "vocab", vocab)
        object.__setattr__(self, "doc_names", names)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "label_names", tuple(str(n) for n in self.label_names))

    # ------------------------------------------------------------------ sizes
    @property
    def num_docs(self) -> int:
        """Number of documents, ``D``."""
        return int(self.doc_offsets.size - 1)

    @property
    def num_tokens(self) -> int:
        """Number of tokens, ``N``."""
        return int(self.tokens.size)

    @property
    def vocab_size(self) -> int:
        """Number of words in the vocabulary, ``V``."""
        return len(self.vocab)

    @property
    def doc_lengths(self) -> np.ndarray:
        """Tokens per document, int64 (D,)."""
        return np.diff(self.doc_offsets)

    @property
    def doc_ids(self) -> np.ndarray:
        """Document of every token, int32 (N,), sorted."""
        return np.repeat(np.arange(self.num_docs, dtype=np.int32), self.doc_lengths)

    @property
    def word_counts(self) -> np.ndarray:
        """Occurrences of every word in the corpus, int64 (V,)."""
        return np.bincount(self.tokens, minlength=self.vocab_size).astype(np.int64)

    @property
    def doc_freqs(self) -> np.ndarray:
        """Number of documents every word occurs in, int64 (V,)."""
        return np.bincount(self.to_dtm().indices, minlength=self.vocab_size).astype(np.int64)

    def __len__(self) -> int:
        return self.num_docs

    def __repr__(self) -> str:
        return (
            f"Corpus({self.num_docs} documents, {self.num_tokens} tokens, "
            f"vocabulary of {self.vocab_size})"
        )

    # ------------------------------------------------------------------ building
    @classmethod
    def from_token_lists(
        cls,
        docs: Iterable[Sequence[str]],
        *,
        vocab: Sequence[str] | None = None,
        doc_names: Sequence[str] | None = None,
        labels: Sequence[int] | None = None,
        label_names: Sequence[str] = (),
        empty: str = "drop",
    ) -> Corpus:
        """Build from documents given as lists of word strings.

        With ``vocab`` given, words outside it raise ``ValueError``; otherwise
        the vocabulary is the sorted set of words seen.  Documents without
        words are handled by ``empty`` (see the module docstring); default
        names are the documents' positions in ``docs``, so they still identify
        the input after empty documents are dropped.

        Parameters
        ----------
        docs : iterable of sequence of str
            The documents, each a list of words.
        vocab : sequence of str, optional
            The vocabulary (word ids in its order).
        doc_names : sequence of str, optional
            A name per document.
        labels : sequence of int, optional
            A label per document (``-1`` unknown).
        label_names : sequence of str, optional
            The labels' names.
        empty : {"drop", "error", "keep"}, default "drop"
            What to do with documents without words (see the module docstring).

        Returns
        -------
        Corpus
            The corpus.

        Examples
        --------
        >>> Corpus.from_token_lists([["b", "a"]]).vocab
        ('a', 'b')
        >>> Corpus.from_token_lists([["a"], []], empty="keep").doc_lengths.tolist()
        [1, 0]
        """
        check_empty(empty)
        docs = [list(d) for d in docs]
        if vocab is None:
            vocab = sorted({w for d in docs for w in d})
        index = {w: i for i, w in enumerate(vocab)}
        if len(index) != len(vocab):
            word, first, second = first_repeated(vocab)
            raise ValueError(f"vocab has the word {word!r} twice (vocab[{first}] and vocab[{second}])")
        ids: list[int] = []
        offsets = [0]
        for j, d in enumerate(docs):
            for w in d:
                if w not in index:
                    raise ValueError(f"document {j}: word {w!r} is not in the vocabulary")
                ids.append(index[w])
            offsets.append(len(ids))
        corpus = cls(
            np.asarray(ids, dtype=np.int32),
            np.asarray(offsets, dtype=np.int64),
            tuple(vocab),
            tuple(doc_names) if doc_names is not None else (),
            None if labels is None else np.asarray(labels),
            tuple(label_names),
        )
        return apply_empty(corpus, empty)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        *,
        tokenizer: Callable[[str], Iterable[str]] | None = None,
        token_pattern: str | re.Pattern = TOKEN_PATTERN,
        lowercase: bool = True,
        stop_words: str | Iterable[str] | None = None,
        min_count: int = 1,
        max_doc_freq: float = 1.0,
        max_vocab: int | None = None,
        vocab: Sequence[str] | None = None,
        min_doc_length: int = 1,
        doc_names: Sequence[str] | None = None,
        labels: Sequence[int | str | None] | None = None,
        label_names: Sequence[str] = (),
        empty: str = "drop",
    ) -> Corpus:
        """Build from raw strings: tokenize, remove stop words, filter rare and common words.

        Steps, in order:

        1. every text is lower-cased (``lowercase=True``) and split into words:
           the matches of ``token_pattern`` (default scikit-learn's
           :data:`~gibbsjax.corpus.TOKEN_PATTERN`, words of two or more
           characters; :func:`tokenize`), or what ``tokenizer`` gives;
        2. words in ``stop_words`` are removed: ``None`` (none), ``"english"``
           (:func:`english_stop_words`) or any iterable of words, matched
           exactly against the (lower-cased) words; with ``token_pattern``, a
           stop word's own tokens are stop words too (``"don't"`` stops ``"don"``);
        3. words seen fewer than ``min_count`` times in the whole corpus are
           removed, and so are words that occur in more than
           ``max_doc_freq * D`` of the ``D`` documents (``max_doc_freq`` is a
           fraction in (0, 1]); then, with ``max_vocab``, only the
           ``max_vocab`` most frequent words are kept (ties: alphabetical);
        4. documents left with fewer than ``min_doc_length`` tokens (default:
           empty documents) are dropped with an :class:`EmptyDocumentWarning`
           (``empty="drop"``), rejected (``"error"``) or kept (``"keep"``).

        The vocabulary is sorted alphabetically.  With ``vocab`` given, the
        vocabulary is exactly ``vocab`` (word ids as in it; e.g. a training
        corpus's) and words outside it are dropped; steps 3's filters are
        then not allowed.

        ``labels`` are ints (``-1`` unknown, names in ``label_names``) or
        strings / ``None`` (unknown); strings are numbered in the order of
        ``label_names`` if given, else alphabetically.  Default ``doc_names``
        are the positions in ``texts``.

        Parameters
        ----------
        texts : iterable of str
            The documents.
        tokenizer : callable, optional
            ``tokenizer(text) -> iterable of str``, instead of ``token_pattern``.
        token_pattern : str or re.Pattern, default TOKEN_PATTERN
            The regex of a word (scikit-learn's ``CountVectorizer`` option; its default
            ``r"(?u)\\b\\w\\w+\\b"`` drops one-character tokens); with one capturing
            group, the group is the word.
        lowercase : bool, default True
            Lower-case texts before tokenizing.
        stop_words : None, "english" or iterable of str, optional
            Words to remove.
        min_count : int, default 1
            Remove words seen fewer times in the whole corpus.
        max_doc_freq : float, default 1.0
            Remove words in more than this fraction of the documents.
        max_vocab : int, optional
            Keep only this many most frequent words.
        vocab : sequence of str, optional
            A fixed vocabulary (words outside it are dropped).
        min_doc_length : int, default 1
            Documents shorter than this (after filtering) are handled by ``empty``.
        doc_names : sequence of str, optional
            A name per document.
        labels : sequence of int, str or None, optional
            A label per document.
        label_names : sequence of str, optional
            The labels' names (and order).
        empty : {"drop", "error", "keep"}, default "drop"
            What to do with documents left too short.

        Returns
        -------
        Corpus
            The corpus, vocabulary sorted alphabetically unless ``vocab`` is given.

        Examples
        --------
        >>> c = Corpus.from_texts(["The cat sat on the mat.", "A dog and a cat!", "The end"],
        ...                       stop_words="english", labels=["pets", "pets", None])
        >>> c.vocab, c.doc_lengths.tolist(), c.labels.tolist(), c.label_names
        (('cat', 'dog', 'end', 'mat', 'sat'), [3, 2, 1], [0, 0, -1], ('pets',))
        >>> Corpus.from_texts(["ab bc", "bc cd", "bc"], max_doc_freq=0.5).to_token_lists()
        [['ab'], ['cd']]
        >>> Corpus.from_texts(["x = y + 2"], token_pattern=r"\\w+").vocab
        ('2', 'x', 'y')
        """
        check_empty(empty)
        if tokenizer is not None and not (isinstance(token_pattern, str) and token_pattern == TOKEN_PATTERN):
            raise ValueError(f"give tokenizer or token_pattern, not both (got tokenizer={tokenizer!r} and "
                             f"token_pattern={token_pattern!r})")
        pattern = check_token_pattern(token_pattern) if tokenizer is None else None
        stops = stop_word_set(stop_words, pattern)
        docs: list[list[str]] = []
        for j, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"texts[{j}] must be a str, got {type(text).__name__}")
            if lowercase:
                text = text.lower()
            words = tokenizer(text) if tokenizer is not None else tokenize(text, lowercase=False, pattern=pattern)
            docs.append([w for w in words if w not in stops] if stops else list(words))
        labels, label_names = _encode_labels(labels, label_names)
        if vocab is not None:
            if min_count != 1 or max_doc_freq != 1.0 or max_vocab is not None:
                raise ValueError("with vocab given, min_count, max_doc_freq and max_vocab must keep their defaults")
            known = set(vocab)
            docs = [[w for w in d if w in known] for d in docs]
        corpus = cls.from_token_lists(
            docs, vocab=vocab, doc_names=doc_names, labels=labels, label_names=label_names, empty="keep"
        )
        if vocab is not None:
            return apply_empty(corpus, empty, min_length=min_doc_length, stacklevel=3)
        return corpus._filter(
            stops=frozenset(),
            min_count=min_count,
            max_doc_freq=max_doc_freq,
            max_vocab=max_vocab,
            min_doc_length=min_doc_length,
            empty=empty,
            stacklevel=4,
        )

    @classmethod
    def from_dtm(cls, X, *, vocab: Sequence[str] | None = None, empty: str = "drop", **kwargs) -> Corpus:
        """Build from a document-term count matrix (dense or scipy.sparse, D × V).

        Rows are documents, columns words (the convention of scikit-learn and
        the ``lda`` package).  Tokens of a document are ordered by word id.
        Rows without counts are handled by ``empty`` (see the module
        docstring); default document names are the row indices, so they keep
        naming the rows of ``X`` after empty rows are dropped.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix
            Nonnegative integer counts, D × V.
        vocab : sequence of str, optional
            The V words (default their ids as strings).
        empty : {"drop", "error", "keep"}, default "drop"
            What to do with rows without counts.
        **kwargs
            ``doc_names``, ``labels``, ``label_names``, as in the constructor.

        Returns
        -------
        Corpus
            The corpus (documents, vocabulary and names).

        Examples
        --------
        >>> import numpy as np
        >>> Corpus.from_dtm(np.array([[2, 0, 1]])).tokens.tolist()
        [0, 0, 2]
        >>> Corpus.from_dtm(np.array([[0, 0], [1, 1]]), empty="keep").num_docs
        2
        """
        check_empty(empty)
        return apply_empty(corpus_from_matrix(X, vocab, **kwargs), empty)

    # ------------------------------------------------------------------ vocabulary
    def filter_vocab(
        self,
        *,
        stop_words: str | Iterable[str] | None = None,
        min_count: int = 1,
        max_doc_freq: float = 1.0,
        max_vocab: int | None = None,
        min_doc_length: int = 1,
        empty: str = "drop",
    ) -> Corpus:
        """Remove words from an existing corpus and renumber the rest.

        The filters are those of :meth:`from_texts` (stop words, words with
        fewer than ``min_count`` occurrences -- so ``min_count=1`` also drops
        vocabulary words that never occur, ``min_count=0`` keeps them --,
        words in more than ``max_doc_freq`` of the documents, then the
        ``max_vocab`` most frequent).  Kept words keep their relative order;
        documents left shorter than ``min_doc_length`` are handled by
        ``empty``.

        Parameters
        ----------
        stop_words : None, "english" or iterable of str, optional
            Words to remove.
        min_count : int, default 1
            Remove words with fewer occurrences.
        max_doc_freq : float, default 1.0
            Remove words in more than this fraction of the documents.
        max_vocab : int, optional
            Keep only this many most frequent words.
        min_doc_length : int, default 1
            Documents shorter than this afterwards are handled by ``empty``.
        empty : {"drop", "error", "keep"}, default "drop"
            What to do with those documents.

        Returns
        -------
        Corpus
            A new corpus, the kept words renumbered (in their old order).

        Examples
        --------
        >>> c = Corpus.from_token_lists([["the", "cat"], ["the", "dog"], ["the"]], empty="keep")
        >>> f = c.filter_vocab(stop_words="english", empty="keep")
        >>> f.vocab, f.doc_lengths.tolist()
        (('cat', 'dog'), [1, 1, 0])
        """
        return self._filter(
            stops=stop_word_set(stop_words),
            min_count=min_count,
            max_doc_freq=max_doc_freq,
            max_vocab=max_vocab,
            min_doc_length=min_doc_length,
            empty=empty,
            stacklevel=4,
        )

    def _filter(self, *, stops, min_count, max_doc_freq, max_vocab, min_doc_length, empty, stacklevel) -> Corpus:
        check_empty(empty)
        if isinstance(min_count, bool) or not isinstance(min_count, (int, np.integer)) or min_count < 0:
            raise ValueError(f"min_count must be an int >= 0, got {min_count!r}")
        if not (isinstance(max_doc_freq, (int, float, np.floating)) and 0.0 < max_doc_freq <= 1.0):
            raise ValueError(f"max_doc_freq must be a fraction in (0, 1], got {max_doc_freq!r}")
        if max_vocab is not None and (not isinstance(max_vocab, (int, np.integer)) or max_vocab < 1):
            raise ValueError(f"max_vocab must be None or an int >= 1, got {max_vocab!r}")
        if isinstance(min_doc_length, bool) or not isinstance(min_doc_length, (int, np.integer)) or min_doc_length < 0:
            raise ValueError(f"min_doc_length must be an int >= 0, got {min_doc_length!r}")
        counts = self.word_counts
        keep = counts >= min_count
        if stops:
            keep &= np.array([w not in stops for w in self.vocab], dtype=bool)
        if max_doc_freq < 1.0:
            keep &= self.doc_freqs <= max_doc_freq * self.num_docs
        if max_vocab is not None and keep.sum() > max_vocab:
            kept = np.flatnonzero(keep)
            # most frequent first; ties by word (the vocabulary's order)
            order = sorted(kept, key=lambda w: (-counts[w], self.vocab[w]))
            keep = np.zeros_like(keep)
            keep[order[:max_vocab]] = True
        if self.num_tokens and not np.any(keep[self.tokens]):
            raise ValueError(
                f"no words are left after filtering (stop words: {len(stops)}, min_count={min_count}, "
                f"max_doc_freq={max_doc_freq}, max_vocab={max_vocab})"
            )
        new_id = np.cumsum(keep) - 1
        token_kept = keep[self.tokens]
        tokens = new_id[self.tokens[token_kept]]
        lengths = np.bincount(self.doc_ids[token_kept], minlength=self.num_docs)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        corpus = Corpus(
            tokens,
            offsets,
            tuple(w for w, k in zip(self.vocab, keep) if k),
            self.doc_names,
            self.labels,
            self.label_names,
        )
        return apply_empty(corpus, empty, min_length=min_doc_length, stacklevel=stacklevel)

    # ------------------------------------------------------------------ conversions
    def to_dtm(self):
        """The document-term count matrix.

        Returns
        -------
        scipy.sparse.csr_matrix
            D × V counts, int32.

        Examples
        --------
        >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]])
        >>> c.to_dtm().toarray()
        array([[2, 1, 0],
               [0, 1, 1]], dtype=int32)
        """
        import scipy.sparse as sp

        M = sp.csr_matrix(
            (np.ones(self.num_tokens, dtype=np.int32), (self.doc_ids, self.tokens)),
            shape=(self.num_docs, self.vocab_size),
        )
        M.sum_duplicates()
        return M

    def to_token_lists(self) -> list[list[str]]:
        """The documents as lists of word strings, in token order.

        Returns
        -------
        list of list of str
            One list of words per document.

        Examples
        --------
        >>> Corpus.from_token_lists([["b", "a"], ["a"]]).to_token_lists()
        [['b', 'a'], ['a']]
        """
        words = np.asarray(self.vocab, dtype=object)[self.tokens].tolist()
        o = self.doc_offsets.tolist()
        return [words[o[d] : o[d + 1]] for d in range(self.num_docs)]

    def to_texts(self, sep: str = " ") -> list[str]:
        """The documents as strings, words joined by ``sep``.

        ``Corpus.from_texts(c.to_texts(), empty="keep")`` rebuilds ``c`` when
        its words are lower-case :func:`tokenize` words (the vocabulary may
        shrink to the words that occur).

        Parameters
        ----------
        sep : str, default " "
            The separator between words.

        Returns
        -------
        list of str
            One string per document.

        Examples
        --------
        >>> Corpus.from_token_lists([["b", "a"], ["a"]]).to_texts()
        ['b a', 'a']
        """
        return [sep.join(d) for d in self.to_token_lists()]

    def subset(self, docs: Sequence[int] | np.ndarray) -> Corpus:
        """A corpus of some of the documents, same vocabulary.

        Parameters
        ----------
        docs : sequence of int or boolean array
            Document indices or a boolean mask.

        Returns
        -------
        Corpus
            The chosen documents (with their names and labels).

        Examples
        --------
        >>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]])
        >>> s = c.subset([1])
        >>> s.num_docs, s.vocab, s.to_token_lists()
        (1, ('a', 'b', 'c'), [['c', 'b']])
        """
        idx = np.asarray(docs)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64, copy=False).reshape(-1)
        lengths = self.doc_lengths[idx]
        new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        # position of every kept token in self.tokens, without a loop over documents
        take = np.repeat(self.doc_offsets[idx] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
        tokens = self.tokens[take]
        return Corpus(
            tokens,
            new_offsets,
            self.vocab,
            tuple(self.doc_names[d] for d in idx),
            None if self.labels is None else self.labels[idx],
            self.label_names,
        )

    # ------------------------------------------------------------------ train / test
    def split(self, test_fraction: float = 0.2, seed: int = 0, *, stratify: bool = False) -> tuple[Corpus, Corpus]:
        """Split the documents at random into ``(train, test)`` corpora.

        ``round(test_fraction * D)`` documents go to ``test``; both parts keep
        the vocabulary (word ids agree) and the documents' original order,
        names and labels.  With ``stratify=True`` every label (``-1``
        included) is split in the same proportion.  The split depends only on
        ``seed`` (``numpy.random.default_rng``).

        Parameters
        ----------
        test_fraction : float, default 0.2
            The fraction of documents in ``test``.
        seed : int, default 0
            The seed of the split.
        stratify : bool, default False
            Split every label in the same proportion.

        Returns
        -------
        train, test : Corpus
            The two parts.

        Examples
        --------
        >>> train, test = Corpus.from_token_lists([["a"]] * 10).split(0.3, seed=1)
        >>> train.num_docs, test.num_docs, sorted(train.doc_names + test.doc_names, key=int) == list("0123456789")
        (7, 3, True)
        """
        if not 0.0 < float(test_fraction) < 1.0:
            raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
        rng = np.random.default_rng(seed)
        D = self.num_docs
        if stratify:
            if self.labels is None:
                raise ValueError("stratify=True needs a corpus with labels")
            test = []
            for lab in np.unique(self.labels):
                members = np.flatnonzero(self.labels == lab)
                k = int(round(test_fraction * members.size))
                test.append(rng.permutation(members)[:k])
            test_idx = np.sort(np.concatenate(test))
        else:
            k = int(round(test_fraction * D))
            test_idx = np.sort(rng.permutation(D)[:k])
        if test_idx.size == 0 or test_idx.size == D:
            raise ValueError(
                f"test_fraction={test_fraction} of {D} documents leaves the "
                f"{'test' if test_idx.size == 0 else 'training'} part empty"
            )
        is_test = np.zeros(D, dtype=bool)
        is_test[test_idx] = True
        return self.subset(~is_test), self.subset(is_test)

    def split_tokens(self, fraction: float = 0.5, *, seed: int | None = None) -> tuple[Corpus, Corpus]:
        """Split every document's tokens into ``(observed, held_out)`` corpora.

        Document ``d`` of ``observed`` holds the first
        ``floor(fraction * length_d)`` tokens of document ``d``, and
        ``held_out`` the rest -- the document-completion split used for
        held-out perplexity (estimate a document's topics from the first part,
        score the second).  Both corpora keep all documents (so ``d`` means
        the same document in both; either part may be empty for short
        documents -- drop those from both with ``subset``), the vocabulary,
        names and labels.

        Corpora read from a document-term matrix, LDA-C or UCI files store a
        document's tokens sorted by word id, so "first half" would mean
        "words with small ids": pass ``seed`` to shuffle the tokens within each
        document first (``numpy.random.default_rng(seed)``).

        Parameters
        ----------
        fraction : float, default 0.5
            The fraction of each document's tokens kept in ``observed``.
        seed : int, optional
            Shuffle the tokens within each document first (with this seed).

        Returns
        -------
        observed, held_out : Corpus
            The two parts, with the same documents.

        Examples
        --------
        >>> c = Corpus.from_token_lists([["a", "b", "c", "d"], ["a", "b", "c"]])
        >>> obs, held = c.split_tokens(0.5)
        >>> obs.to_token_lists(), held.to_token_lists()
        ([['a', 'b'], ['a']], [['c', 'd'], ['b', 'c']])
        """
        if not 0.0 <= float(fraction) <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction!r}")
        lengths = self.doc_lengths
        doc_ids = self.doc_ids
        tokens = self.tokens
        if seed is not None:
            keys = np.random.default_rng(seed).random(self.num_tokens)
            order = np.lexsort((keys, doc_ids))  # documents stay in place, tokens shuffled within
            tokens = tokens[order]
        pos = np.arange(self.num_tokens) - np.repeat(self.doc_offsets[:-1], lengths)
        cut = np.floor(fraction * lengths).astype(np.int64)
        first = pos < np.repeat(cut, lengths)
        parts = []
        for mask, lens in ((first, cut), (~first, lengths - cut)):
            parts.append(
                Corpus(
                    tokens[mask],
                    np.concatenate([[0], np.cumsum(lens)]),
                    self.vocab,
                    self.doc_names,
                    self.labels,
                    self.label_names,
                )
            )
        return parts[0], parts[1]


def rank_message(name: str, shape: tuple) -> str:
    """The one-line refusal of an array of ``shape`` where a document-term matrix is expected.

    >>> rank_message("X", (2, 3, 4))
    'X must be a 2-D document-term matrix (documents x words), got an array of shape (2, 3, 4)'
    """
    hint = "; one document is a matrix of one row" if len(shape) == 1 else ""
    return f"{name} must be a 2-D document-term matrix (documents x words), got an array of shape {shape}{hint}"


def corpus_from_matrix(X, vocab, *, doc_names=None, labels=None, label_names=(), name: str = "X") -> Corpus:
    """A Corpus of the document-term matrix ``X`` (dense or scipy.sparse, D x V; see
    :meth:`Corpus.from_dtm`).  ``ValueError`` naming ``name`` for an array that is not 2-D
    (its shape), values that are not counts (the first one and its (document, word) position:
    NaN, an infinity, a negative or fractional number), or more tokens than the limit.

    >>> corpus_from_matrix(np.array([[1, 0], [0, np.inf]]), None)
    Traceback (most recent call last):
    ...
    ValueError: X must hold non-negative integer counts, got inf at (document 1, word 1)
    """
    import scipy.sparse as sp

    if sp.issparse(X):
        M = sp.csr_matrix(X)
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(rank_message(name, arr.shape))
        M = sp.csr_matrix(arr)
    if M.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold non-negative integer counts, got dtype {M.dtype}")
    M.sum_duplicates()
    M.sort_indices()
    data = M.data
    limit = token_limit()
    if data.size:
        bad = data < 0
        if data.dtype.kind == "f":
            bad = bad | ~np.isfinite(data) | (data != np.round(data))

        def where(i: int) -> str:
            d, w = int(np.searchsorted(M.indptr, i, side="right") - 1), int(M.indices[i])
            word = f" {vocab[w]!r}" if vocab is not None and w < len(vocab) else ""
            return f"(document {d}, word {w}{word})"

        if bad.any():
            i = int(np.argmax(bad))  # the first in row-major order
            raise ValueError(f"{name} must hold non-negative integer counts, got {data[i].item()!r} at {where(i)}")
        if data.max() > limit:  # (before the cast: a count beyond int64 would wrap around)
            i = int(np.argmax(data))
            raise ValueError(f"{name} has the count {data[i].item()!r} at {where(i)}, more tokens than a corpus "
                             f"can hold here ({limit}); is a count wrong?")
    counts = data.astype(np.int64)
    total = int(counts.sum())
    if total > limit:
        raise ValueError(f"{name}: {too_many_tokens(total, limit)}")
    tokens = np.repeat(M.indices.astype(np.int32), counts)
    cum = np.concatenate([[0], np.cumsum(counts)])
    offsets = cum[M.indptr]  # tokens before each row (rows may be empty, also at the end)
    if vocab is None:
        vocab = tuple(str(i) for i in range(M.shape[1]))
    elif len(vocab) != M.shape[1]:
        raise ValueError(f"vocab has {len(vocab)} words for a matrix with {M.shape[1]} columns")
    return Corpus(
        tokens,
        offsets,
        tuple(vocab),
        tuple(doc_names) if doc_names is not None else (),
        None if labels is None else np.asarray(labels),
        tuple(label_names),
    )
