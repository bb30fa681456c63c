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

__all__ = ["check_int", "check_positive", "check_finite"]


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


def check_finite(name: str, value: Any) -> float:
    """A finite number, else ``ValueError`` naming ``name``."""
    v = _as_float(name, value, "a finite number")
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v
