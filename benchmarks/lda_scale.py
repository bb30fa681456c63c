"""How LDA cost and memory grow with the corpus and the number of chains (CPU or GPU, unchanged).

Synthetic corpora from the LDA generative process (`gibbsjax.datasets.synthetic.lda_corpus`,
K = 20, V = 2,000, documents of ~100 tokens) at multiples of a base size (``--scales``;
1 = 1,000 documents, ~100k tokens), one chain each, and several chains (``--chains``) on
the corpus at ``--chains-at``.  Corpora are generated here and saved; each configuration
runs in a fresh subprocess, so its memory is its own.

Time: seconds per sweep through `gibbsjax.sample` (second call: compiled code reused), and
tokens per second in all and per chain.

Memory, in bytes per token (grid slots include the packing's padding, a few percent):

* host, measured (Linux: the peak resident set VmHWM, reset through /proc/self/clear_refs
  before each phase): ``corpus`` is what loading the corpus added; ``pack`` the peak
  above that while `lda.data` packs it (the grid it keeps included); ``sample`` the peak
  above the state before the timed `gibbsjax.sample` call, per chain.  On a CPU the JAX
  device is the host, so ``sample`` holds the sampler's device buffers too;
* device, computed by XLA for one vmapped sweep over all chains
  (`compiled.memory_analysis()`: the buffers XLA assigns, not an estimate of ours):
  ``data`` (the packed corpus: argument bytes not in the state), ``state`` (z and log φ of
  every chain) and ``temp`` (the sweep's temporaries: uniforms, new topics, counts), the
  last two per chain;
* device, measured where the backend reports it (`device.memory_stats()`, GPUs): the peak
  bytes in use.

The slopes between the smallest and largest corpus (per extra token) and between one
and several chains (per extra token per extra chain) remove the fixed costs (compiled
code, the K × V topic tables, JAX itself).  Expected: the corpus (4-byte word ids, and a
9-byte grid slot: word, document, mask) plus, per chain, an int32 topic per token, with
the sweep's per-token temporaries on top.

Devices (``--devices 1 2 4``): one chain of the partially collapsed sampler with the documents
sharded over N devices (``gibbsjax.sample(..., devices=N)``, `gibbsjax.models.lda.shard`) on
the corpus at ``--chains-at``: seconds per sweep, tokens per second, the bytes XLA assigns per
device for one sweep (`memory_analysis()` of the compiled sharded sweep: arguments, outputs and
temporaries) and the bytes exchanged between devices per sweep (the collectives of the
compiled sweep, `lda_shard.bytes_exchanged_per_sweep`).  On a CPU the devices are forced host
devices (``XLA_FLAGS=--xla_force_host_platform_device_count=N``: they share the cores, so
tokens/s does not grow there; the figures that matter are the per-device bytes and the
exchange); on a GPU machine, the GPUs.  ``--devices`` alone skips the other tables.

Run:  python benchmarks/lda_scale.py [--scales 1 10 100] [--chains 1 4 16] [--chains-at 10]
                                     [--sweeps 20] [--sampler partially_collapsed] [--option KEY=VALUE]
                                     [--devices 1 2 4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import gc, json, os, sys, time


def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


import jax, jax.numpy as jnp, numpy as np
import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.models import lda

path, chains, sweeps, sampler, options = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
jnp.zeros(1).block_until_ready()  # the backend is up before the baseline
gc.collect()
rss0 = status("VmRSS")
resettable = reset_peak()
saved = np.load(path)
corpus = Corpus(saved["tokens"], saved["offsets"], tuple(str(i) for i in range(int(saved["vocab_size"]))))
del saved
gc.collect()
rss_corpus = status("VmRSS")
reset_peak()
data = lda.data(corpus)
jax.block_until_ready(data)
pack_peak = status("VmHWM")
rss_data = status("VmRSS")

kernel = lda.SAMPLERS[sampler](20, **options)
kw = dict(num_chains=chains, num_warmup=0, num_draws=sweeps, chunk_size=sweeps, progress=False,
          log_likelihood=False)  # the sampler alone, as the peers
gibbsjax.sample(kernel, data, seed=0, **kw)  # compiles
gc.collect()
rss_before = status("VmRSS")
reset_peak()
t = time.perf_counter()
gibbsjax.sample(kernel, data, seed=1, **kw)
dt = time.perf_counter() - t
sample_peak = status("VmHWM")

# XLA's buffer assignment for one vmapped sweep of all chains
keys = jax.random.split(jax.random.key(0), chains)
states = jax.eval_shape(jax.vmap(kernel.init, (0, None)), keys, data)
step = jax.jit(jax.vmap(kernel.step, (0, 0, None)))
analysis = step.lower(keys, states, data).compile().memory_analysis()
nbytes = lambda tree: sum(int(np.prod(x.shape)) * x.dtype.itemsize for x in jax.tree_util.tree_leaves(tree))
state_bytes = nbytes(states)
data_bytes = nbytes(data)
dev = jax.devices()[0]
stats = dev.memory_stats() if hasattr(dev, "memory_stats") else None
print(json.dumps({
    "tokens": corpus.num_tokens, "grid": list(data.words.shape), "chains": chains, "sweep_s": dt / sweeps,
    "resettable": resettable,
    "corpus_b": rss_corpus - rss0, "pack_b": pack_peak - rss_corpus, "sample_b": sample_peak - rss_before,
    "xla_data_b": data_bytes, "xla_state_b": state_bytes,
    "xla_temp_b": int(getattr(analysis, "temp_size_in_bytes", 0) or 0) if analysis is not None else -1,
    "device_peak_b": (stats or {}).get("peak_bytes_in_use", 0), "platform": dev.platform,
    "device_kind": dev.device_kind, "jax": jax.__version__,
}))
"""

