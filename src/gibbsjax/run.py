"""The multi-chain runner: :func:`sample`.

Chains are ``vmap``-ped, sweeps are ``lax.scan``-ned, and the run is cut into
chunks so that a progress bar moves and an interrupt keeps every finished draw.
The runner knows nothing of any model: it only calls the :class:`Kernel`.

Keys
----
Chain ``c`` uses ``chain_key = fold_in(key, c)``; ``split(chain_key)`` gives
its initial-state key and its run key, and sweep ``t`` (counted from 0 over
warm-up and sampling together) uses ``fold_in(run_key, t)``.  So chain ``c``'s
draws do not depend on how many chains run beside it, nor on the chunk size.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int as _check_int

from gibbsjax.diagnostics import to_inference_data, with_current_names
from gibbsjax.kernel import Kernel
from gibbsjax.memory import check_run as check_run_memory

__all__ = ["sample", "resume", "keep_raw_draws", "Settings", "enable_compilation_cache", "DEFAULT_NUM_CHUNKS"]

#: a run is cut into about this many chunks per phase (warm-up, sampling)
DEFAULT_NUM_CHUNKS = 20
#: how ``Settings.devices`` are used (see :class:`Settings`)
SHARD_MODES = ("auto", "chains", "data")


# ----------------------------------------------------------------------------- settings
@dataclasses.dataclass(frozen=True)
class Settings:
    """How to run a sampler: the one settings object of :func:`sample`, of a
    config's ``[sampler]`` table and of the estimators' defaults.

    * ``seed``: an integer; ``None`` draws a fresh one (recorded in ``attrs``).
    * ``num_chains``: independent chains, run side by side with ``vmap``.
    * ``num_warmup``: sweeps discarded at the start of every chain (burn-in).
    * ``num_draws``: draws kept per chain; ``thin`` sweeps between kept draws.
    * ``init``: starting values overriding the kernel's random start: a mapping
      from state field names to arrays whose first axis has length
      ``num_chains`` (fields not given keep their random start).
    * ``progress``: a tqdm progress bar, updated between chunks.
    * ``chunk_size``: draws per compiled chunk; default about
      ``DEFAULT_NUM_CHUNKS`` chunks per phase.  Draws do not depend on it.
    * ``save_warmup``: keep warm-up sweeps in a ``warmup_posterior`` group;
      its draw 0 is the starting state, draw ``t`` the state after sweep ``t``.
    * ``until``: run until converged, a rule such as ``"rhat<1.01,ess>400"``
      (:mod:`gibbsjax.stopping`) on the label-invariant quantities (``lp`` and
      the recorded variables without a dimension in ``kernel.label_dims``),
      checked after ``num_draws`` draws and after every further ``num_draws``.
    * ``max_draws``: the cap of a run with ``until`` (default ``10 * num_draws``).
    * ``devices``: run on this many devices (``jax.devices()``, e.g. GPUs) with
      a ``jax.sharding`` mesh.  Draws do not depend on it.  Default: one device.
    * ``shard``: how ``devices`` are used: ``"chains"`` spreads the chains
      (``num_chains`` a multiple of ``devices``; no communication);
      ``"data"`` splits the data along the axis the kernel declares
      (``Kernel.shard``, e.g. LDA's documents), every chain on every device, its
      count tables summed across devices each sweep; ``"auto"`` (default):
      chains when ``num_chains`` is a multiple of ``devices``, else data.

    Values are checked on construction (``ValueError`` naming the field).

    >>> Settings(num_chains=8).replace(num_draws=50).num_draws
    50
    """

    seed: int | None = None
    num_chains: int = 4
    num_warmup: int = 1000
    num_draws: int = 1000
    thin: int = 1
    init: Mapping[str, Any] | None = None
    progress: bool = True
    chunk_size: int | None = None
    save_warmup: bool = False
    until: str | None = None
    max_draws: int | None = None
    devices: int | None = None
    shard: str = "auto"

    def __post_init__(self):
        for name, minimum in (("num_chains", 1), ("num_warmup", 0), ("num_draws", 1), ("thin", 1)):
            object.__setattr__(self, name, _check_int(name, getattr(self, name), minimum))
        if self.chunk_size is not None:
            object.__setattr__(self, "chunk_size", _check_int("chunk_size", self.chunk_size, 1))
        if self.seed is not None:
            object.__setattr__(self, "seed", _check_int("seed", self.seed, 0))
        if not isinstance(self.shard, str) or self.shard not in SHARD_MODES:
            raise ValueError(f"shard must be one of {', '.join(repr(m) for m in SHARD_MODES)}, got {self.shard!r}")
        if self.devices is not None:
            object.__setattr__(self, "devices", _check_int("devices", self.devices, 1))
            if self.shard == "chains" and self.num_chains % self.devices:
                raise ValueError(f"num_chains ({self.num_chains}) must be a multiple of devices ({self.devices}) "
                                 "with shard='chains': every device runs the same number of chains")
        if self.until is not None:
            from gibbsjax.stopping import parse_until

            parse_until(self.until)
        if self.max_draws is not None:
            object.__setattr__(self, "max_draws", _check_int("max_draws", self.max_draws, 1))
            if self.until is None:
                raise ValueError("max_draws is the cap of a run with until; give until as well")
            if self.max_draws < self.num_draws:
                raise ValueError(f"max_draws ({self.max_draws}) must be at least num_draws ({self.num_draws})")
        for name in ("progress", "save_warmup"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")

    def replace(self, **changes) -> "Settings":
        """A copy with some fields changed (unknown names raise ``ValueError``)."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown setting {unknown[0]!r}; settings are: {', '.join(sorted(known))}")
        return dataclasses.replace(self, **changes)


