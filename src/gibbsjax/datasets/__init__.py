"""Small real data sets shipped with gibbsjax (provenance in ``datasets/data/README.md``).

>>> from gibbsjax.datasets import body_temperature
>>> d = body_temperature()
>>> d["temperature_f"].shape
(130,)
"""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

from gibbsjax.datasets.corpora import STDLIB_GROUPS, abc_corpus, stdlib_docs
from gibbsjax.datasets.tabular import casino, faithful

__all__ = [
    "body_temperature",
    "faithful",
    "casino",
    "load_csv",
    "available",
    "load",
    "abc_corpus",
    "stdlib_docs",
    "STDLIB_GROUPS",
]

_FILES = {"body_temperature": "normtemp.csv", "faithful": "faithful.csv"}


def available() -> list[str]:
    """Names of the shipped data sets, as accepted by :func:`load`."""
    return sorted(_FILES)


def load_csv(filename: str) -> dict[str, np.ndarray]:
    """Read a shipped CSV file into a dict of float64 numpy columns."""
    path = resources.files("gibbsjax.datasets").joinpath("data", filename)
    with path.open("r", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    cols = np.array(body, dtype=np.float64).T
    return {name: cols[i] for i, name in enumerate(header)}


def body_temperature() -> dict[str, np.ndarray]:
    """Body temperature (°F), sex (1 male, 2 female) and heart rate of 130 healthy adults.

    Mackowiak, Wasserman & Levine (1992), JAMA 268(12):1578–1580, as reconstructed
    by Shoemaker (1996), J. Statistics Education 4(2).  Returns columns
    ``temperature_f``, ``sex``, ``heart_rate`` as numpy arrays (130 rows).

    >>> round(float(body_temperature()["temperature_f"].mean()), 3)
    98.249
    """
    return load_csv(_FILES["body_temperature"])


def load(name: str) -> dict[str, np.ndarray]:
    """Load a shipped data set by name (see :func:`available`)."""
    if name not in _FILES:
        raise ValueError(f"unknown data set {name!r}; available: {', '.join(available())}")
    return globals()[name]()
