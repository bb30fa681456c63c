"""LDA time to quality: gibbsjax against tomotopy and the `lda` package, side by side in one run.

For every job (a corpus and a number of topics K) each system trains on the same
documents with the same α, η (tomotopy's hyperparameter optimisation off) and is
stopped at the same checkpoints (``--sweeps``, e.g. after 25, 50, 100 and 200 sweeps).
At each checkpoint the script records the system's wall time so far (sampling only:
initialisation included, compilation, corpus loading and scoring excluded) and scores
it, every system EXACTLY alike:

* φ from the system's own topic-word counts at that sweep, with the same smoothing:
  φ_kw = (n_kw + η) / (n_k + V η), V the full vocabulary (words seen only in held-out
  documents included).  No system's φ is filled in another way.
* held-out perplexity by document completion (`gibbsjax.models.lda.heldout_perplexity`):
  the same held-out documents (``--heldout``, a fraction of documents), the same
  observed / scored halves, the same θ inference (seeds fixed), for every system;
* on synthetic corpora (`gibbsjax.datasets.synthetic.lda_corpus`, generated with the
  same α and η) the mean Hellinger distance of the topics to the true topics after a
  one-to-one matching (`gibbsjax.labels.distance_matrix`, Hungarian algorithm).

tomotopy then runs on, with a checkpoint just short of each of gibbsjax's checkpoint
times (its sweeps predicted from its rate so far), so that quality can be compared at
equal wall time as well as at equal sweeps.  The summary prints, per gibbsjax sampler, the ratios to tomotopy at equal
sweeps, at equal wall time and the time to reach tomotopy's quality at the last shared
checkpoint.

gibbsjax is driven through its kernel (`Kernel.init`, `Kernel.step`, and
`Kernel.warmup_step` for the first ``--warmup-sweeps`` sweeps where the kernel has
one), one chain, a compiled `lax.scan` over blocks of sweeps, with the runner's key
scheme (sweep t uses fold_in(key, t)).  Options of the sampler factories pass through:
``--option z_update=sparse`` for every gibbsjax sampler, or per sampler
``--samplers partially_collapsed:z_update=dense partially_collapsed:z_update=lanes``.
The `lda` package is driven through its own per-sweep routine (`LDA._initialize`,
`LDA._sample_topics`; its monitoring log-likelihood every 10 sweeps is skipped).

Run (CPU):  python benchmarks/lda.py
            python benchmarks/lda.py --profile --jobs reuters:20 reuters:100   (the parts of a sweep)
            python benchmarks/lda.py --jobs reuters:20 --sweeps 25 50 100 200 --option warmup=exact
Run (GPU):  python benchmarks/lda.py --device gpu     (synthetic 10 M tokens, V = 10,000, K = 100,
            up to 1,000 sweeps, tomotopy with every CPU core; see benchmarks/README.md)
Needs: pip install -e ".[bench]"   (tomotopy, lda; the Reuters corpus comes with `lda`)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

# this file is benchmarks/lda.py: keep its folder off the path so `import lda` finds the package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

ALPHA, ETA = 0.1, 0.01

CPU_DEFAULTS = dict(jobs=["reuters:20", "reuters:100", "synthetic:20"], sweeps=[25, 50, 100, 200],
                    samplers=["partially_collapsed"], peers=["tomotopy", "lda"],
                    docs=1000, doc_length=100, vocab=2000, workers=1)
GPU_DEFAULTS = dict(jobs=["synthetic:100"], sweeps=[25, 50, 100, 200, 500, 1000],
                    samplers=["partially_collapsed"], peers=["tomotopy"],
                    docs=100_000, doc_length=100, vocab=10_000, workers=0)


# ----------------------------------------------------------------------------- arguments
def parse_value(text: str):
    """'3' -> 3, '0.5' -> 0.5, 'true' -> True, 'none' -> None, anything else stays a string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_options(items, where: str) -> dict:
    out = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"{where}: options are KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = parse_value(value.strip())
    return out


