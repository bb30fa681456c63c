"""One launch of a fused GPU kernel for every chain, split along the chains over devices.

The fused z-updates (:mod:`gibbsjax.models.lda.pallas`, :mod:`gibbsjax.models.lda.fused_triton`)
are custom calls that XLA does not know.  Two things follow, both handled here for a launch
function whose array arguments carry a leading chain axis:

* **vmap.**  ``jax.vmap`` over chains (nested too: the samplers vmap the sweep over chains, the
  Geweke test over simulated data sets) is folded by :func:`jax.custom_batching.custom_vmap` into
  that chain axis, so all chains share one launch;
* **devices.**  With the chains spread over devices (``gibbsjax.sample(..., devices=n)``: the
  chain axis sharded, the rest left to XLA's SPMD partitioner), a custom call without a sharding
  rule would be gathered onto every device and run whole there, every device doing every chain's
  work.  :func:`jax.experimental.custom_partitioning` tells the partitioner the launch is
  independent across chains: each device launches its own chains.  Where the process sees one
  device the launch is used as it is (what the partitioner would inline), so a single-GPU run does
  not depend on ``custom_partitioning`` at all.  A host callback (Triton's interpreter) cannot run
  inside a partitioned operation on the CPU, so :func:`one_launch` partitions only where asked.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["one_launch"]


def _partitioned(launch, rule: str, chained):
    """``launch`` as an operation the SPMD partitioner splits along the chain axis of the arguments
    ``chained`` (booleans, one per argument; the others replicated), following ``rule`` (Shardy's
    notation, the chain axis called ``c``)."""
    from jax.experimental.custom_partitioning import custom_partitioning
    from jax.sharding import NamedSharding, PartitionSpec

    def specs(mesh, shapes, arg_shapes, flags):
        first = next(a for a, c in zip(arg_shapes, chained) if c)
        spec = getattr(first.sharding, "spec", ())
        chain = spec[0] if len(spec) else None
        return tuple(NamedSharding(mesh, PartitionSpec(*((chain,) if c else (None,)), *([None] * (len(s.shape) - 1))))
                     for s, c in zip(shapes, flags))

    def partition(mesh, arg_shapes, result_shape):
        results = specs(mesh, result_shape, arg_shapes, [True] * len(result_shape))
        return mesh, launch, results, specs(mesh, arg_shapes, arg_shapes, chained)

    def infer(mesh, arg_shapes, result_shape):
        return specs(mesh, result_shape, arg_shapes, [True] * len(result_shape))

    wrapped = custom_partitioning(launch)
    wrapped.def_partition(partition, infer_sharding_from_operands=infer, sharding_rule=rule)
    return wrapped


def one_launch(launch, rule: str, *, chained=None, partition: bool = True):
    """``launch(*arrays) -> tuple of arrays`` (each argument with a chain axis first where
    ``chained`` says so, default all; every output with one) as a function that ``jax.vmap``
    folds into that chain axis and, with ``partition``, that the SPMD partitioner splits along it.

    ``rule``: the launch's sharding rule in Shardy's notation, the chain axis named ``c`` (for
    example ``"c s r, s r -> c s r"``).  A vmap that batches an argument without a chain axis
    (another corpus per batch element, as the Geweke test does) runs ``jax.vmap(launch)`` instead,
    so ``launch`` must then be batchable itself (a Pallas kernel is; a ``jax_triton`` call is not,
    and gets only chained arguments).

    >>> import jax.numpy as jnp
    >>> double = one_launch(lambda x: (2 * x,), "c s -> c s", partition=False)
    >>> jax.vmap(lambda x: double(x[None])[0][0])(jnp.ones((3, 2))).tolist()
    [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
    """
    chained = tuple(chained) if chained is not None else None
    call = launch
    if partition:
        cache = {}

        def call(*args):
            if jax.device_count() == 1:  # nothing to split: the launch as it is, as the partitioner would inline it
                return launch(*args)
            flags = chained or (True,) * len(args)
            if flags not in cache:
                cache[flags] = _partitioned(launch, rule, flags)
            return cache[flags](*args)

    @jax.custom_batching.custom_vmap
    def run(*args):
        return call(*args)

    @run.def_vmap
    def _(axis_size, in_batched, *args):
        flags = chained or (True,) * len(args)
        if any(b and not c for b, c in zip(in_batched, flags)):  # batched data: the launch's own batching
            out = jax.vmap(launch, in_axes=tuple(0 if b else None for b in in_batched))(*args)
            return out, (True,) * len(out)
        # the batch axis joins the chain axis of every chained argument
        args = [x if b or not c else jnp.broadcast_to(x, (axis_size, *x.shape))
                for x, b, c in zip(args, in_batched, flags)]
        chains = next(x for x, c in zip(args, flags) if c).shape[1]
        merged = run(*(x.reshape(axis_size * chains, *x.shape[2:]) if c else x for x, c in zip(args, flags)))
        return tuple(x.reshape(axis_size, chains, *x.shape[1:]) for x in merged), (True,) * len(merged)

    return run
