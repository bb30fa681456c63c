"""Reading the data files the package ships (``datasets/data/``); one layer below the loaders.

>>> sorted(load_csv("normtemp.csv"))
['heart_rate', 'sex', 'temperature_f']
"""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

__all__ = ["load_csv"]


def load_csv(filename: str) -> dict[str, np.ndarray]:
    """Read a shipped CSV file into a dict of float64 numpy columns."""
    path = resources.files("gibbsjax.datasets").joinpath("data", filename)
    with path.open("r", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    cols = np.array(body, dtype=np.float64).T
    return {name: cols[i] for i, name in enumerate(header)}
