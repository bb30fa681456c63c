"""gibbsjax.random vs jax.random, side by side, one run.

Draws per second (jitted, after a warm-up call, median of a few repetitions,
each on a fresh key) of

* gamma: ``gibbsjax.random.gamma`` vs ``jax.random.gamma`` (and numpy's
  ``Generator.standard_gamma`` for scale), 1e6 draws at a = 0.5, 2, 50;
* dirichlet: ``gibbsjax.random.dirichlet`` vs ``jax.random.dirichlet``,
  1000 draws of dimension 100 (alpha = 0.1 and 1);
* dirichlet with sparse counts (LDA's φ draw): ``gibbsjax.random.log_dirichlet_counts``
  vs ``gibbsjax.random.log_dirichlet`` on (K x 4258) tables of counts + 0.01 holding
  76,000 tokens (the Reuters sample's size), K = 20 and 100;
* categorical: ``gibbsjax.random.categorical`` vs ``jax.random.categorical``
  (Gumbel-max) on (84000 x K) logits, K = 20, 100 (and 1000 with --large);
* LDA's token uniforms (``lda.hashed_uniforms``: one uniform per (document, position) pair):
  the element-wise ``gibbsjax.random.threefry2x32`` it uses vs ``jax.extend.random.threefry_2x32``
  of the concatenated pairs (its construction until 2026-11-28; the same numbers bit for bit),
  run time and compile time, 200,000 and 2,000,000 pairs.

``--sweep`` also times the gamma sampler for 0 to 3 vectorised proposal
rounds, the measurement behind ``gibbsjax.random._ROUNDS``, and the small-shape
sampler of ``log_dirichlet_counts`` for 1 to 3 rounds (``_SMALL_ROUNDS``).

Run:   python benchmarks/random_primitives.py [--reps 7] [--sweep] [--large]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from gibbsjax import random as gr  # noqa: E402


def seconds(f, *args, reps):
    """Median wall time of f(key, *args) over `reps` fresh keys, after a warm-up call."""
    jax.block_until_ready(f(jax.random.key(0), *args))
    times = []
    for i in range(reps):
        k = jax.random.key(i + 1)
        t = time.perf_counter()
        jax.block_until_ready(f(k, *args))
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def row(label, n, ours, theirs, extra=""):
    print(f"  {label:<26} ours {n / ours / 1e6:8.2f} M/s  ({ours * 1e3:8.2f} ms)   "
          f"jax {n / theirs / 1e6:7.2f} M/s  ({theirs * 1e3:8.2f} ms)   "
          f"ratio {theirs / ours:5.1f}x{extra}")


def bench_gamma(reps):
    n = 1_000_000
    print(f"gamma, {n:,} draws (draws/s)")
    ours = jax.jit(lambda k, a: gr.gamma(k, a, shape=(n,)))
    theirs = jax.jit(lambda k, a: jax.random.gamma(k, a, shape=(n,)))
    rng = np.random.default_rng(0)
    for a in (0.5, 2.0, 50.0):
        t_ours = seconds(ours, a, reps=reps)
        t_jax = seconds(theirs, a, reps=reps)
        t = time.perf_counter()
        rng.standard_gamma(a, size=n).astype(np.float32)
        t_np = time.perf_counter() - t
        row(f"a = {a:g}", n, t_ours, t_jax, f"   numpy {n / t_np / 1e6:6.1f} M/s")


def bench_dirichlet(reps):
    rows, dim = 1000, 100
    n = rows * dim
    print(f"dirichlet, {rows} x {dim} (gamma variates/s)")
    ours = jax.jit(lambda k, alpha: gr.dirichlet(k, alpha, shape=(rows,)))
    theirs = jax.jit(lambda k, alpha: jax.random.dirichlet(k, alpha, shape=(rows,)))
    for conc in (0.1, 1.0):
        alpha = jnp.full(dim, conc)
        row(f"alpha = {conc:g}", n, seconds(ours, alpha, reps=reps), seconds(theirs, alpha, reps=reps))


def sparse_counts(k, v=4258, tokens=76_000, seed=0):
    """(k, v) int32 counts of `tokens` tokens: Zipf-like words, each word's tokens over a few topics."""
    rng = np.random.default_rng(seed)
    words = np.minimum(rng.zipf(1.3, tokens), v) - 1
    topics = (words * 7 + rng.integers(0, max(2, k // 10), tokens)) % k
    counts = np.zeros((k, v), np.int32)
    np.add.at(counts, (topics, words), 1)
    return jnp.asarray(counts)


def bench_dirichlet_counts(reps):
    print("dirichlet rows of counts + 0.01, (K x 4258), 76,000 tokens (gamma variates/s); "
          "'jax' column: gibbsjax.random.log_dirichlet")
    ours = jax.jit(lambda k, c: gr.log_dirichlet_counts(k, c, 0.01))
    dense = jax.jit(lambda k, c: gr.log_dirichlet(k, c.astype(jnp.float32) + 0.01))
    for k in (20, 100):
        counts = sparse_counts(k)
        nnz = int((counts > 0).sum())
        row(f"K = {k}, {nnz} nonzero", counts.size, seconds(ours, counts, reps=reps),
            seconds(dense, counts, reps=reps))


def bench_categorical(reps, large):
    print("categorical, one draw per row (draws/s)")
    ours = jax.jit(lambda k, logits: gr.categorical(k, logits))
    theirs = jax.jit(lambda k, logits: jax.random.categorical(k, logits))
    shapes = [(84_000, 20), (84_000, 100)] + ([(84_000, 1000)] if large else [])
    for rows, k in shapes:
        logits = jax.random.normal(jax.random.key(123), (rows, k)) * 2
        row(f"{rows} x {k} logits", rows, seconds(ours, logits, reps=reps), seconds(theirs, logits, reps=reps))


def bench_token_uniforms(reps):
    from jax.extend.random import threefry_2x32

    from gibbsjax.models.lda import hashed_uniforms
    from gibbsjax.models.lda.layout import _unit_interval

    def jaxs(key, a, b):  # the former construction: JAX's threefry_2x32 of the pairs as two halves
        pair = jax.random.bits(key, (2,), jnp.uint32)
        counts = jnp.concatenate([a.reshape(-1).astype(jnp.uint32), b.reshape(-1).astype(jnp.uint32)])
        return _unit_interval(threefry_2x32(pair, counts)[:a.size]).reshape(a.shape)

    print("LDA token uniforms, one per (document, position) pair (uniforms/s); 'jax' column: "
          "jax.extend.random.threefry_2x32 of the pairs")
    for n in (200_000, 2_000_000):
        a = jnp.asarray(np.arange(n) // 100, jnp.int32).reshape(-1, 100)
        b = jnp.asarray(np.arange(n) % 100, jnp.int32).reshape(-1, 100)
        compile_s = []
        for f in (hashed_uniforms, jaxs):  # fresh closures: nothing compiled before
            lowered = jax.jit(lambda key, a, b, f=f: f(key, a, b)).lower(jax.random.key(0), a, b)
            t = time.perf_counter()
            lowered.compile()
            compile_s.append(time.perf_counter() - t)
        ours, theirs = jax.jit(hashed_uniforms), jax.jit(jaxs)
        same = bool(jnp.array_equal(ours(jax.random.key(0), a, b), theirs(jax.random.key(0), a, b)))
        row(f"{n:,} pairs", n, seconds(ours, a, b, reps=reps), seconds(theirs, a, b, reps=reps),
            f"   compile {compile_s[0]:.2f} / {compile_s[1]:.2f} s   same numbers: {same}")


def sweep_rounds(reps):
    n = 1_000_000
    print(f"gamma, proposal rounds before the fallback loop ({n:,} draws, M draws/s)")
    for a in (0.5, 1.0, 2.0, 50.0):
        rates = []
        for rounds in (0, 1, 2, 3):
            f = jax.jit(lambda k, a, rounds=rounds: gr._gamma_draw(
                gr._key_pair(k), jnp.full((n,), a, jnp.float32), jnp.float32, log=False, rounds=rounds))
            rates.append(f"R={rounds}: {n / seconds(f, a, reps=reps) / 1e6:6.1f}")
        print(f"  a = {a:<5g} " + "  ".join(rates))
    print(f"small-shape sampler of log_dirichlet_counts, proposal rounds ({n:,} draws, M draws/s)")
    for a in (0.01, 0.1, 0.5):
        rates = []
        for rounds in (1, 2, 3):
            f = jax.jit(lambda k, a, rounds=rounds: gr._log_gamma_mixed(
                k, jnp.full((n,), a, jnp.float32), jnp.float32, rounds=rounds))
            rates.append(f"R={rounds}: {n / seconds(f, a, reps=reps) / 1e6:6.1f}")
        print(f"  a = {a:<5g} " + "  ".join(rates))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--sweep", action="store_true", help="also time 0-3 gamma proposal rounds")
    parser.add_argument("--large", action="store_true", help="also time 84000 x 1000 categorical")
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    bench_gamma(args.reps)
    bench_dirichlet(args.reps)
    bench_dirichlet_counts(args.reps)
    bench_categorical(args.reps, args.large)
    bench_token_uniforms(args.reps)
    if args.sweep:
        sweep_rounds(args.reps)


if __name__ == "__main__":
    main()
