"""Stable topics across chains (gibbsjax.topics.stable): clustering rules on constructed estimates, recovery
of known topics on a synthetic corpus, the result file, the CLI report and bad inputs."""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from gibbsjax.labels import distance_matrix
from gibbsjax.topics.stable import MIN_SHARE, StableTopics, stable_topics, stable_topics_of


def _topics(rng, k, v, eta=0.05):
    return rng.dirichlet(np.full(v, eta), size=k)


def _noisy(rng, phi, scale=2000.0):
    """A chain's estimate of ``phi``: a Dirichlet draw around it (Hellinger about 0.1-0.2 away)."""
    return np.stack([rng.dirichlet(scale * p + 1e-3) for p in phi])


# ---------------------------------------------------------------------------- (a) constructed estimates
def test_one_chain_topic_is_never_stable_and_slots_do_not_matter():
    rng = np.random.default_rng(0)
    v, chains = 60, 6
    shared = _topics(rng, 3, v)                      # held by every chain, in shuffled slots
    lonely = _topics(rng, 1, v)[0]                   # held by chain 2 only
    others = _topics(rng, chains, v)                 # chain c's fourth topic: its own
    est = np.empty((chains, 4, v))
    for c in range(chains):
        fourth = lonely if c == 2 else others[c]
        own = np.concatenate([_noisy(rng, shared), fourth[None]])
        est[c] = own[rng.permutation(4)]
    for share in (MIN_SHARE, 0.1, 1e-9):             # a topic one chain holds is never stable
        st = stable_topics(est, min_share=share)
        assert st.num_stable == 3, (share, st.recurrence)
        assert st.recurrence[:3].tolist() == [chains] * 3
        assert st.num_rare == chains and np.all(st.recurrence[3:] == 1)
        assert st.min_chains == max(2, int(np.ceil(share * chains)))
    # each stable cluster holds, for every chain, the slot where that chain put the shared topic
    for m in range(3):
        held, slots = st.holders(m)
        assert held == list(range(chains))
        d = distance_matrix(est[held, slots], shared, "hellinger")
        assert len(set(d.argmin(axis=1).tolist())) == 1          # the same true topic in every chain
        assert np.all(d.min(axis=1) < 0.3)
    # the estimate is the mean of the holding chains' topics only
    held, slots = st.holders(0)
    np.testing.assert_allclose(st.topic_word[0], est[held, slots].mean(axis=0), rtol=1e-6, atol=1e-9)
    # R-hat needs 2 chains: with per-draw values, NaN exactly for the clusters one chain holds
    draws = rng.random((chains, 50, 4))
    st = stable_topics(est, draws=draws)
    assert np.all(np.isfinite(st.rhat[:3])) and np.all(np.isnan(st.rhat[3:]))
    held, slots = st.holders(1)
    from gibbsjax.diagnostics import rhat

    assert st.rhat[1] == pytest.approx(float(rhat(draws[held, :, slots][:, :, None])[0]))


def test_share_rule_and_two_modes_kept_apart():
    rng = np.random.default_rng(1)
    v = 80
    a, b, c = _topics(rng, 3, v)
    # 5 chains hold a and b, 3 chains hold a and c: a is stable at any share, b at <= 5/8, c at <= 3/8
    est = np.stack([_noisy(rng, np.stack([a, b])) for _ in range(5)] +
                   [_noisy(rng, np.stack([c, a])) for _ in range(3)])
    assert stable_topics(est).num_stable == 2
    assert stable_topics(est, min_share=0.7).num_stable == 1
    st = stable_topics(est, min_share=0.3)
    assert st.num_stable == 3 and st.recurrence.tolist() == [8, 5, 3]
    # b and c never blend: each estimate is within noise of its own topic
    d = distance_matrix(st.topic_word, np.stack([a, b, c]), "hellinger")
    assert d.argmin(axis=1).tolist() == [0, 1, 2] and np.all(d.min(axis=1) < 0.15)


def test_a_thousand_chains_give_the_stable_topics():
    """1,024 chains x K = 20 x V = 500 in the default run; see the slow test for 4,096 x 20 x 2,000."""
    _many_chains(1024, 20, 500)


@pytest.mark.slow
def test_four_thousand_chains_give_the_stable_topics():
    _many_chains(4096, 20, 2000)


