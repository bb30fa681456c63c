"""Safe output: what gibbsjax may write, and writing it so that nothing is half done.

Every front door that writes a file (``gibbsjax run``, ``resume`` and ``plot``,
:meth:`gibbsjax.LDA.save`) goes through this module:

* :func:`check_output` -- before any sampling: the output is refused (a
  :class:`OutputError`, a ``ValueError``) when it is a file the job reads
  (:func:`config_inputs`: the config file, its data files, vocabulary; the same
  file under another name, a symbolic or a hard link, counts as the same) or lies
  inside a data folder it reads; when it exists and is not a regular file (a
  directory, a device such as ``/dev/null``, a fifo); or when it exists, is not
  empty and is not a file gibbsjax made (:func:`is_gibbsjax_result`,
  :func:`is_gibbsjax_plot`), unless ``force`` is given.  ``force`` never allows
  the first two.  A symbolic link is followed: the file it points to is what is
  checked and replaced, the link stays.
* :func:`write_atomic` / :func:`write_netcdf` -- write a temporary file beside
  the output, flush it to disk and rename it over the output (``os.replace``):
  an interrupted or failed write leaves the previous file as it was.  Ctrl-C and
  SIGTERM are held until the file is complete (a second signal stops at once);
  a held signal is raised after as :class:`SaveInterrupted`, which says whether
  the file was written.

A gibbsjax result is an HDF5 (NetCDF-4) file whose root group carries the
attribute ``gibbsjax_kernel``, which every run records (:func:`gibbsjax.run.sample`);
only the file's header is read to tell.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> precious = os.path.join(d, "notes.txt")
>>> _ = open(precious, "w").write("my notes")
>>> check_output(precious)
Traceback (most recent call last):
...
gibbsjax.outputs.OutputError: the output .../notes.txt exists and is not a gibbsjax result; ... --force to replace it
>>> check_output(os.path.join(d, "result.nc")).name
'result.nc'
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "OutputError",
    "SaveInterrupted",
    "HeldSignals",
    "check_output",
    "same_file",
    "config_inputs",
    "is_gibbsjax_result",
    "is_gibbsjax_plot",
    "plot_metadata",
    "write_atomic",
    "write_netcdf",
    "RESULT_MARK",
    "PLOT_MARK",
]

#: the root attribute every gibbsjax result carries (the kernel's name)
RESULT_MARK = "gibbsjax_kernel"
#: the text a gibbsjax plot carries in its metadata (PNG ``Software``; PDF, SVG, EPS, PS ``Creator``)
PLOT_MARK = "gibbsjax plot"

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_PLOT_MARK_KEYS = {"png": "Software", "pdf": "Creator", "svg": "Creator", "eps": "Creator", "ps": "Creator"}
_SCAN_BYTES = 1 << 16
#: [data] keys read as paths: these, and keys ending in one of the suffixes
_PATH_KEYS = ("file", "vocab")
_PATH_SUFFIXES = ("_file", "_path", "_folder", "_dir", "_vocab")


class OutputError(ValueError):
    """An output gibbsjax refuses to write (the message names it and says why).

    Examples
    --------
    >>> from gibbsjax.outputs import OutputError, check_output
    >>> try:
    ...     check_output('/dev/null', kind='result')
    ... except OutputError as error:
    ...     print(isinstance(error, ValueError))
    True
    """


class SaveInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM while a file was written: ``written`` says whether ``path``
    was written completely (the signal was held until then) or left as it was
    before (a second signal stopped the write); ``signal`` is the signal's name
    (None when not known).

    Examples
    --------
    >>> from gibbsjax.outputs import SaveInterrupted
    >>> issubclass(SaveInterrupted, KeyboardInterrupt)
    True
    """

    def __init__(self, path, written: bool, signal: str | None = None):
        self.path, self.written, self.signal = Path(path), bool(written), signal
        state = "was written completely" if written else "was not written (any earlier file there is unchanged)"
        super().__init__(f"interrupted ({signal or 'SIGINT'}) while saving: {path} {state}")


