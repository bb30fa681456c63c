"""A folder of text files, one document per file (labels from sub-folder names): :func:`read_folder`."""

from __future__ import annotations

from pathlib import Path

from gibbsjax import reading
from gibbsjax.corpus.core import Corpus
from gibbsjax.corpus.files import PathLike

__all__ = ["read_folder"]


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

    Parameters
    ----------
    path : str or path-like
        The folder.
    pattern : str, default ``"*.txt"``
        The glob of the files to read.
    labels_from : {None, "subfolder"}, optional
        With ``"subfolder"``, files matching ``pattern`` at any depth are read and
        labelled by the top-level sub-folder they are in (label names: the
        sub-folder names, sorted); files directly in ``path`` get the unknown
        label ``-1`` (useful for semi-supervised models).
    encoding : str, default "utf-8"
        The files' text encoding.
    **from_texts_kwargs
        Passed to :meth:`Corpus.from_texts` (``stop_words``, ``min_count``,
        ``max_doc_freq``, ``empty``, ...).

    Returns
    -------
    Corpus
        One document per file.

    Raises
    ------
    FileNotFoundError
        For a missing folder (also a ``ValueError``).
    ValueError
        Naming the file: no matching files, a file that is not valid ``encoding``
        text, a matching entry that is not a regular file (a FIFO, a device, a
        broken link; matching folders are skipped), a file that cannot be read, or
        files adding up to more than the data limit (see :mod:`gibbsjax.reading`).

    Examples
    --------
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
    reading.check_folder(root, what="folder of text files")
    if labels_from not in (None, "subfolder"):
        raise ValueError(f"labels_from must be None or 'subfolder', got {labels_from!r}")
    if labels_from is not None and ("labels" in from_texts_kwargs or "label_names" in from_texts_kwargs):
        raise ValueError("pass either labels_from or labels / label_names, not both")
    if "doc_names" in from_texts_kwargs:
        raise ValueError("read_folder names documents by their files; doc_names cannot be given")
    found = root.rglob(pattern) if labels_from == "subfolder" else root.glob(pattern)
    files = sorted((p for p in found if not p.is_dir()), key=lambda p: p.relative_to(root).as_posix())
    if not files:
        raise ValueError(f"read_folder: no files match {pattern!r} in {root}")
    total = sum(reading.check_file(p, kind="data") for p in files)  # every one a regular file
    limit = reading.limit_for("data")
    if total > limit:
        raise reading.ReadError(f"{root}: the {len(files)} files matching {pattern!r} add up to {total} bytes, "
                                f"more than the {reading.format_bytes(limit)} limit for data; set "
                                "GIBBSJAX_MAX_DATA_BYTES to read them")
    texts, names, labels = [], [], []
    for p in files:
        texts.append(reading.read_text(p, kind="data", encoding=encoding))
        rel = p.relative_to(root)
        names.append(rel.as_posix())
        labels.append(rel.parts[0] if len(rel.parts) > 1 else None)
    if labels_from == "subfolder":
        if all(x is None for x in labels):
            raise ValueError(f"read_folder: labels_from='subfolder' but no file matching {pattern!r} "
                             f"is in a sub-folder of {root}")
        from_texts_kwargs["labels"] = labels
    return Corpus.from_texts(texts, doc_names=names, **from_texts_kwargs)
