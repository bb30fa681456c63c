"""Convergence summaries, every R-hat and ESS helper, and the one place where draws become ArviZ objects.

* :func:`rhat`: rank-normalised split R-hat of every element of an array
  ``(chain, draw, ...)``, NaN where it is undefined (what the reports, the
  ``agreement`` group and :func:`summary` use);
* :func:`rhat_unguarded`: the same statistic as ArviZ returns it, with no guard
  beyond ArviZ's own (what the ``until=`` stopping rule and the lp plot use);
* :func:`ess`: bulk or tail effective sample size of every element;
* :func:`rhat_lp`: R-hat of the log joint of an InferenceData;
  :data:`RHAT_LIMIT`: above it, chains have not mixed;
* :func:`summary`: ``arviz.summary``'s table with R-hat guarded; :func:`to_inference_data`,
  :func:`all_sweeps`.

All R-hat, ESS and MCSE values are those of ArviZ (rank-normalised split R-hat,
bulk and tail ESS of Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021),
computed in float64 by :mod:`gibbsjax.chain_stats` whatever the draws' dtype:
ArviZ's own computation of float32 draws fails from about 2**24 draws on
(SciPy 1.18 ranks float32 input in float32), and is slow at thousands of chains.  (Label switching,
i.e. aligning components across chains, and the agreement of chains live in
:mod:`gibbsjax.labels`.)

ArviZ 0.x returns :class:`arviz.InferenceData`; ArviZ 1.x replaces it with an
xarray ``DataTree``.  Everything that builds ArviZ objects goes through
:func:`to_inference_data`, so a move to ArviZ 1.x changes one function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
import itertools
import warnings

import numpy as np

__all__ = [
    "to_inference_data",
    "copy_sharing_arrays",
    "summary",
    "summary_table",
    "check_chains_for_rhat",
    "all_sweeps",
    "rhat",
    "rhat_unguarded",
    "ess",
    "rhat_lp",
    "RHAT_LIMIT",
    "FORMER_DIM_NAMES",
    "with_current_names",
]

#: R-hat above which a quantity's chains have not mixed (Vehtari, Gelman, Simpson, Carpenter
#: & Bürkner 2021, Bayesian Analysis 16(2))
RHAT_LIMIT = 1.01


def _as_draws(values) -> np.ndarray:
    """``values`` as float64 ``(chain, draw, n)``: every element after the first two axes is a column."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"values must have shape (chain, draw, ...), got {x.shape}")
    return x.reshape(x.shape[0], x.shape[1], int(np.prod(x.shape[2:], dtype=np.int64)))


def _per_column(stat, x: np.ndarray) -> np.ndarray:
    """``stat`` (a :mod:`gibbsjax.chain_stats` function of (chain, draw)) of every column of ``x``."""
    from gibbsjax.chain_stats import workspace

    work = workspace()
    return np.array([stat(x[:, :, j], work=work) for j in range(x.shape[2])], dtype=np.float64)


def rhat(values) -> np.ndarray:
    """Rank-normalised split R-hat (``az.rhat``'s statistic) of every element of ``values``, in float64.

    This is the R-hat of the reports, of the ``agreement`` group
    (:func:`gibbsjax.agreement.component_rhat`), of :func:`rhat_lp` and of
    :func:`summary`'s float64 recomputation.

    Parameters
    ----------
    values : array_like, shape (chain, draw, ...)
        Draws; every element after the first two axes is a quantity of its own.

    Returns
    -------
    numpy.ndarray
        Shape ``values.shape[2:]``; NaN where R-hat is undefined: fewer than 2
        chains or 4 draws, a non-finite draw, or draws constant within every chain.

    Raises
    ------
    ValueError
        When ``values`` has fewer than 2 axes.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(4, 100, 2))
    >>> r = rhat(x)
    >>> r.shape, bool(np.all(r < 1.05))
    ((2,), True)
    >>> bool(np.isnan(rhat(np.ones((4, 100)))))      # constant: undefined
    True
    """
    x = _as_draws(values)
    out = np.full(x.shape[2], np.nan)
    shape = np.shape(values)[2:]
    if x.shape[0] < 2 or x.shape[1] < 4:
        return out.reshape(shape)
    ok = np.all(np.isfinite(x), axis=(0, 1)) & ~np.all(np.ptp(x, axis=1) == 0, axis=0)
    if np.any(ok):
        from gibbsjax.chain_stats import rank_rhat

        out[ok] = _per_column(rank_rhat, x[:, :, ok])
    return out.reshape(shape)


