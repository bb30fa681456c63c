"""The Triton source of the fused z-update of :mod:`gibbsjax.models.lda.fused_triton`.

A module of its own because it imports ``triton.language`` at the top, as Triton's compiler
and interpreter read the kernel's globals: :mod:`~gibbsjax.models.lda.fused_triton` imports
it only when the kernel runs, so that gibbsjax imports without ``triton``.  The kernel is not
decorated here: :func:`~gibbsjax.models.lda.fused_triton.kernels` wraps the same function for
Triton's compiler (``triton.jit``) and for its interpreter.
"""

from __future__ import annotations

import triton.language as tl

__all__ = ["z_kernel", "ARRAYS"]

#: the kernel's array arguments, in order: inputs, then the two outputs (``jax_triton``'s order)
ARRAYS = ("words_ptr", "docs_ptr", "starts_ptr", "z_ptr", "u_ptr", "phi_ptr", "z_out_ptr", "ndk_ptr")


def z_kernel(words_ptr, docs_ptr, starts_ptr, z_ptr, u_ptr, phi_ptr, z_out_ptr, ndk_ptr,
             STEPS: tl.constexpr, LANES_TOTAL: tl.constexpr, K: tl.constexpr, KP: tl.constexpr,
             LANES: tl.constexpr, ALPHA: tl.constexpr, STALE: tl.constexpr):
    """One program: ``LANES`` lanes, two passes over the ``STEPS`` steps.

    Arrays, row-major, of the grid with every chain's lanes side by side
    (:func:`~gibbsjax.models.lda.fused_triton.fused_z_update_triton` folds the chains into lanes):
    words (S, L) int32, each offset by its chain's c·V (a row of the stacked φᵀ); docs (S, L),
    each offset by its chain's c·(D + 1), −1 on padding slots; starts (S, L / LANES) int32, 1
    where some lane of the block starts a document at that step; z, u, z_out (S, L); φᵀ of every
    chain stacked (C·V, K) float32; the count table ndk (C·(D + 1), K) int32, zero on entry.
    ``STEPS`` … ``STALE``: compile-time constants."""
    pid = tl.program_id(0)
    blocks = LANES_TOTAL // LANES
    lane = pid * LANES + tl.arange(0, LANES)
    kk = tl.arange(0, KP)[None, :]
    in_k = kk < K

    prev = tl.full((LANES,), -1, tl.int32)
    row = tl.zeros((LANES, KP), tl.int32)
    # pass 1: the start-of-sweep count row of every document of these lanes
    off = lane.to(tl.int64)  # the slots of step s, 64-bit (C·S·R may pass 2**31)
    for s in range(STEPS):
        doc = tl.load(docs_ptr + off)
        z_old = tl.load(z_ptr + off)
        new = doc != prev
        if tl.load(starts_ptr + s * blocks + pid) > 0:
            done = new & (prev >= 0)
            tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=done[:, None] & in_k)
        row = tl.where(new[:, None], 0, row) + (z_old[:, None] == kk).to(tl.int32)
        prev = doc
        off += LANES_TOTAL
    tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=(prev >= 0)[:, None] & in_k)
    tl.debug_barrier()  # rows written by one thread of the program are read by another

    # pass 2: tokens in order, each lane's row carried in registers
    prev = tl.full((LANES,), -1, tl.int32)
    row = tl.zeros((LANES, KP), tl.int32)
    off = lane.to(tl.int64)  # the slots of step s, 64-bit (C·S·R may pass 2**31)
    for s in range(STEPS):
        doc = tl.load(docs_ptr + off)
        w = tl.load(words_ptr + off)
        z_old = tl.load(z_ptr + off)
        u = tl.load(u_ptr + off)
        new = doc != prev
        if tl.load(starts_ptr + s * blocks + pid) > 0:
            if not STALE:
                done = new & (prev >= 0)
                tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=done[:, None] & in_k)
            fresh = new & (doc >= 0)
            loaded = tl.load(ndk_ptr + doc.to(tl.int64)[:, None] * K + kk, mask=fresh[:, None] & in_k, other=0)
            row = tl.where(fresh[:, None], loaded, row)
        old = (z_old[:, None] == kk).to(tl.int32)
        phi = tl.load(phi_ptr + w.to(tl.int64)[:, None] * K + kk, mask=in_k, other=0.0)
        weights = phi * ((row - old).to(tl.float32) + ALPHA)
        c = tl.cumsum(weights, axis=1)
        total = tl.max(c, axis=1)  # = c[:, -1]: a cumulative sum of weights >= 0 never decreases
        k = tl.sum((c <= (u * total)[:, None]).to(tl.int32), axis=1)
        k = tl.minimum(k, K - 1)
        tl.store(z_out_ptr + off, k)
        if not STALE:  # the stale variant keeps the start-of-sweep row: not exact (tests only)
            row = row - old + (k[:, None] == kk).to(tl.int32)
        prev = doc
        off += LANES_TOTAL
    if not STALE:
        tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=(prev >= 0)[:, None] & in_k)

