"""Text data for every text model: a :class:`Corpus` of flat token ids.

A corpus is stored the way the samplers want it: one flat ``int32`` array of
word ids (``tokens``), the document each token belongs to (``doc_ids``, sorted),
and document boundaries (``doc_offsets``, length ``num_docs + 1``), with the
vocabulary as a tuple of strings.  Ragged documents never become Python lists on
the hot path.

>>> c = Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]])
>>> c.num_docs, c.vocab_size, c.num_tokens
(2, 3, 5)
>>> c.to_dtm().toarray()
array([[2, 1, 0],
       [0, 1, 1]], dtype=int32)

Readers
-------
* :meth:`Corpus.from_texts` -- raw strings, tokenized by :func:`tokenize`, with
  stop words, a minimum word count and a maximum document frequency;
* :meth:`Corpus.from_token_lists`, :meth:`Corpus.from_dtm` -- lists of words,
  document-term count matrices (dense or ``scipy.sparse``);
* :func:`read_folder` -- a folder of text files (labels from sub-folder names);
* :func:`read_ldac` / :func:`write_ldac` -- Blei's LDA-C format;
* :func:`read_uci` / :func:`write_uci` -- the UCI bag-of-words format.

Every reader takes ``empty="drop" | "error" | "keep"``: what to do with
documents that hold no tokens (after filtering).  ``"drop"`` (the default)
removes them with an :class:`EmptyDocumentWarning` that says how many, keeping
names and labels of the other documents aligned; ``"error"`` raises
``ValueError``; ``"keep"`` keeps them (the models reject zero-length documents
themselves, so keep them only for your own bookkeeping).

Errors: a malformed file raises ``ValueError`` whose message starts with the
file path and the 1-based line number (``"docword.txt, line 7: ..."``); a
missing file or folder raises ``FileNotFoundError``.  Files whose name ends in
``.gz`` are read and written through gzip.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = [
    "Corpus",
    "EmptyDocumentWarning",
    "WORD_PATTERN",
    "english_stop_words",
    "tokenize",
    "read_folder",
    "read_ldac",
    "write_ldac",
    "read_uci",
    "write_uci",
]

PathLike = str | os.PathLike

_EMPTY_CHOICES = ("drop", "error", "keep")


class EmptyDocumentWarning(UserWarning):
    """Documents with no tokens (after filtering) were dropped by a reader."""


# ---------------------------------------------------------------------- tokenizer
#: What :func:`tokenize` counts as a word: a letter, then any letters, digits,
#: underscores or apostrophes, ending in a letter or digit.  "Letter" and
#: "digit" are Unicode-aware (``\w`` in Python's ``re``).
WORD_PATTERN = r"[^\W\d_](?:[\w']*[^\W_])?"
_WORD_RE = re.compile(WORD_PATTERN)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def tokenize(text: str, *, lowercase: bool = True, pattern: str | re.Pattern | None = None) -> list[str]:
    """Split ``text`` into words.

    A word is a maximal run that starts with a letter, continues with letters,
    digits, underscores or apostrophes, and ends with a letter or digit
    (:data:`WORD_PATTERN`; letters and digits in the Unicode sense).  So
    numbers alone (``"2024"``) are not words, ``"x1"`` and ``"get_item"`` are,
    hyphens and other punctuation split words (``"well-known"`` gives
    ``"well"``, ``"known"``), inner apostrophes stay (``"don't"``), leading and
    trailing underscores and apostrophes are dropped (``"__init__"`` gives
    ``"init"``).  Typographic apostrophes (’) count as ``'``; the text is put
    in Unicode NFC form and, with ``lowercase``, lower-cased first.  Single
    letters are words (remove them with stop words if you want).

    ``pattern`` replaces the word regex (every non-overlapping match is a word).

    >>> tokenize("The cat's 2 well-known toys: x1, __init__ and Ünïcode!")
    ['the', "cat's", 'well', 'known', 'toys', 'x1', 'init', 'and', 'ünïcode']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if not text.isascii():
        text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if lowercase:
        text = text.lower()
    regex = _WORD_RE if pattern is None else re.compile(pattern)
    return regex.findall(text)


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """The English stop-word list shipped with gibbsjax (about 270 function words).

    Articles, pronouns, prepositions, conjunctions, auxiliary and modal verbs,
    common adverbs, and contractions such as ``"don't"``; all lower case.  The
    list is ``gibbsjax/datasets/data/stopwords_en.txt``.

    >>> {"the", "and", "don't"} <= english_stop_words(), "topic" in english_stop_words()
    (True, False)
    """
    from importlib import resources

    text = resources.files("gibbsjax.datasets").joinpath("data", "stopwords_en.txt").read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )


def _stop_word_set(stop_words) -> frozenset[str]:
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words.lower() == "english":
            return english_stop_words()
        raise ValueError(
            f"stop_words must be None, 'english' or an iterable of words, got the string {stop_words!r}"
        )
    return frozenset(str(w) for w in stop_words)


def _check_empty(empty: str) -> None:
    if empty not in _EMPTY_CHOICES:
        raise ValueError(f"empty must be one of {_EMPTY_CHOICES}, got {empty!r}")


def _apply_empty(corpus: Corpus, empty: str, *, min_length: int = 1, where: str = "", stacklevel: int = 3) -> Corpus:
    """Drop / reject / keep documents shorter than ``min_length`` tokens."""
    _check_empty(empty)
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


apply_empty = _apply_empty  # the public name (gibbsjax.inputs uses it); _apply_empty stays an alias for now


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


