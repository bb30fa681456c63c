"""The LDA path a GPU runs, guarded on a CPU: which variants "auto" picks on each backend, what
the compiled sweep contains when lowered for CUDA, the one-time warning of a GPU run without
its fused kernel, and the exactness of the GPU's Dirichlet draw (with a wrong variant that the
same check catches).

JAX lowers a program for a platform it does not have (``jax.export`` with
``platforms=["cuda"]``), so the sweep a GPU would compile is inspected here as StableHLO:
the fused Pallas z-update appears as its Triton custom call, count tables as scatter-adds and
the Dirichlet draws as their named functions; XLA's memory analysis of the uncollapsed sweep, compiled
here on abstract arguments, guards its bytes per token.  ``jax.default_backend`` is reported as "gpu"
while the kernels are built and lowered, as it is on a GPU machine.  These tests exist because
the GPU path once became 53x slower in its φ draw without any check seeing it.
"""

from __future__ import annotations

import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from gibbsjax import random as gr
from gibbsjax.corpus import Corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import conditionals, native, pallas, z_updates
from gibbsjax.models.lda.layout import LDAData
from gibbsjax.testing import chi_square_test
from test_lda import ALPHA, ETA, K, TINY_DOCS, _state_counts, _tiny, exact_posterior, final_states

TRITON = "__gpu$xla.gpu.triton"


#: what a CPU run chooses, checked where the suite runs on one (on a GPU those choices are the
#: GPU's, which the tests with the ``on_gpu`` fixture check on any machine)
ON_A_CPU = pytest.mark.skipif(jax.default_backend() != "cpu", reason="checks the choices of a CPU backend")


@pytest.fixture
def on_gpu(monkeypatch):
    """JAX's default backend reported as "gpu", as the factories and the fused kernel see it on a GPU."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")


def lowered_for_cuda(kernel, chains: int | None = None) -> str:
    """The StableHLO of one sweep of ``kernel`` on a small corpus, lowered for CUDA: of one chain,
    or of ``chains`` chains vmapped as ``gibbsjax.sample`` runs them."""
    d = lda.data(Corpus.from_token_lists([["a", "b", "a", "c"], ["c", "b"], ["a", "a", "b"]]))
    step, init, key = kernel.step, kernel.init, jax.random.key(1)
    if chains is not None:
        step, init = jax.vmap(step, in_axes=(0, 0, None)), jax.vmap(init, in_axes=(0, None))
        key = jax.random.split(key, chains)
    state = init(jax.random.split(jax.random.key(0), chains) if chains else jax.random.key(0), d)
    exported = export.export(jax.jit(step), platforms=["cuda"],
                             disabled_checks=[export.DisabledSafetyCheck.custom_call(TRITON)])
    with abstract_gpu():
        return exported(key, state, d).mlir_module()


def abstract_gpu():
    """A context in which Pallas lowers its Triton kernels for an H100 on a machine without a GPU.

    From jax 0.11 on, the lowering asks the abstract mesh for the GPU's kind where no GPU is
    attached (and raises "No supported GPU devices found" without one); jax 0.10 did not ask.
    An H100 and an H200 are the same architecture (compute capability 9.0)."""
    device = jax.sharding.AbstractDevice(device_kind="NVIDIA H100 80GB HBM3", num_cores=132, platform="gpu")
    mesh = jax.sharding.AbstractMesh((1,), ("chip",), axis_types=(jax.sharding.AxisType.Auto,), abstract_device=device)
    return jax.sharding.use_abstract_mesh(mesh)  # Auto: no sharding in the traced types


def contents(text: str) -> dict:
    """What a lowered sweep holds: its Triton kernels (by name), scatter ops and named functions."""
    return {"triton": re.findall(rf'custom_call @{re.escape(TRITON)}\(.*?name = "(\w+)"', text),
            "scatters": len(re.findall(r'= "stablehlo\.scatter"\(', text)),
            "functions": set(re.findall(r"func\.func (?:private|public) @(\w+)", text))}


def test_auto_choices_on_each_backend():
    assert lda.resolve_dirichlet_draw("auto", backend="cpu") == ("native" if native.available() else "sparse")
    assert lda.resolve_dirichlet_draw("auto", backend="gpu") == "dense"
    assert lda.resolve_dirichlet_draw("auto", backend="tpu") == "dense"
    assert lda.resolve_dirichlet_draw("sparse", backend="gpu") == "sparse"
    assert lda.resolve_z_update("auto", backend="cpu") == ("native" if native.available() else "lanes")
    with pytest.raises(ValueError, match="dirichlet_draw"):
        lda.resolve_dirichlet_draw("gamma")
    with pytest.raises(ValueError, match="dirichlet_draw"):
        lda.partially_collapsed(3, dirichlet_draw="fast")


def test_auto_on_a_gpu_picks_the_fused_kernel_and_the_dense_draw(on_gpu):
    assert pallas.importable(), "this jaxlib has no Pallas: the GPU guards below would not see the fused kernel"
    assert lda.resolve_z_update("auto") == "pallas"
    assert lda.resolve_z_update("auto", K=z_updates.SPARSE_FROM_TOPICS_ON_CPU) == "pallas"  # the CPU's K rule stays there
    assert lda.resolve_dirichlet_draw("auto") == "dense"


def test_on_a_gpu_lda_runs_the_partially_collapsed_sampler_and_the_collapsed_one_its_xla_sweep(on_gpu):
    """The native collapsed sweep is for a CPU: on a GPU gibbsjax.LDA's "auto" sampler is the partially
    collapsed one (the fused kernel), lda.collapsed keeps its XLA sweep with φ in the state, and
    asking for the native sweep is refused."""
    from gibbsjax import LDA
    from gibbsjax.topics.fit import sampler_name

    assert sampler_name(LDA(3).get_params()) == "partially_collapsed"
    assert lda.resolve_collapsed_z_update("auto") == "dense"
    assert isinstance(lda.collapsed(3, dirichlet_draw="dense").init(jax.random.key(0), _tiny()[1]), lda.LDAState)
    with pytest.raises(ValueError, match="runs on a CPU only"):
        lda.resolve_collapsed_z_update("native")


def test_auto_warmup_is_exact_on_a_gpu_and_fast_elsewhere(on_gpu):
    """On a GPU the exact (fused) sweeps reach a given fit sooner than the approximate warm-up: the
    factories' default warm-up there is the sampling sweep; on a CPU the frozen-count "fast" one."""
    assert lda.resolve_warmup() == "exact"
    for factory in lda.SAMPLERS.values():
        kernel = factory(3, dirichlet_draw="dense")
        assert kernel.warmup_step is None and kernel is factory(3, warmup="exact", dirichlet_draw="dense")
        assert factory(3, warmup="fast", dirichlet_draw="dense").warmup_step is not None
    assert lda.resolve_warmup(backend="cpu") == "fast"


