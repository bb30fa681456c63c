"""The memory estimate made before sampling (gibbsjax.memory; issue 11, point 1)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gibbsjax
from gibbsjax import memory
from gibbsjax.kernel import Kernel
from gibbsjax.memory import MemoryEstimateError
from gibbsjax.models import normal


def test_compiled_bytes_counts_arguments_and_outputs():
    compiled = jax.jit(lambda x: x * 2).lower(jax.ShapeDtypeStruct((1000,), jnp.float32)).compile()
    stats = compiled.memory_analysis()
    assert memory.compiled_bytes(compiled) >= stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
    assert memory.compiled_bytes(compiled) >= 8000  # 4000 in, 4000 out


def test_tree_bytes_of_shapes_and_keys():
    tree = {"a": jax.ShapeDtypeStruct((10, 3), jnp.float32), "k": jax.random.split(jax.random.key(0), 5)}
    assert memory.tree_bytes(tree) == 120 + 5 * 8


def _limit(monkeypatch, *, host: int, device: int | None = None) -> None:
    """Memory available as the estimate sees it, on any backend: host RAM and (on an accelerator)
    the device's free memory (default: the same as the host's)."""
    monkeypatch.setattr(memory, "host_available_bytes", lambda: host)
    monkeypatch.setattr(memory, "_device_available", lambda device_=None: host if device is None else device)


ON_CPU = jax.devices()[0].platform == "cpu"


@pytest.mark.skipif(ON_CPU, reason="an accelerator's own memory (the host's is checked on a CPU below)")
def test_available_memory_reads_the_accelerator():
    nbytes, where = memory.available_memory()
    stats = jax.devices()[0].memory_stats()
    assert where != "host RAM" and 0 < nbytes <= stats["bytes_limit"]


def test_available_memory_reads_the_host(monkeypatch):
    if not ON_CPU:
        assert memory.host_available_bytes() is None or memory.host_available_bytes() > 0
        return  # an accelerator's figure is checked above; the host part below needs /proc/meminfo
    nbytes, where = memory.available_memory()
    assert where == "host RAM" and (nbytes is None or nbytes > 0)
    text = open("/proc/meminfo").read()
    listed = int(re.search(r"MemAvailable:\s+(\d+) kB", text).group(1)) * 1024
    # the same figure, give or take what other processes did in between
    assert nbytes is None or abs(nbytes - listed) < 0.2 * listed + 2**28 or nbytes < listed


def _flag_kernel(flag: list):
    """A kernel whose init, when it really runs, appends to ``flag`` (not when only traced)."""

    def init(key, data):
        jax.debug.callback(lambda: flag.append(1))
        return {"x": jnp.zeros(1000, jnp.float32)}

    return Kernel(init=init, step=lambda k, s, d: {"x": s["x"] + 1.0}, record=lambda s, d: {"x": s["x"][:2]},
                  name="flag")


def test_a_run_that_cannot_fit_is_refused_before_any_state_is_allocated(monkeypatch):
    flag: list = []
    _limit(monkeypatch, host=10 * 2**20)  # 10 MiB, on the host and (on a GPU) on the device
    # 5,000 chains x 4 kB of state, in and out: 40 MB > 10 MiB, known without compiling
    with pytest.raises(MemoryEstimateError) as info:
        gibbsjax.sample(_flag_kernel(flag), num_chains=5000, num_warmup=0, num_draws=10, progress=False, seed=0)
    msg = str(info.value)
    assert "\n" not in msg and "needs about" in msg and "10.0 MiB is available" in msg
    assert "fewer chains" in msg and "chunk_size" in msg
    assert isinstance(info.value, ValueError)
    jax.effects_barrier()
    assert flag == []  # the initial states were never computed
    # with the memory check off, the same run starts
    monkeypatch.setenv("GIBBSJAX_MEMORY_CHECK", "0")
    idata = gibbsjax.sample(_flag_kernel(flag), num_chains=5000, num_warmup=0, num_draws=2, progress=False, seed=0)
    jax.effects_barrier()
    assert flag and idata.posterior["x"].shape == (5000, 2, 2)


def test_kept_draws_count_on_the_host(monkeypatch):
    # the state is tiny; the kept draws (2 x 4 chains x 100,000 draws x 8 bytes = 6.4 MB) are not
    _limit(monkeypatch, host=5 * 2**20, device=2**40)  # only the host is short
    # on a CPU the message adds the kept draws to the run's arrays (one pool); elsewhere the host's
    # share is the kept draws alone
    kept = "for the kept draws" if jax.default_backend() == "cpu" else r"of host RAM \(the kept draws\)"
    with pytest.raises(MemoryEstimateError, match=kept):
        gibbsjax.sample(normal.bivariate(0.5), num_chains=4, num_warmup=0, num_draws=100_000,
                        progress=False, seed=0)


def test_estimate_of_a_run_that_fits_uses_xla_and_compiles_once(monkeypatch):
    from gibbsjax.run import chunks as R

    kernel = normal.semiconjugate()
    data = normal.data(np.linspace(97.0, 99.0, 50))
    length = 8
    chunk = R.chunk_fn(kernel.step, kernel.record, kernel.log_joint, 1, length, kernel.accumulate)
    est = memory.check_run(
        R.start_fn(kernel.init), (chunk,), lambda s, d: R.zero_accumulators(None, s, d),
        jax.random.key(0), 16, data, length=length, kept=100,
    )
    assert est.compiled and est.on_cpu == ON_CPU
    # the states (2 x 16 chains x 2 floats) and the data are in, and the kept draws on the host
    assert est.device_bytes >= 2 * 16 * 2 * 4 + 50 * 4
    assert est.host_bytes == 2 * 100 * 16 * (4 + 4 + 4)  # mu, sigma2, lp per chain and draw


def test_uncollapsed_lda_advice_names_the_partially_collapsed_sampler():
    assert "partially collapsed" in memory._advice("lda.uncollapsed(K=500)", 8, 0.5)
    assert "partially collapsed" not in memory._advice("normal_semiconjugate", 8, 0.5)
    assert "about 4 would fit" in memory._advice("x", 8, 0.5)


_SPLIT = """
import warnings
warnings.simplefilter("ignore")
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
import gibbsjax
from gibbsjax import memory
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.memory import MemoryEstimateError
from gibbsjax.models import lda
from gibbsjax.run import Settings, check_memory
assert len(jax.devices()) == 4
# a leaf split over 4 devices counts one device's quarter; a replicated one counts whole
mesh = Mesh(np.array(jax.devices()), ("docs",))
x = jax.ShapeDtypeStruct((8, 100), np.float32, sharding=NamedSharding(mesh, PartitionSpec("docs")))
y = jax.ShapeDtypeStruct((8, 100), np.float32, sharding=NamedSharding(mesh, PartitionSpec()))
assert memory.tree_bytes([x, y], per_device=True) == 800 + 3200 and memory.tree_bytes([x, y]) == 6400
corpus, _, _ = lda_corpus(num_docs=400, num_topics=4, vocab_size=30, doc_length=50, seed=0)
d = lda.data(corpus)
# the pure-XLA updates: their programs' temporaries scale with the chains and the documents, which this
# test's shares of one device rest on (the native kernels' C++ scratch is outside XLA's analysis)
k = lda.partially_collapsed(4, warmup="exact", z_update="lanes", dirichlet_draw="sparse")
kw = dict(seed=3, num_chains=1, num_warmup=2, num_draws=2, progress=False)
one = check_memory(k, d, Settings(devices=1, shard="data", **kw))
four = check_memory(k, d, Settings(devices=4, **kw))
assert one.compiled and four.compiled
# on a CPU the 4 devices take their shares from the same RAM: the estimate is 4 x one device's share,
# and one device's share is less than what one device running everything needs
share = four.device_bytes / 4
assert share < 0.75 * one.device_bytes, (share, one.device_bytes)
print("share", int(share), "one device", one.device_bytes)
# chains spread over the 4 devices: checked per device too (a quarter of the chains each, the data
# replicated), and a run that does not fit is refused naming the spread chains
kc = dict(kw, num_chains=8)
spread, single = check_memory(k, d, Settings(devices=4, **kc)), check_memory(k, d, Settings(**kc))
assert spread.compiled and single.compiled
assert spread.device_bytes / 4 < 0.75 * single.device_bytes, (spread.device_bytes, single.device_bytes)
available = memory.host_available_bytes
memory.host_available_bytes = lambda: int((spread.device_bytes + spread.host_bytes) / memory.SAFETY_FRACTION * 0.95)
try:
    gibbsjax.sample(k, d, devices=4, **kc)
    raise AssertionError("not refused")
