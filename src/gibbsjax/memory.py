"""Will a run fit?  A memory estimate made before any sampling.

:func:`gibbsjax.sample` (and so the LDA estimator and ``gibbsjax run``) calls
:func:`check_run` after it has built its compiled chunk function and before it
allocates the chains' initial states.  The estimate has two parts:

* **device memory** of the largest compiled piece, the chunk function that runs
  the sweeps: XLA's own memory analysis of the compiled code
  (``jit(f).lower(...).compile().memory_analysis()``: arguments, outputs,
  temporaries and generated code, less the buffers outputs alias), lowered on
  *abstract* shapes (``jax.ShapeDtypeStruct``) so that nothing big is
  allocated for the check.  The chains' states, what ``init`` returns, are
  shapes from ``jax.eval_shape`` too.  When even the arguments and outputs
  alone (no compilation needed) exceed what is available, the run is refused
  without compiling;
* **host memory** for the draws the run keeps: ``chains × kept draws ×`` the
  bytes one recorded draw takes, twice (the chunks and their concatenation
  are alive together at the end).

* **post-processing** (kernels with ``label_dims``, whose results are aligned
  across chains: LDA's topics, a mixture's clusters): the raw result, the
  processed copy and the aligned copy of the draws and per-chain means, float64
  work arrays of the means, and the K × K distance matrices of the alignment
  (:func:`postprocess_bytes`).  It comes after sampling, so it counts as the
  larger of it and the sampling's own peak;
* **before any trace**, a kernel that declares ``sizes(data)`` (the sizes of its
  dims as Python ints) gets a floor from them: one float32 copy per chain of
  every variable of ``dims`` and the post-processing of those sizes, so a huge
  number of topics is refused with an estimate before ``init`` is traced (where
  its arrays could not even be described).

All sizes are Python integers (no fixed-width overflow).  On a CPU, device
memory *is* host memory, so the two are added and compared with the memory the operating system says is available (``MemAvailable`` in
``/proc/meminfo``, bounded by a cgroup limit when there is one).  On a GPU the
device part is compared with the device's free memory
(``memory_stats()["bytes_limit"] - ["bytes_in_use"]``) and the host part with
the host's.  A run that does not fit raises :class:`MemoryEstimateError` (a
``ValueError``) with one line: what it needs, what is available and what to
change.  Set ``GIBBSJAX_MEMORY_CHECK=0`` to skip the check (for instance when
swap makes more memory usable than the estimate counts).

The compiled chunk function is the one the run then uses: JAX keeps it, so the
check costs a trace, not a second compilation.

>>> from gibbsjax.memory import available_memory, format_bytes
>>> nbytes, where = available_memory()
>>> where in ("host RAM", "GPU memory") or nbytes is None
True
>>> format_bytes(3 * 2**30)
'3.0 GiB'
"""

from __future__ import annotations

import concurrent.futures
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "MemoryEstimateError",
    "MemoryEstimate",
    "available_memory",
    "host_available_bytes",
    "compiled_bytes",
    "tree_bytes",
    "format_bytes",
    "check_run",
    "postprocess_bytes",
    "check_sizes",
]

#: a run may use up to this fraction of the available memory
SAFETY_FRACTION = 0.9


class MemoryEstimateError(ValueError):
    """A run refused before sampling because its memory estimate exceeds what is available.

    Examples
    --------
    >>> from gibbsjax.memory import MemoryEstimateError
    >>> issubclass(MemoryEstimateError, ValueError)
    True
    """


