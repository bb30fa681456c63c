"""Discrete Bayesian networks with Dirichlet CPTs and missing entries.

Exact enumeration of p(missing | observed) with the CPTs integrated out
(written here from the model definition, numpy float64) against the final
states of many independent vmapped chains; CPT posterior means and the
Rao-Blackwellised imputed probabilities against the same enumeration; the
mixture of unigrams as a network against the dedicated sampler; a Geweke test;
bad input.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from _exact import exact_unigram_posterior
from _exact import log_polya as _log_polya

from gibbsjax.corpus import Corpus
from gibbsjax.models import bayes_net as bn
from gibbsjax.models import mixtures
from gibbsjax.testing import chi_square_test, geweke_test

ROOT = Path(__file__).resolve().parents[1]


# A -> B, A -> C, (B, C) -> D, all binary; asymmetric priors so values are not exchangeable.
VARS = [("A", 2, []), ("B", 2, ["A"]), ("C", 2, ["A"]), ("D", 2, ["B", "C"])]
CONC = {"A": [[1.5, 0.7]], "B": [[0.8, 1.6], [2.0, 0.55]], "C": [[1.2, 0.45], [0.65, 1.75]],
        "D": [[0.5, 1.0], [1.1, 0.6], [2.0, 1.3], [0.9, 1.15]]}
ROWS = np.array([[-1, 1, 0, 1], [0, -1, -1, 1], [1, 0, 1, -1]])  # 4 missing entries: 16 completions


def _prior_table(name, card, npar):
    q = 2 ** npar
    a = np.asarray(CONC[name], float)
    return np.broadcast_to(a if a.ndim == 2 else (a[:, None] if a.ndim == 1 else a), (q, card)).copy()


def exact_network_posterior(variables, rows, prior):
    """Completions of the missing entries (itertools order), their posterior probabilities, and
    E[CPT row | observed] for every variable; CPTs integrated out (Dirichlet-multinomial per CPT row)."""
    names = [v[0] for v in variables]
    miss = np.argwhere(rows < 0)
    comps, logp, means = [], [], []
    for vals in itertools.product(*[range(variables[v][1]) for _, v in miss]):
        x = rows.copy()
        for (n, v), val in zip(miss, vals):
            x[n, v] = val
        lp, m = 0.0, {}
        for name, card, pars in variables:
            v = names.index(name)
            a = prior[name]
            counts = np.zeros_like(a)
            for row in x:
                j = 0
                for p in pars:
                    j = j * variables[names.index(p)][1] + row[names.index(p)]
                counts[j, row[v]] += 1
            lp += sum(_log_polya(counts[j], a[j]) for j in range(a.shape[0]))
            m[name] = (counts + a) / (counts + a).sum(1, keepdims=True)
        comps.append(vals)
        logp.append(lp)
        means.append(m)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    cpt_mean = {name: sum(pi * m[name] for pi, m in zip(p, means)) for name, _, _ in variables}
    return np.array(comps), p, cpt_mean


def final_states(kernel, data, *, num_chains=10_000, sweeps=20, seed=0):
    """The states after ``sweeps`` sweeps of ``num_chains`` independent chains, and their accumulators."""

    @jax.jit
    def run(key):
        def chain(k):
            k0, k1 = jax.random.split(k)
            s = kernel.init(k0, data)
            s = jax.lax.fori_loop(0, sweeps, lambda t, s: kernel.step(jax.random.fold_in(k1, t), s, data), s)
            return s, kernel.accumulate(s, data)

        return jax.vmap(chain)(jax.random.split(key, num_chains))

    s, acc = run(jax.random.key(seed))
    return jax.tree_util.tree_map(np.asarray, s), {k: np.asarray(v) for k, v in acc.items()}


def completion_counts(x, miss, cards):
    vals = np.stack([x[:, n, v] for n, v in miss], axis=1)
    radix = np.array([int(np.prod(cards[i + 1:])) for i in range(len(cards))])
    return np.bincount(vals @ radix, minlength=int(np.prod(cards)))


def test_missing_entries_cpt_means_and_imputed_probs_match_enumeration():
    net = bn.network(VARS, concentration=CONC)
    d = bn.data(net, ROWS)
    prior = {name: _prior_table(name, c, len(p)) for name, c, p in VARS}
    comps, p, cpt_mean = exact_network_posterior(VARS, ROWS, prior)
    s, acc = final_states(bn.dirichlet_cpts(), d)
    miss = np.argwhere(ROWS < 0)
    # (1) joint distribution of the missing entries
    res = chi_square_test(completion_counts(s.x, miss, [2] * len(miss)), p)
    assert res.p_value > 1e-4, res
    # (2) CPT rows' posterior means, |diff| < 5 MCSE (independent chains)
    cpt = np.exp(s.log_cpt)  # (chains, R, C)
    expected = np.concatenate([cpt_mean[name] for name, _, _ in VARS])  # stacked in variable order
    se = cpt.std(0) / np.sqrt(cpt.shape[0])
    assert np.all(np.abs(cpt.mean(0) - expected) < 5 * se + 1e-6), (cpt.mean(0), expected)
    # (3) Rao-Blackwellised imputed probabilities vs exact marginals
    probs = acc["imputed_probs"]  # (chains, N, V, C)
    for i, (n, v) in enumerate(miss):
        exact1 = p[comps[:, i] == 1].sum()
        est = probs[:, n, v, 1]
        assert abs(est.mean() - exact1) < 5 * est.std() / np.sqrt(len(est)) + 1e-6, (n, v, est.mean(), exact1)
    obs = ROWS >= 0
    assert np.all(probs[:, obs].argmax(-1) == ROWS[obs]) and np.allclose(probs[:, obs].max(-1), 1.0)


@pytest.mark.slow
def test_power_wrong_conditional_fails():
    """Dropping the children's backward messages (sampling X_v from its parents only) is detected."""
    net = bn.network(VARS, concentration=CONC)
    d = bn.data(net, ROWS)
    good = bn.dirichlet_cpts()

    def forward_only(key, state, data):
        x = bn.merge_observed(state.x, data)
        keys = jax.random.split(key, net.num_vars)
        for v in net.order:
            from gibbsjax import random as gr
            new = gr.categorical(keys[v], state.log_cpt[bn.cpt_row_index(net, x, v)])
            x = x.at[:, v].set(jnp.where(data.values[:, v] < 0, new, x[:, v]))
        return x

    from gibbsjax.kernel import sweep
    bad = good._replace(step=sweep(("x", forward_only), ("log_cpt", bn.sample_cpts)))
    prior = {name: _prior_table(name, c, len(p)) for name, c, p in VARS}
    _, p, _ = exact_network_posterior(VARS, ROWS, prior)
    s, _ = final_states(bad, d)
    miss = np.argwhere(ROWS < 0)
    assert chi_square_test(completion_counts(s.x, miss, [2] * len(miss)), p).p_value < 1e-4


