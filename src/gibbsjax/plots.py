"""Plots of a result that people look at: the log joint per chain, trace and rank
plots split into readable panels, the agreement of chains on each topic or
cluster, and the top words of each topic.

Every function takes an :class:`arviz.InferenceData` (what :func:`gibbsjax.sample`,
:class:`gibbsjax.LDA` and ``gibbsjax run`` produce, or ``az.from_netcdf`` reads
back) and returns the matplotlib ``Figure``; ``gibbsjax plot --kind KIND`` calls
them.

* :func:`plot_lp`: ``sample_stats.lp`` per chain against the sweep, one colour
  per chain, with each chain's density beside it (chains stuck in different
  modes sit at different levels).
* :func:`plot_trace`: densities and traces; a variable with many components
  (LDA's ``topic_share``) is split into panels of at most ``max_per_panel``.
* :func:`plot_rank`: ArviZ's rank plot (``lp`` included).
* :func:`plot_agreement`: a chains × components heatmap of the ``agreement``
  group's distance to the reference chain, reproduced cells marked.
* :func:`plot_top_words`: the top words of each topic (or cluster, or class)
  as horizontal bars, one small panel each.
* :func:`plot_stable_topics`: the topics that recur across chains, as bars of
  the share of chains that hold each, with spread and R-hat.
* :func:`plot_stability`: the table of :func:`gibbsjax.choose_num_topics`
  (stability, held-out perplexity and coherence against K).

Runs with many chains are plotted from a random sample of at most
``max_chains`` chains (a fixed ``seed``, so the same picture every time); the
figure says so.  Statistics printed in titles (R-hat, verdicts) use every
chain.  matplotlib and ArviZ are imported inside the functions: ``import
gibbsjax`` stays light.

>>> import numpy as np
>>> from gibbsjax.diagnostics import to_inference_data
>>> rng = np.random.default_rng(0)
>>> idata = to_inference_data({"mu": rng.normal(size=(4, 50))},
...                           sample_stats={"lp": rng.normal(size=(4, 50))})
>>> variable_names(idata)
['mu', 'lp']
>>> fig = plot_lp(idata)
>>> len(fig.axes)
2
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from gibbsjax._checks import check_int
from gibbsjax.diagnostics import RHAT_LIMIT, rhat_unguarded

__all__ = [
    "plot_lp",
    "plot_trace",
    "plot_rank",
    "plot_agreement",
    "plot_top_words",
    "plot_stable_topics",
    "plot_stability",
    "variable_names",
    "MAX_CHAINS",
]

#: chains drawn by default; larger runs are plotted from a random sample of chains
MAX_CHAINS = 16


# ============================================================================ shared helpers
def variable_names(idata) -> list[str]:
    """What :func:`plot_trace` and :func:`plot_rank` can draw.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.

    Returns
    -------
    list of str
        The numeric posterior variables, then ``lp`` (the log joint, from
        ``sample_stats``) when recorded.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> variable_names(to_inference_data({"mu": np.zeros((2, 3))}))
    ['mu']
    """
    names = [str(n) for n, v in idata.posterior.data_vars.items() if v.dtype.kind in "biuf"]
    if "lp" not in names and "sample_stats" in idata.groups() and "lp" in idata.sample_stats:
        names.append("lp")
    return names


def _draws(idata, var_names):
    """The requested variables as one Dataset (chain, draw, ...); ``lp`` from sample_stats."""
    import xarray as xr

    available = variable_names(idata)
    if var_names is None:
        var_names = available
    elif isinstance(var_names, str):
        var_names = [var_names]
    var_names = list(var_names)
    if not var_names:
        raise ValueError("var_names is empty; variables: " + ", ".join(available))
    for name in var_names:
        if name not in available:
            raise ValueError(f"unknown variable {name!r}; variables: {', '.join(available)}")
    post = idata.posterior
    return xr.Dataset({n: (post[n] if n in post else idata.sample_stats[n]) for n in var_names})


def _default_names(idata, var_names):
    """``var_names``, or by default :func:`variable_names` less the variables that have a
    ``<name>_sorted`` twin (the sorted, label-invariant copy is drawn), and a note naming them.

    >>> import numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"w": np.zeros((2, 3, 2)), "w_sorted": np.zeros((2, 3, 2))})
    >>> _default_names(idata, None)[0]
    ['w_sorted']
    """
    if var_names is not None:
        return var_names, []
    names = variable_names(idata)
    twins = [n for n in names if f"{n}_sorted" in names]
    if not twins:
        return names, []
    note = (f"not drawn: {', '.join(twins)} (the same draws as "
            f"{', '.join(t + '_sorted' for t in twins)} up to the order of components); "
            "name them in var_names (--var) to draw them")
    return [n for n in names if n not in twins], [note]


def _chain_sample(num_chains: int, max_chains, seed: int, keep: Sequence[int] = ()):
    """Positions of the chains to draw (sorted) and a note when they are a sample."""
    if max_chains is None or num_chains <= max_chains:
        return np.arange(num_chains), ""
    keep = np.unique(np.asarray(list(keep), dtype=np.int64))[:max_chains]
    rest = np.setdiff1d(np.arange(num_chains), keep)
    picked = np.random.default_rng(seed).choice(rest, size=max_chains - keep.size, replace=False)
    chosen = np.sort(np.concatenate([keep, picked]))
    return chosen, f"{max_chains} of {num_chains} chains shown (random sample, seed {seed})"


def _check_common(max_chains, seed) -> None:
    if max_chains is not None:
        check_int("max_chains", max_chains, 1)
    check_int("seed", seed, 0)


def _sweeps(idata, num_draws: int):
    """The sweep after which each kept draw was recorded, from the run's attributes."""
    try:
        warmup, thin = int(idata.attrs["num_warmup"]), int(idata.attrs["thin"])
    except (KeyError, TypeError, ValueError):
        return np.arange(num_draws), "draw"
    return warmup + thin * (1 + np.arange(num_draws)), "sweep"