except MemoryEstimateError as e:
    msg = str(e)
    assert "on each of 4 devices with the chains spread over devices" in msg, msg
    assert "more devices to spread the chains over (devices = 4 now" in msg, msg
    print("chains spread: refused", msg)
memory.host_available_bytes = available
need = four.device_bytes + four.host_bytes
edge = need / memory.SAFETY_FRACTION
for avail, refused in ((int(edge * 1.05), False), (int(edge * 0.95), True), (2**16, True)):
    memory.host_available_bytes = lambda: avail
    try:
        idata = gibbsjax.sample(k, d, devices=4, **kw)
        assert not refused, avail
        assert idata.attrs["sharding"].startswith("data: documents split into 4 shards")
        print("fits", avail)
    except MemoryEstimateError as e:
        assert refused, (avail, e)
        msg = str(e)
        assert "on each of 4 devices with the data split over devices" in msg, msg
        assert "more devices to split the data over (devices = 4 now" in msg, msg
        assert ("not yet compiled" in msg) == (avail == 2**16), msg
        print("refused", avail, msg)
"""


def test_a_run_split_over_devices_is_checked_per_device(tmp_path):
    """Data split over 4 (forced CPU) devices: each device's share of data and state is estimated
    (a quarter of the split arrays, XLA's analysis of the partitioned program), and a run whose shares
    do not fit is refused before anything is allocated, naming the devices.  Chains spread over the
    devices are checked per device in the same way."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("GIBBSJAX_MEMORY_CHECK", None)
    proc = subprocess.run([sys.executable, "-c", _SPLIT], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("refused") == 3 and proc.stdout.count("fits") == 1, proc.stdout
    assert "chains spread: refused" in proc.stdout, proc.stdout
