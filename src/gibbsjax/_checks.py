"""Argument checks shared by every layer: one ``ValueError`` wording, naming the argument.

Hyperparameters are checked against the floating dtype of the run
(:func:`working_dtype`: float32, or float64 in JAX's x64 mode) before anything
is compiled: :func:`check_values` and the checks built on it
(:func:`check_positive`, :func:`check_finite`, :func:`check_concentration`).
Seeds: :func:`check_seed`.

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
           "check_fits_dtype", "init_checker", "labels_checker", "first_where", "first_repeated", "fields_of", "working_dtype",
           "safe_range", "check_values", "check_seed", "as_numbers",
           "SEED_LIMIT"]

#: seeds are integers in [0, SEED_LIMIT): ``jax.random.key`` keeps only the low 32 bits of
#: a seed unless x64 mode is on, so seeds that differ by 2**32 would give identical draws
SEED_LIMIT = 2**32


def check_int(name: str, value: Any, minimum: int) -> int:
    """An integer >= ``minimum`` (bools and floats refused), else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_seed(name: str, value: Any) -> int:
    """A seed as :func:`gibbsjax.sample` takes it: an integer in [0, 2**32) (bools,
    floats and strings refused), else ``ValueError`` naming ``name``.

    >>> check_seed("seed", 7)
    7
    >>> check_seed("seed", 2**40)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 2**32), got 1099511627776: the key holds 32 bits of a seed, so larger seeds would repeat the draws of smaller ones
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0 (and < 2**32), got {value!r}")
    if value >= SEED_LIMIT:
        raise ValueError(f"{name} must be an integer in [0, 2**32), got {value}: the key holds 32 bits of a "
                         "seed, so larger seeds would repeat the draws of smaller ones")
    return int(value)


def working_dtype() -> np.dtype:
    """The floating dtype runs compute in: float64 when JAX's x64 mode is on
    (``jax.config.jax_enable_x64``, e.g. ``JAX_ENABLE_X64=1``), else float32.

    >>> working_dtype() in (np.dtype("float32"), np.dtype("float64"))
    True
    """
    import jax  # here, not at import: the readers import this module without needing JAX

    return np.dtype(np.float64 if jax.config.jax_enable_x64 else np.float32)


def safe_range(dtype: Any = None) -> tuple[float, float]:
    """``(lo, hi) = (sqrt(tiny), 1/sqrt(tiny))`` of ``dtype`` (default :func:`working_dtype`).

    The positive numbers v in it are those for which v, 1/v, v² and 1/v² are all
    normal, finite numbers of the dtype: the squares, reciprocals and products a
    sampler forms from a hyperparameter neither overflow to inf nor underflow
    to 0 (float32: [2**-63, 2**63] ≈ [1.1e-19, 9.2e18]; float64: [2**-511, 2**511]).

    >>> safe_range(np.float32) == (2.0**-63, 2.0**63)
    True
    """
    tiny = float(np.finfo(working_dtype() if dtype is None else dtype).tiny)
    lo = math.sqrt(tiny)
    return lo, 1.0 / lo


def as_numbers(name: str, value: Any, what: str = "a number or an array of numbers") -> np.ndarray:
    """``value`` as a float64 array; strings, bools, None and other non-numbers are
    refused (``ValueError`` naming ``name``: ``"98.6"`` is text, not a number).

    >>> as_numbers("y", [98.6, 99]).tolist()
    [98.6, 99.0]
    >>> as_numbers("y", ["98.6", 99])
    Traceback (most recent call last):
    ...
    ValueError: y must be a number or an array of numbers, got '98.6' (at index 0)
    """
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raw = None
    if raw is not None and raw.dtype.kind in "iuf":
        if isinstance(value, (list, tuple)) and raw.size:  # numpy reads [True, 1.0] as [1.0, 1.0]
            items = np.asarray(value, dtype=object).reshape(-1)
            flags = np.fromiter((isinstance(v, (bool, np.bool_)) for v in items), bool, items.size)
            if flags.any():
                i = int(np.argmax(flags))
                raise ValueError(f"{name} must be {what}, got {items[i]!r} (at index "
                                 f"{', '.join(str(int(j)) for j in np.unravel_index(i, raw.shape))})")
        return raw.astype(np.float64)
    # "b" bools, "U"/"S" strings, "O" objects (None, ragged or mixed lists): name the first non-number
    if raw is not None and raw.ndim > 0 and raw.dtype.kind != "b":
        items = np.asarray(value, dtype=object)
        for i, v in enumerate(items.reshape(-1).tolist()):
            if isinstance(v, (bool, np.bool_, str, bytes)) or not isinstance(v, (int, float, np.integer, np.floating)):
                at = np.unravel_index(i, items.shape)
                raise ValueError(f"{name} must be {what}, got {v!r} (at index {', '.join(str(int(j)) for j in at)})")
    text = repr(value)
    raise ValueError(f"{name} must be {what}, got {text if len(text) <= 80 else type(value).__name__}")


def check_values(name: str, value: Any, kind: str = "positive", dtype: Any = None) -> np.ndarray:
    """Hyperparameter values (a number or an array) a run in ``dtype`` can use, as float64.

    ``kind``: ``"positive"``, each value in :func:`safe_range` (a concentration,
    a scale, a shape or a rate); ``"nonnegative"``, the same or 0 (an improper
    limit some factories allow); ``"real"``, a location: finite with
    ``|v| <= hi`` (so that v² is finite).  ``dtype``: the run's floating dtype
    (default :func:`working_dtype`).  Strings and bools are not numbers.
    ``ValueError`` naming ``name`` (with the element of an array), the value and
    the dtype.

    >>> check_values("alpha", [0.5, 2.0]).tolist()
    [0.5, 2.0]
    >>> check_values("alpha", 1e39, dtype=np.float32)
    Traceback (most recent call last):
    ...
    ValueError: alpha = 1e+39 is outside [1.1e-19, 9.2e+18], the range in which a float32 run can use it (the value, its reciprocal and their squares must be normal float32 numbers); run in float64 (JAX_ENABLE_X64=1) for a wider range
    """
    arr = as_numbers(name, value, ("a number" if kind == "real" else "a positive number") + " or an array of them")
    dtype = np.dtype(working_dtype() if dtype is None else dtype)
    lo, hi = safe_range(dtype)
    with np.errstate(invalid="ignore"):
        usable = np.abs(arr) <= hi if kind == "real" else (arr >= lo) & (arr <= hi) | ((arr == 0) & (kind != "positive"))
    if np.all(usable):
        return arr
    at = tuple(int(j) for j in np.argwhere(~usable)[0])
    where = name if arr.ndim == 0 else f"{name}[{', '.join(map(str, at))}]"
    v = float(arr[at])
    if not math.isfinite(v):
        raise ValueError(f"{where} must be finite, got {v!r}")
    if kind == "real":
        raise ValueError(f"{where} = {v:g} is beyond ±{hi:.2g}, the range in which a {dtype.name} run can "
                         f"use it (its square must be a finite {dtype.name} number)" + _wider(v, kind, dtype))
    if v < 0 or v == 0:
        raise ValueError(f"{where} must be positive, got {v:g}")
    raise ValueError(f"{where} = {v:g} is outside [{lo:.2g}, {hi:.2g}], the range in which a {dtype.name} "
                     f"run can use it (the value, its reciprocal and their squares must be normal "
                     f"{dtype.name} numbers)" + _wider(v, kind, dtype))


def _wider(v: float, kind: str, dtype: np.dtype) -> str:
    """A hint to run in float64 when that would accept ``v``."""
    if dtype == np.float64:
        return ""
    lo, hi = safe_range(np.float64)
    fits = abs(v) <= hi if kind == "real" else lo <= v <= hi
    return "; run in float64 (JAX_ENABLE_X64=1) for a wider range" if fits else ""


def _scalar(name: str, value: Any, what: str) -> Any:
    """``value`` unless it is an array or a sequence (one number is wanted)."""
    if not isinstance(value, str) and np.ndim(value) != 0:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return value


def check_positive(name: str, value: Any, dtype: Any = None) -> float:
    """A positive number a run in ``dtype`` can use (:func:`check_values`), else ``ValueError`` naming ``name``."""
    return float(check_values(name, as_numbers(name, _scalar(name, value, "a positive number"), "a positive number"),
                              "positive", dtype))


def check_finite(name: str, value: Any, dtype: Any = None) -> float:
    """A finite number (a location) a run in ``dtype`` can use (:func:`check_values`, ``"real"``),
    else ``ValueError`` naming ``name``."""
    return float(check_values(name, as_numbers(name, _scalar(name, value, "a finite number"), "a finite number"),
                              "real", dtype))


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


def check_concentration(name: str, value: Any, shapes: tuple = ((),), dtype: Any = None) -> float | tuple:
    """Dirichlet (or Beta) concentrations: positive finite numbers of one of ``shapes``.

    ``()`` is a scalar; ``(K,)``, ``(K, K)`` fixed shapes; ``None`` in a shape
    any positive length (e.g. ``(None,)``: a vector whose length K is known
    only later, from the data).  Each value must be one a run in ``dtype`` can
    use (:func:`check_values`; default the working dtype).  Returns a float or
    nested tuples (hashable), else raises ``ValueError`` naming ``name``.

    >>> check_concentration("alpha", 0.5), check_concentration("alpha", [1, 2], ((), (None,)))
    (0.5, (1.0, 2.0))
    """
    arr = as_numbers(name, value, "a positive number or an array of them")
    fits = any(len(s) == arr.ndim and all(w is None and n > 0 or w == n for w, n in zip(s, arr.shape))
               for s in shapes)
    if not fits:
        want = " or ".join("a scalar" if s == () else "shape (" + ", ".join("K" if w is None else str(w) for w in s)
                           + ("," if len(s) == 1 else "") + ")" for s in shapes)
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    return hashable(check_values(name, arr, "positive", dtype))


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


def first_where(arr: np.ndarray, test, block: int = 2**22) -> tuple[int, ...] | None:
    """The index of the first entry (row-major) where ``test`` is true, or None.

    ``test`` maps a block of ``arr`` (leading-axis slices, about ``block`` elements) to a
    boolean array of the block's shape, or of its shape without the last axis (a test of
    whole rows); blocks keep the memory of the test bounded for a state of many chains.

    >>> first_where(np.array([[1.0, 2.0], [3.0, np.nan]]), np.isnan)
    (1, 1)
    """
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return () if bool(test(arr)) else None
    per = max(1, block // max(1, arr[0].size))
    for start in range(0, arr.shape[0], per):
        hit = np.argwhere(test(arr[start:start + per]))
        if len(hit) and hit.shape[1] == 0:  # a test of the whole row of a 1-D array
            return ()
        if hit.size:
            return (int(hit[0][0]) + start, *(int(i) for i in hit[0][1:]))
    return None


def first_repeated(items) -> tuple[Any, int, int] | None:
    """The first item of ``items`` that was seen before, with the positions of its first and
    second occurrence, or None when all differ (for a message naming a repeated word).

    >>> first_repeated(["cat", "dog", "cat"]), first_repeated("ab")
    (('cat', 0, 2), None)
    """
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        if item in seen:
            return item, seen[item], i
        seen[item] = i
    return None


def init_checker(*, positive: tuple[str, ...] = (), log_simplex: tuple[str, ...] = (),
                 labels: dict[str, int] | None = None, log_probability: tuple[str, ...] = (),
                 log_positive: tuple[str, ...] = ()):
    """A ``Kernel.check_init``: given initial values must lie in the state's support.

    ``positive`` fields must be > 0 (variances, precisions); ``log_simplex``
    fields hold log-probabilities along their last axis (``logsumexp == 0``,
    no NaN or +inf); ``labels`` maps integer fields to their number of values
    K (each in ``0..K-1``); ``log_probability`` fields hold logs of single
    probabilities (each <= 0); ``log_positive`` fields hold logs of positive
    hyperparameters (a learned concentration), whose exponentials must lie in
    :func:`safe_range` of the working dtype.  The check raises ``ValueError``
    naming the field as ``label(field)`` (default ``init['field']``; a resumed
    run names the saved variable, ``sampler_state 'state__field'``) and the
    first bad entry.

    >>> check = init_checker(positive=("sigma2",))
    >>> check({"sigma2": np.array([-0.1, 1.0])})
    Traceback (most recent call last):
    ...
    ValueError: init['sigma2'] must be > 0 (it is outside the support), got -0.1 (chain 0)
    >>> check({"sigma2": np.array([1.0, 0.0])}, label=lambda f: f"sampler_state 'state__{f}'")
    Traceback (most recent call last):
    ...
    ValueError: sampler_state 'state__sigma2' must be > 0 (it is outside the support), got 0 (chain 1)
    """
    labels = dict(labels or {})

    def log_sum(block):
        block = block.astype(np.float64)
        m = np.max(block, axis=-1, keepdims=True)
        return np.squeeze(m, -1) + np.log(np.sum(np.exp(block - m), axis=-1))

    def check(values: dict, label=None) -> None:
        def named(field: str) -> str:
            return f"init[{field!r}]" if label is None else label(field)

        for name in positive:
            if name in values:
                arr = np.asarray(values[name])
                at = first_where(arr, lambda b: ~(b > 0))
                if at is not None:
                    raise ValueError(f"{named(name)} must be > 0 (it is outside the support), got "
                                     f"{float(arr[at]):g} (chain {at[0]})")
        for name in log_simplex:
            if name in values:
                arr = np.asarray(values[name])
                at = first_where(arr, lambda b: np.isnan(b) | (b == np.inf))
                if at is not None:
                    raise ValueError(f"{named(name)} holds log-probabilities: NaN and +inf are not allowed, got "
                                     f"{float(arr[at])} at {at}")
                at = first_where(arr, lambda b: np.abs(log_sum(b)) > 1e-3)
                if at is not None:
                    raise ValueError(
                        f"{named(name)} holds log-probabilities along its last axis, which must sum "
                        f"to 1 (a point on the simplex); the probabilities at {at} sum to "
                        f"{float(np.exp(log_sum(arr[at]))):.4g}"
                    )
        for name in log_probability:
            if name in values:
                arr = np.asarray(values[name])
                at = first_where(arr, lambda b: ~(b <= 0))
                if at is not None:
                    raise ValueError(f"{named(name)} holds log-probabilities, each <= 0, got {float(arr[at]):g} "
                                     f"at {at}")
        for name in log_positive:
            if name in values:
                arr = np.asarray(values[name])
                lo, hi = (math.log(x) for x in safe_range())  # (of the working dtype now)
                at = first_where(arr, lambda b: ~((b >= lo) & (b <= hi)))
                if at is not None:
                    raise ValueError(f"{named(name)} holds logs of a concentration, each in [{lo:.4g}, "
                                     f"{hi:.4g}] (see safe_range), got {float(arr[at]):g} at {at}")
        for name, k in labels.items():
            if name in values:
                arr = np.asarray(values[name])
                at = first_where(arr, lambda b: (b < 0) | (b >= k))
                if at is not None:
                    raise ValueError(f"{named(name)} must hold values in 0..{k - 1}, got {int(arr[at])} at {at}")

    return check


def fields_of(state) -> dict:
    """The fields of a state (a NamedTuple or a dict) as a dict of numpy arrays."""
    items = state._asdict() if hasattr(state, "_asdict") else dict(state)
    return {k: np.asarray(v) for k, v in items.items()}


def labels_checker(**fields):
    """A ``Kernel.check_state`` for integer fields whose number of values the data set:
    ``labels_checker(z=num_classes)`` checks that ``z`` holds values in ``0..K-1`` with
    ``K = num_classes(data)`` (as :func:`init_checker`'s ``labels``; the message names the
    field by ``label`` and the first bad entry).

    >>> check = labels_checker(z=lambda data: data["K"])
    >>> check({"z": np.array([[0, 1], [3, 0]])}, {"K": 2})
    Traceback (most recent call last):
    ...
    ValueError: init['z'] must hold values in 0..1, got 3 at (1, 0)
    """
    def check_state(state, data, label=None) -> None:
        init_checker(labels={name: int(k(data)) for name, k in fields.items()})(fields_of(state), label=label)

    return check_state