# ----------------------------------------------------------------------------- compilation cache
def enable_compilation_cache(path: str | None = None) -> str:
    """Keep compiled samplers on disk, so a new process skips most compilation.

    XLA takes 0.3-2 s per compiled function on a CPU; with this cache, a second
    ``gibbsjax run`` of the same model and shapes reuses the first one's code.
    ``path`` defaults to ``$GIBBSJAX_CACHE_DIR`` or ``~/.cache/gibbsjax/xla``.
    This sets JAX's process-wide ``jax_compilation_cache_dir``; the command line
    turns it on (``GIBBSJAX_NO_CACHE=1`` turns it off).  Returns the folder used.

    >>> import gibbsjax, tempfile
    >>> folder = gibbsjax.enable_compilation_cache(tempfile.mkdtemp())
    """
    import os

    folder = path or os.environ.get("GIBBSJAX_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "gibbsjax", "xla"
    )
    os.makedirs(folder, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.05)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


# ----------------------------------------------------------------------------- checks


#: seeds are integers in [0, SEED_LIMIT): ``jax.random.key`` keeps only the low
#: 32 bits of a seed unless x64 mode is on (and overflows at 2**63), so seeds that
#: differ by 2**32 would give identical draws; larger seeds are refused.
SEED_LIMIT = 2**32


def _resolve_key(seed, key) -> tuple[jax.Array, int | None]:
    """The run's key from ``seed`` (an integer, 0 <= seed < 2**32) or a typed ``key``.

    ``ValueError`` for a negative seed, a seed >= 2**32 (the range
    ``jax.random.key`` holds without truncation in both 32- and 64-bit mode),
    a non-integer, both or a malformed key.  With neither, a fresh seed is drawn.
    """
    if key is not None and seed is not None:
        raise ValueError("give either seed or key, not both")
    if key is not None:
        if not (isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key)):
            if isinstance(key, jax.Array) and key.dtype == jnp.uint32 and key.shape == (2,):
                return jax.random.wrap_key_data(key), None
            raise ValueError("key must be a typed JAX key from jax.random.key(seed)")
        if key.shape != ():
            raise ValueError(f"key must be a single key (shape ()), got shape {key.shape}")
        return key, None
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if seed >= SEED_LIMIT:
        raise ValueError(
            f"seed must be an integer in [0, 2**32), got {seed}: the key holds 32 bits of a seed, "
            "so larger seeds would repeat the draws of smaller ones"
        )
    return jax.random.key(int(seed)), int(seed)


def _check_data_type(kernel: Kernel, data) -> None:
    """``ValueError`` when ``data`` is not what ``kernel`` takes (its ``data_type``)."""
    expected = kernel.data_type
    if expected is None:
        # no declared type: trace ``init`` on the data (no compilation, nothing allocated)
        try:
            jax.eval_shape(kernel.init, jax.random.key(0), data)
        except (AttributeError, TypeError, IndexError) as e:
            raise ValueError(
                f"data does not fit kernel {kernel.name}: its init fails on a {type(data).__name__} "
                f"({type(e).__name__}: {e}); pass the data built by the model's data constructor"
            ) from e
        return
    if isinstance(data, expected):
        return
    names = " or ".join(t.__name__ for t in (expected if isinstance(expected, tuple) else (expected,)))
    raise ValueError(
        f"data must be a {names} (build it with the model's data constructor, e.g. "
        f"normal.data(y)) for kernel {kernel.name}, got {type(data).__name__}"
    )


# ----------------------------------------------------------------------------- compiled pieces
# Compilation dominates short runs (XLA on CPU takes ~0.3-1 s per function), so a
# run compiles exactly two functions: one that derives the chain keys and initial
# states, and one chunk function shared by warm-up and sampling.  Both are cached
# on the kernel's functions (factories memoise kernels per hyperparameters).
@functools.lru_cache(maxsize=128)
def _start_fn(init: Callable) -> Callable:
    def start(key, chain_ids, data):
        chain_keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, chain_ids)
        split = jax.vmap(jax.random.split)(chain_keys)
        state = jax.vmap(init, in_axes=(0, None))(split[:, 0], data)
        return split[:, 1], state

    return jax.jit(start)


@functools.lru_cache(maxsize=128)
def _records_fn(record: Callable | None, log_joint: Callable | None) -> Callable:
    def records(state, data):
        out = {}
        if record is not None:
            out["posterior"] = jax.vmap(record, in_axes=(0, None))(state, data)
        if log_joint is not None:
            out["lp"] = jax.vmap(log_joint, in_axes=(0, None))(state, data)
        return out

    return jax.jit(records)


