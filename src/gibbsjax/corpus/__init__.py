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
* :meth:`Corpus.from_texts` -- raw strings, tokenized by :func:`tokenize` (words:
  the matches of ``token_pattern``, by default scikit-learn's :data:`TOKEN_PATTERN`), with
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
missing file or folder raises ``FileNotFoundError`` (which is also a
``ValueError``).  Every file is read through :mod:`gibbsjax.reading`: one that
is not a regular file (a folder, a device, a FIFO), larger than the data limit
(2 GiB by default, ``GIBBSJAX_MAX_DATA_BYTES``; for ``.gz`` files the
decompressed bytes, for a part of a file the part's bytes), not readable or not
UTF-8 text raises a ``ValueError`` naming it.  Files whose name ends in
``.gz`` are read and written through gzip.

Modules (each imports only those above it): :mod:`~gibbsjax.corpus.text`
(the tokenizer and stop words), :mod:`~gibbsjax.corpus.core` (the
:class:`Corpus` type, its checks, what readers do with empty documents),
:mod:`~gibbsjax.corpus.files` (text files, vocabulary files, locating a part
of a file), then one module per format: :mod:`~gibbsjax.corpus.ldac`,
:mod:`~gibbsjax.corpus.uci`, :mod:`~gibbsjax.corpus.folder`.  A new format
goes in a module of its own beside them, and is re-exported here.
"""

from __future__ import annotations

# every public name of the former module gibbsjax.corpus, from its new home
from gibbsjax.corpus.core import MAX_TOKENS, Corpus, EmptyDocumentWarning, apply_empty  # noqa: F401
from gibbsjax.corpus.files import PathLike  # noqa: F401
from gibbsjax.corpus.folder import read_folder
from gibbsjax.corpus.ldac import read_ldac, write_ldac
from gibbsjax.corpus.text import TOKEN_PATTERN, WORD_PATTERN, english_stop_words, tokenize
from gibbsjax.corpus.uci import read_uci, write_uci

__all__ = [
    "Corpus",
    "EmptyDocumentWarning",
    "TOKEN_PATTERN",
    "WORD_PATTERN",
    "english_stop_words",
    "tokenize",
    "read_folder",
    "read_ldac",
    "write_ldac",
    "read_uci",
    "write_uci",
]

