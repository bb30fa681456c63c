"""LDA draws keyed by document and position: independent of the packing and of the devices.

Every z-update takes token i's uniform from a hash of (document, position) under the
sweep's key (``lda.token_uniforms``), so packing the corpus into another number of lanes,
or splitting its documents over devices (``gibbsjax.models.lda.shard``), leaves every draw unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.specs.lda import config_data_by_process


def _corpus(num_docs=40, seed=0):
    corpus, _, _ = lda_corpus(num_docs=num_docs, num_topics=4, vocab_size=30, doc_length=10, seed=seed)
    return corpus


def test_hashed_uniforms_depend_on_their_own_pair_only():
    key = jax.random.key(3)
    a = jnp.arange(1000) % 37
    b = jnp.arange(1000) // 37
    u = np.asarray(lda.hashed_uniforms(key, a, b))
    perm = np.random.default_rng(0).permutation(1000)
    np.testing.assert_array_equal(np.asarray(lda.hashed_uniforms(key, a[perm], b[perm])), u[perm])
    np.testing.assert_array_equal(np.asarray(lda.hashed_uniforms(key, a[5:6], b[5:6])), u[5:6])
    assert u.min() >= 0.0 and u.max() < 1.0
    # uniform, and a new key gives new numbers: Kolmogorov-Smirnov and a correlation
    from scipy import stats

    assert stats.kstest(u, "uniform").pvalue > 1e-3
    other = np.asarray(lda.hashed_uniforms(jax.random.key(4), a, b))
    assert abs(np.corrcoef(u, other)[0, 1]) < 4 / np.sqrt(1000)


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_hashed_uniforms_are_jaxs_threefry_of_the_pairs(impl):
    """Each uniform is the first word of ``jax.extend.random.threefry_2x32`` of the counters
    [a, b] under two words drawn from the key (the construction of every earlier release, so the
    draws stay what they were), mantissa-filled as ``jax.random.uniform`` does; computed with the
    element-wise block function :func:`gibbsjax.random.threefry2x32`."""
    from jax.extend.random import threefry_2x32

    key = jax.random.key(11, impl=impl)
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2**31, (37, 5)), rng.integers(0, 5000, (37, 5))
    pair = jax.random.bits(key, (2,), jnp.uint32)
    words = np.asarray(threefry_2x32(pair, jnp.asarray(np.concatenate([a.ravel(), b.ravel()]), jnp.uint32)))[:a.size]
    expected = ((words >> 9) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)
    got = np.asarray(jax.jit(lda.hashed_uniforms)(key, jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_array_equal(got, expected.reshape(a.shape))
    # another pairing of the same counters gives other numbers: the test can fail
    assert not np.array_equal(np.asarray(lda.hashed_uniforms(key, jnp.asarray(b), jnp.asarray(a))), got)


@pytest.mark.parametrize("z_update, k", [
    ("lanes", 40),  # the CPU default, two-level prefix sums
    pytest.param("lanes", 5, marks=pytest.mark.slow),
    pytest.param("dense", 5, marks=pytest.mark.slow),
])
def test_draws_do_not_depend_on_the_number_of_lanes(z_update, k):
    """z (in corpus order) and φ after three sweeps are bit-identical for 1, 3 lanes and the default."""
    corpus = _corpus()
    kernel = lda.partially_collapsed(k, z_update=z_update, warmup="exact")
    results = []
    for lanes in (1, 3, None):
        d = lda.data(corpus, num_lanes=lanes)

        @jax.jit
        def run(key, d=d):
            s = kernel.init(jax.random.key(1), d)
            return jax.lax.fori_loop(0, 3, lambda t, s: kernel.step(jax.random.fold_in(key, t), s, d), s)

        s = run(jax.random.key(2))
        results.append((d.words.shape, lda.layout.tokens_in_corpus_order(d, s.z), np.asarray(s.log_phi)))
    assert len({r[0] for r in results}) == 3  # three different grids
    for shape, z, log_phi in results[1:]:
        np.testing.assert_array_equal(z, results[0][1], err_msg=str(shape))
        np.testing.assert_array_equal(log_phi, results[0][2], err_msg=str(shape))
    assert len(np.unique(results[0][1])) == k or k > 30  # the draws moved


# ---------------------------------------------------------------------------- documents over devices
# JAX fixes the number of host (CPU) devices when it starts, so these run in a subprocess
# with XLA_FLAGS=--xla_force_host_platform_device_count=4 (as tests/test_devices.py).
_PRELUDE = """
import warnings
warnings.simplefilter("ignore")
import numpy as np, jax, jax.numpy as jnp
import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import shard as lda_shard
assert len(jax.devices()) == 4, jax.devices()


