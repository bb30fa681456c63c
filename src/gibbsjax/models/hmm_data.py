"""The hidden Markov models' data: sequences of different lengths padded to one length, with their
``lengths`` (:func:`categorical_data`, :func:`gaussian_data`; :func:`step_mask` marks the real steps).
Used by :mod:`gibbsjax.models.hmm`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import conjugate_normal as cn
from gibbsjax._checks import check_int
from gibbsjax._checks import as_numbers, check_fits_dtype


__all__ = ["CategoricalHMMData", "GaussianHMMData", "categorical_data", "gaussian_data", "step_mask"]


class CategoricalHMMData(NamedTuple):
    """Padded symbol sequences, as :func:`categorical_data` builds them.

    Parameters
    ----------
    y : jax.Array
        (S, T) int32: the symbols, 0 at padding.
    lengths : jax.Array
        (S,) int32: the length of every sequence.
    symbol_counts : jax.Array
        (V,) int32: how often each symbol occurs; its length is the alphabet size V.

    Examples
    --------
    >>> from gibbsjax.models import hmm
    >>> d = hmm.categorical_data([[0, 1, 1, 2], [2, 2, 0]])
    >>> type(d).__name__
    'CategoricalHMMData'
    """

    y: jax.Array
    lengths: jax.Array
    symbol_counts: jax.Array


class GaussianHMMData(NamedTuple):
    """Padded real sequences, as :func:`gaussian_data` builds them.

    Parameters
    ----------
    y : jax.Array
        (S, T) float observations, 0 at padding.
    lengths : jax.Array
        As in :class:`CategoricalHMMData`.
    center : jax.Array
        (1,): the mean of all observations (frozen reference of the data-scaled
        default hyperparameters).
    scale2 : jax.Array
        (1,): the variance of all observations (likewise).

    Examples
    --------
    >>> from gibbsjax.models import hmm
    >>> d = hmm.gaussian_data([[0.1, 0.3, 2.5], [2.2, 0.0]])
    >>> type(d).__name__
    'GaussianHMMData'
    """

    y: jax.Array
    lengths: jax.Array
    center: jax.Array
    scale2: jax.Array


def step_mask(lengths, num_steps):
    """(S, T) bool: True at the real steps t < ``lengths[s]`` of each sequence, False at padding.

    Parameters
    ----------
    lengths : jax.Array
        The length of each of the S sequences.
    num_steps : int
        T, the padded length.

    Returns
    -------
    jax.Array
        The (S, T) mask.

    Examples
    --------
    >>> step_mask(jnp.array([2, 3]), 3).tolist()
    [[True, True, False], [True, True, True]]
    """
    return jnp.arange(num_steps)[None, :] < lengths[:, None]


def _as_sequences(sequences) -> list[np.ndarray]:
    """A list of 1-D float64 arrays from a list of sequences, one 1-D sequence or a 2-D array (rows)."""
    if isinstance(sequences, (str, bytes)) or sequences is None:
        raise ValueError(f"sequences must be a list of 1-D sequences, got {sequences!r}")
    if isinstance(sequences, (np.ndarray, jax.Array)):
        arr = np.asarray(sequences)
        if arr.ndim == 1:
            items = [arr]
        elif arr.ndim == 2:
            items = list(arr)
        else:
            raise ValueError(f"sequences given as an array must be 1-D or 2-D (rows), got shape {arr.shape}")
    else:
        try:
            items = list(sequences)
        except TypeError:
            raise ValueError(f"sequences must be a list of 1-D sequences, got {type(sequences).__name__}") from None
        if items and all(np.ndim(v) == 0 and not isinstance(v, (str, bytes)) for v in items):
            items = [items]  # a single sequence of numbers
    if not items:
        raise ValueError("sequences is empty: at least one sequence is needed")
    out = []
    for i, seq in enumerate(items):
        arr = as_numbers(f"sequence {i}", seq, "a 1-D array of numbers")  # strings and bools refused
        if arr.ndim != 1:
            raise ValueError(f"sequence {i} must be 1-D, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"sequence {i} is empty (length 0): every sequence needs at least one step")
        if not np.all(np.isfinite(arr)):
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ValueError(f"sequence {i} contains NaN or infinite values (first at position {bad})")
        out.append(arr)
    return out


def _pad(seqs: list[np.ndarray], pad_to, dtype) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(s) for s in seqs], dtype=np.int32)
    longest = int(lengths.max())
    if pad_to is None:
        num_steps = longest
    else:
        num_steps = check_int("pad_to", pad_to, 1)
        if num_steps < longest:
            raise ValueError(f"pad_to ({num_steps}) is shorter than the longest sequence ({longest})")
    y = np.zeros((len(seqs), num_steps), dtype=dtype)
    for i, s in enumerate(seqs):
        y[i, : len(s)] = s
    return y, lengths


def categorical_data(sequences, num_symbols: int | None = None, *, pad_to: int | None = None) -> CategoricalHMMData:
    """Validate symbol sequences (integers 0..V-1) for :func:`categorical`.

    Parameters
    ----------
    sequences : list of array_like or array_like
        A list of 1-D integer sequences (lengths may differ), one 1-D sequence,
        or a 2-D array with one sequence per row.
    num_symbols : int, optional
        The alphabet size V (default: largest symbol + 1).
    pad_to : int, optional
        The common padded length (default: the longest sequence).

    Returns
    -------
    CategoricalHMMData
        The padded sequences, their lengths and symbol counts.

    Raises
    ------
    ValueError
        For no sequences, an empty sequence, NaN, non-integer or out-of-alphabet
        symbols, or ``pad_to`` shorter than the longest sequence.

    Examples
    --------
    >>> d = categorical_data([[0, 1, 1], [2]], num_symbols=3)
    >>> d.y.tolist(), d.lengths.tolist(), d.symbol_counts.tolist()
    ([[0, 1, 1], [2, 0, 0]], [3, 1], [1, 2, 1])
    """
    seqs = _as_sequences(sequences)
    if num_symbols is not None:
        num_symbols = check_int("num_symbols", num_symbols, 1)
    for i, s in enumerate(seqs):
        frac = np.flatnonzero(s != np.round(s))
        if frac.size:
            raise ValueError(f"sequence {i} has a non-integer symbol {s[frac[0]]!r} at position {int(frac[0])}")
        neg = np.flatnonzero(s < 0)
        if neg.size:
            raise ValueError(
                f"sequence {i} has symbol {int(s[neg[0]])} at position {int(neg[0])}, outside the "
                "alphabet: symbols must be integers 0..num_symbols-1"
            )
        if num_symbols is not None:
            big = np.flatnonzero(s >= num_symbols)
            if big.size:
                raise ValueError(
                    f"sequence {i} has symbol {int(s[big[0]])} at position {int(big[0])}, outside the "
                    f"alphabet 0..{num_symbols - 1} (num_symbols={num_symbols})"
                )
    if num_symbols is None:
        num_symbols = int(max(s.max() for s in seqs)) + 1
    y, lengths = _pad(seqs, pad_to, np.int32)
    symbol_counts = np.bincount(np.concatenate(seqs).astype(np.int64), minlength=num_symbols).astype(np.int32)
    return CategoricalHMMData(jnp.asarray(y), jnp.asarray(lengths), jnp.asarray(symbol_counts))


def gaussian_data(sequences, *, pad_to: int | None = None) -> GaussianHMMData:
    """Validate real-valued sequences for :func:`gaussian` (same layout as :func:`categorical_data`).

    Parameters
    ----------
    sequences : list of array_like or array_like
        A list of 1-D real sequences (lengths may differ), one 1-D sequence, or a
        2-D array with one sequence per row.
    pad_to : int, optional
        The common padded length (default: the longest sequence).

    Returns
    -------
    GaussianHMMData
        The padded sequences, their lengths and the mean and variance of all observations.

    Raises
    ------
    ValueError
        For no sequences, an empty sequence, NaN or infinite values, or ``pad_to``
        shorter than the longest sequence.

    Examples
    --------
    >>> d = gaussian_data([[0.5, 1.5], [2.0]])
    >>> d.y.shape, d.lengths.tolist()
    ((2, 2), [2, 1])
    """
    seqs = _as_sequences(sequences)
    dtype = jnp.zeros(()).dtype  # float64 under enable_x64, else float32
    y, lengths = _pad(seqs, pad_to, np.float64)
    center, var = cn.reference_scale(np.concatenate(seqs)[:, None])
    check_fits_dtype("sequences", y, dtype)
    check_fits_dtype("the sequences' variance", var, dtype)
    return GaussianHMMData(
        jnp.asarray(y, dtype), jnp.asarray(lengths), jnp.asarray(center, dtype), jnp.asarray(var, dtype)
    )
