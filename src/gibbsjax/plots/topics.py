"""Plots of components that chains may label differently (topics, clusters, states): the agreement
of chains on each (:func:`plot_agreement`), the top words of each topic (:func:`plot_top_words`), the
stable topics across chains (:func:`plot_stable_topics`) and the choice of K (:func:`plot_stability`)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence

import numpy as np

from gibbsjax._checks import check_int
from gibbsjax.plots.common import chain_sample, check_common, finish_figure, short_label


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
        The figure (a chains × components heatmap).

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

    check_common(max_chains, seed)
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
    chosen, note = chain_sample(len(chains_all), max_chains, seed, keep=ref_pos)
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
        The figure: one panel per component.

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
    finish_figure(fig, [note] if note else [])
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
        The figure: one bar per topic drawn.

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
        labels.append(f"{kind} {r['cluster']}: {short_label(words, 40)}" if words else f"{kind} {r['cluster']}")
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
        The figure, ``table`` against K.

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
