"""Reading a config's ``[data]`` table: the helpers model specs share.

A model's ``make_data(section, base_dir)`` (see :class:`gibbsjax.spec.ModelSpec`)
turns the ``[data]`` table into validated data; these functions do the
common parts, all raising :class:`~gibbsjax.spec.ConfigError` naming the key:

* :func:`read_column`: one numeric column (``dataset`` / ``file`` / ``values``);
* :func:`read_columns`: one column or several (``columns = [...]``);
* :func:`read_corpus`: a text corpus (``corpus`` / ``file`` with ``format``);
* :func:`read_sequences`: sequences inline or from a generator data set;
* :func:`check_keys`, :func:`is_number`, :func:`all_numbers`: small checks.

Data sets are looked up in the one registry, :data:`gibbsjax.datasets.REGISTRY`.

>>> read_column({"values": [1, 2.5]}, Path("."))
array([1. , 2.5])
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gibbsjax import reading
from gibbsjax.spec import ConfigError

__all__ = [
    "read_column",
    "read_columns",
    "read_corpus",
    "read_sequences",
    "check_keys",
    "is_number",
    "all_numbers",
    "resolve_path",
]


def is_number(v: Any) -> bool:
    """An int or float that is not a bool.

    >>> is_number(1.5), is_number(True)
    (True, False)
    """
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def all_numbers(values: Any) -> bool:
    """Every leaf of nested lists is a number.

    >>> all_numbers([[1, 2], [3.5]]), all_numbers([1, "a"])
    (True, False)
    """
    if isinstance(values, list):
        return all(all_numbers(v) for v in values)
    return is_number(values)


def check_keys(section: Mapping[str, Any], allowed: tuple[str, ...], context: str = "") -> None:
    """Raise :class:`ConfigError` for a key of ``section`` not in ``allowed``.

    >>> check_keys({"corpus": "abc"}, ("corpus", "file"))
    """
    for key in section:
        if key not in allowed:
            where = f" {context}" if context else ""
            raise ConfigError(f"[data] unknown key {key!r}{where}; known keys: {', '.join(allowed)}")


def resolve_path(section: Mapping[str, Any], key: str, base_dir: Path) -> Path:
    """``section[key]`` as a path, relative paths resolved against ``base_dir``.

    >>> resolve_path({"file": "x.csv"}, "file", Path("/data"))
    PosixPath('/data/x.csv')
    """
    value = section[key]
    if not isinstance(value, str) or not value:
        raise ConfigError(f"[data] {key} must be a path (a string), got {value!r}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else base_dir / path


# ============================================================================ columns
_COLUMN_KEYS = ("dataset", "file", "values", "column")


def read_column(section: Mapping[str, Any], base_dir: Path) -> np.ndarray:
    """One numeric column from a ``[data]`` table with one of ``dataset``, ``file``, ``values``.

    * ``dataset = "name"`` and ``column = "col"``: a table shipped in
      :mod:`gibbsjax.datasets` (``available("table")``);
    * ``file = "path.csv"`` (relative to ``base_dir``) and ``column``: a CSV file
      with a header row (``column`` may be left out when the file has one column);
    * ``values = [...]``: inline numbers.

    >>> read_column({"dataset": "body_temperature", "column": "temperature_f"}, Path(".")).shape
    (130,)
    """
    unknown = [k for k in section if k not in _COLUMN_KEYS]
    if unknown:
        raise ConfigError(
            f"[data] unknown key {unknown[0]!r}; expected one of dataset, file, values (and column)"
        )
    sources = [k for k in ("dataset", "file", "values") if k in section]
    if len(sources) != 1:
        found = f"found {', '.join(sources)}" if sources else "found none"
        raise ConfigError(f"[data] needs exactly one of dataset, file, values ({found})")
    source = sources[0]
    column = section.get("column")
    if column is not None and not isinstance(column, str):
        raise ConfigError(f"[data] column must be a string, got {column!r}")

    if source == "values":
        if column is not None:
            raise ConfigError("[data] column goes with dataset or file, not with values")
        values = section["values"]
        if not isinstance(values, list) or not all(is_number(v) for v in values):
            raise ConfigError("[data] values must be a list of numbers")
        return np.asarray(values, dtype=np.float64)

    if source == "dataset":
        from gibbsjax import datasets

        name = section["dataset"]
        if not isinstance(name, str) or name not in datasets.REGISTRY["table"]:
            raise ConfigError(
                f"[data] unknown dataset {name!r}; available: {', '.join(datasets.available('table'))}"
            )
        table = datasets.load(name, "table")
        where = f"dataset {name!r}"
    else:
        path = resolve_path(section, "file", base_dir)
        table = _read_csv(path)
        where = f"file {str(path)!r}"

    if column is None:
        if len(table) != 1:
            raise ConfigError(f"[data] column is required: {where} has columns {', '.join(table)}")
        column = next(iter(table))
    if column not in table:
        raise ConfigError(f"[data] column {column!r} not in {where}; columns: {', '.join(table)}")
    return np.asarray(table[column], dtype=np.float64)


def read_columns(section: Mapping[str, Any], base_dir: Path) -> np.ndarray:
    """:func:`read_column`, or with ``columns = ["a", "b"]`` (with dataset or file)
    an (n, len(columns)) array of several columns.

    >>> read_columns({"dataset": "faithful", "columns": ["eruptions_min", "waiting_min"]}, Path(".")).shape
    (272, 2)
    """
    section = dict(section)
    columns = section.pop("columns", None)
    if columns is None:
        return read_column(section, base_dir)
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise ConfigError(f"[data] columns must be a non-empty list of column names, got {columns!r}")
    if "column" in section:
        raise ConfigError("[data] give column (univariate) or columns (diagonal), not both")
    return np.stack([read_column({**section, "column": c}, base_dir) for c in columns], axis=1)


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    """A CSV file's numeric columns (:func:`gibbsjax.reading.read_text`: a regular file within the
    data limit, UTF-8); :class:`ConfigError` naming the file otherwise."""
    import csv
    import io

    try:
        text = reading.read_text(path, kind="data", what="CSV file")
    except reading.ReadError as e:
        raise ConfigError(f"[data] {e}") from None
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r and any(c.strip() for c in r)]
    except csv.Error as e:
        raise ConfigError(f"[data] file {path}: not a CSV file ({e})") from None
    if not rows:
        raise ConfigError(f"[data] file {path} is empty")
    header, body = [h.strip() for h in rows[0]], rows[1:]
    columns: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        try:
            columns[name] = np.array([float(r[j]) for r in body], dtype=np.float64)
        except (ValueError, IndexError):
            raise ConfigError(
                f"[data] file {path}: column {j + 1} of {len(header)} has a missing or non-numeric value"
            ) from None
    return columns


# ============================================================================ corpora
_CORPUS_FORMATS = {"ldac": "read_ldac", "uci": "read_uci", "folder": "read_folder"}
_CORPUS_KEYS = ("corpus", "file", "format", "vocab", "token_pattern")


def read_corpus(section: Mapping[str, Any], base_dir: Path, extra_keys: tuple[str, ...] = (), *,
                part: tuple[int, int] | None = None):
    """The :class:`~gibbsjax.corpus.Corpus` a ``[data]`` table names.

    * ``corpus = "abc"`` / ``"stdlib_docs"``: a corpus shipped in
      :mod:`gibbsjax.datasets` (``available("corpus")``);
    * ``file = "path"`` with ``format = "ldac"`` / ``"uci"`` (and optionally
      ``vocab = "vocab.txt"``) or ``"folder"`` (one text file per document,
      labelled by sub-folder; ``token_pattern``, the regex of a word, default
      scikit-learn's), paths relative to ``base_dir``.

    Other keys than these and ``extra_keys`` raise :class:`ConfigError`.
    ``part=(i, n)``: only the ``i``-th of ``n`` parts of an ``ldac`` / ``uci`` file
    (one process's share, see :func:`gibbsjax.corpus.read_uci`).

    >>> read_corpus({"corpus": "abc"}, Path(".")).num_docs
    12
    """
    from gibbsjax import datasets

    check_keys(section, _CORPUS_KEYS + tuple(extra_keys))
    sources = [k for k in ("corpus", "file") if k in section]
    if len(sources) != 1:
        found = f"found {', '.join(sources)}" if sources else "found none"
        raise ConfigError(f"[data] needs exactly one of corpus, file ({found})")
    if "corpus" in section:
        name = section["corpus"]
        if not isinstance(name, str) or name not in datasets.REGISTRY["corpus"]:
            raise ConfigError(
                f"[data] unknown corpus {name!r}; available: {', '.join(datasets.available('corpus'))}"
            )
        for key in ("format", "vocab", "token_pattern"):
            if key in section:
                raise ConfigError(f"[data] {key} goes with file, not with corpus")
        if part is not None:
            raise ConfigError("[data] reading a part of the corpus on each process needs a file with format "
                              "ldac or uci, not a shipped corpus")
        return datasets.load(name, "corpus")
    fmt = section.get("format")
    if fmt not in _CORPUS_FORMATS:
        raise ConfigError(f"[data] format must be one of {', '.join(_CORPUS_FORMATS)} with file, got {fmt!r}")
    from gibbsjax import corpus as corpus_module

    path = resolve_path(section, "file", base_dir)
    if fmt != "folder" and path.is_dir():
        raise ConfigError(f"[data] file = {section['file']!r} is a folder ({path}), not a file in format {fmt}; "
                          "for a folder of text files give format = \"folder\"")
    reader = getattr(corpus_module, _CORPUS_FORMATS[fmt])
    try:
        if fmt == "folder":
            if "vocab" in section:
                raise ConfigError("[data] vocab goes with format ldac or uci, not folder")
            if part is not None:
                raise ConfigError("[data] reading a part of the corpus on each process needs format ldac or uci")
            from gibbsjax.corpus.text import TOKEN_PATTERN, check_token_pattern

            pattern = section.get("token_pattern", TOKEN_PATTERN)
            try:
                check_token_pattern(pattern)
            except ValueError as e:
                raise ConfigError(f"[data] {e}") from None
            return reader(path, labels_from="subfolder", token_pattern=pattern)
        if "token_pattern" in section:
            raise ConfigError(f"[data] token_pattern goes with format folder (texts), not {fmt}")
        vocab = resolve_path(section, "vocab", base_dir) if "vocab" in section else None
        if part is not None:
            return reader(path, vocab, part=part)
        return reader(path, vocab)
    except FileNotFoundError as e:  # a MissingFileError names the file (the corpus or its vocabulary)
        raise ConfigError(f"[data] {e}" if isinstance(e, reading.ReadError) else
                          f"[data] file not found: {e.filename or path}") from None
    except reading.ReadError as e:
        raise ConfigError(f"[data] {e}") from None


# ============================================================================ sequences
def read_sequences(section: Mapping[str, Any], base_dir: Path, *, allow_column: bool = False):
    """Sequences from a ``[data]`` table: ``sequences = [[...], ...]`` inline, a
    ``dataset`` of kind ``"sequences"`` (a generator; its own keys are passed
    to it), or, with ``allow_column``, one sequence read by :func:`read_column`.

    Returns ``(sequences, generated)`` where ``generated`` is the generator's
    dict (e.g. with ``num_symbols``) or ``None``.

    >>> seqs, _ = read_sequences({"sequences": [[0, 1], [1]]}, Path("."))
    >>> seqs
    [[0, 1], [1]]
    """
    from gibbsjax import datasets

    if "sequences" in section:
        seqs = section["sequences"]
        if not isinstance(seqs, list) or not all(isinstance(s, list) and all_numbers(s) for s in seqs):
            raise ConfigError("[data] sequences must be a list of lists of numbers, one list per sequence")
        check_keys(section, ("sequences",), "with sequences")
        return seqs, None
    name = section.get("dataset")
    if isinstance(name, str) and name in datasets.REGISTRY["sequences"]:
        rest = {k: v for k, v in section.items() if k != "dataset"}
        generator = datasets.REGISTRY["sequences"][name]
        known = list(inspect.signature(generator).parameters)
        check_keys(rest, tuple(known), f"for dataset {name!r}")
        generated = generator(**rest)
        return generated["sequences"], generated
    if allow_column:
        return [read_column(section, base_dir)], None
    if "dataset" in section:
        raise ConfigError(
            f"[data] unknown dataset {name!r}; available: {', '.join(datasets.available('sequences'))}"
        )
    raise ConfigError("[data] needs sequences (inline lists) or dataset (e.g. \"casino\")")
