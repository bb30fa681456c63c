"""Dirichlet-multinomial naive Bayes (seed 000): exact enumeration with observed labels,
the seed's off-by-one conditional failing it, Geweke, bad input, semi-supervised configs."""

from __future__ import annotations

import itertools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from _exact import final_states
from _exact import log_polya as _log_polya

from gibbsjax.corpus import Corpus
from gibbsjax.models import naive_bayes as nb
from gibbsjax.testing import chi_square_test, geweke_test

ROOT = Path(__file__).resolve().parents[1]

# 5 documents over V = 3 words, K = 3 classes; documents 0 and 3 labelled, 1, 2, 4 latent
DOCS = [[0, 0, 1], [2, 2], [0, 1, 2, 0], [1, 2], [0]]
LABELS = [0, -1, -1, 2, -1]
K, V = 3, 3
GAMMA_PI, GAMMA_THETA = (2.0, 3.0, 1.5), 0.7


def _corpus(labels=LABELS):
    return Corpus.from_token_lists([[str(w) for w in d] for d in DOCS], vocab=["0", "1", "2"],
                                   labels=labels, label_names=["x", "y", "z"])


def exact_latent_posterior(docs, labels, k, v, gamma_pi, gamma_theta):
    """p(L_latent | C, L_observed), π and θ integrated out, float64 (independent of the library).

    p(L, C) ∝ Pólya(class counts; γ_π) Π_x Pólya(word counts of class x; γ_θ).
    """
    labels = np.asarray(labels)
    latent = np.flatnonzero(labels < 0)
    wc = np.array([np.bincount(d, minlength=v) for d in docs], float)
    states = np.array(list(itertools.product(range(k), repeat=latent.size)))
    logp = []
    for s in states:
        full = labels.copy()
        full[latent] = s
        lp = _log_polya(np.bincount(full, minlength=k), gamma_pi)
        lp += sum(_log_polya(wc[full == x].sum(0), np.full(v, gamma_theta)) for x in range(k))
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def final_labels(kernel, data, **kwargs):
    return final_states(kernel, data, **kwargs).labels


def _counts(labels, latent, k):
    z = labels[:, latent]
    codes = (z * (k ** np.arange(z.shape[1])[::-1])).sum(1)
    return np.bincount(codes, minlength=k ** z.shape[1])


# ----------------------------------------------------------------------------- enumeration
def test_label_frequencies_match_exact_posterior_with_observed_labels():
    data = nb.data(_corpus())
    labels = final_labels(nb.dirichlet_multinomial(GAMMA_PI, GAMMA_THETA), data)
    latent = np.flatnonzero(np.asarray(LABELS) < 0)
    assert np.all(labels[:, 0] == 0) and np.all(labels[:, 3] == 2)  # observed labels held fixed
    _, p = exact_latent_posterior(DOCS, LABELS, K, V, GAMMA_PI, GAMMA_THETA)
    result = chi_square_test(_counts(labels, latent, K), p)
    assert result.p_value > 1e-4, result


def test_the_seeds_off_by_one_conditional_fails_the_enumeration_test():
    """Seed 000 §3.1 prints (C_x + γ_π,x − 1)/(C_0 + C_1 + γ_π,1 + γ_π,0 − 1) with C the
    counts of the other documents.  The denominator is common to all classes, so that
    rule is the correct sequential update with γ_π − 1 in place of γ_π: run it, compare
    with the exact posterior under γ_π, and the chi-square test must reject."""
    from functools import partial

    from gibbsjax import conjugate as cj
    from gibbsjax.models import one_label as ol
    from gibbsjax import random as gr
    from gibbsjax.kernel import sweep

    good = nb.dirichlet_multinomial(GAMMA_PI, GAMMA_THETA)

    def seed_labels(key, state, data):  # the printed conditional, written out
        labels = jnp.where(data.labels >= 0, data.labels, state.labels)
        loglik = ol.doc_log_likelihood(state.log_theta, data)
        counts = cj.class_counts(labels, K)
        keys = jax.random.split(key, data.latent.shape[0])

        def visit(counts, x):
            d, key_d = x
            counts = counts.at[labels[d]].add(-1)  # C^{(-j)}
            prior = (counts + jnp.asarray(GAMMA_PI) - 1) / (counts.sum() + sum(GAMMA_PI) - 1)
            new = gr.categorical(key_d, jnp.log(prior) + loglik[d])
            return counts.at[new].add(1), new

        _, new = jax.lax.scan(visit, counts, (data.latent, keys))
        return labels.at[data.latent].set(new)

    bad = good._replace(step=sweep(("log_theta", partial(nb.sample_theta, gamma_theta=GAMMA_THETA)),
                                   ("labels", seed_labels)))
    labels = final_labels(bad, nb.data(_corpus()))
    latent = np.flatnonzero(np.asarray(LABELS) < 0)
    _, p = exact_latent_posterior(DOCS, LABELS, K, V, GAMMA_PI, GAMMA_THETA)
    assert chi_square_test(_counts(labels, latent, K), p).p_value < 1e-4


