"""Smoke test of the GPU benchmark on a CPU (Pallas in interpret mode, a tiny corpus): the one
command that measures the GPU path keeps running, and reports every row it promises.
Timings are not checked (they mean nothing here); the rows and their JSON are.  The same for the
sparse z-update's CPU benchmark (benchmarks/lda_sparse.py), on a tiny corpus."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lda_pallas_benchmark_runs_on_a_cpu(tmp_path, capsys):
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
