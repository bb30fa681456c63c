"""``gibbsjax.plots`` and ``gibbsjax plot --kind trace|rank|lp|agreement|words``.

Results are built by hand (numpy + ``to_inference_data``, groups following the
contracts of the LDA/mixture post-processing), saved as NetCDF and plotted in
process through ``gibbsjax.cli.main``; the PNGs are opened and checked.  What
a figure shows is checked on the returned matplotlib objects against the
arrays it was built from.  One tiny real LDA fit checks the top words against
the post-processing's own list.
"""

from __future__ import annotations

import json
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from gibbsjax import plots  # noqa: E402
from gibbsjax.cli import main  # noqa: E402
from gibbsjax.diagnostics import to_inference_data  # noqa: E402

C, D, K, V = 4, 60, 32, 40
THRESHOLD = 0.2


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _phi(k: int = K, v: int = V) -> np.ndarray:
    """Topic k puts decreasing mass on words k, k+1, k+2, ... (mod v): its top words are known."""
    weights = 0.5 ** np.arange(v)
    phi = np.stack([np.roll(weights, j) for j in range(k)])
    return phi / phi.sum(axis=1, keepdims=True)


def _agreement(rng, chains: int, comps: int, dim: str = "topic", reference: int = 0) -> xr.Dataset:
    dist = rng.uniform(0.0, 0.5, size=(chains, comps))
    dist[reference] = 0.0
    reproduced = (dist <= THRESHOLD).astype(np.int8)
    return xr.Dataset(
        {
            "distance": ((dim, "chain", "other_chain"), rng.uniform(0, 0.5, size=(comps, chains, chains))),
            "distance_to_reference": (("chain", dim), dist),
            "reproduced": (("chain", dim), reproduced),
            "rhat": ((dim,), rng.uniform(1.0, 1.3, size=comps)),
        },
        attrs={
            "component_dim": dim,
            "threshold": THRESHOLD,
            "reference_chain": reference,
            "rule": "the chain with the highest mean lp",
            "verdict": f"{int(reproduced.all(axis=0).sum())} of {comps} {dim}s reproduced by all {chains} chains",
            "agreeing_chains": json.dumps([reference, 2]),
        },
    )


def _lda_like(chains: int = C, draws: int = D, *, k: int = K, agreement: bool = True, seed: int = 0):
    """What an LDA result holds: topic_share, lp, a topics group, per-chain means, agreement."""
    rng = np.random.default_rng(seed)
    lp = rng.normal(size=(chains, draws)) + 25.0 * np.arange(chains)[:, None]  # chains at distinct levels
    idata = to_inference_data(
        {"topic_share": rng.dirichlet(np.ones(k), size=(chains, draws)), "mu": rng.normal(size=(chains, draws))},
        sample_stats={"lp": lp},
        dims={"topic_share": ["topic"]},
        attrs={"num_warmup": 100, "thin": 2},
    )
    phi = _phi(k)
    # like lda.postprocess: topics.topic_word has no word coords; posterior_mean has the vocabulary
    idata.add_groups({"topics": xr.Dataset({"topic_word": (("topic", "word"), phi)})})
    idata.add_groups({"posterior_mean": xr.Dataset(
        {"topic_word": (("chain", "topic", "word"), np.broadcast_to(phi, (chains, k, V)).copy())},
        coords={"chain": np.arange(chains), "word": [f"word{j}" for j in range(V)]},
    )})
    if agreement:
        idata.add_groups({"agreement": _agreement(rng, chains, k)})
    return idata


