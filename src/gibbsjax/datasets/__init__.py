"""Small real data sets shipped with gibbsjax (provenance in ``datasets/data/README.md``).

One registry, :data:`REGISTRY`, names every data set by kind: ``"table"`` (a
dict of numpy columns), ``"corpus"`` (a :class:`~gibbsjax.corpus.Corpus`),
``"sequences"`` (a generator of HMM sequences) and ``"network"`` (a Bayesian
network example).  :func:`available` lists them and :func:`load` loads one;
configs name them in their ``[data]`` table.

>>> available("corpus")
['abc', 'stdlib_docs']

>>> from gibbsjax.datasets import body_temperature
>>> d = body_temperature()
>>> d["temperature_f"].shape
(130,)
"""

from __future__ import annotations

import numpy as np

from gibbsjax.datasets import networks
from gibbsjax.datasets.files import load_csv
from gibbsjax.datasets.corpora import STDLIB_GROUPS, abc_corpus, stdlib_docs
from gibbsjax.datasets.tabular import casino, faithful

__all__ = [
    "body_temperature",
    "faithful",
    "casino",
    "load_csv",
    "available",
    "load",
    "REGISTRY",
    "KINDS",
    "abc_corpus",
    "stdlib_docs",
    "STDLIB_GROUPS",
]

_FILES = {"body_temperature": "normtemp.csv", "faithful": "faithful.csv"}
KINDS = ("table", "corpus", "sequences", "network")


def available(kind: str = "table") -> list[str]:
    """Names of the shipped data sets of one kind, as accepted by :func:`load`.

    Parameters
    ----------
    kind : {"table", "corpus", "sequences", "network"}, default "table"
        The kind of data set.

    Returns
    -------
    list of str
        The names, sorted.

    Examples
    --------
    >>> available()
    ['body_temperature', 'faithful']
    """
    if kind not in REGISTRY:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return sorted(REGISTRY[kind])


def body_temperature() -> dict[str, np.ndarray]:
    """Body temperature (°F), sex (1 male, 2 female) and heart rate of 130 healthy adults.

    Mackowiak, Wasserman & Levine (1992), JAMA 268(12):1578–1580, as reconstructed
    by Shoemaker (1996), J. Statistics Education 4(2).

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``temperature_f``, ``sex``, ``heart_rate`` (130 rows).

    Examples
    --------
    >>> round(float(body_temperature()["temperature_f"].mean()), 3)
    98.249
    """
    return load_csv(_FILES["body_temperature"])


def load(name: str, kind: str = "table", **kwargs):
    """Load a shipped data set by name (see :func:`available`).

    Parameters
    ----------
    name : str
        The data set's name.
    kind : {"table", "corpus", "sequences", "network"}, default "table"
        Its kind.
    **kwargs
        Passed to its loader (e.g. a generator's ``seed``).

    Returns
    -------
    object
        What the loader returns: a dict of columns, a :class:`~gibbsjax.corpus.Corpus`,
        a dict of sequences or a :class:`~gibbsjax.datasets.networks.NetworkExample`.

    Raises
    ------
    ValueError
        For an unknown kind or name.

    Examples
    --------
    >>> load("body_temperature")["temperature_f"].shape
    (130,)
    """
    names = available(kind)
    if name not in REGISTRY[kind]:
        raise ValueError(f"unknown {kind} data set {name!r}; available: {', '.join(names)}")
    return REGISTRY[kind][name](**kwargs)


#: every shipped data set, by kind, then name -> loader
REGISTRY = {
    "table": {"body_temperature": body_temperature, "faithful": faithful},
    "corpus": {"abc": abc_corpus, "stdlib_docs": stdlib_docs},
    "sequences": {"casino": casino},
    "network": dict(networks.EXAMPLES),
}
