"""Text files the corpus formats share: opening (gzip for ``.gz``), vocabulary files
(one word per line), and locating a part of a file (newlines counted, lines skipped,
line starts after a byte offset) so that only the part's lines are parsed.

Every file is read through :mod:`gibbsjax.reading`: it must be a regular file
within the data limit (2 GiB by default, ``GIBBSJAX_MAX_DATA_BYTES``), and a
missing, unreadable or non-UTF-8 file raises a ``ValueError`` naming it
(``FileNotFoundError`` too for a missing one).
"""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gibbsjax import reading

__all__ = [
    "PathLike",
    "INT_RE",
    "open_text",
    "read_vocab",
    "write_vocab",
    "which_part",
    "count_newlines",
    "skip_lines",
    "line_start_after",
    "blank_rest",
]

PathLike = str | os.PathLike


# ---------------------------------------------------------------------- files
def open_text(path: Path, mode: str = "r"):
    """Open a text file (UTF-8), through gzip when the name ends in ``.gz``.

    For reading, the file is checked and bounded by :func:`gibbsjax.reading.open_text`
    (wrap the reading in :func:`gibbsjax.reading.decode_errors` to name the file in
    a decoding error).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    mode : str, default "r"
        ``"r"`` to read; ``"w"`` (or another mode of :func:`open`) to write, with
        ``"\\n"`` line ends.

    Returns
    -------
    io.TextIOBase
        The open file, for a ``with`` block.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with open_text(Path(tmp.name) / "words.txt.gz", "w") as fh:
    ...     _ = fh.write("a b\\n")
    >>> with open_text(Path(tmp.name) / "words.txt.gz") as fh:
    ...     fh.read()
    'a b\\n'
    >>> tmp.cleanup()
    """
    if mode == "r":
        return reading.open_text(path, kind="data")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, mode + "b"), encoding="utf-8", newline=None)
    return open(path, mode, encoding="utf-8", newline=None if mode == "r" else "\n")


def read_vocab(path: PathLike) -> tuple[str, ...]:
    """A vocabulary file: one word per line (the line without surrounding white space).

    Blank lines at the end are ignored; a blank line elsewhere or a repeated
    word raises ``ValueError`` with the line number.

    Parameters
    ----------
    path : str or os.PathLike
        The file (UTF-8; gzip when the name ends in ``.gz``).

    Returns
    -------
    tuple of str
        The words, in the file's order (word id = position).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> _ = (Path(tmp.name) / "vocab.txt").write_text("apple\\nbond\\n\\n")
    >>> read_vocab(Path(tmp.name) / "vocab.txt")
    ('apple', 'bond')
    >>> tmp.cleanup()
    """
    path = Path(path)
    lines = reading.read_text(path, kind="data", what="vocabulary file").splitlines()
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


def write_vocab(vocab: Sequence[str], path: PathLike) -> None:
    """Write a vocabulary file: one word per line (:func:`read_vocab` reads it back).

    Parameters
    ----------
    vocab : sequence of str
        The words; none may be blank, have surrounding white space or a line break
        (``ValueError`` naming the word).
    path : str or os.PathLike
        The file to write (gzip when the name ends in ``.gz``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> write_vocab(["apple", "bond"], Path(tmp.name) / "vocab.txt")
    >>> (Path(tmp.name) / "vocab.txt").read_text()
    'apple\\nbond\\n'
    >>> write_vocab([" apple"], Path(tmp.name) / "bad.txt")
    Traceback (most recent call last):
    ...
    ValueError: word ' apple' cannot be written to a one-word-per-line vocabulary file
    >>> tmp.cleanup()
    """
    for w in vocab:
        if not w.strip() or w != w.strip() or "\n" in w or "\r" in w:
            raise ValueError(f"word {w!r} cannot be written to a one-word-per-line vocabulary file")
    with open_text(Path(path), "w") as fh:
        fh.writelines(w + "\n" for w in vocab)


#: an integer as the text formats write it
INT_RE = re.compile(r"-?\d+")


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


def which_part(docs, part) -> tuple[str, tuple[int, int]]:
    """Which part of a file a reader reads: a range of documents or the i-th of n pieces.

    Parameters
    ----------
    docs : tuple of int or None
        ``(start, stop)``: the documents to read.
    part : tuple of int or None
        ``(i, n)``: the i-th of n pieces of the file of about equal size.

    Returns
    -------
    tuple
        ``("docs", (start, stop))`` or ``("part", (i, n))``.

    Raises
    ------
    ValueError
        When both are given, or one is not a valid range.

    Examples
    --------
    >>> which_part(None, (0, 2))
    ('part', (0, 2))
    """
    if docs is not None and part is not None:
        raise ValueError("give docs=(start, stop) or part=(i, n), not both")
    return ("docs", _check_range("docs", docs)) if docs is not None else ("part", _check_range("part", part))


def count_newlines(fh, nbytes: int | None) -> int:
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


def skip_lines(fh, n: int, path: Path):
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

    def readline(self, size: int = -1) -> bytes:
        """The next line, or its first ``size`` bytes (``size >= 0``)."""
        i = self.head.find(b"\n")
        cut = i + 1 if i >= 0 else None
        if size >= 0 and (cut is None or cut > size) and len(self.head) >= size:
            line, self.head = self.head[:size], self.head[size:]
            return line
        if cut is not None:
            line, self.head = self.head[:cut], self.head[cut:]
            return line
        rest = self.fh.readline(-1 if size < 0 else size - len(self.head))
        line, self.head = self.head + rest, b""
        return line

    def read(self, n: int) -> bytes:
        if self.head:
            out, self.head = self.head[:n], self.head[n:]
            return out
        return self.fh.read(n)


def line_start_after(fh, offset: int) -> int:
    """The byte offset of the first line starting at or after ``offset`` (seekable binary ``fh``)."""
    if offset == 0:
        return 0
    fh.seek(offset - 1)
    at = offset - 1
    while True:  # the rest of the line holding byte offset - 1, read in blocks (a line may be huge)
        block = fh.read(_SCAN_BLOCK)
        if not block:
            return fh.tell()
        i = block.find(b"\n")
        if i >= 0:
            fh.seek(at + i + 1)
            return at + i + 1
        at += len(block)


def blank_rest(fh) -> bool:
    """Whether what is left to read of ``fh`` is all white space."""
    while True:
        block = fh.read(_SCAN_BLOCK)
        if not block:
            return True
        if block.strip():
            return False