def same(a, b, groups=("posterior", "sample_stats", "posterior_mean"), lp_exact=True):
    for g in groups:
        for v in a[g].data_vars:
            x, y = a[g][v].values, b[g][v].values
            if v == "lp" and not lp_exact:
                # the document part of lp is summed shard by shard: float32 summation order
                np.testing.assert_allclose(x, y, rtol=2e-6, err_msg=v)
                assert not np.array_equal(np.round(x), np.round(y) + 1)
            else:
                np.testing.assert_array_equal(x, y, err_msg=g + "." + v)
"""

_SAME_AS_ONE_DEVICE = _PRELUDE + """
corpus, _, _ = lda_corpus(num_docs=40, num_topics=4, vocab_size=30, doc_length=10, seed=0)
d = lda.data(corpus)
k = lda.partially_collapsed(4, warmup="exact")
kw = dict(seed=3, num_chains=1, num_warmup=3, num_draws=6, progress=False)
one = gibbsjax.sample(k, d, **kw)
four = gibbsjax.sample(k, d, devices=4, **kw)   # 1 chain, 4 devices: the documents are sharded
assert four.attrs["sharding"].startswith("data: documents split into 4 shards over 4 cpu devices"), four.attrs
assert four.posterior_mean["doc_topic"].shape == one.posterior_mean["doc_topic"].shape
same(one, four, lp_exact=False)
z_one = lda.layout.tokens_in_corpus_order(d, one.sampler_state["state__z"].values[0])
sd = k.shard(d, jax.devices()).data
z_four = lda_shard.tokens_in_corpus_order(sd, four.sampler_state["state__z"].values[0])
np.testing.assert_array_equal(z_one, z_four)
assert len(np.unique(z_one)) == 4
print("z, topic_share, topic_word, doc_topic identical; lp max gap",
      float(np.abs(one.sample_stats.lp.values - four.sample_stats.lp.values).max()))
# resumed on the same shards equals the uninterrupted run
first = gibbsjax.sample(k, d, devices=4, **{**kw, "num_draws": 2})
longer = gibbsjax.resume(first, k, d, 4, progress=False)
same(four, longer)
# a count table of the sharded state that disagrees with its topics is refused before sampling
bad = first.copy()
st = bad.sampler_state.copy(deep=True)
arr = st["state__nkw"].values.copy()
arr[0, 1, 2] += 3
st["state__nkw"] = (st["state__nkw"].dims, arr)
bad.sampler_state = st
try:
    gibbsjax.resume(bad, k, d, 2, progress=False)
except ValueError as e:
    assert "state__nkw" in str(e) and "to topic 1 in chain 0" in str(e) and chr(10) not in str(e), e
else:
    raise AssertionError("a damaged count table resumed")
print("resumed identical")
# bytes exchanged per sweep: the K x V count table, not growing with the tokens
for docs in (40, 400):
    c, _, _ = lda_corpus(num_docs=docs, num_topics=4, vocab_size=30, doc_length=10, seed=1)
    b = lda_shard.bytes_exchanged_per_sweep(k.shard(lda.data(c), jax.devices()))
    assert b["sweep"] == 4 * 30 * 4, b
    assert b["record"] <= 4 * 16, b  # one float per shard and a few scalars
    print("bytes", c.num_tokens, b)