class HeldSignals:
    """A context that holds SIGINT and SIGTERM (in the main thread): the first is
    recorded (``caught``, its name) and acted on by the caller after the block; a
    second raises ``KeyboardInterrupt`` at once.  Elsewhere than the main thread it
    holds nothing.

    Examples
    --------
    >>> from gibbsjax.outputs import HeldSignals
    >>> with HeldSignals():
    ...     print('a signal now would wait until this block ends')
    a signal now would wait until this block ends
    """

    def __enter__(self):
        import signal
        import threading

        self.caught: str | None = None
        self._previous: dict = {}
        if threading.current_thread() is threading.main_thread():
            for name in ("SIGINT", "SIGTERM"):
                signum = getattr(signal, name, None)
                if signum is not None and signal.getsignal(signum) != signal.SIG_IGN:  # ignored stays ignored
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame):
        import signal

        if self.caught is not None:
            raise KeyboardInterrupt
        self.caught = signal.Signals(signum).name

    def __exit__(self, *exc):
        import signal

        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        return False


# ----------------------------------------------------------------------------- recognising our files
def _regular_size(path) -> int | None:
    """The size of ``path`` if it is a regular file (links followed), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def is_gibbsjax_result(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a result gibbsjax wrote: a regular HDF5 (NetCDF-4) file
    whose root group has the attribute ``gibbsjax_kernel``.  Reads the header only;
    False for anything else (missing, unreadable, not HDF5, another program's
    NetCDF), never an exception.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.nc")
    >>> _ = open(p, "wb").write(b"not a result")
    >>> is_gibbsjax_result(p), is_gibbsjax_result(os.path.dirname(p))
    (False, False)
    """
    if not _regular_size(path):
        return False
    try:
        with open(path, "rb") as f:
            if f.read(len(_HDF5_SIGNATURE)) != _HDF5_SIGNATURE:
                return False
        import h5py

        try:  # no HDF5 file lock: a file another process has open, or one on NFS, still reads
            f = h5py.File(path, "r", locking=False)
        except (TypeError, OSError):  # h5py < 3.5, or the file is open in this process with a lock
            f = h5py.File(path, "r")
        with f:
            return RESULT_MARK in f.attrs
    except Exception:  # h5py raises several kinds for a damaged file
        return False