@functools.lru_cache(maxsize=128)
def _chunk_fn(
    step: Callable,
    record: Callable | None,
    log_joint: Callable | None,
    thin: int,
    length: int,
    accumulate: Callable | None = None,
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
    records = _records_fn(record, log_joint)
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
                acc = jax.lax.cond(
                    active & accum,
                    lambda a: jax.tree_util.tree_map(
                        lambda x, y: x + y.astype(x.dtype), a, vacc(s, data)
                    ),
                    lambda a: a,
                    acc,
                )
            return (s, acc), out

        (state, acc), outs = jax.lax.scan(iteration, (state, acc), jnp.arange(length, dtype=jnp.int32))
        return state, acc, outs

    return jax.jit(run)


def _zero_accumulators(accumulate: Callable | None, state, data) -> dict:
    if accumulate is None:
        return {}
    shapes = jax.eval_shape(jax.vmap(accumulate, in_axes=(0, None)), state, data)

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


# ----------------------------------------------------------------------------- init handling
def _apply_init(template, init, num_chains: int, check_init: Callable | None = None):
    """Overwrite fields of the batched random initial state by user values.

    ``check_init`` (the kernel's) checks the given values against the state's
    support (``ValueError`` naming the field)."""
    given: dict[str, np.ndarray] = {}
    if isinstance(init, Mapping):
        items = dict(init)
    elif hasattr(init, "_asdict"):
        items = init._asdict()
    else:
        raise ValueError(
            "init must be a mapping (or NamedTuple) of state fields to arrays with a leading "
            f"axis of length num_chains={num_chains}, got {type(init).__name__}"
        )
    if isinstance(template, Mapping):
        fields = dict(template)
    elif hasattr(template, "_asdict"):
        fields = template._asdict()
    else:
        raise ValueError("init values can only be given for kernels whose state is a NamedTuple or dict")
    for name, value in items.items():
        if name not in fields:
            raise ValueError(f"init: the state has no field {name!r}; fields are {sorted(fields)}")
        ref = fields[name]
        arr = np.asarray(value, dtype=np.result_type(ref.dtype))
        if arr.shape == ref.shape[1:] and num_chains == 1:
            arr = arr[None]
        if arr.shape != ref.shape:
            raise ValueError(
                f"init[{name!r}] must have shape {ref.shape} (num_chains={num_chains} first), "
                f"got {arr.shape}"
            )
        if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
            raise ValueError(f"init[{name!r}] contains NaN or infinite values")
        fields[name] = jnp.asarray(arr)
        given[name] = arr
    if check_init is not None:
        check_init(given)  # support of the state: raises ValueError naming the field
    if isinstance(template, Mapping):
        return fields
    return type(template)(**fields)


# ----------------------------------------------------------------------------- interrupts
#: the signals a run turns into "stop after the chunk in flight": Ctrl-C, and
#: SIGTERM, which ``timeout``, ``kill`` and job schedulers send
STOP_SIGNALS = ("SIGINT", "SIGTERM")


class _Interrupts:
    """Turn the first Ctrl-C (or SIGTERM) into a flag checked between chunks.

    A ``KeyboardInterrupt`` raised at an arbitrary point can land inside JAX
    (a GC callback swallows it; mid-compile it can crash the interpreter at
    exit), so while chunks run, SIGINT and SIGTERM only set ``requested``; the
    loop stops after the chunk in flight and keeps every finished draw.  A
    second signal raises ``KeyboardInterrupt`` at once.  Only in the main
    thread (elsewhere signals cannot be handled); the previous handlers are
    restored on exit.  ``signal_name`` says which signal arrived.
    """

    def __init__(self):
        self.requested = False
        self.signal_name: str | None = None
        self._previous: dict = {}

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for name in STOP_SIGNALS:
                signum = getattr(signal, name, None)
                if signum is None:
                    continue
                try:
                    self._previous[signum] = signal.signal(signum, self._handle)
                except (ValueError, OSError):  # embedded interpreters
                    pass
        return self

    def _handle(self, signum, frame):
        import signal

        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self.signal_name = signal.Signals(signum).name

    def __exit__(self, *exc):
        import signal

        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        return False


# ----------------------------------------------------------------------------- progress
def _progress_bar(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="sweep", leave=True, dynamic_ncols=True)


# ----------------------------------------------------------------------------- a run in progress
@dataclasses.dataclass
class _Run:
    """Everything a run has made so far; updated after every finished chunk only,
    so an interrupt at any point leaves it consistent (state, sums and records
    of the same sweep)."""

    kernel: Kernel
    data: Any
    settings: Settings
    run_keys: Any
    state: Any
    acc: dict
    next_sweep: int = 0
    outputs: dict = dataclasses.field(default_factory=lambda: {"warm-up": [], "sampling": []})
    kept: int = 0
    elapsed: float = 0.0
    interrupted: bool = False
    signal_name: str | None = None
    until_note: dict = dataclasses.field(default_factory=dict)
    plan: Any = None  # a Kernel.shard plan when the data are split over devices
    dims: Any = None  # the dims of the unsharded kernel, for the means mapped back by plan.means

    @property
    def warmup_left(self) -> int:
        return max(0, self.settings.num_warmup - self.next_sweep)


def _compiled(kernel: Kernel, s: Settings, n_iters: int):
    length = _chunk_length(max(n_iters, 1), s.chunk_size)
    draw_fn = _chunk_fn(kernel.step, kernel.record, kernel.log_joint, s.thin, length, kernel.accumulate)
    warm_fn = _chunk_fn(kernel.warmup_step or kernel.step, kernel.record, kernel.log_joint, 1, length,
                        kernel.accumulate)
    return length, warm_fn, draw_fn


def _advance(run: _Run, num_draws: int, stop: _Interrupts, bar) -> None:
    """Finish the warm-up, then add ``num_draws`` kept draws, chunk by chunk."""
    kernel, s = run.kernel, run.settings
    length, warm_fn, draw_fn = _compiled(kernel, s, max(run.warmup_left, num_draws))
    if run.warmup_left:
        _run_phase(run, warm_fn, run.warmup_left, 1, length, s.save_warmup, False, "warm-up", stop, bar)
    if num_draws:
        _run_phase(run, draw_fn, num_draws, s.thin, length, True, True, "sampling", stop, bar)


def _run_phase(run: _Run, fn, n_iters: int, thin: int, length: int, keep: bool, accum: bool,
               phase: str, stop: _Interrupts, bar) -> None:
    """Run ``n_iters`` iterations of ``thin`` sweeps in chunks of ``length``.

    Records go to ``run.outputs[phase]`` (host copies) when ``keep``;
    accumulators are summed when ``accum``.  Between chunks the interrupt flag
    is checked and the bar moves.  ``run`` is only updated once a chunk has
    finished and its records are on the host."""
    done = 0
    desc = f"{run.kernel.name} {phase}"
    while done < n_iters:
        if stop.requested:
            raise KeyboardInterrupt
        n = min(length, n_iters - done)
        state, acc, records = fn(run.run_keys, run.state, run.acc, run.data, np.int32(run.next_sweep),
                                 np.int32(n), np.bool_(keep), np.bool_(accum))
        if keep:
            host = _to_host(records, n)
        else:
            jax.block_until_ready(state)
        run.state, run.acc, run.next_sweep = state, acc, run.next_sweep + n * thin
        if keep:
            run.outputs[phase].append(host)
        if accum:
            run.kept += n
        done += n
        if bar is not None:
            bar.set_description(desc)
            bar.update(n * thin)


def _drive(run: _Run, num_draws: int, until, max_draws: int | None, until_vars) -> None:
    """Sample ``num_draws`` more draws; with a rule ``until``, then keep adding
    ``num_draws`` at a time until it holds or ``max_draws`` draws are kept."""
    from gibbsjax.stopping import check_until

    s = run.settings
    target = run.kept + num_draws
    total = run.warmup_left + num_draws * s.thin
    bar = _progress_bar(total, s.progress, run.kernel.name)
    start = time.perf_counter()
    try:
        with _Interrupts() as stop:
            try:
                _advance(run, num_draws, stop, bar)
                while until is not None:
                    result = check_until(until, _invariant_draws(run, until_vars))
                    run.until_note = {"until_met": int(result.met), "until_checked_draws": run.kept,
                                      "until_values": result.describe()}
                    if result.met or run.kept >= max_draws:
                        break
                    more = min(num_draws, max_draws - run.kept)
                    if more <= 0:
                        break
                    if bar is not None:
                        bar.total += more * s.thin
                        bar.refresh()
                    _advance(run, more, stop, bar)
            finally:
                run.signal_name = stop.signal_name
    except KeyboardInterrupt:
        run.interrupted = True
        if run.signal_name is None:
            run.signal_name = "SIGINT"
    finally:
        if bar is not None:
            bar.close()
        run.elapsed += time.perf_counter() - start
    del target


def _invariant_draws(run: _Run, names) -> dict:
    """``lp`` and the label-invariant recorded variables, (chain, draw, ...)."""
    posterior, stats = _stack(run.outputs["sampling"])
    out = {}
    if "lp" in stats:
        out["lp"] = stats["lp"]
    label_dims = set(run.kernel.label_dims or ())
    dims = dict(run.kernel.dims or {})
    for name, arr in posterior.items():
        if names is not None and name not in names:
            continue
        if names is None and label_dims & set(dims.get(name, ())):
            continue
        out[name] = arr
    return out


# ----------------------------------------------------------------------------- main entry
def sample(kernel: Kernel, data: Any = None, settings: Settings | None = None, *,
           key: jax.Array | None = None, attrs: Mapping[str, Any] | None = None,
           until_vars: Sequence[str] | None = None, **options):
    """Run ``num_chains`` chains of ``kernel`` on ``data`` and return ArviZ InferenceData.

    Parameters
    ----------
    kernel:
        A :class:`gibbsjax.Kernel`, e.g. ``gibbsjax.models.normal.semiconjugate()``.
    data:
        The model's validated data pytree (e.g. ``normal.data(y)``); ``None``
        for models without data.
    settings, **options:
        A :class:`Settings`, and/or its fields as keywords (``seed``,
        ``num_chains``, ``num_warmup``, ``num_draws``, ``thin``, ``init``,
        ``progress``, ``chunk_size``, ``save_warmup``, ``until``,
        ``max_draws``), which override it.  Without a seed (nor ``key``) a
        fresh one is drawn and stored in ``attrs["seed"]`` so the run can be
        repeated.  With ``until`` (e.g. ``"rhat<1.01,ess>400"``) the run goes on
        past ``num_draws`` until the rule holds or ``max_draws`` draws are kept
        (see :class:`Settings`); ``attrs["until_met"]`` says which.
    key:
        A typed key ``jax.random.key(...)`` instead of a seed.
    attrs:
        Extra attributes stored in the result.
    until_vars:
        The recorded variables the rule looks at besides ``lp`` (default: the
        label-invariant ones).

    Returns
    -------
    arviz.InferenceData
        ``posterior`` (dims ``chain, draw, ...``) with what ``kernel.record``
        returns; ``sample_stats.lp``, the log joint, when the kernel has one.
        ``posterior_mean`` holds per-chain means over the kept draws of what
        ``kernel.accumulate`` returns (when the kernel has it).
        ``sampler_state`` holds what :func:`resume` needs to continue the run
        (the last state of every chain, its key, the running sums, the sweep
        count) as plain arrays.  ``attrs`` hold the seed, the settings and
        ``interrupted`` (1 when the run was cut short by Ctrl-C or SIGTERM:
        every finished draw is kept).

    Example
    -------
    >>> import gibbsjax
    >>> from gibbsjax.models import normal
    >>> idata = gibbsjax.sample(normal.bivariate(rho=0.8), seed=1, num_draws=200,
    ...                         num_warmup=100, progress=False)
    >>> idata.posterior["x1"].shape
    (4, 200)
    """
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a gibbsjax.Kernel, got {type(kernel).__name__}")
    if settings is not None and not isinstance(settings, Settings):
        raise ValueError(f"settings must be a gibbsjax.run.Settings, got {type(settings).__name__}")
    s = (settings or Settings()).replace(**options)
    rule, max_draws = _check_until(s.until, s.max_draws, s.num_draws, s.num_chains)
    key, seed_used = _resolve_key(s.seed, key)
    user_data, user_kernel = data, kernel
    kernel, data, plan, mode = _layout(kernel, data, s)
    _check_data_type(kernel, data)  # the kernel that runs: data already split (lda_shard.from_parts) fit it
    if plan is not None and s.init is not None:
        raise ValueError("init values cannot be given with the data split over devices (shard='data'): the "
                         "state is laid out by shard; start from the kernel's random state, or use shard='chains'")

    if s.init is not None:  # check init values on the abstract state, before compiling
        abstract = jax.eval_shape(_start_fn(kernel.init), key, jax.ShapeDtypeStruct((s.num_chains,), jnp.int32), data)
        _apply_init(abstract[1], s.init, s.num_chains, kernel.check_init)
    # before anything big is allocated (with the data split over devices: per device)
    _check_memory(kernel, data, s, key, plan)

    data = _place_data(plan, data)
    run_keys, state = _start_fn(kernel.init)(key, jnp.arange(s.num_chains, dtype=jnp.int32), data)
    if s.init is not None:
        state = _apply_init(state, s.init, s.num_chains, kernel.check_init)
    run_keys, state, acc, data = _place(mode, s.devices, run_keys, state,
                                        _zero_accumulators(kernel.accumulate, state, data), data, plan)
    run = _Run(kernel, data, s, run_keys, state, acc, plan=plan, dims=user_kernel.dims)
    if s.save_warmup:
        # draw 0 of warmup_posterior is the starting state
        first = _fetch(_records_fn(kernel.record, kernel.log_joint)(state, data))
        run.outputs["warm-up"].append(_to_host(jax.tree_util.tree_map(lambda a: np.asarray(a)[None], first), 1))

    _drive(run, s.num_draws, rule, max_draws, until_vars)
    if run.interrupted:
        if not run.outputs["sampling"] and not run.outputs["warm-up"]:
            raise KeyboardInterrupt
        warnings.warn(
            f"run interrupted ({run.signal_name}): keeping the {run.kept} draws per chain "
            "finished so far (attrs['interrupted'] = 1); gibbsjax.resume can continue it",
            RuntimeWarning,
            stacklevel=2,
        )
    run_attrs = {
        "gibbsjax_kernel": kernel.name,
        "seed": "" if seed_used is None else seed_used,
        "num_chains": s.num_chains,
        "num_warmup": s.num_warmup,
        "warmup": warmup_description(kernel),
        "num_draws_requested": s.num_draws,
        "thin": s.thin,
        "save_warmup": int(s.save_warmup),
        "devices": s.devices or 1,
        "sharding": _sharding_note(mode, plan, s),
        "data_sha256": data_fingerprint(user_data),
    }
    if rule is not None:
        run_attrs["until"] = ",".join(str(c) for c in rule)
        run_attrs["max_draws"] = max_draws
    run_attrs.update(attrs or {})
    return _finish(run, run_attrs)


def _fetch(tree):
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
        raise ValueError(f"devices={devices} asked for, but JAX sees {len(available)} "
                         f"({available[0].platform}): {', '.join(str(d) for d in available)}")
    return available[:devices]


def _layout(kernel: Kernel, data, s: Settings, num_shards: int | None = None):
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


def _sharding_note(mode, plan, s: Settings) -> str:
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
    from jax.sharding import NamedSharding, PartitionSpec

    def one(spec, sub):
        sharding = NamedSharding(mesh, PartitionSpec(None, *spec) if batched else spec)
        return jax.tree_util.tree_map(lambda x: _put(x, sharding), sub)

    return jax.tree_util.tree_map(one, specs, tree, is_leaf=lambda x: isinstance(x, PartitionSpec))


def _place_data(plan, data):
    """The sharded data on their devices (before the chains start); unchanged otherwise."""
    if plan is None:
        return data
    return _by_specs(plan.mesh, plan.data_specs, data, batched=False)


def _place(mode, devices: int | None, run_keys, state, acc, data, plan=None):
    """Chains spread over ``devices`` devices (``mode="chains"``: a 1-D mesh along the
    chain axis, the data replicated on each) or the data split over them (``"data"``:
    by the kernel's ``shard`` plan, every chain on every device); with ``None``
    everything stays where it is.  Each chain's computation is the same as on one
    device, so its draws are too."""
    if mode is None:
        return run_keys, state, acc, data
    if mode == "data":
        from jax.sharding import NamedSharding, PartitionSpec

        mesh = plan.mesh
        keys = _put(run_keys, NamedSharding(mesh, PartitionSpec()))
        return (keys, _by_specs(mesh, plan.state_specs, state, True),
                _by_specs(mesh, plan.acc_specs, acc, True) if acc else acc, _place_data(plan, data))
    available = _devices(devices)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(available[:devices]), ("chain",))
    by_chain = NamedSharding(mesh, PartitionSpec("chain"))
    replicated = NamedSharding(mesh, PartitionSpec())
    put = functools.partial(jax.device_put, device=by_chain)
    return (put(run_keys), jax.tree_util.tree_map(put, state), jax.tree_util.tree_map(put, acc),
            jax.device_put(data, replicated))