# ----------------------------------------------------------------------------- mixture of unigrams
DOCS = [[0, 0, 1], [2, 2, 1], [0, 1, 2], [1, 0, 0]]  # equal-length documents over V = 3
ALPHA, LAM = (1.2, 2.5), 0.8


def unigram_network(docs, k, v, alpha, lam):
    L = len(docs[0])
    words = [f"W{i}" for i in range(L)]
    variables = [("Z", k, [])] + [(w, v, ["Z"]) for w in words]
    net = bn.network(variables, concentration={"Z": [list(alpha)], "W0": lam},
                     tied={w: "W0" for w in words[1:]})
    return net, bn.data(net, [[-1, *doc] for doc in docs])


def test_unigram_mixture_as_network_matches_dedicated_sampler():
    net, d = unigram_network(DOCS, 2, 3, ALPHA, LAM)
    assert net.num_rows == 1 + 2 and net.row_names[1] == "W0,W1,W2 | Z=0"  # tied: one word table
    _, p = exact_unigram_posterior(DOCS, 3, 2, ALPHA, LAM)
    z_net = final_states(bn.dirichlet_cpts(), d)[0].x[:, :, 0]
    corpus = Corpus.from_token_lists([[str(w) for w in doc] for doc in DOCS], vocab=["0", "1", "2"])
    ded = mixtures.unigrams(2, alpha=ALPHA, lam=LAM)
    ud = mixtures.unigram_data(corpus)

    @jax.jit
    def run(key):
        def chain(k):
            k0, k1 = jax.random.split(k)
            s = ded.init(k0, ud)
            return jax.lax.fori_loop(0, 20, lambda t, s: ded.step(jax.random.fold_in(k1, t), s, ud), s).z
        return jax.vmap(chain)(jax.random.split(key, 10_000))

    z_ded = np.asarray(run(jax.random.key(1)))
    radix = 2 ** np.arange(len(DOCS))[::-1]
    for z in (z_net, z_ded):
        res = chi_square_test(np.bincount(z @ radix, minlength=2 ** len(DOCS)), p)
        assert res.p_value > 1e-4, res


