"""Smoke test of the GPU benchmark on a CPU (Pallas in interpret mode, a tiny corpus): the one
command that measures the GPU path keeps running, and reports every row it promises.
Timings are not checked (they mean nothing here); the rows and their JSON are.  The same for the
sparse z-update's CPU benchmark (benchmarks/lda_sparse.py), on a tiny corpus, and part 1 of the
native CPU kernels' benchmark (benchmarks/cpu_native.py) at its --quick sizes."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import jax
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_lda_pallas_benchmark_runs_on_a_cpu(tmp_path, capsys):
    """Slow run only: benchmarks/gpu_table.py's smoke test (default run) calls the same
    bench_z and bench_phi."""
    out = tmp_path / "rows.json"
    _load("lda_pallas").main(["--tokens", "1500", "--vocab", "100", "--topics", "4", "--lanes", "4", "--reps", "1",
                              "--sweeps", "1", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["interpret"] is True
    whats = [row["what"] for row in report["rows"]]
    for expected in ("z-update XLA scan", "z-update fused", "phi draw, sparse (n_kw + draw)",
                     "phi draw, dense (n_kw + draw)", "sweep XLA, sparse phi", "sweep fused, sparse phi",
                     "sweep fused, dense phi", "z-update sparse (XLA)", "sweep sparse z, dense phi"):
        assert expected in whats, (expected, whats)
    assert any(w.startswith("sweep default (lanes, sparse phi)") for w in whats), whats  # a CPU's choices
    assert all(math.isfinite(row["ms"]) and row["ms"] > 0 for row in report["rows"])
    assert "INTERPRET mode" in capsys.readouterr().out


def test_lda_sparse_benchmark_runs(tmp_path, capsys):
    out = tmp_path / "rows.json"
    _load("lda_sparse").main(["--docs", "20", "--doc-length", "10", "--vocab", "30", "--topics", "5", "--reps", "1",
                              "--draws", "sparse", "--json", str(out)])
    report = json.loads(out.read_text())
    whats = [row["what"] for row in report["rows"]]
    for expected in ("phi draw sparse", "z-update lanes", "z-update sparse",
                     "speed-up sparse / lanes, z-update", "speed-up sparse / lanes, sweep"):
        assert expected in whats, (expected, whats)
    assert all(math.isfinite(row.get("ms", row.get("ratio"))) for row in report["rows"])
    assert "speed-up sparse / lanes" in capsys.readouterr().out


def test_gpu_table_inverse_cdf_matches_searchsorted():
    """The device corpus generator's inverse CDF against numpy's searchsorted, row by row, with
    zero-probability entries (never drawn) and uniforms at the row ends."""
    import jax.numpy as jnp
    import numpy as np

    gpu_table = _load("gpu_table")
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(37, 0.3), size=5)
    p[:, [0, 5, 36]] = 0.0  # zero-probability words, also the first and the last
    cdf = np.cumsum(p, axis=1).astype(np.float32)
    rows = rng.integers(0, 5, 4000)
    u = np.minimum(rng.random(4000).astype(np.float32) * cdf[rows, -1], np.nextafter(cdf[rows, -1], np.float32(0)))
    u[:5] = 0.0
    got = np.asarray(gpu_table.inverse_cdf_search(jnp.asarray(cdf), jnp.asarray(rows), jnp.asarray(u)))
    want = np.array([np.searchsorted(cdf[r], x, side="right") for r, x in zip(rows, u)])
    np.testing.assert_array_equal(got, want)
    assert not np.isin(got, [0, 5, 36]).any()


def test_gpu_table_corpus_and_summary():
    """One topic: the generated words are draws of φ (chi-square within 5 standard deviations of
    its mean); the Hellinger of the truth to itself, reordered, is 0; the summary picks the fastest
    gibbsjax budget reaching tomotopy's last Hellinger and says when none does."""
    import numpy as np

    gpu_table = _load("gpu_table")
    words, offsets, phi = gpu_table.corpus_on_device(20_000, 1, 40, doc_length=50, seed=1)
    assert offsets[0] == 0 and offsets[-1] == words.size and np.all(np.diff(offsets) >= 1)
    counts = np.bincount(words, minlength=40)
    expected = words.size * phi[0]
    seen = expected > 5
    chi2 = float(np.sum((counts[seen] - expected[seen]) ** 2 / expected[seen]))
    df = int(seen.sum()) - 1
    assert chi2 < df + 5 * np.sqrt(2 * df), (chi2, df)
    assert counts[expected * 1e4 < 1].sum() <= 1  # words of negligible probability hardly drawn
    topics = np.eye(3) * 0.9 + 0.1 / 3
    assert abs(gpu_table.mean_hellinger(np.roll(topics, 1, axis=0), topics)) < 1e-12
    tomo = [{"sweeps": 100, "seconds": 20.0, "hellinger": 0.3}, {"sweeps": 1000, "seconds": 200.0, "hellinger": 0.2}]
    ours = [{"sweeps": s, "seconds": t, "seconds_with_compile": t + 10, "hellinger": h}
            for s, t, h in ((100, 2.0, 0.25), (200, 3.0, 0.19), (400, 6.0, 0.15))]
    out = gpu_table.summary(ours, tomo)
    assert out["gibbsjax_sweeps"] == 200 and out["time_ratio"] == 3.0 / 200.0 and out["target_met"] is True
    assert out["time_ratio_with_compile"] == 13.0 / 200.0 and out["target_met_with_compile"] is False
    assert "did not reach" in gpu_table.summary(ours[:1], tomo)["note"]
    assert "no comparison" in gpu_table.summary(ours, [])["note"]


