"""float64 mode for every model (issue 11, point 3).

``JAX_ENABLE_X64=1`` is process-wide, so the checks run in one subprocess.  By
default every shipped config is traced in x64 mode (its initial states and its
compiled chunk function, abstractly: a draw whose dtype disagrees with its
state fails there, the way ``gibbsjax run`` failed for six configs) and the
body-temperature config (the config guide's example) runs for real; ``-m slow`` runs every
config for real (short runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))

SCRIPT = textwrap.dedent(
    r"""
    import dataclasses, functools, json, sys
    import jax, jax.numpy as jnp, numpy as np
    assert jax.config.jax_enable_x64
    from gibbsjax import random as gr
    from gibbsjax.run import chunks as R
    from gibbsjax.config import load_config, run_config

    out = {}
    key = jax.random.key(0)
    f64, f32 = jnp.ones(3, jnp.float64), jnp.ones(3, jnp.float32)
    out["random"] = {
        "normal64": str(gr.normal(key, f64, 1.0).dtype),
        "normal32": str(gr.normal(key, f32, 1.0).dtype),
        "gamma64": str(gr.gamma(key, f64).dtype),
        "gamma32": str(gr.gamma(key, f32).dtype),
        "inverse_gamma": str(gr.inverse_gamma(key, 2.0, f64).dtype),
        "dirichlet": str(gr.dirichlet(key, f64).dtype),
        "beta": str(gr.beta(key, f32, 2.0).dtype),
        "uniform": str(gr.uniform(key, (2,)).dtype),
        "python_floats": str(gr.normal(key, 0.0, 1.0).dtype),
        "explicit": str(gr.normal(key, f64, dtype=jnp.float32).dtype),
    }
    for mode, paths in json.loads(sys.argv[1]):  # [[mode, [paths]], ...]: every job in this one process
        out[mode] = {}
        for path in paths:
            cfg = load_config(path)
            s = cfg.sampler
            if mode == "run":
                short = dataclasses.replace(s, num_warmup=3, num_draws=4, chunk_size=None)
                cfg = dataclasses.replace(cfg, sampler=short)
                idata = run_config(cfg, progress=False)
                values = [np.asarray(v) for v in idata.posterior.data_vars.values()]
                out[mode][path] = {"ok": all(np.all(np.isfinite(v)) for v in values if v.dtype.kind == "f"),
                                   "dtypes": sorted({str(v.dtype) for v in values})}
                continue
            k = cfg.kernel
            start = R.start_fn(k.init)
            chain_ids = jax.ShapeDtypeStruct((s.num_chains,), jnp.int32)
            keys, state = jax.eval_shape(start, key, chain_ids, cfg.data)
            acc = jax.eval_shape(functools.partial(R.zero_accumulators, k.accumulate), state, cfg.data)
            chunk = R.chunk_fn(k.step, k.record, k.log_joint, s.thin, 2, k.accumulate)
            new_state, _, _ = jax.eval_shape(chunk, keys, state, acc, cfg.data, np.int32(0), np.int32(2),
                                             np.bool_(True), np.bool_(True))
            same = jax.tree_util.tree_all(jax.tree_util.tree_map(lambda a, b: a.dtype == b.dtype, state, new_state))
            floats = sorted({str(l.dtype) for l in jax.tree_util.tree_leaves(state)
                             if jnp.issubdtype(l.dtype, jnp.floating)})
            out[mode][path] = {"ok": bool(same), "dtypes": floats}
    print("RESULT " + json.dumps(out))
    """
)


def _run_x64(jobs: list[tuple[str, list[Path]]], timeout: int) -> dict:
    """Every ``(mode, configs)`` job (``"trace"`` or ``"run"``) in one x64 subprocess (one interpreter and
    JAX start for all): ``{"random": ..., mode: {config path: result}}``."""
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    todo = json.dumps([[mode, [str(c) for c in configs]] for mode, configs in jobs])
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, todo],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _check_random(result: dict) -> None:
    r = result["random"]
    assert r["normal64"] == r["gamma64"] == r["inverse_gamma"] == r["dirichlet"] == "float64"
    assert r["normal32"] == r["gamma32"] == r["beta"] == "float32"  # float32 parameters stay float32
    assert r["uniform"] == r["python_floats"] == "float64"  # JAX's default float in x64 mode
    assert r["explicit"] == "float32"


def test_every_config_traces_in_x64_and_the_readme_config_runs():
    readme_config = ROOT / "configs" / "body-temperature.toml"
    result = _run_x64([("trace", CONFIGS), ("run", [readme_config])], timeout=600)
    _check_random(result)
    for path in CONFIGS:
        entry = result["trace"][str(path)]
        assert entry["ok"], f"{path.name}: a sweep changes the dtype of the state in x64 mode"
    entry = result["run"][str(readme_config)]
    assert entry["ok"] and entry["dtypes"] == ["float64"]


@pytest.mark.slow
def test_every_config_runs_in_x64():
    result = _run_x64([("run", CONFIGS)], timeout=1200)
    for path in CONFIGS:
        assert result["run"][str(path)]["ok"], path.name
