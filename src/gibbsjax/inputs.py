"""Documents as users hold them, turned into a :class:`~gibbsjax.corpus.Corpus`: :func:`as_corpus`.

One converter for every front door that takes documents (:class:`gibbsjax.LDA`'s
``fit``, ``transform``, ``perplexity``, ``coherence``; :mod:`gibbsjax.evaluate`).
It accepts

* a :class:`~gibbsjax.corpus.Corpus`;
* a document-term count matrix (D × V, scipy.sparse or dense, e.g. from
  scikit-learn's ``CountVectorizer``), with ``vocab=`` naming its columns
  (without it the words are ``"0"``, ..., ``"V-1"``);
* an iterable of token lists (``[["cat", "sat"], ...]``,
  :meth:`Corpus.from_token_lists <gibbsjax.corpus.Corpus.from_token_lists>`);
* an iterable of raw strings, tokenised by
  :meth:`Corpus.from_texts <gibbsjax.corpus.Corpus.from_texts>` (its default
  tokenizer, lower-cased, no stop words).

A mix (strings and token lists, ragged rows of numbers) is a ``ValueError``.
Documents for a fitted model (``model_vocab``) are matched to its words *by name*
whenever both sides have names: a Corpus or a matrix with ``vocab=`` in another word
order is reordered, and one whose vocabulary differs is refused (``ValueError``
naming a word); token lists and texts are encoded with the model's vocabulary,
words it does not know being ignored.  A matrix without names can only be checked
for its number of columns.  Every error names the argument (``name``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gibbsjax.corpus import Corpus, apply_empty

__all__ = ["as_corpus", "is_anonymous"]


def is_anonymous(vocab: Sequence[str]) -> bool:
    """A vocabulary ``("0", "1", ..., "V-1")``: columns of a matrix given without words.

    >>> is_anonymous(("0", "1", "2")), is_anonymous(("cat", "dog"))
    (True, False)
    """
    return tuple(vocab) == tuple(str(i) for i in range(len(vocab)))


def as_corpus(X, name: str = "X", *, vocab: Sequence[str] | None = None, model_vocab: Sequence[str] | None = None,
              vocab_size: int | None = None, empty: str = "keep") -> Corpus:
    """``X`` (any input of the module docstring) as a Corpus of every input document.

    ``vocab`` names the columns of a matrix.  ``model_vocab``: the words of a
    fitted model, which the documents are matched to (see the module docstring).
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
    """
    if vocab_size is not None:
        corpus = _columns_only(X, name, vocab_size)
    else:
        corpus = _documents(X, name, vocab, None if model_vocab is None else tuple(model_vocab))
    if empty == "keep":
        return corpus
    return apply_empty(corpus, empty, where=f" in {name}", stacklevel=4)


def _columns_only(X, name: str, vocab_size: int) -> Corpus:
    """A Corpus or a document-term matrix, checked against ``vocab_size``."""
    if isinstance(X, Corpus):
        corpus = X
    else:
        try:
            corpus = Corpus.from_dtm(X, empty="keep")
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    if corpus.vocab_size != vocab_size:
        raise ValueError(
            f"{name} has a vocabulary of {corpus.vocab_size} words but the topics have {vocab_size}"
        )
    return corpus


def _documents(X, name: str, vocab, known) -> Corpus:
    """``X`` as a Corpus of every input document (empty ones kept), matched to
    the model's vocabulary ``known`` when there is one."""
    import scipy.sparse as sp  # as gibbsjax.corpus does: not imported with gibbsjax (a quarter of a second)

    if vocab is not None:
        vocab = _check_vocab(vocab)
    if isinstance(X, Corpus):
        if vocab is not None:
            raise ValueError(f"vocab names the columns of a document-term matrix; {name} is a Corpus, "
                             "which carries its own vocabulary")
        if len(set(X.vocab)) != len(X.vocab):
            _check_vocab(X.vocab, f"{name}'s vocabulary")
        return X if known is None else _match_corpus(X, name, known)
    if X is None or isinstance(X, (str, bytes)):
        raise ValueError(f"{name} must be a collection of documents (a Corpus, a document-term matrix, "
                         f"token lists or strings), got {'a single string' if X is not None else 'None'}")
    if sp.issparse(X) or len(getattr(X, "shape", ())) == 2:  # also pandas, JAX arrays
        return _matrix(X, name, vocab, known)
    try:
        docs = list(X)
    except TypeError:
        raise ValueError(f"{name} must be a Corpus, a document-term matrix, an iterable of token lists or "
                         f"an iterable of strings, got {type(X).__name__}") from None
    if not docs:
        raise ValueError(f"{name} holds no documents")
    kind = _kind_of_documents(docs, name)
    if kind == "counts":
        try:
            matrix = np.asarray(docs)
        except ValueError:
            raise ValueError(f"{name}: rows of numbers must all have one length (a document-term "
                             "matrix)") from None
        return _matrix(matrix, name, vocab, known)
    if vocab is not None:
        raise ValueError(f"vocab names the columns of a document-term matrix; {name} holds {kind}")
    if kind == "texts":
        if known is not None and is_anonymous(known):
            raise ValueError(f"{name} holds texts, but this model was fitted on a matrix without words; "
                             "name them with set_vocab(words) first, or pass a document-term matrix")
        return Corpus.from_texts(docs, vocab=known, empty="keep")
    # token lists
    if known is not None:
        if is_anonymous(known):
            raise ValueError(f"{name} holds token lists, but this model was fitted on a matrix without "
                             "words; name them with set_vocab(words) first, or pass a document-term matrix")
        index = set(known)
        docs = [[w for w in d if w in index] for d in docs]  # words the model does not know: ignored
    return Corpus.from_token_lists(docs, vocab=known, empty="keep")


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
                raise ValueError(f"{name}[{j}] must be a string or a list of words, got "
                                 f"{type(d).__name__}") from None
            words = sum(isinstance(w, str) for w in items)
            numbers = sum(isinstance(w, (int, float, np.integer, np.floating)) and not isinstance(w, bool)
                          for w in items)
            if words and words == len(items):
                kind = "token lists"
            elif numbers and numbers == len(items):
                kind = "counts"
            elif not items:
                continue  # an empty document: any kind
            else:
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


def _matrix(X, name: str, vocab, known) -> Corpus:
    import scipy.sparse as sp

    if not sp.issparse(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D document-term matrix, got shape {X.shape}")
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
    try:
        return Corpus.from_dtm(X, vocab=vocab, empty="keep")
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


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
