"""Draws against exact moments, in units of Monte Carlo standard error (:func:`moment_zscores`,
:func:`assert_moments`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from gibbsjax.testing.common import element_names


class MomentCheck(NamedTuple):
    """One moment comparison: ``z = (estimate - expected) / mcse``.

    Parameters
    ----------
    label : str
        What was compared, e.g. ``"mean(x)"``.
    estimate : float
        The MCMC estimate.
    expected : float
        The exact value.
    mcse : float
        The Monte Carlo standard error of the estimate.
    z : float
        ``(estimate - expected) / mcse``.

    Examples
    --------
    >>> from gibbsjax.testing import MomentCheck
    >>> check = MomentCheck(label='mean of x', estimate=0.02, expected=0.0, mcse=0.01, z=2.0)
    >>> check.z
    2.0
    """

    label: str
    estimate: float
    expected: float
    mcse: float
    z: float

    def __str__(self) -> str:
        return (
            f"{self.label}: estimate {self.estimate:.6g}, expected {self.expected:.6g}, "
            f"MCSE {self.mcse:.3g}, z = {self.z:.2f}"
        )


def moment_zscores(
    draws: Any,
    *,
    mean: Any = None,
    var: Any = None,
    sd: Any = None,
    corr: Any = None,
    name: str | None = None,
) -> list[MomentCheck]:
    """Compare MCMC draws with exact moments in units of Monte Carlo standard error.

    Each requested moment is estimated per element of the event and compared
    with its exact value:

    * ``mean``: the sample mean; MCSE from ``arviz.mcse(method="mean")``,
      i.e. ``sd / sqrt(ESS)``, which accounts for autocorrelation.
    * ``var``: the mean of ``(x - xbar)**2``; MCSE of that mean (the
      estimation of ``xbar`` does not matter to first order).
    * ``sd``: ``sqrt(var)``; MCSE by the delta method, ``MCSE(var) / (2 sd)``.
    * ``corr``: the sample correlation of every pair of event elements; MCSE of
      the mean of its influence function ``z_i z_j - r (z_i**2 + z_j**2) / 2``
      of the standardised draws.

    Expected values broadcast against the event shape; NaN entries are
    skipped.  MCSEs are themselves estimates: use several chains and a few
    hundred effective draws or more.

    Parameters
    ----------
    draws : array_like or xarray.DataArray
        Shape ``(chain, draw, *event)``: a numpy/JAX array or an ArviZ variable
        (``idata.posterior["x"]``, with ``chain`` and ``draw`` dims).
    mean, var, sd : array_like, optional
        Exact moments per event element.
    corr : array_like, optional
        The exact correlations, a full ``(k, k)`` matrix over the flattened event
        (or a scalar when ``k == 2``).
    name : str, optional
        The variable's name in the labels (default the DataArray's name or ``"x"``).

    Returns
    -------
    list of MomentCheck
        Rows ``(label, estimate, expected, mcse, z)``.

    Raises
    ------
    ValueError
        For draws of the wrong shape (fewer than 4 draws per chain, no event).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(2.0, 3.0, size=(4, 1000))
    >>> for check in moment_zscores(x, mean=2.0, sd=3.0):
    ...     print(check.label, round(check.z, 2))
    mean(x) -0.95
    sd(x) -0.15
    """
    x, label = _as_chain_draw(draws, name)
    num_chain, num_draw = x.shape[:2]
    event = x.shape[2:]
    flat = x.reshape(num_chain, num_draw, -1)
    k = flat.shape[-1]
    labels = element_names(label, event)
    xbar = flat.mean(axis=(0, 1))
    dev = flat - xbar
    dev2 = np.square(dev)
    checks: list[MomentCheck] = []

    def add(lbl, est, exp, se):
        checks.append(MomentCheck(lbl, _scalar(est), _scalar(exp), _scalar(se), _z(est, exp, se)))

    if mean is not None:
        expected = _broadcast("mean", mean, event)
        for i in range(k):
            if np.isfinite(expected[i]):
                add(f"mean({labels[i]})", xbar[i], expected[i], _mcse_mean(flat[..., i]))
    var_est = dev2.mean(axis=(0, 1))
    if var is not None or sd is not None:
        var_se = np.array([_mcse_mean(dev2[..., i]) for i in range(k)])
    if var is not None:
        expected = _broadcast("var", var, event)
        for i in range(k):
            if np.isfinite(expected[i]):
                add(f"var({labels[i]})", var_est[i], expected[i], var_se[i])
    if sd is not None:
        expected = _broadcast("sd", sd, event)
        sd_est = np.sqrt(var_est)
        for i in range(k):
            if np.isfinite(expected[i]):
                se = var_se[i] / (2.0 * sd_est[i]) if sd_est[i] > 0 else 0.0
                add(f"sd({labels[i]})", sd_est[i], expected[i], se)
    if corr is not None:
        if k < 2:
            raise ValueError("corr needs draws with at least two event elements, shape (chain, draw, k)")
        c = np.asarray(corr, dtype=np.float64)
        if c.ndim == 0:
            if k != 2:
                raise ValueError(f"a scalar corr needs exactly 2 event elements, got {k}")
            c = np.array([[1.0, c.item()], [c.item(), 1.0]])
        if c.shape != (k, k):
            raise ValueError(
                f"corr must be a ({k}, {k}) matrix over the flattened event, got shape {c.shape}"
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            std = dev / np.sqrt(var_est)
        for i in range(k):
            for j in range(i + 1, k):
                if not np.isfinite(c[i, j]):
                    continue
                prod = std[..., i] * std[..., j]
                r = prod.mean()
                psi = prod - 0.5 * r * (np.square(std[..., i]) + np.square(std[..., j]))
                add(f"corr({labels[i]}, {labels[j]})", r, c[i, j], _mcse_mean(psi))
    if not checks:
        raise ValueError("give at least one of mean, var, sd, corr")
    return checks


def assert_moments(
    draws: Any,
    *,
    mean: Any = None,
    var: Any = None,
    sd: Any = None,
    corr: Any = None,
    n_se: float = 4.0,
    name: str | None = None,
) -> list[MomentCheck]:
    """Assert that draws match exact moments within ``n_se`` Monte Carlo SEs.

    The default ``n_se=4`` gives a false-alarm probability of about ``6e-5``
    per comparison.

    Parameters
    ----------
    draws : array_like or xarray.DataArray
        Shape ``(chain, draw, *event)``, as in :func:`moment_zscores`.
    mean, var, sd, corr : array_like, optional
        Exact moments, as in :func:`moment_zscores`.
    n_se : float, default 4.0
        The largest allowed ``|z|``.
    name : str, optional
        The variable's name in the labels.

    Returns
    -------
    list of MomentCheck
        The checks, when all pass.

    Raises
    ------
    AssertionError
        Listing every comparison (estimate, expected, MCSE, z) if any
        ``|z| > n_se`` (or a z-score is NaN).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(2.0, 3.0, size=(4, 1000))
    >>> _ = assert_moments(x, mean=2.0, var=9.0)
    >>> assert_moments(x, mean=2.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: ...
    """
    if not (n_se > 0):
        raise ValueError(f"n_se must be positive, got {n_se!r}")
    checks = moment_zscores(draws, mean=mean, var=var, sd=sd, corr=corr, name=name)
    bad = [c for c in checks if not abs(c.z) <= n_se]
    if bad:
        lines = [f"{len(bad)} of {len(checks)} moment checks off by more than {n_se:g} MCSE:"]
        lines += [f"  {c}" + ("  <-- FAIL" if c in bad else "") for c in checks]
        raise AssertionError("\n".join(lines))
    return checks


def _as_chain_draw(draws: Any, name: str | None) -> tuple[np.ndarray, str]:
    if hasattr(draws, "groups") and callable(getattr(draws, "groups")):
        raise TypeError("pass one variable, e.g. idata.posterior['x'], not an InferenceData")
    if hasattr(draws, "dims") and hasattr(draws, "transpose"):  # xarray.DataArray
        if "chain" not in draws.dims or "draw" not in draws.dims:
            raise ValueError(f"a DataArray needs 'chain' and 'draw' dims, got {draws.dims}")
        if name is None and getattr(draws, "name", None) is not None:
            name = str(draws.name)
        draws = draws.transpose("chain", "draw", ...).values
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"draws must have shape (chain, draw, ...), got shape {x.shape}")
    if x.shape[0] < 1 or x.shape[1] < 4:
        raise ValueError(f"draws need at least 1 chain and 4 draws, got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"draws has no event elements, shape {x.shape}")
    return x, name or "x"


def _broadcast(arg: str, value: Any, event: tuple[int, ...]) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    try:
        return np.broadcast_to(v, event).ravel()
    except ValueError:
        raise ValueError(f"{arg} of shape {v.shape} does not broadcast to the event shape {event}") from None


def _mcse_mean(x: np.ndarray) -> float:
    import arviz as az  # lazy: importing arviz is slow and noisy

    return _scalar(az.mcse(np.asarray(x, dtype=np.float64), method="mean"))


def _scalar(x: Any) -> float:
    """A Python float from a number or a one-element array of any rank (numpy, JAX, xarray).

    ``float()`` of a one-element array that is not 0-d is deprecated in numpy
    (an error in numpy 2.5); ``.item()`` works for every rank.
    """
    arr = np.asarray(getattr(x, "values", x), dtype=np.float64)
    if arr.size != 1:
        raise ValueError(f"expected a single number, got an array of shape {arr.shape}")
    return arr.item()


def _z(est: float, exp: float, se: float) -> float:
    est, exp, se = _scalar(est), _scalar(exp), _scalar(se)
    if se > 0 and np.isfinite(se):
        return float((est - exp) / se)
    if se == 0 and est == exp:
        return 0.0
    return float("nan") if not np.isfinite(est) else float("inf")
