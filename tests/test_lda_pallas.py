"""The fused Pallas z-update of partially collapsed LDA, in Pallas interpret mode on the CPU.

* agreement with the XLA path (``lda.sample_z_partially_collapsed``) for the same key and
  state, up to float32 summation order, checked against a float64 replay in numpy;
* exactness: exact enumeration and a Geweke test of a sweep built with the kernel, and a
  deliberately stale variant (n_dk rows not updated within a document) that fails both;
* the final count table, vmapping over chains, the Triton lowering (no GPU needed), bad input;
* on a GPU (skipped elsewhere): the compiled kernel against the same float64 replay.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_lda import TINY_DOCS, _lp_test_functions, _state_counts, exact_posterior, final_states
from test_lda_gpu_path import abstract_gpu

from gibbsjax.corpus import Corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import pallas as lp
from gibbsjax.testing import chi_square_test, geweke_test

K, ALPHA, ETA = 2, 0.6, 0.35  # as test_lda: distinct, so alpha and eta cannot be confused
EPS32 = 2.0**-23


def _pallas_kernel(k, alpha, eta, *, stale=False, lanes_per_program=None):
    """``lda.partially_collapsed`` with its z-update replaced by the fused kernel (interpret mode)."""
    base = lda.partially_collapsed(k, alpha=alpha, eta=eta)
    if stale:
        z_update = functools.partial(_stale_z, K=k, alpha=alpha, lanes_per_program=lanes_per_program)
    else:
        z_update = functools.partial(lp.sample_z_pallas, K=k, alpha=alpha, interpret=True,
                                     lanes_per_program=lanes_per_program)
    step = sweep(("log_phi", functools.partial(lda.sample_log_phi, K=k, eta=eta)), ("z", z_update))
    return base._replace(step=step, name="pallas-stale" if stale else "pallas")


def _stale_z(key, state, d, *, K, alpha, lanes_per_program):
    """Every token of a document from the start-of-sweep counts (rows never updated): not exact."""
    return lp.fused_z_update(key, state, d, K=K, alpha=alpha, interpret=True,
                        lanes_per_program=lanes_per_program, stale=True)[0]


# ----------------------------------------------------------------------------- agreement
def _random_problem(k, seed, *, num_docs=40, vocab=30, num_lanes=7):
    """A corpus of ragged documents packed with several documents per lane, a random z and a
    peaked log φ (some entries far below the floor, so ``LOG_PHI_FLOOR`` is exercised)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 25, size=num_docs)
    docs = [[f"w{rng.integers(0, vocab)}" for _ in range(n)] for n in lengths]
    d = lda.data(Corpus.from_token_lists(docs), num_lanes=num_lanes)
    z = jnp.asarray(rng.integers(0, k, size=d.words.shape) * np.asarray(d.mask), jnp.int32)
    log_phi = np.log(rng.dirichlet(np.full(d.word_counts.shape[0], 0.3), size=k))
    log_phi[rng.random(log_phi.shape) < 0.05] = -200.0
    return d, lda.LDAState(z, jnp.asarray(log_phi, jnp.float32))


def _replay(d, state, z_new, u, k, alpha):
    """Walk every document's tokens in order along the trajectory ``z_new`` in float64 numpy.

    Returns, per real token (grid order): whether the draw equals the float64 inverse-CDF draw
    given the same earlier draws, and the distance of u·total to the nearest interior
    cumulative boundary, relative to the total."""
    words, docs, mask = (np.asarray(a) for a in (d.words, d.docs, d.mask))
    z_old, z_new, u = np.asarray(state.z), np.asarray(z_new), np.asarray(u, np.float64)
    log_phi = np.asarray(state.log_phi, np.float64)
    phi_t = np.exp(np.maximum(log_phi - log_phi.max(axis=0), lda.conditionals.LOG_PHI_FLOOR)).T  # (V, K)
    num_docs = d.doc_lengths.shape[0]
    ndk = np.zeros((num_docs, k))
    np.add.at(ndk, (docs[mask], z_old[mask]), 1)
    equal = np.ones(words.shape, bool)
    gap = np.full(words.shape, np.inf)
    for s, r in zip(*np.nonzero(mask.T)[::-1]):  # lane by lane, steps in order
        doc = docs[s, r]
        n = ndk[doc].copy()
        n[z_old[s, r]] -= 1
        c = np.cumsum(phi_t[words[s, r]] * (n + alpha))
        target = u[s, r] * c[-1]
        expected = min(int(np.sum(c <= target)), k - 1)
        equal[s, r] = z_new[s, r] == expected
        gap[s, r] = np.min(np.abs(c[:-1] - target)) / c[-1] if k > 1 else np.inf
        n[z_new[s, r]] += 1
        ndk[doc] = n
    return equal[mask], gap[mask]


def _tolerance(k):
    """A float32 sum of K non-negative terms, in any order, is within (K − 1)·ε of the exact sum
    (relative to the total); weights and u·total add a few ε more."""
    return 4 * (k + 2) * EPS32


