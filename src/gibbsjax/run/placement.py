"""Where a run's arrays live: the devices, the layout of a run over them (chains
spread, or the data split by the kernel's ``shard`` plan), placing keys, states,
sums and data, across processes too (``jax.distributed``); and the memory a run
needs there (:func:`check_memory`, :func:`estimate_result_bytes`)."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from gibbsjax.kernel import Kernel
from gibbsjax.memory import check_run as check_run_memory
from gibbsjax.run.chunks import (compiled, recorded_log_likelihood, records_fn, start_fn, zero_accumulators,
                                 zero_accumulators_shape)
from gibbsjax.run.settings import Settings

__all__ = [
    "fetch",
    "layout",
    "splits_data",
    "sharding_note",
    "place_data",
    "place_run",
    "check_memory",
    "check_layout_memory",
    "estimate_result_bytes",
]


# ----------------------------------------------------------------------------- devices and layout
def fetch(tree):
    """``jax.device_get``, also for arrays spread over the devices of several processes
    (``jax.distributed``): those are gathered first, so every process gets whole arrays."""
    def one(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            from jax.experimental import multihost_utils

            if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
                data = multihost_utils.process_allgather(jax.random.key_data(x), tiled=True)
                return jax.random.wrap_key_data(data, impl=jax.random.key_impl(x))
            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return x

    return jax.device_get(jax.tree_util.tree_map(one, tree))


def _devices(devices: int) -> list:
    available = jax.devices()
    if devices > len(available):
        hint = ""
        if available[0].platform == "cpu":  # JAX shows one CPU device unless told before it starts
            hint = (f"; for {devices} CPU devices set XLA_FLAGS=--xla_force_host_platform_device_count={devices} "
                    "in the environment before JAX starts")
        raise ValueError(f"devices={devices} asked for, but JAX sees {len(available)} "
                         f"({available[0].platform}): {', '.join(str(d) for d in available)}{hint}")
    return available[:devices]


def layout(kernel: Kernel, data, s: Settings, num_shards: int | None = None):
    """How a run uses ``s.devices``: ``(kernel, data, plan, mode)`` with mode ``None`` (one
    device, as given), ``"chains"`` (chains spread) or ``"data"`` (the kernel's ``shard``
    plan: its sharded kernel and data)."""
    if s.devices is None and s.shard != "data":
        if any(isinstance(x, jax.Array) and not x.is_fully_addressable for x in jax.tree_util.tree_leaves(data)):
            raise ValueError("the data are spread over the devices of several processes (jax.distributed, e.g. "
                             "lda_shard.from_parts): pass devices=jax.device_count() to split the run over them")
        return kernel, data, None, None
    devices = _devices(s.devices or 1)
    mode = s.shard
    if mode == "auto":
        mode = "chains" if s.num_chains % len(devices) == 0 else "data"
    if mode == "chains":
        return kernel, data, None, "chains"
    if kernel.shard is None:
        if s.shard == "auto":
            raise ValueError(f"num_chains ({s.num_chains}) must be a multiple of devices ({len(devices)}): every "
                             f"device runs the same number of chains, and kernel {kernel.name} cannot split its "
                             "data over devices instead (it declares no Kernel.shard)")
        raise ValueError(f"kernel {kernel.name} cannot split its data over devices (it declares no Kernel.shard); "
                         "use shard='chains' with num_chains a multiple of devices")
    plan = kernel.shard(data, devices, num_shards)
    return plan.kernel, plan.data, plan, "data"


def splits_data(settings: Settings) -> bool:
    """Whether a run of ``settings`` splits the data over devices (``shard="data"``, or
    ``"auto"`` with ``num_chains`` not a multiple of ``devices``) rather than spreading
    the chains or using one device.

    >>> splits_data(Settings(num_chains=2, devices=4)), splits_data(Settings(num_chains=4, devices=4))
    (True, False)
    """
    if settings.shard == "data":
        return True
    return settings.shard == "auto" and settings.devices is not None and settings.num_chains % settings.devices != 0


def sharding_note(mode, plan, s: Settings) -> str:
    """What ran where, in words: the result's ``attrs["sharding"]``.

    Parameters
    ----------
    mode : str
        ``"data"``, ``"chains"`` or ``"none"``.
    plan : object
        The layout of a data-split run (its ``description`` is used).
    s : Settings
        The run's settings.

    Returns
    -------
    str
        For example ``"chains: 8 chains over 4 devices"``.
    """
    if mode == "data":
        return f"data: {plan.description}"
    if mode == "chains":
        return f"chains: {s.num_chains} chains over {s.devices} devices"
    return "none"


def _put(x, sharding):
    """``x`` as a global array with ``sharding``; across several processes (jax.distributed)
    each process supplies the pieces its own devices hold."""
    if jax.process_count() == 1:
        return jax.device_put(x, sharding)
    if isinstance(x, jax.Array) and x.sharding == sharding:
        return x
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return jax.jit(lambda a: a, out_shardings=sharding)(x)
    host = x if not isinstance(x, jax.Array) else np.asarray(x)
    if jnp.issubdtype(getattr(x, "dtype", np.float32), jax.dtypes.prng_key):
        data = np.asarray(jax.random.key_data(x))
        made = jax.make_array_from_callback(data.shape, sharding, lambda idx: data[idx])
        return jax.random.wrap_key_data(made, impl=jax.random.key_impl(x))
    return jax.make_array_from_callback(np.shape(host), sharding, lambda idx: np.asarray(host[idx]))


def _by_specs(mesh, specs, tree, batched: bool):
    """``tree`` placed by a prefix pytree of PartitionSpecs (``batched``: a leading chain axis, unsplit)."""
    def one(spec, sub):
        sharding = NamedSharding(mesh, PartitionSpec(None, *spec) if batched else spec)
        return jax.tree_util.tree_map(lambda x: _put(x, sharding), sub)

    return jax.tree_util.tree_map(one, specs, tree, is_leaf=lambda x: isinstance(x, PartitionSpec))


def place_data(plan, data):
    """The sharded data on their devices (before the chains start); unchanged otherwise."""
    if plan is None:
        return data
    return _by_specs(plan.mesh, plan.data_specs, data, batched=False)


def place_run(mode, devices: int | None, run_keys, state, acc, data, plan=None):
    """Chains spread over ``devices`` devices (``mode="chains"``: a 1-D mesh along the
    chain axis, the data replicated on each) or the data split over them (``"data"``:
    by the kernel's ``shard`` plan, every chain on every device); with ``None``
    everything stays where it is.  Each chain's computation is the same as on one
    device, so its draws are too."""
    if mode is None:
        return run_keys, state, acc, data
    if mode == "data":
        mesh = plan.mesh
        keys = _put(run_keys, NamedSharding(mesh, PartitionSpec()))
        return (keys, _by_specs(mesh, plan.state_specs, state, True),
                _by_specs(mesh, plan.acc_specs, acc, True) if acc else acc, place_data(plan, data))
    by_chain, replicated = _chain_shardings(devices)
    put = functools.partial(jax.device_put, device=by_chain)
    return (put(run_keys), jax.tree_util.tree_map(put, state), jax.tree_util.tree_map(put, acc),
            jax.device_put(data, replicated))


def _chain_shardings(devices: int):
    """The shardings of a run with its chains spread over ``devices`` devices: ``(by chain,
    replicated)`` on a 1-D mesh along the chain axis."""
    mesh = Mesh(np.array(_devices(devices)[:devices]), ("chain",))
    return NamedSharding(mesh, PartitionSpec("chain")), NamedSharding(mesh, PartitionSpec())


def check_memory(kernel: Kernel, data: Any, settings: Settings, *, key: jax.Array | None = None):
    """Refuse a run of ``settings`` that cannot fit in memory (:func:`gibbsjax.memory.check_run`,
    on abstract shapes: nothing is allocated or compiled); :func:`sample` calls it first.
    A run that splits its data over devices (:func:`splits_data`) is checked per device
    (each holds its shard of the data and of every chain's state).

    >>> from gibbsjax.models import normal
    >>> _ = check_memory(normal.bivariate(rho=0.5), None, Settings(num_chains=4, num_draws=100))
    """
    kernel, data, plan, mode = layout(kernel, data, settings)
    return check_layout_memory(kernel, data, settings, key, plan, mode)


def check_layout_memory(kernel: Kernel, data: Any, s: Settings, key, plan=None, mode=None):
    """:func:`check_memory` of the kernel that runs; with ``plan`` (data split over devices)
    or ``mode="chains"`` (chains spread over ``s.devices``) per device, on abstract arguments
    placed as :func:`place_run` will place them.  The chunk functions are compiled for those
    arguments, so the run that follows finds them compiled (checked against unplaced
    arguments, a run over devices compiled every chunk function twice)."""
    length, warm_fn, draw_fn = compiled(kernel, s, max(s.num_warmup, s.num_draws))
    kept = ((s.max_draws or 10 * s.num_draws) if s.until else s.num_draws) + (
        s.num_warmup + 1 if s.save_warmup else 0)
    place = devices = None
    spread = "data"
    if plan is not None:
        place = functools.partial(_abstract_placement, plan)
        devices = list(plan.mesh.devices.flat)
    elif mode == "chains":
        by_chain, replicated = _chain_shardings(s.devices)
        place = functools.partial(_abstract_chain_placement, by_chain, replicated)
        devices = list(by_chain.mesh.devices.flat)
        spread = "chains"
    chunk_fns = (draw_fn, warm_fn) if s.num_warmup else (draw_fn,)  # the warm-up's only if it runs
    return check_run_memory(
        start_fn(kernel.init), chunk_fns, functools.partial(zero_accumulators, kernel.accumulate),
        jax.random.key(0) if key is None else key, s.num_chains, data, length=length, kept=kept,
        kernel_name=kernel.name, place=place, devices=devices, dims=kernel.dims, label_dims=kernel.label_dims,
        sizes=kernel.sizes(data) if kernel.sizes is not None else None, spread=spread,
    )


def _placed(sharding, tree):
    """The abstract shapes of ``tree``'s arrays, each with ``sharding``."""
    return jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), tree)