def is_gibbsjax_plot(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an image ``gibbsjax plot`` drew: a regular file whose
    first or last 64 KiB hold the mark ``gibbsjax plot`` (:func:`plot_metadata`;
    PNG, PDF, SVG, EPS and PS carry it).  Never an exception.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "fig.png")
    >>> _ = open(p, "wb").write(b"a photo")
    >>> is_gibbsjax_plot(p)
    False
    """
    size = _regular_size(path)
    if not size:
        return False
    mark = PLOT_MARK.encode()
    try:
        with open(path, "rb") as f:
            if mark in f.read(_SCAN_BYTES):
                return True
            f.seek(max(0, size - _SCAN_BYTES))
            return mark in f.read(_SCAN_BYTES)
    except OSError:
        return False


def plot_metadata(fmt: str) -> dict[str, str] | None:
    """The metadata that marks an image in format ``fmt`` as a gibbsjax plot (for
    matplotlib's ``savefig(metadata=...)``), or None for a format without it.

    >>> plot_metadata("png"), plot_metadata("jpg")
    ({'Software': 'gibbsjax plot'}, None)
    """
    key = _PLOT_MARK_KEYS.get(fmt.lower())
    return None if key is None else {key: PLOT_MARK}


# ----------------------------------------------------------------------------- what a job reads
def config_inputs(config_path: str | os.PathLike | None, data_section: Mapping[str, Any] | None,
                  base_dir: str | os.PathLike | None = None) -> list[tuple[str, Path]]:
    """The files and folders a config reads, as ``(description, path)``: the config
    file, and the paths of its ``[data]`` table (keys ``file`` and ``vocab`` and
    keys ending in ``_file``, ``_path``, ``_folder``, ``_dir``, ``_vocab``; relative
    paths against ``base_dir``, by default the config's folder).

    >>> config_inputs("jobs/lda.toml", {"file": "docs.ldac", "format": "ldac", "vocab": "/data/v.txt"})
    [('the config file', PosixPath('jobs/lda.toml')), ('the [data] file', PosixPath('jobs/docs.ldac')), \
('the [data] vocab', PosixPath('/data/v.txt'))]
    """
    out: list[tuple[str, Path]] = []
    if config_path is not None:
        out.append(("the config file", Path(config_path)))
    if base_dir is None:
        base_dir = Path(config_path).parent if config_path is not None else Path(".")
    for key, value in (data_section or {}).items():
        if not (key in _PATH_KEYS or str(key).endswith(_PATH_SUFFIXES)):
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, str) and v:
                p = Path(v).expanduser()
                out.append((f"the [data] {key}", p if p.is_absolute() else Path(base_dir) / p))
    return out


# ----------------------------------------------------------------------------- the check
def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name the same file: the same path once symbolic links
    are resolved, or (both existing) the same file on disk (hard links,
    case-insensitive file systems).  Never an exception.

    >>> same_file("a/../b.nc", "b.nc")
    True
    """
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links, case-insensitive file systems
    except (OSError, ValueError):
        return False


def _inside(target: Path, folder: Path) -> bool:
    real = Path(os.path.realpath(folder))
    return Path(os.path.realpath(target)).is_relative_to(real) or any(
        same_file(parent, folder) for parent in target.parents if parent.exists())


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a fifo"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_output(path: str | os.PathLike, *, inputs: Iterable[tuple[str, str | os.PathLike] | str | os.PathLike] = (),
                 force: bool = False, kind: str = "result", force_hint: str = "--force") -> Path:
    """Check that ``path`` may take a file gibbsjax writes; returns the file to write
    (symbolic links followed).  Raises :class:`OutputError` (a ``ValueError``, one
    line naming the file) when ``path``

    * is one of ``inputs`` (paths or ``(description, path)``, e.g. :func:`config_inputs`)
      or lies inside one that is a folder -- even with ``force``;
    * exists and is not a regular file (directory, device, fifo, socket) -- even with ``force``;
    * exists, is not empty and is not a gibbsjax ``kind`` (``"result"``:
      :func:`is_gibbsjax_result`; ``"plot"``: :func:`is_gibbsjax_plot`), unless ``force``
      (``force_hint`` names the option in the message);
    * ends with a slash (a folder), or is in a folder that does not exist or cannot be written
      (a file is created and removed to tell).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> data = os.path.join(d, "docs.ldac")
    >>> _ = open(data, "w").write("1 0:1\\n")
    >>> check_output(data, inputs=[("the [data] file", data)], force=True)
    Traceback (most recent call last):
    ...
    gibbsjax.outputs.OutputError: the output .../docs.ldac is the [data] file itself (...): gibbsjax never replaces ...
    """
    recognise = {"result": is_gibbsjax_result, "plot": is_gibbsjax_plot}[kind]
    p = Path(path)
    if not str(path):
        raise OutputError("the output path is empty")
    if os.fspath(path).endswith(("/", os.sep)):
        raise OutputError(f"the output {os.fspath(path)} ends with {os.sep!r}, a folder; give a file name")
    target = Path(os.path.realpath(p))
    for item in inputs:
        label, inp = item if isinstance(item, tuple) else ("an input file", item)
        inp = Path(inp)
        if same_file(target, inp):
            raise OutputError(f"the output {p} is {label} itself ({inp}): gibbsjax never replaces a file it reads; "
                              "choose another output")
        if inp.is_dir() and _inside(target, inp):
            raise OutputError(f"the output {p} is inside {label} ({inp}), a folder the run reads: choose an output "
                              "outside it")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"cannot check the output {p}: {e.strerror or e}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(f"the output {p} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"the output {p} is {_kind_of(st.st_mode)}; gibbsjax writes only regular files, "
                              f"even with {force_hint}: choose another output")
        if st.st_size and not force and not recognise(target):
            raise OutputError(f"the output {p} exists and is not a gibbsjax {kind}; it is left as it is: choose "
                              f"another output, or pass {force_hint} to replace it")
    folder = target.parent
    if not folder.is_dir():
        raise OutputError(f"output folder does not exist: {p.parent}")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".check") as f:
            f.write(b"gibbsjax")
            f.flush()
    except OSError as e:
        raise OutputError(f"cannot write to {p.parent} ({e.strerror or e}): choose another output") from None
    return target


