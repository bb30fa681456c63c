"""Argument checks shared by every layer: one ``ValueError`` wording, naming the argument.

>>> check_int("num_chains", 4, 1)
4
>>> check_positive("alpha", 0.5)
0.5
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["check_int", "check_positive", "check_finite", "check_concentration", "hashable"]


def check_int(name: str, value: Any, minimum: int) -> int:
    """An integer >= ``minimum`` (bools and floats refused), else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def _as_float(name: str, value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {what}, got {value!r}") from None


def check_positive(name: str, value: Any) -> float:
    """A positive finite number, else ``ValueError`` naming ``name``."""
    v = _as_float(name, value, "a positive number")
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def hashable(arr: np.ndarray) -> float | tuple:
    """A float for a 0-d array, nested tuples otherwise (so factories can be memoised).

    >>> hashable(np.array([[1.0, 2.0]]))
    ((1.0, 2.0),)
    """
    if arr.ndim == 0:
        return arr.item()
    return tuple(hashable(a) for a in arr)


def check_concentration(name: str, value: Any, shapes: tuple = ((),)) -> float | tuple:
    """Dirichlet (or Beta) concentrations: positive finite numbers of one of ``shapes``.

    ``()`` is a scalar; ``(K,)``, ``(K, K)`` fixed shapes; ``None`` in a shape
    any positive length (e.g. ``(None,)``: a vector whose length K is known
    only later, from the data).  Returns a float or nested tuples (hashable),
    else raises ``ValueError`` naming ``name``.

    >>> check_concentration("alpha", 0.5), check_concentration("alpha", [1, 2], ((), (None,)))
    (0.5, (1.0, 2.0))
    """
    if isinstance(value, (bool, np.bool_)) or isinstance(value, str):
        raise ValueError(f"{name} must be a positive number or an array of them, got {value!r}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number or an array of them, got {value!r}") from None
    fits = any(len(s) == arr.ndim and all(w is None and n > 0 or w == n for w, n in zip(s, arr.shape))
               for s in shapes)
    if not fits:
        want = " or ".join("a scalar" if s == () else "shape (" + ", ".join("K" if w is None else str(w) for w in s)
                           + ("," if len(s) == 1 else "") + ")" for s in shapes)
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    if arr.dtype == object or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} (a concentration) must be positive and finite, got {value!r}")
    return hashable(arr)


def check_finite(name: str, value: Any) -> float:
    """A finite number, else ``ValueError`` naming ``name``."""
    v = _as_float(name, value, "a finite number")
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v
