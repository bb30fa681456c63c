"""LDA side by side: gibbsjax vs tomotopy (1 worker) vs the `lda` package, one run.

Corpus: the Reuters sample shipped by the `lda` package (395 documents, 84,010 tokens,
V = 4,258); 10% of the documents held out for perplexity, the rest trained on.
Same α = 0.1, η = 0.01 and 200 sweeps for every system (tomotopy's hyperparameter
optimisation off).  Reported:

* tokens sampled per second per chain (training tokens × sweeps / sampling time;
  gibbsjax timed on a second call, compiled code reused; its compile time is shown apart);
  gibbsjax's φ is the posterior mean over the last half of the sweeps, and, like the
  peers', the estimate at the final state ("last state");
* held-out perplexity by document completion, computed by gibbsjax's evaluator
  (`gibbsjax.models.lda.heldout_perplexity`) from each system's topic–word matrix φ;
* gibbsjax throughput with 1, 4 and 16 vmapped chains.

Run:   python benchmarks/lda.py [--topics 20 100] [--sweeps 200] [--samplers partially_collapsed uncollapsed]
Needs: pip install -e ".[bench]"   (tomotopy, lda)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# this file is benchmarks/lda.py: keep its folder off the path so `import lda` finds the package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import gibbsjax  # noqa: E402
from gibbsjax.corpus import Corpus  # noqa: E402
from gibbsjax.models.lda import heldout_perplexity  # noqa: E402
from gibbsjax.models import lda as glda  # noqa: E402

ALPHA, ETA = 0.1, 0.01


def reuters():
    import lda.datasets

    X = lda.datasets.load_reuters()
    vocab = lda.datasets.load_reuters_vocab()
    corpus = Corpus.from_dtm(X, vocab=vocab)
    train, test = corpus.split(0.1, seed=0)
    return train, test


def run_gibbsjax(train: Corpus, k: int, sweeps: int, sampler: str, chains: int = 1, seed: int = 1,
                 last_state: bool = False):
    """Sampling time (second call), compile time, and φ: the posterior mean over the
    second half of the sweeps, or with ``last_state`` E[φ | z] at the final state only
    (the estimate tomotopy and `lda` report)."""
    data = glda.data(train)
    kernel = glda.SAMPLERS[sampler](k, alpha=ALPHA, eta=ETA)
    warm = sweeps - 1 if last_state else sweeps // 2
    kwargs = dict(num_chains=chains, num_warmup=warm, num_draws=sweeps - warm, progress=False,
                  chunk_size=sweeps)
    t = time.perf_counter()
    gibbsjax.sample(kernel, data, seed=seed, **kwargs)  # first call: compiles
    first = time.perf_counter() - t
    t = time.perf_counter()
    idata = gibbsjax.sample(kernel, data, seed=seed + 1, **kwargs)
    steady = time.perf_counter() - t
    phi = idata.posterior_mean["topic_word"].values[0]
    return steady, first - steady, phi


def run_tomotopy(train: Corpus, k: int, sweeps: int, seed: int = 1):
    import tomotopy as tp

    mdl = tp.LDAModel(k=k, alpha=ALPHA, eta=ETA, seed=seed)
    mdl.optim_interval = 0
    for doc in train.to_token_lists():
        mdl.add_doc(doc)
    mdl.train(0, workers=1)  # initialise
    t = time.perf_counter()
    mdl.train(sweeps, workers=1)
    elapsed = time.perf_counter() - t
    index = {w: i for i, w in enumerate(train.vocab)}
    phi = np.full((k, train.vocab_size), 1e-12)
    cols = np.array([index[w] for w in mdl.used_vocabs])
    for topic in range(k):
        phi[topic, cols] = mdl.get_topic_word_dist(topic)
    return elapsed, phi / phi.sum(axis=1, keepdims=True)


def run_lda_package(train: Corpus, k: int, sweeps: int, seed: int = 1):
    import logging

    import lda

    logging.getLogger("lda").setLevel(logging.WARNING)
    X = train.to_dtm().astype(np.int64)
    model = lda.LDA(n_topics=k, n_iter=sweeps, alpha=ALPHA, eta=ETA, random_state=seed)
    t = time.perf_counter()
    model.fit(X)
    return time.perf_counter() - t, model.topic_word_


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    p.add_argument("--sweeps", type=int, default=200)
    p.add_argument("--samplers", nargs="+", default=["partially_collapsed", "uncollapsed"])
    p.add_argument("--chains", type=int, nargs="+", default=[1, 4, 16])
    args = p.parse_args()
    train, test = reuters()
    n = train.num_tokens
    print(f"Reuters ({train.num_docs} training docs, {n} tokens, V = {train.vocab_size}; "
          f"{test.num_docs} held out), alpha = {ALPHA}, eta = {ETA}, {args.sweeps} sweeps, 1 chain / worker")
    for k in args.topics:
        print(f"\nK = {k}")
        print(f"{'system':34s} {'time s':>8s} {'M tok/s':>9s} {'perplexity':>11s}  (compile s)")
        results = {}
        t, phi = run_tomotopy(train, k, args.sweeps)
        results["tomotopy 0.14 (1 worker)"] = (t, phi, None)
        t, phi = run_lda_package(train, k, args.sweeps)
        results["lda 3.0 (Cython)"] = (t, phi, None)
        for sampler in args.samplers:
            t, compile_s, phi = run_gibbsjax(train, k, args.sweeps, sampler)
            results[f"gibbsjax {sampler}"] = (t, phi, compile_s)
        t, compile_s, phi = run_gibbsjax(train, k, args.sweeps, args.samplers[0], last_state=True)
        results[f"gibbsjax {args.samplers[0]} (last state)"] = (t, phi, compile_s)
        rate = {}
        perp = {}
        for name, (t, phi, compile_s) in results.items():
            rate[name] = n * args.sweeps / t
            perp[name] = heldout_perplexity(phi, test, alpha=ALPHA, seed=0)
            extra = f"  ({compile_s:.1f})" if compile_s is not None else ""
            print(f"{name:34s} {t:8.2f} {rate[name] / 1e6:9.2f} {perp[name]:11.1f}{extra}")
        ref = "tomotopy 0.14 (1 worker)"
        for name in [r for r in results if r.startswith("gibbsjax")]:
            print(f"ratio tokens/s {name} / tomotopy: {rate[name] / rate[ref]:.3f}; "
                  f"perplexity vs tomotopy: {100 * (perp[name] / perp[ref] - 1):+.1f}%")
        sampler = args.samplers[0]
        base = None
        for c in args.chains:
            t, _, _ = run_gibbsjax(train, k, args.sweeps, sampler, chains=c)
            base = base or t
            print(f"gibbsjax {sampler}, {c:2d} vmapped chains: {t:7.2f} s = {t / base:5.2f}x one chain; "
                  f"{n * args.sweeps * c / t / 1e6:6.2f} M tok/s in all, {n * args.sweeps / t / 1e6:6.2f} per chain")


if __name__ == "__main__":
    main()
