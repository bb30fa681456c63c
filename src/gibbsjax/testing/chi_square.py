"""Pearson's chi-square test of a discrete state's frequencies against exact probabilities
(:func:`chi_square_test`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy import stats



class ChiSquareResult(NamedTuple):
    """Pearson chi-square statistic, degrees of freedom and p-value.

    Parameters
    ----------
    statistic : float
        Pearson's statistic.
    dof : int
        Degrees of freedom.
    p_value : float
        The upper-tail p-value.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.testing import chi_square_test
    >>> result = chi_square_test(np.array([48, 52]), np.array([0.5, 0.5]))
    >>> type(result).__name__, result.dof
    ('ChiSquareResult', 1)
    """

    statistic: float
    dof: int
    p_value: float


def chi_square_test(counts: Any, probs: Any, *, min_expected: float = 5.0) -> ChiSquareResult:
    """Pearson chi-square test of observed state counts against exact probabilities.

    Bins whose expected count ``n * probs[i]`` is below ``min_expected`` are
    pooled into one bin; if that bin is itself below ``min_expected`` it is
    merged with the smallest remaining bin.  A visit to a state of probability
    zero gives ``statistic=inf, p_value=0``.

    The chi-square distribution of the statistic assumes *independent* draws.
    With MCMC, take the counts from independent chains (e.g. the last state of
    each of many independent chains, vmapped), not from all draws of one
    autocorrelated chain, which would make the test far too liberal.

    Parameters
    ----------
    counts : array_like
        ``counts[i]`` is how often state ``i`` was seen (flattened).
    probs : array_like
        ``probs[i]`` its exact probability (same shape).
    min_expected : float, default 5.0
        The smallest expected count of a bin before pooling.

    Returns
    -------
    ChiSquareResult
        ``(statistic, dof, p_value)``; unpacks as a triple.

    Raises
    ------
    ValueError
        If fewer than two bins remain after pooling.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([0.5, 0.3, 0.15, 0.05])
    >>> states = np.random.default_rng(0).choice(4, size=2000, p=p)
    >>> stat, dof, pval = chi_square_test(np.bincount(states, minlength=4), p)
    >>> dof, pval > 1e-3
    (3, True)
    """
    c = np.asarray(counts, dtype=np.float64).ravel()
    p = np.asarray(probs, dtype=np.float64).ravel()
    if np.shape(counts) != np.shape(probs):
        raise ValueError(
            f"counts and probs must have the same shape, got {np.shape(counts)} and {np.shape(probs)}"
        )
    if c.size < 2:
        raise ValueError("need at least two states")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be finite and non-negative")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("probs must be finite and non-negative")
    total_p = p.sum()
    if abs(total_p - 1.0) > 1e-4:
        raise ValueError(f"probs must sum to 1, got {total_p:.6g}")
    if not min_expected > 0:
        raise ValueError(f"min_expected must be positive, got {min_expected!r}")
    p = p / total_p
    n = c.sum()
    if n <= 0:
        raise ValueError("counts are all zero")
    if np.any((p == 0) & (c > 0)):
        return ChiSquareResult(float("inf"), int(np.count_nonzero(p > 0)) - 1, 0.0)
    expected = n * p
    keep = expected >= min_expected
    obs = list(c[keep])
    exp = list(expected[keep])
    pooled_o, pooled_e = c[~keep].sum(), expected[~keep].sum()
    if pooled_e > 0:
        if pooled_e >= min_expected or not exp:
            obs.append(pooled_o)
            exp.append(pooled_e)
        else:
            j = int(np.argmin(exp))
            obs[j] += pooled_o
            exp[j] += pooled_e
    if len(exp) < 2:
        raise ValueError(
            f"fewer than two bins with expected count >= {min_expected:g} after pooling; "
            f"collect more than {int(n)} draws"
        )
    o, e = np.array(obs), np.array(exp)
    statistic = float(np.sum(np.square(o - e) / e))
    dof = len(e) - 1
    return ChiSquareResult(statistic, dof, float(stats.chi2.sf(statistic, dof)))
