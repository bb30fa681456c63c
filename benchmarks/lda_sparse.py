"""The sparse exact z-update (``z_update="sparse"``) against ``"lanes"`` (and ``"dense"``) for many topics.

Corpus: synthetic, from the LDA generative process (`gibbsjax.datasets.synthetic.lda_corpus`),
``--docs`` documents of Poisson(``--doc-length``) tokens, V = ``--vocab`` (small by default, so
the K = 10,000 φ table fits a laptop), α = 0.1, η = 0.01, packed by `lda.data` (default lanes).
For each K of ``--topics``:

* each z-update alone (jitted, state of `Kernel.init`: the cost of these updates does not depend
  on how sparse z is), compile seconds apart; M tokens/s;
* the φ draw alone (n_kw by one scatter-add, then the draw), each exact Dirichlet draw:
  ``"sparse"`` (the sparse-count sampler, the CPU's choice) and ``"dense"`` (``jax.random.loggamma``,
  the GPU's choice);
* a whole sweep (φ draw with the backend's "auto" draw, then the z-update), tokens/s per update;
* ratios side by side: sparse / lanes for the z-update and for the whole sweep.

Every timing is the fastest of ``--reps`` calls, the candidates called in turns (the machine's
changing load, e.g. other jobs on a shared CPU, then hits them alike).

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


def _compiled(fn, *args):
    """(compile seconds, the jitted ``fn``) after one call."""
    f = jax.jit(fn)
    t = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t, f


def _interleaved(calls, reps):
    """The fastest of ``reps`` calls of each of ``calls`` (name -> thunk), called in turns, so a
    shared machine's changing load hits every candidate alike: {name: seconds}."""
    best = {name: float("inf") for name in calls}
    for _ in range(reps):
        for name, thunk in calls.items():
            t = time.perf_counter()
            jax.block_until_ready(thunk())
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def bench_k(d, k, args):
    tokens = int(d.mask.sum())
    state = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA, z_update="lanes").init(jax.random.key(0), d)
    key = jax.random.key(1)
    compile_s, calls = {}, {}
    for draw in args.draws:
        name = f"phi draw {draw}"
        compile_s[name], f = _compiled(functools.partial(lda.sample_log_phi, K=k, eta=ETA, draw=draw), key, state, d)
        calls[name] = functools.partial(f, key, state, d)
    for update in args.updates:
        name = f"z-update {update}"
        compile_s[name], f = _compiled(functools.partial(SAMPLE_Z[update], K=k, alpha=ALPHA), key, state, d)
        calls[name] = functools.partial(f, key, state, d)
    best = _interleaved(calls, args.reps)
    rows = [{"K": k, "what": name, "compile_s": compile_s[name], "ms": 1e3 * sec, "Mtok_s": tokens / sec / 1e6}
            for name, sec in best.items()]
    auto_draw = lda.resolve_dirichlet_draw("auto")
    phi = best.get(f"phi draw {auto_draw}", 0.0)
    for update in args.updates:
        sec = best[f"z-update {update}"] + phi
        rows.append({"K": k, "what": f"sweep {update} + phi {auto_draw}", "compile_s": 0.0, "ms": 1e3 * sec,
                     "Mtok_s": tokens / sec / 1e6})
    if "sparse" in args.updates and "lanes" in args.updates:
        z = {u: best[f"z-update {u}"] for u in ("sparse", "lanes")}
        rows.append({"K": k, "what": "speed-up sparse / lanes, z-update", "ratio": z["lanes"] / z["sparse"]})
        rows.append({"K": k, "what": "speed-up sparse / lanes, sweep", "ratio": (z["lanes"] + phi) / (z["sparse"] + phi)})
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
    p.add_argument("--lanes", type=int, help="lanes of the packed grid (default: lda.data's, about N / longest "
                   "document); more lanes, fewer steps S: the sparse update's work per token is S")
    p.add_argument("--json", help="write the rows here as JSON (a new file; never overwrites)")
    args = p.parse_args(argv)
    corpus, _, _ = lda_corpus(args.docs, 20, args.vocab, args.doc_length, alpha=ALPHA, eta=ETA, seed=0)
    d = lda.data(corpus, num_lanes=args.lanes)
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
