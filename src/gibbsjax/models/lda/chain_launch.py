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

Both kernels also share their optional imports (:func:`optional_modules`) and their tile rules:
lanes per program (:func:`lanes_per_tile`) and warps per program (:func:`default_num_warps`).
"""

from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp

from gibbsjax._checks import check_int

__all__ = ["one_launch", "optional_modules", "check_grid", "power_of_two_lanes", "next_power_of_2", "lanes_per_tile",
           "default_num_warps", "TILE_ELEMENTS", "MAX_LANES"]

#: elements of one (lanes × padded K) tile that the default lanes-per-program rule aims at: larger
#: tiles spill registers (the probe behind it: benchmarks/README.md)
TILE_ELEMENTS = 2048
#: the most lanes one program takes by default
MAX_LANES = 32


def optional_modules(*names: str) -> tuple | None:
    """The modules ``names``, imported, or None where one of them cannot be imported.

    For the fused kernels' optional GPU dependencies (Pallas's Triton backend, ``triton``,
    ``jax_triton``), imported when asked, never at the top of a module that must import without them.

    Parameters
    ----------
    *names : str
        Module names, as :func:`importlib.import_module` takes them.

    Returns
    -------
    tuple of module or None
        The modules, in the order named; None when any import fails.

    Examples
    --------
    >>> [m.__name__ for m in optional_modules("math", "json")], optional_modules("no_such_module_here")
    (['math', 'json'], None)
    """
    try:
        return tuple(importlib.import_module(name) for name in names)
    except Exception:  # pragma: no cover - depends on what is installed
        return None


def check_grid(state, d, K: int) -> None:
    """The state checks of both fused z-updates: ``log_phi`` holds the kernel's K topics (K itself
    is validated once, where the kernel is made) and ``z`` fills the data's grid.

    Parameters
    ----------
    state : LDAState or LDALearnedState
        The state the z-update is given.
    d : LDAData
        The packed corpus.
    K : int
        The kernel's number of topics.

    Raises
    ------
    ValueError
        Naming the mismatch.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models.lda import data, partially_collapsed
    >>> d = data(Corpus.from_token_lists([["a", "b"], ["b"]]))
    >>> check_grid(partially_collapsed(2).init(jax.random.key(0), d), d, 3)
    Traceback (most recent call last):
    ...
    ValueError: log_phi has 2 topics but K = 3
    """
    if state.log_phi.shape[0] != K:
        raise ValueError(f"log_phi has {state.log_phi.shape[0]} topics but K = {K}")
    if state.z.shape != d.words.shape:
        raise ValueError(f"z has shape {state.z.shape} but the data grid is {d.words.shape}")


def power_of_two_lanes(lanes_per_program) -> int:
    """``lanes_per_program`` checked: an integer >= 1 and a power of two.

    Parameters
    ----------
    lanes_per_program : int
        Lanes of one program of a fused kernel.

    Returns
    -------
    int
        The lanes.

    Raises
    ------
    ValueError
        For anything else.

    Examples
    --------
    >>> power_of_two_lanes(8)
    8
    >>> power_of_two_lanes(6)
    Traceback (most recent call last):
    ...
    ValueError: lanes_per_program must be a power of two, got 6
    """
    lanes = check_int("lanes_per_program", lanes_per_program, 1)
    if lanes & (lanes - 1):
        raise ValueError(f"lanes_per_program must be a power of two, got {lanes}")
    return lanes


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= ``n`` (1 for ``n`` <= 1): a tile's padded size.

    Parameters
    ----------
    n : int
        A size.

    Returns
    -------
    int
        The padded size.

    Examples
    --------
    >>> next_power_of_2(100), next_power_of_2(1024), next_power_of_2(1)
    (128, 1024, 1)
    """
    return 1 << max(0, (n - 1).bit_length())


def lanes_per_tile(tile: int, elements: int = TILE_ELEMENTS, most: int | None = MAX_LANES) -> int:
    """Lanes per program by default: lanes × ``tile`` (a power of two) ≈ ``elements``, at most ``most``.

    Parameters
    ----------
    tile : int
        One lane's padded row (topics or steps), a power of two.
    elements : int, default TILE_ELEMENTS
        The elements one program's tile aims at.
    most : int or None, default MAX_LANES
        The cap (None: none).

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> lanes_per_tile(128), lanes_per_tile(1024), lanes_per_tile(128, 1 << 16, None)
    (16, 2, 512)
    """
    lanes = max(1, elements // tile)
    return lanes if most is None else max(1, min(most, lanes))


def default_num_warps(K: int, lanes_per_program: int) -> int:
    """Warps per program by default (both fused kernels): 4 for tiles of up to 2,048 elements,
    more for larger tiles so that each thread keeps about 16 of them in registers (with 4 warps
    at K = 10,000 the compiled Triton kernel spills to local memory).

    Parameters
    ----------
    K : int
        Topics (or the padded window of the sparse kernel).
    lanes_per_program : int
        Lanes of one program.

    Returns
    -------
    int
        Between 4 and 16.

    Examples
    --------
    >>> default_num_warps(100, 16), default_num_warps(1000, 2), default_num_warps(10_000, 1)
    (4, 4, 16)
    """
    return max(4, min(16, lanes_per_program * next_power_of_2(K) // 512))


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
