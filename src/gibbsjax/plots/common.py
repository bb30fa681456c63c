"""What both kinds of plots share: the variables and draws of a result, a fixed sample of chains,
densities, colours, panels and the notes under a figure."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gibbsjax._checks import check_int


#: chains drawn by default; larger runs are plotted from a random sample of chains
MAX_CHAINS = 16



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


def selected_draws(idata, var_names):
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


def default_names(idata, var_names):
    """``var_names``, or by default :func:`variable_names` less the variables that have a
    ``<name>_sorted`` twin (the sorted, label-invariant copy is drawn), and a note naming them.

    >>> import numpy as np
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"w": np.zeros((2, 3, 2)), "w_sorted": np.zeros((2, 3, 2))})
    >>> default_names(idata, None)[0]
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


def chain_sample(num_chains: int, max_chains, seed: int, keep: Sequence[int] = ()):
    """Positions of the chains to draw (sorted) and a note when they are a sample."""
    if max_chains is None or num_chains <= max_chains:
        return np.arange(num_chains), ""
    keep = np.unique(np.asarray(list(keep), dtype=np.int64))[:max_chains]
    rest = np.setdiff1d(np.arange(num_chains), keep)
    picked = np.random.default_rng(seed).choice(rest, size=max_chains - keep.size, replace=False)
    chosen = np.sort(np.concatenate([keep, picked]))
    return chosen, f"{max_chains} of {num_chains} chains shown (random sample, seed {seed})"


def check_common(max_chains, seed) -> None:
    if max_chains is not None:
        check_int("max_chains", max_chains, 1)
    check_int("seed", seed, 0)


def sweep_axis(idata, num_draws: int):
    """The sweep after which each kept draw was recorded, from the run's attributes."""
    try:
        warmup, thin = int(idata.attrs["num_warmup"]), int(idata.attrs["thin"])
    except (KeyError, TypeError, ValueError):
        return np.arange(num_draws), "draw"
    return warmup + thin * (1 + np.arange(num_draws)), "sweep"


def chain_density(x: np.ndarray):
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


def chain_colours(n: int):
    import matplotlib.pyplot as plt

    if n <= 10:
        cmap = plt.get_cmap("tab10")
        return [cmap(i) for i in range(n)]
    if n <= 20:
        cmap = plt.get_cmap("tab20")
        return [cmap(i) for i in range(n)]
    cmap = plt.get_cmap("viridis")
    return [cmap(i / (n - 1)) for i in range(n)]


def components_of(da):
    """``da`` (chain, draw, ...) as values (chain, draw, components), labels, dim names."""
    rest = [d for d in da.dims if d not in ("chain", "draw")]
    values = da.transpose("chain", "draw", *rest).values
    values = values.reshape(values.shape[0], values.shape[1], -1)
    if not rest:
        return values, [""], []
    axes = [[str(v) for v in (da[d].values if d in da.coords else range(da.sizes[d]))] for d in rest]
    labels = [",".join(axes[i][j] for i, j in enumerate(idx)) for idx in np.ndindex(*[len(a) for a in axes])]
    return values, labels, rest


def component_title(name: str, dims: Sequence[str], label: str) -> str:
    """The name of one component, the same in trace and rank plots: ``emission_sorted[rank=0, symbol=1]``.

    >>> component_title("topic_share", ["topic"], "3")
    'topic_share[topic=3]'
    >>> component_title("lp", [], "")
    'lp'
    """
    if not dims:
        return name
    return f"{name}[{', '.join(f'{d}={p}' for d, p in zip(dims, label.split(',')))}]"


def panel_budget(counts: Sequence[int], max_panels: int) -> list[int]:
    """Panels per variable when all of them would be more than ``max_panels``: a fair
    share each, small variables served first (so ``lp`` is never crowded out).

    >>> panel_budget([744, 1, 2], 6)
    [3, 1, 2]
    """
    allot = [0] * len(counts)
    remaining, left = max_panels, len(counts)
    for i in sorted(range(len(counts)), key=lambda j: counts[j]):
        allot[i] = min(counts[i], remaining // left)
        remaining -= allot[i]
        left -= 1
    return allot


def short_label(label: str, width: int = 28) -> str:
    return label if len(label) <= width else label[: width // 2 - 1] + "…" + label[-(width // 2):]


def finish_figure(fig, notes: Sequence[str]) -> None:
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
