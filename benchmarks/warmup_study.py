"""Does the fast warm-up cause chain disagreement, and does it pay on this machine?

LDA's partially collapsed sampler (the default) has three warm-ups:

* ``warmup="fast"`` (the CPU default, ``"auto"``): approximate collapsed sweeps
  from the word-topic counts frozen at the start of each sweep
  (``sample_z_collapsed_frozen``: each document's tokens in sequence with its own
  n_dk); draws do not depend on lanes, chunks or devices.
* ``warmup="fast_grid"`` (opt-in): approximate document-parallel collapsed sweeps
  (``sample_z_collapsed_parallel``: word-topic counts refreshed after every step
  of the lane grid, so tokens drawn in the same step see stale counts, AD-LDA
  style; with documents split over devices each shard sees only its own
  updates within a sweep).  Its result follows the lane grid and the shards.
* ``warmup="exact"`` (the GPU default): the sampling sweep itself (φ drawn, then
  every token from its exact conditional); draws do not depend on lanes, chunks or devices.

For each corpus, each warm-up is run with several seeds (``--seeds``), each seed
one ``gibbsjax.sample`` call of ``--chains`` chains, at

* equal sweeps: the same warm-up and draws for all three;
* equal wall time: the exact warm-up given as many sweeps as fit in the
  ``"fast"`` run's time (from the per-sweep time of the exact run at equal sweeps;
  the equal-sweeps run again where that is within 5% of its sweeps).

Reported per setting (mean over seeds, and every seed's agreement count):
R-hat of ``lp`` (:func:`gibbsjax.diagnostics.rhat_lp`), the agreement verdict
(topics of the reference chain reproduced by all chains, Hellinger threshold
:data:`gibbsjax.agreement.AGREEMENT_THRESHOLD`, as ``gibbsjax run`` reports it),
on synthetic corpora the mean Hellinger distance of the topics to the true ones
after a one-to-one matching (per chain, then averaged over chains; and of the
estimate, the reference chain), held-out perplexity of the estimate (document
completion, ``heldout_perplexity``), and wall time of the ``sample`` call
(``wall_s``: calls after the first of a setting, compiled code reused; the first
call, compilation included, as ``first_s``).

Corpora (``--jobs``):

* ``demo``: ``configs/lda-demo.toml``'s corpus, K, α, η, held-out split and
  sweeps (stdlib docstrings, K = 8, 1,000 warm-up + 300 draws);
* ``synthetic``: a Reuters-sized corpus drawn from LDA with known topics
  (``datasets.synthetic.lda_corpus``: 395 documents of about 213 tokens,
  V = 4,258, K = 20, α = 0.1, η = 0.01, like the Reuters sample of the ``lda``
  package that ``benchmarks/lda.py`` uses), 500 warm-up + 200 draws;
* ``reuters``: that Reuters sample itself (needs the ``lda`` package; K = 20).

Run:  python benchmarks/warmup_study.py [--jobs demo synthetic] [--seeds 2] [--json warmup_study.json]
The default run (demo and synthetic, 2 seeds) takes about 5 minutes on the project's 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# this file is benchmarks/warmup_study.py: keep its folder off the path so `import lda` finds the package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Job:
    name: str
    train: object
    test: object
    k: int
    alpha: float
    eta: float
    num_warmup: int
    num_draws: int
    true_phi: object = None


def demo_job(args) -> Job:
    from gibbsjax import datasets

    with open(ROOT / "configs" / "lda-demo.toml", "rb") as f:
        cfg = tomllib.load(f)
    corpus = datasets.load(cfg["data"]["corpus"], kind="corpus")
    train, test = corpus.split(cfg["data"]["heldout"], seed=cfg["data"].get("split_seed", 0))
    m, s = cfg["model"], cfg["sampler"]
    return Job(f"demo (configs/lda-demo.toml: {corpus.num_docs} docs, V = {corpus.vocab_size}, K = {m['K']})",
               train, test, m["K"], m["alpha"], m["eta"], args.warmup or s["num_warmup"], args.draws or s["num_draws"])


def synthetic_job(args) -> Job:
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, phi, _ = lda_corpus(num_docs=395, num_topics=20, vocab_size=4258, doc_length=213, alpha=0.1, eta=0.01,
                                seed=20)
    train, test = corpus.split(0.1, seed=0)
    return Job(f"synthetic, Reuters-sized (lda_corpus: {corpus.num_docs} docs of ~213 tokens, V = 4258, "
               "alpha 0.1, eta 0.01, seed 20), K = 20", train, test, 20, 0.1, 0.01,
               args.warmup or 500, args.draws or 200, phi)


def reuters_job(args) -> Job:
    try:
        import lda.datasets
    except ImportError:
        raise SystemExit("--jobs reuters needs the lda package (pip install lda), which carries the corpus") from None
    from gibbsjax.corpus import Corpus

    corpus = Corpus.from_dtm(lda.datasets.load_reuters(), vocab=lda.datasets.load_reuters_vocab())
    train, test = corpus.split(0.1, seed=0)
    return Job(f"Reuters sample of the lda package ({corpus.num_docs} docs, V = {corpus.vocab_size}), K = 20",
               train, test, 20, 0.1, 0.01, args.warmup or 500, args.draws or 200)


def hellinger_to_truth(phi, truth) -> float:
    """Mean Hellinger distance of the rows of ``phi`` to the true topics after the best one-to-one matching."""
    from scipy.optimize import linear_sum_assignment

    from gibbsjax.labels import distance_matrix

    dist = distance_matrix(np.asarray(phi, np.float64), np.asarray(truth, np.float64), "hellinger")
    rows, cols = linear_sum_assignment(dist)
    return float(dist[rows, cols].mean())


def run_setting(job: Job, warmup: str, num_warmup: int, seeds, chains: int) -> dict:
    """One setting (warm-up kind, sweeps), every seed: metrics per seed and their means."""
    import gibbsjax
    from gibbsjax.diagnostics import rhat_lp
    from gibbsjax.models import lda
    from gibbsjax.specs.lda import postprocess

    kernel = lda.partially_collapsed(job.k, alpha=job.alpha, eta=job.eta, warmup=warmup)
    d = lda.data(job.train)
    runs = []
    for seed in seeds:
        start = time.perf_counter()
        idata = gibbsjax.sample(kernel, d, seed=seed, num_chains=chains, num_warmup=num_warmup,
                                num_draws=job.num_draws, progress=False)
        wall = time.perf_counter() - start
        row = {"seed": seed, "wall_s": wall, "rhat_lp": rhat_lp(idata), "warmup_attr": idata.attrs.get("warmup", "")}
        post = postprocess(idata, kernel, d, {"corpus": job.train, "heldout": job.test,
                                              "hyperparameters": {"alpha": job.alpha}})
        agreement = post.agreement
        row["reproduced"] = int(np.asarray(agreement["reproduced"].values).all(axis=0).sum())
        row["verdict"] = str(agreement.attrs["verdict"])
        row["perplexity"] = float(post.topics.attrs["heldout_perplexity"])
        if job.true_phi is not None:
            per_chain = post.posterior_mean["topic_word"].values
            row["hellinger_chains"] = float(np.mean([hellinger_to_truth(p, job.true_phi) for p in per_chain]))
            row["hellinger_estimate"] = hellinger_to_truth(post.topics["topic_word"].values, job.true_phi)
        runs.append(row)
    steady = [r["wall_s"] for r in runs[1:]] or [runs[0]["wall_s"]]
    out = {"warmup": warmup, "num_warmup": num_warmup, "num_draws": job.num_draws, "chains": chains,
           "first_s": runs[0]["wall_s"], "wall_s": float(np.mean(steady)), "runs": runs}
    for key in ("rhat_lp", "perplexity", "hellinger_chains", "hellinger_estimate"):
        if key in runs[0]:
            out[key] = float(np.mean([r[key] for r in runs]))
    out["reproduced"] = [r["reproduced"] for r in runs]
    return out


def study(job: Job, seeds, chains: int) -> list[dict]:
    total = job.num_warmup + job.num_draws
    fast = run_setting(job, "fast", job.num_warmup, seeds, chains)
    fast["budget"] = "equal sweeps"
    grid = run_setting(job, "fast_grid", job.num_warmup, seeds, chains)
    grid["budget"] = "equal sweeps"
    exact = run_setting(job, "exact", job.num_warmup, seeds, chains)
    exact["budget"] = "equal sweeps"
    per_sweep = exact["wall_s"] / total
    matched = max(1, int(round(fast["wall_s"] / per_sweep)) - job.num_draws)
    rows = [fast, grid, exact]
    if abs(matched - job.num_warmup) > 0.05 * job.num_warmup:
        timed = run_setting(job, "exact", matched, seeds, chains)
        timed["budget"] = "equal wall time"
        rows.append(timed)
    else:
        rows.append({**exact, "budget": "equal wall time"})
    return rows


def table(name: str, rows: list[dict], k: int) -> str:
    head = (f"{'warm-up':<10}{'budget':<17}{'warm-up sweeps':>15}{'wall s':>8}{'first s':>9}{'R-hat lp':>10}"
            f"{'reproduced by all (per seed)':>30}{'Hellinger':>11}{'perplexity':>12}")
    lines = [name, head]
    for r in rows:
        hell = f"{r['hellinger_chains']:.3f}" if "hellinger_chains" in r else "-"
        lines.append(f"{r['warmup']:<10}{r['budget']:<17}{r['num_warmup']:>15}{r['wall_s']:>8.2f}{r['first_s']:>9.2f}"
                     f"{r['rhat_lp']:>10.2f}{' '.join(f'{n}/{k}' for n in r['reproduced']):>30}{hell:>11}"
                     f"{r['perplexity']:>12.1f}")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", nargs="+", default=["demo", "synthetic"], choices=["demo", "synthetic", "reuters"])
    parser.add_argument("--seeds", type=int, default=2, help="runs per setting (seeds 1..N)")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=None, help="warm-up sweeps (default: the job's)")
    parser.add_argument("--draws", type=int, default=None, help="draws per chain (default: the job's)")
    parser.add_argument("--json", default=None, help="write every figure here")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.chains < 2:
        parser.error("--seeds must be at least 1 and --chains at least 2")

    import jax

    makers = {"demo": demo_job, "synthetic": synthetic_job, "reuters": reuters_job}
    report = {"jax": jax.__version__, "backend": jax.default_backend(), "cpu_count": os.cpu_count(), "jobs": []}
    seeds = list(range(1, args.seeds + 1))
    for name in args.jobs:
        job = makers[name](args)
        start = time.perf_counter()
        rows = study(job, seeds, args.chains)
        print(table(f"{job.name}: {args.chains} chains, {job.num_draws} draws, seeds {seeds}", rows, job.k))
        print(f"  ({time.perf_counter() - start:.0f} s; Hellinger: mean over chains of the mean distance to the "
              "true topics after matching)\n", flush=True)
        report["jobs"].append({"job": name, "description": job.name, "K": job.k, "rows": rows})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=lambda v: v if not isinstance(v, float) or math.isfinite(v) else None)
    return report


if __name__ == "__main__":
    main()