# ----------------------------------------------------------------------------- Geweke
def test_uncollapsed_label_frequencies_match_exact_posterior_with_observed_labels():
    """π drawn instead of integrated out: the same posterior of the latent labels."""
    data = nb.data(_corpus())
    labels = final_states(nb.uncollapsed(GAMMA_PI, GAMMA_THETA), data).z
    latent = np.flatnonzero(np.asarray(LABELS) < 0)
    assert np.all(labels[:, 0] == 0) and np.all(labels[:, 3] == 2)  # observed labels held fixed
    _, p = exact_latent_posterior(DOCS, LABELS, K, V, GAMMA_PI, GAMMA_THETA)
    result = chi_square_test(_counts(labels, latent, K), p)
    assert result.p_value > 1e-4, result


def test_uncollapsed_records_pi_and_accumulates_theta_and_label_probabilities():
    import gibbsjax

    kernel = nb.uncollapsed(GAMMA_PI, GAMMA_THETA)
    data = nb.data(_corpus())
    state = kernel.init(jax.random.key(0), data)
    acc = kernel.accumulate(state, data)
    probs, theta = np.asarray(acc["doc_probs"], float), np.asarray(acc["theta"], float)
    assert probs[0].tolist() == [1, 0, 0] and probs[3].tolist() == [0, 0, 1]  # observed: one-hot
    np.testing.assert_allclose(theta, np.exp(np.asarray(state.log_beta, float)), rtol=1e-6)
    j = 1  # a latent document: π_x Π θ_x^W, normalised (written out here)
    w = np.exp(np.asarray(state.log_pi, float)) * np.prod(theta[:, DOCS[j]], axis=1)
    np.testing.assert_allclose(probs[j], w / w.sum(), atol=1e-5)
    idata = gibbsjax.sample(kernel, data, seed=0, num_chains=2, num_warmup=10, num_draws=20, progress=False)
    assert idata.posterior["pi"].dims == ("chain", "draw", "class")
    assert idata.posterior_mean["theta"].shape == (2, K, V)
    with pytest.raises(ValueError, match="gamma_pi has 2 entries"):
        gibbsjax.sample(nb.uncollapsed((1.0, 1.0)), data, seed=0, num_warmup=0, num_draws=1, progress=False)
    with pytest.raises(ValueError, match="Documents"):
        gibbsjax.sample(kernel, {"x": 1}, seed=0, num_warmup=0, num_draws=1, progress=False)


@pytest.mark.slow  # by default: label frequencies against exact enumeration, and its power
def test_geweke_with_observed_labels():
    kernel = nb.dirichlet_multinomial(GAMMA_PI, GAMMA_THETA)
    data = nb.data(_corpus())
    fns = {  # labels, θ, the Rao-Blackwellised π and label probabilities
        "labels": lambda s, d: jnp.where(d.labels >= 0, d.labels, s.labels),
        "theta": lambda s, d: jnp.exp(s.log_theta),
        "pi": lambda s, d: kernel.record(s, d)["pi"],
        "doc_probs": lambda s, d: kernel.accumulate(s, d)["doc_probs"],
    }
    geweke_test(kernel, data, fns, num_chains=500, num_steps=60, seed=11).assert_passes()


# ----------------------------------------------------------------------------- outputs
def test_recorded_pi_and_accumulated_doc_probs():
    kernel = nb.dirichlet_multinomial(GAMMA_PI, GAMMA_THETA)
    data = nb.data(_corpus())
    state = kernel.init(jax.random.key(0), data)
    rec = {**kernel.record(state, data), **kernel.accumulate(state, data)}
    probs = np.asarray(rec["doc_probs"])
    assert probs.shape == (5, K) and np.allclose(probs.sum(1), 1, atol=1e-6)
    assert probs[0].tolist() == [1, 0, 0] and probs[3].tolist() == [0, 0, 1]  # observed: one-hot
    labels = np.where(np.asarray(LABELS) >= 0, LABELS, np.asarray(state.labels))
    expect_pi = (np.bincount(labels, minlength=K) + GAMMA_PI) / (5 + sum(GAMMA_PI))
    assert np.allclose(rec["pi"], expect_pi, atol=1e-6)
    # doc_probs of a latent document: (C^{(-j)} + γ_π) Π θ^W, normalised (written out here)
    j = 1
    theta = np.exp(np.asarray(state.log_theta, float))
    others = np.bincount(np.delete(labels, j), minlength=K)
    w = (others + GAMMA_PI) * np.prod(theta[:, DOCS[j]], axis=1)
    assert np.allclose(probs[j], w / w.sum(), atol=1e-5)