def parse_sampler(spec: str, common: dict) -> tuple[str, dict]:
    """'partially_collapsed:z_update=sparse,warmup=fast' -> (name, options); ``common`` first."""
    name, _, rest = spec.partition(":")
    options = dict(common)
    options.update(parse_options([x for x in rest.split(",") if x], f"--samplers {spec}"))
    return name, options


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                   help="where gibbsjax runs; also picks the defaults below (GPU: the 10 M-token corpus)")
    p.add_argument("--jobs", nargs="+", help="CORPUS:K with CORPUS reuters or synthetic "
                   "(CPU default: reuters:20 reuters:100 synthetic:20; GPU: synthetic:100)")
    p.add_argument("--sweeps", type=int, nargs="+", help="checkpoints (CPU default 25 50 100 200; GPU up to 1000)")
    p.add_argument("--samplers", nargs="+", help="gibbsjax samplers, NAME[:KEY=VALUE,...] (default: "
                   "partially_collapsed; e.g. uncollapsed partially_collapsed:z_update=dense)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="keyword argument for every gibbsjax sampler factory (repeatable)")
    p.add_argument("--warmup-sweeps", type=int, default=None,
                   help="sweeps run by the kernel's warm-up transition where it has one "
                   "(default: half the last checkpoint, as a run with num_warmup = num_draws)")
    p.add_argument("--peers", nargs="*", help="tomotopy and/or lda (CPU default both; GPU: tomotopy)")
    p.add_argument("--workers", type=int, help="tomotopy workers (CPU default 1; GPU default 0 = every core)")
    p.add_argument("--no-equal-time", action="store_true",
                   help="stop tomotopy at the last checkpoint instead of running it on to gibbsjax's wall times")
    p.add_argument("--docs", type=int, help="synthetic corpus: documents (CPU 1000, GPU 100000)")
    p.add_argument("--doc-length", type=int, help="synthetic corpus: mean document length (100)")
    p.add_argument("--vocab", type=int, help="synthetic corpus: vocabulary size (CPU 2000, GPU 10000)")
    p.add_argument("--heldout", type=float, default=0.1, help="fraction of documents held out (0.1)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--profile", action="store_true",
                   help="instead of the time-to-quality run: per job, time the parts of one sweep side by side "
                   "(φ draw, z-updates, warm-up sweep, whole sweeps; min over repeats, after 50 warm-up sweeps)")
    args = p.parse_args(argv)
    defaults = GPU_DEFAULTS if args.device == "gpu" else CPU_DEFAULTS
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.sweeps = sorted(set(args.sweeps))
    if args.sweeps[0] < 1:
        p.error("--sweeps must be positive")
    common = parse_options(args.option, "--option")
    args.samplers = [parse_sampler(s, common) for s in args.samplers]
    unknown = set(args.peers) - {"tomotopy", "lda"}
    if unknown:
        p.error(f"unknown peers {sorted(unknown)}; choose from tomotopy, lda")
    jobs = []
    for job in args.jobs:
        corpus, _, k = job.partition(":")
        if corpus not in ("reuters", "synthetic") or not k.isdigit() or int(k) < 1:
            p.error(f"--jobs entries are reuters:K or synthetic:K, got {job!r}")
        jobs.append((corpus, int(k)))
    args.jobs = jobs
    if args.warmup_sweeps is None:
        args.warmup_sweeps = args.sweeps[-1] // 2
    return args


# ----------------------------------------------------------------------------- corpora and scoring
@dataclass
class Job:
    name: str
    train: object
    test: object
    k: int
    true_phi: object = None  # (K, V) for synthetic corpora


def reuters_job(k: int, heldout: float) -> Job:
    import lda.datasets

    from gibbsjax.corpus import Corpus

    corpus = Corpus.from_dtm(lda.datasets.load_reuters(), vocab=lda.datasets.load_reuters_vocab())
    train, test = corpus.split(heldout, seed=0)
    return Job(f"Reuters sample of the lda package, K = {k}", train, test, k)


def synthetic_job(k: int, args) -> Job:
    from gibbsjax.datasets.synthetic import lda_corpus

    corpus, phi, _ = lda_corpus(num_docs=args.docs, num_topics=k, vocab_size=args.vocab,
                                doc_length=args.doc_length, alpha=ALPHA, eta=ETA, seed=k)
    train, test = corpus.split(args.heldout, seed=0)
    return Job(f"synthetic LDA corpus (lda_corpus: {args.docs} docs of ~{args.doc_length} tokens, "
               f"V = {args.vocab}, alpha = {ALPHA}, eta = {ETA}, seed {k}), K = {k}", train, test, k, phi)


def phi_from_counts(nkw):
    """The one φ every system is scored with: (n_kw + η) / (n_k + V η)."""
    import numpy as np

    nkw = np.asarray(nkw, dtype=np.float64)
    return (nkw + ETA) / (nkw.sum(axis=1, keepdims=True) + nkw.shape[1] * ETA)


def mean_hellinger(phi, truth) -> float:
    """Mean Hellinger distance of the rows of ``phi`` to those of ``truth`` after the best one-to-one matching."""
    from scipy.optimize import linear_sum_assignment

    from gibbsjax.labels import distance_matrix

    dist = distance_matrix(phi, truth, "hellinger")
    rows, cols = linear_sum_assignment(dist)
    return float(dist[rows, cols].mean())


def score(job: Job, nkw) -> tuple[float, float]:
    from gibbsjax.models.lda import heldout_perplexity

    phi = phi_from_counts(nkw)
    perplexity = heldout_perplexity(phi, job.test, alpha=ALPHA, seed=0)
    hellinger = mean_hellinger(phi, job.true_phi) if job.true_phi is not None else math.nan
    return perplexity, hellinger


# ----------------------------------------------------------------------------- systems
# Each system is a generator: it yields (sweeps done, sampling seconds so far, n_kw (K, V))
# after reaching each checkpoint it is sent; timing stops before counts are read.
def gibbsjax_system(job: Job, name: str, options: dict, checkpoints, warmup_sweeps: int, seed: int,
                    info: dict):
    import jax
    import jax.numpy as jnp

    from gibbsjax.models import lda as glda

    factory = glda.SAMPLERS[name]
    try:
        kernel = factory(job.k, alpha=ALPHA, eta=ETA, **options)
    except TypeError as e:
        raise SystemExit(f"gibbsjax sampler {name} does not accept the options {options}: {e}") from None
    data = glda.data(job.train)
    warm_step = kernel.warmup_step
    info["warmup"] = (f"first {warmup_sweeps} sweeps: {kernel.warmup_name or 'warm-up step'}"
                      if warm_step is not None and warmup_sweeps > 0 else "none (every sweep exact)")
    if warm_step is None:
        warmup_sweeps = 0

    # one compiled block of `block` sweeps per transition, called as often as needed
    block = math.gcd(*checkpoints, warmup_sweeps)

    def compile_block(step):
        def run(key, state, t0, d):  # data as an argument: a closure would embed the corpus in the program
            def body(s, t):
                return step(jax.random.fold_in(key, t), s, d), None

            s, _ = jax.lax.scan(body, state, t0 + jnp.arange(block))
            return s

        shape = jax.eval_shape(lambda k_: kernel.init(k_, data), init_key)
        return jax.jit(run).lower(run_key, shape, jnp.asarray(0, jnp.int32), data).compile()

    key = jax.random.key(seed)
    init_key, run_key = jax.random.split(key)
    start = time.perf_counter()
    init = jax.jit(kernel.init).lower(init_key, data).compile()
    sampling = compile_block(kernel.step)
    warming = compile_block(warm_step) if warmup_sweeps else None
    counts = jax.jit(lambda z, d: glda.topic_counts(z, d, job.k)[1])
    info["compile_s"] = time.perf_counter() - start
    info["block"] = f"{block} sweeps per compiled call"
    target = yield None
    elapsed, done, state = 0.0, 0, None
    while target is not None:
        start = time.perf_counter()
        if state is None:
            state = init(init_key, data)
        for at in range(done, target, block):
            state = (warming if at < warmup_sweeps else sampling)(run_key, state, jnp.asarray(at, jnp.int32), data)
        jax.block_until_ready(state)
        elapsed += time.perf_counter() - start
        done = target
        target = yield done, elapsed, counts(state.z, data), 0 < done <= warmup_sweeps


def tomotopy_system(job: Job, workers: int, seed: int, info: dict):
    import numpy as np
    import tomotopy as tp

    info["version"] = tp.__version__
    mdl = tp.LDAModel(k=job.k, alpha=ALPHA, eta=ETA, seed=seed)
    mdl.optim_interval = 0
    for doc in job.train.to_token_lists():
        mdl.add_doc(doc)
    index = {w: i for i, w in enumerate(job.train.vocab)}
    target = yield None
    start = time.perf_counter()
    mdl.train(0, workers=workers)  # initial topics
    elapsed, done = time.perf_counter() - start, 0
    ours = None
    while target is not None:
        start = time.perf_counter()
        mdl.train(target - done, workers=workers)
        elapsed += time.perf_counter() - start
        done = target
        if ours is None:
            ours = np.array([index[w] for w in mdl.vocabs], np.int64)
        words = np.concatenate([np.asarray(d.words, np.int64) for d in mdl.docs])
        topics = np.concatenate([np.asarray(d.topics, np.int64) for d in mdl.docs])
        v = job.train.vocab_size
        nkw = np.bincount(topics * v + ours[words], minlength=job.k * v).reshape(job.k, v)
        target = yield done, elapsed, nkw, False


def lda_package_system(job: Job, seed: int, info: dict):
    import logging

    import lda
    import lda.utils
    import numpy as np

    logging.getLogger("lda").setLevel(logging.ERROR)
    info["version"] = getattr(lda, "__version__", "?")
    X = job.train.to_dtm().astype(np.int64)
    model = lda.LDA(n_topics=job.k, n_iter=1, alpha=ALPHA, eta=ETA, random_state=seed)
    target = yield None
    start = time.perf_counter()
    # what LDA.fit does, one sweep at a time (without its monitoring log-likelihood)
    random_state = lda.utils.check_random_state(seed)
    rands = model._rands.copy()
    model._initialize(X)
    elapsed, done = time.perf_counter() - start, 0
    while target is not None:
        start = time.perf_counter()
        for _ in range(target - done):
            random_state.shuffle(rands)
            model._sample_topics(rands)
        elapsed += time.perf_counter() - start
        done = target
        target = yield done, elapsed, model.nzw_.copy(), False


@dataclass
class Curve:
    label: str
    rows: list = field(default_factory=list)  # (sweeps, seconds, perplexity, hellinger, in warm-up)
    info: dict = field(default_factory=dict)
    gibbsjax: bool = False


def run_curve(label: str, system, job: Job, checkpoints, info: dict, time_targets=(),
              max_sweeps: int | None = None) -> Curve:
    """Drive a system through ``checkpoints``, then through one more checkpoint just
    short of each of ``time_targets`` (seconds) it has not reached yet, its sweeps
    predicted from the rate so far (at most ``max_sweeps``)."""
    curve = Curve(label, info=info)
    next(system)
    plan = list(checkpoints)
    targets = sorted(time_targets)
    i = 0
    while i < len(plan):
        sweeps, seconds, nkw, warm = system.send(plan[i])
        perplexity, hellinger = score(job, nkw)
        curve.rows.append((sweeps, seconds, perplexity, hellinger, warm))
        i += 1
        if i == len(plan):
            for t in targets:  # the first target not yet (nearly) reached
                nxt = int(0.97 * t * sweeps / max(seconds, 1e-9))
                if seconds < 0.9 * t and sweeps < nxt <= (max_sweeps or 0):
                    plan.append(nxt)
                    break
    system.close()
    return curve


# ----------------------------------------------------------------------------- report
def print_curves(job: Job, curves: list[Curve]) -> None:
    n = job.train.num_tokens
    print(f"\n{job.name}: {job.train.num_docs} training docs, {n} tokens, V = {job.train.vocab_size}; "
          f"{job.test.num_docs} held-out docs")
    synthetic = job.true_phi is not None
    w = max(len(c.label) for c in curves)
    print(f"{'system':{w}s} {'sweeps':>6s} {'wall s':>8s} {'M tok/s':>8s} {'perplexity':>10s}"
          + (f" {'Hellinger':>9s}" if synthetic else ""))
    for c in curves:
        for sweeps, seconds, perplexity, hellinger, warm in c.rows:
            line = (f"{c.label:{w}s} {sweeps:6d} {seconds:8.2f} {n * sweeps / seconds / 1e6:8.2f} "
                    f"{perplexity:10.1f}" + (f" {hellinger:9.4f}" if synthetic else ""))
            print(line + ("  (warm-up)" if warm else ""))
    for c in curves:
        extra = [f"{k} {v:.1f} s" if k == "compile_s" else f"{k}: {v}" for k, v in c.info.items()]
        if extra:
            print(f"  {c.label}: " + "; ".join(extra).replace("compile_s", "compile"))


def at_sweeps(curve: Curve, sweeps: int):
    return next((r for r in curve.rows if r[0] == sweeps), None)


def best_within(curve: Curve, seconds: float):
    """The curve's latest checkpoint reached within ``seconds`` (None if none)."""
    rows = [r for r in curve.rows if r[1] <= seconds]
    return rows[-1] if rows else None


def print_ratios(job: Job, curves: list[Curve], checkpoints) -> None:
    ref = next((c for c in curves if c.label.startswith("tomotopy")), None)
    if ref is None:
        return
    metrics = [("perplexity", 2)] + ([("Hellinger", 3)] if job.true_phi is not None else [])
    last = checkpoints[-1]
    r_last = at_sweeps(ref, last)
    for c in curves:
        if c is ref:
            continue
        print(f"{c.label} / {ref.label}:")
        for sweeps in checkpoints:
            a, b = at_sweeps(c, sweeps), at_sweeps(ref, sweeps)
            parts = [f"{name} {a[i] / b[i]:.3f}" for name, i in metrics]
            print(f"  equal sweeps {sweeps:5d}: time {a[1] / b[1]:7.2f}x; " + ", ".join(parts))
        for a in c.rows:
            b = best_within(ref, a[1])
            if b is None:
                continue
            parts = [f"{name} {a[i] / b[i]:.3f}" for name, i in metrics]
            print(f"  equal wall time {a[1]:8.2f} s ({a[0]} sweeps vs {ref.label.split()[0]}'s {b[0]} "
                  f"in {b[1]:.2f} s): " + ", ".join(parts))
        for name, i in metrics:
            hit = next((a for a in c.rows if a[i] <= r_last[i]), None)
            goal = f"{name} of {ref.label.split()[0]} at {last} sweeps ({r_last[i]:.4g}, {r_last[1]:.2f} s)"
            if hit is None:
                print(f"  time to the {goal}: not reached in {c.rows[-1][0]} sweeps "
                      f"(best {min(a[i] for a in c.rows):.4g})")
            else:
                print(f"  time to the {goal}: {hit[1]:.2f} s at {hit[0]} sweeps = "
                      f"{hit[1] / r_last[1]:.3f}x")


def machine_line(args) -> str:
    import platform

    import jax

    dev = jax.devices()[0]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    return (f"{time.strftime('%Y-%m-%d %H:%M')}; {platform.node() or 'host'}: {os.cpu_count()} CPUs, "
            f"load average {load:.1f} at start; jax {jax.__version__} on {dev.platform} ({dev.device_kind}); "
            f"Python {platform.python_version()}")


def profile_sweep(job: Job, reps: int = 7, block: int = 10) -> None:
    """Time the parts of one sweep on ``job``'s training corpus, side by side in one process.

    Each part runs ``block`` times in a compiled ``lax.scan`` (fresh key per call); the parts
    are timed in turn, ``reps`` rounds, and the minimum per sweep is printed (the machine is
    shared: the minimum is the least disturbed).  The state is the default kernel's after 50
    warm-up sweeps, so the counts are as sparse as in the sampling phase."""
    import jax
    import jax.numpy as jnp

    from gibbsjax import random as gr
    from gibbsjax.models import lda as glda

    k = job.k
    d = glda.data(job.train)
    n = int(d.mask.sum())
    pc, unc = glda.partially_collapsed(k, ALPHA, ETA), glda.uncollapsed(k, ALPHA, ETA)
    state = pc.init(jax.random.key(0), d)
    state = jax.jit(lambda s: jax.lax.fori_loop(
        0, 50, lambda t, s: pc.warmup_step(jax.random.key(t), s, d), s))(state)

    def phi_dense(key, s):  # the φ draw before log_dirichlet_counts: Marsaglia-Tsang for every entry
        _, nkw, _ = glda.topic_counts(s.z, d, k)
        return s._replace(log_phi=gr.log_dirichlet(key, nkw.astype(jnp.float32) + ETA))

    parts = {
        "phi: log_dirichlet_counts": lambda key, s: s._replace(log_phi=glda.sample_log_phi(key, s, d, K=k, eta=ETA)),
        "phi: log_dirichlet (before)": phi_dense,
        "z-update lanes": lambda key, s: s._replace(z=glda.sample_z_lanes(key, s, d, K=k, alpha=ALPHA)),
        "z-update uncollapsed (theta, z)": lambda key, s: s._replace(
            z=glda.sample_z_uncollapsed(key, s, d, K=k, alpha=ALPHA)),
        "sweep partially collapsed": lambda key, s: pc.step(key, s, d),
        "sweep with the phi draw before": lambda key, s: (lambda s2: s2._replace(z=glda.sample_z_lanes(
            jax.random.fold_in(key, 1), s2, d, K=k, alpha=ALPHA)))(phi_dense(key, s)),
        "sweep uncollapsed": lambda key, s: unc.step(key, s, d),
        "warm-up sweep (fast)": lambda key, s: pc.warmup_step(key, s, d),
    }
    try:  # tomotopy's single worker, timed in the same rounds: `block` sweeps per round
        import tomotopy as tp

        mdl = tp.LDAModel(k=k, alpha=ALPHA, eta=ETA, seed=1)
        mdl.optim_interval = 0
        for doc in job.train.to_token_lists():
            mdl.add_doc(doc)
        mdl.train(50, workers=1)
    except ImportError:
        mdl = None
    runs = {name: jax.jit(lambda key, s, f=f: jax.lax.scan(lambda c, kk: (f(kk, c), None), s,
                                                             jax.random.split(key, block))[0])
            for name, f in parts.items()}
    for run in runs.values():
        jax.block_until_ready(run(jax.random.key(0), state))
    times = {name: [] for name in runs}
    tomotopy_label = "tomotopy sweep (1 worker)"
    if mdl is not None:
        times[tomotopy_label] = []
    for r in range(reps):
        for name, run in runs.items():
            t = time.perf_counter()
            jax.block_until_ready(run(jax.random.key(r + 1), state))
            times[name].append((time.perf_counter() - t) / block)
        if mdl is not None:
            t = time.perf_counter()
            mdl.train(block, workers=1)
            times[tomotopy_label].append((time.perf_counter() - t) / block)
    nnz = int((glda.topic_counts(state.z, d, k)[1] > 0).sum())
    print(f"\n{job.name}: {n} tokens, grid {d.words.shape[0]} steps x {d.words.shape[1]} lanes, "
          f"{nnz} nonzero n_kw of {k * d.word_counts.shape[0]}; ms per sweep (min of {reps})")
    for name, ts in times.items():
        ratio = f"  {min(ts) / min(times[tomotopy_label]):5.2f}x tomotopy" if mdl is not None else ""
        print(f"  {name:<34} {1e3 * min(ts):8.2f} ms  {n / min(ts) / 1e6:6.2f} M tok/s{ratio}")


def main(argv=None):
    args = parse_args(argv)
    if args.device == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"
    import jax

    if args.device == "gpu" and jax.default_backend() != "gpu":
        raise SystemExit(f"--device gpu, but jax's default backend is {jax.default_backend()}")
    workers = args.workers or (os.cpu_count() or 1)
    from gibbsjax.models import lda as glda

    for name, options in args.samplers:  # bad names or options fail before anything runs
        if name not in glda.SAMPLERS:
            raise SystemExit(f"unknown gibbsjax sampler {name!r}; choose from {', '.join(glda.SAMPLERS)}")
        try:
            glda.SAMPLERS[name](2, alpha=ALPHA, eta=ETA, **options)
        except (TypeError, ValueError) as e:
            raise SystemExit(f"gibbsjax sampler {name} with options {options}: {e}") from None
    print(machine_line(args))
    print(f"alpha = {ALPHA}, eta = {ETA}; one chain (gibbsjax) / {workers} worker(s) (tomotopy); "
          f"checkpoints {args.sweeps}; scored alike: phi = (n_kw + eta) / (n_k + V eta) from each system's "
          f"own counts, document completion on the same held-out tokens")
    for corpus, k in args.jobs:
        job = reuters_job(k, args.heldout) if corpus == "reuters" else synthetic_job(k, args)
        if args.profile:
            profile_sweep(job)
            continue
        curves = []
        for name, options in args.samplers:
            label = "gibbsjax " + name + "".join(f" {o}={v}" for o, v in options.items())
            info: dict = {}
            curves.append(run_curve(label, gibbsjax_system(job, name, options, args.sweeps,
                                                          args.warmup_sweeps, args.seed, info), job, args.sweeps, info))
            curves[-1].gibbsjax = True
        # tomotopy goes on to (just short of) every gibbsjax checkpoint's wall time
        targets = [] if args.no_equal_time else sorted({r[1] for c in curves for r in c.rows})
        max_sweeps = args.sweeps[-1] * 64
        if "lda" in args.peers:
            info = {}
            curves.insert(0, run_curve("lda (Cython, collapsed)", lda_package_system(job, args.seed, info), job,
                                       args.sweeps, info))
        if "tomotopy" in args.peers:
            info = {}
            label = f"tomotopy ({workers} worker{'s' if workers > 1 else ''})"
            curves.insert(0, run_curve(label, tomotopy_system(job, workers, args.seed, info), job,
                                       args.sweeps, info, targets, max_sweeps))
        print_curves(job, curves)
        print_ratios(job, curves, args.sweeps)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
