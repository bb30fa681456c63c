"""LDA on a CPU with the native kernels: gibbsjax against tomotopy, measured side by side in one run.

gibbsjax's default LDA sampler on a CPU (``gibbsjax.models.lda.partially_collapsed(K)``: with the
native kernels built, ``z_update="auto"`` and ``dirichlet_draw="auto"`` pick the C++ custom calls;
its warm-up, the frozen-count sweeps of ``warmup="fast"`` (native too), runs the first half of the
sweeps, as ``gibbsjax.sample(num_warmup=n // 2, num_draws=n - n // 2)`` does) against tomotopy
(``tp.LDAModel``, α and η fixed, no hyperparameter optimisation), the same α = 0.1 and η = 0.01,
the same training documents.  Every ratio is
printed gibbsjax over tomotopy so that above 1 means gibbsjax is faster or better: throughput
gibbsjax / tomotopy, time tomotopy / gibbsjax, perplexity tomotopy / gibbsjax.

Parts (``--parts``):

1. Tokens/s of ONE chain over ``--sweeps`` sweeps (Reuters, the `lda` package's corpus, 80 % of
   documents for training) and ``--synthetic-sweeps`` sweeps (a ~1 M-token corpus of
   `gibbsjax.datasets.synthetic.lda_corpus`), at each ``--topics`` K.  gibbsjax with 1 native thread
   and with every CPU this process may use (``native.set_num_threads``); tomotopy with ``workers=1``
   and with as many workers.  Sampling only: gibbsjax's block of sweeps is compiled once (a
   ``lax.scan``, the runner's key scheme, as ``benchmarks/lda.py`` does) and its initial state made
   before the clock starts; tomotopy's ``train(n)`` is timed after a ``train(0)`` (its initial
   topics).  Then the held-out perplexity of each (document completion, the same smoothing and the
   same held-out tokens for every system: ``benchmarks/lda.py``'s ``score``).  gibbsjax's draws do
   not depend on its thread count, so its two runs give the same perplexity (checked).
2. Many chains in one call: ``gibbsjax.sample(kernel, data, num_chains=16, num_warmup=100,
   num_draws=100, progress=False)``, every thread, timed on a second call with another seed (the
   first call, which compiles, is printed beside it), against 16 tomotopy models (200 iterations
   each, ``workers=1``) on as many processes as CPUs (``ProcessPoolExecutor``; each process loads
   the corpus in its initializer, before the clock starts, and builds its own models; timed from
   the first submit to the last result).  Reuters, each K.
3. First fit in a new process: a ``python -c`` subprocess imports gibbsjax (timed apart), then times
   ``gibbsjax.LDA(n_components, num_chains=8).fit(X)`` (every other setting its default) on 300
   synthetic documents of 50 tokens, then a second fit on 250 other documents and a third on 400, with an EMPTY
   persistent compilation cache (``GIBBSJAX_CACHE_DIR`` points at a fresh temporary folder, which
   ``gibbsjax.sample`` turns on by default).
4. Time to tomotopy's quality: tomotopy (1 worker) runs ``--sweeps`` sweeps and is scored; gibbsjax
   (one chain, 1 thread and every thread) runs on through checkpoints every ``--quality-step``
   sweeps (up to ``--quality-max-sweeps``) and stops at the first whose held-out perplexity is at
   most tomotopy's.  Wall times as in ``benchmarks/lda.py``'s curves: initialisation included,
   compilation and scoring excluded, for both.  Reuters, ``--quality-topics`` (20 and 100).

Run:   python benchmarks/cpu_native.py                       (every part; long: K = 1,000 and 16 chains)
       python benchmarks/cpu_native.py --parts 1 --topics 20 100
       python benchmarks/cpu_native.py --quick               (smoke test: K = 20, 20 sweeps, small corpora)
Needs: pip install -e ".[bench]"   (tomotopy, lda; the Reuters corpus comes with `lda`)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import math
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _load_bench_lda():
    """benchmarks/lda.py under the name ``bench_lda`` (as ``lda`` it would hide the `lda` package)."""
    shadow = sys.modules.get("lda")
    if shadow is not None and not hasattr(shadow, "__path__"):  # a script imported benchmarks/lda.py as `lda`
        del sys.modules["lda"]
    if "bench_lda" in sys.modules:
        return sys.modules["bench_lda"]
    spec = importlib.util.spec_from_file_location("bench_lda", HERE / "lda.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_lda"] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)  # it also takes benchmarks/ off sys.path, so `import lda` is the package
    return module


bench = _load_bench_lda()
ALPHA, ETA = bench.ALPHA, bench.ETA
REUTERS_HELDOUT = 0.2  # 80 % of the documents train


# ----------------------------------------------------------------------------- arguments
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="smoke test: K = 20, 20 sweeps, a 100 k-token synthetic corpus, 4 chains of 10 + 10 "
                   "sweeps in part 2, checkpoints up to 40 sweeps in part 4")
    p.add_argument("--parts", type=int, nargs="+", choices=[1, 2, 3, 4], default=[1, 2, 3, 4])
    p.add_argument("--topics", type=int, nargs="+", help="K for parts 1 and 2 (default 20 100 1000; quick 20)")
    p.add_argument("--corpora", nargs="+", choices=["reuters", "synthetic"], default=["reuters", "synthetic"],
                   help="part 1's corpora (default both)")
    p.add_argument("--sweeps", type=int, help="part 1 on Reuters, and tomotopy's sweeps in part 4 (200; quick 20)")
    p.add_argument("--seeds", type=int, default=1, help="part 1: seeds whose held-out perplexity is compared "
                   "(one chain of each system per seed, 1 thread / 1 worker; the first seed also times; 1)")
    p.add_argument("--synthetic-sweeps", type=int, help="part 1 on the synthetic corpus (50; quick 20)")
    p.add_argument("--synthetic-docs", type=int, help="synthetic documents (10000, ~1 M tokens; quick 1000)")
    p.add_argument("--synthetic-doc-length", type=int, default=100, help="synthetic mean document length (100)")
    p.add_argument("--synthetic-vocab", type=int, help="synthetic vocabulary (5000; quick 2000)")
    p.add_argument("--synthetic-heldout", type=float, default=0.1,
                   help="fraction of synthetic documents held out for scoring (0.1)")
    p.add_argument("--chains", type=int, help="part 2: chains and tomotopy models (16; quick 4)")
    p.add_argument("--chain-warmup", type=int, help="part 2: warm-up sweeps per chain (100; quick 10)")
    p.add_argument("--chain-draws", type=int, help="part 2: draws per chain (100; quick 10); tomotopy trains "
                   "warm-up + draws iterations")
    p.add_argument("--fit-topics", type=int, default=10, help="part 3: n_components (10)")
    p.add_argument("--fit-vocab", type=int, default=500, help="part 3: vocabulary of the synthetic documents (500)")
    p.add_argument("--quality-topics", type=int, nargs="+", help="part 4: K (default 20 100; quick 20)")
    p.add_argument("--quality-step", type=int, default=10, help="part 4: sweeps between gibbsjax checkpoints (10)")
    p.add_argument("--quality-max-sweeps", type=int, help="part 4: the last gibbsjax checkpoint (2 x --sweeps)")
    p.add_argument("--threads", type=int, help="'all threads': gibbsjax threads, tomotopy workers and processes "
                   "(default: the CPUs of os.sched_getaffinity(0))")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    quick = args.quick
    defaults = dict(topics=[20] if quick else [20, 100, 1000], sweeps=20 if quick else 200,
                    synthetic_sweeps=20 if quick else 50, synthetic_docs=1000 if quick else 10_000,
                    synthetic_vocab=2000 if quick else 5000, chains=4 if quick else 16,
                    chain_warmup=10 if quick else 100, chain_draws=10 if quick else 100,
                    quality_topics=[20] if quick else [20, 100], threads=cpu_count())
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.quality_max_sweeps is None:
        args.quality_max_sweeps = 2 * args.sweeps
    for name in ("seeds", "sweeps", "synthetic_sweeps", "synthetic_docs", "synthetic_doc_length", "synthetic_vocab", "chains",
                 "chain_warmup", "chain_draws", "fit_topics", "fit_vocab", "quality_step", "quality_max_sweeps",
                 "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be positive")
    if min(args.topics + args.quality_topics) < 2:
        p.error("numbers of topics must be at least 2")
    args.parts = sorted(set(args.parts))
    return args


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# ----------------------------------------------------------------------------- header
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def commit() -> str:
    def git(*a):
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD") or "unknown"
        return head + (" + uncommitted changes" if git("status", "--porcelain") else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def header(args) -> str:
    import jax

    from gibbsjax.models.lda import native

    try:
        import tomotopy as tp

        tomo = f"tomotopy {tp.__version__} ({tp.isa})"
    except ImportError:
        tomo = "tomotopy not importable"
    nat = (f"native kernels on ({native.num_threads()} threads by default)" if native.available()
           else f"native kernels NOT available ({native.unavailable_reason()}): gibbsjax runs its XLA updates")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    return (f"{cpu_model()}; {cpu_count()} CPUs for this process ({os.cpu_count()} on the host), load average "
            f"{load:.1f} at start; jax {jax.__version__} on {jax.default_backend()}; {tomo}; Python "
            f"{platform.python_version()}; gibbsjax commit {commit()}; {nat}")


# ----------------------------------------------------------------------------- shared pieces
def thread_settings(args) -> list[int | None]:
    """gibbsjax's thread counts: 1 and every CPU (None: the native kernels are off, one XLA run)."""
    from gibbsjax.models.lda import native

    if not native.available():
        return [None]
    return sorted({1, args.threads})


