"""HMMs by FFBS: exact path posterior, brute-force likelihood, padding, Geweke, bad input."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import logsumexp

import gibbsjax
from gibbsjax.config import load_config
from gibbsjax.datasets.tabular import casino
from gibbsjax.models import ffbs as ffbs_module
from gibbsjax.models import hmm
from gibbsjax.testing import chi_square_test, geweke_test
from gibbsjax.specs import hmm as hmm_spec

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


# --------------------------------------------------------------------------- exact references
def _params(k, t, seed):
    """Fixed, uneven parameters and emission log-likelihoods for one sequence (float64)."""
    rng = np.random.default_rng(seed)
    log_initial = np.log(rng.dirichlet(np.ones(k)))
    log_transition = np.log(rng.dirichlet(np.ones(k), size=k))
    log_lik = rng.normal(0.0, 1.5, size=(t, k))
    return log_initial, log_transition, log_lik


def _path_log_joint(path, log_initial, log_transition, log_lik):
    lp = log_initial[path[0]] + log_lik[0, path[0]]
    for t in range(1, len(path)):
        lp += log_transition[path[t - 1], path[t]] + log_lik[t, path[t]]
    return lp


def _exact_path_posterior(k, length, params):
    """p(z_1..length | y) for every path, by enumeration; paths in lexicographic order."""
    li, lt, ll = params
    paths = list(itertools.product(range(k), repeat=length))
    lj = np.array([_path_log_joint(p, li, lt, ll[:length]) for p in paths])
    return paths, np.exp(lj - logsumexp(lj))


@functools.lru_cache(maxsize=None)
def _ffbs_draws(sampler, n, length, seed=0):
    """n independent FFBS draws (one key each) for the K = 2, T = 6 test problem."""
    li, lt, ll = (jnp.asarray(a, jnp.float32) for a in _params(2, 6, seed=11))
    keys = jax.random.split(jax.random.key(seed), n)
    draw = jax.jit(jax.vmap(sampler, in_axes=(0, None, None, None, None)))
    return np.asarray(draw(keys, li, lt, ll, jnp.int32(length)))


def _path_counts(draws, k, length):
    index = np.zeros(len(draws), dtype=np.int64)
    for t in range(length):
        index = index * k + draws[:, t]
    return np.bincount(index, minlength=k**length)


@pytest.mark.parametrize("length", [6, 4])
def test_ffbs_draws_match_the_exact_path_posterior(length):
    """K = 2, T = 6 (and 4 real steps padded to 6): all 2^T paths enumerated."""
    draws = _ffbs_draws(ffbs_module.ffbs, 40_000, length)
    assert np.all(draws[:, length:] == 0)  # padding steps are 0
    _, probs = _exact_path_posterior(2, length, _params(2, 6, seed=11))
    counts = _path_counts(draws, 2, length)
    result = chi_square_test(counts, probs)
    assert result.p_value > 1e-4, result


def test_chi_square_catches_sampling_from_the_filtered_marginals():
    """Power: a wrong backward pass (z_t drawn from p(z_t | y_1..t), ignoring z_t+1) fails."""

    def wrong_ffbs(key, li, lt, ll, length):
        log_filtered, _ = ffbs_module.forward_filter(li, lt, ll, length)
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, jnp.arange(ll.shape[0]))
        from gibbsjax import random as gr

        return jax.vmap(gr.categorical)(keys, log_filtered)

    draws = _ffbs_draws(wrong_ffbs, 40_000, 6)
    _, probs = _exact_path_posterior(2, 6, _params(2, 6, seed=11))
    assert chi_square_test(_path_counts(draws, 2, 6), probs).p_value < 1e-6


@pytest.mark.parametrize("k, t, length", [(2, 6, 6), (3, 6, 6), (3, 6, 3), (2, 1, 1)])
def test_forward_log_likelihood_equals_the_sum_over_all_paths(k, t, length):
    params = _params(k, t, seed=5 + k)
    paths = itertools.product(range(k), repeat=length)
    brute = logsumexp([_path_log_joint(p, *params[:2], params[2][:length]) for p in paths])
    with jax.enable_x64(True):
        got = jax.jit(ffbs_module.forward_log_likelihood)(*(jnp.asarray(a, jnp.float64) for a in params), jnp.int32(length))
        assert got.dtype == jnp.float64
        assert abs(float(got) - brute) < 1e-6


def test_forward_is_stable_for_long_sequences():
    """5000 steps of tiny emission probabilities: normalised every step, finite throughout."""
    li, lt, _ = (jnp.asarray(a, jnp.float32) for a in _params(2, 1, seed=1))
    ll = jnp.full((5_000, 2), -50.0).at[:, 1].set(-51.0)
    log_filtered, log_norm = jax.jit(ffbs_module.forward_filter)(li, lt, ll)
    assert bool(jnp.all(jnp.isfinite(log_filtered))) and bool(jnp.all(jnp.isfinite(log_norm)))
    assert float(jnp.sum(log_norm)) < -2.5e5
    path = jax.jit(ffbs_module.ffbs)(jax.random.key(0), li, lt, ll)
    assert path.shape == (5_000,) and int(path.min()) >= 0 and int(path.max()) <= 1


# --------------------------------------------------------------------------- padding
SEQS = [[0, 1, 2, 2, 1], [2, 2], [1, 0, 0, 2, 1, 1, 0]]


def _categorical_state(num_steps, k=2, v=3, seed=0):
    rng = np.random.default_rng(seed)
    return hmm.CategoricalHMMState(
        z=jnp.zeros((len(SEQS), num_steps), jnp.int32),
        log_initial=jnp.log(jnp.asarray(rng.dirichlet(np.ones(k)), jnp.float32)),
        log_transition=jnp.log(jnp.asarray(rng.dirichlet(np.ones(k), size=k), jnp.float32)),
        log_emission=jnp.log(jnp.asarray(rng.dirichlet(np.ones(v), size=k), jnp.float32)),
    )


@jax.jit
def _batch_sweep_parts(key, state, d):
    """What a sweep computes from the data: per-sequence log-likelihoods, paths, posterior
    concentrations given those paths, and the log joint."""
    state = state._replace(z=hmm.sample_paths(key, state, d))
    return {
        "log_lik": hmm.sequence_log_likelihoods(state, d),
        "z": state.z,
        "initial": hmm.initial_posterior(state, d, alpha_init=1.0),
        "transition": hmm.transition_posterior(state, d, alpha_trans=0.0),
        "emission": hmm.emission_posterior(state, d, beta=0.5),
        "log_joint": hmm.categorical(K=2).log_joint(state, d),
    }


@jax.jit
def _single_sequence(key, log_initial, log_transition, log_lik):
    return ffbs_module.ffbs(key, log_initial, log_transition, log_lik), ffbs_module.forward_log_likelihood(
        log_initial, log_transition, log_lik)


def test_padded_batch_gives_each_sequences_own_results():
    batch = hmm.categorical_data(SEQS, num_symbols=3, pad_to=9)
    state = _categorical_state(9)
    key = jax.random.key(7)
    out = _batch_sweep_parts(key, state, batch)
    for s, seq in enumerate(SEQS):
        alone = hmm.categorical_data([seq], num_symbols=3)
        ll = hmm.emission_log_lik(state, alone)[0]
        # sequence s uses fold_in(key, s) in the batch
        path, log_lik = _single_sequence(jax.random.fold_in(key, s), state.log_initial, state.log_transition, ll)
        np.testing.assert_allclose(float(out["log_lik"][s]), float(log_lik), rtol=1e-6)
        np.testing.assert_array_equal(out["z"][s, : len(seq)], path)
        assert np.all(np.asarray(out["z"][s, len(seq):]) == 0)


def test_extra_padding_changes_nothing_in_a_sweep():
    """A sweep is paths (FFBS), then parameters drawn from posteriors that depend on the
    data only through counts: with 5 more padding steps, all of these agree."""
    key = jax.random.key(3)
    a = _batch_sweep_parts(key, _categorical_state(7), hmm.categorical_data(SEQS, num_symbols=3))
    b = _batch_sweep_parts(key, _categorical_state(12), hmm.categorical_data(SEQS, num_symbols=3, pad_to=12))
    np.testing.assert_array_equal(a["z"], b["z"][:, :7])
    assert np.all(np.asarray(b["z"][:, 7:]) == 0)
    for name in ("initial", "transition", "emission"):
        np.testing.assert_array_equal(a[name], b[name])
    np.testing.assert_allclose(a["log_joint"], b["log_joint"], rtol=1e-6)
    assert float(jnp.sum(b["transition"])) == sum(len(q) - 1 for q in SEQS)
    assert float(jnp.sum(b["emission"] - 0.5)) == sum(len(q) for q in SEQS)


def test_log_joint_sums_to_prior_plus_forward_likelihood():
    """logsumexp over all paths of log p(θ, z, y) = log p(θ) + log p(y | θ), one padded sequence."""
    alpha_init, alpha_trans, beta = np.array([2.0, 0.8]), np.array([[3.0, 1.1], [0.5, 2.2]]), np.array([0.7, 1.9, 1.3])
    kernel = hmm.categorical(K=2, alpha_init=alpha_init, alpha_trans=alpha_trans, beta=beta)
    rng = np.random.default_rng(2)
    pi, a, b = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2), size=2), rng.dirichlet(np.ones(3), size=2)
    from scipy.stats import dirichlet

    log_prior = (dirichlet.logpdf(pi, alpha_init) + sum(dirichlet.logpdf(a[j], alpha_trans[j]) for j in range(2))
                 + sum(dirichlet.logpdf(b[k], beta) for k in range(2)))
    y = [0, 2, 1, 1, 0]
    with jax.enable_x64(True):
        d = hmm.categorical_data([y], num_symbols=3, pad_to=7)
        paths = np.array(list(itertools.product(range(2), repeat=5)))
        z = jnp.pad(jnp.asarray(paths, jnp.int32), ((0, 0), (0, 2)))[:, None, :]
        state = hmm.CategoricalHMMState(z[0], *(jnp.log(jnp.asarray(p)) for p in (pi, a, b)))
        lj = jax.jit(jax.vmap(lambda zz: kernel.log_joint(state._replace(z=zz), d)))(z)
        log_lik = float(jax.jit(hmm.sequence_log_likelihoods)(state, d)[0])
    assert abs(logsumexp(np.asarray(lj)) - (log_prior + log_lik)) < 1e-9
    brute = logsumexp([_path_log_joint(p, np.log(pi), np.log(a), np.log(b)[:, y].T) for p in paths])
    assert abs(log_lik - brute) < 1e-9


# --------------------------------------------------------------------------- Geweke
def _geweke_functions(kernel, data):
    from gibbsjax.testing import default_test_functions

    fns = default_test_functions(kernel, data)

    def mask(d):
        return jnp.arange(d.y.shape[1])[None, :] < d.lengths[:, None]

    fns["z_mean"] = lambda s, d: jnp.sum(jnp.where(mask(d), s.z, 0))
    fns["switches"] = lambda s, d: jnp.sum(jnp.where(mask(d)[:, 1:], s.z[:, 1:] != s.z[:, :-1], False))
    fns["y_z"] = lambda s, d: jnp.sum(jnp.where(mask(d), d.y * (2 * s.z - 1), 0))
    fns["y_y"] = lambda s, d: jnp.sum(jnp.where(mask(d), d.y * d.y, 0))
    return fns


# Generic hyperparameters: asymmetric matrices and vectors, all values distinct (a transposed
# transition concentration, or alpha_init used for a transition row, changes the answer).
ALPHA_INIT = (0.6, 1.4)
ALPHA_TRANS = ((2.5, 0.4), (0.8, 1.7))
BETA = ((0.5, 1.2, 2.1), (1.6, 0.3, 0.9))


def test_geweke_categorical_hmm():
    kernel = hmm.categorical(K=2, alpha_init=ALPHA_INIT, alpha_trans=ALPHA_TRANS, beta=BETA)
    data = hmm.categorical_data([[0, 1, 2, 0], [1, 2]], num_symbols=3)
    result = geweke_test(kernel, data, _geweke_functions(kernel, data), num_chains=1000, num_steps=200, seed=4)
    result.assert_passes()


@pytest.mark.slow  # by default: FFBS against exact enumeration, the categorical HMM's Geweke test
def test_geweke_gaussian_hmm():
    kernel = hmm.gaussian(K=2, alpha_init=(1.3, 0.7), alpha_trans=((1.8, 0.6), (0.9, 2.4)),
                          mu0=0.8, lam=0.45, a=3.2, b=1.9)
    data = hmm.gaussian_data([[0.1, -0.3, 1.2, 0.5], [2.0, 0.0]])
    result = geweke_test(kernel, data, _geweke_functions(kernel, data), num_chains=1000, num_steps=200, seed=5)
    result.assert_passes()


# --------------------------------------------------------------------------- runs and configs
def test_configs_load():
    config = load_config(CONFIGS / "hmm-casino.toml")
    assert config.model == "hmm.categorical" and config.hyperparameters["K"] == 2
    truth = casino()
    assert config.data.y.shape == (8, max(len(s) for s in truth["sequences"]))
    np.testing.assert_array_equal(config.data.lengths, [len(s) for s in truth["sequences"]])
    np.testing.assert_array_equal(config.data.y[0, : len(truth["sequences"][0])], truth["sequences"][0])
    assert config.data.symbol_counts.shape == (6,)
    config = load_config(CONFIGS / "hmm-faithful.toml")
    assert config.model == "hmm.gaussian" and config.data.y.shape == (1, 272)


@pytest.mark.parametrize("kernel, data", [
    (hmm.categorical(K=3), hmm.categorical_data(SEQS, num_symbols=3)),
    (hmm.gaussian(K=2), hmm.gaussian_data([[0.5, 1.0], [2.0]])),
])
def test_recorded_shapes_match_the_declared_dims(kernel, data):
    """What ArviZ needs, checked abstractly (no compilation)."""
    state = jax.eval_shape(kernel.init, jax.random.key(0), data)
    recorded = jax.eval_shape(kernel.record, state, data)
    recorded.update(jax.eval_shape(kernel.accumulate, state, data))
    recorded.update(jax.eval_shape(kernel.log_likelihood, state, data))
    assert set(recorded) == set(kernel.dims)
    for name, value in recorded.items():
        assert value.ndim == len(kernel.dims[name]), name


@pytest.mark.slow
def test_casino_run_recovers_the_loaded_die():
    config = load_config(CONFIGS / "hmm-casino.toml")
    idata = gibbsjax.sample(config.kernel, config.data, seed=3, num_chains=2, num_warmup=150,
                            num_draws=150, progress=False)
    idata = hmm_spec.align(idata)
    emission = idata.posterior["emission_sorted"].mean(("chain", "draw")).values
    assert 0.4 < emission[1, 5] < 0.6  # the loaded die shows a six half the time
    assert np.all(emission[1, :5] < 0.15) and np.all(np.abs(emission[0] - 1 / 6) < 0.08)
    probs = idata.posterior_mean["state_probs"].transpose("chain", "sequence", "step", "state").values
    lengths = np.asarray(config.data.lengths)
    np.testing.assert_allclose(probs[:, 0, : lengths[0]].sum(-1), 1.0, rtol=1e-5)
    assert np.all(probs[:, 0, lengths[0]:] == 0)
    trans = idata.posterior["transition"].values
    assert trans.shape == (2, 150, 2, 2)
    np.testing.assert_allclose(trans.sum(-1), 1.0, rtol=1e-5)


def test_align_permutes_both_transition_axes():
    from gibbsjax.diagnostics import to_inference_data

    t = np.array([[0.9, 0.1], [0.3, 0.7]])
    swapped = t[::-1, ::-1]
    post = {
        "emission": np.array([[[[0.8, 0.2], [0.1, 0.9]]] * 3, [[[0.1, 0.9], [0.8, 0.2]]] * 3]),
        "transition": np.array([[t] * 3, [swapped] * 3]),
    }
    idata = to_inference_data(post, dims={"emission": ["state", "symbol"], "transition": ["state", "state_to"]})
    aligned = hmm_spec.align(idata)
    np.testing.assert_allclose(aligned.posterior["transition"].values[1, 0], t)
    np.testing.assert_allclose(aligned.posterior["emission"].values[1, 0], [[0.8, 0.2], [0.1, 0.9]])


def test_same_hyperparameters_reuse_the_kernel():
    assert hmm.categorical(K=3, beta=[1, 2, 3]) is hmm.categorical(K=3, beta=(1.0, 2.0, 3.0))
    assert hmm.gaussian(K=2) is hmm.gaussian(K=2)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "sequences, kwargs, msg",
    [
        ([[0, 1], []], {}, r"sequence 1 is empty \(length 0\)"),
        ([], {}, "at least one sequence"),
        ([[0, 1, 5]], {"num_symbols": 3}, r"symbol 5 at position 2, outside the alphabet 0\.\.2"),
        ([[0, -1]], {}, "outside the alphabet"),
        ([[0, 1.5]], {}, "non-integer"),
        ([[0, float("nan")]], {}, "NaN"),
        ([[[0, 1]]], {}, "1-D"),
        ([[0, 1]], {"num_symbols": 0}, "num_symbols"),
        ([[0, 1, 1]], {"pad_to": 2}, "pad_to"),
        (np.zeros((2, 2, 2)), {}, "1-D or 2-D"),
    ],
)
def test_categorical_data_rejects_bad_input(sequences, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        hmm.categorical_data(sequences, **kwargs)


@pytest.mark.parametrize(
    "sequences, msg",
    [([[1.0, float("inf")]], "NaN or infinite"), ([[]], "empty"), ([["a", "b"]], "numbers")],
)
def test_gaussian_data_rejects_bad_input(sequences, msg):
    with pytest.raises(ValueError, match=msg):
        hmm.gaussian_data(sequences)


@pytest.mark.parametrize(
    "factory, kwargs, msg",
    [
        (hmm.categorical, {"K": 0}, "K must be an integer >= 1"),
        (hmm.categorical, {"K": 2.0}, "K must be an integer"),
        (hmm.categorical, {"alpha_init": 0.0}, "alpha_init"),
        (hmm.categorical, {"alpha_trans": [[1.0, -1.0], [1.0, 1.0]]}, "alpha_trans"),
        (hmm.categorical, {"alpha_trans": [1.0, 1.0, 1.0]}, "alpha_trans must be"),
        (hmm.categorical, {"beta": -1.0}, "beta"),
        (hmm.categorical, {"beta": np.ones((3, 4))}, "beta"),
        (hmm.gaussian, {"lam": 0.0}, "allow_improper"),
        (hmm.gaussian, {"a": 0.0, "b": 0.0}, "allow_improper"),
        (hmm.gaussian, {"b": -1.0}, "b must be positive"),
        (hmm.gaussian, {"mu0": float("nan")}, "mu0 must be finite"),
    ],
)
def test_factories_reject_bad_hyperparameters(factory, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        factory(**kwargs)


def test_improper_gaussian_needs_the_opt_in_and_has_no_prior_sampler():
    kernel = hmm.gaussian(K=2, lam=0.0, a=0.0, b=0.0, allow_improper=True)
    assert kernel.sample_prior is None


def test_kernels_reject_data_of_the_wrong_kind_or_alphabet():
    with pytest.raises(ValueError, match="categorical_data"):
        hmm.categorical(K=2).init(jax.random.key(0), hmm.gaussian_data([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="V = 3 symbols"):
        hmm.categorical(K=2, beta=[1.0, 1.0]).init(jax.random.key(0), hmm.categorical_data([[0, 2]]))