# ----------------------------------------------------------------------------- atomic writes
def _remove_stale(target: Path) -> None:
    """Remove the temporary files of saves of ``target`` that were killed (SIGKILL,
    power cut): ``.<name>.<pid>-<random>.partial`` whose process has ended, and
    ``.<name>.partial`` (the former name)."""
    prefix = f".{target.name}."
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".partial")]
    except OSError:
        return
    for name in names:
        middle = name[len(prefix):-len(".partial")]
        if middle:
            pid = middle.split("-", 1)[0]
            if not pid.isdigit() or _alive(int(pid)):
                continue
        try:
            os.unlink(target.parent / name)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # exists (another user's), or cannot tell: leave its file
    return True


def write_atomic(path: str | os.PathLike, write: Callable[[Path], Any]) -> None:
    """Call ``write(tmp)`` to write a temporary file beside ``path`` (a symbolic link
    is followed), flush it to disk and rename it over ``path``; the temporary file is
    removed whatever happens, and so are those of earlier saves that were killed.
    Signals are held meanwhile (:class:`HeldSignals`); one held, or a second
    stopping the write, comes out as :class:`SaveInterrupted`.
    Refuses (:class:`OutputError`) to replace anything but a regular file.  An
    existing file's permissions are kept.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> write_atomic(p, lambda tmp: tmp.write_text("hello"))
    >>> open(p).read()
    'hello'
    """
    target = Path(os.path.realpath(path))
    _remove_stale(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")
    written = False
    held = HeldSignals()
    try:
        try:
            with held:
                try:
                    st = os.stat(target)
                except FileNotFoundError:
                    st = None
                if st is not None and not stat.S_ISREG(st.st_mode):
                    raise OutputError(f"the output {path} is {_kind_of(st.st_mode)}; gibbsjax writes only regular "
                                      "files")
                write(tmp)
                with open(tmp, "rb+") as f:
                    os.fsync(f.fileno())
                if st is not None:
                    os.chmod(tmp, stat.S_IMODE(st.st_mode))
                os.replace(tmp, target)
                written = True
        except KeyboardInterrupt:
            raise SaveInterrupted(path, written, held.caught) from None
        if held.caught is not None:
            raise SaveInterrupted(path, True, held.caught)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass


def write_netcdf(idata, path: str | os.PathLike) -> None:
    """Write an ArviZ InferenceData to ``path`` as NetCDF with :func:`write_atomic`:
    an interrupted or failed write leaves the previous file, and no half file.

    >>> import os, tempfile, numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> p = os.path.join(tempfile.mkdtemp(), "r.nc")
    >>> write_netcdf(to_inference_data({"mu": np.zeros((2, 3))}, attrs={"gibbsjax_kernel": "demo"}), p)
    >>> is_gibbsjax_result(p)
    True
    """
    write_atomic(path, lambda tmp: idata.to_netcdf(str(tmp)))
