"""Example discrete Bayesian networks with data (for :mod:`gibbsjax.models.bayes_net`).

Plain numpy / Python values (no model imports): each example is a
:class:`NetworkExample` of ``variables`` ((name, cardinality, parents) triples),
``rows`` (cases × variables, ``-1`` = missing), ``concentration``, ``tied``,
and, for simulated data, the ``truth`` (complete table) it was hidden from.

>>> ex = sprinkler()
>>> ex.rows.shape, int((ex.rows < 0).sum())
((100, 4), 80)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["NetworkExample", "abc", "sprinkler", "EXAMPLES"]


class NetworkExample(NamedTuple):
    """A Bayesian network example: its structure, data and prior.

    Parameters
    ----------
    variables : list of tuple
        ``(name, cardinality, parents)`` triples, parents before children.
    rows : numpy.ndarray
        Cases × variables, ``-1`` = missing.
    concentration : float or dict, default 1.0
        The Dirichlet concentration of the conditional probability tables (as
        :func:`gibbsjax.models.bayes_net.network` takes it).
    tied : dict of str to str, optional
        Variables that share the table of another: ``name -> owner name``.
    truth : numpy.ndarray, optional
        For simulated data, the complete table the missing entries were hidden from.
    description : str, default ""
        What the example is.

    Examples
    --------
    >>> from gibbsjax.datasets.networks import sprinkler
    >>> example = sprinkler(num_rows=10)
    >>> type(example).__name__, example._fields[:2]
    ('NetworkExample', ('variables', 'rows'))
    """
    variables: list
    rows: np.ndarray
    concentration: Any = 1.0
    tied: dict | None = None
    truth: np.ndarray | None = None
    description: str = ""


def abc() -> NetworkExample:
    """The a/b/c corpus of the CSE 5523 lecture notes 23 §23.3 as a network.

    Topic Z (2 values, never observed) → words X1, X2, X3 (a, b, c = 0, 1, 2),
    the three word slots tied to one CPT (the notes' single word distribution per
    topic); Dirichlet(1) priors as in the notes' code.

    Returns
    -------
    NetworkExample
        Twelve cases.

    Examples
    --------
    >>> ex = abc()
    >>> ex.rows.shape
    (12, 4)
    >>> ex.rows[:2].tolist()  # -1: Z is never observed
    [[-1, 0, 1, 0], [-1, 2, 1, 2]]
    """
    from gibbsjax.datasets.corpora import abc_corpus

    words = abc_corpus().tokens.reshape(-1, 3)
    rows = np.concatenate([np.full((words.shape[0], 1), -1), words], axis=1)
    variables = [("Z", 2, []), ("X1", 3, ["Z"]), ("X2", 3, ["Z"]), ("X3", 3, ["Z"])]
    return NetworkExample(variables, rows.astype(np.int64), 1.0, {"X2": "X1", "X3": "X1"}, None,
                          "a/b/c corpus (the CSE 5523 lecture notes 23 §23.3): Z -> X1, X2, X3 with tied word CPTs")


#: the classic sprinkler CPTs (Russell & Norvig; Murphy's BNT): P(C=1), P(S=1|C), P(R=1|C), P(W=1|S,R)
SPRINKLER_CPTS = {
    "Cloudy": [0.5],
    "Sprinkler": [0.5, 0.1],
    "Rain": [0.2, 0.8],
    "WetGrass": [0.0, 0.9, 0.9, 0.99],  # (S, R) = (0,0), (0,1), (1,0), (1,1)
}


def sprinkler(num_rows: int = 100, hide: float = 0.2, seed: int = 1988) -> NetworkExample:
    """The sprinkler network: Cloudy → Sprinkler, Rain; Sprinkler, Rain → WetGrass.

    All binary, 1 = true; cases simulated from the classic CPTs
    (:data:`SPRINKLER_CPTS`) with a fixed seed, then ``round(hide * size)``
    entries, chosen at random, hidden.

    Parameters
    ----------
    num_rows : int, default 100
        Number of cases.
    hide : float, default 0.2
        The fraction of entries hidden, in [0, 1).
    seed : int, default 1988
        The seed.

    Returns
    -------
    NetworkExample
        The cases, with the complete table as ``truth``.

    Examples
    --------
    >>> ex = sprinkler(num_rows=5, hide=0.0)
    >>> ex.rows.shape, int((ex.rows < 0).sum()), bool((ex.rows == ex.truth).all())
    ((5, 4), 0, True)
    """
    if isinstance(num_rows, bool) or not isinstance(num_rows, (int, np.integer)) or num_rows < 1:
        raise ValueError(f"num_rows must be a positive integer, got {num_rows!r}")
    if not isinstance(hide, (int, float)) or not 0.0 <= float(hide) < 1.0:
        raise ValueError(f"hide must be a fraction in [0, 1), got {hide!r}")
    rng = np.random.default_rng(seed)
    p = SPRINKLER_CPTS
    c = (rng.random(num_rows) < p["Cloudy"][0]).astype(int)
    s = (rng.random(num_rows) < np.take(p["Sprinkler"], c)).astype(int)
    r = (rng.random(num_rows) < np.take(p["Rain"], c)).astype(int)
    w = (rng.random(num_rows) < np.take(p["WetGrass"], 2 * s + r)).astype(int)
    truth = np.stack([c, s, r, w], axis=1)
    n = int(round(float(hide) * truth.size))
    hidden = rng.choice(truth.size, size=n, replace=False)
    rows = truth.copy().ravel()
    rows[hidden] = -1
    variables = [("Cloudy", 2, []), ("Sprinkler", 2, ["Cloudy"]), ("Rain", 2, ["Cloudy"]),
                 ("WetGrass", 2, ["Sprinkler", "Rain"])]
    return NetworkExample(variables, rows.reshape(truth.shape), 1.0, None, truth,
                          f"sprinkler network, {num_rows} simulated cases, {n} entries hidden (seed {seed})")


EXAMPLES = {"abc": abc, "sprinkler": sprinkler}
