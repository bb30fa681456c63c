"""Device memory of one compiled LDA sweep on a large corpus, without allocating it (issue 22).

XLA's memory analysis (``jax.jit(step).lower(...).compile().memory_analysis()``) of one sweep of
one chain, lowered on abstract arguments (``jax.ShapeDtypeStruct``; the state's shapes from
``jax.eval_shape(kernel.init, ...)``), so nothing of the corpus's size is allocated: arguments
(the packed corpus and the state), outputs (the new state) and temporaries, in GB and in bytes
per grid slot.  The corpus is the shape of ``benchmarks/gpu_table.py``'s ``large`` one:
``--tokens`` tokens in documents of Poisson(100) lengths, V = ``--vocab``, packed by
``gibbsjax.models.lda.layout.pack`` with the lanes ``lda.data`` picks (the real grid shape).

The kernels are built with the choices "auto" makes on a GPU (``jax.default_backend`` reported
as "gpu" while they are built: the dense Dirichlet draws; the partially collapsed sampler with
its XLA z-update ``"dense"``, since the fused Pallas kernel compiles only on a GPU), then
compiled for the machine at hand.  On a CPU the buffer assignment is XLA's CPU backend's, a
proxy for the GPU's (the same program; XLA's GPU backend fuses more, so its temporaries are
usually no larger).

Run:  python benchmarks/lda_sweep_memory.py [--tokens 100000000] [--topics 100] [--vocab 10000]
                                            [--samplers uncollapsed partially_collapsed]
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax.models import lda
from gibbsjax.models.lda.layout import LDAData, pack


def abstract_corpus(num_tokens: int, vocab_size: int, doc_length: int = 100, seed: int = 0) -> LDAData:
    """The packed corpus's shapes (``jax.ShapeDtypeStruct``) for Poisson(``doc_length``) documents."""
    rng = np.random.default_rng(seed)
    lengths = np.maximum(rng.poisson(doc_length, max(1, num_tokens // doc_length)), 1)
    lanes = min(lengths.size, max(1, math.ceil(int(lengths.sum()) / int(lengths.max()))))
    _, _, steps = pack(lengths, lanes)
    d, sd = lengths.size, jax.ShapeDtypeStruct
    return LDAData(sd((steps, lanes), jnp.int32), sd((steps, lanes), jnp.int32), sd((steps, lanes), jnp.bool_),
                   sd((d,), jnp.int32), sd((vocab_size,), jnp.int32), sd((d + 1,), jnp.int32),
                   sd((d + 1,), jnp.int32))


def gpu_kernel(sampler: str, K: int):
    """The kernel of ``sampler`` as "auto" resolves it on a GPU (the Pallas z-update replaced by "dense")."""
    backend = jax.default_backend
    jax.default_backend = lambda: "gpu"
    try:
        options = {"z_update": "dense"} if sampler == "partially_collapsed" else {}
        return lda.SAMPLERS[sampler](K, warmup="exact", **options)
    finally:
        jax.default_backend = backend


def sweep_memory(kernel, d: LDAData) -> dict:
    """XLA's memory analysis of one compiled ``kernel.step`` on the abstract corpus ``d``, in bytes."""
    key = jax.random.key(0)
    state = jax.eval_shape(kernel.init, key, d)
    m = jax.jit(kernel.step).lower(key, state, d).compile().memory_analysis()
    out = {"arguments": m.argument_size_in_bytes, "outputs": m.output_size_in_bytes,
           "temporaries": m.temp_size_in_bytes, "aliased": m.alias_size_in_bytes}
    out["total"] = out["arguments"] + out["outputs"] + out["temporaries"] - out["aliased"]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokens", type=int, default=100_000_000)
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--vocab", type=int, default=10_000)
    p.add_argument("--samplers", nargs="+", default=["uncollapsed", "partially_collapsed"])
    args = p.parse_args(argv)
    d = abstract_corpus(args.tokens, args.vocab)
    slots = math.prod(d.words.shape)
    print(f"jax {jax.__version__} on {jax.default_backend()}; {args.tokens:,} tokens, {d.doc_lengths.shape[0]:,} "
          f"documents, grid {d.words.shape[0]} x {d.words.shape[1]:,} = {slots:,} slots; K = {args.topics}, "
          f"V = {args.vocab:,}; one chain, one sweep, the GPU's choices")
    rows = {}
    for sampler in args.samplers:
        t = time.perf_counter()
        rows[sampler] = mem = sweep_memory(gpu_kernel(sampler, args.topics), d)
        print(f"{sampler:20s} " + "  ".join(f"{k} {v / 1e9:6.2f} GB ({v / slots:5.1f} B/slot)"
                                              for k, v in mem.items() if k != "aliased")
              + f"  [compiled in {time.perf_counter() - t:.1f} s]")
    return rows


if __name__ == "__main__":
    main()
