"""Plots of convergence, for any model: the log joint per chain (:func:`plot_lp`), trace and rank
plots split into readable panels (:func:`plot_trace`, :func:`plot_rank`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gibbsjax._checks import check_int
from gibbsjax.diagnostics import RHAT_LIMIT, rhat_unguarded
from gibbsjax.plots.common import (MAX_CHAINS, chain_colours, chain_density, chain_sample, check_common, component_title,
                                   components_of, default_names, finish_figure, panel_budget, selected_draws, short_label,
                                   sweep_axis)


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

    check_common(max_chains, seed)
    if "sample_stats" not in idata.groups() or "lp" not in idata.sample_stats:
        raise ValueError("this result has no log joint (sample_stats.lp): its kernel defines no log_joint")
    lp_all = idata.sample_stats["lp"].transpose("chain", "draw").values
    n_chains, n_draws = lp_all.shape
    if n_draws == 0:
        raise ValueError("this result has no draws to plot")
    rhat = float(rhat_unguarded(lp_all))
    chosen, note = chain_sample(n_chains, max_chains, seed)
    lp = lp_all[chosen]
    chain_ids = idata.sample_stats["chain"].values[chosen] if "chain" in idata.sample_stats.coords else chosen
    x, xlabel = sweep_axis(idata, n_draws)
    warm, clipped = None, ""
    if warmup and "warmup_sample_stats" in idata.groups() and "lp" in idata.warmup_sample_stats:
        warm = idata.warmup_sample_stats["lp"].transpose("chain", "draw").values[chosen]
    colours = chain_colours(len(chosen))

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
            dens = chain_density(lp[i])
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
        The figure (its trace panels).

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

    check_common(max_chains, seed)
    per_panel = 1 if max_per_panel is None else check_int("max_per_panel", max_per_panel, 1)
    check_int("max_panels", max_panels, 1)
    if ncols is not None:
        check_int("ncols", ncols, 1)
    var_names, notes = default_names(idata, var_names)
    ds = selected_draws(idata, var_names)
    n_chains, n_draws = int(ds.sizes["chain"]), int(ds.sizes["draw"])
    if n_draws == 0:
        raise ValueError("this result has no draws to plot")
    chosen, note = chain_sample(n_chains, max_chains, seed)
    notes = ([note] if note else []) + notes
    ds = ds.isel(chain=chosen)
    chain_ids = ds["chain"].values if "chain" in ds.coords else chosen
    x, xlabel = sweep_axis(idata, n_draws)

    per_var = [(str(name), *components_of(da)) for name, da in ds.data_vars.items()]
    allot = panel_budget([-(-v.shape[2] // per_panel) for _, v, _, _ in per_var], max_panels)
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
    colours = chain_colours(len(chosen))
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
                dens = chain_density(vals[i, :, k])
                if dens is not None:
                    dax.plot(dens[1], dens[0], color=colours[i], lw=0.8, alpha=0.8)
                else:
                    dax.axhline(vals[i, 0, k], color=colours[i], lw=0.8, alpha=0.8)
        if n_comp > 1:  # name each component at the right end of its lines
            tail = vals[:, -max(1, n_draws // 10):, :]
            for k, level in enumerate(np.median(tail.reshape(-1, n_comp), axis=0)):
                tax.text(0.995, level, short_label(labels[k], 12), transform=tax.get_yaxis_transform(),
                         ha="right", va="center", fontsize=6, color="0.2",
                         bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.6})
        if n_comp == 1:
            title = component_title(name, dims, labels[0])
        else:
            title = f"{name}[{'×'.join(dims)} {labels[0]} … {labels[-1]}]"
        tax.set_title(short_label(title, 44), fontsize=8, loc="left")
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
        The figure, one panel per scalar component.

    Raises
    ------
    ValueError
        As in :func:`plot_trace`.

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

    check_common(max_chains, seed)
    check_int("max_panels", max_panels, 1)
    check_int("ncols", ncols, 1)
    var_names, left_out = default_names(idata, var_names)
    ds = selected_draws(idata, var_names)
    n_draws = int(ds.sizes["draw"])
    if n_draws == 0:
        raise ValueError("this result has no draws to plot")
    chosen, note = chain_sample(int(ds.sizes["chain"]), max_chains, seed)
    ds = ds.isel(chain=chosen)
    chain_ids = ds["chain"].values if "chain" in ds.coords else chosen
    n_chains = len(chosen)
    per_var = [(str(name), *components_of(da)) for name, da in ds.data_vars.items()]
    allot = panel_budget([v.shape[2] for _, v, _, _ in per_var], max_panels)
    panels = []  # (title, values (chain, draw)): titles as plot_trace's
    notes = ([note] if note else []) + left_out
    for (name, values, labels, dims), n_panels in zip(per_var, allot):
        panels += [(short_label(component_title(name, dims, label), 44), values[:, :, k])
                   for k, label in enumerate(labels[:n_panels])]
        if n_panels < len(labels):
            notes.append(f"{name}: first {n_panels} of {len(labels)} components shown "
                         f"(at most {max_panels} panels; choose variables with var_names, --var)")

    bins = int(np.clip(round(np.sqrt(n_draws)), 4, 20))
    edges = np.linspace(0, n_chains * n_draws, bins + 1)
    expected = n_draws / bins
    colours = chain_colours(n_chains)
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
    finish_figure(fig, notes)
    return fig
