"""The GPU table of issue 22 in one command: kernels, whole sweeps, 100 M tokens, time to quality.

Run on the GPU machine (see ../shared/gpu/README.md), from the project root:
    . .gpu/setup.sh && python3 benchmarks/gpu_table.py --json $OUT/gpu_table.json
Smoke test on a CPU (Pallas interpret mode, tiny sizes; the timings mean nothing there):
    python3 benchmarks/gpu_table.py --smoke --json /tmp/gpu_table.json

Corpora: synthetic, from the LDA generative process, drawn on the device (`corpus_on_device`:
θ_d ~ Dir(α), φ_k ~ Dir(η), document lengths ~ Poisson(100), z_i ~ Cat(θ_d), w_i ~ Cat(φ_{z_i}) by
inverse CDF; a second or two for 100 M tokens on a GPU where `lda_corpus` took 87 s), V = 10,000,
α = 0.1, η = 0.01.  Sections (each row in the printed table and in ``--json``):

* ``kernels``: at K = 100, 1,000 and 10,000 on 10 M tokens, with the pieces of
  `benchmarks/lda_pallas.py`: the z-update alone (XLA scan, sparse, the fused Pallas kernel for a
  short lanes list around its default), the φ step with each Dirichlet draw, the count table n_kw
  alone; compile apart, mean of ``--reps`` calls; a piece that fails (a resource limit of a kernel
  at K = 10,000, the device's memory) is a row that says why, and the others still run;
* ``sweeps``: ``gibbsjax.sample`` of the default kernel (``lda.partially_collapsed(K)``, every
  option "auto"), no warm-up, ``--sweeps`` draws (a fifth of them above K = 1,000), 1 chain and
  4 chains (4 at K = 100 only unless ``--chains-all``); the first call (compile included) and the
  second (compile excluded) timed;
* ``large``: 100 M tokens (1 M documents) at K = 100 and 1,000, each right after the 10 M-token rows
  of its K, the partially collapsed and the uncollapsed sampler, each in a fresh process (so each
  peak is its own): tokens/s of the second ``sample`` call and the device's peak memory
  (``memory_stats()["peak_bytes_in_use"]``) after packing and after sampling;
* ``outside``: where the second ``sample`` call of each ``sweeps`` and ``large`` row spends its time
  outside the sweeps (``benchmarks/sample_profile.py``'s timers on that same call, no extra call):
  memory check, init, records to host, data fingerprint, InferenceData, ...; ``sweeps_s`` and
  ``outside_s`` = whole - sweeps (issue 22, point 5);
* ``quality``: 10 M tokens, K = 100, true topics known: the mean Hellinger distance of the
  posterior-mean topics to the true ones after Hungarian matching, for gibbsjax's default path
  (``sample``, ``num_warmup = num_draws = budget / 2``, 1 chain; wall time of the whole call with
  compile and of a second call without) at ``--quality-sweeps`` budgets, then (after the other
  sections) twice the largest while none has reached ``--quality-target`` (up to ``--quality-max``);
* ``tomotopy``: ``tomotopy.LDAModel(k=K, alpha, eta)`` trained with every CPU this process may use
  as workers (``cpu_workers``: the affinity mask and a cgroup quota, not the host's count;
  ``--tomotopy-workers``) to checkpoints up to 1,000 sweeps on the same corpus, in a background
  process started first.  It shares the CPUs with this process while the GPU rows run: tomotopy's
  seconds include that, and so do gibbsjax's compile times (XLA compiles on the CPU); the quality
  rows' second-call seconds are the GPU's.  The summary gives the Hellinger tomotopy reaches at its
  last checkpoint, the fastest gibbsjax budget that reaches it and the ratio of times (target:
  ≤ 1/50).  Without tomotopy the row says so and is skipped.

An error at one K (the device's memory, a kernel) is listed under ``skipped`` and the next K, the
rest and tomotopy still run.  A time budget (``--budget`` seconds from the start of the process,
imports and the device's start-up included; default 480, so that with the GPU kit's set-up the
command takes under 9 minutes) is checked before each item against an estimate of its cost (about
twice the H100 figures measured before issue 22): what would overrun is skipped and listed under
``skipped``; a child process is stopped at three times its estimate.  ``--json`` is rewritten
after every section, so a run stopped from outside keeps what it measured (``"complete": false``).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: the time budget counts from here: the imports and the device's start-up below are part of it
STARTED = time.perf_counter()
# the sampler runs of the "large" rows are child processes sharing the GPU with this one
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lda_pallas  # noqa: E402  (the benchmark next to this one: its timing pieces)
import sample_profile  # noqa: E402  (the phases of one sample call: the "outside" section)

from gibbsjax.corpus import Corpus  # noqa: E402
from gibbsjax.models import lda  # noqa: E402
from gibbsjax.models.lda import pallas as lda_pallas_kernel  # noqa: E402
from gibbsjax.outputs import write_atomic  # noqa: E402

ALPHA, ETA = lda_pallas.ALPHA, lda_pallas.ETA


# ----------------------------------------------------------------------------- corpora
def inverse_cdf_search(cdf, rows, u):
    """The smallest j with cdf[rows, j] > u (u below the row's last entry), by binary search: O(log n)
    gathers per query, so a token's draw from a row of probabilities costs no O(n) work."""
    n = cdf.shape[1]
    lo = jnp.zeros(u.shape, jnp.int32)
    hi = jnp.full(u.shape, n - 1, jnp.int32)

    def body(_, bounds):
        lo, hi = bounds
        mid = (lo + hi) // 2
        right = cdf[rows, mid] > u
        return jnp.where(right, lo, mid + 1), jnp.where(right, mid, hi)

    lo, _ = jax.lax.fori_loop(0, max(1, n.bit_length()), body, (lo, hi))
    return lo


@functools.partial(jax.jit, static_argnames=("num_tokens",))
def _tokens(key, theta, phi, lengths, num_tokens):
    k_z, k_w = jax.random.split(key)
    docs = jnp.repeat(jnp.arange(lengths.size, dtype=jnp.int32), lengths, total_repeat_length=num_tokens)
    cdf_theta = jnp.cumsum(theta, axis=1)
    z = inverse_cdf_search(cdf_theta, docs, _below(jax.random.uniform(k_z, (num_tokens,)), cdf_theta[docs, -1]))
    cdf_phi = jnp.cumsum(phi, axis=1)
    return inverse_cdf_search(cdf_phi, z, _below(jax.random.uniform(k_w, (num_tokens,)), cdf_phi[z, -1]))


def _below(u, total):
    """u · total, kept below total (the float32 product may round up to it)."""
    return jnp.minimum(u * total, jnp.nextafter(total, jnp.zeros_like(total)))


#: Dirichlet entries drawn per call at most (:func:`dirichlet_rows`): ``jax.random.dirichlet``'s gamma
#: loop needs about 144 bytes of temporaries per entry, so θ of 10⁵ documents × 10⁴ topics (10⁹
#: entries) in one call would need 144 GB; in blocks of 2²⁴ entries, 2.4 GB
DIRICHLET_BLOCK_ENTRIES = 1 << 24


@functools.partial(jax.jit, static_argnames=("concentration", "num_rows", "size"))
def dirichlet_rows(key, concentration: float, num_rows: int, size: int):
    """``num_rows`` draws of Dir_size(concentration), (num_rows, size) float32, made in blocks of
    rows (``lax.map``, a key per block) so that the temporaries of one block bound the memory."""
    block = max(1, min(num_rows, DIRICHLET_BLOCK_ENTRIES // size))
    blocks = -(-num_rows // block)
    alpha = jnp.full(size, concentration, jnp.float32)
    rows = jax.lax.map(lambda k: jax.random.dirichlet(k, alpha, (block,)), jax.random.split(key, blocks))
    return rows.reshape(blocks * block, size)[:num_rows]


def corpus_on_device(num_tokens: int, num_topics: int, vocab_size: int, *, doc_length: int = 100, seed: int = 0):
    """(words int32, doc offsets int64, true φ (K, V) float64) of a corpus drawn from the LDA
    generative process on JAX's default device: θ_d ~ Dir_K(α), φ_k ~ Dir_V(η) (both in blocks of
    rows, :func:`dirichlet_rows`), lengths ~ Poisson(``doc_length``) (at least 1), z_i ~ Cat(θ_d),
    w_i ~ Cat(φ_{z_i}) (inverse CDF, float32).  Tokens within a document are exchangeable, so no
    shuffle is needed."""
    k_len, k_theta, k_phi, k_tok = jax.random.split(jax.random.key(seed), 4)
    num_docs = max(1, num_tokens // doc_length)
    lengths = jnp.maximum(jax.random.poisson(k_len, doc_length, (num_docs,)), 1).astype(jnp.int32)
    phi = dirichlet_rows(k_phi, ETA, num_topics, vocab_size)
    theta = dirichlet_rows(k_theta, ALPHA, num_docs, num_topics)
    n = int(lengths.sum())
    words = _tokens(k_tok, theta, phi, lengths, n)
    offsets = np.concatenate([[0], np.cumsum(np.asarray(lengths, np.int64))])
    return np.asarray(words, np.int32), offsets, np.asarray(phi, np.float64)


def make_corpus(words, offsets, vocab_size: int) -> Corpus:
    """A :class:`Corpus` of generated tokens (words named ``w0 .. w{V-1}``)."""
    return Corpus(words, offsets, tuple(f"w{i}" for i in range(vocab_size)))


def mean_hellinger(phi, truth) -> float:
    """Mean Hellinger distance of the rows of ``phi`` to those of ``truth`` after the best one-to-one matching."""
    from scipy.optimize import linear_sum_assignment

    from gibbsjax.labels import distance_matrix

    dist = distance_matrix(np.asarray(phi, np.float64), truth, "hellinger")
    rows, cols = linear_sum_assignment(dist)
    return float(dist[rows, cols].mean())


# ----------------------------------------------------------------------------- budget
class Budget:
    """Elapsed time against ``--budget``: ``fits(what, estimate)`` says whether an item of about
    ``estimate`` seconds still fits, and records what it skips."""

    def __init__(self, seconds: float, scale: float, start: float | None = None):
        self.start = time.perf_counter() if start is None else start
        self.seconds, self.scale, self.skipped = seconds, scale, []

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.seconds - self.elapsed()

    def fits(self, what: str, estimate: float) -> bool:
        estimate *= self.scale
        if self.elapsed() + estimate <= self.seconds:
            return True
        note = f"{what}: skipped (about {estimate:.0f} s, {max(self.left(), 0):.0f} s of the budget left)"
        self.skipped.append(note)
        print(f"  {note}", flush=True)
        return False


def guarded(budget, what, fn, default=None, verb="failed"):
    """``fn()``, or ``default`` with the error listed under ``skipped`` as ``what: verb (error)`` (e.g.
    a resource limit of the fused kernel at K = 10,000, or the device's memory): one failing item
    never ends the table."""
    try:
        return fn()
    except Exception as err:  # noqa: BLE001 - reported, and the other rows still run
        note = f"{what}: {verb} ({type(err).__name__}: {str(err).strip()[:300]})"
        budget.skipped.append(note)
        print(f"  {note}", flush=True)
        return default


# ----------------------------------------------------------------------------- sections
def _print(row):
    fields = [f"{row['section']:<8}", f"K {row.get('K', '-')!s:>6}", f"{row['what']:<44}"]
    for name, fmt in (("chains", "{} ch"), ("lanes", "lanes {}"), ("warps", "warps {}"), ("sweeps", "{} sweeps"),
                      ("compile_s", "compile {:.2f} s"), ("ms", "{:.3f} ms"), ("seconds", "{:.2f} s"),
                      ("seconds_with_compile", "({:.2f} s with compile)"), ("Mtok_s", "{:.1f} M tok/s"),
                      ("peak_data_GiB", "peak: data {:.2f} GiB"), ("peak_GiB", "in all {:.2f} GiB"),
                      ("hellinger", "Hellinger {:.4f}"), ("sweeps_s", "sweeps {:.3f} s"),
                      ("outside_s", "outside {:.3f} s"), ("largest", "largest: {}"),
                      ("hellinger_last_state", "(last state {:.4f})"),
                      ("differ", "differ {}")):
        if row.get(name) not in (None, "-") and not (name == "differ" and not row[name]):
            fields.append(fmt.format(row[name]))
    print("  " + "  ".join(fields), flush=True)


def _add(rows, section, **row):
    row = {"section": section, **row}
    rows.append(row)
    _print(row)
    return row


def kernel_rows(d, k, args, interpret, budget, cost):
    """z-update, φ step and count table alone (the pieces of lda_pallas.py); ``cost``: the H100 seconds
    of about one XLA-scan z-update, which the estimates scale."""
    rows = []
    kernel = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
    state = kernel.init(jax.random.key(0), d)
    key = jax.random.key(1)
    default = lda_pallas_kernel.default_lanes_per_program(k)
    lanes = sorted({max(1, default // 2), default, 2 * default}) if args.lanes is None else args.lanes
    # 4 warps (measured best at K = 100 and 1,000) and the default's rule where it differs (K = 10,000)
    warps = sorted({4, lda_pallas_kernel.default_num_warps(k, default)})
    if budget.fits(f"K = {k}: z-updates", 10 + 4 * len(lanes) * len(warps) + (args.reps + 2) * 0.12 * cost):
        z_rows, _ = guarded(budget, f"K = {k}: z-updates", lambda: lda_pallas.bench_z(
            d, k, state, key, lanes=lanes, warps=warps, reps=args.reps, interpret=interpret), ([], None))
        for row in z_rows:
            _add(rows, "kernels", **row)
    if budget.fits(f"K = {k}: phi draws", 4 + (args.reps + 1) * 0.1 * cost):
        phi_rows = guarded(budget, f"K = {k}: phi draws",
                           lambda: lda_pallas.bench_phi(d, k, state, key, reps=args.reps), [])
        for row in phi_rows:
            _add(rows, "kernels", **row)
    counts = jax.jit(lambda z, d: lda.word_topic_counts(z, d, k))
    timing = guarded(budget, f"K = {k}: count table", lambda: lda_pallas.timed(counts, state.z, d, reps=args.reps))
    if timing is None:
        return rows
    compile_s, per = timing
    tokens = int(d.mask.sum())
    _add(rows, "kernels", K=k, what="count table n_kw (scatter-add)", compile_s=compile_s, ms=1e3 * per,
         Mtok_s=tokens / per / 1e6)
    return rows


def sample_twice(kernel, d, *, chains, num_warmup, num_draws, seed=0, phases=None):
    """Wall seconds of the first ``gibbsjax.sample`` call (compile included), of the second (the
    compiled code reused), and the second call's InferenceData.  ``phases``: a dict filled with the
    second call's seconds per phase (:func:`sample_profile.timed_call`)."""
    import gibbsjax

    def call():
        return gibbsjax.sample(kernel, d, seed=seed, num_chains=chains, num_warmup=num_warmup,
                               num_draws=num_draws, progress=False, log_likelihood=False)  # the sampler alone

    t = time.perf_counter()
    call()
    first = time.perf_counter() - t
    if phases is None:
        t = time.perf_counter()
        idata = call()
        return first, time.perf_counter() - t, idata
    idata, second, found = sample_profile.timed_call(call, False)
    phases.update(found)
    return first, second, idata


def outside_row(rows, k, what, chains, whole, phases):
    """The ``outside`` row of a timed second call: seconds of the sweeps, of the rest, the largest
    phases outside the sweeps, and every phase."""
    sweeps = phases.get("warm-up sweeps", 0.0) + phases.get("sampling sweeps", 0.0)
    rest = sorted(((v, n) for n, v in phases.items() if not n.endswith("sweeps")), reverse=True)[:4]
    return _add(rows, "outside", K=k, what=what, chains=chains, seconds=whole, sweeps_s=sweeps,
                outside_s=whole - sweeps, largest=", ".join(f"{n} {v:.3f} s" for v, n in rest),
                phases=phases)


#: estimated H100 seconds of one sweep of one chain over 10 M tokens at K = 100 (``cost`` 1): twice
#: what the sweep measured before issue 22 (281 M tokens/s), so that a row is skipped only when it
#: would really not fit.  The ``cost`` of a K scales it by (K / 100)^0.75.
SWEEP_S = 0.08


def sweeps_at(args, k: int) -> int:
    """Draws per timed ``sample`` call at ``k`` topics: ``--sweeps``, a fifth of them (at least 2)
    above 1,000 topics, where one sweep is long enough to time."""
    return args.sweeps if k <= 1000 else max(2, args.sweeps // 5)


def sweep_rows(d, k, chains_list, args, budget, cost, outside=None):
    """The ``sweeps`` rows; ``outside`` (a list) gets the phases of each second call."""
    rows = []
    tokens = int(d.mask.sum())
    kernel = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
    what = f"sample, default ({lda.resolve_z_update()}, {lda.resolve_dirichlet_draw()} phi)"
    sweeps = sweeps_at(args, k)
    for chains in chains_list:
        if not budget.fits(f"K = {k}: sample {chains} chains", 15 + 2 * SWEEP_S * cost * chains * sweeps):
            continue
        phases = {}
        timing = guarded(budget, f"K = {k}: sample {chains} chains", lambda: sample_twice(
            kernel, d, chains=chains, num_warmup=0, num_draws=sweeps, phases=phases))
        if timing is None:
            continue
        first, second, _ = timing
        _add(rows, "sweeps", K=k, what=what, chains=chains, sweeps=sweeps, compile_s=max(first - second, 0.0),
             ms=1e3 * second / sweeps, Mtok_s=chains * tokens * sweeps / second / 1e6)
        if outside is not None:
            outside_row(outside, k, f"second sample call, {tokens:,} tokens", chains, second, phases)
    return rows


CHILD = r"""
import json, sys, time
import numpy as np, jax
import gibbsjax
from gibbsjax.models import lda
folder, sampler = sys.argv[1], sys.argv[2]
k, sweeps, alpha, eta = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
sys.path.insert(0, sys.argv[7])
import sample_profile
dev = jax.devices()[0]
def peak():
    stats = dev.memory_stats() if hasattr(dev, "memory_stats") else None
    value = (stats or {}).get("peak_bytes_in_use")
    return None if value is None else value / 2**30
packed = np.load(folder + "/packed.npz")
t = time.perf_counter()
d = lda.LDAData(*(jax.numpy.asarray(packed[f]) for f in lda.LDAData._fields))
jax.block_until_ready(d)
load_s = time.perf_counter() - t
tokens = int(packed["doc_lengths"].sum())
peak_data = peak()
kernel = getattr(lda, sampler)(k, alpha=alpha, eta=eta)
def call():
    return gibbsjax.sample(kernel, d, seed=0, num_chains=1, num_warmup=0, num_draws=sweeps, progress=False,
                           log_likelihood=False)
t = time.perf_counter()
call()
first = time.perf_counter() - t
_, second, phases = sample_profile.timed_call(call, False)
print("RESULT " + json.dumps({"tokens": tokens, "load_s": load_s, "first_s": first, "second_s": second,
                              "peak_data_GiB": peak_data, "peak_GiB": peak(), "phases": phases}))
"""


def large_rows(args, budget, topics, folder, cost=1.0, packed=None, outside=None):
    """100 M tokens: generated and packed here once, then each sampler in a fresh process (its
    own device peak) that loads the packed arrays (kept in ``folder`` for a later call).
    ``packed``: an :class:`LDAData` of ``args.large_tokens`` tokens already packed (the first
    corpus, when it has that size, as in ``--smoke``), used instead of generating another."""
    rows = []
    tokens = args.large_tokens
    if not topics:
        return rows
    if packed is not None and not os.path.exists(f"{folder}/packed.npz"):
        np.savez(f"{folder}/packed.npz", **{f: np.asarray(getattr(packed, f)) for f in lda.LDAData._fields})
        print(f"  large corpus: the first corpus ({tokens:,} tokens), already packed", flush=True)
    if not os.path.exists(f"{folder}/packed.npz"):
        if not budget.fits("large corpus: generate and pack", 10 + 25 * cost * tokens / 1e8):
            return rows
        t = time.perf_counter()
        words, offsets, _ = corpus_on_device(tokens, 100, args.vocab, seed=2)
        generate_s = time.perf_counter() - t
        d = lda.data(make_corpus(words, offsets, args.vocab))
        np.savez(f"{folder}/packed.npz", **{f: np.asarray(getattr(d, f)) for f in lda.LDAData._fields})
        print(f"  large corpus: {words.size:,} tokens, {offsets.size - 1:,} documents, grid {tuple(d.words.shape)} "
              f"({generate_s:.1f} s to generate, {time.perf_counter() - t - generate_s:.1f} s to pack and save)",
              flush=True)
        del words, offsets, d
    plan = [(k, s) for k in topics for s in ("partially_collapsed", "uncollapsed")]
    for k, sampler in plan:
        sweeps = args.large_sweeps if sampler == "partially_collapsed" else max(1, args.large_sweeps // 4)
        # H100 seconds per sweep of 100 M tokens at K = 100: about what was measured before issue 22
        # (485 M tokens/s partially collapsed), and half the old uncollapsed sweep (17.7 M tokens/s)
        per_sweep = cost * tokens / 1e8 * (0.25 if sampler == "partially_collapsed" else 3.0) * (k / 100) ** 0.75
        estimate = 25 + 2 * sweeps * per_sweep
        if not budget.fits(f"large, {sampler}, K = {k}", estimate):
            continue
        try:
            out = subprocess.run([sys.executable, "-c", CHILD, folder, sampler, str(k), str(sweeps),
                                  str(ALPHA), str(ETA), str(Path(__file__).resolve().parent)],
                                 capture_output=True, text=True,
                                 timeout=max(min(budget.left(), 3 * estimate + 60), 1))
        except subprocess.TimeoutExpired:
            budget.skipped.append(f"large, {sampler}, K = {k}: stopped (past three times its estimate, or the "
                                  "end of the budget)")
            continue
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            budget.skipped.append(f"large, {sampler}, K = {k}: failed: {out.stderr.strip()[-300:]}")
            print(f"  {budget.skipped[-1]}", flush=True)
            continue
        r = json.loads(line[7:])
        _add(rows, "large", K=k, what=f"{sampler}, {r['tokens']:,} tokens", chains=1,
             compile_s=max(r["first_s"] - r["second_s"], 0.0), load_s=r["load_s"],
             ms=1e3 * r["second_s"] / sweeps, Mtok_s=r["tokens"] * sweeps / r["second_s"] / 1e6,
             peak_data_GiB=r["peak_data_GiB"], peak_GiB=r["peak_GiB"])
        if outside is not None:
            outside_row(outside, k, f"second sample call, {sampler}, {r['tokens']:,} tokens", 1, r["second_s"],
                        r["phases"])
    return rows


TOMOTOPY = r"""
import json, os, sys, time
import numpy as np
try:
    import tomotopy as tp
except ImportError as err:
    print("RESULT " + json.dumps({"error": f"tomotopy is not importable ({err})"}), flush=True); sys.exit(0)
folder, k = sys.argv[1], int(sys.argv[2])
alpha, eta, deadline = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
checkpoints = [int(c) for c in sys.argv[6].split(",")]
words = np.load(folder + "/words.npy"); offsets = np.load(folder + "/offsets.npy")
vocab = int(np.load(folder + "/vocab.npy"))
names = [f"w{i}" for i in range(vocab)]
workers = int(sys.argv[7])
mdl = tp.LDAModel(k=k, alpha=alpha, eta=eta, seed=0)
mdl.optim_interval = 0
t = time.perf_counter()
for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
    mdl.add_doc([names[w] for w in words[a:b].tolist()])
add_s = time.perf_counter() - t
t = time.perf_counter()
mdl.train(0, workers=workers)
elapsed, done = time.perf_counter() - t, 0
ours = None
for target in checkpoints:
    per_sweep = elapsed / done if done else 0.0
    if time.time() + per_sweep * (target - done) * 1.1 > deadline:
        print("RESULT " + json.dumps({"stopped": target}), flush=True); break
    t = time.perf_counter()
    mdl.train(target - done, workers=workers)
    elapsed += time.perf_counter() - t
    done = target
    if ours is None:
        ours = np.array([int(w[1:]) for w in mdl.vocabs], np.int64)
    w = np.concatenate([np.asarray(d.words, np.int64) for d in mdl.docs])
    z = np.concatenate([np.asarray(d.topics, np.int64) for d in mdl.docs])
    nkw = np.bincount(z * vocab + ours[w], minlength=k * vocab).reshape(k, vocab)
    np.save(folder + f"/tomotopy_{done}.npy", nkw)
    print("RESULT " + json.dumps({"sweeps": done, "seconds": elapsed, "add_s": add_s, "workers": workers,
                                  "version": tp.__version__}), flush=True)
"""


def phi_from_counts(nkw):
    """The one φ every system is scored with: (n_kw + η) / (n_k + V η)."""
    nkw = np.asarray(nkw, np.float64)
    return (nkw + ETA) / (nkw.sum(axis=1, keepdims=True) + nkw.shape[1] * ETA)


def quality_rows(d, truth, args, budget, cost, budgets):
    """gibbsjax's default path at each of ``budgets`` (sweeps): Hellinger of the posterior mean (what
    ``sample`` gives), and of the last state's counts smoothed as tomotopy's are (for reference)."""
    rows = []
    k = truth.shape[0]
    kernel = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
    for sweeps in budgets:
        if not budget.fits(f"quality, gibbsjax {sweeps} sweeps", 20 + 2 * cost * sweeps * 0.06):
            continue
        warm = sweeps // 2
        timing = guarded(budget, f"quality, gibbsjax {sweeps} sweeps", lambda: sample_twice(
            kernel, d, chains=1, num_warmup=warm, num_draws=sweeps - warm))
        if timing is None:
            continue
        first, second, idata = timing
        topic_word = np.asarray(idata.posterior_mean["topic_word"])[0]
        z = jnp.asarray(idata.sampler_state["state__z"].values[0])
        last = phi_from_counts(lda.topic_counts(z, d, k)[1])  # scored as tomotopy's final state is
        _add(rows, "quality", K=k, what="gibbsjax default, sample", sweeps=sweeps, seconds=second,
             seconds_with_compile=first, hellinger=mean_hellinger(topic_word, truth),
             hellinger_last_state=mean_hellinger(last, truth))
    return rows


def longer_quality_rows(d, truth, args, budget, cost, rows):
    """While none of ``rows`` has reached ``--quality-target`` (tomotopy's Hellinger after 1,000 sweeps
    in issue 22), a budget of twice the largest, up to ``--quality-max`` sweeps: the table must show a
    budget that reaches tomotopy's quality for the time ratio to exist.  Run after every K's rows, so
    that these longer budgets never crowd out the larger K."""
    more = []
    while rows + more and min(r["hellinger"] for r in rows + more) > args.quality_target:
        sweeps = 2 * max(r["sweeps"] for r in rows + more)
        if sweeps > args.quality_max:
            break
        got = quality_rows(d, truth, args, budget, cost, [sweeps])
        if not got:  # skipped (the budget) or failed: no longer one either
            break
        more += got
    return more


def tomotopy_rows(proc, folder, truth, budget, wait: bool):
    """Collect the background tomotopy run's checkpoints (waiting for it until the budget ends)."""
    rows, notes = [], []
    try:
        out, _ = proc.communicate(timeout=max(budget.left(), 1) if wait else 1)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        notes.append("tomotopy: stopped at the end of the budget")
    for line in out.splitlines():
        if not line.startswith("RESULT "):
            continue
        r = json.loads(line[7:])
        if "error" in r:
            notes.append(f"tomotopy: {r['error']}: row skipped")
        elif "stopped" in r:
            notes.append(f"tomotopy: checkpoint {r['stopped']} sweeps skipped (past the budget)")
        else:
            nkw = np.load(f"{folder}/tomotopy_{r['sweeps']}.npy")
            _add(rows, "tomotopy", K=truth.shape[0], what=f"tomotopy {r['version']}, {r['workers']} workers",
                 sweeps=r["sweeps"], seconds=r["seconds"], hellinger=mean_hellinger(phi_from_counts(nkw), truth))
    for note in notes:
        print(f"  {note}", flush=True)
    budget.skipped.extend(notes)
    return rows


def summary(quality, tomotopy) -> dict:
    """tomotopy's last Hellinger, the first gibbsjax budget reaching it, and the ratio of times."""
    if not tomotopy or not quality:
        return {"note": "no comparison (tomotopy or gibbsjax rows missing: see skipped)"}
    ref = max(tomotopy, key=lambda r: r["sweeps"])
    reached = [r for r in quality if r["hellinger"] <= ref["hellinger"]]
    out = {"tomotopy_sweeps": ref["sweeps"], "tomotopy_seconds": ref["seconds"], "tomotopy_hellinger": ref["hellinger"]}
    if not reached:
        out["note"] = "gibbsjax did not reach tomotopy's Hellinger within its budgets"
        return out
    best = min(reached, key=lambda r: r["seconds"])
    out.update(gibbsjax_sweeps=best["sweeps"], gibbsjax_seconds=best["seconds"],
               gibbsjax_seconds_with_compile=best["seconds_with_compile"], gibbsjax_hellinger=best["hellinger"],
               time_ratio=best["seconds"] / ref["seconds"],
               time_ratio_with_compile=best["seconds_with_compile"] / ref["seconds"])
    out["target_met"] = out["time_ratio"] <= 1 / 50  # the second call: compile excluded, as every other row
    out["target_met_with_compile"] = out["time_ratio_with_compile"] <= 1 / 50  # the first call, compile included
    return out


# ----------------------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny sizes for a CPU (interpret mode), a few seconds")
    p.add_argument("--budget", type=float, default=480.0,
                   help="seconds for the whole run, from the start of the process (default 480: with the GPU "
                        "kit's set-up, under 9 minutes)")
    p.add_argument("--tokens", type=int, default=10_000_000)
    p.add_argument("--vocab", type=int, default=10_000)
    p.add_argument("--topics", type=int, nargs="+", default=[100, 1000, 10_000])
    p.add_argument("--lanes", type=int, nargs="+",
                   help="fused lanes per program (default: half, once and twice the kernel's default)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--sweeps", type=int, default=30, help="draws per timed sample call")
    p.add_argument("--chains-all", action="store_true", help="4 chains at every K, not only at K = 100")
    p.add_argument("--large-tokens", type=int, default=100_000_000)
    p.add_argument("--large-topics", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--large-sweeps", type=int, default=20)
    p.add_argument("--quality-sweeps", type=int, nargs="+", default=[100, 200, 400])
    p.add_argument("--quality-target", type=float, default=0.163,
                   help="Hellinger distance that, not yet reached, adds a budget of twice the largest "
                        "(default 0.163: tomotopy's after 1,000 sweeps on 16 workers in issue 22)")
    p.add_argument("--quality-max", type=int, default=1600, help="the largest budget so added (default 1600)")
    p.add_argument("--tomotopy-sweeps", type=int, nargs="+", default=[100, 200, 500, 1000])
    p.add_argument("--tomotopy-workers", type=int,
                   help="tomotopy's worker threads (default: every CPU this process may use, cgroup quota included)")
    p.add_argument("--json", help="also write the table to this file (after every section, the last time with "
                                  "\"complete\": true)")
    args = p.parse_args(argv)
    if args.smoke:
        args.tokens, args.vocab, args.topics, args.lanes, args.reps, args.sweeps = 1_000, 100, [10], [4], 1, 2
        args.large_tokens, args.large_topics, args.large_sweeps = 1_000, [10], 2
        args.quality_sweeps, args.tomotopy_sweeps, args.quality_max = [4], [2, 4], 8
    return args


def main(argv=None, started: float | None = None):
    """Run the table; ``started``: the ``time.perf_counter()`` the budget counts from (the process's
    start when run as a script; by default, now)."""
    args = parse_args(argv)
    interpret = not lda_pallas_kernel.available()
    device = jax.devices()[0]
    # the estimates are H100 seconds at the default sizes, scaled by the corpus size
    cost = args.tokens / 1e7
    budget = Budget(args.budget, 1.0, start=started)
    print(f"jax {jax.__version__}, {device.platform} ({device.device_kind}); "
          f"{'Pallas INTERPRET mode: timings are not meaningful' if interpret else 'Pallas Triton, compiled'}; "
          f"budget {args.budget:.0f} s", flush=True)
    sections = {"kernels": [], "sweeps": [], "large": [], "outside": [], "quality": [], "tomotopy": []}
    folder = tempfile.mkdtemp(prefix="gpu_table_")
    large_folder = tempfile.mkdtemp(prefix="gpu_table_large_")
    tomotopy = None
    head = {"jax": jax.__version__, "device": device.device_kind, "platform": device.platform,
            "interpret": interpret, "budget_s": args.budget}

    def report(complete: bool) -> dict:
        """The table so far; written to ``--json`` after every section, so that a run stopped from
        outside keeps what it measured (``complete`` false until the end)."""
        result = {**head, "elapsed_s": budget.elapsed(), "complete": complete, "sections": sections,
                  "summary": summary(sections["quality"], sections["tomotopy"]), "skipped": budget.skipped}
        if args.json:
            write_atomic(args.json, lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
        return result

    large_done = set()
    quality = {}  # the time-to-quality corpus (the first K's): its packed data and true topics

    def one_k(i, k):
        """Every section at ``k`` topics on ``--tokens`` tokens (and the 100 M-token rows at this K)."""
        nonlocal tomotopy
        if not budget.fits(f"K = {k}: generate {args.tokens:,} tokens", 3 + cost * k / 1000):
            return
        t = time.perf_counter()
        words, offsets, truth = corpus_on_device(args.tokens, k, args.vocab, seed=k)
        d = lda.data(make_corpus(words, offsets, args.vocab))
        print(f"K = {k}: {words.size:,} tokens, {offsets.size - 1:,} documents, grid {tuple(d.words.shape)} "
              f"({time.perf_counter() - t:.1f} s to generate and pack)", flush=True)
        if i == 0:  # the time-to-quality corpus: tomotopy starts on it now, in the background
            quality.update(d=d, truth=truth)
            np.save(f"{folder}/words.npy", words)
            np.save(f"{folder}/offsets.npy", offsets)
            np.save(f"{folder}/vocab.npy", np.asarray(args.vocab))
            deadline = time.time() + budget.left() - 5
            tomotopy = subprocess.Popen(
                [sys.executable, "-c", TOMOTOPY, folder, str(k), str(ALPHA), str(ETA), str(deadline),
                 ",".join(map(str, args.tomotopy_sweeps)), str(args.tomotopy_workers or cpu_workers())],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        scale = cost * (k / 100) ** 0.75  # about the H100 seconds of one XLA-scan z-update over 10 M tokens
        sections["kernels"] += kernel_rows(d, k, args, interpret, budget, scale)
        chains = [1, 4] if (i == 0 or args.chains_all) else [1]
        sections["sweeps"] += sweep_rows(d, k, chains, args, budget, scale, outside=sections["outside"])
        if i == 0:
            sections["quality"] += quality_rows(d, truth, args, budget, cost, args.quality_sweeps)
        report(False)
        if k in args.large_topics:  # the large corpus at this K now: not crowded out by a larger K
            large_done.add(k)
            same = d if args.large_tokens == args.tokens else None  # the same size: one corpus
            sections["large"] += large_rows(args, budget, [k], large_folder, packed=same,
                                            outside=sections["outside"])

    try:
        for i, k in enumerate(args.topics):
            # whatever fails at one K (the device's memory, a kernel), the next K and tomotopy still run
            guarded(budget, f"K = {k}", lambda: one_k(i, k), verb="stopped")
            report(False)
        rest = [k for k in args.large_topics if k not in large_done]
        sections["large"] += guarded(budget, "large corpus", lambda: large_rows(
            args, budget, rest, large_folder, outside=sections["outside"]), [], verb="stopped")
        if quality:
            sections["quality"] += guarded(budget, "quality, longer budgets", lambda: longer_quality_rows(
                quality["d"], quality["truth"], args, budget, cost, sections["quality"]), [], verb="stopped")
        if tomotopy is not None:
            sections["tomotopy"] = guarded(budget, "tomotopy", lambda: tomotopy_rows(
                tomotopy, folder, quality["truth"], budget, wait=True), [], verb="stopped")
    finally:
        if tomotopy is not None and tomotopy.poll() is None:  # an error above: no tomotopy left running
            tomotopy.kill()
            tomotopy.communicate()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(large_folder, ignore_errors=True)
    result = report(True)
    print("summary: " + json.dumps(result["summary"]))
    print(f"elapsed {budget.elapsed():.1f} s of {args.budget:.0f} (from the start of the process); "
          f"skipped {len(budget.skipped)} item(s)")
    return result


def cpu_workers(cgroup: str = "/sys/fs/cgroup") -> int:
    """The CPUs this process may run on: its affinity mask, capped by a cgroup CPU quota where one is
    set (a container's share of a larger host, which ``os.cpu_count()`` would count whole)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    root = Path(cgroup)
    for quota_file, period_file in ((root / "cpu.max", None),  # cgroup v2: "quota period"
                                    (root / "cpu" / "cpu.cfs_quota_us", root / "cpu" / "cpu.cfs_period_us")):
        try:
            fields = quota_file.read_text().split()
            quota = fields[0]
            period = fields[1] if period_file is None else period_file.read_text().strip()
            if quota not in ("max", "-1"):
                n = min(n, max(1, math.ceil(int(quota) / int(period))))
        except (OSError, IndexError, ValueError, ZeroDivisionError):  # absent or unreadable: no quota known
            continue
        break
    return max(1, n)


if __name__ == "__main__":
    main(started=STARTED)