# the estimator: LDA(devices=4) with one chain splits the documents, as sample() does
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    model = gibbsjax.LDA(4, num_chains=1, num_warmup=3, num_draws=6, seed=3, devices=4, progress=False).fit(corpus)
assert model.idata_.attrs["sharding"].startswith("data: documents split into 4 shards"), model.idata_.attrs
fast = gibbsjax.sample(lda.partially_collapsed(4), d, devices=4, **kw)
np.testing.assert_array_equal(model.doc_topic_per_chain_[0], fast.posterior_mean["doc_topic"].values[0])
print("estimator shards")
# the DEFAULT path on 1 and on 4 devices (warm-up "auto": exact sweeps with the native kernels, the
# frozen-count "fast" sweeps without them), and the frozen-count warm-up asked for, on 1 and on 4 devices
default_one = gibbsjax.sample(lda.partially_collapsed(4), d, **kw)
assert default_one.attrs["warmup"] == fast.attrs["warmup"]
same(default_one, fast, lp_exact=False)
np.testing.assert_array_equal(lda.layout.tokens_in_corpus_order(d, default_one.sampler_state["state__z"].values[0]),
                              lda_shard.tokens_in_corpus_order(sd, fast.sampler_state["state__z"].values[0]))
frozen = lda.partially_collapsed(4, warmup="fast")
frozen_one, frozen_four = gibbsjax.sample(frozen, d, **kw), gibbsjax.sample(frozen, d, devices=4, **kw)
assert frozen_one.attrs["warmup"] == frozen_four.attrs["warmup"] and frozen_one.attrs["warmup"].startswith("fast: ")
same(frozen_one, frozen_four, lp_exact=False)
np.testing.assert_array_equal(lda.layout.tokens_in_corpus_order(d, frozen_one.sampler_state["state__z"].values[0]),
                              lda_shard.tokens_in_corpus_order(sd, frozen_four.sampler_state["state__z"].values[0]))
assert not np.array_equal(frozen_one.posterior["topic_share"].values, one.posterior["topic_share"].values)
print("default path identical")
# the command line: --devices 4 with one chain splits the documents; the summary says so; resume continues.
# The corpus above, from a file, with the default kernel's K and run lengths: the programs compiled for
# `fast` above serve the command too (one compilation fewer, about 9 s of CPU)
import contextlib, io, pathlib
from gibbsjax.cli import main
from gibbsjax.corpus import write_ldac
write_ldac(corpus, "c.ldac", "v.txt")
toml = ['[model]', 'name = "lda.partially_collapsed"', 'K = 4', '[data]', 'file = "c.ldac"', 'format = "ldac"',
        'vocab = "v.txt"', '[sampler]', 'num_chains = 1', 'num_warmup = 3', 'num_draws = 6', 'seed = 0']
pathlib.Path("s.toml").write_text(chr(10).join(toml) + chr(10))
for argv in (["run", "s.toml", "--devices", "4", "--no-progress"], ["resume", "s.nc", "--draws", "2", "--no-progress"],
             ["summary", "s.nc"]):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0, argv
summary = buf.getvalue()
assert "devices: data: documents split into 4 shards over 4 cpu devices" in summary, summary
assert "draws per chain: 8" in summary, summary
print("cli shards")
for name, kernel, msg in [("collapsed", lda.collapsed(4), "lda.collapsed cannot split"),
                          ("learned", lda.partially_collapsed(4, learn_alpha="sample"), "learned priors"),
                          ("recording", lda.partially_collapsed(4, record_phi=3), "recording phi or theta")]:
    try:
        gibbsjax.sample(kernel, d, devices=4, **kw)
    except ValueError as e:
        assert msg in str(e), e
        print("refused", name)
"""

_FAST_GRID_WARMUP = _PRELUDE + """
corpus, _, _ = lda_corpus(num_docs=40, num_topics=4, vocab_size=30, doc_length=10, seed=0)
d = lda.data(corpus)
k = lda.partially_collapsed(4, warmup="fast_grid")  # AD-LDA across shards: the same for any device count
kw = dict(seed=5, num_chains=2, num_warmup=4, num_draws=4, progress=False)
four = gibbsjax.sample(k, d, devices=4, shard="data", **kw)
for ndev in (1, 2):
    p = k.shard(d, jax.devices()[:ndev], 4)
    other = gibbsjax.sample(p.kernel, p.data, **kw)
    same(other, four, ("posterior", "sample_stats"))
    np.testing.assert_array_equal(p.means({"doc_topic": other.posterior_mean["doc_topic"].values})["doc_topic"],
                                  four.posterior_mean["doc_topic"].values)
    print("4 shards on", ndev, "device(s) identical")