def rhat_unguarded(values) -> np.ndarray:
    """R-hat of every element of ``values`` as ``az.rhat`` defines it, in float64, without a guard.

    The same statistic as :func:`rhat`, without its guard against undefined
    values.  The ``until=`` stopping rule (:func:`gibbsjax.stopping.check_until`,
    which reads any non-finite value as "not converged") and the title of
    :func:`gibbsjax.plots.plot_lp` (shown only when finite) use it; they agree
    with :func:`rhat` except on draws with ``inf``.

    Parameters
    ----------
    values : array_like, shape (chain, draw, ...)
        As in :func:`rhat`.

    Returns
    -------
    numpy.ndarray
        Shape ``values.shape[2:]``; NaN only for fewer than 2 chains or 4 draws
        or a NaN draw; infinite draws are ranked like any other, and draws
        constant within every chain give ``inf`` or NaN.

    Raises
    ------
    ValueError
        As in :func:`rhat` (fewer than 2 axes).

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(4, 100, 2))
    >>> bool(np.all(rhat_unguarded(x) == rhat(x)))
    True
    """
    x = _as_draws(values)
    shape = np.shape(values)[2:]
    if x.shape[0] < 2 or x.shape[1] < 4 or x.shape[2] == 0:
        return np.full(shape, np.nan)
    from gibbsjax.chain_stats import rank_rhat

    with np.errstate(divide="ignore", invalid="ignore"):
        return _per_column(rank_rhat, x).reshape(shape)


def ess(values, *, method: str = "bulk") -> np.ndarray:
    """Effective sample size (``az.ess``'s) of every element of ``values``, in float64.

    Parameters
    ----------
    values : array_like, shape (chain, draw, ...)
        Draws; every element after the first two axes is a quantity of its own.

    method : {"bulk", "tail"}, default "bulk"
        Bulk or tail effective sample size.

    Returns
    -------
    numpy.ndarray
        Shape ``values.shape[2:]``; NaN for fewer than 4 draws or a NaN draw.

    Raises
    ------
    ValueError
        When ``method`` is neither, or ``values`` has fewer than 2 axes.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(4, 100))
    >>> bool(ess(x) > 200), bool(ess(x, method="tail") > 100)
    (True, True)
    """
    if method not in ("bulk", "tail"):
        raise ValueError(f"method must be 'bulk' or 'tail', got {method!r}")
    x = _as_draws(values)
    shape = np.shape(values)[2:]
    if x.shape[2] == 0:
        return np.full(shape, np.nan)
    from gibbsjax.chain_stats import ess_bulk, ess_tail

    return _per_column(ess_bulk if method == "bulk" else ess_tail, x).reshape(shape)


def rhat_lp(idata) -> float:
    """R-hat (:func:`rhat`) of the log joint ``lp`` (``sample_stats``).

    Parameters
    ----------
    idata : arviz.InferenceData
        A result; ``lp`` is read from its ``sample_stats``.

    Returns
    -------
    float
        The R-hat; NaN when there is no ``lp`` or one chain.

    Examples
    --------
    >>> idata = to_inference_data({"m": np.zeros((2, 50))})
    >>> bool(np.isnan(rhat_lp(idata)))
    True
    """
    if "sample_stats" not in idata.groups() or "lp" not in idata.sample_stats:
        return float("nan")
    lp = idata.sample_stats["lp"].transpose("chain", "draw").values
    return float(rhat(lp[:, :, None])[0])


def _as_attr(value: Any) -> Any:
    """NetCDF attributes take str / numbers / arrays of numbers, not bools or None."""
    if isinstance(value, bool):
        return int(value)
    if value is None:
        return ""
    if isinstance(value, (str, int, float, np.integer, np.floating)):
        return value
    return str(value)