@dataclass(frozen=True)
class MemoryEstimate:
    """What a run needs and what is available, in bytes.

    ``device_bytes``: the compiled chunk function (XLA's analysis, or the
    arguments and outputs alone when ``compiled`` is false); ``host_bytes``:
    the kept draws on the host; ``available_device`` / ``available_host``:
    free memory (None when unknown); ``on_cpu``: device memory is host memory.

    Examples
    --------
    >>> from gibbsjax.memory import MemoryEstimate
    >>> [f for f in MemoryEstimate.__dataclass_fields__][:3]
    ['device_bytes', 'host_bytes', 'available_device']
    """

    device_bytes: int
    host_bytes: int
    available_device: int | None
    available_host: int | None
    on_cpu: bool
    compiled: bool
    postprocess_bytes: int = 0

    @property
    def needed(self) -> int:
        """Bytes needed from the scarcer pool (host RAM on a CPU, else the device)."""
        if self.on_cpu:
            return max(self.device_bytes + self.host_bytes, self.postprocess_bytes)
        return self.device_bytes

    def shortfall(self) -> tuple[str, int, int] | None:
        """``(what, needed, available)`` for the first pool that is too small, else None."""
        if self.on_cpu:
            pools = [("host RAM", self.needed, self.available_host)]
        else:
            pools = [
                ("GPU memory", self.device_bytes, self.available_device),
                ("host RAM", max(self.host_bytes, self.postprocess_bytes), self.available_host),
            ]
        for what, need, have in pools:
            if have is not None and need > SAFETY_FRACTION * have:
                return what, need, have
        return None


def format_bytes(n: float) -> str:
    """Bytes in binary units, one decimal.

    >>> format_bytes(1536), format_bytes(93.5 * 2**30), format_bytes(12)
    ('1.5 KiB', '93.5 GiB', '12 B')
    """
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(n) < 1024 or unit == "EiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def host_available_bytes() -> int | None:
    """Memory available to new allocations on the host, in bytes (None if unknown).

    ``MemAvailable`` from ``/proc/meminfo`` (else ``os.sysconf`` free pages),
    bounded by the cgroup (v2) limit less current use when one is set.

    >>> n = host_available_bytes()
    >>> n is None or n > 0
    True
    """
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            avail = None
    limit = _read_int("/sys/fs/cgroup/memory.max")
    used = _read_int("/sys/fs/cgroup/memory.current")
    if limit is not None and used is not None:
        room = max(limit - used, 0)
        avail = room if avail is None else min(avail, room)
    return avail


def _device_available(device) -> int | None:
    try:
        stats = device.memory_stats()
    except Exception:  # backends without memory stats
        return None
    if not stats or "bytes_limit" not in stats:
        return None
    return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))


def available_memory(device=None) -> tuple[int | None, str]:
    """``(bytes, "host RAM" | "GPU memory")``: free memory where a run's arrays live.

    ``device`` defaults to ``jax.devices()[0]``.  On a CPU this is
    :func:`host_available_bytes`; on an accelerator, its ``bytes_limit`` less
    ``bytes_in_use``.

    >>> nbytes, where = available_memory()
    """
    device = device if device is not None else jax.devices()[0]
    if device.platform == "cpu":
        return host_available_bytes(), "host RAM"
    return _device_available(device), "GPU memory" if device.platform == "gpu" else f"{device.platform} memory"


def tree_bytes(tree: Any, *, per_device: bool = False) -> int:
    """Total bytes of the arrays (or ``ShapeDtypeStruct`` shapes) in a pytree.

    Typed PRNG keys count as their key data (8 bytes for threefry).  With
    ``per_device``, a leaf that has a ``sharding`` counts the bytes one device
    holds of it (its shard's shape; a replicated leaf counts whole).

    >>> import jax.numpy as jnp
    >>> tree_bytes({"a": jnp.zeros((10, 3)), "b": jax.ShapeDtypeStruct((4,), jnp.int8)})
    124
    """
    total = 0
    for leaf in jax.tree_util.tree_leaves(tree):
        shape = getattr(leaf, "shape", np.shape(leaf))
        sharding = getattr(leaf, "sharding", None) if per_device else None
        if sharding is not None:
            shape = sharding.shard_shape(tuple(shape))
        dtype = getattr(leaf, "dtype", None)
        if dtype is None:
            dtype = np.asarray(leaf).dtype
        if jnp.issubdtype(dtype, jax.dtypes.prng_key):
            itemsize = 8  # threefry2x32 key data; other implementations are similar
        else:
            itemsize = np.dtype(dtype).itemsize
        total += math.prod(int(n) for n in shape) * int(itemsize)  # Python ints: no overflow
    return total