"""

_ENUMERATION = _PRELUDE + """
from scipy.stats import chisquare
import itertools, sys
sys.path.insert(0, {tests!r})
from test_lda import ALPHA, ETA, K, TINY_DOCS, exact_posterior, _state_counts
from _exact import final_states
from gibbsjax.testing import chi_square_test
corpus = Corpus.from_token_lists(TINY_DOCS, vocab=["a", "b", "c"])
_, probs = exact_posterior(TINY_DOCS, ["a", "b", "c"], K, ALPHA, ETA)
p = lda.partially_collapsed(K, alpha=ALPHA, eta=ETA).shard(lda.data(corpus), jax.devices()[:2])
kernel, sd = p.kernel, p.data
z = final_states(kernel, sd, num_chains=8_000, sweeps=12, seed=7).z
z = np.stack([lda_shard.tokens_in_corpus_order(sd, zi) for zi in z])
result = chi_square_test(_state_counts(z, K), probs)
print("p_value", result.p_value)
assert result.p_value > 1e-4, result
"""


def _run_on_four_devices(script: str, tmp_path) -> str:
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_documents_over_four_devices_give_the_draws_of_one(tmp_path):
    out = _run_on_four_devices(_SAME_AS_ONE_DEVICE, tmp_path)
    assert "z, topic_share, topic_word, doc_topic identical" in out and "resumed identical" in out
    assert out.count("bytes") == 2 and "refused collapsed" in out and "refused learned" in out
    assert "refused recording" in out and "estimator shards" in out and "cli shards" in out
    assert "default path identical" in out


def test_sharded_sampler_passes_the_exact_enumeration_test(tmp_path):
    from pathlib import Path

    out = _run_on_four_devices(_ENUMERATION.format(tests=str(Path(__file__).parent)), tmp_path)
    assert "p_value" in out


@pytest.mark.slow
def test_fast_grid_warmup_depends_on_the_shards_not_the_devices(tmp_path):
    """The opt-in lane-grid warm-up is AD-LDA across shards: its draws depend on the shards, but 4 shards
    give the same draws on 1, 2 or 4 devices (the default warm-up is layout-free: the test above)."""
    out = _run_on_four_devices(_FAST_GRID_WARMUP, tmp_path)
    assert "4 shards on 1 device(s) identical" in out and "4 shards on 2 device(s) identical" in out


_WORKER = """
import sys, warnings
warnings.simplefilter("ignore")
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
pid, port, out, folder = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid)
import numpy as np, gibbsjax
from gibbsjax.corpus import read_uci
from gibbsjax.models import lda
from gibbsjax.models.lda import shard as lda_shard
assert jax.process_count() == 2 and len(jax.devices()) == 2 and len(jax.local_devices()) == 1
mine = read_uci(folder + "/docword.txt", folder + "/vocab.txt", part=(pid, 2))  # this process's documents only
d = lda_shard.from_parts(mine)
kernel = lda.partially_collapsed(4, warmup="exact", z_update="lanes", dirichlet_draw="sparse")  # as the reference's
idata = gibbsjax.sample(kernel, d, devices=2, seed=3, num_chains=1, num_warmup=3, num_draws=6, progress=False)
z = lda_shard.tokens_in_corpus_order(d, idata.sampler_state["state__z"].values[0])
if pid == 0:  # results gathered on process 0
    np.savez(out, topic_share=idata.posterior["topic_share"].values, lp=idata.sample_stats["lp"].values,
             topic_word=idata.posterior_mean["topic_word"].values, doc_topic=idata.posterior_mean["doc_topic"].values,
             z=z)