def to_inference_data(
    posterior: Mapping[str, np.ndarray],
    *,
    sample_stats: Mapping[str, np.ndarray] | None = None,
    warmup_posterior: Mapping[str, np.ndarray] | None = None,
    warmup_sample_stats: Mapping[str, np.ndarray] | None = None,
    dims: Mapping[str, Sequence[str]] | None = None,
    coords: Mapping[str, Any] | None = None,
    attrs: Mapping[str, Any] | None = None,
    posterior_mean: Mapping[str, np.ndarray] | None = None,
    log_likelihood: Mapping[str, np.ndarray] | None = None,
    warmup_log_likelihood: Mapping[str, np.ndarray] | None = None,
    observed_data: Mapping[str, Any] | None = None,
):
    """Build an :class:`arviz.InferenceData` from arrays shaped ``(chain, draw, ...)``.

    Parameters
    ----------
    posterior : mapping of str to array_like
        The ``posterior`` group's variables, ``(chain, draw, ...)``.
    sample_stats : mapping of str to array_like, optional
        The ``sample_stats`` group's (e.g. ``lp``), ``(chain, draw, ...)``.
    warmup_posterior, warmup_sample_stats : mapping of str to array_like, optional
        The warm-up groups (``warmup_sample_stats`` is kept only with
        ``warmup_posterior``).
    dims : mapping of str to sequence of str, optional
        Names of each variable's dimensions after chain and draw.
    coords : mapping, optional
        Coordinates of those dimensions.
    attrs : mapping, optional
        Attributes of the groups; bools become ints and None an empty string
        (netCDF takes neither), other non-numbers strings.
    posterior_mean : mapping of str to array_like, optional
        Per-chain posterior means, ``(chain, ...)``: a ``posterior_mean`` group
        with the same dims and coords.
    log_likelihood, warmup_log_likelihood : mapping of str to array_like, optional
        The pointwise log likelihood, ``(chain, draw, observation...)``, of the kept
        (warm-up) draws: the groups ``az.loo`` and ``az.waic`` read.
    observed_data : mapping of str to (dims, array), optional
        The ``observed_data`` group, each variable with its own dims.

    Returns
    -------
    arviz.InferenceData
        The result.

    Examples
    --------
    >>> import numpy as np
    >>> idata = to_inference_data({"mu": np.zeros((2, 5))}, attrs={"model": "demo"})
    >>> idata.posterior["mu"].shape
    (2, 5)
    """
    import arviz as az

    save_warmup = bool(warmup_posterior)
    clean_attrs = {k: _as_attr(v) for k, v in (attrs or {}).items()}
    kwargs: dict[str, Any] = {}
    if save_warmup:
        kwargs["warmup_posterior"] = dict(warmup_posterior)
        if warmup_sample_stats:
            kwargs["warmup_sample_stats"] = dict(warmup_sample_stats)
        if warmup_log_likelihood:
            kwargs["warmup_log_likelihood"] = dict(warmup_log_likelihood)
    if log_likelihood:
        kwargs["log_likelihood"] = dict(log_likelihood)
    with warnings.catch_warnings():
        # our arrays are (chain, draw, ...) by construction; ArviZ warns when chains > draws
        warnings.filterwarnings("ignore", message="More chains .* than draws")
        idata = az.from_dict(
            posterior=dict(posterior),
            sample_stats=dict(sample_stats) if sample_stats else None,
            dims={k: list(v) for k, v in (dims or {}).items()},
            coords=dict(coords or {}),
            attrs=clean_attrs,
            save_warmup=save_warmup,
            **kwargs,
        )
    if posterior_mean:
        idata.add_groups({"posterior_mean": _means_dataset(posterior_mean, dims or {}, coords or {})})
    if observed_data:
        import xarray as xr

        variables = {k: (tuple(d), np.asarray(v)) for k, (d, v) in observed_data.items()}
        used = {d for names, _ in variables.values() for d in names}
        idata.add_groups({"observed_data": xr.Dataset(
            variables, coords={k: v for k, v in (coords or {}).items() if k in used}, attrs=clean_attrs)})
    return idata


def _means_dataset(means, dims, coords):
    import xarray as xr

    variables = {}
    for name, value in means.items():
        arr = np.asarray(value)
        names = list(dims.get(name, ()))
        if len(names) != arr.ndim - 1:
            names = [f"{name}_dim_{i}" for i in range(arr.ndim - 1)]
        variables[name] = (["chain", *names], arr)
    used = {d for _, (names, _) in variables.items() for d in names}
    ds_coords = {"chain": np.arange(next(iter(variables.values()))[1].shape[0])}
    ds_coords.update({k: v for k, v in coords.items() if k in used})
    return xr.Dataset(variables, coords=ds_coords)


