"""The compiled pieces of a run: initial states of every chain (:func:`start_fn`),
what one draw records (:func:`records_fn`), a chunk of sweeps (:func:`chunk_fn`),
the running sums of the per-chain means (:func:`zero_accumulators`) and the chunk
length (:func:`compiled`)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp

from gibbsjax.kernel import Kernel
from gibbsjax.run.settings import DEFAULT_NUM_CHUNKS, Settings

__all__ = ["start_fn", "records_fn", "chunk_fn", "zero_accumulators", "zero_accumulators_shape", "compiled",
           "recorded_log_likelihood"]


# ----------------------------------------------------------------------------- compiled pieces
# Compilation dominates short runs (XLA on CPU takes ~0.3-1 s per function), so a
# run compiles few functions: one that derives the chain keys and initial states,
# and one chunk function shared by warm-up and sampling; a kernel with a warm-up
# transition of its own (or thinning) adds a warm-up chunk function, compiled only
# when there are warm-up sweeps (:func:`compiled`).  All are cached on the kernel's
# functions (factories memoise kernels per hyperparameters).
@functools.lru_cache(maxsize=128)
def start_fn(init: Callable) -> Callable:
    def start(key, chain_ids, data):
        chain_keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, chain_ids)
        split = jax.vmap(jax.random.split)(chain_keys)
        state = jax.vmap(init, in_axes=(0, None))(split[:, 0], data)
        return split[:, 1], state

    return jax.jit(start)


@functools.lru_cache(maxsize=128)
def records_fn(record: Callable | None, log_joint: Callable | None,
               log_likelihood: Callable | None = None) -> Callable:
    """What one draw of every chain records: ``posterior`` (``record``), ``lp`` (``log_joint``) and
    ``log_likelihood`` (the kernel's pointwise log likelihood), each vmapped over chains and jitted."""
    def records(state, data):
        out = {}
        if record is not None:
            out["posterior"] = jax.vmap(record, in_axes=(0, None))(state, data)
        if log_joint is not None:
            out["lp"] = jax.vmap(log_joint, in_axes=(0, None))(state, data)
        if log_likelihood is not None:
            out["log_likelihood"] = jax.vmap(log_likelihood, in_axes=(0, None))(state, data)
        return out

    return jax.jit(records)


@functools.lru_cache(maxsize=128)
def chunk_fn(
    step: Callable,
    record: Callable | None,
    log_joint: Callable | None,
    thin: int,
    length: int,
    accumulate: Callable | None = None,
    log_likelihood: Callable | None = None,
) -> Callable:
    """A jitted function running ``length`` iterations of ``thin`` sweeps for all chains.

    ``run(run_keys, state, acc, data, t0, n_active, keep, accum)``: iterations
    with index >= ``n_active`` are skipped, records are computed only when
    ``keep`` is true, and ``accumulate(state)`` is added to the running sums
    ``acc`` only when ``accum`` is true.  The predicates are unbatched scalars,
    so ``lax.cond`` really skips the work, and one compiled function serves
    warm-up, sampling and the last, shorter chunk.
    """
    vstep = jax.vmap(step, in_axes=(0, 0, None))
    records = records_fn(record, log_joint, log_likelihood)
    vacc = jax.vmap(accumulate, in_axes=(0, None)) if accumulate is not None else None

    def run(run_keys, state, acc, data, t0, n_active, keep, accum):
        def one_sweep(t, s):
            keys = jax.vmap(jax.random.fold_in, in_axes=(0, None))(run_keys, t)
            return vstep(keys, s, data)

        shapes = jax.eval_shape(records, state, data)

        def no_records(s):
            return jax.tree_util.tree_map(lambda sd: jnp.zeros(sd.shape, sd.dtype), shapes)

        def iteration(carry, i):
            s, acc = carry
            first = t0 + i * thin
            active = i < n_active

            def advance(s):
                if thin == 1:
                    return one_sweep(first, s)
                return jax.lax.fori_loop(first, first + thin, one_sweep, s)

            s = jax.lax.cond(active, advance, lambda s: s, s)
            out = jax.lax.cond(keep, lambda s: records(s, data), no_records, s)
            if vacc is not None:
                # the barrier rounds each draw's quantities before they join the sums: fused into the
                # sum, a product may become a fused multiply-add in some elements and not others
                # (jax 0.12 on a CPU), and the means would depend on the arrays' shapes (shards)
                acc = jax.lax.cond(
                    active & accum,
                    lambda a: jax.tree_util.tree_map(
                        lambda x, y: x + y.astype(x.dtype), a, jax.lax.optimization_barrier(vacc(s, data))
                    ),
                    lambda a: a,
                    acc,
                )
            return (s, acc), out

        (state, acc), outs = jax.lax.scan(iteration, (state, acc), jnp.arange(length, dtype=jnp.int32))
        return state, acc, outs

    return jax.jit(run)


@functools.lru_cache(maxsize=128)
def _batched_accumulate(accumulate: Callable) -> Callable:
    """``accumulate`` of every chain, jitted once per function: :func:`zero_accumulators` asks it
    for shapes at every run (and the memory check once more), which JAX then answers from its
    trace cache instead of tracing the counts again (0.05 s per run)."""
    return jax.jit(jax.vmap(accumulate, in_axes=(0, None)))


def zero_accumulators(accumulate: Callable | None, state, data) -> dict:
    """The running sums of a kernel's ``accumulate`` for every chain, at zero.

    Parameters
    ----------
    accumulate : callable or None
        The kernel's ``accumulate(state, data)``; ``None``: nothing is accumulated.
    state : pytree
        The chains' states (chain axis first).
    data : pytree
        The model's data.

    Returns
    -------
    dict
        Zeros shaped as ``accumulate``'s values per chain (float32 for integer values).
    """
    if accumulate is None:
        return {}
    shapes = jax.eval_shape(_batched_accumulate(accumulate), state, data)

    def zeros(sd):
        dtype = sd.dtype if jnp.issubdtype(sd.dtype, jnp.floating) else jnp.float32
        return jnp.zeros(sd.shape, dtype)

    return jax.tree_util.tree_map(zeros, shapes)


def _chunk_length(n_iters: int, chunk_size: int | None) -> int:
    """Iterations per chunk: ``chunk_size``, or about ``n_iters / DEFAULT_NUM_CHUNKS``
    rounded up to a power of two so that runs of different lengths share compiled
    code (skipped iterations of the last chunk cost ~nothing)."""
    if n_iters == 0:
        return 0
    want = chunk_size if chunk_size is not None else math.ceil(n_iters / DEFAULT_NUM_CHUNKS)
    want = max(1, min(want, n_iters))
    if chunk_size is not None:
        return want
    return 1 << (want - 1).bit_length()


def compiled(kernel: Kernel, s: Settings, n_iters: int):
    """``(length, warm_fn, draw_fn)``: the chunk length and the chunk functions of warm-up and sampling.

    The warm-up never adds to the running sums, and keeps records only with ``save_warmup``; its
    chunk function leaves out what it would never run (the kernel's ``record``, ``log_joint`` and
    ``accumulate``).  Where that function would be the sampling one with records (no
    ``warmup_step``, ``thin = 1``), the two phases share one compiled function: one compilation
    instead of two."""
    length = _chunk_length(max(n_iters, 1), s.chunk_size)
    log_likelihood = recorded_log_likelihood(kernel, s)
    draw_fn = chunk_fn(kernel.step, kernel.record, kernel.log_joint, s.thin, length, kernel.accumulate,
                       log_likelihood)
    if kernel.warmup_step is None and s.thin == 1:
        return length, draw_fn, draw_fn
    keep = s.save_warmup
    warm_fn = chunk_fn(kernel.warmup_step or kernel.step, kernel.record if keep else None,
                       kernel.log_joint if keep else None, 1, length, None, log_likelihood if keep else None)
    return length, warm_fn, draw_fn


def recorded_log_likelihood(kernel: Kernel, s: Settings) -> Callable | None:
    """The kernel's ``log_likelihood`` when the run records it (``s.log_likelihood``), else None."""
    return kernel.log_likelihood if s.log_likelihood else None


def zero_accumulators_shape(accumulate, abstract_state, data):
    """The shapes and dtypes of :func:`zero_accumulators`, without computing anything.

    Parameters
    ----------
    accumulate : callable or None
        The kernel's ``accumulate(state, data)``.
    abstract_state : pytree
        The chains' states, or their shapes (``jax.ShapeDtypeStruct``).
    data : pytree
        The model's data.

    Returns
    -------
    dict
        ``jax.ShapeDtypeStruct`` values.
    """
    if accumulate is None:
        return {}
    return jax.eval_shape(functools.partial(zero_accumulators, accumulate), abstract_state, data)