print(pid, "read", mine.num_docs, "of the documents", mine.doc_names[0], "..", mine.doc_names[-1])
print(pid, idata.attrs["sharding"])
"""


def test_two_processes_give_the_draws_of_one(tmp_path):
    """jax.distributed on this machine: two processes, one CPU device each, a local coordinator; each
    process reads only its part of a UCI file (with empty documents, dropped), and the draws are those
    of one process that read the whole file.

    The workers run on CPU devices (JAX_PLATFORMS=cpu); so does the reference, whatever this process's
    default backend (a GPU on the GPU image), with the same explicit z-update and Dirichlet draw (``"auto"``
    picks per backend): a CPU-against-CPU comparison on any machine."""
    import os
    import socket
    import subprocess
    import sys
    import warnings

    import gibbsjax
    from gibbsjax.corpus import Corpus, EmptyDocumentWarning, read_uci, write_uci

    corpus = _corpus()
    lists = corpus.to_token_lists()
    for at in (0, 7, 25, 26):  # empty documents, also the first: ids shift when they are dropped
        lists.insert(at, [])
    write_uci(Corpus.from_token_lists(lists, vocab=corpus.vocab, empty="keep"), tmp_path / "docword.txt",
              tmp_path / "vocab.txt")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    out = str(tmp_path / "draws.npz")
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONWARNINGS")}
    env["JAX_PLATFORMS"] = "cpu"
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(i), port, out, str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
             for i in (0, 1)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (stdout, stderr) in zip(procs, results):
        assert p.returncode == 0, stderr[-3000:]
        assert "documents split into 2 shards over 2 cpu devices" in stdout
    read = [int(stdout.split(" read ")[1].split()[0]) for stdout, _ in results]
    assert min(read) > 10 and sum(read) == 40, read  # each its share, the empty documents dropped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyDocumentWarning)
        whole = read_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")  # empty documents dropped
    assert whole.num_docs == 40
    np.testing.assert_array_equal(whole.doc_lengths, corpus.doc_lengths)  # (tokens: sorted by word in a file)
    with jax.default_device(jax.devices("cpu")[0]):
        d = lda.data(whole)
        kernel = lda.partially_collapsed(4, warmup="exact", z_update="lanes", dirichlet_draw="sparse")  # CPU's "auto"
        one = gibbsjax.sample(kernel, d, seed=3, num_chains=1, num_warmup=3, num_draws=6, progress=False)
    assert d.words.devices() == {jax.devices("cpu")[0]}  # the reference ran on the CPU
    two = np.load(out)
    np.testing.assert_array_equal(two["topic_share"], one.posterior["topic_share"].values)
    np.testing.assert_array_equal(two["z"], lda.layout.tokens_in_corpus_order(d, one.sampler_state["state__z"].values[0]))
    np.testing.assert_allclose(two["lp"], one.sample_stats["lp"].values, rtol=2e-6)
    for name in ("topic_word", "doc_topic"):
        np.testing.assert_array_equal(two[name], one.posterior_mean[name].values)


def test_config_data_reads_this_process_part(tmp_path):
    """One process: its part is the whole LDA-C file; the sharded run on it gives the draws of lda.data."""
    import gibbsjax
    from gibbsjax.corpus import read_ldac, write_ldac
    from gibbsjax.models.lda import shard as lda_shard
    from gibbsjax.spec import ConfigError

    corpus = _corpus(num_docs=12)
    write_ldac(corpus, tmp_path / "c.ldac", tmp_path / "v.txt")
    section = {"file": "c.ldac", "format": "ldac", "vocab": "v.txt"}
    sd = config_data_by_process(section, tmp_path).data
    assert sd.words.ndim == 3
    whole = lda.data(read_ldac(tmp_path / "c.ldac", tmp_path / "v.txt"))
    kw = dict(seed=2, num_chains=1, num_warmup=2, num_draws=3, progress=False)
    k = lda.partially_collapsed(3, warmup="exact")
    a = gibbsjax.sample(k, sd, devices=1, shard="data", **kw)
    b = gibbsjax.sample(k, whole, **kw)
    np.testing.assert_array_equal(a.posterior["topic_share"].values, b.posterior["topic_share"].values)
    np.testing.assert_array_equal(a.posterior_mean["doc_topic"].values, b.posterior_mean["doc_topic"].values)
    with pytest.raises(ConfigError, match="heldout"):
        config_data_by_process({**section, "heldout": 0.2}, tmp_path)
    with pytest.raises(ConfigError, match="ldac or uci"):
        config_data_by_process({"corpus": "abc"}, tmp_path)


_CLI_WORKER = """
import sys, warnings
warnings.simplefilter("ignore")
from gibbsjax.cli import main
pid = sys.argv[1]
sys.exit(main(["run", "s.toml", "--devices", "2", "--distributed", "--num-processes", "2", "--process-id", pid,
               "--no-progress", "--out", "two.nc"]))
