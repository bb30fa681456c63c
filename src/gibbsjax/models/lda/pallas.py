"""A fused z-update of the partially collapsed LDA sampler for the GPU, in Pallas.

Same conditional as :func:`gibbsjax.models.lda.sample_z_partially_collapsed`
(Magnusson, Jonsson, Villani & Broman 2018): given φ, documents in parallel,
the tokens of each document in sequence,

    p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α),

drawn by inverse CDF from one uniform per token — the same uniforms as the XLA
path, ``lda.token_uniforms(key, d)`` (keyed by document and position), so the two
can be compared draw by draw.  The XLA path runs ``lax.scan`` over the S steps of the (S × R) grid, each
step a dozen small XLA operations on (R × K) arrays written to and read back
from memory; here one kernel does the whole update.

Design (one Pallas program per block of ``L`` lanes; grid = ceil(R / L)):

* a lane holds whole documents one after another (:func:`gibbsjax.models.lda.data`),
  so a program owns every token of its lanes' documents and nothing else —
  programs never touch the same count row and need no atomics;
* **pass 1** walks the S steps with ``fori_loop``, accumulating each lane's
  current document's n_dk row from the old topics in registers and writing it
  to the count table when the document ends.  The kernel thus builds the
  start-of-sweep n_dk itself (no scatter-add in XLA: the sweep builds counts
  once, for φ);
* **pass 2** walks the S steps again: when a lane starts a new document its
  n_dk row is reloaded from the table; every step it gathers the φᵀ row of
  each lane's word (V × K, small enough to live in L2), forms
  ``φ_{k,w}(n_dk − [k = z_old] + α)``, takes ``cumsum`` and draws
  ``k = #{c_k ≤ u·c_K}`` (clamped to K − 1, as the XLA path), then updates
  the row in registers; the document's final row is written back when it ends.
  :func:`sample_z_pallas_with_counts` returns that table (the final n_dk,
  identical to ``lda.topic_counts(z_new, ...)[0]``) at no extra cost.

Row ``D`` of the count table (the dummy document of padding slots) is written
as zeros; padding slots' topics are set to 0 after the kernel.  K is padded to
a power of two inside the kernel (a Triton requirement) by masked loads: the
padded topics have weight 0 and are never drawn.  Rows move between registers
and the table only on steps where some lane of the program starts a document:
a per-(step, program) flag computed in XLA beforehand makes that a uniform
branch on one scalar, with no cross-lane reduction in the loop.

Per token the kernel moves ~28 bytes to and from device memory (word, document,
old and new topic, uniform; the old topic twice) plus one φᵀ row (4K bytes) from
L2, against ~12 (R × K)-sized XLA intermediates per scan step on the XLA path.

**Backend: Triton** (``pl.pallas_call`` with
``compiler_params=pallas.triton.CompilerParams``), not Mosaic GPU:

* the kernel is a per-lane gather/scan loop, which Triton's model expresses
  directly: its Pallas lowering has ``cumsum`` (an associative scan along K),
  masked gathers by pointer arithmetic (the φᵀ rows of a vector of word ids,
  the n_dk rows of a vector of documents) and ``scf.for``/``scf.if`` with
  tensor carries — everything used here.  Mosaic GPU (jax 0.10 and 0.11) has
  no ``cumsum`` or ``argmax`` lowering and no gather of arbitrary rows from
  global memory by a vector of indices: it is built around warpgroup tiles
  staged through shared memory by TMA.  A Mosaic GPU version would have to
  copy every lane's φ row into shared memory by hand each step and write the
  cumulative sum as a log-step shift-and-add over register layouts (a matmul
  with a triangular matrix would round the weights to tf32: not exact);
* the issue's feasibility probe measured this kernel shape on the Triton
  backend on an H100 (4,200 M tokens/s at K = 100, 656 M at K = 1,000);
* it lowers to Triton IR without a GPU, so the test suite checks on a CPU
  that every operation has a Triton lowering (``tests/test_lda_pallas.py``).

The cost of the choice: jax 0.11.0 deprecated the Pallas Triton backend
("will be removed in a future version"; its lowering emits a
``DeprecationWarning``; upstream points to jax_triton and the official Triton
bindings).  When it is removed, ``import jax.experimental.pallas.triton``
fails, :func:`available` returns False and ``z_update="auto"`` runs the same kernel written in
Triton's own language through ``jax-triton`` (:mod:`gibbsjax.models.lda.fused_triton`) where that
is installed, else the XLA path (``lda.sample_z_partially_collapsed``, the reference) with a
one-time warning; so this module imports Pallas only inside :func:`_pallas` and imports without it.

On a machine without a GPU the kernel runs in Pallas interpret mode
(``interpret=True``, the default there): slow, but the same program, which is
how the tests check it on a CPU.

An uncollapsed fused variant (z_i ∝ θ_{d,k} φ_{k,w_i}) would be this kernel
with the count row replaced by the document's θ row, loaded once per document
and never updated; what it would fix is memory (the XLA path materialises the
N × K logits), which chunking the XLA path over steps fixes as well, while its
speed cannot exceed this kernel's (same gathers and cumulative sums, plus a θ
draw of D × K gammas per sweep) and it mixes slower per sweep.  Not built.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from gibbsjax._checks import check_int, check_positive
from gibbsjax.models.lda.chain_launch import (check_grid, default_num_warps, lanes_per_tile, next_power_of_2, one_launch,
                                              optional_modules, power_of_two_lanes)
from gibbsjax.models.lda.conditionals import LOG_PHI_FLOOR
from gibbsjax.models.lda.layout import token_uniforms

__all__ = ["available", "importable", "default_lanes_per_program", "default_num_warps", "sample_z_pallas",
           "sample_z_pallas_with_counts", "fused_z_update"]


def _pallas():
    """(pallas, pallas.triton) or None where Pallas cannot be imported.

    Imported here, not at the top: the Pallas Triton backend is an optional GPU
    dependency (deprecated in jax 0.11), and this module must import without it."""
    return optional_modules("jax.experimental.pallas", "jax.experimental.pallas.triton")


def importable() -> bool:
    """Whether Pallas (with its Triton backend) can be imported here: the kernel can then run,
    compiled on a GPU or in interpret mode elsewhere.

    >>> isinstance(importable(), bool)
    True
    """
    return _pallas() is not None


def available() -> bool:
    """Whether the fused kernel can run compiled: Pallas importable and the default backend a GPU.

    >>> isinstance(available(), bool)
    True
    """
    return _pallas() is not None and jax.default_backend() == "gpu"


def default_lanes_per_program(K: int) -> int:
    """Lanes per Pallas program by default: a power of two with lanes × K (padded) ≈ 2,048.

    >>> default_lanes_per_program(100), default_lanes_per_program(1000)
    (16, 2)
    """
    return lanes_per_tile(next_power_of_2(K))


def _program(words_ref, docs_ref, z_ref, u_ref, starts_ref, phi_ref, z_out_ref, ndk_ref, *,
            K, k_pad, lanes, steps, num_docs, alpha, stale, interpret):
    """One program: ``lanes`` lanes, two passes over the S steps (see the module docs)."""
    pl, plgpu = _pallas()
    pid = pl.program_id(0)
    cols = pl.ds(pid * lanes, lanes)
    kk = jnp.arange(k_pad, dtype=jnp.int32)[None, :]  # (1, Kp)
    in_k = kk < K
    dummy = num_docs  # row D: padding slots

    def real(doc):
        return (doc >= 0) & (doc < dummy)

    # Rows move between registers and the table only on the steps where some lane of this
    # program starts a document: ``starts[s, pid]``, one scalar per step, a uniform branch.
    def store_rows(doc, row, which, flag=True):
        def write():
            plgpu.store(ndk_ref.at[doc[:, None], kk], row, mask=which[:, None] & in_k)

        if flag is True:
            write()
        else:
            pl.when(flag)(write)

    def load_rows(doc, row, which, flag):
        def read(row):
            fresh = plgpu.load(ndk_ref.at[doc[:, None], kk], mask=which[:, None] & in_k, other=0)
            return jnp.where(which[:, None], fresh, row)

        return jax.lax.cond(flag, read, lambda row: row, row)

    @pl.when(pid == 0)
    def _():
        plgpu.store(ndk_ref.at[dummy, kk[0]], jnp.zeros((k_pad,), jnp.int32), mask=in_k[0])

    start = (jnp.full((lanes,), -1, jnp.int32), jnp.zeros((lanes, k_pad), jnp.int32))

    # pass 1: the start-of-sweep n_dk row of every document of these lanes
    def count(s, carry):
        prev, row = carry
        doc = docs_ref[s, cols]
        z_old = z_ref[s, cols]
        new = doc != prev
        store_rows(prev, row, new & real(prev), starts_ref[s, pid] > 0)
        row = jnp.where(new[:, None], 0, row) + (z_old[:, None] == kk).astype(jnp.int32)
        return doc, row

    prev, row = jax.lax.fori_loop(0, steps, count, start)
    store_rows(prev, row, real(prev))
    if not interpret:  # rows written by one thread of the program are read by another
        plgpu.debug_barrier()

    # pass 2: tokens in order, each lane's row carried in registers
    def draw(s, carry):
        prev, row = carry
        doc = docs_ref[s, cols]
        w = words_ref[s, cols]
        z_old = z_ref[s, cols]
        u = u_ref[s, cols]
        new = doc != prev
        flag = starts_ref[s, pid] > 0
        if not stale:
            store_rows(prev, row, new & real(prev), flag)
        row = load_rows(doc, row, new & real(doc), flag)
        old = (z_old[:, None] == kk).astype(jnp.int32)
        phi = plgpu.load(phi_ref.at[w[:, None], kk], mask=in_k, other=0.0)
        weights = phi * ((row - old).astype(jnp.float32) + alpha)
        c = jnp.cumsum(weights, axis=1)
        total = jnp.max(c, axis=1)  # = c[:, -1]: a cumulative sum of weights >= 0 never decreases
        k = jnp.sum((c <= (u * total)[:, None]).astype(jnp.int32), axis=1)
        k = jnp.minimum(k, K - 1)
        z_out_ref[s, cols] = k
        if not stale:  # the stale variant keeps the start-of-sweep row: not exact (tests only)
            row = row - old + (k[:, None] == kk).astype(jnp.int32)
        return doc, row

    prev, row = jax.lax.fori_loop(0, steps, draw, start)
    if not stale:
        store_rows(prev, row, real(prev))


def fused_z_update(key, state, d, *, K, alpha, interpret, lanes_per_program, stale=False, num_warps=None):
    """(new z, final n_dk) by the fused kernel: checks, φᵀ and the uniforms, then the kernel.
    What :func:`sample_z_pallas_with_counts` runs, with two more options: ``stale`` (tests
    only: keeps the start-of-sweep count rows, not exact) and ``num_warps`` (Triton's, for
    benchmarks; default :func:`default_num_warps`)."""
    if _pallas() is None:
        raise ValueError("jax.experimental.pallas cannot be imported here; use lda.sample_z_partially_collapsed")
    alpha = check_positive("alpha", alpha)
    check_grid(state, d, K)
    if interpret is None:
        interpret = jax.default_backend() != "gpu"
    lanes = power_of_two_lanes(default_lanes_per_program(K) if lanes_per_program is None else lanes_per_program)
    steps, num_lanes = d.words.shape
    lanes = min(lanes, next_power_of_2(num_lanes))
    num_docs = d.doc_lengths.shape[0]
    log_phi = state.log_phi
    scaled = jnp.maximum(log_phi - jnp.max(log_phi, axis=0, keepdims=True), LOG_PHI_FLOOR)
    phi_t = jnp.exp(scaled).T  # (V, K), as the XLA path
    u = token_uniforms(key, d)
    options = (("K", K), ("alpha", alpha), ("lanes", lanes), ("num_docs", num_docs), ("interpret", bool(interpret)),
               ("stale", stale), ("num_warps", default_num_warps(K, lanes) if num_warps is None
                                  else check_int("num_warps", num_warps, 1)))
    z_new, ndk = _all_chains(options)(state.z[None], u[None], phi_t[None], d.words, d.docs, d.mask)
    return z_new[0], ndk[0]


@functools.cache
def _all_chains(options):
    """:func:`_call` for every chain at once (z, u, φᵀ with a chain axis; the grid shared), one
    launch that ``jax.vmap`` folds into and the SPMD partitioner splits along the chains
    (:func:`gibbsjax.models.lda.chain_launch.one_launch`): with chains spread over devices each
    device launches its own chains, instead of every device running the whole custom call."""
    options = dict(options)

    def launch(z, u, phi_t, words, docs, mask):
        return jax.vmap(lambda z, u, phi_t: _call(words, docs, mask, z, u, phi_t, **options))(z, u, phi_t)

    return one_launch(launch, "c s r, c s r, c v k, s r, s r, s r -> c s r, c d k",
                      chained=(True, True, True, False, False, False))


@functools.partial(jax.jit, static_argnames=("K", "alpha", "lanes", "num_docs", "interpret", "stale", "num_warps"))
def _call(words, docs, mask, z, u, phi_t, *, K, alpha, lanes, num_docs, interpret, stale, num_warps):
    pl, plgpu = _pallas()
    steps, num_lanes = words.shape
    padded = -(-num_lanes // lanes) * lanes
    extra = padded - num_lanes
    if extra:
        words = jnp.pad(words, ((0, 0), (0, extra)))
        docs = jnp.pad(docs, ((0, 0), (0, extra)), constant_values=num_docs)
        z = jnp.pad(z, ((0, 0), (0, extra)))
        u = jnp.pad(u, ((0, 0), (0, extra)))
    # starts[s, p] = 1 where some lane of program p begins a document at step s
    begins = jnp.concatenate([jnp.ones((1, padded), bool), docs[1:] != docs[:-1]], axis=0)
    starts = jnp.any(begins.reshape(steps, padded // lanes, lanes), axis=2).astype(jnp.int32)
    program = functools.partial(_program, K=K, k_pad=next_power_of_2(K), lanes=lanes, steps=steps,
                               num_docs=num_docs, alpha=alpha, stale=stale, interpret=interpret)
    z_new, ndk = pl.pallas_call(
        program,
        out_shape=(jax.ShapeDtypeStruct((steps, padded), jnp.int32),
                   jax.ShapeDtypeStruct((num_docs + 1, K), jnp.int32)),
        grid=(padded // lanes,),
        interpret=interpret,
        compiler_params=plgpu.CompilerParams(num_warps=num_warps, num_stages=1),
        name="lda_partially_collapsed_z",
    )(words, docs, z, u, starts, phi_t)
    return jnp.where(mask, z_new[:, :num_lanes], 0), ndk


def sample_z_pallas_with_counts(key, state, d, *, K: int, alpha: float, interpret=None,
                                lanes_per_program=None):
    """:func:`sample_z_pallas`, also returning the final n_dk table ((D + 1) × K, int32; row D zero).

    The kernel builds each document's count row itself and writes its final
    value when the document ends, so the table equals
    ``lda.topic_counts(z_new, d, K)[0]`` without a scatter-add.

    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["b", "c"]]))
    >>> state = lda.partially_collapsed(2).init(jax.random.key(0), d)
    >>> z, ndk = sample_z_pallas_with_counts(jax.random.key(1), state, d, K=2, alpha=0.1)
    >>> ndk.shape, int(ndk.sum())
    ((3, 2), 5)
    """
    return fused_z_update(key, state, d, K=K, alpha=alpha, interpret=interpret,
                     lanes_per_program=lanes_per_program)


def sample_z_pallas(key, state, d, *, K: int, alpha: float, interpret=None, lanes_per_program=None):
    """The partially collapsed z-update as one fused Pallas kernel (new z, (S, R) int32; padding 0).

    Samples p(z_i = k | z_−i, φ, w) ∝ φ_{k,w_i} (n_dk,−i + α), documents in
    parallel and each document's tokens in order, from the same uniforms as
    :func:`gibbsjax.models.lda.sample_z_partially_collapsed` (draws agree with
    it except where u·total falls within float32 rounding of a cumulative
    boundary: the two cumulative sums add in different orders).

    ``interpret``: ``None`` runs compiled on a GPU (Triton backend) and in
    Pallas interpret mode elsewhere; ``True`` forces interpret mode.
    ``lanes_per_program``: a power of two; default
    :func:`default_lanes_per_program`.

    >>> import functools, jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.kernel import sweep
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b", "a"], ["b", "c"]]))
    >>> state = lda.partially_collapsed(2).init(jax.random.key(0), d)
    >>> sample_z_pallas(jax.random.key(1), state, d, K=2, alpha=0.1).shape
    (3, 2)
    """
    return sample_z_pallas_with_counts(key, state, d, K=K, alpha=alpha, interpret=interpret,
                                       lanes_per_program=lanes_per_program)[0]
