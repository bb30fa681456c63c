"""The fused z-update written in Triton's language (``z_update="triton"``), the way the GPU path
survives the removal of Pallas's Triton backend, checked on a CPU:

* in Triton's interpreter (the kernel's own source, numpy on the host): agreement with the
  float64 replay of the Pallas tests and with the Pallas kernel, the final count table,
  ``vmap`` over chains folded into one launch, exact enumeration of a tiny corpus and a
  deliberately stale variant that fails it (Geweke in the slow run);
* compiled by Triton for an H100 (sm_90) without a GPU: it compiles, and at K = 100 and 1,000
  with the default settings it keeps its tiles in registers (no stack or local memory);
* the ``jax_triton`` call a GPU makes, through a stand-in that runs the same launch in the
  interpreter: the arguments, outputs and zeroed count table that ``triton_call`` receives;
* which z-update ``"auto"`` picks on a GPU without Pallas, and the refusals.
"""

from __future__ import annotations

import functools
import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_lda import TINY_DOCS, _lp_test_functions, _state_counts, exact_posterior, final_states
from test_lda_pallas import _random_problem, _replay, _tolerance, run_split_by_chains

from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import fused_triton as ft
from gibbsjax.models.lda import pallas as lp
from gibbsjax.models.lda import z_updates
from gibbsjax.testing import chi_square_test, geweke_test

pytest.importorskip("triton", reason="the Triton kernel's tests need the 'triton' package (the test extra has it)")

K, ALPHA, ETA = 2, 0.6, 0.35  # as test_lda


def _triton_kernel(k, alpha, eta, *, stale=False):
    """``lda.partially_collapsed`` with the Triton z-update (interpreter), or its stale variant."""
    base = lda.partially_collapsed(k, alpha=alpha, eta=eta, warmup="exact")
    z_update = functools.partial(_z, K=k, alpha=alpha, stale=stale)
    step = sweep(("log_phi", functools.partial(lda.sample_log_phi, K=k, eta=eta)), ("z", z_update))
    return base._replace(step=step, warmup_step=step, name="triton-stale" if stale else "triton")


def _z(key, state, d, *, K, alpha, stale):
    return ft.fused_z_update_triton(key, state, d, K=K, alpha=alpha, interpret=True, stale=stale)[0]


# ----------------------------------------------------------------------------- agreement
@pytest.mark.parametrize("k, lanes", [(5, 4), (37, 2)])
def test_draws_agree_with_the_replay_and_the_pallas_kernel(k, lanes):
    d, state = _random_problem(k, seed=k)
    key = jax.random.key(100 + k)
    z, ndk = ft.fused_z_update_triton(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=lanes)
    assert z.shape == d.words.shape and z.dtype == jnp.int32
    assert np.all(np.asarray(z)[~np.asarray(d.mask)] == 0)
    equal, gap = _replay(d, state, z, lda.token_uniforms(key, d), k, 0.3)
    assert np.all(gap[~equal] <= _tolerance(k)), gap[~equal]
    z_pallas = lp.sample_z_pallas(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=lanes)
    differ = (np.asarray(z) != np.asarray(z_pallas))[np.asarray(d.mask)]
    assert differ.mean() <= 0.01, differ.mean()
    expected, _, _ = lda.topic_counts(z, d, k)  # the final count table, with row D zero
    np.testing.assert_array_equal(np.asarray(ndk), np.asarray(expected))


def test_the_replay_catches_the_stale_variant():
    k = 5
    d, state = _random_problem(k, seed=k)
    key = jax.random.key(105)
    z = ft.fused_z_update_triton(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=4, stale=True)[0]
    equal, gap = _replay(d, state, z, lda.token_uniforms(key, d), k, 0.3)
    assert np.sum(gap[~equal] > _tolerance(k)) >= 5


def test_the_lane_blocks_do_not_change_the_draws():
    """Lanes per program (and so programs, and chains sharing a block) are a schedule, not a
    distribution: the same draws for 1, 4 and the interpreter's default lanes per program."""
    k = 5
    d, state = _random_problem(k, seed=3, num_docs=20, num_lanes=5)
    key = jax.random.key(3)
    runs = [np.asarray(ft.sample_z_triton(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=n))
            for n in (1, 4, None)]
    for z in runs[1:]:
        np.testing.assert_array_equal(z, runs[0])