def postprocess_bytes(draw_bytes: int, mean_bytes: int, mean_elements: int, label_sizes: Iterable[int] = (),
                      state_bytes: int = 0) -> int:
    """Peak bytes of post-processing a result whose components are aligned across chains.

    ``draw_bytes``: the kept draws of all chains; ``mean_bytes`` / ``mean_elements``:
    the per-chain means (``posterior_mean``); ``label_sizes``: the number of
    components of each label dimension (K topics); ``state_bytes``: the
    ``sampler_state`` group (the chains' states and running sums).  Counted: three
    copies of the result (the raw one, the processed copy, the aligned copy), six
    float64 arrays of the means' size (the alignment's and agreement's work arrays, and the
    coherence's document and window counts)
    and three float64 K × K matrices per label dimension (distances, the
    assignment's cost, temporaries).  Python integers throughout.  Measured with
    ``tracemalloc`` on LDA (K = 50-300, V = 1,500-3,000, 2-4 chains) the real peak
    was about 0.7 of this with four such arrays; gensim-convention coherence (sliding windows)
    raised it past the estimate at K = 120, V = 1,500, hence six.

    >>> from gibbsjax.memory import format_bytes
    >>> format_bytes(postprocess_bytes(0, 4 * 4 * 300 * 3000, 4 * 300 * 3000, [300]))
    '208.1 MiB'
    """
    result = int(draw_bytes) + int(mean_bytes) + int(state_bytes)
    work = 3 * result + 6 * 8 * int(mean_elements)
    return work + sum(3 * 8 * int(k) * int(k) for k in label_sizes)


def _label_sizes(trees_and_lead, dims: Mapping | None, label_dims) -> list[int]:
    """The size of every label dim, read from the abstract shapes of the variables that have it."""
    found: dict[str, int] = {}
    for tree, lead in trees_and_lead:
        for name, leaf in (tree or {}).items():
            for i, dim in enumerate((dims or {}).get(name, ())):
                if dim in label_dims and lead + i < len(leaf.shape):
                    found[dim] = max(found.get(dim, 0), int(leaf.shape[lead + i]))
    return list(found.values())


def _floor(sizes: Mapping[str, int], dims: Mapping, label_dims, num_chains: int) -> tuple[int, int]:
    """``(state floor, post-processing floor)`` from the dims' sizes alone (Python ints, no trace):
    one float32 copy per chain of every variable of ``dims``."""
    elements = 0
    for names in dims.values():
        if all(d in sizes for d in names):
            elements += int(num_chains) * math.prod(int(sizes[d]) for d in names)
    labels = [int(sizes[d]) for d in label_dims if d in sizes]
    return 4 * elements, postprocess_bytes(0, 4 * elements, elements, labels) if labels else 0


def compiled_bytes(compiled) -> int | None:
    """Bytes a compiled function needs by XLA's memory analysis, or None if it has none.

    ``argument + output + temp + generated code - alias`` (or XLA's peak, when
    it reports a larger one) of ``compiled.memory_analysis()``.

    >>> import jax, jax.numpy as jnp
    >>> c = jax.jit(lambda x: x * 2).lower(jax.ShapeDtypeStruct((1000,), jnp.float32)).compile()
    >>> compiled_bytes(c) >= 8000
    True
    """
    try:
        stats = compiled.memory_analysis()
    except Exception:  # not every backend implements it
        return None
    if stats is None:
        return None

    def get(name: str) -> int:
        value = getattr(stats, name, 0)
        return int(value) if value is not None else 0

    total = (
        get("argument_size_in_bytes")
        + get("output_size_in_bytes")
        + get("temp_size_in_bytes")
        + get("generated_code_size_in_bytes")
        - get("alias_size_in_bytes")
    )
    return max(total, get("peak_memory_in_bytes"))


#: :func:`compiled_bytes` of the chunk functions by (function, abstract arguments, backend): a
#: second run of the same kernel on data of the same shapes is not lowered and analysed again
#: (its cost is in benchmarks/README.md); XLA's analysis of the same program does not change
_MEASURED: dict = {}
_MEASURED_MAX = 64


