"""The sparse exact z-update (``z_update="sparse"``) against ``"lanes"`` (and ``"dense"``) for many topics.

Corpus: synthetic, from the LDA generative process (`gibbsjax.datasets.synthetic.lda_corpus`),
``--docs`` documents of Poisson(``--doc-length``) tokens, V = ``--vocab`` (small by default, so
the K = 10,000 φ table fits a laptop), α = 0.1, η = 0.01, packed by `lda.data` (default lanes).
For each K of ``--topics``:

* each z-update alone (jitted, state of `Kernel.init`: the cost of these updates does not depend
  on how sparse z is), compile seconds apart, the mean of ``--reps`` calls: M tokens/s;
* the φ draw alone (n_kw by one scatter-add, then the draw), each exact Dirichlet draw:
  ``"sparse"`` (the sparse-count sampler, the CPU's choice) and ``"dense"`` (``jax.random.loggamma``,
  the GPU's choice);
* a whole sweep (φ draw with the backend's "auto" draw, then the z-update), tokens/s per update;
* ratios side by side: sparse / lanes for the z-update and for the whole sweep.

Run (CPU, from the project root):
    python benchmarks/lda_sparse.py                                  # K = 100, 1,000, 10,000
    python benchmarks/lda_sparse.py --topics 100 --updates lanes sparse dense --reps 5
Smoke test (tests/test_benchmarks.py): --docs 20 --doc-length 10 --vocab 30 --topics 5 --reps 1
Results are printed and, with ``--json PATH`` (a new file), written as JSON.
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import jax
import numpy as np

from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.models.lda.z_updates import SAMPLE_Z

ALPHA, ETA = 0.1, 0.01


def _timed(fn, *args, reps):
    """(compile seconds, mean seconds per call) of a jitted ``fn``."""
    t = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(reps):
        out = fn(*args)
    jax.block_until_ready(out)
    per_call = (time.perf_counter() - t) / reps
    return max(first - per_call, 0.0), per_call


def bench_k(d, k, args):
    tokens = int(d.mask.sum())
    state = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA, z_update="lanes").init(jax.random.key(0), d)
    key = jax.random.key(1)
    rows = []
    phi_ms = {}
    for draw in args.draws:
        f = jax.jit(functools.partial(lda.sample_log_phi, K=k, eta=ETA, draw=draw))
        compile_s, per = _timed(f, key, state, d, reps=args.reps)
        phi_ms[draw] = 1e3 * per
        rows.append({"K": k, "what": f"phi draw {draw}", "compile_s": compile_s, "ms": 1e3 * per,
                     "Mtok_s": tokens / per / 1e6})
    auto_draw = lda.resolve_dirichlet_draw("auto")
    z_ms = {}
    for name in args.updates:
        f = jax.jit(functools.partial(SAMPLE_Z[name], K=k, alpha=ALPHA))
        compile_s, per = _timed(f, key, state, d, reps=args.reps)
        z_ms[name] = 1e3 * per
        sweep_ms = z_ms[name] + phi_ms.get(auto_draw, 0.0)
        rows.append({"K": k, "what": f"z-update {name}", "compile_s": compile_s, "ms": 1e3 * per,
                     "Mtok_s": tokens / per / 1e6})
        rows.append({"K": k, "what": f"sweep {name} + phi {auto_draw}", "compile_s": 0.0, "ms": sweep_ms,
                     "Mtok_s": tokens / sweep_ms / 1e3})
    if "sparse" in z_ms and "lanes" in z_ms:
        sweep = {n: z_ms[n] + phi_ms.get(auto_draw, 0.0) for n in ("sparse", "lanes")}
        rows.append({"K": k, "what": "speed-up sparse / lanes, z-update", "ratio": z_ms["lanes"] / z_ms["sparse"]})
        rows.append({"K": k, "what": "speed-up sparse / lanes, sweep", "ratio": sweep["lanes"] / sweep["sparse"]})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--doc-length", type=int, default=100)
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--topics", type=int, nargs="+", default=[100, 1000, 10_000])
    p.add_argument("--updates", nargs="+", default=["lanes", "sparse"], choices=["lanes", "sparse", "dense"])
    p.add_argument("--draws", nargs="+", default=["sparse", "dense"], choices=["sparse", "dense"])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json", help="write the rows here as JSON (a new file; never overwrites)")
    args = p.parse_args(argv)
    corpus, _, _ = lda_corpus(args.docs, 20, args.vocab, args.doc_length, alpha=ALPHA, eta=ETA, seed=0)
    d = lda.data(corpus)
    lengths = np.asarray(d.doc_lengths)
    print(f"backend {jax.default_backend()}, {int(d.mask.sum()):,} tokens, {lengths.size} documents "
          f"(mean length {lengths.mean():.0f}, longest {lengths.max()}), V = {args.vocab}, "
          f"grid {d.words.shape[0]} steps x {d.words.shape[1]} lanes")
    rows = []
    for k in args.topics:
        for row in bench_k(d, k, args):
            rows.append(row)
            if "ratio" in row:
                print(f"K = {k:>6}  {row['what']:<40} {row['ratio']:8.2f}x", flush=True)
            else:
                print(f"K = {k:>6}  {row['what']:<40} {row['ms']:10.1f} ms  {row['Mtok_s']:8.3f} M tok/s  "
                      f"(compile {row['compile_s']:.1f} s)", flush=True)
    if args.json:
        with open(args.json, "x") as fh:  # a new file: never overwrites
            json.dump({"jax": jax.__version__, "backend": jax.default_backend(), "tokens": int(d.mask.sum()),
                       "rows": rows}, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
