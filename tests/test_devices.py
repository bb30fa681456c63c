"""Chains spread over several devices (``devices=``) give the draws of one device.

JAX fixes the number of host (CPU) devices when it starts, so these checks run in
a subprocess with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``; the rest
of the suite keeps its single device.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gibbsjax.run import Settings

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = textwrap.dedent("""
    import numpy as np, jax, warnings
    warnings.simplefilter("ignore")
    from gibbsjax.config import load_config
    from gibbsjax.run import sample, resume
    assert len(jax.devices()) == 4, jax.devices()
    import gibbsjax.run.driver as r
    seen = []
    real = r.run_phase
    def spy(run, *a, **k):
        real(run, *a, **k)
        seen.append(len(jax.tree_util.tree_leaves(run.state)[0].sharding.device_set))
    r.run_phase = spy
    from gibbsjax.config import parse_config
    small_lda = parse_config({{"model": {{"name": "lda.partially_collapsed", "K": 3}},
                              "data": {{"corpus": "abc"}}, "sampler": {{}}}})
    for name in ("body-temperature", "lda"):
        c = small_lda if name == "lda" else load_config(f"{root}/configs/{{name}}.toml")
        kw = dict(seed=1, num_chains=4, num_warmup=10, num_draws=20, progress=False)
        seen.clear()
        one = sample(c.kernel, c.data, **kw)
        assert set(seen) == {{1}}, seen
        seen.clear()
        four = sample(c.kernel, c.data, devices=4, **kw)
        assert set(seen) == {{4}}, seen  # the chains really ran on four devices
        others = [four]
        if name == "body-temperature":  # resumed on another number of devices
            others.append(resume(sample(c.kernel, c.data, devices=2, **{{**kw, "num_draws": 8}}), c.kernel, c.data,
                                 12, progress=False, devices=4))
        for other in others:
            for g in ("posterior", "sample_stats", "posterior_mean"):
                if g in one.groups():
                    for v in one[g].data_vars:
                        np.testing.assert_array_equal(one[g][v].values, other[g][v].values, err_msg=f"{{name}} {{g}}.{{v}}")
        assert int(four.attrs["devices"]) == 4
        print(name, "identical")
    try:
        sample(c.kernel, c.data, devices=8, **{{**kw, "num_chains": 8}})
    except ValueError as e:
        print("refused:", e)

    # a run over devices compiles each chunk function once: the memory check compiles it for the
    # arguments as the run places them (sharded by chain), and the run finds it compiled; resume goes
    # on over the same devices, with the same compiled chunks.  Lowerings are counted (a lowering
    # precedes every compilation, a persistent-cache hit included) of a kernel no other run used.
    from gibbsjax.datasets import abc_corpus
    from gibbsjax.models import lda
    from gibbsjax.run import Settings
    from gibbsjax.run.chunks import compiled
    lowered = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, secs, fun_name="", **_: lowered.append(fun_name)
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration" else None)
    k2, d2 = lda.partially_collapsed(2, alpha=0.3), lda.data(abc_corpus())
    spread_kw = {{**kw, "num_chains": 8, "devices": 4}}
    _, warm_fn, draw_fn = compiled(k2, Settings(**spread_kw), 20)
    seen.clear()
    spread = sample(k2, d2, **spread_kw)
    assert set(seen) == {{4}}, seen
    assert lowered.count("jit(run)") == len({{warm_fn, draw_fn}}), lowered
    seen.clear()
    lowered.clear()
    more = resume(spread, k2, d2, 20, progress=False)
    assert set(seen) == {{4}} and "jit(run)" not in lowered, (seen, lowered)
    ref = sample(k2, d2, **{{**kw, "num_chains": 8, "num_draws": 40}})
    np.testing.assert_array_equal(more.posterior["topic_share"].values, ref.posterior["topic_share"].values)
    print("chunks compiled once; resumed on 4 devices")
""")


def test_chains_over_four_devices_give_the_draws_of_one(tmp_path):
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-c", _SCRIPT.format(root=ROOT)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "body-temperature identical" in proc.stdout and "lda identical" in proc.stdout
    assert "refused: devices=8 asked for, but JAX sees 4" in proc.stdout
    assert "chunks compiled once; resumed on 4 devices" in proc.stdout


def test_devices_must_divide_the_chains():
    with pytest.raises(ValueError, match="multiple of devices"):
        Settings(num_chains=6, devices=4, shard="chains")
    Settings(num_chains=6, devices=4)  # "auto": the data may be split instead (decided by the kernel)
    with pytest.raises(ValueError, match="devices"):
        Settings(devices=0)
    with pytest.raises(ValueError, match="shard must be one of"):
        Settings(shard="documents")


def test_a_kernel_without_shard_needs_chains_filling_the_devices():
    """Chains that do not fill the devices: a kernel that cannot split its data is refused before
    anything runs (one device is enough to see it: devices=1 with shard='data')."""
    from gibbsjax.models import normal
    from gibbsjax.run import sample

    with pytest.raises(ValueError, match="cannot split its data over devices"):
        sample(normal.bivariate(rho=0.5), devices=1, shard="data", num_chains=2, num_draws=2, num_warmup=0,
               progress=False)
