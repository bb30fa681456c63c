"""The default LDA grid (`lda.default_lanes`) against ⌈N / longest document⌉ lanes, side by side.

    JAX_PLATFORMS=cpu python benchmarks/lda_lanes.py [--topics 20 100] [--corpus synthetic stdlib]

For each corpus and K: both grids' shapes and slots per token, and the default sampler's tokens
per second on each (one chain, 10 sweeps per call, compile excluded, best of ``--reps`` calls,
the two grids interleaved).  The draws do not depend on the grid, only the work per sweep.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import gibbsjax
from gibbsjax.datasets import stdlib_docs
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda


def corpus_of(name: str, k: int):
    if name == "stdlib":
        return stdlib_docs()
    return lda_corpus(num_docs=10_000, num_topics=k, vocab_size=5_000, doc_length=100, seed=0)[0]


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    p.add_argument("--corpus", nargs="+", default=["synthetic", "stdlib"], choices=["synthetic", "stdlib"])
    p.add_argument("--sweeps", type=int, default=10)
    p.add_argument("--reps", type=int, default=4)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for name in args.corpus:
        for k in args.topics:
            corpus = corpus_of(name, k)
            n = corpus.num_tokens
            t = time.perf_counter()
            grids = {"default": lda.data(corpus)}
            pack_s = time.perf_counter() - t
            widest = min(corpus.num_docs, math.ceil(n / int(corpus.doc_lengths.max())))
            grids["N / longest"] = lda.data(corpus, num_lanes=widest)
            kernel = lda.partially_collapsed(k)
            best = {}
            for d in grids.values():  # compile
                gibbsjax.sample(kernel, d, num_chains=1, num_warmup=0, num_draws=args.sweeps, progress=False,
                                log_likelihood=False)
            for rep in range(args.reps):
                for label, d in grids.items():
                    t = time.perf_counter()
                    gibbsjax.sample(kernel, d, num_chains=1, num_warmup=0, num_draws=args.sweeps, progress=False,
                                    seed=rep, log_likelihood=False)
                    best[label] = min(best.get(label, math.inf), time.perf_counter() - t)
            for label, d in grids.items():
                s, r = d.words.shape
                row = {"corpus": name, "K": k, "grid": label, "steps": s, "lanes": r, "slots_per_token": s * r / n,
                       "Mtok_s": args.sweeps * n / best[label] / 1e6}
                rows.append(row)
                print(f"{name:9s} K={k:<4d} {label:12s} {s:5d} x {r:<7,d} {s * r / n:.2f} slots/token  "
                      f"{row['Mtok_s']:.2f} M tokens/s", flush=True)
            print(f"{name:9s} K={k:<4d} ratio default / (N / longest): "
                  f"{rows[-2]['Mtok_s'] / rows[-1]['Mtok_s']:.2f}x  (packing with the search: {pack_s:.2f} s)")
    return rows


if __name__ == "__main__":
    main()