def _token_limit() -> int:
    """Most tokens a corpus may hold here: int32 indexing and the host memory available."""
    from gibbsjax.memory import host_available_bytes

    avail = host_available_bytes()
    return MAX_TOKENS if avail is None else min(MAX_TOKENS, avail // _BYTES_PER_TOKEN)


def _too_many_tokens(total: int, limit: int) -> str:
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

    Attributes
    ----------
    tokens : int32 array (N,)
        Word id of every token, documents one after another.
    doc_offsets : int64 array (D + 1,)
        Document ``d`` holds ``tokens[doc_offsets[d]:doc_offsets[d + 1]]``.
    vocab : tuple of str
        ``vocab[w]`` is the word with id ``w``.
    doc_names : tuple of str
        A name per document (file name, index, ...).
    labels : int32 array (D,) or None
        Optional document labels (``-1`` = unknown), with ``label_names``.

    The arrays are read-only.  The constructor accepts empty documents;
    the readers (``from_*``, ``read_*``) drop them by default (``empty=``).
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
        if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or offsets[-1] != tokens.size:
            raise ValueError("doc_offsets must start at 0 and end at len(tokens)")
        if np.any(np.diff(offsets) < 0):
            raise ValueError("doc_offsets must be non-decreasing")
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
                raise ValueError("a label is out of range for label_names")
            if labels.min(initial=0) < -1:
                raise ValueError("labels must be >= -1 (-1 marks an unknown label)")
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
        return int(self.doc_offsets.size - 1)

    @property
    def num_tokens(self) -> int:
        return int(self.tokens.size)

    @property
    def vocab_size(self) -> int:
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

        >>> Corpus.from_token_lists([["b", "a"]]).vocab
        ('a', 'b')
        >>> Corpus.from_token_lists([["a"], []], empty="keep").doc_lengths.tolist()
        [1, 0]
        """
        _check_empty(empty)
        docs = [list(d) for d in docs]
        if vocab is None:
            vocab = sorted({w for d in docs for w in d})
        index = {w: i for i, w in enumerate(vocab)}
        if len(index) != len(vocab):
            raise ValueError("vocab has repeated words")
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
        return _apply_empty(corpus, empty)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        *,
        tokenizer: Callable[[str], Iterable[str]] | None = None,
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

        1. every text is lower-cased (``lowercase=True``) and split into words
           by ``tokenizer`` (default :func:`tokenize`, which documents what a
           word is);
        2. words in ``stop_words`` are removed: ``None`` (none), ``"english"``
           (:func:`english_stop_words`) or any iterable of words, matched
           exactly against the (lower-cased) words;
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

        >>> c = Corpus.from_texts(["The cat sat on the mat.", "A dog and a cat!", "The end"],
        ...                       stop_words="english", labels=["pets", "pets", None])
        >>> c.vocab, c.doc_lengths.tolist(), c.labels.tolist(), c.label_names
        (('cat', 'dog', 'end', 'mat', 'sat'), [3, 2, 1], [0, 0, -1], ('pets',))
        >>> Corpus.from_texts(["a b", "b c", "b"], max_doc_freq=0.5).to_token_lists()
        [['a'], ['c']]
        """
        _check_empty(empty)
        stops = _stop_word_set(stop_words)
        tok = tokenize if tokenizer is None else tokenizer
        docs: list[list[str]] = []
        for j, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"texts[{j}] must be a str, got {type(text).__name__}")
            if lowercase:
                text = text.lower()
            words = tok(text) if tokenizer is not None else tokenize(text, lowercase=False)
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
            return _apply_empty(corpus, empty, min_length=min_doc_length, stacklevel=3)
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
        naming the rows of ``X`` after empty rows are dropped.  ``kwargs``:
        ``doc_names``, ``labels``, ``label_names``.

        >>> import numpy as np
        >>> Corpus.from_dtm(np.array([[2, 0, 1]])).tokens.tolist()
        [0, 0, 2]
        >>> Corpus.from_dtm(np.array([[0, 0], [1, 1]]), empty="keep").num_docs
        2
        """
        _check_empty(empty)
        return _apply_empty(_corpus_from_matrix(X, vocab, **kwargs), empty)

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

        >>> c = Corpus.from_token_lists([["the", "cat"], ["the", "dog"], ["the"]], empty="keep")
        >>> f = c.filter_vocab(stop_words="english", empty="keep")
        >>> f.vocab, f.doc_lengths.tolist()
        (('cat', 'dog'), [1, 1, 0])
        """
        return self._filter(
            stops=_stop_word_set(stop_words),
            min_count=min_count,
            max_doc_freq=max_doc_freq,
            max_vocab=max_vocab,
            min_doc_length=min_doc_length,
            empty=empty,
            stacklevel=4,
        )

    def _filter(self, *, stops, min_count, max_doc_freq, max_vocab, min_doc_length, empty, stacklevel) -> Corpus:
        _check_empty(empty)
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
        return _apply_empty(corpus, empty, min_length=min_doc_length, stacklevel=stacklevel)

    # ------------------------------------------------------------------ conversions
    def to_dtm(self):
        """The document-term count matrix, ``scipy.sparse.csr_matrix`` (D × V, int32)."""
        import scipy.sparse as sp

        M = sp.csr_matrix(
            (np.ones(self.num_tokens, dtype=np.int32), (self.doc_ids, self.tokens)),
            shape=(self.num_docs, self.vocab_size),
        )
        M.sum_duplicates()
        return M

    def to_token_lists(self) -> list[list[str]]:
        """The documents as lists of word strings, in token order.

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

        >>> Corpus.from_token_lists([["b", "a"], ["a"]]).to_texts()
        ['b a', 'a']
        """
        return [sep.join(d) for d in self.to_token_lists()]

    def subset(self, docs: Sequence[int] | np.ndarray) -> Corpus:
        """A corpus of the documents ``docs`` (indices or a boolean mask), same vocabulary."""
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