def test_the_default_gpu_sweep_is_the_fused_kernel_one_scatter_and_the_dense_draw(on_gpu):
    """Every option at its default: the fused z-update (which writes n_dk itself), n_kw by one
    scatter-add, φ by jax.random.loggamma; no sparse-count draw."""
    found = contents(lowered_for_cuda(lda.partially_collapsed(4, warmup="exact")))
    assert found["triton"] == ["lda_partially_collapsed_z"], found["triton"]
    assert found["scatters"] == 1, found["scatters"]
    assert "_log_dirichlet_dense" in found["functions"]
    assert "_log_dirichlet_counts" not in found["functions"]


def test_the_fused_kernel_gets_more_warps_for_larger_tiles(on_gpu):
    """The default GPU sweep launches the fused kernel with 4 warps at K = 1,000 (2 lanes × 1,024
    padded topics, the setting measured best) and with 16 at K = 5,000 (one lane's 8,192 padded
    topics: with 4 warps every thread would hold 64 entries of each tile-sized array, and the
    compiled kernel spills registers; ``pallas.default_num_warps``)."""
    warps = {k: re.findall(r"num_warps = (\d+)", lowered_for_cuda(lda.partially_collapsed(k, warmup="exact")))
             for k in (1000, 5000)}
    assert warps == {1000: ["4"], 5000: ["16"]}, warps