def test_postprocess_reports_accuracy_on_hidden_labels():
    import gibbsjax
    from gibbsjax.config import get_spec

    docs = [["a", "a", "b"], ["c", "c"], ["a", "b"], ["c", "b", "c"], ["a"], ["c"]] * 3
    corpus = Corpus.from_token_lists(docs, labels=[0, 1] * 9, label_names=["ab", "c"])
    data = nb.data(corpus, hide_labels=0.5, split_seed=1)
    kernel = nb.dirichlet_multinomial(1.0, 0.5)
    idata = gibbsjax.sample(kernel, data, seed=0, num_chains=2, num_warmup=50, num_draws=100, progress=False)
    assert set(idata.posterior.data_vars) == {"pi"}  # big arrays are accumulated, not kept per draw; lp is a stat
    assert idata.posterior_mean["theta"].dims == ("chain", "class", "word")
    out = get_spec("naive_bayes.dirichlet_multinomial").postprocess(idata, kernel, data, {})
    est = out.estimates
    assert est.attrs["num_hidden"] == 9 and est.attrs["hidden_accuracy"] == 1.0
    assert est["predicted"].values.tolist() == [0, 1] * 9
    report = get_spec("naive_bayes.dirichlet_multinomial").report(out)
    assert "accuracy on the 9 hidden labels: 1.000" in report and "ab [" in report


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"gamma_pi": 0.0}, "gamma_pi"),
        ({"gamma_pi": (1.0, -2.0)}, "gamma_pi"),
        ({"gamma_pi": "a"}, "gamma_pi"),
        ({"gamma_theta": -1.0}, "gamma_theta"),
        ({"gamma_theta": float("inf")}, "gamma_theta"),
        ({"gamma_theta": (1.0, 2.0)}, "gamma_theta"),
    ],
)
def test_factory_rejects_bad_hyperparameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        nb.dirichlet_multinomial(**kwargs)
    with pytest.raises(ValueError, match=name):
        nb.uncollapsed(**kwargs)


def test_gamma_pi_of_the_wrong_length_is_caught_before_sampling():
    import gibbsjax

    with pytest.raises(ValueError, match="gamma_pi has 2 entries, but the model has K = 3"):
        gibbsjax.sample(nb.dirichlet_multinomial((1.0, 1.0)), nb.data(_corpus()), seed=0,
                        num_warmup=0, num_draws=1, progress=False)


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"labels": [0, -1, -1, 5, -1]}, "labels out of range: document 3 has label 5"),
        ({"labels": [0, -1, -1, -2, -1]}, "labels must be >= -1"),
        ({"labels": [0, 1]}, r"labels must have shape \(5,\)"),
        ({"labels": [0.5, 0, 0, 0, 0]}, "labels must hold integers"),
        ({"num_classes": 1}, "num_classes must be an integer >= 2"),
        ({"num_classes": 2}, "labels out of range"),
        ({"hide_labels": 1.0}, "hide_labels"),
        ({"hide_labels": -0.1}, "hide_labels"),
        ({"split_seed": -1}, "split_seed"),
    ],
)
def test_data_rejects_bad_input(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        nb.data(_corpus(), **kwargs)


def test_data_rejects_a_single_class_and_unlabelled_corpora():
    one = Corpus.from_token_lists([["a"], ["b"]], labels=[0, -1])
    with pytest.raises(ValueError, match="num_classes must be >= 2"):
        nb.data(one)
    with pytest.raises(ValueError, match="labels"):
        nb.data(Corpus.from_token_lists([["a"], ["b"]]))
    with pytest.raises(ValueError, match="corpus is empty"):
        nb.data(Corpus.from_token_lists([], labels=[]))


def test_hide_labels_hides_a_fraction_and_keeps_the_truth():
    labels = [0, 1, 2, 0, 1]
    d = nb.data(_corpus(labels), hide_labels=0.4, split_seed=3)
    obs, truth = np.asarray(d.labels), np.asarray(d.true_labels)
    assert truth.tolist() == labels and (obs == -1).sum() == 2
    assert np.all(obs[obs >= 0] == truth[obs >= 0]) and d.latent.tolist() == np.flatnonzero(obs < 0).tolist()
    again = nb.data(_corpus(labels), hide_labels=0.4, split_seed=3)
    assert np.asarray(again.labels).tolist() == obs.tolist()


def test_kernel_is_memoised():
    assert nb.dirichlet_multinomial((1, 2), 0.5) is nb.dirichlet_multinomial([1.0, 2.0], 0.5)


# ----------------------------------------------------------------------------- configs on real text
STDLIB_CONFIGS = ["naive-bayes-stdlib.toml", "mixture-unigrams-stdlib.toml",
                  "mixture-unigrams-collapsed-stdlib.toml", "bernoulli-mixture-stdlib.toml"]


@pytest.mark.parametrize("name", STDLIB_CONFIGS)
def test_stdlib_configs_load(name):
    from gibbsjax.config import load_config

    c = load_config(ROOT / "configs" / name)
    assert c.data.num_docs > 500


@pytest.mark.slow
def test_naive_bayes_stdlib_config_runs_and_reports_accuracy(tmp_path):
    from gibbsjax.cli import main

    out = tmp_path / "nb.nc"
    assert main(["run", str(ROOT / "configs" / "naive-bayes-stdlib.toml"), "--out", str(out), "--no-progress"]) == 0
    import arviz as az

    idata = az.from_netcdf(out)
    assert idata.estimates.attrs["num_hidden"] > 300
    assert idata.estimates.attrs["hidden_accuracy"] > 0.6