def _corpus_from_matrix(X, vocab, *, doc_names=None, labels=None, label_names=()) -> Corpus:
    import scipy.sparse as sp

    if sp.issparse(X):
        M = sp.csr_matrix(X)
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X must be a 2-D document-term matrix, got shape {arr.shape}")
        M = sp.csr_matrix(arr)
    M.sum_duplicates()
    M.sort_indices()
    data = M.data
    if data.size and (np.any(data < 0) or np.any(data != np.round(data))):
        raise ValueError("X must hold non-negative integer counts")
    counts = data.astype(np.int64)
    total, limit = int(counts.sum()), _token_limit()
    if total > limit:
        raise ValueError(_too_many_tokens(total, limit))
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


# ---------------------------------------------------------------------- files
def _open_text(path: Path, mode: str = "r"):
    """Open a text file (UTF-8), through gzip when the name ends in ``.gz``."""
    if mode == "r" and not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, mode + "b"), encoding="utf-8", newline=None)
    return open(path, mode, encoding="utf-8", newline=None if mode == "r" else "\n")


def _read_vocab(path: PathLike) -> tuple[str, ...]:
    """A vocabulary file: one word per line (the line without surrounding white space).

    Blank lines at the end are ignored; a blank line elsewhere or a repeated
    word raises ``ValueError`` with the line number.
    """
    path = Path(path)
    with _open_text(path) as fh:
        lines = fh.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    seen: dict[str, int] = {}
    for i, line in enumerate(lines, 1):
        word = line.strip()
        if not word:
            raise ValueError(f"{path}, line {i}: blank line in a vocabulary file (one word per line)")
        if word in seen:
            raise ValueError(f"{path}, line {i}: repeats the word of line {seen[word]}")
        seen[word] = i
    return tuple(seen)


def _write_vocab(vocab: Sequence[str], path: PathLike) -> None:
    for w in vocab:
        if not w.strip() or w != w.strip() or "\n" in w or "\r" in w:
            raise ValueError(f"word {w!r} cannot be written to a one-word-per-line vocabulary file")
    with _open_text(Path(path), "w") as fh:
        fh.writelines(w + "\n" for w in vocab)


_LDAC_LINE = re.compile(r"\s*(-?\d+)((?:\s+-?\d+:-?\d+)*)\s*")
_LDAC_PAIR = re.compile(r"(-?\d+):(-?\d+)")
_INT = re.compile(r"-?\d+")