def check_chains_for_rhat(idata, *, min_chains: int = 2) -> None:
    """Raise ``ValueError`` when there are too few chains for R-hat to mean anything.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    min_chains : int, default 2
        Chains R-hat needs.

    Raises
    ------
    ValueError
        When ``idata`` has fewer than ``min_chains`` chains.

    Examples
    --------
    >>> check_chains_for_rhat(to_inference_data({"m": np.zeros((2, 5))}))
    >>> check_chains_for_rhat(to_inference_data({"m": np.zeros((1, 5))}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: R-hat compares chains: it needs at least 2 chains, this result has 1 ...
    """
    n = int(idata.posterior.sizes["chain"])
    if n < min_chains:
        raise ValueError(
            f"R-hat compares chains: it needs at least {min_chains} chains, this result has {n} "
            "(run with num_chains >= 2, 4 or more is better)"
        )


def summary(idata, var_names=None, *, include_lp: bool = True, **kwargs):
    """``arviz.summary``'s table, every statistic in float64, with R-hat guarded.

    Includes ``lp`` (the log joint density, from ``sample_stats``) as its own
    row when present: it is label-invariant, so its R-hat is meaningful even for
    mixtures and topic models.

    Columns ``mean``, ``sd``, the HDI bounds (``hdi_prob``, default ArviZ's
    ``stats.ci_prob``), ``mcse_mean``, ``mcse_sd``, ``ess_bulk``, ``ess_tail``,
    ``r_hat``, rows labelled as ArviZ labels them, rounded as ArviZ rounds them
    (``round_to``), computed by :func:`gibbsjax.chain_stats.column_summary`; other
    ``arviz.summary`` keywords (``kind``, ``stat_focus``, ...) and ``var_names``
    patterns go to ``arviz.summary`` itself, given float64 copies of the draws.
    Where R-hat comes back NaN it is recomputed (:func:`rhat`), or a
    ``RuntimeWarning`` says why it is undefined.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    var_names : str or list of str, optional
        Variables (or ``arviz.summary`` patterns) to summarise; default all.
    include_lp : bool, default True
        Add the row ``lp`` when the result has one.
    **kwargs
        Other ``arviz.summary`` keywords (``hdi_prob``, ``round_to``, ``kind``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per scalar quantity.

    Raises
    ------
    ValueError
        For a single chain (R-hat compares chains), or ``hdi_prob`` outside (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> idata = to_inference_data({"mu": np.random.default_rng(0).normal(size=(4, 100))})
    >>> list(summary(idata).index)
    ['mu']
    >>> list(summary(idata).columns)[:4]
    ['mean', 'sd', 'hdi_3%', 'hdi_97%']
    """
    check_chains_for_rhat(idata)
    return _finite_rhat(summary_table(idata, var_names, include_lp=include_lp, **kwargs), idata)


def summary_table(idata, var_names=None, *, include_lp: bool = True, **kwargs):
    """:func:`summary`'s table for any number of chains, without its guard.

    With one chain ``r_hat`` is NaN (what a caller that drops the column for
    single-chain results wants); NaN R-hats are not recomputed.

    Parameters
    ----------
    idata, var_names, include_lp, **kwargs
        As in :func:`summary`.

    Returns
    -------
    pandas.DataFrame
        :func:`summary`'s table (``r_hat`` NaN with one chain).

    Raises
    ------
    ValueError
        When ``hdi_prob`` lies outside (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> idata = to_inference_data({"mu": np.random.default_rng(0).normal(size=(1, 100))})
    >>> bool(np.isnan(summary_table(idata).at["mu", "r_hat"]))
    True
    """
    lp = None
    post = idata.posterior
    if "lp" in post:  # a result saved before lp left the posterior holds it there too: one row, last
        names = [var_names] if isinstance(var_names, str) else (None if var_names is None else list(var_names))
        rest = [n for n in (names if names is not None else post.data_vars) if n != "lp"]
        if names is None or all(n in post for n in names):
            var_names = rest + (["lp"] if include_lp else [])
    elif include_lp and "sample_stats" in idata.groups() and "lp" in idata.sample_stats:
        import xarray as xr

        lp = xr.Dataset({"lp": idata.sample_stats["lp"]})
    return _summary_table(post, var_names, kwargs, lp)


