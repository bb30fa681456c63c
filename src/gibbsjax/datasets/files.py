"""Reading the data files the package ships (``datasets/data/``); one layer below the loaders.

>>> sorted(load_csv("normtemp.csv"))
['heart_rate', 'sex', 'temperature_f']
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import numpy as np

from gibbsjax import reading

__all__ = ["load_csv"]


def load_csv(filename: str) -> dict[str, np.ndarray]:
    """Read a shipped CSV file into a dict of float64 numpy columns.

    The file is read through :func:`gibbsjax.reading.read_text` (a regular file
    within the data limit).

    Parameters
    ----------
    filename : str
        The file's name in ``gibbsjax/datasets/data``.

    Returns
    -------
    dict of str to numpy.ndarray
        One float64 column per header name.

    Examples
    --------
    >>> cols = load_csv("faithful.csv")
    >>> sorted(cols), cols["waiting_min"].shape, cols["waiting_min"].dtype
    (['eruptions_min', 'waiting_min'], (272,), dtype('float64'))
    """
    with resources.as_file(resources.files("gibbsjax.datasets").joinpath("data", filename)) as path:
        text = reading.read_text(path, kind="data", what="CSV file")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    cols = np.array(body, dtype=np.float64).T
    return {name: cols[i] for i, name in enumerate(header)}