DEVICES_CHILD = r"""
import json, sys, time
import jax, jax.numpy as jnp, numpy as np
import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import shard as lda_shard

path, devices, sweeps, options = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
saved = np.load(path)
corpus = Corpus(saved["tokens"], saved["offsets"], tuple(str(i) for i in range(int(saved["vocab_size"]))))
data = lda.data(corpus)
kernel = lda.partially_collapsed(20, **options)
kw = dict(num_chains=1, num_warmup=0, num_draws=sweeps, chunk_size=sweeps, progress=False, devices=devices,
          shard="data")
gibbsjax.sample(kernel, data, seed=0, **kw)  # compiles
t = time.perf_counter()
idata = gibbsjax.sample(kernel, data, seed=1, **kw)
dt = time.perf_counter() - t
plan = kernel.shard(data, jax.devices()[:devices])
exchanged = lda_shard.bytes_exchanged_per_sweep(plan)
key = jax.random.key(0)
state = jax.eval_shape(plan.kernel.init, key, plan.data)
analysis = jax.jit(plan.kernel.step).lower(key, state, plan.data).compile().memory_analysis()
per_device = sum(int(getattr(analysis, f, 0) or 0) for f in
                 ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes")) if analysis else -1
dev = jax.devices()[0]
print(json.dumps({"tokens": corpus.num_tokens, "devices": devices, "sweep_s": dt / sweeps,
                  "grid": list(plan.data.words.shape), "sharding": idata.attrs["sharding"],
                  "device_b": per_device, "exchanged": exchanged, "platform": dev.platform,
                  "device_kind": dev.device_kind, "jax": jax.__version__}))
"""

BASE_DOCS = 1000
K, V = 20, 2000


def corpus_file(scale: int, folder: str) -> str:
    """Generate the corpus in this process and save it, so the child's memory is the sampler's."""
    import numpy as np

    from gibbsjax.datasets.synthetic import lda_corpus

    path = os.path.join(folder, f"corpus_{scale}.npz")
    if not os.path.exists(path):
        corpus, _, _ = lda_corpus(num_docs=BASE_DOCS * scale, num_topics=K, vocab_size=V,
                                  doc_length=100, seed=scale)
        np.savez(path, tokens=corpus.tokens, offsets=corpus.doc_offsets, vocab_size=corpus.vocab_size)
    return path