def check_memory(kernel: Kernel, data: Any, settings: Settings, *, key: jax.Array | None = None):
    """Refuse a run of ``settings`` that cannot fit in memory (:func:`gibbsjax.memory.check_run`,
    on abstract shapes: nothing is allocated or compiled); :func:`sample` calls it first.
    A run that splits its data over devices (:func:`splits_data`) is checked per device
    (each holds its shard of the data and of every chain's state).

    >>> from gibbsjax.models import normal
    >>> _ = check_memory(normal.bivariate(rho=0.5), None, Settings(num_chains=4, num_draws=100))
    """
    kernel, data, plan, _ = _layout(kernel, data, settings)
    return _check_memory(kernel, data, settings, key, plan)


def _check_memory(kernel: Kernel, data: Any, s: Settings, key, plan=None):
    """:func:`check_memory` of the kernel that runs; with ``plan`` (data split over devices)
    per device, on arguments placed as :func:`_place` will place them."""
    length, warm_fn, draw_fn = _compiled(kernel, s, max(s.num_warmup, s.num_draws))
    kept = ((s.max_draws or 10 * s.num_draws) if s.until else s.num_draws) + (
        s.num_warmup + 1 if s.save_warmup else 0)
    place = devices = None
    if plan is not None:
        place = functools.partial(_abstract_placement, plan)
        devices = list(plan.mesh.devices.flat)
    return check_run_memory(
        _start_fn(kernel.init), (draw_fn, warm_fn), functools.partial(_zero_accumulators, kernel.accumulate),
        jax.random.key(0) if key is None else key, s.num_chains, data, length=length, kept=kept,
        kernel_name=kernel.name, place=place, devices=devices,
    )