def test_gpu_table_dirichlet_rows_in_blocks(monkeypatch):
    """θ and φ of the GPU table's corpora are drawn a block of rows at a time (10⁹ entries at once
    would need 144 GB of temporaries): with blocks of 2 rows, 7 rows of Dir(0.5 · 1₃) come back,
    each on the simplex, the blocks with their own keys (no block repeats another), and the
    component means within 5 standard errors of 1/3 over 3,000 rows."""
    import numpy as np

    gpu_table = _load("gpu_table")
    monkeypatch.setattr(gpu_table, "DIRICHLET_BLOCK_ENTRIES", 6)
    rows = np.asarray(gpu_table.dirichlet_rows(jax.random.key(3), 0.5, 7, 3))
    assert rows.shape == (7, 3) and np.all(rows >= 0) and np.allclose(rows.sum(axis=1), 1, atol=1e-5)
    assert len({tuple(np.round(r, 6)) for r in rows}) == 7
    many = np.asarray(gpu_table.dirichlet_rows(jax.random.key(4), 0.5, 3000, 3))
    sd = np.sqrt(0.5 * 1.0 / (1.5 ** 2 * 2.5) / 3000)  # Dir(α): var α_i (α0 - α_i) / (α0² (α0 + 1))
    assert np.all(np.abs(many.mean(axis=0) - 1 / 3) < 5 * sd), many.mean(axis=0)