def test_chains_on_a_gpu_are_one_fused_launch_and_one_scatter(on_gpu):
    """Five chains vmapped as ``gibbsjax.sample`` runs them lower for CUDA (through the fused
    kernel's vmap and partitioning rules, ``lda.chain_launch``) to one Triton launch whose results
    carry all five chains (a leading chain axis), and n_kw stays one scatter-add."""
    text = lowered_for_cuda(lda.partially_collapsed(4, warmup="exact"), chains=5)
    found = contents(text)
    assert found["triton"] == ["lda_partially_collapsed_z"], found["triton"]
    results = re.findall(rf"custom_call @{re.escape(TRITON)}\(.*->\s*\((tensor<[^)]*)\)", text)
    assert len(results) == 1 and all(t.startswith("tensor<5x") for t in results[0].split(", ")), results
    assert found["scatters"] == 1, found["scatters"]
    assert "_log_dirichlet_dense" in found["functions"]


def test_the_guard_sees_a_regressed_gpu_sweep(on_gpu):
    """The CPU choices lowered for a GPU (what the default was before): the checks above fail on it."""
    found = contents(lowered_for_cuda(lda.partially_collapsed(4, warmup="exact", z_update="dense",
                                                              dirichlet_draw="sparse")))
    assert found["triton"] == []
    assert found["scatters"] > 1
    assert "_log_dirichlet_counts" in found["functions"]


def test_the_uncollapsed_gpu_sweep_draws_theta_and_phi_dense(on_gpu):
    found = contents(lowered_for_cuda(lda.uncollapsed(4, warmup="exact")))
    assert "_log_dirichlet_dense" in found["functions"]
    assert "_log_dirichlet_counts" not in found["functions"]
    assert found["scatters"] == 2, found["scatters"]  # n_kw for φ, n_dk for θ: each once


#: issue 22's budget: one uncollapsed sweep of 100 M tokens (K = 100) within 10 GB of device memory
BYTES_PER_TOKEN = 100
#: the 100 M-token corpus of benchmarks/gpu_table.py ("large": 10^6 documents of ~100 tokens), packed:
#: about 153 grid steps (the longest document) × 666,667 lanes
LARGE_SLOTS = 153 * 666_667


def uncollapsed_bytes_per_slot(monkeypatch, lanes=13_700, z_block=None, theta_block=None) -> float:
    """XLA's memory analysis (arguments + outputs + temporaries) of one uncollapsed sweep with the
    GPU's choices (the dense draws), compiled here on the CPU, per grid slot: K = 100 on an
    abstract corpus (``jax.ShapeDtypeStruct``, nothing allocated) of 153 steps × ``lanes`` lanes
    (2.1 M slots, 1/49 of the 100 M-token grid), ~100 tokens a document, V = 1,000, with the
    sweep's block sizes scaled by the same 1/49 (so its per-token temporaries are those of the
    100 M-token sweep; with V = 1,000 instead of 10,000 the K × V tables are 1/10 of theirs,
    a larger share per slot here).  The CPU's buffer assignment is a proxy for the GPU's (same
    program, XLA's CPU backend): 44 bytes a slot for the 100 M-token grid itself, 144 for the sweep
    before its blocks were bounded (``benchmarks/lda_sweep_memory.py``)."""
    steps, docs, v, k = 153, lanes * 153 // 100, 1_000, 100
    scale = steps * lanes / LARGE_SLOTS
    monkeypatch.setattr(conditionals, "UNCOLLAPSED_BLOCK_ELEMENTS",
                        z_block or int(conditionals.UNCOLLAPSED_BLOCK_ELEMENTS * scale))
    monkeypatch.setattr(conditionals, "THETA_BLOCK_ELEMENTS",
                        theta_block or int(conditionals.THETA_BLOCK_ELEMENTS * scale))
    sd = jax.ShapeDtypeStruct
    d = LDAData(sd((steps, lanes), jnp.int32), sd((steps, lanes), jnp.int32), sd((steps, lanes), jnp.bool_),
                sd((docs,), jnp.int32), sd((v,), jnp.int32), sd((docs + 1,), jnp.int32), sd((docs + 1,), jnp.int32))
    kernel = lda.uncollapsed(k, warmup="exact")
    key = jax.random.key(0)
    state = jax.eval_shape(kernel.init, key, d)
    # a new function object: traced afresh under the block sizes set here
    m = jax.jit(lambda *a: kernel.step(*a)).lower(key, state, d).compile().memory_analysis()
    total = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes - m.alias_size_in_bytes
    return total / (steps * lanes)