def _abstract_placement(plan, run_keys, state, acc, data):
    """Abstract shapes with the shardings :func:`_place` gives a run split by ``plan``."""
    from jax.sharding import NamedSharding, PartitionSpec

    def by_specs(specs, tree, batched):
        def one(spec, sub):
            sharding = NamedSharding(plan.mesh, PartitionSpec(None, *spec) if batched else spec)
            return jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), sub)

        return jax.tree_util.tree_map(one, specs, tree, is_leaf=lambda x: isinstance(x, PartitionSpec))

    keys = jax.ShapeDtypeStruct(run_keys.shape, run_keys.dtype, sharding=NamedSharding(plan.mesh, PartitionSpec()))
    return (keys, by_specs(plan.state_specs, state, True), by_specs(plan.acc_specs, acc, True) if acc else acc,
            by_specs(plan.data_specs, data, False))


def _check_until(until, max_draws, num_draws: int, num_chains: int):
    from gibbsjax.stopping import parse_until

    if until is None:
        if max_draws is not None:
            raise ValueError("max_draws is the cap of a run with until=...; give until as well")
        return None, None
    rule = parse_until(until)
    if any(c.stat == "rhat" for c in rule) and num_chains < 2:
        raise ValueError(f"until={until!r} uses R-hat, which compares chains: run num_chains >= 2 (4 or more "
                         f"is better), got {num_chains}")
    if max_draws is None:
        max_draws = 10 * num_draws
    max_draws = _check_int("max_draws", max_draws, 1)
    if max_draws < num_draws:
        raise ValueError(f"max_draws ({max_draws}) must be at least num_draws ({num_draws})")
    return rule, max_draws