def _many_chains(chains, k, v):
    """Stable topics of many chains: right, and the time printed (the suite asserts no wall time;
    benchmarks/many_chains_summary.py and the closing notes report it)."""
    rng = np.random.default_rng(2)
    true = _topics(rng, 8, v)
    est = np.empty((chains, k, v), np.float32)
    for lo in range(0, chains, 256):
        n = min(256, chains - lo)
        x = rng.dirichlet(np.full(v, 0.05), size=(n, k)).astype(np.float32)   # 12 topics of their own
        slots = np.argsort(rng.random((n, k)), axis=1)[:, :8]
        rows = np.arange(n)[:, None]
        x[rows, slots] = 0.9 * true[None] + 0.1 * x[rows, slots]              # the 8 true ones, shuffled
        est[lo:lo + n] = x
    start = time.perf_counter()
    st = stable_topics(est)
    seconds = time.perf_counter() - start
    print(f"{chains} chains x K={k} x V={v}: {seconds:.2f} s, {st.num_stable} stable, "
          f"{st.num_clusters} clusters, {st.num_unclustered} unclustered")
    assert st.num_stable == 8 and st.recurrence[:8].tolist() == [chains] * 8
    # each chain's true topic is 0.9 true + 0.1 noise with E[noise] = 1/V: the mean of the holders
    d = distance_matrix(st.topic_word, 0.9 * true + 0.1 / v, "hellinger")
    print("Hellinger of the stable estimates to the expected means:", d.min(axis=1).round(3))
    assert np.all(d.min(axis=1) < 0.05)
    assert st.num_rare + st.num_unclustered >= chains * (k - 8) // 2