def read_ldac(path: PathLike, vocab_path: PathLike | None = None, *, empty: str = "drop",
              docs: tuple[int, int] | None = None, part: tuple[int, int] | None = None) -> Corpus:
    """Read a corpus in Blei's LDA-C format.

    One document per line: ``N id:count id:count ...``, where ``N`` is the
    number of ``id:count`` pairs (distinct words) and word ids are 0-based
    (``0 <= id < V``).  An empty document is the line ``0``.  Repeated ids in a
    line are summed; a document's tokens are ordered by word id.  The
    vocabulary file (optional) has one word per line, line ``i + 1`` being
    word ``i``; without it the vocabulary is the ids as strings, ``V`` the
    largest id + 1.  Document names are the 0-based line indices.

    Raises ``ValueError`` naming the file and line for a malformed line, an
    ``N`` that disagrees with the pairs, a word id out of range, a negative
    count or a blank line (except at the end); ``FileNotFoundError`` for a
    missing file.

    **A part of the file** (one host's share of a corpus read on several hosts,
    see :func:`gibbsjax.models.lda_shard.from_parts`): ``docs=(start, stop)``
    reads documents ``start .. stop - 1`` (0-based lines; ``stop`` past the end
    means to the end), ``part=(i, n)`` the ``i``-th of ``n`` pieces of about
    equal size in bytes, cut at line starts (a line belongs to the piece holding
    its first byte), so the ``n`` parts hold every document exactly once, in
    order.  Only the part's lines are parsed; the lines before it are counted
    (a byte scan for newlines, no parsing) so that documents keep their names,
    the 0-based line index, as in a whole-file read.  ``empty`` applies to the
    part's documents.  A part needs ``vocab_path`` (the vocabulary size must
    not depend on which documents a part holds); ``part`` needs an uncompressed
    file (``docs`` also reads ``.gz``, decompressing the lines before it).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "docs.ldac"
    >>> _ = p.write_text("2 0:2 2:1\\n1 1:3\\n")
    >>> c = read_ldac(p)
    >>> c.to_token_lists()
    [['0', '0', '2'], ['1', '1', '1']]
    >>> v = p.with_name("vocab.txt")
    >>> _ = v.write_text("a\\nb\\nc\\n")
    >>> read_ldac(p, v, docs=(1, 2)).doc_names, read_ldac(p, v, part=(0, 2)).doc_names
    (('1',), ('0',))
    """
    _check_empty(empty)
    path = Path(path)
    vocab = _read_vocab(vocab_path) if vocab_path is not None else None
    V = None if vocab is None else len(vocab)
    first = 0  # the 0-based index of the first line read
    if docs is not None or part is not None:
        if vocab is None:
            raise ValueError("reading a part of an LDA-C file (docs= or part=) needs vocab_path: the vocabulary "
                             "size must be the same for every part, not the largest word id a part happens to hold")
        lines, first = _ldac_part_lines(path, docs, part)
    else:
        with _open_text(path) as fh:
            lines = fh.read().splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
    rows, cols, vals = [], [], []
    max_id = -1
    num_pairs = 0
    total, limit = 0, _token_limit()
    for i, line in enumerate(lines, first + 1):
        m = _LDAC_LINE.fullmatch(line)
        if m is None:
            if not line.strip():
                raise ValueError(f"{path}, line {i}: blank line (an empty document is written '0')")
            parts = line.split()
            if not _INT.fullmatch(parts[0]):
                raise ValueError(f"{path}, line {i}: expected the number of terms N (an integer) first")
            bad = next((j for j, p in enumerate(parts[1:], 1) if not _LDAC_PAIR.fullmatch(p)), None)
            raise ValueError(f"{path}, line {i}: malformed entry {bad} (expected id:count, integers)")
        n = int(m.group(1))
        pairs = _LDAC_PAIR.findall(m.group(2))
        if n != len(pairs):
            raise ValueError(f"{path}, line {i}: N = {n} but the line has {len(pairs)} id:count pairs")
        if not pairs:
            continue
        try:
            arr = np.array(pairs, dtype=np.int64)
        except (OverflowError, ValueError):
            raise ValueError(f"{path}, line {i}: a word id or count does not fit in 64 bits") from None
        ids, counts = arr[:, 0], arr[:, 1]
        bad_id = (ids < 0) if V is None else (ids < 0) | (ids >= V)
        if bad_id.any():
            rng = "must be >= 0" if V is None else f"must be in 0..{V - 1} (the vocabulary has {V} words)"
            raise ValueError(f"{path}, line {i}: word id {int(ids[bad_id][0])} is out of range; ids {rng}")
        if (counts < 0).any():
            raise ValueError(f"{path}, line {i}: negative count {int(counts[counts < 0][0])}")
        total += int(counts.sum())
        if total > limit:
            raise ValueError(f"{path}, line {i}: {_too_many_tokens(total, limit)}")
        rows.append(np.full(ids.size, i - 1 - first, dtype=np.int64))
        cols.append(ids)
        vals.append(counts)
        num_pairs += ids.size
        if int(ids.max()) > max_id:
            max_id, max_line = int(ids.max()), i
    import scipy.sparse as sp

    if V is None:
        # the ids name the words: the file names at most num_pairs distinct ones
        if max_id >= num_pairs:
            raise ValueError(
                f"{path}, line {max_line}: word id {max_id} needs a vocabulary of {max_id + 1} words, "
                f"but the file's {num_pairs} id:count pairs can name at most {num_pairs}; is the id wrong? "
                "(pass vocab_path, the vocabulary file, for a vocabulary of words the file does not use)"
            )
        V = max_id + 1
        vocab = tuple(str(w) for w in range(V))
    cat = (lambda xs: np.concatenate(xs)) if rows else (lambda xs: np.zeros(0, np.int64))
    M = sp.csr_matrix((cat(vals), (cat(rows), cat(cols))), shape=(len(lines), V))
    names = [str(first + j) for j in range(len(lines))] if first else None
    return _apply_empty(_corpus_from_matrix(M, vocab, doc_names=names), empty, where=f" in {path}")


# ---------------------------------------------------------------------- parts of files
#: bytes read at a time when a part of a file is located (newlines counted, lines skipped)
_SCAN_BLOCK = 1 << 24


def _check_range(name: str, value) -> tuple[int, int]:
    if (not isinstance(value, (tuple, list)) or len(value) != 2
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)):
        raise ValueError(f"{name} must be a pair of integers, got {value!r}")
    a, b = int(value[0]), int(value[1])
    if name == "part" and not 0 <= a < b:
        raise ValueError(f"part=(i, n) needs 0 <= i < n, got {value!r}")
    if name == "docs" and not 0 <= a < b:
        raise ValueError(f"docs=(start, stop) needs 0 <= start < stop, got {value!r}")
    return a, b


def _which_part(docs, part) -> tuple[str, tuple[int, int]]:
    if docs is not None and part is not None:
        raise ValueError("give docs=(start, stop) or part=(i, n), not both")
    return ("docs", _check_range("docs", docs)) if docs is not None else ("part", _check_range("part", part))


def _count_newlines(fh, nbytes: int | None) -> int:
    """Newlines in the next ``nbytes`` bytes of binary ``fh`` (None: to the end), read in blocks."""
    count = 0
    while nbytes is None or nbytes > 0:
        block = fh.read(_SCAN_BLOCK if nbytes is None else min(_SCAN_BLOCK, nbytes))
        if not block:
            break
        count += block.count(b"\n")
        if nbytes is not None:
            nbytes -= len(block)
    return count


def _skip_lines(fh, n: int, path: Path):
    """``fh`` (binary) moved past ``n`` newlines, to the start of line ``n`` (0-based), reading blocks
    and counting newlines (nothing is parsed); returns the stream to read on from."""
    left = n
    while left > 0:
        block = fh.read(_SCAN_BLOCK)
        if not block:
            raise ValueError(f"{path}: docs starts at document {n}, but the file has only {n - left} lines")
        k = block.count(b"\n")
        if k < left:
            left -= k
            continue
        at = -1
        for _ in range(left):
            at = block.index(b"\n", at + 1)
        return _Prefixed(block[at + 1:], fh)
    return _Prefixed(b"", fh)


