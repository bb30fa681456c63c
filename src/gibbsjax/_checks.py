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

__all__ = ["check_int", "check_positive", "check_choice", "check_finite", "check_concentration", "hashable",
           "check_fits_dtype", "init_checker"]


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


def check_choice(name: str, value: Any, choices) -> str:
    """One of the strings ``choices``, else ``ValueError`` naming ``name`` and listing them.

    >>> check_choice("warmup", "fast", ("fast", "exact"))
    'fast'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


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


def check_fits_dtype(name: str, values: Any, dtype: Any) -> None:
    """``ValueError`` naming ``name`` when finite ``values`` overflow the floating ``dtype``.

    Data validated in float64 is stored in the working dtype (float32 unless
    x64 mode is on); a value beyond its range would become infinite there and
    every draw NaN.

    >>> check_fits_dtype("y", [1e39, 1.0], np.float64)
    >>> check_fits_dtype("y", [1e39, 1.0], np.float32)
    Traceback (most recent call last):
    ...
    ValueError: y has a value of magnitude 1e+39, beyond the float32 range (3.4e+38): rescale it, or run in float64 (JAX_ENABLE_X64=1)
    """
    arr = np.asarray(values, dtype=np.float64)
    limit = float(np.finfo(dtype).max)
    big = float(np.max(np.abs(arr), initial=0.0))
    if big > limit:
        raise ValueError(
            f"{name} has a value of magnitude {big:.3g}, beyond the {np.dtype(dtype).name} range "
            f"({limit:.2g}): rescale it, or run in float64 (JAX_ENABLE_X64=1)"
        )


def init_checker(*, positive: tuple[str, ...] = (), log_simplex: tuple[str, ...] = (),
                 labels: dict[str, int] | None = None):
    """A ``Kernel.check_init``: given initial values must lie in the state's support.

    ``positive`` fields must be > 0 (variances, precisions); ``log_simplex``
    fields hold log-probabilities along their last axis (``logsumexp == 0``,
    no NaN or +inf); ``labels`` maps integer fields to their number of values
    K (each in ``0..K-1``).  The check raises ``ValueError`` naming the field.

    >>> check = init_checker(positive=("sigma2",))
    >>> check({"sigma2": np.array([-0.1, 1.0])})
    Traceback (most recent call last):
    ...
    ValueError: init['sigma2'] must be > 0 (it is outside the support), got -0.1 (chain 0)
    """
    labels = dict(labels or {})

    def check(values: dict) -> None:
        for name in positive:
            if name in values:
                arr = np.asarray(values[name])
                bad = np.argwhere(~(arr > 0))
                if bad.size:
                    at = tuple(int(i) for i in bad[0])
                    raise ValueError(
                        f"init[{name!r}] must be > 0 (it is outside the support), got "
                        f"{float(arr[at]):g} (chain {at[0]})"
                    )
        for name in log_simplex:
            if name in values:
                arr = np.asarray(values[name], dtype=np.float64)
                if np.any(np.isnan(arr)) or np.any(arr == np.inf):
                    raise ValueError(f"init[{name!r}] holds log-probabilities: NaN and +inf are not allowed")
                m = np.max(arr, axis=-1, keepdims=True)
                total = np.squeeze(m, -1) + np.log(np.sum(np.exp(arr - m), axis=-1))
                off = np.argwhere(np.abs(total) > 1e-3)
                if off.size:
                    at = tuple(int(i) for i in off[0])
                    raise ValueError(
                        f"init[{name!r}] holds log-probabilities along its last axis, which must sum "
                        f"to 1 (a point on the simplex); the probabilities at {at} sum to "
                        f"{float(np.exp(total[at])):.4g}"
                    )
        for name, k in labels.items():
            if name in values:
                arr = np.asarray(values[name])
                bad = np.argwhere((arr < 0) | (arr >= k))
                if bad.size:
                    at = tuple(int(i) for i in bad[0])
                    raise ValueError(f"init[{name!r}] must hold values in 0..{k - 1}, got {int(arr[at])} at {at}")

    return check
