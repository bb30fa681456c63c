"""Interrupts during warm-up keep a resumable result; the memory estimate covers
post-processing and huge sizes (issue 21).

* A run stopped during its warm-up saves its state (``sampler_state``, no draws
  yet) and says so; ``resume`` finishes the warm-up and samples, and the result
  is bit-identical to one uninterrupted run (Python API and command line).
* LDA's alignment no longer builds (K, K, V) arrays (Hellinger distances from
  a matrix product of sqrt(φ)), and the memory estimate includes the peak of
  post-processing, refusing before sampling what could not finish.
* A huge number of topics is refused with an estimate (``ValueError``), never an
  ``OverflowError``.
"""

from __future__ import annotations

import signal
import sys
import textwrap
import tracemalloc
import warnings

import jax
import numpy as np
import pytest

from gibbsjax.config import load_config
from gibbsjax.memory import SAFETY_FRACTION, MemoryEstimateError
from gibbsjax.run import resume, sample

from test_resume import CONFIGS, _assert_same_groups, _open, _signal_when, _start


# ----------------------------------------------------------------------------- warm-up interrupts (Python API)
def _stop_during_warmup(monkeypatch, after_chunks: int):
    """Make the run's interrupt flag go up after ``after_chunks`` chunks, as a signal between chunks would."""
    import gibbsjax.run.driver as driver

    real, calls = driver.run_phase, {"n": 0}

    def run_phase(run, fn, *args):
        stop = args[-2]

        def counted(*a):
            calls["n"] += 1
            if calls["n"] == after_chunks:
                stop.requested, stop.signal_name = True, "SIGINT"
            return fn(*a)

        return real(run, counted, *args)

    monkeypatch.setattr(driver, "run_phase", run_phase)
    return lambda: monkeypatch.setattr(driver, "run_phase", real)


@pytest.fixture(scope="module")
def body():
    return load_config(CONFIGS / "body-temperature.toml")


def test_python_interrupt_in_warmup_returns_resumable_state(monkeypatch, body, tmp_path):
    kw = dict(seed=4, num_chains=2, num_warmup=40, num_draws=30, thin=2, chunk_size=8, progress=False)
    full = sample(body.kernel, body.data, **kw)
    undo = _stop_during_warmup(monkeypatch, 2)
    with pytest.warns(RuntimeWarning, match=r"during warm-up after 16 of 40 warm-up sweeps: no posterior draws"):
        cut = sample(body.kernel, body.data, **kw)
    undo()
    assert int(cut.attrs["interrupted"]) == 1 and cut.attrs["interrupted_by"] == "SIGINT"
    assert cut.posterior.sizes["draw"] == 0 and set(cut.posterior.data_vars) == set(full.posterior.data_vars)
    assert cut.sample_stats["lp"].shape == (2, 0)
    assert int(cut.sampler_state.attrs["next_sweep"]) == 16
    cut.to_netcdf(str(tmp_path / "cut.nc"))  # it loads back from a file
    done = resume(_open(tmp_path / "cut.nc"), body.kernel, body.data, 30, progress=False)
    _assert_same_groups(full, done)
    assert int(done.attrs["interrupted"]) == 0


