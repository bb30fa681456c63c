"""LDA with learned vs fixed priors: held-out perplexity on Reuters and stdlib_docs.

For every corpus the same documents are held out (``--heldout``, split seed 0) and every
configuration runs the same chains, seeds and sweeps through `gibbsjax.sample` (the
default partially collapsed sampler with its fast warm-up), then the same post-processing
as `gibbsjax run` (`gibbsjax.specs.lda.postprocess`): topics aligned across chains,
estimates from the reference chain (the highest mean lp), and held-out perplexity by
document completion (`gibbsjax.models.lda.heldout_perplexity`, same observed/scored halves,
same θ inference seeds), φ being the posterior mean E[φ | z, w] smoothed with the run's η
and the completion using the run's α (its posterior mean when learned).

Configurations:
  fixed          α = 0.1, η = 0.01 (the factory defaults)
  fixed-GS       α = 50/K, η = 0.1 (Griffiths & Steyvers 2004's heuristic)
  sample-eta     α = 0.1 fixed, η sampled (gamma(1, 1) hyperprior), starting at 0.01
  sample-sym     α (one) and η sampled, gamma(1, 1) hyperpriors, starting at 0.1 / 0.01
  sample-asym    α_k per topic and η sampled, gamma(1, 1) hyperpriors
  minka-asym     α_k by Minka's fixed point during warm-up only (tomotopy's behaviour), η = 0.01

Run:   python benchmarks/lda_priors.py                      (about 7 minutes on a loaded 2-core CPU)
       python benchmarks/lda_priors.py --corpora stdlib_docs:10 --seeds 0 --warmup 50 --draws 50
Needs: the `lda` package (`pip install -e ".[bench]"`) for the Reuters corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

# this file lives in benchmarks/: keep its folder off the path so `import lda` finds the package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

CONFIGS = {
    "fixed": lambda k: dict(alpha=0.1, eta=0.01),
    "fixed-GS": lambda k: dict(alpha=50.0 / k, eta=0.1),
    "sample-eta": lambda k: dict(alpha=0.1, eta=0.01, learn_eta=True),
    "sample-sym": lambda k: dict(alpha=0.1, eta=0.01, learn_alpha="sample", learn_eta=True),
    "sample-asym": lambda k: dict(alpha=0.1, eta=0.01, learn_alpha="sample", asymmetric_alpha=True, learn_eta=True),
    "minka-asym": lambda k: dict(alpha=0.1, eta=0.01, learn_alpha="minka", asymmetric_alpha=True),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpora", nargs="+", default=["reuters:20", "stdlib_docs:20"],
                   help="CORPUS:K with CORPUS reuters or stdlib_docs (default: reuters:20 stdlib_docs:20)")
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--warmup", type=int, default=150)
    p.add_argument("--draws", type=int, default=150)
    p.add_argument("--heldout", type=float, default=0.1, help="fraction of documents held out (0.1)")
    return p.parse_args(argv)


def load(name: str, heldout: float):
    from gibbsjax.corpus import Corpus

    if name == "reuters":
        import lda.datasets

        corpus = Corpus.from_dtm(lda.datasets.load_reuters(), vocab=lda.datasets.load_reuters_vocab())
        label = "Reuters sample of the lda package"
    elif name == "stdlib_docs":
        from gibbsjax.datasets import stdlib_docs

        corpus, label = stdlib_docs(), "stdlib_docs (gibbsjax.datasets)"
    else:
        raise SystemExit(f"unknown corpus {name!r}: reuters or stdlib_docs")
    train, test = corpus.split(heldout, seed=0)
    return label, train, test


def run_one(config: str, k: int, train, test, seed: int, args) -> dict:
    import gibbsjax
    from gibbsjax.models import lda
    from gibbsjax.specs.lda import postprocess

    options = CONFIGS[config](k)
    kernel = lda.partially_collapsed(k, **options)
    d = lda.data(train)
    start = time.perf_counter()
    idata = gibbsjax.sample(kernel, d, seed=seed, num_chains=args.chains, num_warmup=args.warmup,
                            num_draws=args.draws, progress=False, log_likelihood=False)
    seconds = time.perf_counter() - start
    extras = {"corpus": train, "heldout": test, "hyperparameters": {"alpha": options["alpha"]}, "chains": "best"}
    out = postprocess(idata, kernel, d, extras)
    attrs = out.topics.attrs
    row = {"perplexity": float(attrs["heldout_perplexity"]), "seconds": seconds}
    if "learned_alpha" in attrs:
        row["alpha"] = json.loads(attrs["learned_alpha"])
    if "learned_eta" in attrs:
        row["eta"] = json.loads(attrs["learned_eta"])
    for name in ("alpha", "eta"):
        if name in out.posterior:
            rhat = gibbsjax.summary(out, var_names=[name], include_lp=False)["r_hat"]
            row[f"rhat_{name}"] = float(rhat.max())
    return row


def describe(row: dict) -> str:
    import numpy as np

    parts = []
    if "alpha" in row:
        a = np.atleast_1d(row["alpha"])
        text = f"{a[0]:.3g}" if a.size == 1 else f"sum {a.sum():.3g} (min {a.min():.3g}, max {a.max():.3g})"
        parts.append(f"alpha {text}" + (f" R-hat {row['rhat_alpha']:.2f}" if "rhat_alpha" in row else ""))
    if "eta" in row:
        parts.append(f"eta {row['eta']:.3g}" + (f" R-hat {row['rhat_eta']:.2f}" if "rhat_eta" in row else ""))
    return "; ".join(parts)


def main(argv=None):
    args = parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; {os.cpu_count()} CPUs, load average {load_avg:.1f} at start; "
          f"jax {jax.__version__} on {jax.default_backend()}; Python {platform.python_version()}")
    print(f"partially_collapsed (fast warm-up), {args.chains} chains x ({args.warmup} warm-up + {args.draws} draws), "
          f"seeds {args.seeds}; estimates from the reference chain; document completion on the held-out documents")
    for spec in args.corpora:
        name, _, k = spec.partition(":")
        k = int(k or 20)
        label, train, test = load(name, args.heldout)
        print(f"\n{label}, K = {k}: {train.num_docs} training docs, {train.num_tokens} tokens, "
              f"V = {train.vocab_size}; {test.num_docs} held-out docs")
        print(f"{'config':<12} {'perplexity per seed':>24} {'mean':>8} {'wall s':>7}  learned (seed {args.seeds[0]})")
        for config in args.configs:
            rows = [run_one(config, k, train, test, seed, args) for seed in args.seeds]
            ppl = [r["perplexity"] for r in rows]
            per_seed = " ".join(f"{x:.1f}" for x in ppl)
            print(f"{config:<12} {per_seed:>24} {sum(ppl) / len(ppl):8.1f} "
                  f"{sum(r['seconds'] for r in rows) / len(rows):7.1f}  {describe(rows[0])}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