def test_the_uncollapsed_gpu_sweep_fits_100m_tokens_in_10gb(on_gpu, monkeypatch):
    """Every temporary of the sweep is a fixed-size block or a (D + 1) × K table: within 100 bytes a
    token (measured 46 here)."""
    assert uncollapsed_bytes_per_slot(monkeypatch) <= BYTES_PER_TOKEN


@pytest.mark.slow  # two more compilations; the guard above runs by default
@pytest.mark.parametrize("regressed", ["z blocks of 16 grid steps", "theta in one draw"])
def test_the_memory_guard_sees_a_regressed_uncollapsed_sweep(on_gpu, monkeypatch, regressed):
    """The blocks of the old sweep (16 grid steps × all lanes × K weights: 152 bytes a slot here) or
    θ's gamma draw in one piece (~130 bytes an entry: 171 here): over the budget."""
    lanes = 13_700
    kw = {"z_block": 16 * lanes * 100} if regressed.startswith("z") else {"theta_block": 1 << 40}
    assert uncollapsed_bytes_per_slot(monkeypatch, lanes, **kw) > BYTES_PER_TOKEN


def test_the_uncollapsed_z_blocks_do_not_change_the_draws(monkeypatch):
    """Tokens drawn 4 at a time (the last block redoing slots of the one before) or all at once:
    the same topics, since each token's draw depends on its own weights and uniform only."""
    corpus = Corpus.from_token_lists([list("abacbd"), list("cbd"), list("aabbcdd"), list("dc")])
    d = lda.data(corpus, num_lanes=2)
    log_phi = jnp.log(jnp.array([[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]]))
    state = lda.LDAState(jnp.where(d.mask, jnp.arange(d.words.size).reshape(d.words.shape) % 3, 0), log_phi)

    def both(key):  # one compilation: the block size is read while tracing each call
        out = []
        for block in (conditionals.UNCOLLAPSED_BLOCK_ELEMENTS, 4 * 3):
            monkeypatch.setattr(conditionals, "UNCOLLAPSED_BLOCK_ELEMENTS", block)
            out.append(lda.sample_z_uncollapsed(key, state, d, K=3, alpha=0.1))
        return out

    whole, by_four = jax.jit(both)(jax.random.key(3))
    assert d.words.size % 4 != 0 and np.array_equal(by_four, whole)
    assert len(np.unique(np.asarray(whole)[np.asarray(d.mask)])) > 1


@pytest.mark.slow  # ~7 s each; the z blocks' draws are checked above by default, θ's rows are one draw below 2^22
@pytest.mark.parametrize("draw", ["dense", "sparse"])
def test_the_blocked_uncollapsed_sweep_samples_the_exact_posterior(monkeypatch, draw):
    """θ by blocks of 3 rows (4 rows: the second block redraws two) and z by blocks of 4 tokens
    (9 slots: the last block redoes three): visit frequencies against exact enumeration."""
    monkeypatch.setattr(conditionals, "THETA_BLOCK_ELEMENTS", 3 * K)
    monkeypatch.setattr(conditionals, "UNCOLLAPSED_BLOCK_ELEMENTS", 4 * K)
    _, data = _tiny()
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    kernel = lda.uncollapsed(K, alpha=ALPHA, eta=ETA, dirichlet_draw=draw)
    step = kernel.step
    kernel = kernel._replace(step=lambda *a: step(*a))  # traced afresh under the block sizes set here
    z = final_states(kernel, data, num_chains=20_000, num_sweeps=25, seed=8)
    assert chi_square_test(_state_counts(z, K), probs).p_value > 1e-4


def test_a_gpu_run_without_the_fused_kernel_warns_once(on_gpu, monkeypatch):
    monkeypatch.setattr(z_updates, "pallas_module", lambda: None)
    monkeypatch.setattr(z_updates.fused_triton, "jax_triton_importable", lambda: False)
    monkeypatch.setattr(z_updates, "_warned_fallback", set())
    with pytest.warns(RuntimeWarning, match="falls back to the XLA scan 'dense'"):
        assert lda.resolve_z_update("auto") == "dense"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lda.resolve_z_update("auto") == "dense"  # once per reason, not per kernel