def data_fingerprint(data) -> str:
    """SHA-256 of the data's arrays (shapes, dtypes and bytes): :func:`resume` checks
    that a run continues on the very data it started on.

    >>> import numpy as np
    >>> data_fingerprint({"y": np.zeros(3)}) == data_fingerprint({"y": np.zeros(3)})
    True
    """
    import hashlib

    h = hashlib.sha256()
    leaves, treedef = jax.tree_util.tree_flatten(data)
    h.update(str(treedef).encode())
    for leaf in leaves:
        if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
            h.update(_global_fingerprint(leaf))
            continue
        arr = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(memoryview(arr).cast("B"))
    return h.hexdigest()


def _global_fingerprint(x: jax.Array) -> bytes:
    """A digest of an array spread over the devices of several processes (``jax.distributed``):
    each process hashes the pieces it holds (by their index), the digests are gathered and
    hashed in process order; a collective (every process calls it), nothing but 32 bytes per
    process is exchanged.  The same data split the same way give the same digest."""
    import hashlib

    from jax.experimental import multihost_utils

    h = hashlib.sha256(f"{np.dtype(x.dtype).str}{x.shape}{x.sharding}".encode())
    for shard in sorted((s for s in x.addressable_shards if s.replica_id == 0), key=lambda s: str(s.index)):
        h.update(str(shard.index).encode())
        h.update(memoryview(np.ascontiguousarray(np.asarray(shard.data))).cast("B"))
    every = multihost_utils.process_allgather(np.frombuffer(h.digest(), np.uint8))
    return hashlib.sha256(np.asarray(every).tobytes()).digest()


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
        _, state = jax.eval_shape(_start_fn(kernel.init), jax.random.key(0), chains, data)
    except (ValueError, TypeError):
        if not (splits_data(s) and kernel.shard is not None):
            raise
        # data already laid out for the devices (e.g. lda_shard.from_parts): the sharded kernel runs
        plan = kernel.shard(data, _devices(s.devices or 1))
        kernel, data = plan.kernel, plan.data
        _, state = jax.eval_shape(_start_fn(kernel.init), jax.random.key(0), chains, data)
    per_draw = jax.eval_shape(_records_fn(kernel.record, kernel.log_joint), state, data)
    draws = (s.max_draws or 10 * s.num_draws) if s.until else s.num_draws
    draws += (s.num_warmup + 1) if s.save_warmup else 0

    def nbytes(tree) -> int:
        return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree_util.tree_leaves(tree))

    acc = _zero_accumulators_shape(kernel.accumulate, state, data)
    return draws * nbytes(per_draw) + 2 * nbytes(acc) + nbytes(state)


# ----------------------------------------------------------------------------- result
def _finish(run: _Run, run_attrs: dict):
    """The InferenceData of a run: draws, per-chain means and its ``sampler_state``."""
    s, kernel = run.settings, run.kernel
    posterior, stats = _stack(run.outputs["sampling"])
    warm_posterior, warm_stats = _stack(run.outputs["warm-up"])
    if not posterior:
        # interrupted during warm-up with save_warmup: no posterior draws yet
        posterior = {k: v[:, :0] for k, v in warm_posterior.items()}
    run_attrs = dict(run_attrs)
    run_attrs.update({
        "interrupted": int(run.interrupted),
        "sampling_time_s": round(run.elapsed, 4),
    })
    if run.interrupted:
        run_attrs["interrupted_by"] = run.signal_name or "SIGINT"
    run_attrs.update(run.until_note)
    means = None
    if run.acc and run.kept > 0:
        means = {k: np.asarray(v) / run.kept for k, v in _fetch(run.acc).items()}
        if run.plan is not None:
            means = run.plan.means(means)
    idata = to_inference_data(
        posterior,
        sample_stats=stats,
        warmup_posterior=warm_posterior if s.save_warmup else None,
        warmup_sample_stats=warm_stats if s.save_warmup else None,
        dims=dict((run.dims if run.plan is not None else kernel.dims) or {}),
        coords=dict(kernel.coords(run.data)) if kernel.coords is not None else {},
        attrs=run_attrs,
        posterior_mean=means,
    )
    idata.add_groups({STATE_GROUP: _state_dataset(run)})
    return idata


#: the group of a result that holds what :func:`resume` needs
STATE_GROUP = "sampler_state"
#: groups a model's postprocess may rewrite (aligning components); their raw
#: draws are kept as ``raw_<group>`` by :func:`keep_raw_draws` where they differ
DRAW_GROUPS = ("posterior", "sample_stats", "warmup_posterior", "warmup_sample_stats")


def _leaf_names(tree) -> list[str]:
    def part(k) -> str:
        for attr in ("name", "key", "idx"):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)

    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    return ["__".join(part(k) for k in path) or "value" for path, _ in paths]