class _Prefixed:
    """A binary stream whose first bytes were already read (no seeking back: gzip streams
    would decompress again from the start)."""

    def __init__(self, head: bytes, fh):
        self.head, self.fh = head, fh

    def readline(self) -> bytes:
        i = self.head.find(b"\n")
        if i >= 0:
            line, self.head = self.head[:i + 1], self.head[i + 1:]
            return line
        line, self.head = self.head + self.fh.readline(), b""
        return line

    def read(self, n: int) -> bytes:
        if self.head:
            out, self.head = self.head[:n], self.head[n:]
            return out
        return self.fh.read(n)


def _line_start_after(fh, offset: int) -> int:
    """The byte offset of the first line starting at or after ``offset`` (seekable binary ``fh``)."""
    if offset == 0:
        return 0
    fh.seek(offset - 1)
    fh.readline()  # the rest of the line holding byte offset - 1
    return fh.tell()


def _blank_rest(fh) -> bool:
    """Whether what is left to read of ``fh`` is all white space."""
    while True:
        block = fh.read(_SCAN_BLOCK)
        if not block:
            return True
        if block.strip():
            return False


def _ldac_part_lines(path: Path, docs, part) -> tuple[list[str], int]:
    """The lines of a part of an LDA-C file and the 0-based index of its first line; trailing
    blank lines dropped when nothing but white space follows them in the file."""
    which, (a, b) = _which_part(docs, part)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    gz = path.suffix == ".gz"
    if which == "part" and gz:
        raise ValueError(f"{path}: part=(i, n) splits a file by bytes and needs an uncompressed file "
                         "(decompress it, or give docs=(start, stop))")
    opener = gzip.open if gz else open
    with opener(path, "rb") as fh:
        if which == "docs":
            fh = _skip_lines(fh, a, path)
            first, raw = a, []
            for _ in range(b - a):
                line = fh.readline()
                if not line:
                    break
                raw.append(line)
            if not raw:
                raise ValueError(f"{path}: docs starts at document {a}, but the file has only {a} lines")
        else:
            size = path.stat().st_size
            lo = _line_start_after(fh, size * a // b)
            hi = _line_start_after(fh, size * (a + 1) // b)
            fh.seek(0)
            first = _count_newlines(fh, lo)
            fh.seek(lo)
            raw = fh.read(hi - lo).splitlines(keepends=True)
        try:
            lines = [x.decode("utf-8").rstrip("\r\n") for x in raw]
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a UTF-8 text file") from None
        if lines and not lines[-1].strip():
            # trailing blank lines end the file only when nothing but white space follows
            if _blank_rest(fh):
                while lines and not lines[-1].strip():
                    lines.pop()
    return lines, first


def write_ldac(corpus: Corpus, path: PathLike, vocab_path: PathLike | None = None) -> None:
    """Write ``corpus`` in LDA-C format (see :func:`read_ldac`), and its vocabulary.

    One line per document, ``N id:count ...`` with ids ascending; empty
    documents are written ``0``.  Names and labels are not written.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> c = Corpus.from_token_lists([["b", "a", "b"], ["c"]])
    >>> write_ldac(c, d / "c.ldac", d / "vocab.txt")
    >>> (d / "c.ldac").read_text()
    '2 0:1 1:2\\n1 2:1\\n'
    >>> read_ldac(d / "c.ldac", d / "vocab.txt").to_dtm().toarray().tolist()
    [[1, 2, 0], [0, 0, 1]]
    """
    M = corpus.to_dtm()
    with _open_text(Path(path), "w") as fh:
        for d in range(M.shape[0]):
            a, b = M.indptr[d], M.indptr[d + 1]
            pairs = " ".join(f"{w}:{n}" for w, n in zip(M.indices[a:b].tolist(), M.data[a:b].tolist()))
            fh.write(f"{b - a} {pairs}\n" if b > a else "0\n")
    if vocab_path is not None:
        _write_vocab(corpus.vocab, vocab_path)


def _uci_header(fh, path: Path) -> tuple[int, int, int]:
    values = []
    for i, what in enumerate(("number of documents D", "number of words W", "number of entries NNZ"), 1):
        line = fh.readline()
        if not line:
            raise ValueError(f"{path}, line {i}: the file ends before the {what} (3 header lines: D, W, NNZ)")
        s = line.strip()
        if not re.fullmatch(r"\d+", s):
            raise ValueError(f"{path}, line {i}: expected the {what} (one non-negative integer)")
        values.append(int(s))
    return values[0], values[1], values[2]


def _uci_body_slow(fh, path: Path, D: int, W: int, nnz: int) -> np.ndarray:
    """Parse the ``docID wordID count`` lines one by one, raising at the first bad line."""
    out = []
    total, limit = 0, _token_limit()
    for i, line in enumerate(fh, 4):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3 or not all(_INT.fullmatch(p) for p in parts):
            raise ValueError(f"{path}, line {i}: expected 'docID wordID count' (three integers)")
        d, w, n = (int(p) for p in parts)
        if not 1 <= d <= D:
            raise ValueError(f"{path}, line {i}: document id {d} is out of range 1..{D} (D = {D} in line 1)")
        if not 1 <= w <= W:
            raise ValueError(f"{path}, line {i}: word id {w} is out of range 1..{W} (W = {W} in line 2)")
        if n < 0:
            raise ValueError(f"{path}, line {i}: negative count {n}")
        if len(out) == nnz:
            raise ValueError(f"{path}, line {i}: more entries than NNZ = {nnz} (line 3)")
        total += n
        if total > limit:
            raise ValueError(f"{path}, line {i}: {_too_many_tokens(total, limit)}")
        out.append((d, w, n))
    if len(out) != nnz:
        raise ValueError(f"{path}, line 3: NNZ = {nnz} but the file has {len(out)} entries")
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def read_uci(docword_path: PathLike, vocab_path: PathLike | None = None, *, empty: str = "drop",
             docs: tuple[int, int] | None = None, part: tuple[int, int] | None = None) -> Corpus:
    """Read a corpus in the UCI bag-of-words format (``docword.*.txt`` + ``vocab.*.txt``).

    The docword file has three header lines -- ``D`` (documents), ``W``
    (words), ``NNZ`` (entries) -- then ``NNZ`` lines ``docID wordID count``
    with 1-based ids (``1 <= docID <= D``, ``1 <= wordID <= W``).  Blank lines
    are ignored; repeated (docID, wordID) entries are summed; documents
    without entries are empty.  The vocabulary file has ``W`` lines, line
    ``w`` being word ``w``; without it the vocabulary is ``"1"`` .. ``"W"``.
    Document names are the docIDs (``"1"``, ``"2"``, ...); word ``w`` of the
    file has id ``w - 1`` in the corpus.  ``.gz`` files are read through gzip.

    Raises ``ValueError`` naming the file and line for a malformed line, an id
    out of range, a negative count, a header that disagrees with the body
    (NNZ) or with the vocabulary file (W); ``FileNotFoundError`` for a
    missing file.

    **A part of the file** (one host's share, see
    :func:`gibbsjax.models.lda_shard.from_parts`): ``docs=(start, stop)`` reads
    the documents with 0-based index ``start .. stop - 1`` (docIDs ``start + 1
    .. stop``; ``stop`` past ``D`` means to the end); ``part=(i, n)`` the
    ``i``-th of ``n`` pieces of the body of about equal size in bytes, a
    document going to the piece that holds the first byte of its first entry
    (documents without entries: to the piece of the next document), so the
    ``n`` parts hold every document exactly once, in order.  The entries are
    found by bisection on byte offsets, so only the part's lines are parsed;
    this needs the entries sorted by docID (as the UCI files and
    :func:`write_uci` write them; entries out of order within the part raise
    ``ValueError``) and an uncompressed file.  Documents keep their names
    (docIDs); ``empty`` applies to the part's documents; ``NNZ`` is not checked
    against a part.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "docword.txt").write_text("2\\n3\\n3\\n1 1 2\\n1 3 1\\n2 2 4\\n")
    >>> _ = (d / "vocab.txt").write_text("apple\\nbanana\\ncherry\\n")
    >>> c = read_uci(d / "docword.txt", d / "vocab.txt")
    >>> c.doc_names, c.to_token_lists()
    (('1', '2'), [['apple', 'apple', 'cherry'], ['banana', 'banana', 'banana', 'banana']])
    >>> read_uci(d / "docword.txt", d / "vocab.txt", docs=(1, 2)).doc_names
    ('2',)
    """
    _check_empty(empty)
    path = Path(docword_path)
    if docs is not None or part is not None:
        return _read_uci_part(path, vocab_path, empty, docs, part)
    with _open_text(path) as fh:
        D, W, nnz = _uci_header(fh, path)
        arr = None
        try:  # fast path: numpy's C parser; any problem -> re-read line by line for the message
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arr = np.loadtxt(fh, dtype=np.int64, comments=None, ndmin=2)
            if arr.size == 0:
                arr = arr.reshape(0, 3)
            ok = (
                arr.shape == (nnz, 3)
                and (arr[:, 0].min(initial=1) >= 1 and arr[:, 0].max(initial=1) <= D)
                and (arr[:, 1].min(initial=1) >= 1 and arr[:, 1].max(initial=1) <= W)
                and arr[:, 2].min(initial=0) >= 0
                and int(arr[:, 2].sum()) <= _token_limit()
            )
        except (ValueError, OverflowError):
            ok = False
    if not ok:
        with _open_text(path) as fh:
            for _ in range(3):
                fh.readline()
            arr = _uci_body_slow(fh, path, D, W, nnz)
    # D and W (without a vocabulary file) make one name per document / word: bound
    # them by what the file holds, the entries present and the largest ids used
    entries = arr.shape[0]
    largest_doc = int(arr[:, 0].max(initial=0))
    if D > max(entries, largest_doc):
        raise ValueError(
            f"{path}, line 1: D = {D} documents, but the file has {entries} entries and its largest "
            f"document id is {largest_doc}; is D wrong?"
        )
    if vocab_path is not None:
        vocab = _read_vocab(vocab_path)
        if len(vocab) != W:
            raise ValueError(f"{vocab_path} has {len(vocab)} words but {path}, line 2 says W = {W}")
    else:
        largest_word = int(arr[:, 1].max(initial=0))
        if W > max(entries, largest_word):
            raise ValueError(
                f"{path}, line 2: W = {W} words, but the file has {entries} entries and its largest "
                f"word id is {largest_word}; is W wrong? (pass vocab_path, the vocabulary file, for a "
                "vocabulary of words the file does not use)"
            )
        vocab = tuple(str(w) for w in range(1, W + 1))
    import scipy.sparse as sp

    M = sp.csr_matrix((arr[:, 2], (arr[:, 0] - 1, arr[:, 1] - 1)), shape=(D, W))
    corpus = _corpus_from_matrix(M, vocab, doc_names=[str(d) for d in range(1, D + 1)])
    return _apply_empty(corpus, empty, where=f" in {path}")


class _UCIBody:
    """Byte-offset look-ups in the body of a plain UCI docword file (entries sorted by docID)."""

    def __init__(self, fh, path: Path, D: int):
        self.fh, self.path, self.D = fh, path, D
        for _ in range(3):
            fh.readline()
        self.start = fh.tell()
        fh.seek(0, os.SEEK_END)
        self.size = fh.tell()

    def _doc_of(self, line: bytes, at: int) -> int:
        first = line.split(None, 1)[0] if line.strip() else b""
        if not re.fullmatch(rb"\d+", first):
            raise ValueError(f"{self.path}, the line at byte {at}: expected 'docID wordID count' (three integers)")
        return int(first)

    def first_at_or_after(self, offset: int) -> tuple[int, int]:
        """``(line start, docID)`` of the first entry starting at or after ``offset`` (blank lines
        skipped); ``(size, D + 1)`` past the last entry."""
        fh = self.fh
        if offset <= self.start:
            fh.seek(self.start)
        else:
            fh.seek(offset - 1)
            fh.readline()
        while True:
            at = fh.tell()
            line = fh.readline()
            if not line:
                return self.size, self.D + 1
            if line.strip():
                return at, self._doc_of(line, at)

    def last_before(self, offset: int) -> int:
        """The docID of the last entry starting before ``offset`` (a line start; 0 when there is none)."""
        window = 4096
        while True:
            lo = max(self.start, offset - window)
            self.fh.seek(lo)
            lines = self.fh.read(offset - lo).split(b"\n")
            whole = lines if lo == self.start else lines[1:]  # the first piece may be cut
            for line in reversed(whole):
                if line.strip():
                    return self._doc_of(line, lo)
            if lo == self.start:
                return 0
            window *= 2

    def bisect(self, doc: int) -> int:
        """The line start of the first entry whose docID is at least ``doc`` (sorted entries)."""
        lo, hi = self.start, self.size
        while lo < hi:
            mid = (lo + hi) // 2
            if self.first_at_or_after(mid)[1] >= doc:
                hi = mid
            else:
                lo = mid + 1
        return self.first_at_or_after(lo)[0]


def _read_uci_part(path: Path, vocab_path, empty: str, docs, part) -> Corpus:
    """:func:`read_uci` of documents ``docs`` or of ``part`` (see there)."""
    which, (a, b) = _which_part(docs, part)
    if path.suffix == ".gz":
        raise ValueError(f"{path}: reading a part (docs= or part=) of a UCI file needs an uncompressed file "
                         "(its entries are found by byte offsets); decompress it first")
    with _open_text(path) as fh:
        D, W, _ = _uci_header(fh, path)
    vocab = _read_vocab(vocab_path) if vocab_path is not None else tuple(str(w) for w in range(1, W + 1))
    if len(vocab) != W:
        raise ValueError(f"{vocab_path} has {len(vocab)} words but {path}, line 2 says W = {W}")
    with open(path, "rb") as fh:
        body = _UCIBody(fh, path, D)
        if which == "part":
            cuts = [body.start + (body.size - body.start) * j // b for j in (a, a + 1)]
            first = [1 if j == 0 else body.last_before(body.first_at_or_after(c)[0]) + 1
                     for j, c in zip((a, a + 1), cuts)]
            if a + 1 == b:
                first[1] = D + 1
            start, stop = first[0] - 1, min(first[1] - 1, D)
            if stop <= start:
                raise ValueError(f"{path}: part {a} of {b} holds no document (a document's entries span it); "
                                 "split the file into fewer parts")
        else:
            start, stop = a, min(b, D)
            if start >= D:
                raise ValueError(f"{path}: docs starts at document {start}, but the file has D = {D} documents")
        lo, hi = body.bisect(start + 1), body.bisect(stop + 1)
        fh.seek(lo)
        block = fh.read(hi - lo)
        if body.last_before(lo) > start or body.first_at_or_after(hi)[1] <= stop:
            raise ValueError(f"{path}: the entries are not sorted by docID (reading a part needs them sorted)")
        arr = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arr = np.loadtxt(io.BytesIO(block), dtype=np.int64, comments=None, ndmin=2)
            if arr.size == 0:
                arr = arr.reshape(0, 3)
            ok = (arr.shape[1:] == (3,) and np.all(np.diff(arr[:, 0]) >= 0)
                  and arr[:, 0].min(initial=start + 1) >= start + 1 and arr[:, 0].max(initial=stop) <= stop
                  and arr[:, 1].min(initial=1) >= 1 and arr[:, 1].max(initial=1) <= W
                  and arr[:, 2].min(initial=0) >= 0 and int(arr[:, 2].sum()) <= _token_limit())
        except (ValueError, OverflowError):
            ok = False
        if not ok:
            fh.seek(0)
            line0 = _count_newlines(fh, lo) + 1
            arr = _uci_part_slow(block, path, line0, start, stop, W)
    import scipy.sparse as sp

    M = sp.csr_matrix((arr[:, 2], (arr[:, 0] - 1 - start, arr[:, 1] - 1)), shape=(stop - start, W))
    corpus = _corpus_from_matrix(M, vocab, doc_names=[str(d) for d in range(start + 1, stop + 1)])
    return _apply_empty(corpus, empty, where=f" in {path} (documents {start}..{stop - 1})")


def _uci_part_slow(block: bytes, path: Path, line0: int, start: int, stop: int, W: int) -> np.ndarray:
    """The entries of a part, line by line, raising at the first bad one (``line0``: its first line's number)."""
    out = []
    total, limit, last = 0, _token_limit(), start + 1
    for i, raw in enumerate(block.split(b"\n"), line0):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 3 or not all(re.fullmatch(rb"-?\d+", p) for p in parts):
            raise ValueError(f"{path}, line {i}: expected 'docID wordID count' (three integers)")
        d, w, n = (int(p) for p in parts)
        if d < last or d > stop:
            raise ValueError(f"{path}, line {i}: document id {d} out of order (reading a part needs the entries "
                             f"sorted by docID; this part holds docIDs {start + 1}..{stop})")
        if not 1 <= w <= W:
            raise ValueError(f"{path}, line {i}: word id {w} is out of range 1..{W} (W = {W} in line 2)")
        if n < 0:
            raise ValueError(f"{path}, line {i}: negative count {n}")
        total += n
        if total > limit:
            raise ValueError(f"{path}, line {i}: {_too_many_tokens(total, limit)}")
        last = d
        out.append((d, w, n))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def write_uci(corpus: Corpus, docword_path: PathLike, vocab_path: PathLike | None = None) -> None:
    """Write ``corpus`` in the UCI bag-of-words format (see :func:`read_uci`).

    Entries are sorted by document, then word; ids are 1-based.  Names and
    labels are not written.  ``.gz`` paths are written through gzip.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_uci(Corpus.from_token_lists([["b", "a", "b"], ["c"]]), d / "docword.txt")
    >>> (d / "docword.txt").read_text().split("\\n")
    ['2', '3', '3', '1 1 1', '1 2 2', '2 3 1', '']
    """
    M = corpus.to_dtm().tocoo()
    order = np.lexsort((M.col, M.row))
    rows, cols, data = M.row[order] + 1, M.col[order] + 1, M.data[order]
    with _open_text(Path(docword_path), "w") as fh:
        fh.write(f"{corpus.num_docs}\n{corpus.vocab_size}\n{data.size}\n")
        fh.writelines(f"{d} {w} {n}\n" for d, w, n in zip(rows.tolist(), cols.tolist(), data.tolist()))
    if vocab_path is not None:
        _write_vocab(corpus.vocab, vocab_path)


def read_folder(
    path: PathLike,
    pattern: str = "*.txt",
    *,
    labels_from: str | None = None,
    encoding: str = "utf-8",
    **from_texts_kwargs,
) -> Corpus:
    """Read a folder of text files, one document per file, with :meth:`Corpus.from_texts`.

    Files are those matching ``pattern`` (``pathlib`` glob, e.g. ``"*.txt"``,
    ``"**/*.txt"`` for all depths) directly in ``path``, sorted by name.
    Document names are the file paths relative to ``path`` (``"/"``
    separated; for files directly in ``path``, the file names).

    With ``labels_from="subfolder"``, files matching ``pattern`` at any depth
    are read and labelled by the top-level sub-folder they are in (label
    names: the sub-folder names, sorted); files directly in ``path`` get the
    unknown label ``-1`` (useful for semi-supervised models).

    ``from_texts_kwargs`` go to :meth:`Corpus.from_texts` (``stop_words``,
    ``min_count``, ``max_doc_freq``, ``empty``, ...).  A missing folder
    raises ``FileNotFoundError``; no matching files, or a file that is not
    valid ``encoding`` text, ``ValueError`` (naming the file and line).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name, text in [("pets/a.txt", "cats and dogs"), ("cars/b.txt", "fast cars"), ("c.txt", "cats")]:
    ...     (d / name).parent.mkdir(exist_ok=True)
    ...     _ = (d / name).write_text(text)
    >>> c = read_folder(d, labels_from="subfolder", stop_words="english")
    >>> c.doc_names, c.labels.tolist(), c.label_names
    (('c.txt', 'cars/b.txt', 'pets/a.txt'), [-1, 0, 1], ('cars', 'pets'))
    """
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"read_folder: no such folder: {root}")
    if labels_from not in (None, "subfolder"):
        raise ValueError(f"labels_from must be None or 'subfolder', got {labels_from!r}")
    if labels_from is not None and ("labels" in from_texts_kwargs or "label_names" in from_texts_kwargs):
        raise ValueError("pass either labels_from or labels / label_names, not both")
    if "doc_names" in from_texts_kwargs:
        raise ValueError("read_folder names documents by their files; doc_names cannot be given")
    found = root.rglob(pattern) if labels_from == "subfolder" else root.glob(pattern)
    files = sorted((p for p in found if p.is_file()), key=lambda p: p.relative_to(root).as_posix())
    if not files:
        raise ValueError(f"read_folder: no files match {pattern!r} in {root}")
    texts, names, labels = [], [], []
    for p in files:
        data = p.read_bytes()
        try:
            texts.append(data.decode(encoding))
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            raise ValueError(f"{p}, line {line}: not valid {encoding} text ({e.reason})") from None
        rel = p.relative_to(root)
        names.append(rel.as_posix())
        labels.append(rel.parts[0] if len(rel.parts) > 1 else None)
    if labels_from == "subfolder":
        if all(x is None for x in labels):
            raise ValueError(f"read_folder: labels_from='subfolder' but no file matching {pattern!r} is in a sub-folder of {root}")
        from_texts_kwargs["labels"] = labels
    return Corpus.from_texts(texts, doc_names=names, **from_texts_kwargs)