def _measured_bytes(fn: Callable, args) -> int | None:
    """``compiled_bytes(fn.lower(*args).compile())``, remembered for ``fn`` and the shapes,
    dtypes and shardings of ``args`` (jitted functions take no value of theirs into the program)."""
    leaves, treedef = jax.tree_util.tree_flatten(args)
    signature = tuple(
        (tuple(x.shape), str(x.dtype), getattr(x, "sharding", None), bool(getattr(x, "weak_type", False)))
        if hasattr(x, "shape") and hasattr(x, "dtype") else (type(x).__name__,)
        for x in leaves)
    key = (fn, treedef, signature, jax.default_backend())
    try:
        hash(key)
    except TypeError:  # an unhashable sharding: measured every time
        return compiled_bytes(fn.lower(*args).compile())
    if key not in _MEASURED:
        if len(_MEASURED) >= _MEASURED_MAX:
            _MEASURED.pop(next(iter(_MEASURED)))
        _MEASURED[key] = compiled_bytes(fn.lower(*args).compile())
    return _MEASURED[key]


def _measured_all(fns: list, args) -> list:
    """:func:`_measured_bytes` of every function, compiled side by side in threads (XLA compiles
    without holding Python's lock: the warm-up and the sampling chunks of a run compile at once
    on two cores); the run then calls what was compiled here."""
    if len(fns) < 2:
        return [_measured_bytes(fn, args) for fn in fns]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(fns)) as pool:
        return list(pool.map(lambda fn: _measured_bytes(fn, args), fns))


def _advice(kernel_name: str, num_chains: int, fraction: float, split: int = 0, smaller: tuple = (),
            spread: str = "data") -> str:
    fit = max(int(num_chains * fraction), 0)
    tips = [f"a smaller {' or '.join(smaller)} (post-processing grows as its square)"] if smaller else []
    if split and spread == "chains":
        tips.append(f"more devices to spread the chains over (devices = {split} now; each holds 1/devices "
                    "of the chains and a copy of the data)")
    elif split:
        tips.append(f"more devices to split the data over (devices = {split} now; each holds about 1/devices "
                    "of the data and of every chain's state)")
    if num_chains > 1:
        tips.append(f"fewer chains (num_chains = {num_chains}; about {fit} would fit)" if fit >= 1 else
                    f"fewer chains (num_chains = {num_chains})")
    if "uncollapsed" in kernel_name:
        tips.append("the partially collapsed LDA sampler (model lda.partially_collapsed)")
    tips.append("a smaller chunk_size (draws per compiled chunk), fewer kept draws or a larger thin")
    return "use " + ", or ".join(tips)


def check_sizes(sizes: Mapping[str, int], dims: Mapping, label_dims: Iterable[str], num_chains: int, *,
                kernel_name: str = "kernel", device=None, split: int = 0, spread: str = "data") -> None:
    """Refuse, before anything is traced, a run whose dims' ``sizes`` (Python ints, a
    kernel's ``sizes(data)``) already exceed the memory available: one float32 copy per
    chain of every variable of ``dims`` (per device when ``split`` over that many
    devices) and the post-processing of those sizes (:func:`postprocess_bytes`).
    :class:`MemoryEstimateError` with the estimate; ``GIBBSJAX_MEMORY_CHECK=0`` skips it.

    >>> check_sizes({"topic": 10**9, "word": 3}, {"topic_word": ("topic", "word")}, ("topic",), 2)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gibbsjax.memory.MemoryEstimateError: this run needs at least 20.8 EiB of host RAM (topic = 1,000,000,000, ...
    """
    if os.environ.get("GIBBSJAX_MEMORY_CHECK", "1").strip() == "0":
        return
    device = device if device is not None else jax.devices()[0]
    on_cpu = device.platform == "cpu"
    label_dims = tuple(label_dims)
    state_floor, post_floor = _floor(sizes, dims, label_dims, num_chains)
    if split:  # split over devices: each holds a share of the state; post-processing is whole
        state_floor //= split
    floor = MemoryEstimate(state_floor, 0, None if on_cpu else _device_available(device), host_available_bytes(),
                           on_cpu, compiled=False, postprocess_bytes=post_floor)
    short = floor.shortfall()
    if short is not None:
        what, need, have = short
        shown = ", ".join(f"{d} = {int(n):,}" for d, n in sizes.items())
        raise MemoryEstimateError(
            f"this run needs at least {format_bytes(need)} of {what} ({shown}: "
            f"{format_bytes(state_floor)} for one float32 copy of the per-chain arrays, "
            f"{format_bytes(post_floor)} to post-process them), but {format_bytes(have)} is available "
            f"(a run may use {SAFETY_FRACTION:.0%} of it): "
            + _advice(kernel_name, num_chains, SAFETY_FRACTION * have / max(need, 1), split, spread=spread,
                      smaller=tuple(d for d in label_dims if d in sizes) if post_floor > state_floor else ()))


