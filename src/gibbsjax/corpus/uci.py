"""The UCI bag-of-words format (``docword.*.txt`` + ``vocab.*.txt``): :func:`read_uci`
(a whole file, or a part of it found by bisection on byte offsets) and :func:`write_uci`.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from pathlib import Path

import numpy as np

from gibbsjax import reading
from gibbsjax.corpus.core import Corpus, apply_empty, check_empty, corpus_from_matrix, token_limit, too_many_tokens
from gibbsjax.corpus.files import (
    INT_RE,
    PathLike,
    count_newlines,
    line_start_after,
    open_text,
    read_vocab,
    which_part,
    write_vocab,
)

__all__ = ["read_uci", "write_uci"]


#: the longest header line read (characters)
_HEADER_LINE = 4096
#: the longest entry line looked at when a part of a file is located (bytes)
_ENTRY_LINE = 2**20


def _uci_header(fh, path: Path) -> tuple[int, int, int]:
    values = []
    for i, what in enumerate(("number of documents D", "number of words W", "number of entries NNZ"), 1):
        line = fh.readline(_HEADER_LINE)  # bounded: a file of one huge line is not read whole
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
    total, limit = 0, token_limit()
    for i, line in enumerate(fh, 4):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3 or not all(INT_RE.fullmatch(p) for p in parts):
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
            raise ValueError(f"{path}, line {i}: {too_many_tokens(total, limit)}")
        out.append((d, w, n))
    if len(out) != nnz:
        raise ValueError(f"{path}, line 3: NNZ = {nnz} but the file has {len(out)} entries")
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def read_uci(docword_path: PathLike, vocab_path: PathLike | None = None, *, empty: str = "drop",
             docs: tuple[int, int] | None = None, part: tuple[int, int] | None = None) -> Corpus:
    r"""Read a corpus in the UCI bag-of-words format (``docword.*.txt`` + ``vocab.*.txt``).

    The docword file has three header lines -- ``D`` (documents), ``W``
    (words), ``NNZ`` (entries) -- then ``NNZ`` lines ``docID wordID count``
    with 1-based ids (``1 <= docID <= D``, ``1 <= wordID <= W``).  Blank lines
    are ignored; repeated (docID, wordID) entries are summed; documents
    without entries are empty.  Document names are the docIDs (``"1"``,
    ``"2"``, ...); word ``w`` of the file has id ``w - 1`` in the corpus.
    ``.gz`` files are read through gzip.

    **A part of the file** (one host's share, see
    :func:`gibbsjax.models.lda_shard.from_parts`): the entries are found by
    bisection on byte offsets, so only the part's lines are parsed; this needs
    the entries sorted by docID (as the UCI files and :func:`write_uci` write
    them; entries out of order within the part raise ``ValueError``) and an
    uncompressed file.  Documents keep their names (docIDs); ``NNZ`` is not
    checked against a part.

    Parameters
    ----------
    docword_path : str or path-like
        The ``docword.*.txt`` file.
    vocab_path : str or path-like, optional
        The vocabulary file, ``W`` lines, line ``w`` being word ``w``; without it
        the vocabulary is ``"1"`` .. ``"W"``.
    empty : {"drop", "error", "keep"}, default "drop"
        What to do with empty documents (of the part, for a part).
    docs : tuple of (int, int), optional
        ``(start, stop)``: the documents with 0-based index ``start .. stop - 1``
        (docIDs ``start + 1 .. stop``; ``stop`` past ``D`` means to the end).
    part : tuple of (int, int), optional
        ``(i, n)``: the ``i``-th of ``n`` pieces of the body of about equal size
        in bytes, a document going to the piece that holds the first byte of its
        first entry (documents without entries: to the piece of the next
        document), so the ``n`` parts hold every document exactly once, in order.

    Returns
    -------
    Corpus
        The documents read (and their vocabulary).

    Raises
    ------
    ValueError
        Naming the file and line for a malformed line, an id out of range, a
        negative count, a header that disagrees with the body (NNZ) or with the
        vocabulary file (W), a file that is not UTF-8 text, not a regular file,
        not readable or larger than the data limit (see :mod:`gibbsjax.reading`;
        a part: its bytes).
    FileNotFoundError
        For a missing file (also a ``ValueError``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "docword.txt").write_text("2\n3\n3\n1 1 2\n1 3 1\n2 2 4\n")
    >>> _ = (d / "vocab.txt").write_text("apple\nbanana\ncherry\n")
    >>> c = read_uci(d / "docword.txt", d / "vocab.txt")
    >>> c.doc_names, c.to_token_lists()
    (('1', '2'), [['apple', 'apple', 'cherry'], ['banana', 'banana', 'banana', 'banana']])
    >>> read_uci(d / "docword.txt", d / "vocab.txt", docs=(1, 2)).doc_names
    ('2',)
    """
    check_empty(empty)
    path = Path(docword_path)
    if docs is not None or part is not None:
        return _read_uci_part(path, vocab_path, empty, docs, part)
    with open_text(path) as fh, reading.decode_errors(path):
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
                and int(arr[:, 2].sum()) <= token_limit()
            )
        except reading.ReadError:
            raise
        except (ValueError, OverflowError):  # a decoding error too: the slow path says where
            ok = False
    if not ok:
        with open_text(path) as fh, reading.decode_errors(path):
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
        vocab = read_vocab(vocab_path)
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
    corpus = corpus_from_matrix(M, vocab, doc_names=[str(d) for d in range(1, D + 1)])
    return apply_empty(corpus, empty, where=f" in {path}")


class _UCIBody:
    """Byte-offset look-ups in the body of a plain UCI docword file (entries sorted by docID)."""

    def __init__(self, fh, path: Path, D: int):
        self.fh, self.path, self.D = fh, path, D
        for _ in range(3):
            fh.readline(_HEADER_LINE)  # (the header was checked by _uci_header)
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
            fh.seek(line_start_after(fh, offset))
        while True:
            at = fh.tell()
            line = fh.readline(_ENTRY_LINE)  # bounded: a file of one huge line is not read whole
            if not line:
                return self.size, self.D + 1
            if len(line) == _ENTRY_LINE and not line.endswith(b"\n"):
                raise ValueError(f"{self.path}, the line at byte {at}: longer than {_ENTRY_LINE} bytes "
                                 "(expected 'docID wordID count', three integers)")
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
            if window > _ENTRY_LINE:
                raise ValueError(f"{self.path}: no entry in the {window} bytes before byte {offset} "
                                 "(expected lines 'docID wordID count')")
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
    which, (a, b) = which_part(docs, part)
    if path.suffix == ".gz":
        raise ValueError(f"{path}: reading a part (docs= or part=) of a UCI file needs an uncompressed file "
                         "(its entries are found by byte offsets); decompress it first")
    with reading.open_text(path, kind="data", sized=False) as fh, reading.decode_errors(path):
        D, W, _ = _uci_header(fh, path)
    vocab = read_vocab(vocab_path) if vocab_path is not None else tuple(str(w) for w in range(1, W + 1))
    if len(vocab) != W:
        raise ValueError(f"{vocab_path} has {len(vocab)} words but {path}, line 2 says W = {W}")
    limit = reading.limit_for("data")
    with reading.open_binary(path, kind="data", sized=False) as fh:
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
        if hi - lo > limit:
            raise reading.ReadError(f"{path}: documents {start}..{stop - 1} take {hi - lo} bytes, more than the "
                                    f"{reading.format_bytes(limit)} limit for a data file; set "
                                    "GIBBSJAX_MAX_DATA_BYTES to read them, or read fewer documents")
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
                  and arr[:, 2].min(initial=0) >= 0 and int(arr[:, 2].sum()) <= token_limit())
        except (ValueError, OverflowError):
            ok = False
        if not ok:
            fh.seek(0)
            line0 = count_newlines(fh, lo) + 1
            arr = _uci_part_slow(block, path, line0, start, stop, W)
    import scipy.sparse as sp

    M = sp.csr_matrix((arr[:, 2], (arr[:, 0] - 1 - start, arr[:, 1] - 1)), shape=(stop - start, W))
    corpus = corpus_from_matrix(M, vocab, doc_names=[str(d) for d in range(start + 1, stop + 1)])
    return apply_empty(corpus, empty, where=f" in {path} (documents {start}..{stop - 1})")


def _uci_part_slow(block: bytes, path: Path, line0: int, start: int, stop: int, W: int) -> np.ndarray:
    """The entries of a part, line by line, raising at the first bad one (``line0``: its first line's number)."""
    out = []
    total, limit, last = 0, token_limit(), start + 1
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
            raise ValueError(f"{path}, line {i}: {too_many_tokens(total, limit)}")
        last = d
        out.append((d, w, n))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def write_uci(corpus: Corpus, docword_path: PathLike, vocab_path: PathLike | None = None) -> None:
    r"""Write ``corpus`` in the UCI bag-of-words format (see :func:`read_uci`).

    Entries are sorted by document, then word; ids are 1-based.  Names and
    labels are not written.  ``.gz`` paths are written through gzip.

    Parameters
    ----------
    corpus : Corpus
        The corpus to write.
    docword_path : str or path-like
        The docword file (``.gz``: written through gzip).
    vocab_path : str or path-like, optional
        As in :func:`gibbsjax.corpus.write_ldac` (one word per line).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_uci(Corpus.from_token_lists([["b", "a", "b"], ["c"]]), d / "docword.txt")
    >>> (d / "docword.txt").read_text().split("\n")
    ['2', '3', '3', '1 1 1', '1 2 2', '2 3 1', '']
    """
    M = corpus.to_dtm().tocoo()
    order = np.lexsort((M.col, M.row))
    rows, cols, data = M.row[order] + 1, M.col[order] + 1, M.data[order]
    with open_text(Path(docword_path), "w") as fh:
        fh.write(f"{corpus.num_docs}\n{corpus.vocab_size}\n{data.size}\n")
        fh.writelines(f"{d} {w} {n}\n" for d, w, n in zip(rows.tolist(), cols.tolist(), data.tolist()))
    if vocab_path is not None:
        write_vocab(corpus.vocab, vocab_path)