@pytest.mark.parametrize("k, lanes", [(5, 4), (37, 2)])
def test_draws_agree_with_the_xla_path_up_to_summation_order(k, lanes):
    d, state = _random_problem(k, seed=k)
    key = jax.random.key(100 + k)
    alpha = 0.3
    z_xla = lda.sample_z_partially_collapsed(key, state, d, K=k, alpha=alpha)
    z_pal = lp.sample_z_pallas(key, state, d, K=k, alpha=alpha, interpret=True, lanes_per_program=lanes)
    assert z_pal.shape == d.words.shape and z_pal.dtype == jnp.int32
    assert np.all(np.asarray(z_pal)[~np.asarray(d.mask)] == 0)
    u = lda.token_uniforms(key, d)  # the uniforms both paths use
    tol = _tolerance(k)
    for z in (z_pal, z_xla):  # each path along its own trajectory, against the float64 replay
        equal, gap = _replay(d, state, z, u, k, alpha)
        assert np.all(gap[~equal] <= tol), gap[~equal]
    # and against each other: tokens differ only downstream of a near-boundary draw
    differ = (np.asarray(z_pal) != np.asarray(z_xla))[np.asarray(d.mask)]
    assert differ.mean() <= 0.01, differ.mean()


def test_the_replay_catches_a_wrong_conditional():
    """The agreement test has power: the stale variant's draws are flagged far from any boundary."""
    k = 5
    d, state = _random_problem(k, seed=k)
    key = jax.random.key(105)
    z = lp.fused_z_update(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=4, stale=True)[0]
    equal, gap = _replay(d, state, z, lda.token_uniforms(key, d), k, 0.3)
    assert np.sum(gap[~equal] > _tolerance(k)) >= 5


def test_final_counts_equal_a_scatter_add_of_the_new_topics():
    k = 5  # the problem and settings of the agreement test: its compiled kernel is reused
    d, state = _random_problem(k, seed=k)
    z, ndk = lp.sample_z_pallas_with_counts(jax.random.key(0), state, d, K=k, alpha=0.3, interpret=True,
                                            lanes_per_program=4)
    expected, _, _ = lda.topic_counts(z, d, k)
    np.testing.assert_array_equal(np.asarray(ndk), np.asarray(expected))


def test_vmap_over_chains_equals_one_call_per_chain():
    k = 3
    d, state = _random_problem(k, seed=4, num_docs=12, num_lanes=3)
    rng = np.random.default_rng(4)
    keys = jax.random.split(jax.random.key(1), 3)
    states = lda.LDAState(jnp.asarray(rng.integers(0, k, (3, *d.words.shape)) * np.asarray(d.mask), jnp.int32),
                          jnp.asarray(np.log(rng.dirichlet(np.ones(d.word_counts.shape[0]), (3, k))), jnp.float32))
    f = functools.partial(lp.sample_z_pallas, K=k, alpha=0.2, interpret=True, lanes_per_program=2)
    batched = jax.vmap(lambda key, s: f(key, s, d))(keys, states)
    for c in range(3):
        one = f(keys[c], jax.tree_util.tree_map(lambda a, c=c: a[c], states), d)
        np.testing.assert_array_equal(np.asarray(batched[c]), np.asarray(one))


# ----------------------------------------------------------------------------- exactness
def _tiny(num_lanes):
    corpus = Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"])
    return lda.data(corpus, num_lanes=num_lanes)


@pytest.mark.parametrize("stale", [False, True])
def test_visit_frequencies_against_exact_enumeration(stale):
    """Two lanes for three documents: one lane walks two documents, so the row reload runs.
    The stale variant (counts of a document frozen at the start of the sweep) must fail."""
    data = _tiny(num_lanes=2)
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    z = final_states(_pallas_kernel(K, ALPHA, ETA, stale=stale, lanes_per_program=2), data,
                     num_chains=10_000, num_sweeps=20, seed=7)
    p_value = chi_square_test(_state_counts(z, K), probs).p_value
    if stale:
        assert p_value < 1e-4, p_value
    else:
        assert p_value > 1e-4, p_value


def _geweke_data():
    corpus = Corpus.from_token_lists([["a", "b", "a", "c"], ["b", "c", "c", "a"], ["c", "a"]],
                                     vocab=["a", "b", "c"])
    return lda.data(corpus, num_lanes=2)


@pytest.mark.slow  # ~16 s of interpret-mode compilation; the default run checks the exact enumeration above
def test_geweke():
    result = geweke_test(_pallas_kernel(K, ALPHA, ETA), _geweke_data(), _lp_test_functions(K, ALPHA, ETA),
                         num_chains=500, num_steps=40, seed=11)
    result.assert_passes()


@pytest.mark.slow  # ~20 s of compilation; the enumeration test shows the same power by default
def test_geweke_flags_the_stale_variant():
    result = geweke_test(_pallas_kernel(K, 0.2, 0.2, stale=True), _geweke_data(), _lp_test_functions(K, 0.2, 0.2),
                         num_chains=500, num_steps=40, seed=11)
    assert not result.passed, result


