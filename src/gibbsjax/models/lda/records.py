"""What the LDA kernels record per draw beyond topic shares: which words' φ (``record_phi``) and which
documents' θ conditionals (``record_theta``), checked on the host and picked inside a traced function."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int

__all__ = ["check_recorded", "recorded_indices", "recorded_ids"]


def check_recorded(record_phi, record_theta) -> tuple:
    """``record_phi`` / ``record_theta`` of the kernel factories, checked, as hashable values.

    Parameters
    ----------
    record_phi, record_theta : None, "all", int or sequence of int
        Which words' φ and which documents' θ conditionals to record per draw: none, all, the
        M most frequent words (the first M documents), or the given ids.

    Returns
    -------
    tuple
        The two values, a sequence as a tuple of ints.

    Raises
    ------
    ValueError
        For a value of another kind, a negative, repeated or non-integer id, or an empty list.

    Examples
    --------
    >>> check_recorded([5, 2], "all")
    ((5, 2), 'all')
    """
    out = []
    for name, value, what in (("record_phi", record_phi, "word ids"), ("record_theta", record_theta,
                                                                     "document indices")):
        if value is None or value == "all":
            out.append(value)
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            out.append(check_int(name, value, 1))
        elif isinstance(value, (list, tuple, np.ndarray)) and not isinstance(value, str):
            ids = np.asarray(value)
            if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer) or np.any(ids < 0):
                raise ValueError(f"{name} must be a non-empty sequence of non-negative {what}, got {value!r}")
            if np.unique(ids).size != ids.size:
                raise ValueError(f"{name} has repeated {what}: {value!r}")
            out.append(tuple(int(i) for i in ids))
        else:
            raise ValueError(f"{name} must be None, 'all', a positive int or a sequence of {what}, got {value!r}")
    return tuple(out)


def recorded_indices(spec, counts, name: str = "record_phi") -> np.ndarray | None:
    """The word ids (``spec`` of ``record_phi``, ``counts`` the corpus's word counts)
    or document indices (``record_theta``, ``counts`` the document lengths) whose
    φ or θ a kernel records per draw, in increasing order; None when nothing is.
    An int M picks the M most frequent words (ties to the lower id) for φ, and
    the first M documents for θ.

    Parameters
    ----------
    spec : None, "all", int or sequence of int
        The ``record_phi`` or ``record_theta`` option.
    counts : array_like
        The corpus's word counts (``record_phi``) or document lengths (``record_theta``).
    name : {"record_phi", "record_theta"}, default "record_phi"
        Which option ``spec`` is.

    Returns
    -------
    numpy.ndarray or None
        The sorted indices; None when ``spec`` is None.

    Raises
    ------
    ValueError
        For an index out of range.

    Examples
    --------
    >>> recorded_indices(2, np.array([5, 1, 9, 5]))
    array([0, 2])
    >>> recorded_indices(2, np.array([5, 1, 9, 5]), "record_theta")
    array([0, 1])
    """
    if spec is None:
        return None
    counts = np.asarray(counts)
    n = counts.shape[0]
    if spec == "all":
        return np.arange(n)
    if isinstance(spec, int):
        if spec > n:
            what = "words" if name == "record_phi" else "documents"
            raise ValueError(f"{name}={spec}, but the corpus has only {n} {what}")
        if name == "record_phi":
            return np.sort(np.argsort(-counts.astype(np.int64), kind="stable")[:spec])
        return np.arange(spec)
    ids = np.asarray(spec, np.int64)
    if ids.max() >= n:
        what = "word id" if name == "record_phi" else "document index"
        raise ValueError(f"{name} has {what} {int(ids.max())}, but the corpus has only {n}")
    return np.sort(ids)


def recorded_ids(spec, counts, name: str):
    """:func:`recorded_indices` inside a traced function: the same ids from (possibly traced)
    ``counts``, whose length is static ("all", an int M: top M by a stable sort).

    Parameters
    ----------
    spec : "all", int or sequence of int
        As :func:`check_recorded` returns it.
    counts : jax.Array
        (n,): each word's (document's) count.
    name : {"record_phi", "record_theta"}
        Which option ``spec`` is (an int M picks the most frequent words, or the first documents).

    Returns
    -------
    jax.Array
        The recorded ids, sorted.

    Examples
    --------
    >>> recorded_ids(2, jnp.array([5, 1, 9, 5]), "record_phi").tolist()
    [0, 2]
    """
    n = counts.shape[0]
    if spec == "all":
        return jnp.arange(n)
    if isinstance(spec, int):
        recorded_indices(spec, np.zeros(n), name)  # the range check
        if name == "record_phi":
            return jnp.sort(jnp.argsort(-counts.astype(jnp.int32), stable=True)[:spec])
        return jnp.arange(spec)
    return jnp.asarray(recorded_indices(spec, np.zeros(n), name))