@pytest.fixture(scope="module")
def idata():
    """32 topics: for what the figures show (drawing many panels into PNGs takes seconds)."""
    return _lda_like()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The same with 6 topics, saved: for the command line."""
    path = tmp_path_factory.mktemp("plots") / "res.nc"
    _lda_like(k=6).to_netcdf(str(path))
    return path


def _assert_png(path, min_height=200, min_width=300):
    """A readable PNG that is not blank: big enough, many colours, a fair share of ink."""
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    h, w = img.shape[:2]
    assert h >= min_height and w >= min_width, img.shape
    rgb = img[..., :3].reshape(-1, 3)
    ink = np.mean(np.any(rgb < 0.9, axis=1))
    assert ink > 0.02, f"only {ink:.1%} of the pixels are not white"
    colours = np.round(rgb * 255).astype(np.uint8).astype(np.uint32)
    # the distinct colours, each packed in one integer: np.unique of the rows (axis=0) took seconds an image
    assert len(np.unique(colours[:, 0] << 16 | colours[:, 1] << 8 | colours[:, 2])) > 20
    return img


def _one_line_error(capsys, *fragments):
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: ") and err.count("\n") == 1, err
    for f in fragments:
        assert f in err, err
    return err


# ----------------------------------------------------------------------------- the command line
@pytest.mark.parametrize(
    "args",
    [
        ["--kind", "trace"],
        ["--kind", "rank"],
        ["--kind", "lp"],
        ["--kind", "agreement"],
        ["--kind", "words"],
        ["--kind", "trace", "--var", "lp"],
        ["--kind", "rank", "--var", "lp", "mu"],
        ["--var", "lp"],
    ],
    ids=lambda a: " ".join(a),
)
def test_every_kind_writes_a_png(small, tmp_path, capsys, args):
    path = small
    fig = tmp_path / "fig.png"
    assert main(["plot", str(path), *args, "-o", str(fig)]) == 0
    assert f"saved {fig}" in capsys.readouterr().out
    _assert_png(fig)


def test_default_output_name_per_kind(small, tmp_path):
    path = small
    local = tmp_path / "run.nc"
    local.write_bytes(path.read_bytes())
    assert main(["plot", str(local), "--kind", "lp"]) == 0
    _assert_png(tmp_path / "run_lp.png")


def test_trace_panels_follow_per_panel(small, tmp_path):
    """6 topics in one panel (one row), or one topic a panel by default (3 columns, 2 rows):
    the image grows with the rows."""
    path = small
    heights = {}
    for n in (6, None):
        fig = tmp_path / f"trace{n}.png"
        per_panel = [] if n is None else ["--per-panel", str(n)]
        assert main(["plot", str(path), "--var", "topic_share", *per_panel, "-o", str(fig)]) == 0
        heights[n] = _assert_png(fig, min_height=150).shape[0]
    assert heights[None] > 1.5 * heights[6]


def test_unknown_variable_lists_lp(small, capsys):
    path = small
    assert main(["plot", str(path), "--var", "nope"]) == 2
    _one_line_error(capsys, "unknown variable 'nope'", "variables: topic_share, mu, lp")


def test_no_agreement_group_is_one_line(tmp_path, capsys):
    path = tmp_path / "noag.nc"
    _lda_like(agreement=False).to_netcdf(str(path))
    assert main(["plot", str(path), "--kind", "agreement"]) == 2
    _one_line_error(capsys, "no agreement group")
    assert not (tmp_path / "noag_agreement.png").exists()


def test_no_words_no_lp_are_one_line(tmp_path, capsys):
    path = tmp_path / "plain.nc"
    to_inference_data({"mu": np.zeros((2, 5))}).to_netcdf(str(path))
    assert main(["plot", str(path), "--kind", "words"]) == 2
    _one_line_error(capsys, "no word distributions", "topics group", "estimates group")
    assert main(["plot", str(path), "--kind", "lp"]) == 2
    _one_line_error(capsys, "sample_stats.lp")


def test_var_only_with_trace_and_rank(small, capsys):
    path = small
    assert main(["plot", str(path), "--kind", "lp", "--var", "mu"]) == 2
    _one_line_error(capsys, "--var applies to --kind trace and rank")


def test_many_chains_through_the_cli(tmp_path, capsys):
    path = tmp_path / "big.nc"
    rng = np.random.default_rng(3)
    to_inference_data({"mu": rng.normal(size=(2000, 5))},
                      sample_stats={"lp": rng.normal(size=(2000, 5))}).to_netcdf(str(path))
    for kind in ("trace", "rank", "lp"):
        fig = tmp_path / f"big_{kind}.png"
        assert main(["plot", str(path), "--kind", kind, "--max-chains", "8", "-o", str(fig)]) == 0
        _assert_png(fig)


# ----------------------------------------------------------------------------- what the figures show
def _trace_axes(fig):
    """The right-hand (trace) axes of a plot_trace figure, top to bottom."""
    return fig.axes[1::2]


def test_trace_of_lp_draws_the_log_joint(idata):
    fig = plots.plot_trace(idata, ["lp"])
    (tax,) = _trace_axes(fig)
    lp = idata.sample_stats["lp"].values
    assert len(tax.lines) == C
    for c, line in enumerate(tax.lines):
        np.testing.assert_array_equal(line.get_ydata(), lp[c])
        np.testing.assert_array_equal(line.get_xdata(), 100 + 2 * (1 + np.arange(D)))  # sweeps: warm-up, thin


def test_trace_splits_many_components_into_panels(idata):
    share = idata.posterior["topic_share"].values
    for per_panel, panels in ((8, 4), (6, 6), (32, 1)):
        fig = plots.plot_trace(idata, ["topic_share"], max_per_panel=per_panel)
        assert len(fig.axes) == 2 * panels
        shown = []
        for tax in _trace_axes(fig):
            labels = [t.get_text() for t in tax.texts]  # each component named at the end of its lines
            assert len(labels) <= per_panel
            shown += [int(t) for t in labels]
            assert len(tax.lines) == len(labels) * C  # every chain of every component of the panel
            assert len({line.get_color() for line in tax.lines}) == C  # colours are chains, not topics
        assert shown == list(range(K))
        plt.close(fig)
    fig = plots.plot_trace(idata, ["topic_share"], max_per_panel=8)
    tax = _trace_axes(fig)[1]  # topics 8..15, chains 0..3 each
    np.testing.assert_array_equal(tax.lines[C * 2 + 3].get_ydata(), share[3, :, 10])


def test_panels_are_capped_without_crowding_out_lp(idata):
    """Over max_panels, every variable gets a fair share, the small ones first."""
    fig = plots.plot_trace(idata, max_per_panel=1, max_panels=5)
    assert [ax.get_title(loc="left") for ax in _trace_axes(fig)] == [
        "topic_share[topic=0]", "topic_share[topic=1]", "topic_share[topic=2]", "mu", "lp"]
    assert "topic_share: first 3 of 32 components shown" in fig.get_suptitle()
    fig = plots.plot_rank(idata, max_panels=6)
    assert [ax.get_title(loc="left") for ax in fig.axes if ax.get_visible()] == [
        "topic_share[topic=0]", "topic_share[topic=1]", "topic_share[topic=2]", "topic_share[topic=3]", "mu", "lp"]
    assert "topic_share: first 4 of 32 components shown" in fig.get_suptitle()


def test_default_variables_include_lp(idata):
    assert plots.variable_names(idata) == ["topic_share", "mu", "lp"]
    fig = plots.plot_trace(idata)
    assert [ax.get_title(loc="left") for ax in _trace_axes(fig)][-2:] == ["mu", "lp"]


def test_unknown_variable_is_a_value_error(idata):
    with pytest.raises(ValueError, match=r"unknown variable 'nope'; variables: topic_share, mu, lp"):
        plots.plot_rank(idata, ["nope"])


def test_lp_one_line_per_chain_and_rhat(idata):
    import arviz as az

    fig = plots.plot_lp(idata)
    tax, dax = fig.axes
    lp = idata.sample_stats["lp"].values
    assert len(tax.lines) == C and len(dax.lines) == C
    for c, line in enumerate(tax.lines):
        np.testing.assert_array_equal(line.get_ydata(), lp[c])
    assert [t.get_text() for t in tax.get_legend().get_texts()] == [f"chain {c}" for c in range(C)]
    assert len({line.get_color() for line in tax.lines}) == C  # a colour per chain
    title = tax.get_title(loc="left")
    assert f"R-hat {float(az.rhat(lp)):.3f} over all {C} chains" in title and "chains disagree" in title


def test_lp_shows_saved_warmup():
    rng = np.random.default_rng(5)
    idata = to_inference_data(
        {"mu": rng.normal(size=(2, 10))}, sample_stats={"lp": rng.normal(size=(2, 10))},
        warmup_posterior={"mu": rng.normal(size=(2, 6))}, warmup_sample_stats={"lp": rng.normal(size=(2, 6))},
        attrs={"num_warmup": 5, "thin": 1},
    )
    tax = plots.plot_lp(idata).axes[0]
    assert len(tax.lines) == 4  # warm-up and draws of both chains
    np.testing.assert_array_equal(tax.lines[1].get_xdata(), np.arange(6, 16))
    assert not plots.plot_lp(idata, warmup=False).axes[0].lines[2:]


def test_lp_y_range_is_the_sampling_phase_not_the_warmup_climb():
    """Warm-up climbing from -180,000 to the sampling level near -115,000 (as the LDA demo's): the
    traces' and the densities' y range is the sampling phase's (else its densities are flat lines),
    and the title says the warm-up is clipped and where it starts."""
    rng = np.random.default_rng(6)
    lp = rng.normal(size=(3, 50)) * 100.0 - 115_000.0
    warm = -115_000.0 - 65_000.0 * np.exp(-np.arange(40) / 8.0) + rng.normal(size=(3, 40))
    idata = to_inference_data({"mu": rng.normal(size=(3, 50))}, sample_stats={"lp": lp},
                              warmup_posterior={"mu": rng.normal(size=(3, 40))},
                              warmup_sample_stats={"lp": warm}, attrs={"num_warmup": 40, "thin": 1})
    fig = plots.plot_lp(idata)
    tax, dax = fig.axes
    span = lp.max() - lp.min()
    for ax in (tax, dax):
        lo, hi = ax.get_ylim()
        # the sampling range and the densities' tails (up to 3 bandwidths, ~0.3 of the span here)
        assert lp.min() - 0.4 * span <= lo <= lp.min() and lp.max() <= hi <= lp.max() + 0.4 * span
    assert len(tax.lines) == 6  # the warm-up is still drawn, clipped
    assert f"starts at {warm.min():,.0f}".replace("-", "\u2212") in tax.get_title(loc="left")
    assert "clipped" not in plots.plot_lp(idata, warmup=False).axes[0].get_title(loc="left")
    assert _overlapping_texts(fig) == []


def test_many_chains_are_sampled():
    rng = np.random.default_rng(7)
    n = 2000
    mu = 0.01 * rng.normal(size=(n, 4)) + np.arange(n)[:, None]  # chain c's draws sit near c: lines name their chain
    idata = to_inference_data({"mu": mu}, sample_stats={"lp": mu.copy()})
    figs = [plots.plot_lp(idata, max_chains=16), plots.plot_trace(idata, ["mu"], max_chains=16),
            plots.plot_trace(idata, ["mu"], max_chains=16)]
    chosen = []
    for fig in figs:
        ax = fig.axes[0] if fig is figs[0] else _trace_axes(fig)[0]
        assert len(ax.lines) == 16
        chains = [int(round(np.mean(line.get_ydata()))) for line in ax.lines]
        for c, line in zip(chains, ax.lines):
            np.testing.assert_array_equal(line.get_ydata(), mu[c])
        assert len(set(chains)) == 16
        chosen.append(chains)
    assert chosen[0] == chosen[1] == chosen[2]  # fixed seed: the same sample every time
    assert "16 of 2000 chains shown" in figs[0].axes[0].get_title(loc="left")
    assert "16 of 2000 chains shown" in figs[1].get_suptitle()
    other = plots.plot_lp(idata, max_chains=16, seed=1).axes[0]
    assert [int(round(np.mean(line.get_ydata()))) for line in other.lines] != chosen[0]
    rank = plots.plot_rank(idata, ["mu"], max_chains=12)
    assert len(rank.axes[0].get_yticklabels()) == 12


def test_rank_histograms_show_a_chain_apart():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 100))
    x[1] += 20.0  # chain 1 takes ranks 100..199 of the 200 pooled draws, chain 0 the rest
    fig = plots.plot_rank(to_inference_data({"x": x}), ["x"])
    ax = fig.axes[0]
    assert len(ax.collections) == 2 + 1  # one filled outline per chain, one set of dashed lines
    first, second = (poly.get_paths()[0].vertices for poly in ax.collections[:2])
    assert first[:, 0].max() == pytest.approx(200) and second[:, 0].max() == pytest.approx(200)
    assert first[first[:, 1] > 1e-9, 0].max() <= 100 + 1e-9  # chain 0: only the lower half of the ranks
    assert second[second[:, 1] > 1 + 1e-9, 0].min() >= 100 - 1e-9  # chain 1: only the upper half
    assert first[:, 1].max() > 0.5 and second[:, 1].max() > 1.5  # and both rows have bars


def test_agreement_heatmap(idata):
    ag = idata["agreement"]
    fig = plots.plot_agreement(idata)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), ag["distance_to_reference"].values)
    rings = ax.collections[0].get_offsets()
    rows, cols = np.nonzero(ag["reproduced"].values)
    assert sorted(map(tuple, np.asarray(rings).astype(int).tolist())) == sorted(zip(cols.tolist(), rows.tolist()))
    title = ax.get_title(loc="left")
    assert ag.attrs["verdict"] in title and f"threshold {THRESHOLD:g}" in title and "highest mean lp" in title
    labels = ax.get_yticklabels()
    assert labels[0].get_text() == "chain 0 (reference)"
    assert [lab.get_fontweight() == "bold" for lab in labels] == [True, False, True, False]
    assert ax.get_xticklabels()[5].get_text() == f"5\n{float(ag['rhat'][5]):.2f}"


def test_agreement_sample_keeps_the_reference_chain():
    rng = np.random.default_rng(4)
    idata = to_inference_data({"mu": np.zeros((2000, 2))})
    idata.add_groups({"agreement": _agreement(rng, 2000, 3, dim="cluster", reference=1234)})
    fig = plots.plot_agreement(idata, max_chains=32)
    ax = fig.axes[0]
    assert ax.images[0].get_array().shape == (32, 3)
    assert "chain 1234 (reference)" in [t.get_text() for t in ax.get_yticklabels()]
    assert "32 of 2000 chains shown" in ax.get_title(loc="left")


def test_top_words_from_the_topics_group(idata):
    fig = plots.plot_top_words(idata, n=5, ncols=8)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == K
    for k, ax in enumerate(axes):
        words = [t.get_text() for t in ax.get_yticklabels()]
        assert words == [f"word{(k + j) % V}" for j in range(5)]  # the vocabulary, most probable on top
        widths = [p.get_width() for p in ax.patches]
        np.testing.assert_allclose(widths, _phi()[k, [(k + j) % V for j in range(5)]])
        assert ax.yaxis_inverted()
    reproduced = idata["agreement"]["reproduced"].values.sum(axis=0)
    assert axes[3].get_title(loc="left") == f"topic 3  ({int(reproduced[3])}/{C} chains)"


def test_top_words_from_a_mixture_estimates_group():
    idata = to_inference_data({"mu": np.zeros((1, 2))})
    phi = _phi(3, 6)
    idata.add_groups({"estimates": xr.Dataset(
        {"theta_mean": (("cluster", "word"), phi), "doc_probs": (("document", "cluster"), np.full((2, 3), 1 / 3))},
        coords={"word": list("abcdef"), "cluster": [0, 1, 2]},
        attrs={"word_var": "theta", "class_dim": "cluster",
               "cluster_labels": json.dumps({"0": "asyncio", "1": "", "2": "xml"})},
    )})
    fig = plots.plot_top_words(idata, n=3)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in axes] == ["cluster 0 (~asyncio)", "cluster 1", "cluster 2 (~xml)"]
    assert [t.get_text() for t in axes[1].get_yticklabels()] == ["b", "c", "d"]


@pytest.mark.filterwarnings("ignore:chains disagree:UserWarning")  # 10 draws: not what this test checks
def test_top_words_of_a_real_lda_fit(tmp_path, capsys):
    """The words drawn are the post-processing's own top words (gibbsjax.evaluate.top_words)."""
    from gibbsjax import LDA
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus = lda_corpus(num_docs=30, vocab_size=25, num_topics=3, doc_length=15, seed=0)[0]
    # no warm-up: its sweep is a program of its own, compiled for nothing here (the words drawn are
    # compared with the post-processing's own list, whatever the draws are)
    model = LDA(num_topics=3, num_chains=2, num_warmup=0, num_draws=10, seed=0, progress=False).fit(corpus)
    path = tmp_path / "lda.nc"
    model.idata_.to_netcdf(str(path))
    import arviz as az

    saved = az.from_netcdf(path)  # the vocabulary comes back from the file
    fig = plots.plot_top_words(saved, n=10)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    expected = json.loads(saved.topics.attrs["top_words"])
    assert [[t.get_text() for t in ax.get_yticklabels()] for ax in axes] == expected
    assert main(["plot", str(path), "--kind", "words"]) == 0
    _assert_png(tmp_path / "lda_words.png")
    assert main(["plot", str(path), "--var", "lp"]) == 0
    _assert_png(tmp_path / "lda_trace.png")


def test_bad_arguments_are_value_errors(idata):
    with pytest.raises(ValueError, match="max_chains"):
        plots.plot_lp(idata, max_chains=0)
    with pytest.raises(ValueError, match="max_per_panel"):
        plots.plot_trace(idata, max_per_panel=0)
    with pytest.raises(ValueError, match="components: 40 is out of range"):
        plots.plot_top_words(idata, components=[40])


def test_import_gibbsjax_stays_light():
    code = ("import sys, gibbsjax, gibbsjax.plots; "
            "print(sorted(m for m in ('matplotlib', 'arviz', 'xarray', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- figures people can read
def _overlapping_texts(fig):
    """Pairs of visible, non-empty texts of ``fig`` whose drawn boxes overlap (tick labels,
    titles, axis labels, legend entries, colour-bar labels, numbers in cells)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ticks, drawn = set(), []  # tick labels: only those of ticks inside the axes' span are drawn
    for ax in fig.axes:
        span = ax.get_window_extent(renderer)
        for axis, lo, hi, centre in ((ax.xaxis, span.x0, span.x1, lambda b: (b.x0 + b.x1) / 2),
                                     (ax.yaxis, span.y0, span.y1, lambda b: (b.y0 + b.y1) / 2)):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                for label in (tick.label1, tick.label2):
                    ticks.add(id(label))
                    if ax.get_visible() and label.get_visible() and label.get_text().strip() \
                            and lo - 1 <= centre(label.get_window_extent(renderer)) <= hi + 1:
                        drawn.append(label)
    others = [t for t in fig.findobj(Text) if id(t) not in ticks and t.get_visible() and t.get_text().strip()
              and (t.axes is None or t.axes.get_visible())]
    boxes = []
    for t in drawn + others:
        box = t.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            boxes.append((t.get_text(), box.padded(-0.5)))  # half a pixel of slack
    # Bbox.overlaps of every pair i < j, at once (hundreds of texts: 10^5 pairs): the same comparisons
    ext = np.array([box.extents for _, box in boxes], dtype=float).reshape(-1, 4)
    x0, x1 = np.minimum(ext[:, 0], ext[:, 2]), np.maximum(ext[:, 0], ext[:, 2])
    y0, y1 = np.minimum(ext[:, 1], ext[:, 3]), np.maximum(ext[:, 1], ext[:, 3])
    hit = ((x0[:, None] <= x1[None, :]) & (x0[None, :] <= x1[:, None])
           & (y0[:, None] <= y1[None, :]) & (y0[None, :] <= y1[:, None]))
    return [(boxes[i][0], boxes[j][0]) for i, j in zip(*np.nonzero(np.triu(hit, k=1)))]


def _hmm_like(seed: int = 0, chains: int = C, draws: int = 200):
    """What an HMM result holds: the aligned parameters and their *_sorted twins, log_lik, lp."""
    rng = np.random.default_rng(seed)
    emission = rng.dirichlet(np.ones(6), size=(chains, draws, 2))
    transition = rng.dirichlet(np.ones(2), size=(chains, draws, 2))
    initial = rng.dirichlet(np.ones(2), size=(chains, draws))
    lp = rng.normal(size=(chains, draws)) - 3000.0
    return to_inference_data(
        {"emission": emission, "emission_sorted": emission[:, :, ::-1], "initial": initial,
         "initial_sorted": initial[:, :, ::-1], "log_lik": lp + 300.0, "transition": transition,
         "transition_sorted": transition[:, :, ::-1, ::-1], "lp": lp},
        sample_stats={"lp": lp},
        dims={"emission": ["state", "symbol"], "emission_sorted": ["rank", "symbol"], "initial": ["state"],
              "initial_sorted": ["rank"], "transition": ["state", "state_to"],
              "transition_sorted": ["rank", "rank_to"]},
        attrs={"num_warmup": 500, "thin": 1},
    )


def test_trace_colours_are_chains_and_the_same_in_every_panel():
    """LDA's 8 topics: one panel per topic, each with one line per chain in that chain's colour
    (the colours of plot_lp), named once in the figure's legend."""
    idata = _lda_like(k=8)
    share = idata.posterior["topic_share"].values
    fig = plots.plot_trace(idata)
    traces = _trace_axes(fig)
    assert len(traces) == 8 + 2  # 8 topics, mu, lp
    lp_colours = [line.get_color() for line in plots.plot_lp(idata).axes[0].lines]
    for k, tax in enumerate(traces[:8]):
        assert tax.get_title(loc="left") == f"topic_share[topic={k}]"
        assert len(tax.lines) == C
        assert [line.get_color() for line in tax.lines] == lp_colours  # chain c: one colour everywhere
        for c, line in enumerate(tax.lines):
            np.testing.assert_array_equal(line.get_ydata(), share[c, :, k])
    assert len(set(lp_colours)) == C
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [f"chain {c}" for c in range(C)]
    assert [h.get_color() for h in legend.legend_handles] == lp_colours
    for dax in fig.axes[0::2]:  # densities drawn sideways, one per chain, no tick labels to collide
        assert len(dax.lines) == C and not [t for t in dax.get_xticklabels() if t.get_text()]


@pytest.mark.parametrize("case", ["lda 8 topics", "lda 32 topics", "hmm", "lp only"])
def test_trace_text_does_not_overlap(case):
    idata = {"lda 8 topics": lambda: _lda_like(k=8), "lda 32 topics": lambda: _lda_like(k=32),
             "hmm": _hmm_like, "lp only": lambda: _lda_like(k=8)}[case]()
    if case != "hmm":  # lp around -115,000 as in the LDA demo: long tick labels
        idata.sample_stats["lp"] = 10.0 * idata.sample_stats["lp"] - 115_000.0
    fig = plots.plot_trace(idata, ["lp"] if case == "lp only" else None)
    assert _overlapping_texts(fig) == []
    width, height = fig.get_size_inches()
    assert 8 <= width <= 16 and height <= 12


def test_sorted_twins_are_not_drawn_twice():
    """An HMM's emission and emission_sorted hold the same draws up to the order of states:
    by default only the sorted, label-invariant copy is drawn (trace and rank), and the figure
    says which were left out; named in var_names they are drawn."""
    idata = _hmm_like()
    fig = plots.plot_trace(idata)
    titles = [ax.get_title(loc="left") for ax in _trace_axes(fig)]
    assert titles[:2] == ["emission_sorted[rank=0, symbol=0]", "emission_sorted[rank=0, symbol=1]"]
    assert not [t for t in titles if t.split("[")[0] in ("emission", "initial", "transition")]
    assert len(titles) == 12 + 2 + 1 + 4 + 1  # emission_sorted, initial_sorted, log_lik, transition_sorted, lp
    assert "not drawn: emission, initial, transition" in fig.get_suptitle()
    width, height = fig.get_size_inches()
    assert width <= 16 and height <= 11  # was 11.9 x 19.7 in with both copies in rows
    ranks = [ax.get_title(loc="left") for ax in plots.plot_rank(idata).axes if ax.get_visible()]
    assert ranks == titles  # a component has one name in trace and rank plots
    raw = [ax.get_title(loc="left") for ax in _trace_axes(plots.plot_trace(idata, ["emission"]))]
    assert raw[0] == "emission[state=0, symbol=0]" and len(raw) == 12


def test_sorted_twins_through_the_cli(tmp_path, capsys):
    path = tmp_path / "hmm.nc"
    _hmm_like().to_netcdf(str(path))
    assert main(["plot", str(path), "-o", str(tmp_path / "a.png")]) == 0
    img = _assert_png(tmp_path / "a.png")
    assert img.shape[0] < 1200 and img.shape[1] < 1700  # at 100 dpi; was 1970 x 1188 px
    assert main(["plot", str(path), "--var", "emission", "-o", str(tmp_path / "b.png")]) == 0


def _cell_annotations(ax):
    return [t for t in ax.texts if t.get_visible()]


def _luminance(rgb):
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


@pytest.mark.parametrize("chains,topics", [(4, 8), (12, 32)])
def test_agreement_numbers_fit_their_cells_and_contrast(chains, topics):
    """Each distance is written inside its cell (and inside the frame of a reproduced cell),
    big enough to read, in a colour that contrasts with the cell (WCAG contrast >= 3)."""
    from matplotlib.colors import to_rgba

    idata = _lda_like(chains=chains, k=topics)
    dist = idata["agreement"]["distance_to_reference"].values
    fig = plots.plot_agreement(idata)
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = _cell_annotations(ax)
    assert len(texts) == chains * topics
    image = ax.images[0]
    to_display = ax.transData.transform
    for t in texts:
        j, i = (int(round(v)) for v in t.get_position())
        assert t.get_text() == f"{dist[i, j]:.2f}"
        assert t.get_fontsize() >= 5.5
        box = t.get_window_extent(renderer)
        (x0, y0), (x1, y1) = to_display([(j - 0.5, i - 0.5), (j + 0.5, i + 0.5)])
        left, right, low, high = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        assert left <= box.x0 and box.x1 <= right and low <= box.y0 and box.y1 <= high, (t.get_text(), box)
        cell = image.cmap(image.norm(dist[i, j]))
        a, b = _luminance(cell), _luminance(to_rgba(t.get_color()))
        assert (max(a, b) + 0.05) / (min(a, b) + 0.05) >= 3.0, (t.get_text(), t.get_color())
    # the frames of reproduced cells: inside the cell, around the number
    frame = ax.collections[0]
    side_px = np.sqrt(frame.get_sizes()[0]) * fig.dpi / 72
    (x0, _), (x1, _) = to_display([(0, 0), (1, 0)])
    assert max(t.get_window_extent(renderer).width for t in texts) < side_px <= abs(x1 - x0)
    assert _overlapping_texts(fig) == []


def test_agreement_numbers_left_out_when_cells_are_small():
    idata = _lda_like(chains=20, k=200, draws=5)  # 30 inches wide at most: cells of about 9 points
    ax = plots.plot_agreement(idata).axes[0]
    assert _cell_annotations(ax) == []
    forced = plots.plot_agreement(idata, annotate=True).axes[0]
    assert len(_cell_annotations(forced)) == 20 * 200


def test_agreement_labels_clear_of_each_other_and_the_colour_bar():
    """The axis label, tick labels, title and the colour bar do not overlap (the legend of the
    frames used to sit over the x-axis label)."""
    fig = plots.plot_agreement(_lda_like(k=8))
    ax, bar = fig.axes
    assert ax.get_legend() is None and "framed: reproduced" in ax.get_title(loc="left")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert _overlapping_texts(fig) == []
    bar_box = bar.get_window_extent(renderer)
    for t in [ax.xaxis.label, ax._left_title, *ax.get_xticklabels()]:
        assert not t.get_window_extent(renderer).overlaps(bar_box)


# ----------------------------------------------------------------------------- lp where ArviZ sees it
def test_lp_is_a_sample_stat_and_gibbsjax_summary_adds_its_row(tmp_path):
    """A run's log joint is in sample_stats only (ArviZ's place: not a parameter of az.summary);
    gibbsjax.summary and the plots show it once; saved, read back and resumed, it stays."""
    import warnings

    import arviz as az

    import gibbsjax
    from gibbsjax.models import normal

    kernel = normal.bivariate(0.5)
    idata = gibbsjax.sample(kernel, seed=0, num_chains=2, num_warmup=5, num_draws=20, progress=False)
    assert "lp" not in idata.posterior and "lp" in idata.sample_stats
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.summary(idata)
        ours = gibbsjax.summary(idata)
    assert list(table.index) == ["x1", "x2"]
    assert list(ours.index) == ["x1", "x2", "lp"]
    assert ours.at["lp", "mean"] == pytest.approx(float(idata.sample_stats["lp"].mean()), abs=1e-3)
    assert list(gibbsjax.summary(idata, include_lp=False).index) == ["x1", "x2"]
    assert list(gibbsjax.summary(idata, var_names=["x1"]).index) == ["x1", "lp"]
    path = tmp_path / "run.nc"
    idata.to_netcdf(str(path))
    longer = gibbsjax.resume(az.from_netcdf(str(path)), kernel, num_draws=10, progress=False)
    # chunks of one sweep, as the two runs above take by default (30 draws would take 2): one compiled sweep
    once = gibbsjax.sample(kernel, seed=0, num_chains=2, num_warmup=5, num_draws=30, chunk_size=1, progress=False)
    np.testing.assert_array_equal(longer.sample_stats["lp"].values, once.sample_stats["lp"].values)
    assert "lp" not in longer.posterior
    assert plots.variable_names(longer) == ["x1", "x2", "lp"]  # lp once


def test_readme_plot_usage_matches_the_cli():
    """The command-line guide's usage line of ``gibbsjax plot`` (docs/guide/cli.md) names every --kind
    and every option the parser has."""
    import argparse
    import pathlib

    from gibbsjax.cli import build_parser

    readme = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide" / "cli.md").read_text()
    usage = readme[readme.index("gibbsjax plot RESULT.nc [--kind"):]
    usage = usage[:usage.index("```")]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["plot"]
    kind = next(a for a in sub._actions if "--kind" in a.option_strings)
    assert usage.split("--kind ")[1].split("]")[0].split("|") == list(kind.choices)
    for action in sub._actions:
        if action.option_strings and "--help" not in action.option_strings:
            assert any(o in usage.split() or f"[{o}" in usage for o in action.option_strings), action.option_strings


def _stable_example():
    """4 chains of 4 topics: one topic in every chain, one in 3, one in 2 (min_share 0.5), the rest
    in one chain each; topics are rolls of 0.5**k by multiples of 4 words (Hellinger distance ~0.87)."""
    from gibbsjax.topics.stable import stable_topics

    rng = np.random.default_rng(3)
    held = [[0, 4, 8, 12], [0, 4, 8, 16], [0, 4, 20, 24], [0, 28, 32, 36]]  # each chain's topics, by roll
    weights = 0.5 ** np.arange(V)
    est = np.array([[np.roll(weights, r) * rng.uniform(0.9, 1.1, V) for r in rolls] for rolls in held])
    return stable_topics(est, draws=rng.dirichlet(np.ones(4), size=(4, 50)), reference=0,
                         vocab=[f"word{j}" for j in range(V)])


def test_stable_topics_plot_labels_clear_of_the_line_and_inside_100_percent():
    """The x axis ends at 100%; each bar's label (chains, spread, R-hat) lies inside the axes and
    clear of the dashed min_share line; one chain is '1 chain'; the notes (rare topics not drawn)
    sit under the axes, not floating above the title."""
    st = _stable_example()
    assert sorted(np.round(st.share, 2))[-3:] == [0.5, 0.75, 1.0]
    fig = plots.plot_stable_topics(st, max_rare=3)
    (ax,) = fig.axes
    assert ax.get_xlim()[1] <= 1.0
    assert not fig.get_suptitle()
    assert f"{st.num_rare - 3} more rare topics not drawn" in ax.get_xlabel()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (line,) = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    line_x = ax.transData.transform((st.min_share, 0))[0]
    span = ax.get_window_extent(renderer)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == len(ax.patches) == st.num_stable + 3
    assert "1 chain" in texts and not [t for t in texts if "1 chains" in t]
    assert [t for t in texts if t.startswith("4 chains") and "R-hat" in t and "spread" in t]
    for t in ax.texts:
        box = t.get_window_extent(renderer)
        assert not box.x0 < line_x < box.x1, t.get_text()
        assert span.x0 <= box.x0 and box.x1 <= span.x1 + 1, t.get_text()
    assert _overlapping_texts(fig) == []


def test_notes_sit_just_above_the_panels(idata):
    """The notes on top (components left out) sit just above the panels' titles, not floating
    half an inch higher, and do not overlap them."""
    for fig in (plots.plot_rank(idata, max_panels=6), plots.plot_rank(idata, max_panels=6, max_chains=2)):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        notes = fig._suptitle.get_window_extent(renderer)
        top = max(ax.get_tightbbox(renderer).y1 for ax in fig.axes if ax.get_visible())
        assert 0 <= notes.y0 - top <= 0.15 * fig.dpi, (notes.y0, top)
        assert _overlapping_texts(fig) == []