def _state_dataset(run: _Run):
    import xarray as xr

    variables = {}
    for prefix, tree in (("state", run.state), ("acc", run.acc)):
        leaves = _fetch(jax.tree_util.tree_leaves(tree))
        for name, leaf in zip(_leaf_names(tree), leaves):
            arr = np.asarray(leaf)
            var = f"{prefix}__{name}"
            variables[var] = (("chain", *[f"{var}_dim_{i}" for i in range(arr.ndim - 1)]), arr)
    keys = np.asarray(_fetch(jax.random.key_data(run.run_keys)))
    variables["run_key"] = (("chain", "key_word"), keys)
    attrs = {
        "next_sweep": int(run.next_sweep),
        "kept_draws": int(run.kept),
        "key_impl": str(jax.random.key_impl(run.run_keys)),
        "kernel": run.kernel.name,
        "num_warmup": run.settings.num_warmup,
        "thin": run.settings.thin,
        "save_warmup": int(run.settings.save_warmup),
        "num_shards": run.plan.num_shards if run.plan is not None else 0,
        "note": "the last state of every chain, its run key and the running sums of the "
                "per-chain means: what gibbsjax.resume needs to continue this run",
    }
    return xr.Dataset(variables, attrs=attrs)


def keep_raw_draws(processed, raw):
    """``processed`` with copies ``raw_<group>`` of the groups of ``raw`` that a
    postprocess changed (e.g. components relabelled), so :func:`resume` can
    continue from the draws as the sampler made them.  Unchanged groups are not
    copied.  Returns ``processed``.

    >>> from gibbsjax.models import normal
    >>> idata = sample(normal.bivariate(rho=0.5), seed=0, num_warmup=5, num_draws=5, progress=False)
    >>> sorted(g for g in keep_raw_draws(idata.copy(), idata).groups() if g.startswith("raw_"))
    []
    """
    for group in DRAW_GROUPS:
        if group not in raw.groups():
            continue
        before = raw[group]
        after = processed[group] if group in processed.groups() else None
        same = after is not None and set(before.data_vars) == set(after.data_vars) and all(
            before[v].dims == after[v].dims and np.array_equal(before[v].values, after[v].values)
            for v in before.data_vars
        )
        raw_name = f"raw_{group}"
        if raw_name in processed.groups():
            del processed[raw_name]
        if not same:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # not an ArviZ schema group
                processed.add_groups({raw_name: before})
    return processed


# ----------------------------------------------------------------------------- resume
def resume(idata, kernel: Kernel, data: Any = None, num_draws: int | None = None, *,
           progress: bool = True, chunk_size: int | None = None, until: str | None = None,
           max_draws: int | None = None, until_vars: Sequence[str] | None = None, devices: int | None = None):
    """Continue a finished or interrupted run for ``num_draws`` more draws per chain.

    ``idata`` is a result of :func:`sample` (or a file saved from one, read
    with ``arviz.from_netcdf``), with its ``sampler_state`` group; ``kernel``
    and ``data`` must be the ones it ran (the data are checked against
    ``attrs["data_sha256"]``).  An unfinished warm-up is finished first.  The
    draws of a run of 200 draws resumed for 300 more are bit-identical to those
    of one run of 500 draws (sweep ``t`` of chain ``c`` always uses the same
    key), and so are the per-chain means.  Returns the whole run: the old draws
    (as the sampler made them: ``raw_<group>`` copies where a postprocess
    relabelled components) followed by the new ones; model postprocessing
    (alignment, estimates) must be applied again.

    ``devices`` spreads the chains over devices as in :class:`Settings` (the
    draws do not depend on it).  A run with its data split over devices
    (``attrs["sharding"]``) goes on with the same number of shards, by default
    on as many devices as before (``devices`` must divide the shards).  ``until``/``max_draws`` work as in :func:`sample` (``max_draws`` counts
    every kept draw, old and new); ``num_draws`` defaults to the run's own
    ``num_draws_requested``.  ``num_draws=0`` only finishes an interrupted
    warm-up (or returns the run as it is).

    >>> from gibbsjax.models import normal
    >>> k = normal.bivariate(rho=0.5)
    >>> first = sample(k, seed=0, num_warmup=10, num_draws=20, progress=False)
    >>> longer = resume(first, k, num_draws=30, progress=False)
    >>> longer.posterior.sizes["draw"]
    50
    """
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a gibbsjax.Kernel, got {type(kernel).__name__}")
    idata = with_current_names(idata)  # a result saved before the document dimension was renamed
    if STATE_GROUP not in idata.groups():
        raise ValueError("this result has no sampler_state group (it was made before gibbsjax 0.2, or its "
                         "state was dropped), so it cannot be resumed; run it again")
    st = idata[STATE_GROUP]
    attrs = dict(idata.attrs)
    if str(st.attrs.get("kernel", "")) != kernel.name:
        raise ValueError(f"this result was made by kernel {st.attrs.get('kernel')!r}, not {kernel.name!r}")
    if not (isinstance(data, tuple) and any(getattr(x, "ndim", 0) and isinstance(x, jax.Array)
                                            and not x.is_fully_addressable for x in data)):
        _check_data_type(kernel, data)  # (data split over processes are checked by the kernel's shard plan)
    stored = str(attrs.get("data_sha256", ""))
    if stored and stored != data_fingerprint(data):
        raise ValueError("the data differ from the data this run was sampled on (data_sha256 does not match); "
                         "resume needs the very same data")
    num_chains = int(st.sizes["chain"])
    if num_draws is None:
        num_draws = int(attrs.get("num_draws_requested", 0))
    num_draws = _check_int("num_draws", num_draws, 0)
    num_shards = int(st.attrs.get("num_shards", 0))
    if num_shards and devices is None:
        devices = int(attrs.get("devices", 1))  # a sharded run goes on sharded: its state is laid out by shard
    s = Settings(num_chains=num_chains, num_warmup=int(st.attrs["num_warmup"]), num_draws=max(num_draws, 1),
                 thin=int(st.attrs["thin"]), progress=progress, chunk_size=chunk_size,
                 save_warmup=bool(int(st.attrs.get("save_warmup", 0))), devices=devices,
                 shard="data" if num_shards else ("chains" if devices else "auto"))
    user_kernel = kernel
    kernel, data, plan, mode = _layout(kernel, data, s, num_shards or None)
    kept_before = int(st.attrs["kept_draws"])
    if until is not None and num_draws == 0:
        raise ValueError("until needs num_draws >= 1: the draws added between checks")
    rule, max_draws = _check_until(until, max_draws, kept_before + num_draws, num_chains)

    # the state and running sums, with the kernel's own structure
    abstract_keys, abstract_state = jax.eval_shape(
        _start_fn(kernel.init), jax.random.key(0), jax.ShapeDtypeStruct((num_chains,), jnp.int32), data)
    state = _restore_tree(st, "state", abstract_state)
    acc = _restore_tree(st, "acc", _zero_accumulators_shape(kernel.accumulate, abstract_state, data))
    run_keys = jax.random.wrap_key_data(jnp.asarray(st["run_key"].values, jnp.uint32),
                                        impl=str(st.attrs["key_impl"]))
    run_keys, state, acc, data = _place(mode, devices, run_keys, state, acc, data, plan)
    run = _Run(kernel, data, s, run_keys, state, acc, next_sweep=int(st.attrs["next_sweep"]), kept=kept_before,
               elapsed=float(attrs.get("sampling_time_s", 0.0) or 0.0), plan=plan, dims=user_kernel.dims)
    for phase, group, stats_group in (("sampling", "posterior", "sample_stats"),
                                      ("warm-up", "warmup_posterior", "warmup_sample_stats")):
        previous = _previous_draws(idata, group, stats_group)
        if previous is not None:
            run.outputs[phase].append(previous)

    if num_draws or run.warmup_left:
        _drive(run, num_draws, rule, max_draws, until_vars)
    if run.interrupted:
        warnings.warn(f"resumed run interrupted ({run.signal_name}): keeping the {run.kept} draws per chain "
                      "finished so far (attrs['interrupted'] = 1)", RuntimeWarning, stacklevel=2)
    keep = {k: v for k, v in attrs.items() if not k.startswith("until")}
    keep["num_draws_requested"] = kept_before + num_draws if not int(attrs.get("interrupted", 0)) else \
        max(int(attrs.get("num_draws_requested", 0)), kept_before + num_draws)
    keep["resumed"] = int(attrs.get("resumed", 0)) + 1
    keep.pop("interrupted_by", None)
    if rule is not None:
        keep["until"] = ",".join(str(c) for c in rule)
        keep["max_draws"] = max_draws
    return _finish(run, keep)