def test_lda_fit_interrupted_in_warmup_raises_keyboard_interrupt(monkeypatch):
    """The estimator has nothing to fit without draws: KeyboardInterrupt, as Python code expects.

    The model and documents of the memory tests below (:func:`_lda_model`, :func:`_lda_docs`), so
    that one sweep is compiled for both; stopped after the first of its 2 warm-up sweeps (chunks
    of one sweep)."""
    _stop_during_warmup(monkeypatch, 1)
    model = _lda_model(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(KeyboardInterrupt):
            model.fit(_lda_docs(3000))


# ----------------------------------------------------------------------------- warm-up interrupts (command line)
# the real command in a subprocess, each chunk made slow and announced, so that the signal lands in the warm-up
_SLOW_CHUNKS = """
import sys, time
import gibbsjax.run.driver as driver
real = driver.run_phase
def run_phase(run, fn, n_iters, thin, length, keep, accum, phase, stop, bar):
    def slow(*a):
        out = fn(*a)
        print("chunk of " + phase + " done", file=sys.stderr, flush=True)
        time.sleep(0.3)
        return out
    return real(run, slow, n_iters, thin, length, keep, accum, phase, stop, bar)
driver.run_phase = run_phase
from gibbsjax.cli import main
sys.exit(main({args!r}))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_warmup_saves_state_and_resume_equals_one_run(tmp_path, sig, status):
    from gibbsjax.cli import main

    config = CONFIGS / "body-temperature.toml"
    common = ["--no-progress", "--warmup", "200", "--draws", "30", "--chunk-size", "10", "--seed", "5"]
    out = tmp_path / "warm.nc"
    proc, log = _start(None, tmp_path, script=_SLOW_CHUNKS.format(args=["run", str(config), "--out", str(out),
                                                                        *common]))
    rc, stderr = _signal_when(proc, log, "chunk of warm-up done", sig)
    assert rc == status, stderr
    assert "Traceback" not in stderr
    cut = _open(out)
    cut.load()
    done = int(cut.sampler_state.attrs["next_sweep"])
    assert 0 < done < 200 and done % 10 == 0, done
    name = signal.Signals(sig).name
    assert (f"run interrupted ({name}) during warm-up after {done} of 200 warm-up sweeps: no posterior draws "
            f"yet; saved the warm-up state (sampler_state, 4 chains) to {out} (attrs interrupted = 1)") in stderr
    assert f"gibbsjax resume {out} --draws 30" in stderr
    assert cut.posterior.sizes["draw"] == 0 and int(cut.attrs["interrupted"]) == 1
    assert cut.attrs["interrupted_by"] == name
    # resumed as the message says, it equals one uninterrupted run
    assert main(["resume", str(out), "--draws", "30", "--no-progress"]) == 0
    whole = tmp_path / "whole.nc"
    assert main(["run", str(config), "--out", str(whole), *common]) == 0
    a, b = _open(whole), _open(out)
    assert b.posterior.sizes["draw"] == 30 and int(b.attrs["interrupted"]) == 0
    _assert_same_groups(a, b, [g for g in a.groups() if g != "sampler_state"])


# ----------------------------------------------------------------------------- memory of post-processing
def _lda_docs(vocab_size: int) -> list[list[str]]:
    """31 documents over ``vocab_size`` words, every word in the first."""
    rng = np.random.default_rng(0)
    words = [f"w{j}" for j in range(vocab_size)]
    return [words] + [[words[j] for j in rng.integers(0, vocab_size, 20)] for _ in range(30)]


def _lda_model(num_topics: int, num_chains: int = 2, num_draws: int = 5):
    from gibbsjax import LDA

    return LDA(num_topics, num_chains=num_chains, num_warmup=2, num_draws=num_draws, seed=0, progress=False)


def _lda_job(num_topics: int, vocab_size: int, num_chains: int = 2, num_draws: int = 5):
    from gibbsjax.topics import fit as lda_fit
    from gibbsjax.corpus.inputs import as_corpus

    model = _lda_model(num_topics, num_chains, num_draws)
    return lda_fit.job(model.get_params(), as_corpus(_lda_docs(vocab_size)))


def _estimate(job, monkeypatch):
    import gibbsjax.memory as memory
    from gibbsjax.run import check_memory

    monkeypatch.setattr(memory, "host_available_bytes", lambda: 2**60)  # whatever this machine has free now
    return check_memory(job.kernel, job.data, job.settings)


def _result_bytes(idata) -> int:
    return sum(v.nbytes for g in idata.groups() for v in idata[g].data_vars.values())


def test_estimate_includes_lda_postprocessing(monkeypatch):
    """K = 300 topics of V = 3,000 words: post-processing, not sampling, is the peak the estimate reports."""
    est = _estimate(_lda_job(300, 3000), monkeypatch)
    k, v, chains = 300, 3000, 2
    # at least the per-chain means and the aligning distance matrices, in float64
    assert est.postprocess_bytes >= 8 * chains * k * v + 8 * k * k
    assert est.postprocess_bytes > est.device_bytes + est.host_bytes
    assert not est.on_cpu or est.needed >= est.postprocess_bytes  # one pool on a CPU: all of it counts
    # no (K, K, V) array any more: 2.1 GiB for these sizes
    assert est.postprocess_bytes < 8 * k * k * v / 4


def test_run_refused_before_sampling_when_postprocessing_cannot_fit(monkeypatch):
    import gibbsjax.memory as memory
    from gibbsjax.run import check_memory

    job = _lda_job(300, 3000)
    est = _estimate(job, monkeypatch)
    have = (est.device_bytes + est.host_bytes + est.postprocess_bytes) // 2  # sampling fits, post-processing not
    assert SAFETY_FRACTION * have > est.device_bytes + est.host_bytes
    monkeypatch.setattr(memory, "host_available_bytes", lambda: have)
    # refused by the floor from the dims' sizes (before tracing) or by the traced estimate: both name
    # post-processing as what does not fit
    with pytest.raises(MemoryEstimateError, match=r"^this run needs (about|at least) [0-9.]+ MiB of host RAM \(.*"
                                                   r"post-process"):
        check_memory(job.kernel, job.data, job.settings)


def test_postprocessing_peak_is_within_the_estimate(monkeypatch):
    """The real peak of LDA post-processing (tracemalloc, on top of the raw result) lies between a
    quarter of the estimate and the estimate; the old (K, K, V) differences of the alignment
    (K = 300, V = 3,000: 2 GiB, over ten times the estimate) would exceed it.  The sizes of the
    tests above, whose compiled sweep this run reuses."""
    from gibbsjax import pipeline

    job = _lda_job(300, 3000)
    est = _estimate(job, monkeypatch)
    raw = pipeline.sample(job)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipeline.postprocess(job, raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    real = peak + _result_bytes(raw)
    assert real <= est.postprocess_bytes <= 4 * real, (real, est.postprocess_bytes)


def test_hellinger_distance_matrix_matches_the_differences():
    from gibbsjax.labels import component_permutations, distance_matrix

    rng = np.random.default_rng(3)
    a = rng.dirichlet(np.full(500, 0.05), size=40)
    shuffle = rng.permutation(40)
    b = a[shuffle] * 0.9 + rng.dirichlet(np.full(500, 0.05), size=40) * 0.1
    ra, rb = np.sqrt(a), np.sqrt(b)
    by_differences = np.sqrt(0.5 * ((ra[:, None, :] - rb[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(distance_matrix(a, b, "hellinger"), by_differences, rtol=1e-12, atol=1e-7)
    # euclidean and l1 are computed by blocks of rows: the very same numbers as all at once
    x, y = rng.normal(size=(70, 9)), rng.normal(size=(50, 9))
    np.testing.assert_array_equal(distance_matrix(x, y, "euclidean"), np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)))
    np.testing.assert_array_equal(distance_matrix(x, y, "l1"), np.abs(x[:, None] - y[None]).sum(-1))
    perms = component_permutations(np.stack([a, b]), distance="hellinger")
    assert np.array_equal(perms[1], np.argsort(shuffle))  # b's component j is a's shuffle[j]


@pytest.mark.parametrize("num_topics", [100_000_000, 2**31 - 1, 2**32])
def test_huge_number_of_topics_is_refused_with_an_estimate(num_topics):
    from gibbsjax import LDA
    from gibbsjax.datasets import abc_corpus

    model = LDA(num_topics, num_chains=2, num_warmup=5, num_draws=5, seed=0, progress=False)
    # on a CPU one pool; on a GPU the state alone may already exceed the device (then "GPU memory")
    where = "[PE]iB of host RAM" if jax.default_backend() == "cpu" else "[GTPE]iB of (?:host RAM|GPU memory)"
    with pytest.raises(MemoryEstimateError, match=rf"needs at least [0-9.]+ {where} \(topic = "
                                                   rf"{num_topics:,}, word = 3, document = 12: .*smaller topic"):
        model.fit(abc_corpus())


def test_cli_refuses_huge_k_in_one_line(tmp_path, capsys):
    from gibbsjax.cli import main

    config = tmp_path / "huge.toml"
    config.write_text(textwrap.dedent("""
        [model]
        name = "lda.partially_collapsed"
        K = 100000000
        [data]
        corpus = "abc"
        [sampler]
        num_chains = 2
        num_warmup = 5
        num_draws = 5
    """), encoding="utf-8")
    assert main(["run", str(config), "--out", str(tmp_path / "huge.nc"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gibbsjax: error: this run needs at least") and "topic = 100,000,000" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "huge.nc").exists()


def test_relabel_draws_by_blocks_gives_the_same_permutations(monkeypatch):
    """Per-draw relabelling computes its (draws, K, K) costs by blocks of draws: the same result."""
    import gibbsjax.labels as labels

    draws = np.random.default_rng(5).normal(size=(3, 60, 5, 4))
    whole = labels.relabel_draws(draws)
    monkeypatch.setattr(labels, "DISTANCE_BLOCK_BYTES", 8 * 5 * 5 * 7)  # blocks of 7 draws
    np.testing.assert_array_equal(labels.relabel_draws(draws), whole)
