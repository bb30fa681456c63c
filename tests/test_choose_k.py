"""Choosing K by stability (gibbsjax.topics.choose_k): the score, the table, the scorer in GridSearchCV,
the CLI and the plot; the peak at the true K on a synthetic corpus (slow; a two-K default version)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from gibbsjax.topics.choose_k import choose_num_topics, stability, stability_scorer, table_lines
from gibbsjax.topics.stable import stable_topics


def _corpus(num_docs=200, vocab=100, length=60, seed=0):
    from gibbsjax.datasets.synthetic import lda_corpus

    return lda_corpus(num_docs=num_docs, num_topics=10, vocab_size=vocab, doc_length=length, alpha=0.1, eta=0.05,
                      seed=seed)


FAST = dict(num_chains=8, num_warmup=100, num_draws=30, alpha=0.1, eta=0.05)


def test_stability_score_by_hand():
    rng = np.random.default_rng(0)
    a, b, c, d = rng.dirichlet(np.full(50, 0.05), size=4)
    # 4 chains, K = 2: a in every chain; b in 3 chains; c and d in one chain each
    est = np.stack([[a, b], [b, a], [a, b], [a, c]])
    st = stable_topics(est)
    assert sorted(st.recurrence.tolist()) == [1, 3, 4]
    assert stability(st) == pytest.approx((16 + 9 + 1) / (16 * 2))
    est[2, 1] = d   # b now in 2 chains, c and d in one each
    st = stable_topics(est)
    assert sorted(st.recurrence.tolist()) == [1, 1, 2, 4]
    assert stability(st) == pytest.approx((16 + 4 + 1 + 1) / (16 * 2))
    same = np.stack([[a, b]] * 4)
    assert stability(stable_topics(same)) == 1.0


def _stability_from_the_clusters(st) -> float:
    """The score from its definition, read off the clusters themselves (``assignment``): the mean,
    over every topic of every chain, of the share of chains holding a topic of its cluster; a
    topic in no cluster (−1) is held by its own chain only."""
    chains, k = st.assignment.shape
    holders = {m: sum(m in row for row in st.assignment.tolist()) for m in set(st.assignment.ravel().tolist())}
    return float(np.mean([(holders[m] if m >= 0 else 1) / chains for m in st.assignment.ravel().tolist()]))


def test_stability_beyond_64_chains_counts_the_unclustered_topics():
    """Only chains beyond the 64 that seed the clusters can hold topics that match no cluster."""
    v = 3 + 16

    def peaked(w):
        p = np.full(v, 0.01 / (v - 1))
        p[w] = 0.99
        return p

    a, b, c = peaked(0), peaked(1), peaked(2)
    # 64 chains hold a, b, c; 16 more hold b, a and a topic of their own (words 3..18)
    est = np.stack([[a, b, c] if i < 64 else [b, peaked(3 + i - 64), a] for i in range(80)])
    st = stable_topics(est)
    assert st.num_unclustered == 16 and sorted(st.recurrence.tolist()) == [64, 80, 80]
    want = (80 * 80 + 80 * 80 + 64 * 64 + 16 * 1) / (80 * 80 * 3)  # the 16 own topics: one chain each
    assert _stability_from_the_clusters(st) == pytest.approx(want, rel=1e-12)
    assert stability(st) == pytest.approx(want, rel=1e-12)


def test_choose_num_topics_beyond_64_chains_scores_every_topic():
    """A fit of 72 chains barely warmed up: chains 64..71 have topics no cluster holds."""
    corpus, phi, theta = _corpus(num_docs=30, vocab=60, length=10)
    table = choose_num_topics(corpus, [8], num_chains=72, num_warmup=1, num_draws=1, heldout=0, eta=0.01,
                              keep_models=True)
    st = table.attrs["models"][8].stable_topics_
    assert st.num_chains == 72 and st.num_unclustered > 0, st.num_unclustered  # what the test is about
    assert table["stability"].iloc[0] == pytest.approx(_stability_from_the_clusters(st), rel=1e-9)


def test_table_perplexity_coherence_and_the_true_k_more_stable():
    corpus, phi, theta = _corpus()
    table = choose_num_topics(corpus, [5, 10], keep_models=True, **FAST)
    print("\n".join(table_lines(table)))
    assert list(table["K"]) == [5, 10]
    at5, at10 = table.iloc[0], table.iloc[1]
    assert at10["stability"] > at5["stability"] + 0.2
    assert at10["stable"] == 10 and at10["stable_share"] == 1.0
    assert at10["perplexity"] < at5["perplexity"]
    assert np.isfinite(table["coherence"]).all() and np.isfinite(table["rhat_lp"]).all()
    assert table.attrs["coherence"] == "u_mass" and "coherence (u_mass)" in table_lines(table)[0]
    # each column from its own definition: the fits on the training part (80%, split seed 0)
    from gibbsjax import evaluate

    train, test = corpus.split(0.2, seed=0)
    for k, row in zip([5, 10], (at5, at10)):
        model = table.attrs["models"][k]
        assert model.corpus_.num_docs == train.num_docs and model.num_chains == 8
        st = model.stable_topics_
        assert row["stability"] == pytest.approx(stability(st))
        assert row["coherence"] == pytest.approx(np.mean(evaluate.coherence(st.topic_word, train)))
        assert row["perplexity"] == pytest.approx(model.perplexity(test))


def test_grid_search_with_the_stability_scorer():
    from sklearn.model_selection import GridSearchCV

    from gibbsjax import LDA

    corpus, phi, theta = _corpus()
    # the training part choose_num_topics fits above (split seed 0), with its settings: the same
    # shapes, so the compiled sweeps of test_table_... serve these fits too
    train, _ = corpus.split(0.2, seed=0)
    X = train.to_dtm()
    every = np.arange(train.num_docs)
    search = GridSearchCV(LDA(num_chains=8, num_warmup=100, num_draws=30, alpha=0.1, eta=0.05, seed=0,
                              progress=False, warn=False),
                          {"num_topics": [5, 10]}, scoring=stability_scorer, cv=[(every, every)], refit=False)
    search.fit(X)
    print(search.cv_results_["mean_test_score"])
    assert search.best_params_ == {"num_topics": 10}
    scores = search.cv_results_["mean_test_score"]
    assert scores[1] > 1.5 * scores[0]


@pytest.mark.slow
def test_stability_peaks_at_the_true_k():
    corpus, phi, theta = _corpus(num_docs=500, vocab=300, length=80)
    table = choose_num_topics(corpus, [6, 8, 10, 12, 14], num_chains=16, num_warmup=200, num_draws=50,
                              alpha=0.1, eta=0.05)
    print("\n".join(table_lines(table)))
    best = int(table.loc[table["stability"].idxmax(), "K"])
    assert best == 10
    assert table["stability"].iloc[0] < 0.5 * table["stability"].max()


def test_cli_choose_k(tmp_path, capsys):
    from gibbsjax.cli import main
    from gibbsjax.corpus import write_ldac

    # the corpus of the tests above, as a file, with their settings (held-out 20%, split seed 0; 8 chains
    # given by --chains over the config's 4): the same shapes, so the sweeps, initial states and held-out
    # inference compiled for test_table_... serve the command's fits; what is tested is the command's table
    corpus, phi, theta = _corpus()
    write_ldac(corpus, tmp_path / "corpus.ldac", tmp_path / "vocab.txt")
    config = tmp_path / "synthetic.toml"
    config.write_text('[model]\nname = "lda.partially_collapsed"\nK = 5\nalpha = 0.1\neta = 0.05\n'
                      '[data]\nfile = "corpus.ldac"\nformat = "ldac"\nvocab = "vocab.txt"\nheldout = 0.2\n'
                      '[sampler]\nseed = 0\nnum_chains = 4\nnum_warmup = 100\nnum_draws = 30\n')
    assert main(["choose-k", str(config), "--K", "5,10", "--chains", "8", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "8 chains per K" in out
    assert re.search(r"^\s+K\s+stability\s+stable\s+rare\s+perplexity\s+coherence \(u_mass\)\s+R-hat lp$",
                     out, re.M)
    assert "coherence (u_mass): the mean over the stable topics of gensim's u_mass of their top 10 words" in out
    rows = re.findall(r"^\s+(5|10)\s+([0-9.]+)\s+(\d+) of (5|10)\s", out, re.M)
    assert [r[0] for r in rows] == ["5", "10"] and all(r[0] == r[3] for r in rows)
    assert all(0 < float(r[1]) <= 1 for r in rows)
    for bad in (["--K", "2,0"], ["--K", "2", "--min-share", "1.5"]):
        with pytest.raises(SystemExit) as exit_:
            main(["choose-k", str(config), *bad])
        assert exit_.value.code == 2
    other = tmp_path / "normal.toml"
    other.write_text('[model]\nname = "normal.bivariate"\nrho = 0.5\n[sampler]\nnum_chains = 2\n')
    assert main(["choose-k", str(other), "--K", "2"]) == 2
    assert "needs an LDA config" in capsys.readouterr().err


def test_plot_stability():
    from gibbsjax.plots import plot_stability

    table = pd.DataFrame({"K": [5, 10, 15], "stability": [0.3, 0.95, 0.8], "stable": [2, 10, 12],
                          "stable_share": [0.4, 1.0, 0.8], "rare": [9, 0, 7], "perplexity": [30.0, 21.0, 21.2],
                          "coherence": [-1.0, -0.8, -0.9], "rhat_lp": [2.0, 1.1, 1.3]})
    fig = plot_stability(table)
    assert len(fig.axes) == 3 and "most stable K = 10" in fig.axes[0].get_title(loc="left")
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), [30.0, 21.0, 21.2])
    with pytest.raises(ValueError, match="stability"):
        plot_stability(table.drop(columns=["stability"]))


@pytest.mark.parametrize("kwargs, match", [
    ({"Ks": []}, "Ks"), ({"Ks": [5, 0]}, "Ks"), ({"Ks": "5,10"}, "Ks"), ({"Ks": [5, 5]}, "Ks"),
    ({"Ks": [5], "heldout": 1.5}, "heldout"), ({"Ks": [5], "num_chains": 0}, "num_chains"),
    ({"Ks": [5], "alpha": -1.0}, "alpha"),
])
def test_bad_arguments(kwargs, match):
    corpus = [["a", "b"], ["b", "c"]]
    with pytest.raises(ValueError, match=match):
        choose_num_topics(corpus, **kwargs)


def test_scorer_needs_a_fitted_model():
    from gibbsjax import LDA

    with pytest.raises(ValueError, match="fitted"):
        stability_scorer(LDA(3), None)