def _summary_table(dataset, var_names, kwargs, extra=None):
    """The wide ``arviz.summary`` table of ``dataset`` (chain, draw, ...) and then of every variable
    of ``extra`` (a dataset or None), in float64."""
    import pandas as pd

    names = [var_names] if isinstance(var_names, str) else (None if var_names is None else list(var_names))
    if set(kwargs) - {"hdi_prob", "round_to"} or (names is not None and not set(names) <= set(dataset.data_vars)):
        import arviz as az

        table = az.summary(dataset.astype(np.float64), var_names=var_names, **kwargs)
        if extra is None:
            return table
        return _concat(table, az.summary(extra.astype(np.float64), **kwargs))
    from gibbsjax.chain_stats import SUMMARY_DIAGNOSTICS, column_summaries

    hdi_prob = kwargs.get("hdi_prob")
    if hdi_prob is None:
        import arviz as az

        hdi_prob = az.rcParams["stats.ci_prob"]
    if not 0 < hdi_prob <= 1:
        raise ValueError(f"hdi_prob must be in (0, 1], got {hdi_prob}")
    alpha = 1 - hdi_prob
    hdi = (f"hdi_{100 * alpha / 2:g}%", f"hdi_{100 * (1 - alpha / 2):g}%")
    columns = ["mean", "sd", *hdi, *SUMMARY_DIAGNOSTICS]
    draws, labels = [], []
    wanted = [(dataset, name) for name in (list(dataset.data_vars) if names is None else names)]
    wanted += [(extra, name) for name in ([] if extra is None else extra.data_vars)]
    for source, name in wanted:
        values = source[name]
        dims = [d for d in values.dims if d not in ("chain", "draw")]
        array = values.transpose("chain", "draw", *dims).values
        array = array.reshape(array.shape[0], array.shape[1], -1)
        coords = [[f"{c}" for c in values[d].values] for d in dims]
        for j, combo in enumerate(itertools.product(*coords)):
            draws.append(array[:, :, j])
            labels.append(f"{name}[{', '.join(combo)}]" if dims else name)
    rows = [[row["mean"], row["sd"], row["hdi_lower"], row["hdi_upper"], *(row[c] for c in SUMMARY_DIAGNOSTICS)]
            for row in column_summaries(draws, hdi_prob=hdi_prob)]
    table = pd.DataFrame(np.array(rows, dtype=np.float64).reshape(len(rows), len(columns)),
                         columns=columns, index=labels)
    round_to = kwargs.get("round_to")
    if round_to is None:
        return table.round({c: 2 if c == "r_hat" else 0 if c.startswith("ess") else 3 for c in columns})
    if round_to in ("None", "none"):
        return table
    return table.round(round_to)


def _finite_rhat(table, idata):
    """Rows whose R-hat came back NaN: recompute it (:func:`rhat`), else say why it is undefined.

    The table's R-hat is already float64 (ArviZ's of float32 draws came back NaN
    from about 2**23 draws on); where it is NaN (draws constant within every
    chain, NaN draws) a ``RuntimeWarning`` says why.
    """
    if "r_hat" not in table.columns:
        return table
    missing = [row for row in table.index if not np.isfinite(table.at[row, "r_hat"])]
    if not missing:
        return table
    import xarray as xr

    groups = [idata.posterior]
    if "sample_stats" in idata.groups() and "lp" in idata.sample_stats:
        groups.append(xr.Dataset({"lp": idata.sample_stats["lp"]}))
    for row in missing:
        name, _, index = str(row).partition("[")
        source = next((g for g in groups if name in g), None)
        if source is None:
            continue
        values = source[name]
        if index:
            dims = [d for d in values.dims if d not in ("chain", "draw")]
            labels = [part.strip() for part in index.rstrip("]").split(",")]
            sel = {}
            for dim, label in zip(dims, labels):
                coord = values[dim].values
                match = [c for c in coord if str(c) == label]
                sel[dim] = match[0] if match else int(label)
            values = values.sel(sel)
        x = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(x)):
            why = "it has NaN or infinite draws"
        elif np.all(np.ptp(x, axis=1) == 0):
            why = "its draws are constant within every chain"
        else:
            value = rhat(x).item()
            if np.isfinite(value):
                table.at[row, "r_hat"] = round(value, 2)
                continue
            why = f"it is NaN even in float64 ({x.shape[0]} chains x {x.shape[1]} draws)"
        warnings.warn(f"R-hat of {row} is undefined: {why}", RuntimeWarning, stacklevel=3)
    return table


