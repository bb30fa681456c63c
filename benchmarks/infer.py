"""Held-out inference (``lda.infer_doc_topics``: perplexity, ``transform``, ``choose_num_topics``):
the lanes z-update against the XLA scan, side by side in one process.

Both run the same exact conditional with the same uniforms (θ equal up to float32 summation
order); ``infer_doc_topics`` picks by backend (:func:`gibbsjax.models.lda.inference.infer_z_update`:
lanes on a CPU).  Printed: compile seconds, the best of ``--reps`` timed calls, their ratio, and
the largest difference of θ.

Run:   python benchmarks/infer.py [--docs 1000] [--topics 20] [--vocab 2000] [--sweeps 100] [--reps 3]
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models.lda import data, inference


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--topics", type=int, default=20)
    p.add_argument("--vocab", type=int, default=2000)
    p.add_argument("--doc-length", type=int, default=100)
    p.add_argument("--sweeps", type=int, default=100)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args(argv)
    corpus, _, _ = lda_corpus(num_docs=args.docs, num_topics=args.topics, vocab_size=args.vocab,
                              doc_length=args.doc_length, seed=5)
    d, k = data(corpus), args.topics
    log_phi = jax.numpy.log(np.random.default_rng(0).dirichlet(np.full(args.vocab, 0.1), k).astype(np.float32))
    tokens = int(d.mask.sum())
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}; {tokens:,} tokens, K = {k}, V = {args.vocab}, "
          f"{args.sweeps} sweeps; infer_doc_topics runs {inference.infer_z_update()!r} here")
    out = {}
    for z_update in ("dense", "lanes"):
        kw = dict(K=k, alpha=0.1, num_sweeps=args.sweeps, num_burn=args.sweeps // 2, z_update=z_update)
        t = time.perf_counter()
        compiled = inference._infer.lower(jax.random.key(0), log_phi, d, **kw).compile()
        compile_s = time.perf_counter() - t
        best = float("inf")
        for i in range(args.reps):
            t = time.perf_counter()
            theta = jax.block_until_ready(compiled(jax.random.key(0), log_phi, d, alpha=0.1))
            best = min(best, time.perf_counter() - t)
        out[z_update] = {"compile_s": compile_s, "seconds": best, "theta": np.asarray(theta)}
        print(f"  {z_update:6s} compile {compile_s:5.2f} s   {best:7.3f} s per call   "
              f"{tokens * args.sweeps / best / 1e6:7.1f} M tokens/s", flush=True)
    ratio = out["dense"]["seconds"] / out["lanes"]["seconds"]
    gap = float(np.abs(out["dense"]["theta"] - out["lanes"]["theta"]).max())
    print(f"lanes {ratio:.1f}x the speed of the XLA scan; largest |θ difference| {gap:.3g} (the same key)")
    return {"ratio": ratio, "max_theta_gap": gap, **{z: {k_: v for k_, v in r.items() if k_ != "theta"}
                                                        for z, r in out.items()}}


if __name__ == "__main__":
    main()