def all_threads(args) -> int | None:
    """The 'all threads' setting of gibbsjax (None where the native kernels are off)."""
    return None if thread_settings(args) == [None] else args.threads


def set_threads(n: int | None) -> None:
    from gibbsjax.models.lda import native

    if n is not None:
        native.set_num_threads(n)


def threads_label(n: int | None) -> str:
    return "XLA updates" if n is None else f"{n} thread{'s' if n > 1 else ''}"


def sampler_line(k: int) -> str:
    from gibbsjax.models import lda as glda

    kernel = glda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
    z = glda.resolve_z_update("auto", K=k) if hasattr(glda, "resolve_z_update") else "auto"
    phi = glda.resolve_dirichlet_draw("auto") if hasattr(glda, "resolve_dirichlet_draw") else "auto"
    warm = (kernel.warmup_name or "exact").split(":")[0]
    return f"partially_collapsed(K = {k}): z-update {z}, phi draw {phi}, warm-up {warm} (the first half of the sweeps)"


def tomotopy_model(job, seed: int):
    import tomotopy as tp

    mdl = tp.LDAModel(k=job.k, alpha=ALPHA, eta=ETA, seed=seed)
    mdl.optim_interval = 0
    for doc in job.train.to_token_lists():
        mdl.add_doc(doc)
    return mdl