def test_vmap_over_chains_is_one_launch_with_the_draws_of_one_call_per_chain():
    k = 3
    d, state = _random_problem(k, seed=4, num_docs=6, num_lanes=3)
    rng = np.random.default_rng(4)
    keys = jax.random.split(jax.random.key(1), 6).reshape(2, 3)
    states = lda.LDAState(jnp.asarray(rng.integers(0, k, (2, 3, *d.words.shape)) * np.asarray(d.mask), jnp.int32),
                          jnp.asarray(np.log(rng.dirichlet(np.ones(d.word_counts.shape[0]), (2, 3, k))), jnp.float32))
    f = functools.partial(ft.sample_z_triton, K=k, alpha=0.2, interpret=True, lanes_per_program=2)
    nested = jax.vmap(jax.vmap(lambda key, s: f(key, s, d)))  # chains × another batch axis
    program = str(jax.make_jaxpr(nested)(keys, states))
    steps, lanes = d.words.shape
    assert program.count("pure_callback") == 1, program  # one launch for the 6 chains, side by side:
    assert f"i32[{steps},{6 * lanes}]" in program  # their lanes folded into one grid
    batched = nested(keys, states)
    one_chain = jax.jit(lambda key, s: f(key, s, d))
    for a in range(2):
        for c in range(3):
            one = one_chain(keys[a, c], jax.tree_util.tree_map(lambda x, a=a, c=c: x[a, c], states))
            np.testing.assert_array_equal(np.asarray(batched[a, c]), np.asarray(one))