def check_run(
    start: Callable,
    chunk_fns: Iterable[Callable],
    zero_accumulators: Callable,
    key: jax.Array,
    num_chains: int,
    data: Any,
    *,
    length: int,
    kept: int,
    kernel_name: str = "kernel",
    device=None,
    place: Callable | None = None,
    devices: list | None = None,
    dims: Mapping | None = None,
    label_dims: Iterable[str] = (),
    sizes: Mapping[str, int] | None = None,
    spread: str = "data",
) -> MemoryEstimate | None:
    """Refuse a run of :func:`gibbsjax.sample` that cannot fit; return the estimate.

    ``start(key, chain_ids, data) -> (run_keys, state)`` and every
    ``chunk(run_keys, state, acc, data, t0, n, keep, accum) -> (state, acc,
    records)`` are the runner's jitted functions; ``zero_accumulators(state,
    data)`` builds the accumulators.  Everything is evaluated on abstract
    shapes.  ``length``: iterations per chunk; ``kept``: draws per chain the
    run keeps on the host.  Raises :class:`MemoryEstimateError` naming what is
    needed, what is available and what to change; returns None when the check
    is turned off (``GIBBSJAX_MEMORY_CHECK=0``) or nothing runs (``length`` 0).

    **Data split over devices** (``Kernel.shard``): ``place(run_keys, state,
    acc, data)`` gives the abstract arguments the shardings the run places them
    with, and ``devices`` are the mesh's devices.  Then every size is *per
    device*: the shard of each argument and output a device holds, and XLA's
    analysis of the partitioned (per-device) program.  On a GPU one device's
    share is compared with the free memory of the fullest device of this
    process; on a CPU the devices share the host's memory, so the share times
    this process's number of devices, plus the kept draws, is compared with it.

    **Chains spread over devices** (``spread="chains"``): ``place`` gives the chain
    axis of the keys, states and sums a sharding over the devices and the data a
    replicated one, as the run places them, and the sizes are per device in the same
    way.  Either way the chunk functions are compiled for the arguments the run passes
    (shardings included), so the run reuses that compilation instead of compiling
    again.

    **Post-processing**: with ``label_dims`` (the kernel's), the peak of aligning
    the result (:func:`postprocess_bytes`), from ``dims`` and the abstract shapes
    of the records and means; with ``sizes`` (the kernel's ``sizes(data)``) a
    floor is checked first, before anything is traced.

    >>> import gibbsjax
    >>> from gibbsjax.models import normal
    >>> _ = gibbsjax.sample(normal.bivariate(0.5), seed=0, num_chains=2, num_draws=10,
    ...                     num_warmup=0, progress=False)   # checked, fits
    """
    if os.environ.get("GIBBSJAX_MEMORY_CHECK", "1").strip() == "0" or length == 0:
        return None
    local = [d for d in (devices or []) if d.process_index == jax.process_index()]
    device = device if device is not None else (local[0] if local else jax.devices()[0])
    on_cpu = device.platform == "cpu"
    label_dims = tuple(label_dims)
    host_avail = host_available_bytes()
    if sizes is not None and dims:
        # 0. before any trace: the sizes alone (a huge number of topics cannot even be traced)
        check_sizes(sizes, dims, label_dims, num_chains, kernel_name=kernel_name, device=device,
                    split=len(devices or []) if place is not None else 0, spread=spread)
    chain_ids = jax.ShapeDtypeStruct((num_chains,), jnp.int32)
    run_keys, state = jax.eval_shape(start, key, chain_ids, data)
    acc = jax.eval_shape(zero_accumulators, state, data)
    if place is not None:
        run_keys, state, acc, data = place(run_keys, state, acc, data)
    args = (run_keys, state, acc, data, np.int32(0), np.int32(length), np.bool_(True), np.bool_(True))
    split = place is not None

    if on_cpu:
        dev_avail = host_avail
    elif split and local:
        free = [_device_available(d) for d in local]
        dev_avail = None if any(f is None for f in free) else min(free)
    else:
        dev_avail = _device_available(device)
    # on a CPU this process's devices all take their share from the host's memory
    copies = max(len(local), 1) if split and on_cpu else 1

    fns = list(dict.fromkeys(chunk_fns))  # distinct, in order
    # 1. no compilation: arguments + outputs of the chunk function are a lower bound
    lower = 0
    host = 0
    post = 0
    for fn in fns:
        new_state, new_acc, outs = jax.eval_shape(fn, *args)
        if split:  # state and sums leave the chunk split as they came in; the records count whole
            lower = max(lower, tree_bytes(args[:4], per_device=True) + tree_bytes(args[1:3], per_device=True)
                        + tree_bytes(outs))
        else:
            lower = max(lower, tree_bytes(args[:4]) + tree_bytes((new_state, new_acc, outs)))
        per_draw = tree_bytes(outs) // max(length, 1)
        host = max(host, 2 * per_draw * int(kept))
        if label_dims:
            means = tree_bytes(acc)
            elements = sum(math.prod(int(n) for n in leaf.shape) for leaf in jax.tree_util.tree_leaves(acc))
            labels = _label_sizes(((acc, 1), (outs.get("posterior"), 2)), dims, label_dims)
            post = max(post, postprocess_bytes(per_draw * int(kept), means, elements, labels,
                                               tree_bytes((state, acc))))
    estimate = MemoryEstimate(lower * copies, host, dev_avail, host_avail, on_cpu, compiled=False,
                              postprocess_bytes=post)
    if estimate.shortfall() is None:
        # 2. XLA's analysis of the compiled code (JAX keeps it for the run; split over devices:
        # the partitioned program, what one device runs)
        device_bytes = lower
        for measured in _measured_all(fns, args):
            if measured is not None:
                device_bytes = max(device_bytes, measured)
        estimate = MemoryEstimate(device_bytes * copies, host, dev_avail, host_avail, on_cpu, compiled=True,
                                  postprocess_bytes=post)
    short = estimate.shortfall()
    if short is not None:
        what, need, have = short
        run_part = format_bytes(estimate.device_bytes) + (
            " by XLA's memory analysis of the compiled chunk" if estimate.compiled
            else " for the chains' states and one chunk's outputs alone (not yet compiled)")
        if split:
            run_part += (f": {format_bytes(estimate.device_bytes / copies)} on each of {copies} devices"
                         if copies > 1 else " on one device") + (
                " with the chains spread over devices" if spread == "chains" else " with the data split over devices")
        post_part = (f"post-processing after sampling {format_bytes(post)}: copies of the draws and "
                     "per-chain means and the distance matrices that align the chains")
        if what == "host RAM" and on_cpu:
            how = f"{run_part}, plus {format_bytes(estimate.host_bytes)} for the kept draws"
            if post > estimate.device_bytes + estimate.host_bytes:
                how = f"{post_part}; sampling {format_bytes(estimate.device_bytes + estimate.host_bytes)}"
        elif what == "host RAM":
            how = post_part if post > estimate.host_bytes else "the kept draws"
        else:
            how = run_part
        advice = _advice(kernel_name, num_chains, SAFETY_FRACTION * have / need, len(devices or []) if split else 0,
                         spread=spread)
        raise MemoryEstimateError(
            f"this run needs about {format_bytes(need)} of {what} ({how}), but {format_bytes(have)} "
            f"is available (a run may use {SAFETY_FRACTION:.0%} of it): {advice}"
        )
    return estimate