def tomotopy_counts(mdl, job):
    """tomotopy's n_kw in the training corpus's word order (as benchmarks/lda.py's tomotopy system reads them)."""
    import numpy as np

    index = {w: i for i, w in enumerate(job.train.vocab)}
    ours = np.array([index[w] for w in mdl.vocabs], np.int64)
    words = np.concatenate([np.asarray(d.words, np.int64) for d in mdl.docs])
    topics = np.concatenate([np.asarray(d.topics, np.int64) for d in mdl.docs])
    v = job.train.vocab_size
    return np.bincount(topics * v + ours[words], minlength=job.k * v).reshape(job.k, v)


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}x" if math.isfinite(x) else "-"


# ----------------------------------------------------------------------------- part 1: tokens/s, one chain
def gibbsjax_block(job, sweeps: int, seed: int):
    """(run, counts, compile seconds): ``run()`` runs ``sweeps`` sweeps from one fixed initial state as
    ``gibbsjax.sample(num_warmup=sweeps // 2, num_draws=sweeps - sweeps // 2)`` does (the kernel's
    warm-up transition for the first half, its exact sweep for the rest), in one compiled program of
    two ``lax.scan``, and returns (seconds, state); the key scheme of ``benchmarks/lda.py`` (sweep t
    uses fold_in(run_key, t))."""
    import jax
    import jax.numpy as jnp

    from gibbsjax.models import lda as glda

    kernel = glda.partially_collapsed(job.k, alpha=ALPHA, eta=ETA)
    data = glda.data(job.train)
    init_key, run_key = jax.random.split(jax.random.key(seed))

    warm = kernel.warmup_step or kernel.step
    half = sweeps // 2

    def run_block(key, state, d):  # data as an argument: a closure would embed the corpus in the program
        def body(step):
            return lambda s, t: (step(jax.random.fold_in(key, t), s, d), None)

        state = jax.lax.scan(body(warm), state, jnp.arange(half))[0]
        return jax.lax.scan(body(kernel.step), state, jnp.arange(half, sweeps))[0]

    start = time.perf_counter()
    state0 = jax.block_until_ready(jax.jit(kernel.init)(init_key, data))
    block = jax.jit(run_block).lower(run_key, state0, data).compile()
    counts = jax.jit(lambda z, d: glda.topic_counts(z, d, job.k)[1]).lower(state0.z, data).compile()
    compile_s = time.perf_counter() - start

    def run():
        start = time.perf_counter()
        state = jax.block_until_ready(block(run_key, state0, data))
        return time.perf_counter() - start, state

    return run, lambda state: counts(state.z, data), compile_s


