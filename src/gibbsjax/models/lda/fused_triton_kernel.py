"""The Triton source of the fused z-updates of :mod:`gibbsjax.models.lda.fused_triton`: the dense
one (:func:`z_kernel`) and the sparse one for many topics (:func:`sparse_z_kernel`).

A module of its own because Triton's compiler and interpreter read the kernels' globals
(``tl``); :mod:`~gibbsjax.models.lda.fused_triton` imports it only when a kernel runs, and it
imports without ``triton`` (``tl`` is then None and no kernel can run).  The kernels are not
decorated here: :func:`~gibbsjax.models.lda.fused_triton.kernels` wraps each function for
Triton's compiler (``triton.jit``) and for its interpreter.
"""

from __future__ import annotations

try:
    import triton.language as tl
except ImportError:  # pragma: no cover - the kernels run only where triton imports (fused_triton.kernels)
    tl = None

__all__ = ["z_kernel", "sparse_z_kernel", "ARRAYS"]

#: :func:`z_kernel`'s array arguments, in order: inputs, then the two outputs (``jax_triton``'s order)
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
    flags = starts_ptr + pid  # starts[s, pid], advanced by pointer (s · blocks may pass 2**31 too)
    for s in range(STEPS):
        doc = tl.load(docs_ptr + off)
        z_old = tl.load(z_ptr + off)
        new = doc != prev
        if tl.load(flags) > 0:
            done = new & (prev >= 0)
            tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=done[:, None] & in_k)
        row = tl.where(new[:, None], 0, row) + (z_old[:, None] == kk).to(tl.int32)
        prev = doc
        off += LANES_TOTAL
        flags += blocks
    tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=(prev >= 0)[:, None] & in_k)
    tl.debug_barrier()  # rows written by one thread of the program are read by another

    # pass 2: tokens in order, each lane's row carried in registers
    prev = tl.full((LANES,), -1, tl.int32)
    row = tl.zeros((LANES, KP), tl.int32)
    off = lane.to(tl.int64)  # the slots of step s, 64-bit (C·S·R may pass 2**31)
    flags = starts_ptr + pid  # starts[s, pid], advanced by pointer (s · blocks may pass 2**31 too)
    for s in range(STEPS):
        doc = tl.load(docs_ptr + off)
        w = tl.load(words_ptr + off)
        z_old = tl.load(z_ptr + off)
        u = tl.load(u_ptr + off)
        new = doc != prev
        if tl.load(flags) > 0:
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
        flags += blocks
    if not STALE:
        tl.store(ndk_ptr + prev.to(tl.int64)[:, None] * K + kk, row, mask=(prev >= 0)[:, None] & in_k)



def sparse_z_kernel(words_ptr, docs_ptr, starts_ptr, z_ptr, u_part_ptr, u_draw_ptr, cand_ptr, mass_ptr, phi_ptr,
                    z_out_ptr, STEPS: tl.constexpr, LANES_TOTAL: tl.constexpr, K: tl.constexpr,
                    W: tl.constexpr, LANES: tl.constexpr, KEEP_CURRENT: tl.constexpr):
    """The sparse exact z-update (:mod:`gibbsjax.models.lda.sparse`) of ``LANES`` lanes.

    Token i of document d with word w takes, with probability A / (A + B_w), the topic of
    another token j of d picked with probability φ_{z_j,w} / A (A = Σ_{j≠i} φ_{z_j,w}), else its
    α-term candidate (drawn beforehand in XLA from α_k φ_{k,w}; B_w, its total, in ``mass``).
    Each lane keeps its current document's topics in a window of ``W`` slots (W ≥ the longest
    document), loaded when the document starts and updated as its tokens are drawn, so a token
    costs O(W) gathers of φ instead of O(K).  Arrays as :func:`z_kernel`'s, plus u_part,
    u_draw, cand (int32), mass (float32), all (S, L).  ``KEEP_CURRENT``: a deliberately WRONG
    variant for the tests (the token's own old topic stays in the document term)."""
    pid = tl.program_id(0)
    blocks = LANES_TOTAL // LANES
    lane = pid * LANES + tl.arange(0, LANES)
    jj = tl.arange(0, W)[None, :]
    first = tl.zeros((LANES,), tl.int32)  # the step at which each lane's current document starts
    window = tl.zeros((LANES, W), tl.int32)  # its tokens' topics
    inside = tl.zeros((LANES, W), tl.int1)  # which window slots hold its tokens
    prev = tl.full((LANES,), -1, tl.int32)
    off = lane.to(tl.int64)
    flags = starts_ptr + pid
    for s in range(STEPS):
        doc = tl.load(docs_ptr + off)
        new = (doc != prev) & (doc >= 0)
        if tl.load(flags) > 0:
            slots = lane.to(tl.int64)[:, None] + (s + jj).to(tl.int64) * LANES_TOTAL
            fits = new[:, None] & (s + jj < STEPS)
            same = tl.load(docs_ptr + slots, mask=fits, other=-1) == doc[:, None]
            topics = tl.load(z_ptr + slots, mask=fits & same, other=0)
            window = tl.where(new[:, None], topics, window)
            inside = tl.where(new[:, None], fits & same, inside)
            first = tl.where(new, s, first)
        w = tl.load(words_ptr + off)
        position = s - first
        here = jj == position[:, None]
        others = inside if KEEP_CURRENT else inside & (jj != position[:, None])
        weights = tl.load(phi_ptr + w.to(tl.int64)[:, None] * K + window, mask=others, other=0.0)
        c = tl.cumsum(weights, axis=1)
        total = tl.max(c, axis=1)  # A
        # j: the first slot with weight whose cumulative sum passes u·A; with weight, whatever order
        # a compiled scan adds in (its carries can move a zero-weight slot's sum by an ulp); where
        # float32 rounding of u·A passes every slot, the last slot with weight
        weighted = others & (weights > 0)
        passes = weighted & (c > (tl.load(u_draw_ptr + off) * total)[:, None])
        j = tl.min(tl.where(passes, jj, W), axis=1)
        j = tl.where(j == W, tl.max(tl.where(weighted, jj, 0), axis=1), j)
        from_doc = tl.sum(tl.where(jj == j[:, None], window, 0), axis=1)
        from_doc_wins = tl.load(u_part_ptr + off) * (total + tl.load(mass_ptr + off)) < total
        k = tl.where(from_doc_wins, from_doc, tl.load(cand_ptr + off))
        tl.store(z_out_ptr + off, k)
        window = tl.where(here, k[:, None], window)
        prev = tl.where(doc >= 0, doc, prev)
        off += LANES_TOTAL
        flags += blocks