def test_gpu_table_counts_the_cpus_it_may_use(tmp_path, monkeypatch):
    """tomotopy's workers: the affinity mask, capped by a cgroup quota (v2 "quota period", v1 files),
    not the host's count."""
    import os

    gpu_table = _load("gpu_table")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert gpu_table.cpu_workers(str(tmp_path)) == 16  # no quota files
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert gpu_table.cpu_workers(str(tmp_path)) == 16
    (tmp_path / "cpu.max").write_text("250000 100000\n")
    assert gpu_table.cpu_workers(str(tmp_path)) == 3
    for odd in ("abc 100000\n", "100000 0\n", ""):  # unreadable: no quota known, never an error
        (tmp_path / "cpu.max").write_text(odd)
        assert gpu_table.cpu_workers(str(tmp_path)) == 16, odd
    (tmp_path / "cpu.max").unlink()
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("800000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert gpu_table.cpu_workers(str(tmp_path)) == 8


def test_gpu_table_goes_on_after_an_error_at_one_k(tmp_path, monkeypatch):
    """An error outside the guarded pieces (here the corpus of every K, as a poisoned CUDA context
    would give) is listed under skipped, the next K and the 100 M-token section still run, and the
    JSON is written complete: the one GPU run keeps what it can."""
    gpu_table = _load("gpu_table")
    tried = []

    def corpus(num_tokens, k, vocab_size, **kw):
        tried.append(k)
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")

    monkeypatch.setattr(gpu_table, "corpus_on_device", corpus)
    out = tmp_path / "t.json"
    gpu_table.main(["--tokens", "100", "--vocab", "10", "--topics", "3", "5", "--large-topics", "3",
                    "--large-tokens", "200", "--budget", "120", "--json", str(out)])
    report = json.loads(out.read_text())
    assert tried == [3, 5, 100] and report["complete"] is True  # K = 3, K = 5, then the large corpus (K = 100 truth)
    notes = " | ".join(report["skipped"])
    for what in ("K = 3: stopped (RuntimeError: CUDA_ERROR_ILLEGAL_ADDRESS", "K = 5: stopped (RuntimeError",
                 "large corpus: stopped (RuntimeError"):
        assert what in notes, notes


def test_a_failing_benchmark_piece_is_a_row_that_says_why(monkeypatch):
    """One piece that fails (here the dense φ draw, as the device's memory might at K = 10,000) is a
    row naming the error, without timings; the other pieces still give theirs."""
    import math

    from gibbsjax.datasets.synthetic import lda_corpus
    from gibbsjax.models import lda

    lda_pallas = _load("lda_pallas")
    real = lda.sample_log_phi

    def phi(*args, draw, **kw):
        if draw == "dense":
            raise RuntimeError("RESOURCE_EXHAUSTED: out of memory allocating 14.4 GB")
        return real(*args, draw=draw, **kw)

    monkeypatch.setattr(lda_pallas.lda, "sample_log_phi", phi)
    corpus, _, _ = lda_corpus(num_docs=6, num_topics=3, vocab_size=20, doc_length=8, seed=0)
    d = lda.data(corpus)
    state = lda.partially_collapsed(3, alpha=0.1, eta=0.01).init(jax.random.key(0), d)
    rows = lda_pallas.bench_phi(d, 3, state, jax.random.key(1), reps=1)
    sparse, dense = rows
    assert sparse["what"] == "phi draw, sparse (n_kw + draw)" and math.isfinite(sparse["ms"]) and sparse["ms"] > 0
    assert dense["what"].startswith("phi draw, dense (n_kw + draw): failed (RuntimeError: RESOURCE_EXHAUSTED")
    assert dense["ms"] is None and dense["Mtok_s"] is None


@pytest.mark.skipif(jax.default_backend() != "cpu",
                    reason="the CPU smoke run (interpret mode); on a GPU run the table itself")
def test_gpu_table_smoke_runs_on_a_cpu(tmp_path, capsys):
    """The whole GPU table at its --smoke sizes (interpret mode): every section has rows with finite,
    positive numbers, and the JSON says what was skipped (tomotopy, where it is not installed).
    In the default run, as the issue asks: the one GPU command cannot break unseen.  It also runs
    lda_pallas's z-update and phi measurements, so lda_pallas's own smoke test is in the slow run."""
    out = tmp_path / "gpu_table.json"
    _load("gpu_table").main(["--smoke", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["interpret"] is True and report["complete"] is True  # the last of its rewrites
    sections = report["sections"]
    for name in ("kernels", "sweeps", "large", "quality"):
        assert sections[name], name
    whats = {row["what"] for row in sections["kernels"]}
    for expected in ("z-update XLA scan", "z-update sparse (XLA)", "z-update fused", "phi draw, sparse (n_kw + draw)",
                     "phi draw, dense (n_kw + draw)", "count table n_kw (scatter-add)",
                     "z-update triton (jax-triton)", "z-update sparse triton (jax-triton)"):  # interpreted here
        assert expected in whats, (expected, whats)
    assert {row["chains"] for row in sections["sweeps"]} == {1, 4}
    # tomotopy's Hellinger of issue 22 not reached at 4 sweeps: twice that, up to the smoke's --quality-max 8
    assert [row["sweeps"] for row in sections["quality"]] == [4, 8]
    assert {row["what"].split(",")[0] for row in sections["large"]} == {"partially_collapsed", "uncollapsed"}
    for name, rows in sections.items():
        for row in rows:
            for key in ("ms", "Mtok_s", "seconds", "seconds_with_compile", "hellinger", "hellinger_last_state",
                        "peak_GiB"):
                if row.get(key) is not None:
                    assert math.isfinite(row[key]) and row[key] > 0, (name, key, row)
    try:
        import tomotopy  # noqa: F401
        assert sections["tomotopy"] and "time_ratio" in report["summary"] or "note" in report["summary"]
    except ImportError:
        assert any("tomotopy is not importable" in note for note in report["skipped"])
    assert "summary:" in capsys.readouterr().out


@pytest.mark.slow
def test_sample_profile_smoke_phases_add_up(tmp_path):
    """benchmarks/sample_profile.py at --smoke sizes: for sample and LDA.fit, the phases of each call
    add up to its whole (self-times, nothing counted twice), the sweeps are among them, and every
    post-processing piece of the fit is timed."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        out = tmp_path / "profile.json"
        profiles = _load("sample_profile").main(["--smoke", "--json", str(out)])
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert [p["what"] for p in profiles] == ["sample", "LDA.fit"]
    for p in profiles:
        for call in (p["first"], p["second"]):
            assert sum(call["phases"].values()) == pytest.approx(call["whole_s"], rel=0.02)
            assert call["phases"]["sampling sweeps"] > 0 and call["outside_s"] > 0
    fit = profiles[1]["second"]["phases"]
    for piece in ("align chains", "agreement", "stable topics", "top words", "coherence"):
        assert f"postprocess: {piece}" in fit, piece
    assert json.loads(out.read_text())["profiles"][0]["tokens"] == profiles[0]["tokens"]


def test_suite_profile_sums_compilation_per_file(tmp_path, capsys):
    """benchmarks/suite_profile.py on a generated file: each test's wall time and the backend
    compilation JAX reports inside it, summed per file; a test that compiles nothing shows none,
    and a compiling one no more than its own wall time.  Its census of programs sees the same
    program compiled twice (two closures, the same shape) and a third equal to them but for its
    shape."""
    test_file = tmp_path / "test_two.py"
    test_file.write_text(
        "import jax, jax.numpy as jnp\n"
        "jax.config.update('jax_enable_compilation_cache', False)  # every compilation reaches XLA\n\n"
        "def _f(n):\n"
        "    return float(jax.jit(lambda x: jnp.cumsum(jnp.sin(x)).sum())(jnp.ones(n)))\n\n"
        "def test_compiles():\n"
        "    assert _f(7) > 0\n\n"
        "def test_plain():\n"
        "    assert 1 + 1 == 2\n\n"
        "def test_again():\n"
        "    assert _f(7) > 0\n\n"
        "def test_other_shape():\n"
        "    assert _f(9) > 0\n", encoding="utf-8")
    out = tmp_path / "profile.json"
    result = _load("suite_profile").main(["--json", str(out), "--", str(test_file), "-n", "0"])
    assert result["exit"] == 0
    rows = {row["test"].split("::")[-1]: row for row in result["tests"]}
    assert set(rows) == {"test_compiles", "test_plain", "test_again", "test_other_shape"}
    compiling = [rows[name] for name in ("test_compiles", "test_again", "test_other_shape")]
    for row in compiling:
        assert 0 < row["compile_s"] <= row["wall_s"], row
    assert rows["test_plain"].get("compile_s", 0.0) == 0.0
    (only,) = result["files"]
    assert only["tests"] == 4 and only["wall_s"] == pytest.approx(sum(r["wall_s"] for r in rows.values()))
    assert json.loads(out.read_text())["total"]["compile_s"] == pytest.approx(sum(r["compile_s"] for r in compiling))
    # per compiled function: the tests' jitted lambdas, and nothing from the test that compiles nothing
    assert rows["test_plain"]["compiled"] == {} and rows["test_plain"]["programs"] == []
    functions = {f["function"]: f for f in result["functions"]}
    assert "jit(<lambda>)" in functions and functions["jit(<lambda>)"]["tests"] == 3
    assert sum(f["compile_s"] for f in result["functions"]) == pytest.approx(sum(r["compile_s"] for r in compiling))
    # the census of the lambdas' programs: two distinct as they are, one without their shapes
    census = _load("suite_profile").programs(result["tests"], name="lambda")
    assert census["compilations"] == 3
    assert census["identical"]["distinct"] == 2 and census["identical"]["repeated_s"] > 0
    assert census["up to constants and shapes"]["distinct"] == 1
    assert census["up to constants and shapes"]["repeated_s"] > census["identical"]["repeated_s"]
    printed = capsys.readouterr().out
    assert "backend compilation" in printed and "up to constants and shapes" in printed


@pytest.mark.slow
def test_infer_benchmark_runs_and_the_two_updates_agree(capsys):
    """benchmarks/infer.py on a tiny corpus: both z-updates of held-out inference run, and their θ
    for the same key agree up to float32 summation order (a few documents may take another path)."""
    out = _load("infer").main(["--docs", "40", "--topics", "4", "--vocab", "60", "--doc-length", "20",
                               "--sweeps", "10", "--reps", "1"])
    assert out["ratio"] > 0 and out["max_theta_gap"] < 0.5
    assert "lanes" in capsys.readouterr().out


def test_cpu_native_benchmark_quick_part_one(capsys):
    """benchmarks/cpu_native.py --quick, part 1 on its synthetic corpus (no download, no `lda` package):
    one chain of each gibbsjax sampler (every thread count) and tomotopy (1 and all workers) give finite tokens/s,
    perplexities and distances to the true topics, gibbsjax's draws are the same whatever its thread
    count, and the ratios are printed."""
    pytest.importorskip("tomotopy")
    results = _load("cpu_native").main(["--quick", "--parts", "1", "--corpora", "synthetic", "--synthetic-sweeps",
                                        "4"])
    (job,) = results[1]
    assert job["corpus"] == "synthetic" and job["k"] == 20 and job["sweeps"] == 4
    assert job["same_draws"] == {"collapsed": True, "partially_collapsed": True}
    assert {row["system"] for row in job["rows"]} == {"gibbsjax", "tomotopy"}
    assert {row.get("sampler") for row in job["rows"]} == {"collapsed", "partially_collapsed", None}
    for row in job["rows"]:
        assert math.isfinite(row["tokens_per_s"]) and row["tokens_per_s"] > 0, row
        assert math.isfinite(row["score"][0]) and row["score"][0] > 1, row
        assert 0 <= row["score"][1] <= 1, row  # mean Hellinger distance to the true topics
    assert job["ratios"] and all(math.isfinite(r["speed"]) and math.isfinite(r["perplexity"]) for r in job["ratios"])
    assert "Part 1 summary" in capsys.readouterr().out
