"""How LDA cost grows with the corpus and the number of chains (CPU or GPU, unchanged).

Synthetic corpora from the LDA generative process (`gibbsjax.datasets.synthetic.lda_corpus`,
K = 20, V = 2,000, documents of ~100 tokens) at 1x, 10x, 100x a base size (100k tokens:
up to ~10 M tokens), and 1, 4, 16 chains on the base corpus.  Corpora are generated here
and saved; each configuration loads one in a fresh subprocess so peak memory is its own: host peak RSS, and on a GPU the device's
peak bytes in use.  Reported: seconds per sweep (steady state, compiled code reused),
tokens sampled per second in all and per chain, peak memory, and memory per token per
chain beyond the corpus-free baseline — expected to be dominated by one int32 per token
per chain plus the packed corpus.

Run:  python benchmarks/lda_scale.py [--scales 1 10 100] [--chains 1 4 16] [--sweeps 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, os, resource, sys, time
os.environ.setdefault("JAX_PLATFORMS", os.environ.get("JAX_PLATFORMS", ""))
import jax, numpy as np
import gibbsjax
from gibbsjax.corpus import Corpus
from gibbsjax.models import lda
path, chains, sweeps, sampler = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
saved = np.load(path)
corpus = Corpus(saved["tokens"], saved["offsets"], tuple(str(i) for i in range(int(saved["vocab_size"]))))
del saved
data = lda.data(corpus)
kernel = lda.SAMPLERS[sampler](20)
kw = dict(num_chains=chains, num_warmup=0, num_draws=sweeps, chunk_size=sweeps, progress=False)
gibbsjax.sample(kernel, data, seed=0, **kw)
t = time.perf_counter()
gibbsjax.sample(kernel, data, seed=1, **kw)
dt = time.perf_counter() - t
dev = jax.devices()[0]
stats = dev.memory_stats() if hasattr(dev, "memory_stats") else None
print(json.dumps({
    "tokens": corpus.num_tokens, "grid": list(data.words.shape), "chains": chains,
    "sweep_s": dt / sweeps, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "device_peak_mb": (stats or {}).get("peak_bytes_in_use", 0) / 2**20, "platform": dev.platform,
}))
"""


BASE_DOCS = 1000


def corpus_file(scale: int, folder: str) -> str:
    """Generate the corpus in this process and save it, so the child's peak memory is the sampler's."""
    import numpy as np

    from gibbsjax.datasets.synthetic import lda_corpus

    path = os.path.join(folder, f"corpus_{scale}.npz")
    if not os.path.exists(path):
        corpus, _, _ = lda_corpus(num_docs=BASE_DOCS * scale, num_topics=20, vocab_size=2000,
                                  doc_length=100, seed=scale)
        np.savez(path, tokens=corpus.tokens, offsets=corpus.doc_offsets, vocab_size=corpus.vocab_size)
    return path


def run(path: str, chains: int, sweeps: int, sampler: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, path, str(chains), str(sweeps), sampler],
                         capture_output=True, text=True, env=dict(os.environ), timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    p.add_argument("--chains", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--sweeps", type=int, default=20)
    p.add_argument("--sampler", default="partially_collapsed")
    args = p.parse_args()
    print(f"sampler {args.sampler}, K = 20, V = 2000, {args.sweeps} timed sweeps per configuration")
    header = f"{'tokens':>10s} {'grid S x R':>14s} {'chains':>6s} {'s/sweep':>9s} {'M tok/s':>9s} " \
             f"{'per chain':>9s} {'peak RSS MB':>11s} {'device MB':>9s}"
    print(header)
    import tempfile

    folder = tempfile.mkdtemp(prefix="gibbsjax-scale-")
    rows = []
    for scale in args.scales:
        rows.append(run(corpus_file(scale, folder), 1, args.sweeps, args.sampler))
    for chains in args.chains:
        if chains != 1:
            rows.append(run(corpus_file(args.scales[0], folder), chains, args.sweeps, args.sampler))
    for r in rows:
        rate = r["tokens"] * r["chains"] / r["sweep_s"]
        grid = f"{r['grid'][0]} x {r['grid'][1]}"
        print(f"{r['tokens']:>10d} {grid:>14s} {r['chains']:>6d} {r['sweep_s']:>9.4f} {rate / 1e6:>9.2f} "
              f"{rate / r['chains'] / 1e6:>9.2f} {r['rss_mb']:>11.0f} {r['device_peak_mb']:>9.0f}")
    one = [r for r in rows if r["chains"] == 1]
    if len(one) > 1:
        a, b = one[0], one[-1]
        print(f"\ncost ratio {b['tokens'] / a['tokens']:.0f}x tokens: {b['sweep_s'] / a['sweep_s']:.1f}x time per sweep; "
              f"memory {(b['rss_mb'] - a['rss_mb']) * 2**20 / (b['tokens'] - a['tokens']):.1f} bytes per extra token")
    base = one[0]
    for r in rows:
        if r["chains"] > 1:
            print(f"{r['chains']} chains cost {r['sweep_s'] / base['sweep_s']:.2f}x one chain per sweep")
    print(f"platform: {rows[0]['platform']}")


if __name__ == "__main__":
    main()
