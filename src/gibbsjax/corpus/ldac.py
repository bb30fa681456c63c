"""Blei's LDA-C format: :func:`read_ldac` (a whole file, or a part of it) and :func:`write_ldac`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from gibbsjax import reading
from gibbsjax.corpus.core import Corpus, apply_empty, check_empty, corpus_from_matrix, token_limit, too_many_tokens
from gibbsjax.corpus.files import (
    INT_RE,
    PathLike,
    blank_rest,
    count_newlines,
    line_start_after,
    open_text,
    read_vocab,
    skip_lines,
    which_part,
    write_vocab,
)

__all__ = ["read_ldac", "write_ldac"]

_LDAC_LINE = re.compile(r"\s*(-?\d+)((?:\s+-?\d+:-?\d+)*)\s*")
_LDAC_PAIR = re.compile(r"(-?\d+):(-?\d+)")


def read_ldac(path: PathLike, vocab_path: PathLike | None = None, *, empty: str = "drop",
              docs: tuple[int, int] | None = None, part: tuple[int, int] | None = None) -> Corpus:
    r"""Read a corpus in Blei's LDA-C format.

    One document per line: ``N id:count id:count ...``, where ``N`` is the
    number of ``id:count`` pairs (distinct words) and word ids are 0-based
    (``0 <= id < V``).  An empty document is the line ``0``.  Repeated ids in a
    line are summed; a document's tokens are ordered by word id.  Document names
    are the 0-based line indices.

    **A part of the file** (one host's share of a corpus read on several hosts,
    see :func:`gibbsjax.models.lda_shard.from_parts`): only the part's lines are
    parsed; the lines before it are counted (a byte scan for newlines, no
    parsing) so that documents keep their names, the 0-based line index, as in a
    whole-file read.  A part needs ``vocab_path`` (the vocabulary size must not
    depend on which documents a part holds); ``part`` needs an uncompressed file
    (``docs`` also reads ``.gz``, decompressing the lines before it).

    Parameters
    ----------
    path : str or path-like
        The LDA-C file (``.gz`` read through gzip).
    vocab_path : str or path-like, optional
        One word per line, line ``i + 1`` being word ``i``; without it the
        vocabulary is the ids as strings, ``V`` the largest id + 1.
    empty : {"drop", "error", "keep"}, default "drop"
        What to do with empty documents (of the part, for a part).
    docs : tuple of (int, int), optional
        ``(start, stop)``: read documents ``start .. stop - 1`` (0-based lines;
        ``stop`` past the end means to the end).
    part : tuple of (int, int), optional
        ``(i, n)``: the ``i``-th of ``n`` pieces of about equal size in bytes, cut
        at line starts (a line belongs to the piece holding its first byte), so
        the ``n`` parts hold every document exactly once, in order.

    Returns
    -------
    Corpus
        The documents read.

    Raises
    ------
    ValueError
        Naming the file and line for a malformed line, an ``N`` that disagrees
        with the pairs, a word id out of range, a negative count or a blank line
        (except at the end), a file that is not UTF-8 text, not a regular file,
        not readable or larger than the data limit (see :mod:`gibbsjax.reading`).
    FileNotFoundError
        For a missing file (also a ``ValueError``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "docs.ldac"
    >>> _ = p.write_text("2 0:2 2:1\n1 1:3\n")
    >>> c = read_ldac(p)
    >>> c.to_token_lists()
    [['0', '0', '2'], ['1', '1', '1']]
    >>> v = p.with_name("vocab.txt")
    >>> _ = v.write_text("a\nb\nc\n")
    >>> read_ldac(p, v, docs=(1, 2)).doc_names, read_ldac(p, v, part=(0, 2)).doc_names
    (('1',), ('0',))
    """
    check_empty(empty)
    path = Path(path)
    vocab = read_vocab(vocab_path) if vocab_path is not None else None
    V = None if vocab is None else len(vocab)
    first = 0  # the 0-based index of the first line read
    if docs is not None or part is not None:
        if vocab is None:
            raise ValueError("reading a part of an LDA-C file (docs= or part=) needs vocab_path: the vocabulary "
                             "size must be the same for every part, not the largest word id a part happens to hold")
        lines, first = _ldac_part_lines(path, docs, part)
    else:
        lines = reading.read_text(path, kind="data").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
    rows, cols, vals = [], [], []
    max_id = -1
    num_pairs = 0
    total, limit = 0, token_limit()
    for i, line in enumerate(lines, first + 1):
        m = _LDAC_LINE.fullmatch(line)
        if m is None:
            if not line.strip():
                raise ValueError(f"{path}, line {i}: blank line (an empty document is written '0')")
            parts = line.split()
            if not INT_RE.fullmatch(parts[0]):
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
            raise ValueError(f"{path}, line {i}: {too_many_tokens(total, limit)}")
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
    return apply_empty(corpus_from_matrix(M, vocab, doc_names=names), empty, where=f" in {path}")


def _ldac_part_lines(path: Path, docs, part) -> tuple[list[str], int]:
    """The lines of a part of an LDA-C file and the 0-based index of its first line; trailing
    blank lines dropped when nothing but white space follows them in the file."""
    which, (a, b) = which_part(docs, part)
    reading.check_file(path, kind="data", sized=False)  # the part is bounded below
    limit = reading.limit_for("data")
    gz = path.suffix == ".gz"
    if which == "part" and gz:
        raise ValueError(f"{path}: part=(i, n) splits a file by bytes and needs an uncompressed file "
                         "(decompress it, or give docs=(start, stop))")
    with reading.open_binary(path, kind="data", sized=False) as fh, reading.decode_errors(path):
        if which == "docs":
            fh = skip_lines(fh, a, path)
            first, raw, kept = a, [], 0
            for _ in range(b - a):
                line = fh.readline(limit - kept + 1)
                if not line:
                    break
                kept += len(line)
                if kept > limit:
                    raise reading.ReadError(f"{path}: documents {a}..{b - 1} take more than the "
                                            f"{reading.format_bytes(limit)} limit for a data file; set "
                                            "GIBBSJAX_MAX_DATA_BYTES to read them, or read fewer documents")
                raw.append(line)
            if not raw:
                raise ValueError(f"{path}: docs starts at document {a}, but the file has only {a} lines")
        else:
            size = path.stat().st_size
            lo = line_start_after(fh, size * a // b)
            hi = line_start_after(fh, size * (a + 1) // b)
            if hi - lo > limit:
                raise reading.ReadError(f"{path}: part {a} of {b} is {hi - lo} bytes, more than the "
                                        f"{reading.format_bytes(limit)} limit for a data file; set "
                                        "GIBBSJAX_MAX_DATA_BYTES to read it, or split the file into more parts")
            fh.seek(0)
            first = count_newlines(fh, lo)
            fh.seek(lo)
            raw = fh.read(hi - lo).splitlines(keepends=True)
        lines = []
        for j, x in enumerate(raw):
            try:
                if first + j == 0:
                    x = reading.strip_bom(x)  # the file's first line may start with a byte-order mark
                lines.append(x.decode("utf-8").rstrip("\r\n"))
            except UnicodeDecodeError as e:
                raise reading.ReadError(f"{path}, line {first + j + 1}: not valid utf-8 text "
                                        f"({e.reason})") from None
        if lines and not lines[-1].strip():
            # trailing blank lines end the file only when nothing but white space follows
            if blank_rest(fh):
                while lines and not lines[-1].strip():
                    lines.pop()
    return lines, first


def write_ldac(corpus: Corpus, path: PathLike, vocab_path: PathLike | None = None) -> None:
    r"""Write ``corpus`` in LDA-C format (see :func:`read_ldac`), and its vocabulary.

    One line per document, ``N id:count ...`` with ids ascending; empty
    documents are written ``0``.  Names and labels are not written.

    Parameters
    ----------
    corpus : Corpus
        The corpus to write.
    path : str or path-like
        The LDA-C file.
    vocab_path : str or path-like, optional
        Where to write the vocabulary, one word per line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> c = Corpus.from_token_lists([["b", "a", "b"], ["c"]])
    >>> write_ldac(c, d / "c.ldac", d / "vocab.txt")
    >>> (d / "c.ldac").read_text()
    '2 0:1 1:2\n1 2:1\n'
    >>> read_ldac(d / "c.ldac", d / "vocab.txt").to_dtm().toarray().tolist()
    [[1, 2, 0], [0, 0, 1]]
    """
    M = corpus.to_dtm()
    with open_text(Path(path), "w") as fh:
        for d in range(M.shape[0]):
            a, b = M.indptr[d], M.indptr[d + 1]
            pairs = " ".join(f"{w}:{n}" for w, n in zip(M.indices[a:b].tolist(), M.data[a:b].tolist()))
            fh.write(f"{b - a} {pairs}\n" if b > a else "0\n")
    if vocab_path is not None:
        write_vocab(corpus.vocab, vocab_path)