def part1_job(job, sweeps: int, args) -> dict:
    import numpy as np

    n = job.train.num_tokens
    rows, nkws = [], []
    run, counts, compile_s = gibbsjax_block(job, sweeps, args.seed)
    for threads in thread_settings(args):
        set_threads(threads)
        seconds, state = run()
        nkw = np.asarray(counts(state))
        nkws.append(nkw)
        rows.append(dict(system="gibbsjax", setting=threads_label(threads), threads=threads or 1,
                         seconds=seconds, tokens_per_s=n * sweeps / seconds, score=bench.score(job, nkw)))
    set_threads(all_threads(args))
    same = all(np.array_equal(nkws[0], x) for x in nkws[1:])
    for workers in sorted({1, args.threads}):
        mdl = tomotopy_model(job, args.seed)
        mdl.train(0, workers=workers)  # initial topics, not timed
        start = time.perf_counter()
        mdl.train(sweeps, workers=workers)
        seconds = time.perf_counter() - start
        rows.append(dict(system="tomotopy", setting=f"{workers} worker{'s' if workers > 1 else ''}",
                         threads=workers, seconds=seconds, tokens_per_s=n * sweeps / seconds,
                         score=bench.score(job, tomotopy_counts(mdl, job))))
    seeds = [dict(seed=args.seed, gibbsjax=rows[0]["score"][0],
                  tomotopy=next(r["score"][0] for r in rows if r["system"] == "tomotopy" and r["threads"] == 1))]
    set_threads(1)
    for seed in range(args.seed + 1, args.seed + args.seeds):  # perplexity only: one chain of each per seed
        run_s, counts_s, _ = gibbsjax_block(job, sweeps, seed)
        ours = bench.score(job, np.asarray(counts_s(run_s()[1])))[0]
        mdl = tomotopy_model(job, seed)
        mdl.train(0, workers=1)
        mdl.train(sweeps, workers=1)
        seeds.append(dict(seed=seed, gibbsjax=ours, tomotopy=bench.score(job, tomotopy_counts(mdl, job))[0]))
    set_threads(all_threads(args))
    return dict(job=job.name, corpus="synthetic" if job.true_phi is not None else "reuters", k=job.k,
                sweeps=sweeps, tokens=n, compile_s=compile_s, same_draws=same, rows=rows, seeds=seeds)