def test_a_cpu_run_does_not_warn():
    """Where the native kernels are built (tests/test_lda_native.py checks the warning where they are not)."""
    if not native.available():
        pytest.skip(f"native kernels not built here: {native.unavailable_reason()}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lda.resolve_z_update("auto", backend="cpu") == "native"
        assert lda.resolve_dirichlet_draw("auto", backend="cpu") == "native"


@pytest.mark.parametrize("sampler", ["partially_collapsed", "uncollapsed"])
def test_the_dense_draw_samples_the_exact_posterior(sampler):
    """The GPU's Dirichlet draw, run here: visit frequencies of all K^N topic assignments of a tiny
    corpus against exact enumeration (as tests/test_lda.py does for the default draws)."""
    _, data = _tiny()
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    kernel = lda.SAMPLERS[sampler](K, alpha=ALPHA, eta=ETA, dirichlet_draw="dense")
    z = final_states(kernel, data, num_chains=20_000, num_sweeps=25, seed=7)
    result = chi_square_test(_state_counts(z, K), probs)
    assert result.p_value > 1e-4, (sampler, result)


def test_a_wrong_dense_draw_fails_the_enumeration_test(monkeypatch):
    """φ ~ Dir(n + 2η) instead of Dir(n + η) through the dense path: caught."""
    def wrong(key, counts, concentration):
        return gr.log_dirichlet_dense(key, counts, 2 * concentration)

    monkeypatch.setitem(conditionals.DIRICHLET_ROWS, "dense", wrong)
    _, data = _tiny()
    _, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
    kernel = lda.partially_collapsed(K, alpha=ALPHA, eta=ETA, dirichlet_draw="dense", z_update="dense",
                                     warmup="exact")
    z = final_states(kernel, data, num_chains=20_000, num_sweeps=25, seed=7)
    assert chi_square_test(_state_counts(z, K), probs).p_value < 1e-4


@ON_A_CPU
def test_cpu_defaults_are_the_explicit_cpu_choices():
    """On a CPU "auto" is the native draw and z-update where the native kernels are built, else the
    sparse-count draw, and the frozen-count "fast" warm-up (the native collapsed sweep warms up with
    itself: it costs what the approximate sweeps cost): the default kernel is the explicitly
    chosen one (the same cached kernel, so the same draws)."""
    draw = "native" if native.available() else "sparse"
    pc = dict(z_update="native", warmup="fast") if native.available() else dict(warmup="fast")
    assert lda.partially_collapsed(3) is lda.partially_collapsed(3, dirichlet_draw=draw, **pc)
    assert lda.uncollapsed(3) is lda.uncollapsed(3, dirichlet_draw=draw, warmup="fast")
    coll = dict(z_update="native", warmup="exact") if native.available() else dict(warmup="fast")
    assert lda.collapsed(3) is lda.collapsed(3, dirichlet_draw=draw, **coll)
    d = _tiny()[1]
    after_one_sweep = [k.step(jax.random.key(1), k.init(jax.random.key(0), d), d).log_phi
                       for k in (lda.partially_collapsed(3, dirichlet_draw=dd) for dd in ("auto", draw))]
    assert np.array_equal(*map(np.asarray, after_one_sweep))


@ON_A_CPU
def test_held_out_inference_runs_the_lanes_update_on_a_cpu_and_the_scan_elsewhere(monkeypatch):
    """``infer_doc_topics`` (perplexity, ``transform``, ``choose_num_topics``) runs the CPU's lanes
    z-update there, several times faster, and the XLA scan on a GPU (the fused kernels take α as a
    constant).  The same conditional and uniforms: equal θ, up to float32 summation order."""
    from gibbsjax.models.lda import inference

    assert inference.infer_z_update("cpu") == "lanes" and inference.infer_z_update("gpu") == "dense"
    ran, real = [], inference._infer
    monkeypatch.setattr(inference, "_infer", lambda *a, **kw: ran.append(kw["z_update"]) or real(*a, **kw))
    rng = np.random.default_rng(3)
    phi = rng.dirichlet(np.full(12, 0.3), 3)
    new = Corpus.from_token_lists([[str(w) for w in rng.integers(0, 12, rng.integers(5, 40))] for _ in range(30)],
                                  vocab=[str(w) for w in range(12)])
    theta_cpu = lda.infer_doc_topics(phi, new, alpha=0.2, num_sweeps=40, num_burn=10)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    theta_gpu = lda.infer_doc_topics(phi, new, alpha=0.2, num_sweeps=40, num_burn=10)
    assert ran == ["lanes", "dense"]
    np.testing.assert_allclose(theta_cpu, theta_gpu, atol=1e-5)
