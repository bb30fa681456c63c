"""Reading the user's files, bounded and with clear errors: the one place every reader goes through.

Every file gibbsjax reads -- a config (TOML), a data file (LDA-C, UCI, a
vocabulary, the text files of a folder, a CSV column), a result (NetCDF) -- is
first checked by :func:`check_file`: it must exist, be a regular file (not a
folder, a device such as ``/dev/zero``, a FIFO or a socket) and be no larger
than a limit, read from ``stat`` (a sparse file is never read to learn its
size).  Then it is read with :func:`read_bytes` / :func:`read_text` /
:func:`open_binary` / :func:`open_text`, which name the file in a permission
error and in a decoding error (with the line, where it is known).  A UTF-8 file
may start with a byte-order mark (as spreadsheets save CSV files): the text
readers drop it, so that it never sticks to a first header, word or line.

A result is opened with :func:`open_result` (ArviZ's ``from_netcdf`` after the
same checks).  Every failure is a :class:`ReadError`, a ``ValueError`` whose message is one
line that starts with, or names, the file; the command line prints it and exits
with status 2.  A missing file raises :class:`MissingFileError`, which is both a
``ReadError`` and a ``FileNotFoundError``.

Limits (bytes; a file may be exactly as large):

* config files: :data:`CONFIG_LIMIT`, 16 MiB;
* data files: :data:`DATA_LIMIT`, 2 GiB, or the environment variable
  ``GIBBSJAX_MAX_DATA_BYTES`` (e.g. ``8GiB``, ``500MB``, ``3000000000``); for a
  ``.gz`` file the limit bounds the decompressed bytes; reading a part of a
  file (``docs=`` / ``part=``) bounds the bytes of the part;
* result files: :data:`RESULT_LIMIT`, 16 GiB, or ``GIBBSJAX_MAX_RESULT_BYTES``.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "words.txt"
>>> _ = p.write_bytes(b"apple\\nbanana\\n")
>>> read_text(p, kind="data").splitlines()
['apple', 'banana']
>>> check_file(p.parent, kind="data")
Traceback (most recent call last):
...
gibbsjax.reading.ReadError: ... is a folder, not a file (expected a data file)
>>> parse_bytes("2GiB")
2147483648
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "CONFIG_LIMIT",
    "DATA_LIMIT",
    "RESULT_LIMIT",
    "ReadError",
    "MissingFileError",
    "check_file",
    "check_folder",
    "limit_for",
    "parse_bytes",
    "format_bytes",
    "read_bytes",
    "read_text",
    "strip_bom",
    "open_binary",
    "open_text",
    "decode_errors",
    "open_result",
]

#: the largest config file read (bytes)
CONFIG_LIMIT = 16 * 2**20
#: the default largest data file read (bytes): ``GIBBSJAX_MAX_DATA_BYTES`` overrides it
DATA_LIMIT = 2 * 2**30
#: the default largest result file read (bytes): ``GIBBSJAX_MAX_RESULT_BYTES`` overrides it
RESULT_LIMIT = 16 * 2**30

_ENV = {"data": "GIBBSJAX_MAX_DATA_BYTES", "result": "GIBBSJAX_MAX_RESULT_BYTES"}
_WHAT = {"config": "config file", "data": "data file", "result": "result file"}


class ReadError(ValueError):
    """A file that cannot be read: missing, not a regular file, too large, not
    readable, or not valid text; the message (one line) names the file.

    Examples
    --------
    >>> from gibbsjax.reading import ReadError, read_text
    >>> try:
    ...     read_text('/', kind='config')
    ... except ReadError as error:
    ...     print(isinstance(error, ValueError))
    True
    """


class MissingFileError(ReadError, FileNotFoundError):
    """A file or folder that does not exist (a :class:`ReadError` and a ``FileNotFoundError``).

    Examples
    --------
    >>> from gibbsjax.reading import MissingFileError, read_text
    >>> try:
    ...     read_text('no-such-file.toml', kind='config')
    ... except MissingFileError as error:
    ...     print(isinstance(error, FileNotFoundError))
    True
    """


# ---------------------------------------------------------------------- limits
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 10**3, "kib": 2**10, "m": 2**20, "mb": 10**6, "mib": 2**20,
          "g": 2**30, "gb": 10**9, "gib": 2**30, "t": 2**40, "tb": 10**12, "tib": 2**40}


def parse_bytes(text: str) -> int:
    """A size such as ``"3000000"``, ``"500MB"``, ``"8GiB"`` or ``"8G"`` (K, M, G, T: powers of 1024) in bytes.

    >>> parse_bytes("500MB"), parse_bytes("1k"), parse_bytes("7")
    (500000000, 1024, 7)
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
    if m is None or m.group(2).lower() not in _UNITS:
        raise ValueError(f"expected a size in bytes such as 3000000, 500MB or 8GiB, got {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def format_bytes(n: int) -> str:
    """``n`` bytes for a message.

    >>> format_bytes(16 * 2**20), format_bytes(2 * 2**30), format_bytes(100)
    ('16 MiB', '2 GiB', '100 bytes')
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def limit_for(kind: str) -> int:
    """The largest file of ``kind`` (``"config"``, ``"data"`` or ``"result"``) read, in bytes:
    the module's limit, or for data and results the environment variable that overrides it.

    >>> limit_for("config") == CONFIG_LIMIT
    True
    """
    if kind == "config":
        return CONFIG_LIMIT
    if kind not in _ENV:
        raise ValueError(f"kind must be 'config', 'data' or 'result', got {kind!r}")
    text = os.environ.get(_ENV[kind], "").strip()
    if not text:
        return DATA_LIMIT if kind == "data" else RESULT_LIMIT
    try:
        return parse_bytes(text)
    except ValueError as e:
        raise ReadError(f"environment variable {_ENV[kind]}: {e}") from None


def _too_large(path, size: int, kind: str, limit: int, what: str | None = None) -> ReadError:
    how = f"; set {_ENV[kind]} (e.g. {_ENV[kind]}=64GiB) to read it" if kind in _ENV else ""
    exact = "" if size < 2**10 else f" ({size} bytes)"
    return ReadError(f"{path}: {what or 'the file'} is {format_bytes(size)}{exact}, more than the "
                     f"{format_bytes(limit)} limit for a {_WHAT[kind]}{how}")


# ---------------------------------------------------------------------- checks
_KINDS_OF_FILE = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                  (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS_OF_FILE if test(mode)), "not a regular file")


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise MissingFileError(f"{what} not found: {path} (a link to a missing file)") from None
        raise MissingFileError(f"{what} not found: {path}") from None
    except PermissionError:
        raise ReadError(f"cannot read {path}: permission denied (a folder on its path cannot be searched)") from None
    except OSError as e:
        raise ReadError(f"cannot read {path}: {e.strerror or e}") from None


def check_file(path, *, kind: str = "data", what: str | None = None, sized: bool = True) -> int:
    """Check that ``path`` is a regular file no larger than :func:`limit_for` ``(kind)``; its size.

    ``what`` names the file in the messages (default: ``"config file"``,
    ``"data file"``, ``"result file"``).  Raises :class:`MissingFileError` for a
    missing file, :class:`ReadError` for a folder, a device, a FIFO, a socket
    or a file over the limit (the size comes from ``stat``: nothing is read).
    ``sized=False`` leaves out the size check, for a caller that reads a part of
    the file and bounds the part itself.
    """
    path = Path(path)
    what = what or _WHAT[kind]
    st = _stat(path, what)
    other = _not_regular(st.st_mode)
    if other == "a folder":
        raise ReadError(f"{path} is a folder, not a file (expected a {what})")
    if other is not None:
        raise ReadError(f"{path} is {other}, not a regular file (expected a {what})")
    limit = limit_for(kind)
    if sized and st.st_size > limit:
        raise _too_large(path, st.st_size, kind, limit)
    return st.st_size


def check_folder(path, *, what: str = "folder") -> Path:
    """Check that ``path`` is a folder whose entries can be listed; ``MissingFileError`` /
    :class:`ReadError` naming it otherwise.

    >>> import tempfile
    >>> check_folder(tempfile.gettempdir()).is_dir()
    True
    """
    path = Path(path)
    st = _stat(path, what)
    if not stat.S_ISDIR(st.st_mode):
        raise ReadError(f"{path} is not a folder (expected a {what})")
    try:
        with os.scandir(path):
            pass
    except PermissionError:
        raise ReadError(f"cannot read the {what} {path}: permission denied") from None
    except OSError as e:
        raise ReadError(f"cannot read the {what} {path}: {e.strerror or e}") from None
    return path


# ---------------------------------------------------------------------- reading
def _open_checked(path: Path):
    try:
        fh = open(path, "rb")  # noqa: SIM115 (returned open)
    except PermissionError:
        raise ReadError(f"cannot read {path}: permission denied") from None
    except FileNotFoundError:
        raise MissingFileError(f"file not found: {path}") from None
    except OSError as e:
        raise ReadError(f"cannot read {path}: {e.strerror or e}") from None
    other = _not_regular(os.fstat(fh.fileno()).st_mode)  # replaced after the check: still no device
    if other is not None:
        fh.close()
        raise ReadError(f"{path} is {other}, not a regular file")
    return fh


class _Capped(io.RawIOBase):
    """The decompressed bytes of a gzip stream, a :class:`ReadError` past ``limit`` of them."""

    def __init__(self, raw, path: Path, kind: str, limit: int):
        self.raw, self.path, self.kind, self.limit, self.count = raw, path, kind, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            n = self.raw.readinto(b)
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise ReadError(f"{self.path}: not a readable gzip file ({e})") from None
        self.count += n
        if self.count > self.limit:
            raise _too_large(self.path, self.count, self.kind, self.limit, "the decompressed text (at least)")
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_binary(path, *, kind: str = "data", sized: bool = True, what: str | None = None):
    """``path`` opened for reading bytes after :func:`check_file`; a ``.gz`` file through gzip.

    With ``sized`` (the default) the file's size, and the decompressed bytes of
    a ``.gz`` file, are bounded by the limit (:class:`ReadError` once past it);
    ``sized=False`` is for a caller that reads a part of the file, or only scans
    it (counts lines), and bounds what it keeps itself.  The file must be closed
    by the caller (``with``).
    """
    path = Path(path)
    check_file(path, kind=kind, what=what, sized=sized)
    fh = _open_checked(path)
    if path.suffix != ".gz":
        return fh
    stream = gzip.GzipFile(fileobj=fh, mode="rb")
    if not sized:
        return _ClosingGzip(stream, fh)
    return io.BufferedReader(_Capped(_ClosingGzip(stream, fh), path, kind, limit_for(kind)))


class _ClosingGzip(io.BufferedIOBase):
    """A gzip stream that closes its file with it."""

    def __init__(self, stream, fh):
        self.stream, self.fh = stream, fh

    def readable(self) -> bool:
        return True

    def read(self, n=-1):
        return self.stream.read(n)

    def read1(self, n=-1):
        return self.stream.read1(n)

    def readinto(self, b):
        return self.stream.readinto(b)

    def readline(self, size=-1):
        return self.stream.readline(size)

    def close(self) -> None:
        try:
            self.stream.close()
        finally:
            self.fh.close()
            super().close()


def read_bytes(path, *, kind: str = "data", what: str | None = None) -> bytes:
    """The bytes of ``path`` (decompressed for ``.gz``), within the limit of ``kind``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.bin"
    >>> _ = p.write_bytes(b"abc")
    >>> read_bytes(p)
    b'abc'
    """
    path = Path(path)
    limit = limit_for(kind)
    with open_binary(path, kind=kind, what=what) as fh:
        try:
            data = fh.read(limit + 1)  # a file that grew after the check is still bounded
        except EOFError as e:
            raise ReadError(f"{path}: not a readable gzip file ({e})") from None
        except OSError as e:
            raise ReadError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > limit:
        raise _too_large(path, len(data), kind, limit, "the file (at least)")
    return data


def _decode_message(path, data: bytes | None, e: UnicodeDecodeError, encoding: str) -> str:
    newline = b"\n"
    where = "" if data is None else f", line {data[: e.start].count(newline) + 1}"
    bad = e.object[e.start:e.start + 1] if isinstance(e.object, bytes) else b""
    byte = f"byte 0x{bad.hex()}: " if bad else ""
    return f"{path}{where}: not valid {encoding} text ({byte}{e.reason})"


def _is_utf8(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def strip_bom(data: bytes, encoding: str = "utf-8") -> bytes:
    """``data`` without a leading UTF-8 byte-order mark when ``encoding`` is UTF-8 (other
    encodings' codecs, such as ``utf-16``, handle their own).

    >>> strip_bom(b"\\xef\\xbb\\xbfyear,temperature")
    b'year,temperature'
    """
    if _is_utf8(encoding) and data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8):]
    return data


def read_text(path, *, kind: str = "data", encoding: str = "utf-8", what: str | None = None) -> str:
    """The text of ``path`` (:func:`read_bytes`, decoded); a decoding error names the file and line.

    Line ends are kept as in the file (``str.splitlines`` splits any of them); a
    leading UTF-8 byte-order mark is dropped (:func:`strip_bom`).
    """
    data = strip_bom(read_bytes(path, kind=kind, what=what), encoding)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise ReadError(_decode_message(path, data, e, encoding)) from None


def open_text(path, *, kind: str = "data", encoding: str = "utf-8", what: str | None = None, sized: bool = True):
    """``path`` opened as text (:func:`open_binary`, universal newlines; a leading UTF-8
    byte-order mark dropped).

    A decoding error happens while the caller reads; wrap the reading in
    :func:`decode_errors` so that it names the file.

    Parameters
    ----------
    path : str or os.PathLike
        The file (gzip when the name ends in ``.gz``, as :func:`open_binary`).
    kind : str, default "data"
        The size limit that applies (:func:`limit_for`): ``"data"``, ``"config"`` or ``"result"``.
    encoding : str, default "utf-8"
        The text encoding.
    what : str, optional
        What the file is, for error messages (default: "file").
    sized : bool, default True
        Bound the file's size (and a ``.gz`` file's decompressed bytes) by the
        limit; ``False`` for a caller that reads only a part of the file and
        bounds what it keeps itself.

    Returns
    -------
    io.TextIOWrapper
        The open file (use it in a ``with`` block).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> _ = (Path(tmp.name) / "a.txt").write_bytes(b"one\\r\\ntwo\\n")
    >>> with open_text(Path(tmp.name) / "a.txt") as fh, decode_errors(Path(tmp.name) / "a.txt"):
    ...     fh.read().splitlines()
    ['one', 'two']
    >>> tmp.cleanup()
    """
    codec = "utf-8-sig" if _is_utf8(encoding) else encoding  # reads a leading mark as nothing
    return io.TextIOWrapper(open_binary(path, kind=kind, what=what, sized=sized), encoding=codec, newline=None)


@contextmanager
def decode_errors(path, encoding: str = "utf-8"):
    """Turn a ``UnicodeDecodeError`` (and an ``OSError`` of reading) raised inside the block into a
    :class:`ReadError` naming ``path``.

    >>> with decode_errors("x.txt"):
    ...     b"\\xff".decode("utf-8")
    Traceback (most recent call last):
    ...
    gibbsjax.reading.ReadError: x.txt: not valid utf-8 text (byte 0xff: invalid start byte)
    """
    try:
        yield
    except UnicodeDecodeError as e:
        raise ReadError(_decode_message(path, None, e, encoding)) from None
    except (ReadError, FileNotFoundError):
        raise
    except EOFError as e:
        raise ReadError(f"{path}: not a readable gzip file ({e})") from None
    except OSError as e:
        raise ReadError(f"cannot read {path}: {e.strerror or e}") from None


def _one_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def open_result(path, *, eager: bool = False):
    """The ArviZ ``InferenceData`` a NetCDF result file holds, after :func:`check_file` (kind ``"result"``).

    ``eager`` reads every group into memory now (otherwise ArviZ's default,
    lazily).  A file that is missing, not a regular file, larger than the
    result limit, not readable, or not NetCDF (a text file, a truncated file)
    raises :class:`ReadError` (:class:`MissingFileError` when missing) naming it.
    """
    path = Path(path)
    check_file(path, kind="result")
    with _open_checked(path) as f:  # a permission error names the file
        head = f.read(8)
    if not (head.startswith(b"\x89HDF\r\n\x1a\n") or head.startswith(b"CDF")):
        hint = (" (a config: run it with `gibbsjax run`, then pass the .nc file it writes)"
                if path.suffix.lower() == ".toml" else "")
        raise ReadError(f"cannot read {path} as an ArviZ NetCDF result: it is not a NetCDF file (it does not "
                        f"start with the NetCDF/HDF5 signature){hint}")
    import arviz as az

    try:
        if eager:
            with az.rc_context({"data.load": "eager"}):
                return az.from_netcdf(str(path))
        return az.from_netcdf(str(path))
    except Exception as e:  # h5py / xarray raise many kinds (OSError, KeyError, ValueError) for a bad file
        raise ReadError(f"cannot read {path} as an ArviZ NetCDF result: {_one_line(e)}") from None