def print_part1_job(res: dict, job) -> None:
    synthetic = job.true_phi is not None
    print(f"\n{job.name}: {job.train.num_docs} training docs, {res['tokens']} tokens, V = {job.train.vocab_size}; "
          f"{job.test.num_docs} held-out docs; {res['sweeps']} sweeps, one chain")
    print(f"  gibbsjax {sampler_line(job.k)}; compile {res['compile_s']:.1f} s (not timed); draws the same with "
          f"every thread count: {'yes' if res['same_draws'] else 'NO'}")
    print(f"  {'system':<28s} {'wall s':>8s} {'M tok/s':>8s} {'perplexity':>10s}" + (" Hellinger" if synthetic else ""))
    for r in res["rows"]:
        ppl, hel = r["score"]
        print(f"  {r['system'] + ', ' + r['setting']:<28s} {r['seconds']:8.2f} {r['tokens_per_s'] / 1e6:8.2f} "
              f"{ppl:10.1f}" + (f" {hel:9.4f}" if synthetic else ""))
    gj = [r for r in res["rows"] if r["system"] == "gibbsjax"]
    tt = {r["threads"]: r for r in res["rows"] if r["system"] == "tomotopy"}
    res["ratios"] = []
    for g in gj:
        t = tt.get(g["threads"])
        if t is None:
            continue
        speed = g["tokens_per_s"] / t["tokens_per_s"]
        ppl = t["score"][0] / g["score"][0]
        within = g["score"][0] <= 1.02 * t["score"][0]
        res["ratios"].append(dict(threads=g["threads"], speed=speed, perplexity=ppl, within_2pct=within))
        print(f"  gibbsjax {g['setting']} / tomotopy {t['setting']}: tokens/s {fmt_ratio(speed)}; perplexity "
              f"tomotopy / gibbsjax {ppl:.3f} (gibbsjax within 2 % of tomotopy or lower: {'yes' if within else 'NO'})")
    if len(res["seeds"]) > 1:  # one chain's perplexity varies from seed to seed: the means of several
        import numpy as np

        ours = np.array([x["gibbsjax"] for x in res["seeds"]])
        theirs = np.array([x["tomotopy"] for x in res["seeds"]])
        se = math.sqrt(ours.var(ddof=1) / ours.size + theirs.var(ddof=1) / theirs.size)
        res["seed_means"] = dict(gibbsjax=float(ours.mean()), tomotopy=float(theirs.mean()), se=se)
        print(f"  perplexity over {ours.size} seeds (1 chain each): gibbsjax {ours.mean():.1f} (sd {ours.std(ddof=1):.1f}), "
              f"tomotopy {theirs.mean():.1f} (sd {theirs.std(ddof=1):.1f}); tomotopy / gibbsjax "
              f"{theirs.mean() / ours.mean():.3f}, difference {100 * (ours.mean() / theirs.mean() - 1):+.1f} % "
              f"(standard error {100 * se / theirs.mean():.1f} %)")


def part1(args) -> list[dict]:
    out = []
    print(f"\n== Part 1: tokens/s of one chain (sampling only), perplexity after the sweeps; "
          f"alpha = {ALPHA}, eta = {ETA}")
    for corpus in args.corpora:
        for k in args.topics:
            if corpus == "reuters":
                job, sweeps = bench.reuters_job(k, REUTERS_HELDOUT), args.sweeps
            else:
                job, sweeps = bench.synthetic_job(k, synthetic_settings(args)), args.synthetic_sweeps
            res = part1_job(job, sweeps, args)
            print_part1_job(res, job)
            sys.stdout.flush()
            out.append(res)
    print("\nPart 1 summary (gibbsjax / tomotopy; tokens/s, perplexity as tomotopy / gibbsjax):")
    for res in out:
        parts = [f"{threads_label(r['threads'])} vs {r['threads']} worker{'s' if r['threads'] > 1 else ''}: "
                 f"speed {fmt_ratio(r['speed'])}, perplexity {r['perplexity']:.3f}" for r in res["ratios"]]
        print(f"  {res['corpus']:9s} K = {res['k']:<5d} " + "; ".join(parts))
    return out