"""


@pytest.mark.slow
def test_command_line_on_two_processes(tmp_path):
    """gibbsjax run --distributed on two processes (a local coordinator): process 0 writes the result,
    the same draws as gibbsjax run on one process."""
    import os
    import socket
    import subprocess
    import sys

    import arviz as az

    from gibbsjax.cli import main
    from gibbsjax.corpus import write_uci

    write_uci(_corpus(), tmp_path / "docword.txt", tmp_path / "vocab.txt")
    toml = ['[model]', 'name = "lda.partially_collapsed"', 'K = 4', 'warmup = "exact"', '[data]',
            'file = "docword.txt"', 'vocab = "vocab.txt"', 'format = "uci"', '[sampler]', 'num_chains = 1',
            'num_warmup = 3', 'num_draws = 6', 'seed = 3']
    (tmp_path / "s.toml").write_text("\n".join(toml) + "\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONWARNINGS")}
    env.update(JAX_PLATFORMS="cpu", JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}", GIBBSJAX_NO_CACHE="1")
    procs = [subprocess.Popen([sys.executable, "-c", _CLI_WORKER, str(i)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path) for i in (0, 1)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (_, stderr) in zip(procs, results):
        assert p.returncode == 0, stderr[-3000:]
    assert "saved two.nc" in results[0][0] and "saved" not in results[1][0]  # process 0 writes and prints
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert main(["run", "s.toml", "--no-progress", "--out", "one.nc"]) == 0
    finally:
        os.chdir(cwd)
    one, two = az.from_netcdf(tmp_path / "one.nc"), az.from_netcdf(tmp_path / "two.nc")
    assert two.attrs["sharding"].startswith("data: documents split into 2 shards over 2 cpu devices")
    np.testing.assert_array_equal(two.posterior["topic_share"].values, one.posterior["topic_share"].values)
    for name in ("topic_word", "doc_topic"):
        np.testing.assert_array_equal(two.posterior_mean[name].values, one.posterior_mean[name].values)


def test_from_parts_refuses_what_it_cannot_shard():
    from gibbsjax.corpus import Corpus
    from gibbsjax.models.lda import shard as lda_shard

    c = Corpus.from_token_lists([["a", "b"], ["c"]])
    with pytest.raises(ValueError, match="holds 2 documents but 3 shards"):
        lda_shard.from_parts(c, None, 3)
    with pytest.raises(ValueError, match="zero-length documents"):
        lda_shard.from_parts(Corpus.from_token_lists([["a"], []], empty="keep"))
    with pytest.raises(ValueError, match="multiple of the number of devices"):
        lda_shard.from_parts(c, jax.devices() * 2, 3)


def test_per_chain_doc_topic_comes_back_in_corpus_order_when_chains_equal_shards():
    """2 chains of a 4-document corpus in 2 shards of 2 rows, K = 2: the means are (2, 2, 2, 2), and
    the chain axis has the sizes of the (shard, row) pair too.  Each chain's rows must come back in
    corpus order on their own (the search for the pair once merged chains with shards, and the
    run failed with conflicting 'chain' sizes)."""
    from gibbsjax.corpus import Corpus

    corpus = Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"], ["a"]])
    plan = lda.partially_collapsed(2).shard(lda.data(corpus), jax.devices()[:1], 2)
    values = np.arange(16.0).reshape(2, 2, 2, 2)  # (chains, shards, rows, topics)
    out = plan.means({"doc_topic": values})["doc_topic"]
    assert out.shape == (2, 4, 2)
    for chain in range(2):
        np.testing.assert_array_equal(out[chain], lda.shard.docs_in_corpus_order(plan.data, values[chain]))
    with pytest.raises(ValueError, match="no \\(2 shards, 2 rows\\) axes"):
        lda.shard.docs_in_corpus_order(plan.data, values, axis=-1)