# ---------------------------------------------------------------------------- (b) known topics
def _synthetic_fit(num_docs, k, v, length, chains, warmup, draws, seed=1):
    from gibbsjax import LDA
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, phi, theta = lda_corpus(num_docs=num_docs, num_topics=k, vocab_size=v, doc_length=length,
                                    alpha=0.2, eta=0.05, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LDA(k, alpha=0.2, eta=0.05, num_chains=chains, num_warmup=warmup, num_draws=draws, seed=0,
                    progress=False).fit(corpus)
    return model, corpus, phi, theta


def _check_recovery(model, corpus, phi, theta):
    st = model.stable_topics_
    k, v = phi.shape
    d = distance_matrix(st.topic_word, phi, "hellinger")
    rows, cols = linear_sum_assignment(d)
    # tolerance: a topic estimated from n tokens differs from the true one by sampling noise alone,
    # E[H^2] ~ (V - 1) / (8 n) (the delta method for Hellinger distance of a multinomial proportion);
    # n = tokens of the topic, ~ N * mean theta_k.  Twice that expected distance (the estimates here
    # come in at 1.0-1.2 times it).
    n_k = corpus.num_tokens * theta.mean(axis=0)[cols]
    tol = 2.0 * np.sqrt((v - 1) / (8.0 * n_k))
    print("Hellinger to the true topics:", d[rows, cols].round(3), "tolerance:", tol.round(3))
    assert st.num_stable == k
    assert np.all(d[rows, cols] < tol)
    return st


@pytest.fixture(scope="module")
def fitted():
    return _synthetic_fit(400, 5, 200, 60, chains=8, warmup=200, draws=100)


def test_stable_topics_match_the_true_ones(fitted):
    st = _check_recovery(*fitted)
    assert st.recurrence[:5].tolist() == [8] * 5 and np.all(np.isfinite(st.rhat[:5]))


@pytest.mark.slow
def test_stable_topics_match_the_true_ones_bigger():
    model = _synthetic_fit(3000, 10, 1000, 100, chains=32, warmup=500, draws=200)
    _check_recovery(*model[:1], *model[1:])


# ---------------------------------------------------------------------------- (c) result file, (d) reports
def test_round_trip_through_the_result_file(fitted, tmp_path):
    from gibbsjax import LDA

    model = fitted[0]
    path = tmp_path / "lda.nc"
    model.save(path)
    import arviz as az

    idata = az.from_netcdf(path)
    assert "stable_topics" in idata.groups()
    back = StableTopics.from_dataset(idata.stable_topics)
    st = model.stable_topics_
    assert back.verdict == st.verdict
    np.testing.assert_array_equal(back.assignment, st.assignment)
    np.testing.assert_allclose(back.topic_word, st.topic_word, rtol=1e-6)
    np.testing.assert_allclose(back.rhat, st.rhat)
    assert back.top_words == st.top_words and back.min_share == st.min_share
    assert LDA.load(path).stable_topics_.verdict == st.verdict
    # recomputed from the per-chain estimates in the file: the same clusters
    again = stable_topics_of(idata, min_share=MIN_SHARE)
    np.testing.assert_array_equal(again.assignment, st.assignment)
    # the LDA summary has a row per stable topic (its share of tokens over the chains that hold it)
    table = model.summary()
    rows = [r for r in table.index if r.startswith("stable_topic_share[")]
    assert len(rows) == st.num_stable
    np.testing.assert_allclose(table.loc[rows, "r_hat"].values, np.round(st.rhat[:st.num_stable], 2))


def test_cli_summary_and_run_print_the_stable_topics(fitted, tmp_path, capsys):
    from gibbsjax.cli import main

    path = tmp_path / "lda.nc"
    fitted[0].save(path)
    assert main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "stable topics: 5 of 5 (held by >= 50% of 8 chains)" in out
    assert re.search(r"topic\s+chains\s+share\s+spread\s+max\s+R-hat\s+top words", out)

    # `gibbsjax run` of the fixture's corpus with its model and chains, in chunks of the fixture's length (16
    # sweeps): the sweeps compiled for the fixture serve this run, and one chunk of warm-up and one of draws
    # suffice for the report's line, compared below with the clusters of the file the command wrote
    from gibbsjax.corpus import write_ldac

    write_ldac(fitted[1], tmp_path / "corpus.ldac", tmp_path / "vocab.txt")
    config = tmp_path / "synthetic.toml"
    config.write_text('[model]\nname = "lda.partially_collapsed"\nK = 5\nalpha = 0.2\neta = 0.05\n'
                      '[data]\nfile = "corpus.ldac"\nformat = "ldac"\nvocab = "vocab.txt"\n'
                      '[sampler]\nseed = 0\nnum_chains = 8\nnum_warmup = 16\nnum_draws = 16\nchunk_size = 16\n')
    assert main(["run", str(config), "--out", str(tmp_path / "synthetic.nc"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"stable topics: (\d) of 5 \(held by >= 50% of 8 chains\)", out)
    assert found, out
    import arviz as az

    idata = az.from_netcdf(tmp_path / "synthetic.nc")
    assert int(found.group(1)) == stable_topics_of(idata).num_stable == \
        stable_topics_of(idata, min_share=0.5).num_stable


def test_plot_of_the_stable_topics(fitted, tmp_path):
    from gibbsjax import plots
    from gibbsjax.cli import main

    model = fitted[0]
    st = model.stable_topics_
    fig = plots.plot_stable_topics(model.idata_, max_rare=3)
    ax = fig.axes[0]
    assert len(ax.patches) == st.num_stable + min(3, st.num_rare)
    np.testing.assert_allclose([p.get_width() for p in ax.patches][:st.num_stable], st.share[:st.num_stable])
    assert st.verdict in ax.get_title(loc="left")
    path = tmp_path / "lda.nc"
    model.save(path)
    assert main(["plot", str(path), "--kind", "stable", "-o", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").stat().st_size > 1000


# ---------------------------------------------------------------------------- (e) bad inputs
@pytest.mark.parametrize("kwargs, match", [
    ({"min_share": 0.0}, "min_share"), ({"min_share": 1.5}, "min_share"), ({"min_share": float("nan")}, "min_share"),
    ({"min_share": True}, "min_share"), ({"threshold": 0.0}, "threshold"), ({"threshold": 2}, "threshold"),
    ({"vocab": ["a"]}, "vocab"), ({"draws": np.zeros((3, 10, 5))}, "draws"), ({"lp": np.zeros(5)}, "lp"),
    ({"reference": 7}, "reference"), ({"n_words": 0}, "n_words"), ({"seed_chains": 0}, "seed_chains"),
])
def test_bad_arguments(kwargs, match):
    est = np.full((3, 2, 4), 0.25)
    with pytest.raises(ValueError, match=match):
        stable_topics(est, **kwargs)


@pytest.mark.parametrize("est, match", [
    (np.full((3, 4), 0.25), r"shape \(chain, K, V\)"),
    (np.full((0, 2, 4), 0.25), r"shape \(chain, K, V\)"),
    (np.where(np.eye(4)[None, :2] > 0, np.nan, 0.25), "NaN"),
    (np.full((2, 2, 4), -0.25), "non-negative"),
    (np.zeros((2, 2, 4)), "positive total"),
    (np.array([[["a", "b"]]]), "numbers"),
])
def test_bad_estimates(est, match):
    with pytest.raises(ValueError, match=match):
        stable_topics(est)


def test_one_chain_has_no_stable_topic():
    st = stable_topics(np.full((1, 2, 4), 0.25))
    assert st.num_stable == 0 and "one chain" in st.verdict