def _abstract_chain_placement(by_chain, replicated, run_keys, state, acc, data):
    """Abstract shapes with the shardings :func:`place_run` gives a run with its chains spread."""
    return (_placed(by_chain, run_keys), _placed(by_chain, state), _placed(by_chain, acc),
            _placed(replicated, data))


def _abstract_placement(plan, run_keys, state, acc, data):
    """Abstract shapes with the shardings :func:`place_run` gives a run split by ``plan``."""
    def by_specs(specs, tree, batched):
        def one(spec, sub):
            return _placed(NamedSharding(plan.mesh, PartitionSpec(None, *spec) if batched else spec), sub)

        return jax.tree_util.tree_map(one, specs, tree, is_leaf=lambda x: isinstance(x, PartitionSpec))

    return (_placed(NamedSharding(plan.mesh, PartitionSpec()), run_keys), by_specs(plan.state_specs, state, True),
            by_specs(plan.acc_specs, acc, True) if acc else acc, by_specs(plan.data_specs, data, False))


# ----------------------------------------------------------------------------- size of a result
def estimate_result_bytes(kernel: Kernel, data: Any, settings: Settings) -> int:
    """About how many bytes the InferenceData of a run takes (and its NetCDF file,
    uncompressed): the kept records, ``lp``, the per-chain means and the
    ``sampler_state``; computed on abstract shapes, nothing runs.  With
    ``until`` the cap ``max_draws`` counts.

    >>> from gibbsjax.models import normal
    >>> estimate_result_bytes(normal.bivariate(rho=0.5), None, Settings(num_chains=4, num_draws=1000)) > 0
    True
    """
    s = settings
    chains = jax.ShapeDtypeStruct((s.num_chains,), jnp.int32)
    try:
        _, state = jax.eval_shape(start_fn(kernel.init), jax.random.key(0), chains, data)
    except (ValueError, TypeError):
        if not (splits_data(s) and kernel.shard is not None):
            raise
        # data already laid out for the devices (e.g. lda_shard.from_parts): the sharded kernel runs
        plan = kernel.shard(data, _devices(s.devices or 1))
        kernel, data = plan.kernel, plan.data
        _, state = jax.eval_shape(start_fn(kernel.init), jax.random.key(0), chains, data)
    per_draw = jax.eval_shape(records_fn(kernel.record, kernel.log_joint, recorded_log_likelihood(kernel, s)),
                              state, data)
    draws = (s.max_draws or 10 * s.num_draws) if s.until else s.num_draws
    draws += (s.num_warmup + 1) if s.save_warmup else 0

    def nbytes(tree) -> int:
        return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree_util.tree_leaves(tree))

    acc = zero_accumulators_shape(kernel.accumulate, state, data)
    return draws * nbytes(per_draw) + 2 * nbytes(acc) + nbytes(state)