def _density(x: np.ndarray):
    """A Gaussian kernel density estimate on a grid (binned, Silverman's bandwidth,
    Silverman 1986 eq. 3.31), or None when ``x`` has fewer than two distinct values."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size < 2 or np.ptp(x) == 0:
        return None
    q75, q25 = np.percentile(x, [75, 25])
    spread = min(x.std(), (q75 - q25) / 1.34) if q75 > q25 else x.std()
    h = 0.9 * spread * x.size ** -0.2
    bins = 256
    counts, edges = np.histogram(x, bins=bins, range=(x.min() - 3 * h, x.max() + 3 * h))
    width = edges[1] - edges[0]
    sigma = h / width  # in bins; at most bins / 6, so the kernel fits the grid
    half = int(np.ceil(4 * sigma))
    t = np.arange(-half, half + 1)
    kernel = np.exp(-0.5 * (t / sigma) ** 2)
    dens = np.convolve(counts, kernel / kernel.sum(), mode="same") / (x.size * width)
    return 0.5 * (edges[:-1] + edges[1:]), dens


def _colours(n: int):
    import matplotlib.pyplot as plt

    if n <= 10:
        cmap = plt.get_cmap("tab10")
        return [cmap(i) for i in range(n)]
    if n <= 20:
        cmap = plt.get_cmap("tab20")
        return [cmap(i) for i in range(n)]
    cmap = plt.get_cmap("viridis")
    return [cmap(i / (n - 1)) for i in range(n)]


def _components(da):
    """``da`` (chain, draw, ...) as values (chain, draw, components), labels, dim names."""
    rest = [d for d in da.dims if d not in ("chain", "draw")]
    values = da.transpose("chain", "draw", *rest).values
    values = values.reshape(values.shape[0], values.shape[1], -1)
    if not rest:
        return values, [""], []
    axes = [[str(v) for v in (da[d].values if d in da.coords else range(da.sizes[d]))] for d in rest]
    labels = [",".join(axes[i][j] for i, j in enumerate(idx)) for idx in np.ndindex(*[len(a) for a in axes])]
    return values, labels, rest


def _component_title(name: str, dims: Sequence[str], label: str) -> str:
    """The name of one component, the same in trace and rank plots: ``emission_sorted[rank=0, symbol=1]``.

    >>> _component_title("topic_share", ["topic"], "3")
    'topic_share[topic=3]'
    >>> _component_title("lp", [], "")
    'lp'
    """
    if not dims:
        return name
    return f"{name}[{', '.join(f'{d}={p}' for d, p in zip(dims, label.split(',')))}]"


def _budget(counts: Sequence[int], max_panels: int) -> list[int]:
    """Panels per variable when all of them would be more than ``max_panels``: a fair
    share each, small variables served first (so ``lp`` is never crowded out).

    >>> _budget([744, 1, 2], 6)
    [3, 1, 2]
    """
    allot = [0] * len(counts)
    remaining, left = max_panels, len(counts)
    for i in sorted(range(len(counts)), key=lambda j: counts[j]):
        allot[i] = min(counts[i], remaining // left)
        remaining -= allot[i]
        left -= 1
    return allot


def _short(label: str, width: int = 28) -> str:
    return label if len(label) <= width else label[: width // 2 - 1] + "…" + label[-(width // 2):]


def _finish(fig, notes: Sequence[str]) -> None:
    """Lay the figure out, with the notes (chain sample, panels left out) on top."""
    if notes:
        height = fig.get_figheight()
        title = fig.suptitle("\n".join(notes), fontsize=9, y=1 - 0.08 / height, va="top")
        box = title.get_window_extent(fig.canvas.get_renderer()).transformed(fig.transFigure.inverted())
        fig.tight_layout(rect=(0, 0, 1, box.y0 - 0.04 / height))
        renderer = fig.canvas.get_renderer()  # then the notes just above the panels' titles
        top = max(ax.get_tightbbox(renderer).transformed(fig.transFigure.inverted()).y1
                  for ax in fig.axes if ax.get_visible())
        title.set_y(min(top + 0.06 / height, box.y0))
        title.set_va("bottom")
    else:
        fig.tight_layout()


# ============================================================================ lp
def plot_lp(idata, *, ax=None, max_chains: int | None = MAX_CHAINS, seed: int = 0, warmup: bool = True):
    """The log joint ``lp`` of every chain against the sweep, one colour per chain.

    Beside the traces, each chain's density of ``lp`` (drawn sideways, sharing
    the y axis): chains in one mode overlap, chains stuck in different modes
    sit at different levels, and a chain still climbing shows as a trend.  The
    title gives R-hat of ``lp`` over *all* chains.  With ``save_warmup`` the
    warm-up sweeps are drawn too (shaded) unless ``warmup=False``; the y axis
    spans the sampling phase (the warm-up's climb, often far below, would
    flatten it), so the warm-up is clipped and the title says where it starts.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result with ``sample_stats.lp``.
    ax : matplotlib.axes.Axes, optional
        Draw only the traces on this axes (no density panel).
    max_chains : int or None, default MAX_CHAINS
        Draw at most this many chains, a random sample when there are more
        (None: all).
    seed : int, default 0
        Seed of that sample.
    warmup : bool, default True
        Draw the warm-up sweeps too, when the result saved them.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        When the result has no ``sample_stats.lp`` (its kernel defines no
        ``log_joint``) or no draws, or ``max_chains`` or ``seed`` is not a valid
        integer.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> lp = np.random.default_rng(1).normal(size=(3, 40)) + np.array([[0.0], [0.0], [9.0]])
    >>> idata = to_inference_data({"mu": np.zeros((3, 40))}, sample_stats={"lp": lp})
    >>> fig = plot_lp(idata)
    >>> len(fig.axes[0].lines)          # one line per chain
    3
    """
    import matplotlib.pyplot as plt

    _check_common(max_chains, seed)
    if "sample_stats" not in idata.groups() or "lp" not in idata.sample_stats:
        raise ValueError("this result has no log joint (sample_stats.lp): its kernel defines no log_joint")
    lp_all = idata.sample_stats["lp"].transpose("chain", "draw").values
    n_chains, n_draws = lp_all.shape
    if n_draws == 0:
        raise ValueError("this result has no draws to plot")
    rhat = float(rhat_unguarded(lp_all))
    chosen, note = _chain_sample(n_chains, max_chains, seed)
    lp = lp_all[chosen]
    chain_ids = idata.sample_stats["chain"].values[chosen] if "chain" in idata.sample_stats.coords else chosen
    x, xlabel = _sweeps(idata, n_draws)
    warm, clipped = None, ""
    if warmup and "warmup_sample_stats" in idata.groups() and "lp" in idata.warmup_sample_stats:
        warm = idata.warmup_sample_stats["lp"].transpose("chain", "draw").values[chosen]
    colours = _colours(len(chosen))

    if ax is None:
        fig, (tax, dax) = plt.subplots(
            1, 2, figsize=(11, 4.2), sharey=True, gridspec_kw={"width_ratios": [4, 1], "wspace": 0.04}
        )
    else:
        tax, dax, fig = ax, None, ax.figure
    if warm is not None and warm.shape[1] > 0:
        tax.axvspan(0, warm.shape[1] - 1, color="0.92", zorder=0, label="warm-up")
        wx = np.arange(warm.shape[1])
    tails = []
    for i, c in enumerate(chain_ids):
        if warm is not None and warm.shape[1] > 0:
            tax.plot(wx, warm[i], color=colours[i], lw=0.6, alpha=0.5)
        tax.plot(x, lp[i], color=colours[i], lw=0.7, alpha=0.85, label=f"chain {c}")
        if dax is not None:
            dens = _density(lp[i])
            if dens is None:
                dax.axhline(lp[i][0], color=colours[i], lw=1)
            else:
                dax.plot(dens[1], dens[0], color=colours[i], lw=1)
                tails.append(dens[0][dens[1] > 0.01 * dens[1].max()])  # the density's visible reach
    # y range from the sampling phase: the warm-up's climb (often far below) would flatten it
    finite = np.concatenate([lp[np.isfinite(lp)]] + tails)
    if finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        pad = 0.03 * (hi - lo) if hi > lo else max(1.0, 1e-3 * abs(lo))
        tax.set_ylim(lo - pad, hi + pad)
        if warm is not None and warm.shape[1] > 0:
            wfin = warm[np.isfinite(warm)]
            below = wfin[wfin < lo - pad]
            if below.size or (wfin > hi + pad).any():
                start = f" (it starts at {np.min(wfin):,.0f})".replace("-", "\u2212") if below.size else ""
                clipped = f"y axis: the sampling phase's range; the warm-up (shaded) is clipped{start}"
    tax.set_xlabel(xlabel)
    tax.set_ylabel("log joint lp")
    title = "log joint lp per chain"
    if np.isfinite(rhat):
        title += f": R-hat {rhat:.3f} over all {n_chains} chains"
        title += "  (chains agree)" if rhat < RHAT_LIMIT else "  (chains disagree)"
    for line in (note, clipped):
        title += f"\n{line}" if line else ""
    tax.set_title(title, fontsize=10, loc="left")
    if dax is not None:
        dax.set_xlabel("density")
        dax.tick_params(labelleft=False)
        dax.set_xticks([])
    if len(chosen) <= 32:
        tax.legend(loc="upper left", bbox_to_anchor=(1.0 if dax is None else 1.27, 1.0), fontsize=8,
                   frameon=False, ncol=1 if len(chosen) <= 16 else 2)
    return fig


# ============================================================================ trace / rank
def plot_trace(
    idata,
    var_names: Sequence[str] | str | None = None,
    *,
    max_per_panel: int | None = None,
    max_chains: int | None = MAX_CHAINS,
    max_panels: int = 24,
    seed: int = 0,
    ncols: int | None = None,
):
    """Trace and density of each variable, one colour per chain, small panels in a grid.

    Each panel is one component of a variable (``topic_share[topic=3]``): its
    draws against the sweep, one colour per chain (the colours of
    :func:`plot_lp`, named in one legend under the figure), and beside them
    each chain's density, drawn sideways on the same y axis: chains in one
    mode overlap, a chain elsewhere sits apart.  ``max_per_panel``: put up to
    this many components of a variable into one panel instead (still one
    colour per chain; each component's name is written at the right end of
    its lines).  At most ``max_panels`` panels are drawn, a fair share per
    variable (``lp`` is never crowded out); the figure says when components
    were left out.  ``ncols``: panels per row (default from their number).

    ``var_names`` defaults to :func:`variable_names` (the posterior and
    ``lp``) less the variables that have a ``<name>_sorted`` twin (the HMMs'
    and mixtures' ``emission``/``emission_sorted``): the sorted,
    label-invariant copy is drawn and the figure says which were left out;
    name them in ``var_names`` (``--var``) to draw them.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    var_names : str or sequence of str, optional
        The variables to draw (default above).
    max_per_panel : int, optional
        Put up to this many components of a variable into one panel.
    max_chains : int or None, default MAX_CHAINS
        Draw at most this many chains, a random sample when there are more
        (None: all).
    max_panels : int, default 24
        Panels drawn at most.
    seed : int, default 0
        Seed of the sample of chains.
    ncols : int, optional
        Panels per row (default from their number).

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        When a name in ``var_names`` is unknown, the result has no draws, or an
        integer argument is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> share = np.random.default_rng(0).dirichlet(np.ones(32), size=(2, 30))
    >>> idata = to_inference_data({"topic_share": share}, dims={"topic_share": ["topic"]})
    >>> fig = plot_trace(idata, max_per_panel=8)
    >>> len(fig.axes)                   # 4 panels of (density, trace)
    8
    >>> len(plot_trace(idata).axes) // 2  # one topic a panel, at most max_panels
    24
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    _check_common(max_chains, seed)
    per_panel = 1 if max_per_panel is None else check_int("max_per_panel", max_per_panel, 1)
    check_int("max_panels", max_panels, 1)
    if ncols is not None:
        check_int("ncols", ncols, 1)
    var_names, notes = _default_names(idata, var_names)
    ds = _draws(idata, var_names)
    n_chains, n_draws = int(ds.sizes["chain"]), int(ds.sizes["draw"])
    if n_draws == 0:
        raise ValueError("this result has no draws to plot")
    chosen, note = _chain_sample(n_chains, max_chains, seed)
    notes = ([note] if note else []) + notes
    ds = ds.isel(chain=chosen)
    chain_ids = ds["chain"].values if "chain" in ds.coords else chosen
    x, xlabel = _sweeps(idata, n_draws)

    per_var = [(str(name), *_components(da)) for name, da in ds.data_vars.items()]
    allot = _budget([-(-v.shape[2] // per_panel) for _, v, _, _ in per_var], max_panels)
    cells = []  # (name, values (chain, draw, k), labels, dims, total components)
    for (name, values, labels, dims), n_cells in zip(per_var, allot):
        total = values.shape[2]
        for start in range(0, min(total, n_cells * per_panel), per_panel):
            stop = min(start + per_panel, total)
            cells.append((name, values[:, :, start:stop], labels[start:stop], dims, total))
        if n_cells * per_panel < total:
            notes.append(f"{name}: first {min(total, n_cells * per_panel)} of {total} components shown "
                         f"(at most {max_panels} panels; choose variables with var_names, --var)")

    n = len(cells)
    cols = min(ncols, n) if ncols is not None else (1 if n == 1 else 2 if n <= 4 else 3 if n <= 9 else 4)
    rows_n = -(-n // cols)
    fig = plt.figure(figsize=(max(9.0, 3.4 * cols + 1.4), 1.7 * rows_n + 0.9 + 0.18 * len(notes)),
                     layout="constrained")
    fig.get_layout_engine().set(w_pad=0.04, h_pad=0.04, wspace=0.03, hspace=0.03)
    grid = fig.add_gridspec(rows_n, cols)
    colours = _colours(len(chosen))
    first = None
    for idx, (name, vals, labels, dims, total) in enumerate(cells):
        sub = grid[idx // cols, idx % cols].subgridspec(1, 2, width_ratios=[4, 1], wspace=0.0)
        dax = fig.add_subplot(sub[0, 1])  # density first: fig.axes alternates density, trace
        tax = fig.add_subplot(sub[0, 0], sharey=dax, sharex=first)
        first = first or tax
        n_comp = vals.shape[2]
        for k in range(n_comp):
            for i, c in enumerate(chain_ids):
                tax.plot(x, vals[i, :, k], color=colours[i], lw=0.6, alpha=0.8,
                         label=f"chain {c}" if k == 0 else None)
                dens = _density(vals[i, :, k])
                if dens is not None:
                    dax.plot(dens[1], dens[0], color=colours[i], lw=0.8, alpha=0.8)
                else:
                    dax.axhline(vals[i, 0, k], color=colours[i], lw=0.8, alpha=0.8)
        if n_comp > 1:  # name each component at the right end of its lines
            tail = vals[:, -max(1, n_draws // 10):, :]
            for k, level in enumerate(np.median(tail.reshape(-1, n_comp), axis=0)):
                tax.text(0.995, level, _short(labels[k], 12), transform=tax.get_yaxis_transform(),
                         ha="right", va="center", fontsize=6, color="0.2",
                         bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.6})
        if n_comp == 1:
            title = _component_title(name, dims, labels[0])
        else:
            title = f"{name}[{'×'.join(dims)} {labels[0]} … {labels[-1]}]"
        tax.set_title(_short(title, 44), fontsize=8, loc="left")
        tax.tick_params(labelsize=7)
        tax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        tax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        tax.ticklabel_format(axis="y", useOffset=False)
        if idx + cols < n:  # another panel below in this column: its x axis says the sweep
            tax.tick_params(labelbottom=False)
        else:
            tax.set_xlabel(xlabel, fontsize=8)
        dax.tick_params(left=False, labelleft=False, bottom=False, labelbottom=False)
        dax.set_xlim(left=0)
        for side in ("top", "right"):
            dax.spines[side].set_visible(False)
    if 2 <= len(chosen) <= 16:
        handles = [Line2D([], [], color=colours[i], lw=1.5) for i in range(len(chosen))]
        fig.legend(handles, [f"chain {c}" for c in chain_ids], loc="outside lower center",
                   ncol=min(len(chosen), 8), fontsize=7, frameon=False)
    if notes:
        fig.suptitle("\n".join(notes), fontsize=8)
    return fig


def plot_rank(
    idata,
    var_names: Sequence[str] | str | None = None,
    *,
    max_chains: int | None = MAX_CHAINS,
    max_panels: int = 40,
    ncols: int = 4,
    seed: int = 0,
):
    """Rank plots: per chain, the histogram of the ranks of its draws among the pooled draws.

    The pooled draws are those of all chains shown (Vehtari et al. 2021,
    Bayesian Analysis 16(2), §4.1); one panel per scalar component, ``lp``
    included.

    Chains stack bottom to top, each with a dashed line at the count expected
    when every chain samples the same distribution: flat histograms mean the
    chains mix, a chain whose ranks pile up at one end sits apart.  The layout
    follows ``az.plot_rank``; each chain is one filled step outline (not one
    bar per bin), so many panels draw in a second.  By default a variable with
    a ``<name>_sorted`` twin is left out, as in :func:`plot_trace`.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    var_names : str or sequence of str, optional
        The variables to draw (default as in :func:`plot_trace`).
    max_chains : int or None, default MAX_CHAINS
        Draw at most this many chains, a random sample when there are more
        (None: all); ranks are then those within the sample.
    max_panels : int, default 40
        Panels drawn at most.
    ncols : int, default 4
        Panels per row.
    seed : int, default 0
        Seed of the sample of chains.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        When a name in ``var_names`` is unknown, the result has no draws, or an
        integer argument is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> rng = np.random.default_rng(0)
    >>> idata = to_inference_data({"mu": rng.normal(size=(4, 100))},
    ...                           sample_stats={"lp": rng.normal(size=(4, 100))})
    >>> fig = plot_rank(idata, ["mu", "lp"])
    >>> len(fig.axes)
    2
    """
    import matplotlib.pyplot as plt
    from scipy.stats import rankdata

    _check_common(max_chains, seed)
    check_int("max_panels", max_panels, 1)
    check_int("ncols", ncols, 1)
    var_names, left_out = _default_names(idata, var_names)
    ds = _draws(idata, var_names)
    n_draws = int(ds.sizes["draw"])
    if n_draws == 0:
        raise ValueError("this result has no draws to plot")
    chosen, note = _chain_sample(int(ds.sizes["chain"]), max_chains, seed)
    ds = ds.isel(chain=chosen)
    chain_ids = ds["chain"].values if "chain" in ds.coords else chosen
    n_chains = len(chosen)
    per_var = [(str(name), *_components(da)) for name, da in ds.data_vars.items()]
    allot = _budget([v.shape[2] for _, v, _, _ in per_var], max_panels)
    panels = []  # (title, values (chain, draw)): titles as plot_trace's
    notes = ([note] if note else []) + left_out
    for (name, values, labels, dims), n_panels in zip(per_var, allot):
        panels += [(_short(_component_title(name, dims, label), 44), values[:, :, k])
                   for k, label in enumerate(labels[:n_panels])]
        if n_panels < len(labels):
            notes.append(f"{name}: first {n_panels} of {len(labels)} components shown "
                         f"(at most {max_panels} panels; choose variables with var_names, --var)")

    bins = int(np.clip(round(np.sqrt(n_draws)), 4, 20))
    edges = np.linspace(0, n_chains * n_draws, bins + 1)
    expected = n_draws / bins
    colours = _colours(n_chains)
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, (1.0 + 0.18 * n_chains) * nrows + 0.6),
                             squeeze=False)
    flat = list(np.ravel(axes))
    for ax, (title, x) in zip(flat, panels):
        ranks = rankdata(x, method="average").reshape(x.shape) - 0.5  # pooled ranks in (0, C·D)
        counts = np.stack([np.histogram(ranks[i], bins=edges)[0] for i in range(n_chains)])
        scale = 0.9 / max(2 * expected, counts.max())  # one scale per panel; a row is at most 0.9 high
        for i in range(n_chains):
            height = scale * counts[i]
            ax.fill_between(edges, i, i + np.append(height, height[-1]), step="post", color=colours[i],
                            alpha=0.85, lw=0)
        ax.hlines(np.arange(n_chains) + scale * expected, 0, edges[-1], colors="k", linestyles="--", lw=0.7)
        ax.set_yticks(np.arange(n_chains) + 0.45)
        ax.set_yticklabels([str(c) for c in chain_ids], fontsize=6 if n_chains > 8 else 8)
        ax.set_xlim(0, edges[-1])
        ax.set_ylim(0, n_chains)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(title, fontsize=8, loc="left")
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("chain", fontsize=8)
    for ax in flat[:len(panels)][-ncols:]:
        ax.set_xlabel("rank (chains shown)" if note else "rank (all chains)", fontsize=8)
    _finish(fig, notes)
    return fig


# ============================================================================ agreement
def plot_agreement(idata, *, ax=None, max_chains: int | None = 32, seed: int = 0, annotate: bool | None = None):
    """Which chains reproduce which topic (cluster): a chains × components heatmap.

    Colour: each chain's distance to the reference chain, per aligned
    component (``agreement.distance_to_reference``); a square frame marks the
    cells within the threshold (``agreement.reproduced``).  The title gives the
    verdict, the threshold and the rule; the x labels give each component's
    R-hat, the y labels mark the reference chain and print the agreeing chains
    in bold.

    The ``agreement`` group holds ``distance_to_reference`` and ``reproduced``
    (dims ``chain`` × the component dim), ``rhat`` (the component dim) and the
    attributes ``component_dim``, ``threshold``, ``reference_chain``, ``rule``,
    ``verdict`` and ``agreeing_chains`` (a JSON list).

    Parameters
    ----------
    idata : arviz.InferenceData
        A result with an ``agreement`` group.
    ax : matplotlib.axes.Axes, optional
        Draw on this axes.
    max_chains : int or None, default 32
        Draw at most this many chains, a random sample that always holds the
        reference chain (None: all).
    seed : int, default 0
        Seed of that sample.
    annotate : bool, optional
        Write the distances in the cells (default: when the cells are big
        enough for a readable number; the font size follows the cell size, the
        text colour the cell's darkness).

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        When the result has no ``agreement`` group (LDA and the mixtures write
        one after alignment when several chains run), or ``max_chains`` or
        ``seed`` is not a valid integer.

    Examples
    --------
    >>> fig = plot_agreement(model.idata_)          # doctest: +SKIP
    """
    import matplotlib.pyplot as plt

    _check_common(max_chains, seed)
    if "agreement" not in idata.groups():
        raise ValueError(
            "this result has no agreement group (written by the LDA and mixture post-processing "
            "when several chains run)"
        )
    ag = idata["agreement"]
    attrs = ag.attrs
    comp = str(attrs.get("component_dim", ""))
    if comp not in ag["distance_to_reference"].dims:
        raise ValueError(f"agreement group: component_dim {comp!r} is not a dim of distance_to_reference")
    dist = ag["distance_to_reference"].transpose("chain", comp)
    chains_all = dist["chain"].values if "chain" in dist.coords else np.arange(dist.sizes["chain"])
    reference = int(attrs.get("reference_chain", chains_all[0]))
    agreeing = set(int(c) for c in json.loads(str(attrs.get("agreeing_chains", "[]")) or "[]"))
    ref_pos = [i for i, c in enumerate(chains_all) if int(c) == reference]
    chosen, note = _chain_sample(len(chains_all), max_chains, seed, keep=ref_pos)
    d = np.asarray(dist.values, dtype=np.float64)[chosen]
    rep = (ag["reproduced"].transpose("chain", comp).values[chosen] != 0) if "reproduced" in ag else None
    chain_ids = [int(c) for c in chains_all[chosen]]
    comps = [str(v) for v in (dist[comp].values if comp in dist.coords else range(dist.sizes[comp]))]
    rhat = ag["rhat"].values if "rhat" in ag else None
    threshold = float(attrs["threshold"]) if "threshold" in attrs else None

    n_rows, n_cols = d.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(min(3.4 + 0.6 * n_cols, 30), min(2.4 + 0.36 * n_rows, 30)),
                               layout="constrained")
    else:
        fig = ax.figure
    top = np.nanmax(d) if np.isfinite(d).any() else 1.0
    vmax = max(top, 2 * threshold if threshold else 0.0, 1e-12)
    image = ax.imshow(d, cmap="Reds", vmin=0.0, vmax=vmax, aspect="auto", interpolation="nearest")
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("distance to the reference chain", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    if threshold is not None:
        bar.ax.axhline(threshold, color="k", lw=1.2)
    fig.draw_without_rendering()  # laid out: the heatmap's width wraps the title
    box = ax.get_window_extent()
    ax.set_xticks(range(n_cols))
    if rhat is not None:
        ax.set_xticklabels([f"{k}\n{float(r):.2f}" for k, r in zip(comps, rhat)], fontsize=7)
        ax.set_xlabel(f"{comp} (R-hat below)", fontsize=9)
    else:
        ax.set_xticklabels(comps, fontsize=7)
        ax.set_xlabel(comp, fontsize=9)
    ax.set_yticks(range(n_rows))
    ax.set_yticklabels([f"chain {c}" + (" (reference)" if c == reference else "") for c in chain_ids], fontsize=7)
    for label, c in zip(ax.get_yticklabels(), chain_ids):
        if c in agreeing:
            label.set_fontweight("bold")
    lines = [str(attrs.get("verdict", "")).strip() or f"agreement of chains per {comp}"]
    detail = []
    if threshold is not None:
        detail.append(f"threshold {threshold:g}")
    if attrs.get("rule"):
        detail.append(f"rule: {attrs['rule']}")
    if rep is not None and rep.any():
        detail.append("framed: reproduced (within the threshold)")
    if agreeing:
        detail.append("bold: agreeing chains")
    if detail:
        lines.append("; ".join(detail))
    if note:
        lines.append(note)
    width = max(40, int(box.width * 72.0 / fig.dpi / (9 * 0.55)))  # characters across the heatmap
    ax.set_title("\n".join(textwrap.fill(line, width) for line in lines), fontsize=9, loc="left")
    # the cell size in points, once laid out with the title: frames and numbers fit inside a cell
    fig.draw_without_rendering()
    box = ax.get_window_extent()
    cell_w, cell_h = (72.0 / fig.dpi) * box.width / n_cols, (72.0 / fig.dpi) * box.height / n_rows
    if rep is not None and rep.any():
        r, c = np.nonzero(rep)
        side = 0.78 * min(cell_w, cell_h)  # a square frame inside the cell (marker size: points)
        ax.scatter(c, r, s=side ** 2, marker="s", facecolors="none", edgecolors="k",
                   linewidths=max(0.6, min(1.5, side / 20)))
    # "0.37": four characters about 0.6 em wide each; a line about 1.2 em high
    size = min(9.0, 0.85 * cell_w / (4 * 0.6), 0.6 * cell_h / 1.2)
    if annotate is None:
        annotate = size >= 5.5
    if annotate:
        colours = image.cmap(image.norm(d))
        for i in range(n_rows):
            for j in range(n_cols):
                if np.isfinite(d[i, j]):
                    red, green, blue = colours[i, j, :3]
                    dark = 0.2126 * red + 0.7152 * green + 0.0722 * blue < 0.5  # relative luminance
                    ax.text(j, i, f"{d[i, j]:.2f}", ha="center", va="center", fontsize=max(size, 4.0),
                            color="white" if dark else "black")
    return fig


# ============================================================================ top words
def _word_matrix(idata):
    """(K, V) word distributions, component labels, vocabulary, the component dim name and
    what the components were matched to (the mixtures' ``cluster_labels``, else {})."""
    if "topics" in idata.groups() and "topic_word" in idata.topics:
        da = idata.topics["topic_word"]
        comp_dim, word_dim = da.dims[0], da.dims[-1]
        fallbacks = [idata["posterior_mean"]] if "posterior_mean" in idata.groups() else []
        matched = {}
    elif "estimates" in idata.groups():
        est = idata.estimates
        word_var = str(est.attrs.get("word_var", ""))
        names = [f"{word_var}_mean"] if f"{word_var}_mean" in est else [
            str(n) for n, v in est.data_vars.items() if str(n).endswith("_mean") and v.ndim == 2]
        if not names:
            raise ValueError("the estimates group holds no word distributions (<var>_mean, class × word)")
        da = est[names[0]]
        comp_dim, word_dim = da.dims
        fallbacks = [idata.posterior] + ([idata["posterior_mean"]] if "posterior_mean" in idata.groups() else [])
        matched = json.loads(str(est.attrs["cluster_labels"])) if "cluster_labels" in est.attrs else {}
    else:
        raise ValueError(
            "this result has no word distributions to plot: need a topics group (LDA) or an "
            f"estimates group (mixtures, naive Bayes); groups: {', '.join(idata.groups())}"
        )
    matrix = np.asarray(da.transpose(comp_dim, word_dim).values, dtype=np.float64)
    vocab = None
    for source in [da, *fallbacks]:
        if word_dim in source.coords and source[word_dim].size == matrix.shape[1] \
                and source[word_dim].dtype.kind in "OUS":
            vocab = [str(w) for w in source[word_dim].values]
            break
    if vocab is None:
        vocab = [f"#{j}" for j in range(matrix.shape[1])]
    comps = [str(v) for v in (da[comp_dim].values if comp_dim in da.coords else range(matrix.shape[0]))]
    return matrix, comps, vocab, str(comp_dim), matched


def plot_top_words(idata, n: int = 10, *, ncols: int = 4, components: Sequence[int] | None = None,
                   max_panels: int = 64):
    """The ``n`` most probable words of each topic (cluster, class) as horizontal bars.

    One small panel per component, most probable word on top.  Reads LDA's
    ``topics.topic_word`` or the mixtures' / naive Bayes' ``estimates.<var>_mean``;
    words are named by the vocabulary stored in the result (else ``#id``).
    With an ``agreement`` group for the same components, each title says how
    many chains reproduce that component.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result with a ``topics`` or ``estimates`` group.
    n : int, default 10
        Words per component.
    ncols : int, default 4
        Panels per row.
    components : sequence of int, optional
        Positions of the components to draw (default all, at most ``max_panels``).
    max_panels : int, default 64
        Panels drawn at most.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        When the result has neither group, a position in ``components`` is out
        of range, or an integer argument is out of range.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"mu": np.zeros((1, 2))})
    >>> phi = np.random.default_rng(0).dirichlet(np.ones(20), size=3)
    >>> idata.add_groups({"topics": xr.Dataset({"topic_word": (("topic", "word"), phi)},
    ...                                       coords={"word": [f"w{j}" for j in range(20)]})})
    >>> fig = plot_top_words(idata, n=5)
    >>> [len(ax.patches) for ax in fig.axes if ax.get_visible()]
    [5, 5, 5]
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    check_int("n", n, 1)
    check_int("ncols", ncols, 1)
    check_int("max_panels", max_panels, 1)
    matrix, comps, vocab, comp_dim, matched = _word_matrix(idata)
    k_all = matrix.shape[0]
    if components is None:
        index = list(range(k_all))
    else:
        index = [check_int("components", c, 0) for c in components]
        bad = [c for c in index if c >= k_all]
        if bad:
            raise ValueError(f"components: {bad[0]} is out of range, this result has {k_all} {comp_dim}s")
    note = ""
    if len(index) > max_panels:
        note = f"first {max_panels} of {len(index)} {comp_dim}s shown"
        index = index[:max_panels]
    reproduced = None
    if "agreement" in idata.groups() and str(idata["agreement"].attrs.get("component_dim")) == comp_dim \
            and "reproduced" in idata["agreement"]:
        rep = idata["agreement"]["reproduced"].transpose("chain", comp_dim).values
        if rep.shape[1] == k_all:
            reproduced = (rep != 0).sum(axis=0), rep.shape[0]

    n_words = min(n, matrix.shape[1])
    ncols = max(1, min(ncols, len(index)))
    nrows = -(-len(index) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.0 * ncols, 0.22 * n_words * nrows + 0.75 * nrows + 0.4),
                             squeeze=False)
    flat = list(np.ravel(axes))
    for ax, k in zip(flat, index):
        order = np.argsort(-matrix[k], kind="stable")[:n_words]
        ax.barh(np.arange(n_words), matrix[k, order], color="C0")
        ax.set_yticks(np.arange(n_words))
        ax.set_yticklabels([vocab[j] for j in order], fontsize=7)
        ax.invert_yaxis()  # most probable on top
        ax.tick_params(axis="x", labelsize=6)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=3))
        title = f"{comp_dim} {comps[k]}" + (f" (~{matched[comps[k]]})" if matched.get(comps[k]) else "")
        if reproduced is not None:
            title += f"  ({int(reproduced[0][k])}/{reproduced[1]} chains)"
        ax.set_title(title, fontsize=8, loc="left")
    for ax in flat[len(index):]:
        ax.set_visible(False)
    for ax in flat[:len(index)][-ncols:]:
        ax.set_xlabel("probability", fontsize=7)
    _finish(fig, [note] if note else [])
    return fig


# ============================================================================ stable topics
def plot_stable_topics(idata, *, max_rare: int = 10, n_words: int = 5):
    """Which topics recur across chains (:mod:`gibbsjax.topics.stable`), as horizontal bars.

    One bar per stable topic, its length the share of chains that hold it, then
    the ``max_rare`` most recurrent rare topics in grey.  Each bar is labelled by
    the cluster's top ``n_words`` words; beside it the number of chains, the
    spread (mean and largest Hellinger distance of the chains' topics to the
    cluster's centre) and R-hat over the chains that hold it, written clear of
    the dashed line that marks ``min_share`` (inside the bar's end when there
    is no room before 100%).  The title gives the verdict; what is left out is
    said under the axes.

    Parameters
    ----------
    idata : arviz.InferenceData or gibbsjax.topics.stable.StableTopics
        An LDA result (its ``stable_topics`` group, or computed from its
        per-chain estimates) or the stable topics themselves.
    max_rare : int, default 10
        Rare topics drawn at most.
    n_words : int, default 5
        Top words in each bar's label.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Examples
    --------
    >>> import numpy as np
    >>> from gibbsjax.topics.stable import stable_topics
    >>> est = np.array([[[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]], [[0.1, 0.1, 0.8], [0.8, 0.1, 0.1]],
    ...                 [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]]])
    >>> fig = plot_stable_topics(stable_topics(est, vocab=["apple", "bond", "cat"]))
    >>> len(fig.axes[0].patches)
    3
    """
    import matplotlib.pyplot as plt

    from gibbsjax.topics.stable import StableTopics, stable_topics_of

    check_int("max_rare", max_rare, 0)
    check_int("n_words", n_words, 1)
    st = idata if isinstance(idata, StableTopics) else stable_topics_of(idata)
    rows = st.table() + st.table(rare=True)[:max_rare]
    n = len(rows)
    fig, ax = plt.subplots(figsize=(9.0, 1.2 + 0.34 * max(n, 1)))
    y = np.arange(n)
    share = np.array([r["share"] for r in rows])
    colours = ["C0" if r["cluster"] < st.num_stable else "0.65" for r in rows]
    ax.barh(y, share, color=colours, height=0.7, zorder=2)
    ax.axvline(st.min_share, color="k", ls="--", lw=0.8, zorder=2.5)
    labels = []
    for r in rows:
        kind = "stable" if r["cluster"] < st.num_stable else "rare"
        words = " ".join(r["top_words"][:n_words]) if r["top_words"] else ""
        labels.append(f"{kind} {r['cluster']}: {_short(words, 40)}" if words else f"{kind} {r['cluster']}")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.0)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xticklabels(["0", "25%", "50%", "75%", "100%"], fontsize=7)
    notes = [f"{st.num_rare - min(max_rare, st.num_rare)} more rare topics not drawn"] if st.num_rare > max_rare else []
    if st.num_unclustered:
        notes.append(f"{st.num_unclustered} topics of chains beyond the first {st.seed_chains} match no cluster")
    ax.set_xlabel("\n".join([f"share of the {st.num_chains} chains that hold the topic"] + notes), fontsize=8)
    title = st.verdict + (f"\nHellinger threshold {st.threshold:g}; dashed: min_share {st.min_share:g}; "
                          "grey: rare topics" if n else "")
    ax.set_title(title, fontsize=9, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    for i, r in enumerate(rows):
        _stable_label(ax, i, r, st.min_share)
    return fig


def _stable_label(ax, i: int, r: dict, line: float) -> None:
    """Write row ``i``'s chains, spread and R-hat beside its bar, clear of the dashed ``line``
    (min_share) and inside the axes: past the bar's end; past the line when the bar stops short of
    it; inside the bar's end when there is no room on the right; on two lines when one is too long."""
    chains = f"{r['chains']} chain" + ("" if r["chains"] == 1 else "s")
    stats = [f"spread {r['spread_mean']:.2f} (max {r['spread_max']:.2f})"] if r["chains"] > 1 else []
    stats += [f"R-hat {r['rhat']:.2f}"] if np.isfinite(r["rhat"]) else []
    texts = [", ".join([chains] + stats)] + ([f"{chains}, {stats[-1]}\n{stats[0]}"] if len(stats) == 2 else [])
    share = min(float(r["share"]), 1.0)
    renderer = ax.figure.canvas.get_renderer()
    to_data = ax.transData.inverted()
    pad = 0.01
    box = {"boxstyle": "square,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
    widths = []
    for text in texts:
        t = ax.text(0, i, text, va="center", fontsize=7, bbox=box, zorder=3, linespacing=1.0)
        ext = t.get_window_extent(renderer)
        widths.append(abs(to_data.transform((ext.x1, 0))[0] - to_data.transform((ext.x0, 0))[0]) + 2 * pad)
        t.remove()
    # (x, ha) by preference: just past the bar, past the line (bar short of it), inside the bar's end;
    # at each, one line if it fits, else two
    spots = [(share + pad, "left")] + ([(line + pad, "left")] if share < line else []) + [(share - pad, "right")]
    for x, ha in spots:
        for text, width in zip(texts, widths):
            lo, hi = (x, x + width) if ha == "left" else (x - width, x)
            if hi <= 1.0 and lo >= 0 and not lo < line < hi:
                ax.text(x, i, text, va="center", ha=ha, fontsize=7, bbox=box, zorder=3, linespacing=1.0)
                return
    ax.text(share - pad, i, texts[-1], va="center", ha="right", fontsize=7, bbox=box, zorder=3,
            linespacing=1.0)  # no room clear of the line: the white box hides the line


def plot_stability(table):
    """The table of :func:`gibbsjax.topics.choose_k.choose_num_topics` against K.

    Three panels share the K axis: stability (with the share of stable topics),
    held-out perplexity and the stable topics' mean coherence; the most stable K
    is marked in each.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`gibbsjax.topics.choose_k.choose_num_topics`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        When ``table`` lacks a column it needs, or has no rows.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"K": [5, 10, 15], "stability": [0.4, 0.9, 0.8], "stable_share": [0.6, 1.0, 0.9],
    ...                   "perplexity": [30.0, 21.0, 21.5], "coherence": [-0.9, -0.8, -0.85]})
    >>> [len(ax.lines) for ax in plot_stability(t).axes]
    [3, 2, 2]
    """
    import matplotlib.pyplot as plt

    missing = [c for c in ("K", "stability") if c not in getattr(table, "columns", ())]
    if missing:
        raise ValueError(f"table must be choose_num_topics' table (columns K, stability, ...); missing {missing}")
    ks = np.asarray(table["K"], dtype=np.float64)
    if ks.size == 0:
        raise ValueError("table has no rows")
    best = ks[int(np.nanargmax(np.asarray(table["stability"], np.float64)))]
    panels = [("stability", "stability (higher: chains agree)"), ("perplexity", "held-out perplexity"),
              ("coherence", "coherence of the stable topics")]
    panels = [(c, label) for c, label in panels if c in table.columns]
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.0, 1.9 * len(panels) + 0.6), sharex=True, squeeze=False)
    for ax, (column, label) in zip(axes[:, 0], panels):
        ax.plot(ks, np.asarray(table[column], np.float64), "o-", color="C0", label=column)
        if column == "stability" and "stable_share" in table.columns:
            ax.plot(ks, np.asarray(table["stable_share"], np.float64), "s--", color="C1", ms=4,
                    label="stable topics / K")
            ax.legend(fontsize=7, frameon=False)
        ax.axvline(best, color="0.5", ls=":", lw=1)
        ax.set_ylabel(label, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("number of topics K", fontsize=8)
    axes[-1, 0].set_xticks(ks)
    chains = table.attrs.get("num_chains")
    axes[0, 0].set_title(f"choosing K by stability: most stable K = {best:g}"
                         + (f" ({chains} chains per K)" if chains else ""), fontsize=9, loc="left")
    fig.tight_layout()
    return fig