def synthetic_settings(args):
    return argparse.Namespace(docs=args.synthetic_docs, doc_length=args.synthetic_doc_length,
                              vocab=args.synthetic_vocab, heldout=args.synthetic_heldout)


# ----------------------------------------------------------------------------- part 2: many chains
_WORKER: dict = {}


def _tomotopy_worker_init(heldout: float, barrier) -> None:
    """Each process: the Reuters training documents, loaded before the clock starts."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import tomotopy  # noqa: F401  (imported here, not timed)

    job = _load_bench_lda().reuters_job(2, heldout)
    _WORKER["docs"] = job.train.to_token_lists()
    _WORKER["barrier"] = barrier


def _tomotopy_worker_ready() -> int:
    _WORKER["barrier"].wait(timeout=600)  # every process has run its initializer
    return os.getpid()


def _tomotopy_worker_fit(k: int, iterations: int, seed: int) -> tuple[int, float, float]:
    import tomotopy as tp

    start = time.perf_counter()
    mdl = tp.LDAModel(k=k, alpha=ALPHA, eta=ETA, seed=seed)
    mdl.optim_interval = 0
    for doc in _WORKER["docs"]:
        mdl.add_doc(doc)
    mdl.train(iterations, workers=1)
    return os.getpid(), time.perf_counter() - start, float(mdl.ll_per_word)


def part2(args) -> list[dict]:
    import gibbsjax
    from gibbsjax.models import lda as glda

    chains, iterations = args.chains, args.chain_warmup + args.chain_draws
    procs = min(args.threads, chains)
    print(f"\n== Part 2: {chains} chains in one call against {chains} tomotopy models on {procs} processes; "
          f"Reuters ({int(100 * (1 - REUTERS_HELDOUT))} % of documents), {args.chain_warmup} warm-up + "
          f"{args.chain_draws} draws = {iterations} sweeps per chain")
    set_threads(all_threads(args))
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that runs JAX's threads
    barrier = ctx.Barrier(procs)
    out = []
    with concurrent.futures.ProcessPoolExecutor(procs, mp_context=ctx, initializer=_tomotopy_worker_init,
                                                initargs=(REUTERS_HELDOUT, barrier)) as pool:
        ready = [pool.submit(_tomotopy_worker_ready) for _ in range(procs)]
        pids = {f.result() for f in ready}
        for k in args.topics:
            job = bench.reuters_job(k, REUTERS_HELDOUT)
            n = job.train.num_tokens
            data = glda.data(job.train)
            kernel = glda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
            timings = []
            for seed in (args.seed, args.seed + 1):
                start = time.perf_counter()
                idata = gibbsjax.sample(kernel, data, num_chains=chains, num_warmup=args.chain_warmup,
                                        num_draws=args.chain_draws, progress=False, seed=seed,
                                        log_likelihood=False)  # the sampler alone, as tomotopy
                timings.append(time.perf_counter() - start)
            del idata
            first, second = timings
            start = time.perf_counter()
            futures = [pool.submit(_tomotopy_worker_fit, k, iterations, args.seed + i) for i in range(chains)]
            results = [f.result() for f in futures]
            tomo = time.perf_counter() - start
            used = len({r[0] for r in results})
            ratio = tomo / second
            print(f"\nReuters, K = {k}: {n} tokens x {chains} chains x {iterations} sweeps; gibbsjax "
                  f"{sampler_line(k)}, {threads_label(all_threads(args))}")
            lines = [(f"gibbsjax.sample, second call (seed {args.seed + 1}, compiled code reused)", second,
                      f"{n * chains * iterations / second / 1e6:.2f} M tok/s over all chains"),
                     (f"gibbsjax.sample, first call (seed {args.seed}, with compilation)", first,
                      f"so about {max(first - second, 0):.1f} s of compilation"),
                     (f"tomotopy, {chains} models, workers=1, on {used} of {len(pids)} processes", tomo,
                      f"mean {sum(r[1] for r in results) / len(results):.2f} s per model, corpus loading excluded")]
            width = max(len(x[0]) for x in lines)
            for what, seconds, note in lines:
                print(f"  {what:<{width}s} {seconds:8.2f} s  ({note})")
            print(f"  time tomotopy / gibbsjax: {fmt_ratio(ratio)} (second call); {fmt_ratio(tomo / first)} "
                  f"(first call, with compilation)")
            sys.stdout.flush()
            out.append(dict(k=k, chains=chains, sweeps=iterations, gibbsjax_s=second, gibbsjax_first_s=first,
                            tomotopy_s=tomo, ratio=ratio))
    return out


# ----------------------------------------------------------------------------- part 3: first fit
FIRST_FIT = r"""
import json, sys, time
start = time.perf_counter()
import gibbsjax
from gibbsjax.datasets.synthetic import lda_corpus
imported = time.perf_counter() - start
k, vocab = int(sys.argv[1]), int(sys.argv[2])
first, _, _ = lda_corpus(num_docs=300, num_topics=k, vocab_size=vocab, doc_length=50, fixed_length=True, seed=0)
second, _, _ = lda_corpus(num_docs=250, num_topics=k, vocab_size=vocab, doc_length=50, fixed_length=True, seed=1)
start = time.perf_counter()
gibbsjax.LDA(k, num_chains=8).fit(first)
t_first = time.perf_counter() - start
start = time.perf_counter()
gibbsjax.LDA(k, num_chains=8).fit(second)
t_second = time.perf_counter() - start
third, _, _ = lda_corpus(num_docs=400, num_topics=k, vocab_size=vocab, doc_length=50, fixed_length=True, seed=2)
start = time.perf_counter()
gibbsjax.LDA(k, num_chains=8).fit(third)
t_third = time.perf_counter() - start
print("RESULT " + json.dumps(dict(import_s=imported, first_s=t_first, second_s=t_second, third_s=t_third,
                                  first_tokens=first.num_tokens, second_tokens=second.num_tokens,
                                  third_tokens=third.num_tokens)))