# ----------------------------------------------------------------------------- Geweke
@pytest.mark.slow  # by default: CPT means and imputed values against exact enumeration
def test_geweke():
    net = bn.network([("A", 2, []), ("B", 3, ["A"]), ("C", 2, ["A", "B"])],
                     concentration={"A": [[1.5, 0.6]], "B": [[0.8, 2.0, 1.1], [2.4, 0.5, 1.3]],
                                    "C": [[1.3, 0.4], [0.6, 1.9], [2.2, 0.9], [0.7, 1.6], [1.2, 2.6], [0.35, 0.8]]})
    d = bn.data(net, [[0, -1, 1], [-1, 2, -1], [1, -1, 0], [-1, -1, 1]])
    kernel = bn.dirichlet_cpts()
    fns = {
        "cpt": lambda s, d: jnp.exp(s.log_cpt),
        "x": lambda s, d: bn.merge_observed(s.x, d).astype(jnp.float32),
        "x_on_cpt": lambda s, d: jnp.exp(s.log_cpt[bn.cpt_row_index(net, bn.merge_observed(s.x, d), 2), 1]),
    }
    geweke_test(kernel, d, fns, num_chains=500, num_steps=60, seed=3).assert_passes()


# ----------------------------------------------------------------------------- examples and configs
def test_sprinkler_config_runs_and_reports():
    from gibbsjax.config import get_spec, load_config, run_config

    config = load_config(ROOT / "configs" / "bayes-net-sprinkler.toml")
    idata = run_config(config, progress=False)
    imp = idata["imputed"]
    assert imp["probability"].shape[0] == int((np.asarray(config.data.values) < 0).sum())
    assert np.allclose(imp["probability"].sum("value"), 1.0, atol=1e-4)
    report = get_spec("bayes_net.dirichlet_cpts").report(idata)
    assert "WetGrass | Sprinkler=1,Rain=1" in report and "imputed" in report


def test_abc_network_finds_an_a_topic_and_a_c_topic():
    from gibbsjax.config import load_config, run_config

    idata = run_config(load_config(ROOT / "configs" / "bayes-net-abc.toml"), progress=False)
    cpt = idata["cpt_means"]["cpt"]
    words = cpt.sel(cpt_row=[r for r in cpt.cpt_row.values if r.startswith("X1")]).values[:, :3]
    a_topic = int(np.argmax(words[:, 0]))
    assert words[a_topic, 0] > 0.5 and words[1 - a_topic, 2] > 0.45


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "variables, kwargs, msg",
    [
        ([("A", 2, ["B"]), ("B", 2, ["A"])], {}, "cycle"),
        ([("A", 2, ["A"])], {}, "own parent"),
        ([("A", 2, ["Q"])], {}, "parent 'Q' does not exist"),
        ([("A", 2, []), ("A", 3, [])], {}, "duplicate"),
        ([("A", 1, [])], {}, "cardinality"),
        ([("A", 2, [])], {"concentration": 0.0}, "positive"),
        ([("A", 2, [])], {"concentration": {"A": -1.0}}, "positive"),
        ([("A", 2, [])], {"concentration": float("nan")}, "positive"),
        ([("A", 2, []), ("B", 2, ["A"])], {"concentration": {"B": [1.0, 1.0, 1.0]}}, "shape"),
        ([("A", 2, []), ("B", 3, [])], {"tied": {"B": "A"}}, "same cardinality"),
        ([], {}, "non-empty"),
    ],
)
def test_network_rejects_bad_input(variables, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        bn.network(variables, **kwargs)


@pytest.mark.parametrize(
    "rows, msg",
    [
        ([[0, 2]], "outside 0..1"),
        ([[0, -2]], "outside"),
        ([[0, 1, 1]], "shape"),
        ([0, 1], "shape"),
        ([[0.0, float("nan")]], "NaN"),
        ([[0.5, 1]], "integers"),
        ([{"A": 0, "Q": 1}], "unknown variable"),
    ],
)
def test_data_rejects_bad_rows(rows, msg):
    net = bn.network([("A", 2, []), ("B", 2, ["A"])])
    with pytest.raises(ValueError, match=msg):
        bn.data(net, rows)