SPLIT_BY_CHAINS = r"""
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import types
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from gibbsjax.corpus import Corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import chain_launch, fused_triton as ft, pallas as lp

launched = []
{patch}
d = lda.data(Corpus.from_token_lists([["a", "b", "a", "c"], ["c", "b"], ["a", "a", "b"]]), num_lanes=2)
k, chains = 3, 4
rng = np.random.default_rng(0)
z = jnp.asarray(rng.integers(0, k, (chains, *d.words.shape)) * np.asarray(d.mask), jnp.int32)
log_phi = jnp.asarray(np.log(rng.dirichlet(np.ones(3), (chains, k))), jnp.float32)
keys = jax.random.split(jax.random.key(0), chains)
f = jax.jit(jax.vmap(lambda key, z, log_phi: ({z_update})(key, lda.LDAState(z, log_phi), d, K=k, alpha=0.1)))
one = np.asarray(f(keys, z, log_phi))
put = lambda x: jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()), ("chain",)), PartitionSpec("chain")))
two = np.asarray(f(put(keys), put(z), put(log_phi)))
print(json.dumps({{"lanes": d.words.shape[1], "launched": launched, "same": bool(np.array_equal(one, two))}}))
"""


def run_split_by_chains(patch: str, z_update: str) -> dict:
    """Run :data:`SPLIT_BY_CHAINS` in a process with 2 CPU devices: ``patch`` records what each
    traced launch gets in ``launched``; ``z_update`` is called for 4 chains on one device, then
    with the chains spread over the 2.  Returns ``lanes`` (of the grid), ``launched`` and ``same``
    (the draws of both runs equal)."""
    import json
    import os
    import subprocess
    import sys

    code = SPLIT_BY_CHAINS.format(patch=patch, z_update=z_update)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_chains_spread_over_devices_launch_the_kernel_on_each_devices_own_chains():
    """With 4 chains spread over 2 devices (as ``sample(..., devices=2)`` places them), the SPMD
    partitioner splits the kernel's launch along the chains: each device launches its own 2 (the
    whole 4-chain launch is traced first, abstractly).  Without the partitioning rule only the
    whole launch is traced, and on a GPU XLA would run that custom call whole on every device.
    The draws equal those of one device."""
    report = run_split_by_chains(
        patch="one_launch = chain_launch.one_launch\n"
              "lp.one_launch = lambda launch, rule, **kw: one_launch(\n"
              "    lambda *a: launched.append(a[0].shape[0]) or launch(*a), rule, **kw)",  # chains of each launch
        z_update="lambda *a, **kw: lp.sample_z_pallas(*a, **kw, interpret=True)")
    assert report["same"] and 2 in report["launched"] and 4 in report["launched"], report


# ----------------------------------------------------------------------------- the GPU program
def test_lowers_to_a_triton_kernel_without_a_gpu():
    """Every operation of the kernel has a Triton lowering (power-of-two tiles, no unsupported
    primitive): lowering for CUDA needs no GPU, only jaxlib's Triton dialect."""
    k = 100
    d, state = _random_problem(k, seed=1)
    f = jax.jit(functools.partial(lp.sample_z_pallas_with_counts, K=k, alpha=0.1, interpret=False))
    try:
        with abstract_gpu():
            text = f.trace(jax.random.key(0), state, d).lower(lowering_platforms=("cuda",)).as_text()
    except (ImportError, NotImplementedError) as err:  # a jaxlib built without the Triton dialect
        pytest.skip(f"no Triton lowering in this jaxlib: {err}")
    assert "triton" in text


@pytest.mark.skipif(not lp.available(), reason="needs a GPU (compiled Triton kernel)")
@pytest.mark.parametrize("k", [100, 1000])
def test_compiled_kernel_on_a_gpu(k):
    d, state = _random_problem(k, seed=k, num_docs=400, vocab=300, num_lanes=64)
    key = jax.random.key(7)
    z, ndk = lp.sample_z_pallas_with_counts(key, state, d, K=k, alpha=0.1)
    equal, gap = _replay(d, state, z, lda.token_uniforms(key, d), k, 0.1)
    assert np.all(gap[~equal] <= _tolerance(k))
    np.testing.assert_array_equal(np.asarray(ndk), np.asarray(lda.topic_counts(z, d, k)[0]))


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"K": 4}, "topics"),
        ({"K": 3, "alpha": 0.0}, "alpha"),
        ({"K": 3, "lanes_per_program": 3}, "power of two"),
        ({"K": 3, "lanes_per_program": 0}, "lanes_per_program"),
    ],
)
def test_bad_input(kwargs, msg):
    d, state = _random_problem(3, seed=0, num_docs=5)
    kwargs = {"alpha": 0.1, "interpret": True, **kwargs}
    with pytest.raises(ValueError, match=msg):
        lp.sample_z_pallas(jax.random.key(0), state, d, **kwargs)


def test_available_matches_the_backend():
    assert lp.available() == (jax.default_backend() == "gpu")