"""


def part3(args) -> dict:
    k = args.fit_topics
    print(f"\n== Part 3: first fit in a new process, empty persistent compilation cache; "
          f"gibbsjax.LDA({k}, num_chains=8), defaults otherwise (targets: first fit <= 3 s, next <= 1.5 s)")
    with tempfile.TemporaryDirectory(prefix="gibbsjax-cold-cache-") as cache:
        env = dict(os.environ, GIBBSJAX_CACHE_DIR=cache, JAX_PLATFORMS="cpu")
        env.pop("JAX_COMPILATION_CACHE_DIR", None)  # gibbsjax chooses the folder and its thresholds
        env.pop("GIBBSJAX_NUM_THREADS", None)
        assert not os.listdir(cache)
        proc = subprocess.run([sys.executable, "-c", FIRST_FIT, str(k), str(args.fit_vocab)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=1800)
        entries = sum(len(files) for _, _, files in os.walk(cache))
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        print(f"  the subprocess failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        return dict(error=proc.stderr[-3000:])
    res = json.loads(line[len("RESULT "):])
    res["cache_entries_after"] = entries
    print(f"  import gibbsjax (not in the fits): {res['import_s']:.2f} s")
    print(f"  first fit, 300 docs x 50 tokens ({res['first_tokens']} tokens): {res['first_s']:6.2f} s  "
          f"(target 3 s: {'met' if res['first_s'] <= 3 else 'NOT met'})")
    print(f"  next fit, 250 docs x 50 tokens ({res['second_tokens']} tokens): {res['second_s']:6.2f} s  "
          f"(target 1.5 s: {'met' if res['second_s'] <= 1.5 else 'NOT met'})")
    print(f"  then 400 docs x 50 tokens ({res['third_tokens']} tokens): {res['third_s']:6.2f} s  "
          "(corpora of up to 512 documents share one compiled program where the native kernels run)")
    print(f"  files in the cache folder afterwards: {entries}")
    return res


# ----------------------------------------------------------------------------- part 4: time to quality
def part4(args) -> list[dict]:
    print(f"\n== Part 4: wall time to reach tomotopy's held-out perplexity after {args.sweeps} sweeps (1 worker); "
          f"gibbsjax one chain, checkpoints every {args.quality_step} sweeps up to {args.quality_max_sweeps}; "
          f"initialisation included, compilation and scoring excluded")
    out = []
    for k in args.quality_topics:
        job = bench.reuters_job(k, REUTERS_HELDOUT)
        info: dict = {}
        ref = bench.run_curve("tomotopy (1 worker)", bench.tomotopy_system(job, 1, args.seed, info), job,
                              [args.sweeps], info)
        _, ref_s, ref_ppl, _, _ = ref.rows[-1]
        print(f"\nReuters, K = {k}: tomotopy 1 worker, {args.sweeps} sweeps: {ref_s:.2f} s, perplexity {ref_ppl:.1f}; "
              f"gibbsjax {sampler_line(k)}")
        checkpoints = list(range(args.quality_step, args.quality_max_sweeps + 1, args.quality_step))
        for threads in thread_settings(args):
            set_threads(threads)
            info = {}
            # the kernel's warm-up for the first half of tomotopy's sweeps, as gibbsjax.sample(num_warmup=sweeps // 2)
            system = bench.gibbsjax_system(job, "partially_collapsed", {}, checkpoints, args.sweeps // 2, args.seed,
                                           info)
            next(system)
            hit, best, trail = None, math.inf, []
            for c in checkpoints:
                sweeps, seconds, nkw, _ = system.send(c)
                ppl, _ = bench.score(job, nkw)
                best = min(best, ppl)
                trail.append(f"{sweeps}: {ppl:.0f}")
                if ppl <= ref_ppl:
                    hit = (sweeps, seconds, ppl)
                    break
            system.close()
            label = f"gibbsjax {threads_label(threads)}"
            if hit is None:
                print(f"  {label}: not reached in {checkpoints[-1]} sweeps ({seconds:.2f} s; best perplexity "
                      f"{best:.1f})")
                out.append(dict(k=k, threads=threads, reached=False, tomotopy_s=ref_s, tomotopy_perplexity=ref_ppl))
            else:
                print(f"  {label}: reached at {hit[0]} sweeps, {hit[1]:.2f} s (perplexity {hit[2]:.1f}); "
                      f"time tomotopy / gibbsjax {fmt_ratio(ref_s / hit[1])}")
                out.append(dict(k=k, threads=threads, reached=True, sweeps=hit[0], seconds=hit[1], perplexity=hit[2],
                                tomotopy_s=ref_s, tomotopy_perplexity=ref_ppl, ratio=ref_s / hit[1]))
            print(f"    perplexity at checkpoints: {', '.join(trail)}")
            sys.stdout.flush()
    set_threads(all_threads(args))
    return out


# ----------------------------------------------------------------------------- main
def main(argv=None) -> dict:
    args = parse_args(argv)
    os.environ["JAX_PLATFORMS"] = "cpu"
    warnings.filterwarnings("ignore", message="The training result may differ", category=RuntimeWarning)
    print(header(args))
    print(f"'all threads' = {args.threads}" + ("  (--quick: small sizes, the figures are a smoke test only)"
                                                if args.quick else ""))
    sys.stdout.flush()
    parts = {1: part1, 2: part2, 3: part3, 4: part4}
    results = {}
    for part in args.parts:
        results[part] = parts[part](args)
        sys.stdout.flush()
    return results


if __name__ == "__main__":
    main()