def run(path: str, chains: int, sweeps: int, sampler: str, options: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, path, str(chains), str(sweeps), sampler, json.dumps(options)],
                         capture_output=True, text=True, env=dict(os.environ), timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_devices(path: str, devices: int, sweeps: int, options: dict) -> dict:
    env = dict(os.environ)
    if "cpu" in env.get("JAX_PLATFORMS", "cpu") and not _has_gpu():
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={devices}").strip()
    out = subprocess.run([sys.executable, "-c", DEVICES_CHILD, path, str(devices), str(sweeps), json.dumps(options)],
                         capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _has_gpu() -> bool:
    import jax

    return jax.default_backend() == "gpu"


def devices_table(path: str, devices, sweeps: int, options: dict) -> None:
    rows = [run_devices(path, n, sweeps, options) for n in sorted(set(devices))]
    first = rows[0]
    print(f"\ndocuments sharded over devices: {first['tokens']} tokens, one chain, K = {K}, V = {V}, "
          f"{first['platform']} ({first['device_kind']}), jax {first['jax']}")
    print(f"{'devices':>7s} {'shards x S x R':>16s} {'s/sweep':>8s} {'M tok/s':>8s} {'MB/device':>10s} "
          f"{'exchanged B/sweep':>18s} {'B/kept draw':>12s}")
    for r in rows:
        grid = " x ".join(str(x) for x in r["grid"])
        print(f"{r['devices']:>7d} {grid:>16s} {r['sweep_s']:>8.4f} {r['tokens'] / r['sweep_s'] / 1e6:>8.2f} "
              f"{r['device_b'] / 2**20:>10.2f} {r['exchanged']['sweep']:>18d} {r['exchanged']['record']:>12d}")
    print(f"(K x V x 4 = {K * V * 4} bytes: the count table summed across devices each sweep)")


def parse_options(items) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--option needs KEY=VALUE, got {item!r}")
        for cast in (int, float):
            try:
                value = cast(value)
                break
            except ValueError:
                pass
        else:
            value = {"true": True, "false": False, "none": None}.get(value.lower(), value)
        out[key] = value
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    p.add_argument("--chains", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--chains-at", type=int, default=None,
                   help="scale of the corpus for the chain rows (default: the second-smallest scale)")
    p.add_argument("--sweeps", type=int, default=20)
    p.add_argument("--sampler", default="partially_collapsed")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="keyword argument for the sampler factory (repeatable), e.g. z_update=dense")
    p.add_argument("--devices", type=int, nargs="+", default=None,
                   help="device counts for the documents-sharded table (e.g. 1 2 4); alone, only that table")
    args = p.parse_args()
    options = parse_options(args.option)
    scales = sorted(set(args.scales))
    chains_at = args.chains_at or (scales[1] if len(scales) > 1 else scales[0])
    if args.devices:
        folder = tempfile.mkdtemp(prefix="gibbsjax-scale-")
        devices_table(corpus_file(chains_at, folder), args.devices, args.sweeps, options)
        if not any(a in ("--scales", "--chains") or a.startswith(("--scales=", "--chains=")) for a in sys.argv[1:]):
            return
    print(f"sampler {args.sampler} {options or ''}, K = {K}, V = {V}, {args.sweeps} timed sweeps per configuration")
    folder = tempfile.mkdtemp(prefix="gibbsjax-scale-")
    rows = [run(corpus_file(s, folder), 1, args.sweeps, args.sampler, options) for s in scales]
    chain_rows = [run(corpus_file(chains_at, folder), c, args.sweeps, args.sampler, options)
                  for c in sorted(set(args.chains)) if c != 1 or chains_at not in scales]
    base = next((r for r in rows if r["tokens"] == chain_rows[0]["tokens"]), None) if chain_rows else None
    first = rows[0]
    print(f"platform: {first['platform']} ({first['device_kind']}), jax {first['jax']}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    if not first["resettable"]:
        print("(peak RSS could not be reset here: host figures are cumulative peaks)")
    print("\n                                         |  host, measured, bytes per token       | device (XLA), bytes per token")
    print(f"{'tokens':>9s} {'grid S x R':>13s} {'chains':>6s} {'s/sweep':>8s} {'M tok/s':>8s} | "
          f"{'corpus':>7s} {'pack':>7s} {'sample/chain':>12s} | {'data':>6s} {'state/ch':>8s} {'temp/ch':>8s} "
          f"{'peak MB':>8s}")
    all_rows = rows + [r for r in chain_rows if r is not base]
    for r in all_rows:
        n, c = r["tokens"], r["chains"]
        grid = f"{r['grid'][0]} x {r['grid'][1]}"
        print(f"{n:>9d} {grid:>13s} {c:>6d} {r['sweep_s']:>8.4f} {n * c / r['sweep_s'] / 1e6:>8.2f} | "
              f"{r['corpus_b'] / n:>7.1f} {r['pack_b'] / n:>7.1f} {r['sample_b'] / n / c:>12.1f} | "
              f"{r['xla_data_b'] / n:>6.1f} {r['xla_state_b'] / n / c:>8.1f} {r['xla_temp_b'] / n / c:>8.1f} "
              f"{r['device_peak_b'] / 2**20:>8.0f}")

    def slope(a, b, key, per_chain=False):
        d = (b[key] - a[key]) / ((b["tokens"] - a["tokens"]) if not per_chain else a["tokens"] * (b["chains"] - a["chains"]))
        return f"{d:.1f}"

    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        print(f"\n{b['tokens'] / a['tokens']:.0f}x tokens: {b['sweep_s'] / a['sweep_s']:.1f}x time per sweep")
        print("bytes per extra token (one chain): host corpus " + slope(a, b, "corpus_b") + ", pack "
              + slope(a, b, "pack_b") + ", sample " + slope(a, b, "sample_b") + "; XLA data "
              + slope(a, b, "xla_data_b") + ", state " + slope(a, b, "xla_state_b") + ", temp "
              + slope(a, b, "xla_temp_b")
              + (", device peak " + slope(a, b, "device_peak_b") if b["device_peak_b"] else ""))
    one = base or (chain_rows[0] if chain_rows else None)
    for r in chain_rows:
        if r is one:
            continue
        print(f"{r['chains']} chains cost {r['sweep_s'] / one['sweep_s']:.2f}x one chain per sweep; "
              f"bytes per token per extra chain: host sample " + slope(one, r, "sample_b", True)
              + ", XLA state " + slope(one, r, "xla_state_b", True) + ", temp " + slope(one, r, "xla_temp_b", True)
              + (", device peak " + slope(one, r, "device_peak_b", True) if r["device_peak_b"] else ""))


if __name__ == "__main__":
    main()
