"""The fused Pallas z-update of partially collapsed LDA against the XLA scan, on a GPU.

Corpus: synthetic, from the LDA generative process (`gibbsjax.datasets.synthetic.lda_corpus`):
10 M tokens by default (100,000 documents of ~100 tokens), V = 10,000, α = 0.1, η = 0.01,
packed by `lda.data` with its default lanes.  For each K:

* the z-update alone, XLA scan (`lda.sample_z_partially_collapsed`) and the fused kernel
  (`lda_pallas.sample_z_pallas`) for each lanes-per-program setting (and Triton warps):
  compile seconds apart, then the mean of ``--reps`` timed calls; M tokens/s;
* the sparse exact z-update (``z_update="sparse"``, XLA: O(longest document + √K) per token,
  `lda.sample_z_sparse`), alone and in a whole sweep with the dense φ draw (the candidate for
  K ≥ 1,000, e.g. ``--topics 1000 10000``);
* how many tokens the two paths draw differently for the same key and state (expected: a
  few per 100,000 at K = 100, from the order of the float32 cumulative sums);
* the φ step alone (n_kw by one scatter-add, then the draw), with each exact Dirichlet draw:
  ``"sparse"`` (the sparse-count sampler, the CPU's choice) and ``"dense"``
  (``jax.random.loggamma``, the GPU's choice; ``lda.resolve_dirichlet_draw``);
* whole sweeps, ``--sweeps`` sweeps in one jitted loop: the XLA scan with the sparse draw (the
  GPU default before the draw was chosen per backend), the fused kernel (best lanes) with each
  draw, and the factory's default kernel (every option "auto": what users get); M tokens/s;
* the device's peak memory.

Run on the GPU machine (see ../shared/gpu/README.md), from the project root:
    python3 benchmarks/lda_pallas.py                       # K = 100 and 1,000, 10 M tokens
    python3 benchmarks/lda_pallas.py --topics 100 --lanes 8 16 32 --warps 2 4 8
The whole GPU table of issue 22 (these rows at K = 100 to 10,000, whole `sample` calls, 100 M tokens,
time to quality against tomotopy) in one command: benchmarks/gpu_table.py, which imports `bench_z`,
`bench_phi` and `timed` from here.
Smoke test on a CPU (Pallas interpret mode, tiny; the timings mean nothing there):
    python3 benchmarks/lda_pallas.py --tokens 20000 --vocab 500 --topics 10 --lanes 4 --reps 1 --sweeps 2
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import jax
import numpy as np

from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.kernel import sweep
from gibbsjax.models import lda
from gibbsjax.models.lda import pallas as lda_pallas

ALPHA, ETA = 0.1, 0.01


def timed(fn, *args, reps, outputs=None):
    """(compile seconds, mean seconds per call) of a jitted ``fn``: the first call less one
    timed call, then the mean of ``reps`` calls.  ``outputs``: a list that gets the first call's
    result (every call is the same computation), so that checking it costs no further call (an
    interpreted kernel's call takes seconds)."""
    t = time.perf_counter()
    result = jax.block_until_ready(fn(*args))
    first = time.perf_counter() - t
    if outputs is not None:
        outputs.append(result)
    t = time.perf_counter()
    for _ in range(reps):
        out = fn(*args)
    jax.block_until_ready(out)
    per_call = (time.perf_counter() - t) / reps
    return max(first - per_call, 0.0), per_call


def _sweeps(step, num_sweeps):
    @jax.jit
    def run(key, state, d):
        return jax.lax.fori_loop(0, num_sweeps, lambda t, s: step(jax.random.fold_in(key, t), s, d), state)

    return run


def _row(k, what, tokens, compile_s, per, lanes="-", warps="-", differ=0):
    return {"K": k, "what": what, "lanes": lanes, "warps": warps, "compile_s": compile_s,
            "ms": 1e3 * per, "Mtok_s": tokens / per / 1e6, "differ": differ}


def _not_run(k, what, why, lanes="-", warps="-"):
    """The row of a piece that did not run, ``what: why``, with no timings (None)."""
    return {"K": k, "what": f"{what}: {why}", "lanes": lanes, "warps": warps, "compile_s": None, "ms": None,
            "Mtok_s": None, "differ": -1}


def _failed(k, what, err, lanes="-", warps="-"):
    """The row of a piece that failed (a Triton resource limit at a tile size, the device's memory at
    K = 10,000, ...): what failed and the error."""
    return _not_run(k, what, f"failed ({type(err).__name__}: {str(err).strip()[:200]})", lanes, warps)


def _differ(z, z_ref, d) -> int:
    """Tokens whose topic differs from the reference draw's (-1 without a reference)."""
    return -1 if z_ref is None else int(np.sum((np.asarray(z) != z_ref) & np.asarray(d.mask)))


def bench_z(d, k, state, key, *, lanes, warps, reps, interpret):
    """Rows of the z-update alone: the XLA scan, the sparse z-update and the fused kernel for each
    ``lanes`` × ``warps``; and the fastest fused setting, ``(seconds, lanes, warps)`` (None if all failed).
    Each piece runs on its own: one that fails is a row saying why, and the others still run."""
    tokens = int(d.mask.sum())
    rows = []
    references = {}
    for name, what, update in (("xla", "z-update XLA scan", lda.sample_z_partially_collapsed),
                               ("sparse", "z-update sparse (XLA)", lda.sample_z_sparse)):
        fn = jax.jit(functools.partial(update, K=k, alpha=ALPHA))
        got = []
        try:
            compile_s, per = timed(fn, key, state, d, reps=reps, outputs=got)
        except Exception as err:  # noqa: BLE001 - reported in the table, the run goes on
            rows.append(_failed(k, what, err))
            continue
        references[name] = np.asarray(got[0])
        rows.append(_row(k, what, tokens, compile_s, per))
    z_xla = references.get("xla")
    rows.append(bench_triton(d, k, state, key, reps=reps, interpret=interpret, z_xla=references.get("sparse"),
                             sparse=True))
    best = None
    for num_warps in warps:
        for num_lanes in lanes:
            fused = jax.jit(functools.partial(lda_pallas.fused_z_update, K=k, alpha=ALPHA, interpret=interpret,
                                              lanes_per_program=num_lanes, num_warps=num_warps))
            got = []
            try:
                compile_s, per = timed(lambda *a: fused(*a)[0], key, state, d, reps=reps, outputs=got)
            except Exception as err:  # noqa: BLE001 - e.g. a Triton resource limit at this tile size
                rows.append(_failed(k, "z-update fused", err, num_lanes, num_warps))
                continue
            rows.append(_row(k, "z-update fused", tokens, compile_s, per, num_lanes, num_warps,
                             _differ(got[0], z_xla, d)))
            if best is None or per < best[0]:
                best = (per, num_lanes, num_warps)
    rows.append(bench_triton(d, k, state, key, reps=reps, interpret=interpret, z_xla=z_xla))
    return rows, best


def bench_triton(d, k, state, key, *, reps, interpret, z_xla, sparse=False):
    """The row of the fused kernel in Triton's language through jax-triton (``z_update="triton"``;
    ``sparse``: ``"sparse_triton"``, compared with the XLA sparse update's draws in ``z_xla``), at its
    default lanes and warps: compiled where ``jax_triton`` imports on a GPU, in Triton's interpreter
    with ``interpret``; a row that says why where it cannot run."""
    from gibbsjax.models.lda import fused_triton

    tokens = int(d.mask.sum())
    name = "z-update sparse triton (jax-triton)" if sparse else "z-update triton (jax-triton)"
    lanes, warps = "-", "-"
    if not sparse:
        lanes = fused_triton.default_lanes_per_program(k, interpret=interpret)
        warps = fused_triton.default_num_warps(k, lanes)
    why = None
    if not fused_triton.triton_importable():
        why = "triton not installed"
    elif not interpret and not fused_triton.available():
        why = "jax_triton not importable"
    if why is None:
        if sparse:
            tri = jax.jit(lambda *a: (fused_triton.sample_z_sparse_triton(*a, K=k, alpha=ALPHA, interpret=interpret),))
        else:
            tri = jax.jit(functools.partial(fused_triton.fused_z_update_triton, K=k, alpha=ALPHA, interpret=interpret))
        got = []
        try:
            compile_s, per = timed(lambda *a: tri(*a)[0], key, state, d, reps=reps, outputs=got)
        except Exception as err:  # noqa: BLE001 - reported in the table, the run goes on
            return _failed(k, name, err, lanes, warps)
    if why is not None:
        return _not_run(k, name, why, lanes, warps)
    return _row(k, name, tokens, compile_s, per, lanes, warps, _differ(got[0], z_xla, d))


def bench_phi(d, k, state, key, *, reps, draws=("sparse", "dense")):
    """Rows of the φ step alone (n_kw by one scatter-add, then the draw) for each exact Dirichlet draw
    (a draw that fails: a row saying why)."""
    tokens = int(d.mask.sum())
    rows = []
    for draw in draws:
        what = f"phi draw, {draw} (n_kw + draw)"
        phi_step = jax.jit(functools.partial(lda.sample_log_phi, K=k, eta=ETA, draw=draw))
        try:
            compile_s, per = timed(phi_step, key, state, d, reps=reps)
        except Exception as err:  # noqa: BLE001 - e.g. the device's memory at K = 10,000: a row says so
            rows.append(_failed(k, what, err))
            continue
        rows.append(_row(k, what, tokens, compile_s, per))
    return rows


def bench_k(d, k, args, interpret):
    tokens = int(d.mask.sum())
    kernel = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA)
    state = kernel.init(jax.random.key(0), d)
    key = jax.random.key(1)
    rows, best = bench_z(d, k, state, key, lanes=args.lanes, warps=args.warps, reps=args.reps, interpret=interpret)
    rows += bench_phi(d, k, state, key, reps=args.reps)

    def phi(draw):
        return ("log_phi", functools.partial(lda.sample_log_phi, K=k, eta=ETA, draw=draw))

    xla = sweep(phi("sparse"), ("z", functools.partial(lda.sample_z_partially_collapsed, K=k, alpha=ALPHA)))
    candidates = [("sweep XLA, sparse phi", "-", "-", xla),
                  ("sweep sparse z, dense phi", "-", "-",
                   sweep(phi("dense"), ("z", functools.partial(lda.sample_z_sparse, K=k, alpha=ALPHA))))]
    if best is not None:
        _, lanes, warps = best
        z = functools.partial(lda_pallas.fused_z_update, K=k, alpha=ALPHA, interpret=interpret,
                              lanes_per_program=lanes, num_warps=warps)
        for draw in ("sparse", "dense"):
            candidates.append((f"sweep fused, {draw} phi", lanes, warps,
                               sweep(phi(draw), ("z", lambda key, s, d: z(key, s, d)[0]))))
    default = lda.partially_collapsed(k, alpha=ALPHA, eta=ETA, warmup="exact")
    candidates.append((f"sweep default ({lda.resolve_z_update()}, {lda.resolve_dirichlet_draw()} phi)", "-", "-",
                       default.step))
    for what, lanes, warps, step in candidates:
        run = _sweeps(step, args.sweeps)
        compile_s, per = timed(run, key, state, d, reps=1)
        rows.append(_row(k, what, tokens, compile_s, per / args.sweeps, lanes, warps))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument("--doc-length", type=int, default=100)
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument("--topics", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--warps", type=int, nargs="+", default=[4])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--sweeps", type=int, default=20)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)

    interpret = not lda_pallas.available()
    device = jax.devices()[0]
    print(f"jax {jax.__version__}, {device.platform} ({device.device_kind}); "
          f"{'Pallas INTERPRET mode: timings are not meaningful' if interpret else 'Pallas Triton, compiled'}")
    num_docs = max(1, args.tokens // args.doc_length)
    rows = []
    for k in args.topics:
        t = time.perf_counter()
        corpus, _, _ = lda_corpus(num_docs=num_docs, num_topics=k, vocab_size=args.vocab,
                                  doc_length=args.doc_length, alpha=ALPHA, eta=ETA, seed=0)
        d = lda.data(corpus)
        print(f"K = {k}: {corpus.num_tokens:,} tokens, {corpus.num_docs:,} documents, grid {tuple(d.words.shape)} "
              f"({time.perf_counter() - t:.1f} s to generate and pack)", flush=True)
        for row in bench_k(d, k, args, interpret):
            rows.append(row)
            timing = ("  (not run)" if row["ms"] is None else
                      f"  compile {row['compile_s']:6.2f} s  {row['ms']:9.3f} ms  {row['Mtok_s']:9.1f} M tokens/s")
            print(f"  {row['what']:<32} lanes {row['lanes']!s:>3} warps {row['warps']!s:>2}" + timing
                  + (f"  differ from XLA: {row['differ']}" if row["differ"] > 0 else ""), flush=True)
        del d, corpus
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    if stats:
        print(f"device peak memory: {stats.get('peak_bytes_in_use', 0) / 2**30:.2f} GiB")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"jax": jax.__version__, "device": device.device_kind, "interpret": interpret,
                       "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
