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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Corpus"]


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
    """

    tokens: np.ndarray
    doc_offsets: np.ndarray
    vocab: tuple[str, ...]
    doc_names: tuple[str, ...] = field(default=())
    labels: np.ndarray | None = None
    label_names: tuple[str, ...] = field(default=())

    def __post_init__(self):
        tokens = np.ascontiguousarray(self.tokens, dtype=np.int32)
        offsets = np.ascontiguousarray(self.doc_offsets, dtype=np.int64)
        vocab = tuple(str(v) for v in self.vocab)
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
            labels = np.ascontiguousarray(labels, dtype=np.int32)
            if labels.shape != (num_docs,):
                raise ValueError(f"labels must have shape ({num_docs},), got {labels.shape}")
            if self.label_names and labels.max(initial=-1) >= len(self.label_names):
                raise ValueError("a label is out of range for label_names")
            if labels.min(initial=0) < -1:
                raise ValueError("labels must be >= -1 (-1 marks an unknown label)")
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
    ) -> Corpus:
        """Build from documents given as lists of word strings.

        With ``vocab`` given, words outside it raise ``ValueError``; otherwise
        the vocabulary is the sorted set of words seen.

        >>> Corpus.from_token_lists([["b", "a"]]).vocab
        ('a', 'b')
        """
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
        return cls(
            np.asarray(ids, dtype=np.int32),
            np.asarray(offsets, dtype=np.int64),
            tuple(vocab),
            tuple(doc_names) if doc_names is not None else (),
            None if labels is None else np.asarray(labels),
            tuple(label_names),
        )

    @classmethod
    def from_dtm(cls, X, *, vocab: Sequence[str] | None = None, **kwargs) -> Corpus:
        """Build from a document-term count matrix (dense or scipy.sparse, D × V).

        Rows are documents, columns words (the convention of scikit-learn and
        the ``lda`` package).  Tokens of a document are ordered by word id.

        >>> import numpy as np
        >>> Corpus.from_dtm(np.array([[2, 0, 1]])).tokens.tolist()
        [0, 0, 2]
        """
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
        tokens = np.repeat(M.indices.astype(np.int32), counts)
        row_tokens = np.add.reduceat(counts, M.indptr[:-1]) if counts.size else np.zeros(M.shape[0], np.int64)
        row_tokens = np.where(np.diff(M.indptr) > 0, row_tokens, 0)
        offsets = np.concatenate([[0], np.cumsum(row_tokens)])
        if vocab is None:
            vocab = tuple(str(i) for i in range(M.shape[1]))
        elif len(vocab) != M.shape[1]:
            raise ValueError(f"vocab has {len(vocab)} words for a matrix with {M.shape[1]} columns")
        return cls(tokens, offsets, tuple(vocab), **kwargs)

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

    def subset(self, docs: Sequence[int] | np.ndarray) -> Corpus:
        """A corpus of the documents ``docs`` (indices or a boolean mask), same vocabulary."""
        idx = np.asarray(docs)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
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