# ----------------------------------------------------------------------------- exactness
def _tiny(num_lanes):
    from gibbsjax.corpus import Corpus

    return lda.data(Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"]), num_lanes=num_lanes)


@pytest.mark.parametrize("stale", [False, True])
def test_visit_frequencies_against_exact_enumeration(stale):
    """Two lanes for three documents (one lane walks two, so rows are stored and reloaded); all
    10,000 chains run as one interpreted launch per sweep.  The stale variant must fail."""
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    z = final_states(_triton_kernel(K, ALPHA, ETA, stale=stale), _tiny(num_lanes=2),
                     num_chains=10_000, num_sweeps=20, seed=7)
    p_value = chi_square_test(_state_counts(z, K), probs).p_value
    if stale:
        assert p_value < 1e-4, p_value
    else:
        assert p_value > 1e-4, p_value


@pytest.mark.slow  # 500 chains × 40 interpreted steps of a Geweke test; enumeration above runs by default
@pytest.mark.parametrize("stale", [False, True])
def test_geweke(stale):
    from gibbsjax.corpus import Corpus

    alpha, eta = (ALPHA, ETA) if not stale else (0.2, 0.2)
    data = lda.data(Corpus.from_token_lists([["a", "b", "a", "c"], ["b", "c", "c", "a"], ["c", "a"]],
                                            vocab=["a", "b", "c"]), num_lanes=2)
    result = geweke_test(_triton_kernel(K, alpha, eta, stale=stale), data, _lp_test_functions(K, alpha, eta),
                         num_chains=500, num_steps=40, seed=11)
    assert result.passed != stale, result


# ----------------------------------------------------------------------------- the GPU program
#: bytes of stack a thread may use: a few spilled registers (the dense kernel at K = 100 keeps 8 bytes,
#: at K = 10,000 on its default 16 warps 32); a tile that does not fit spills hundreds (768 below)
STACK_BYTES = 64


def _fits_in_registers(resources) -> bool:
    assert resources is not None, "Triton's cuobjdump is missing: the spill guard cannot run"
    return resources["STACK"] <= STACK_BYTES and resources["LOCAL"] == 0


@pytest.mark.parametrize("k", [100, 1000])
def test_compiles_for_an_h100_and_keeps_its_tiles_in_registers(k):
    """Triton compiles the kernel for sm_90 here, with the settings a run uses by default and
    jax_triton's alignment attributes, into a binary that keeps its tiles in registers: at most a
    few spilled registers, no local memory (a spilling kernel runs several times slower, and no
    CPU test would otherwise see it)."""
    out = ft.compile_for_gpu(k)
    assert len(out["cubin"]) > 0 and ".entry" in out["ptx"]
    assert _fits_in_registers(out["resources"]), out["resources"]


def test_the_spill_guard_sees_a_spilling_kernel():
    """The guard above can fail: K = 10,000 with one lane on 4 warps (64 × 4 padded topics a
    thread, the default takes 16 warps) spills."""
    resources = ft.compile_for_gpu(10_000, num_warps=4)["resources"]
    assert not _fits_in_registers(resources), resources
    assert _fits_in_registers(ft.compile_for_gpu(10_000)["resources"])
    assert ft.default_num_warps(10_000, 1) == 16


def test_the_gpu_call_passes_the_launch_to_jax_triton(monkeypatch):
    """On a GPU the launch goes to ``jax_triton.triton_call``; a stand-in that runs the same call
    in the interpreter shows what it receives (the compiled kernel, the grid, the zeroed count
    table, compile-time constants) and that those give the interpreter's draws."""
    calls = []

    def triton_call(*arrays, kernel, out_shape, grid, num_warps, num_stages, zeroed_outputs, name, **constants):
        calls.append(dict(kernel=kernel, grid=grid, zeroed=zeroed_outputs, constants=constants, num_warps=num_warps,
                          name=name))
        which = next(n for n in ("sparse", "z") if kernel is ft.kernels(n)[0])  # the kernel it was given
        host = functools.partial(ft._run_interpreted, grid=grid, constants=constants, out_shape=out_shape,
                                 name=which)
        return jax.pure_callback(host, out_shape, *arrays)

    monkeypatch.setattr(ft, "_jax_triton", lambda: types.SimpleNamespace(triton_call=triton_call))
    ft._batched.cache_clear()
    k = 5
    d, state = _random_problem(k, seed=k, num_docs=80, num_lanes=40)
    key = jax.random.key(9)
    compiled = ft.sample_z_triton(key, state, d, K=k, alpha=0.3, interpret=False)
    interpreted = ft.sample_z_triton(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=16)
    np.testing.assert_array_equal(np.asarray(compiled), np.asarray(interpreted))
    call = calls[0]
    from triton.runtime.jit import JITFunction

    assert isinstance(call["kernel"], JITFunction) and call["zeroed"] == (0, 1)
    assert call["constants"]["LANES"] == ft.default_lanes_per_program(k) == 32
    assert call["grid"] == (call["constants"]["LANES_TOTAL"] // 32,) and call["num_warps"] == 4
    # the sparse kernel through the same call: one zeroed output, the interpreter's draws
    sparse = ft.sample_z_sparse_triton(key, state, d, K=k, alpha=0.3, interpret=False)
    np.testing.assert_array_equal(np.asarray(sparse),
                                  np.asarray(ft.sample_z_sparse_triton(key, state, d, K=k, alpha=0.3, interpret=True)))
    assert calls[-1]["zeroed"] == (0,) and calls[-1]["name"] == "lda_partially_collapsed_sparse"
    ft._batched.cache_clear()


def test_chains_spread_over_devices_launch_the_kernel_on_each_devices_own_chains():
    """With the chains spread over 2 devices (as ``sample(..., devices=2)`` places them), the SPMD
    partitioner splits the compiled launch along the chains: each device launches its own 2 of the
    4 chains (a custom call XLA does not know would otherwise be run whole on every device).  The
    kernel is replaced by a slot-by-slot XLA stand-in (the interpreter's host callback cannot run
    inside a partitioned operation here); the values equal those of the unsplit launch."""
    report = run_split_by_chains(
        patch="def stand_in(arrays, *, name, grid, constants, out_shape, interpret, num_warps):\n"
              "    launched.append(list(arrays[3].shape))  # the folded z: (steps, lanes launched together)\n"
              "    return (arrays[3] + arrays[0] % 3, jnp.zeros(out_shape[1].shape, jnp.int32))\n"
              "ft._call = stand_in\n"
              "ft._jax_triton = lambda: types.SimpleNamespace()  # as on a GPU with jax_triton",
        z_update="lambda *a, **kw: ft.sample_z_triton(*a, **kw, interpret=False)")
    assert report["same"]
    # the partitioner traced the launch for one device's 2 chains (besides the whole, abstract, launch
    # traced first); without the partitioning rule only the whole 4-chain launch is ever traced
    assert [2 * report["lanes"]] in [shape[1:] for shape in report["launched"]], report


@pytest.mark.skipif(not ft.available(), reason="needs a GPU and jax_triton (compiled Triton kernel)")
@pytest.mark.parametrize("k", [100, 1000])
def test_compiled_kernels_on_a_gpu(k):
    """On a GPU: the compiled dense kernel against the float64 replay, its count table (zeroed, then
    written) against a scatter-add; the compiled sparse kernel against the XLA sparse update."""
    d, state = _random_problem(k, seed=k, num_docs=400, vocab=200, num_lanes=64)
    key = jax.random.key(k)
    z, ndk = ft.fused_z_update_triton(key, state, d, K=k, alpha=0.1)
    equal, gap = _replay(d, state, z, lda.token_uniforms(key, d), k, 0.1)
    assert np.all(gap[~equal] <= _tolerance(k)), gap[~equal]
    np.testing.assert_array_equal(np.asarray(ndk), np.asarray(lda.topic_counts(z, d, k)[0]))
    sparse = ft.sample_z_sparse_triton(key, state, d, K=k, alpha=0.1)
    differ = (np.asarray(sparse) != np.asarray(lda.sample_z_sparse(key, state, d, K=k, alpha=0.1)))[np.asarray(d.mask)]
    assert differ.mean() <= 0.01, differ.mean()  # float32 sums in another order: rare ties, and their followers


# ----------------------------------------------------------------------------- the sparse kernel
def _sparse_kernel(k, alpha, eta, *, keep_current=False):
    """``lda.partially_collapsed`` with the sparse Triton z-update (interpreter), or its wrong variant."""
    base = lda.partially_collapsed(k, alpha=alpha, eta=eta, warmup="exact")
    z_update = functools.partial(ft.sample_z_sparse_triton, K=k, alpha=alpha, interpret=True,
                                 keep_current=keep_current)
    step = sweep(("log_phi", functools.partial(lda.sample_log_phi, K=k, eta=eta)), ("z", z_update))
    return base._replace(step=step, warmup_step=step)


@pytest.mark.parametrize("k, lanes", [(5, 4), (37, 1), (37, None)])
def test_the_sparse_kernel_gives_the_draws_of_the_xla_sparse_update(k, lanes):
    """The same mixture, uniforms and α-term candidates as ``lda.sample_z_sparse``: the same draws
    (up to float32 summation order, which these problems never reach), for any lanes per program."""
    d, state = _random_problem(k, seed=k)
    key = jax.random.key(200 + k)
    z = ft.sample_z_sparse_triton(key, state, d, K=k, alpha=0.3, interpret=True, lanes_per_program=lanes)
    reference = lda.sample_z_sparse(key, state, d, K=k, alpha=0.3)
    mask = np.asarray(d.mask)
    assert np.all(np.asarray(z)[~mask] == 0)
    differ = (np.asarray(z) != np.asarray(reference))[mask]
    assert differ.sum() <= 2, differ.sum()  # 0 here: a float32 tie would move a token and its followers
    wrong = ft.sample_z_sparse_triton(key, state, d, K=k, alpha=0.3, interpret=True, keep_current=True)
    assert (np.asarray(wrong) != np.asarray(reference))[mask].mean() > 0.02  # the comparison has power


def test_an_interpreted_launch_leaves_triton_as_it_was():
    """The interpreter's patches of ``triton.language`` (made once per launch, for the kernel and
    the library functions it calls) are all undone when the launch ends: every attribute of the
    language modules and of the tensor and dtype classes is the same object as before, so that a
    later compilation in the same process sees Triton as it was.  (The launch itself must still
    give the XLA sparse update's draws, as the test above checks.)"""
    import triton.language as tl

    objects = {"tl": tl, "tl.core": tl.core, "tl.math": tl.math, "tensor": tl.core.tensor, "dtype": tl.core.dtype}
    before = {name: dict(vars(obj)) for name, obj in objects.items()}
    d, state = _random_problem(5, seed=3, num_docs=12)
    key = jax.random.key(7)
    z = ft.sample_z_sparse_triton(key, state, d, K=5, alpha=0.3, interpret=True)
    differ = (np.asarray(z) != np.asarray(lda.sample_z_sparse(key, state, d, K=5, alpha=0.3)))[np.asarray(d.mask)]
    assert differ.sum() <= 2, differ.sum()
    for name, obj in objects.items():
        now = vars(obj)
        changed = [a for a, v in before[name].items() if a not in now or now[a] is not v]
        assert not changed, (name, changed)
        for a in now.keys() - before[name].keys():
            # Triton's restore writes an inherited attribute back into the class itself (the same
            # object, e.g. object.__repr__); submodules imported on first use are not patches
            if isinstance(now[a], types.ModuleType) or a == "__annotations__":
                continue
            bases = obj.__mro__[1:] if isinstance(obj, type) else ()
            inherited = next((vars(b)[a] for b in bases if a in vars(b)), None)
            assert now[a] is inherited, (name, a, now[a])


@pytest.mark.parametrize("keep_current", [False, True])
def test_the_sparse_kernel_against_exact_enumeration(keep_current):
    """All K^N assignments of the tiny corpus; a learned-α-free kernel with two lanes for three
    documents.  The wrong variant (the token's own old topic left in the document term) must fail."""
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    z = final_states(_sparse_kernel(K, ALPHA, ETA, keep_current=keep_current), _tiny(num_lanes=2),
                     num_chains=10_000, num_sweeps=20, seed=17)
    p_value = chi_square_test(_state_counts(z, K), probs).p_value
    assert (p_value < 1e-4) if keep_current else (p_value > 1e-4), p_value


@pytest.mark.slow  # the enumeration above runs by default
def test_the_sparse_kernel_passes_geweke():
    from gibbsjax.corpus import Corpus

    data = lda.data(Corpus.from_token_lists([["a", "b", "a", "c"], ["b", "c", "c", "a"], ["c", "a"]],
                                            vocab=["a", "b", "c"]), num_lanes=2)
    geweke_test(_sparse_kernel(K, ALPHA, ETA), data, _lp_test_functions(K, ALPHA, ETA), num_chains=500,
                num_steps=40, seed=11).assert_passes()


def test_the_sparse_kernel_through_the_factory_with_a_learned_alpha():
    """``z_update="sparse_triton"``: α reaches the kernel only through the α-term drawn in XLA, so a
    learned (asymmetric) α works; one short run, finite and on the simplex."""
    import gibbsjax
    from gibbsjax.corpus import Corpus

    d = lda.data(Corpus.from_token_lists([["a", "b", "a", "c"], ["c", "b"], ["a", "a", "b"]]))
    kernel = lda.partially_collapsed(3, z_update="sparse_triton", learn_alpha="sample", asymmetric_alpha=True)
    idata = gibbsjax.sample(kernel, d, seed=0, num_chains=2, num_warmup=3, num_draws=3, progress=False)
    phi = np.asarray(idata.posterior_mean["topic_word"])
    assert np.all(np.isfinite(phi)) and np.allclose(phi.sum(-1), 1, atol=1e-5)


def test_the_sparse_kernel_compiles_for_an_h100_without_spills():
    """K = 10,000 and a 256-slot document window: registers only (the dense kernel needs 16 warps
    and still keeps 32 bytes of stack there)."""
    out = ft.compile_for_gpu(10_000, kernel="sparse", steps=200)
    assert out["resources"]["STACK"] == 0 and out["resources"]["LOCAL"] == 0, out["resources"]


# ----------------------------------------------------------------------------- choices and refusals
@pytest.fixture
def on_gpu(monkeypatch):
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(z_updates, "_warned_fallback", set())


def test_auto_on_a_gpu_without_pallas_picks_the_triton_kernel(on_gpu, monkeypatch):
    monkeypatch.setattr(z_updates, "pallas_module", lambda: None)
    monkeypatch.setattr(ft, "jax_triton_importable", lambda: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is lost: no warning
        assert lda.resolve_z_update("auto") == "triton"
    monkeypatch.setattr(ft, "jax_triton_importable", lambda: False)
    with pytest.warns(RuntimeWarning, match="jax_triton cannot be imported.*gpu-triton"):
        assert lda.resolve_z_update("auto") == "dense"


def test_pallas_stays_first_where_it_runs(on_gpu, monkeypatch):
    monkeypatch.setattr(ft, "jax_triton_importable", lambda: True)
    assert lda.resolve_z_update("auto") == ("pallas" if lp.importable() else "triton")


def test_refusals():
    with pytest.raises(ValueError, match="z_update='triton' needs a fixed alpha"):
        lda.partially_collapsed(3, z_update="triton", learn_alpha="sample")
    d, state = _random_problem(5, seed=5)
    with pytest.raises(ValueError, match="power of two"):
        ft.sample_z_triton(jax.random.key(0), state, d, K=5, alpha=0.3, interpret=True, lanes_per_program=3)
    with pytest.raises(ValueError, match="K = 4"):
        ft.sample_z_triton(jax.random.key(0), state, d, K=4, alpha=0.3, interpret=True)
    with pytest.raises(ValueError, match="alpha"):
        ft.sample_z_triton(jax.random.key(0), state, d, K=5, alpha=0.0, interpret=True)


def test_without_the_triton_package_it_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(ft, "_triton", lambda: None)
    with pytest.raises(ValueError, match="'triton' package"):
        lda.resolve_z_update("triton")
    d, state = _random_problem(5, seed=5)
    with pytest.raises(ValueError, match="'triton' package"):
        ft.sample_z_triton(jax.random.key(0), state, d, K=5, alpha=0.3)