def _concat(a, b):
    import pandas as pd

    return pd.concat([a, b])


def all_sweeps(idata):
    """Warm-up and posterior draws as one ``xarray.Dataset``, ``lp`` included.

    ``draw`` runs over every recorded sweep: with ``save_warmup=True`` draw 0 is
    the starting state, draws ``1..num_warmup`` the warm-up sweeps, then the kept
    draws.  Without a warm-up group, just the posterior (plus ``lp``).  Handy for
    plotting how chains leave their starting points.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result (its draws and, when recorded, its warm-up draws).

    Returns
    -------
    xarray.Dataset
        The draws of every variable and ``lp``, ``draw`` numbered from 0.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.models import normal
    >>> idata = gibbsjax.sample(normal.bivariate(0.8), seed=0, num_warmup=5, num_draws=10,
    ...                         save_warmup=True, progress=False)
    >>> all_sweeps(idata).sizes["draw"]
    16
    """
    import xarray as xr

    def with_lp(post, stats_group):
        ds = post.copy()
        if stats_group in idata.groups() and "lp" in idata[stats_group]:
            ds["lp"] = idata[stats_group]["lp"]
        return ds

    parts = []
    if "warmup_posterior" in idata.groups():
        parts.append(with_lp(idata.warmup_posterior, "warmup_sample_stats"))
    parts.append(with_lp(idata.posterior, "sample_stats"))
    combined = xr.concat(parts, dim="draw", data_vars="all", coords="minimal", compat="override")
    return combined.assign_coords(draw=np.arange(combined.sizes["draw"]))


def copy_sharing_arrays(idata):
    """A copy of ``idata`` whose groups, variables and attributes are its own, holding the same
    numpy arrays (none is copied).

    What :meth:`arviz.InferenceData.copy` gives, without copying the arrays: a post-process that
    replaces variables, groups or attributes of the copy leaves ``idata`` as it was, at no cost in
    memory or time (a 100 M-token LDA result holds gigabytes in ``sampler_state`` and
    ``posterior_mean``).  An array written *in place* would show in both: gibbsjax never does that.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result; its groups' arrays are shared, not copied.

    Returns
    -------
    arviz.InferenceData
        The copy.

    Examples
    --------
    >>> import numpy as np
    >>> idata = to_inference_data({"m": np.zeros((2, 3))})
    >>> out = copy_sharing_arrays(idata)
    >>> out.posterior["m"] = out.posterior["m"] + 1.0
    >>> float(idata.posterior["m"].sum())
    0.0
    >>> copy_sharing_arrays(idata).posterior["m"].values is idata.posterior["m"].values
    True
    """
    import copy

    memo: dict[int, Any] = {}
    for group in idata.groups():
        for var in idata[group].variables.values():
            data = var.data
            if isinstance(data, np.ndarray):
                memo[id(data)] = data  # deepcopy finds it "already copied": the array itself
    return copy.deepcopy(idata, memo)


#: dimension names that results of earlier versions carry -> today's (one name per idea:
#: the one-label models called the document dimension "doc", LDA "document")
FORMER_DIM_NAMES = {"doc": "document"}


def with_current_names(idata):
    """``idata`` with the dimensions of earlier versions' results under today's names.

    The names are :data:`FORMER_DIM_NAMES`, so a saved result reads, reports and
    resumes as a new one.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result, new or saved by an earlier version.

    Returns
    -------
    arviz.InferenceData
        A renamed copy; ``idata`` itself when it has none of the former names.

    Examples
    --------
    >>> import numpy as np
    >>> old = to_inference_data({"doc_probs": np.zeros((1, 2, 3))}, dims={"doc_probs": ["doc"]})
    >>> with_current_names(old).posterior["doc_probs"].dims
    ('chain', 'draw', 'document')
    """
    found = {old: new for old, new in FORMER_DIM_NAMES.items()
             if any(old in idata[g].dims or old in idata[g].variables for g in idata.groups())}
    if not found:
        return idata
    out = idata.copy()
    for g in out.groups():
        ds = out[g]
        names = {old: new for old, new in found.items() if old in ds.dims or old in ds.variables}
        if names:
            setattr(out, g, ds.rename(names))
    return out