def _zero_accumulators_shape(accumulate, abstract_state, data):
    if accumulate is None:
        return {}
    return jax.eval_shape(functools.partial(_zero_accumulators, accumulate), abstract_state, data)


def _restore_tree(st, prefix: str, abstract):
    leaves, treedef = jax.tree_util.tree_flatten(abstract)
    names = _leaf_names(abstract)
    out = []
    for name, leaf in zip(names, leaves):
        var = f"{prefix}__{name}"
        if var not in st:
            raise ValueError(f"sampler_state has no {var!r}: the result was made by a different version of "
                             "the kernel, so it cannot be resumed")
        arr = np.asarray(st[var].values)
        if arr.shape != tuple(leaf.shape):
            raise ValueError(f"sampler_state {var!r} has shape {arr.shape}, the kernel's state needs "
                             f"{tuple(leaf.shape)}: not the same model or data")
        out.append(jnp.asarray(arr.astype(leaf.dtype, copy=False)))
    return jax.tree_util.tree_unflatten(treedef, out)


def _previous_draws(idata, group: str, stats_group: str) -> dict | None:
    """A run's earlier records as one chunk (the raw copies where a postprocess changed them)."""
    def pick(name):
        for g in (f"raw_{name}", name):
            if g in idata.groups():
                return idata[g]
        return None

    post, stats = pick(group), pick(stats_group)
    if post is None:
        return None
    n = int(post.sizes.get("draw", 0))
    chunk: dict[str, Any] = {"n": n, "posterior": {k: np.asarray(v.transpose("chain", "draw", ...).values)
                                                   for k, v in post.data_vars.items()}}
    if stats is not None and "lp" in stats:
        chunk["lp"] = np.asarray(stats["lp"].transpose("chain", "draw").values)
    return chunk if n else None


def warmup_description(kernel: Kernel) -> str:
    """What the warm-up phase of ``kernel`` runs, as recorded in ``attrs["warmup"]``.

    >>> from gibbsjax.models import normal
    >>> warmup_description(normal.bivariate(rho=0.5))
    'the sampling kernel (normal.bivariate)'
    """
    if kernel.warmup_step is None:
        return f"the sampling kernel ({kernel.name})"
    return kernel.warmup_name or f"a warm-up transition of {kernel.name}"


def _to_host(out: dict, n: int) -> dict:
    """Copy one chunk's records to numpy, (length, chain, ...) -> (chain, n, ...)."""
    host = _fetch(out)
    result: dict[str, Any] = {"n": n}
    if "posterior" in host:
        result["posterior"] = {k: np.swapaxes(np.asarray(v)[:n], 0, 1) for k, v in host["posterior"].items()}
    if "lp" in host:
        result["lp"] = np.swapaxes(np.asarray(host["lp"])[:n], 0, 1)
    return result


def _stack(chunks: list[dict]) -> tuple[dict, dict]:
    if not chunks:
        return {}, {}
    posterior: dict[str, np.ndarray] = {}
    stats: dict[str, np.ndarray] = {}
    if "posterior" in chunks[0]:
        for name in chunks[0]["posterior"]:
            # C order whatever the chunks: reductions over draws (numpy's pairwise sums) then
            # give the same bits for one run and for a resumed one
            posterior[name] = np.ascontiguousarray(np.concatenate([c["posterior"][name] for c in chunks], axis=1))
    if "lp" in chunks[0]:
        stats["lp"] = np.ascontiguousarray(np.concatenate([c["lp"] for c in chunks], axis=1))
    return posterior, stats
