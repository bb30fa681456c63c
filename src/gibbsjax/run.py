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
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int as _check_int

from gibbsjax.diagnostics import to_inference_data
from gibbsjax.kernel import Kernel
from gibbsjax.memory import check_run as check_run_memory

__all__ = ["sample", "Settings", "enable_compilation_cache", "DEFAULT_NUM_CHUNKS"]

#: a run is cut into about this many chunks per phase (warm-up, sampling)
DEFAULT_NUM_CHUNKS = 20


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

    def __post_init__(self):
        for name, minimum in (("num_chains", 1), ("num_warmup", 0), ("num_draws", 1), ("thin", 1)):
            object.__setattr__(self, name, _check_int(name, getattr(self, name), minimum))
        if self.chunk_size is not None:
            object.__setattr__(self, "chunk_size", _check_int("chunk_size", self.chunk_size, 1))
        if self.seed is not None:
            object.__setattr__(self, "seed", _check_int("seed", self.seed, 0))
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
class _Interrupts:
    """Turn the first Ctrl-C into a flag checked between chunks.

    A ``KeyboardInterrupt`` raised at an arbitrary point can land inside JAX
    (a GC callback swallows it; mid-compile it can crash the interpreter at
    exit), so while chunks run, SIGINT only sets ``requested``; the loop stops
    after the chunk in flight and keeps every finished draw.  A second Ctrl-C
    raises ``KeyboardInterrupt`` at once.  Only in the main thread (elsewhere
    signals cannot be handled); the previous handler is restored on exit.
    """

    def __init__(self):
        self.requested = False
        self._previous = None

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            try:
                self._previous = signal.signal(signal.SIGINT, self._handle)
            except (ValueError, OSError):  # embedded interpreters
                self._previous = None
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


# ----------------------------------------------------------------------------- progress
def _progress_bar(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="sweep", leave=True, dynamic_ncols=True)


# ----------------------------------------------------------------------------- main entry
def sample(kernel: Kernel, data: Any = None, settings: Settings | None = None, *,
           key: jax.Array | None = None, attrs: Mapping[str, Any] | None = None, **options):
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
        ``progress``, ``chunk_size``, ``save_warmup``), which override it.
        Without a seed (nor ``key``) a fresh one is drawn and stored in
        ``attrs["seed"]`` so the run can be repeated.
    key:
        A typed key ``jax.random.key(...)`` instead of a seed.
    attrs:
        Extra attributes stored in the result.

    Returns
    -------
    arviz.InferenceData
        ``posterior`` (dims ``chain, draw, ...``) with what ``kernel.record``
        returns; ``sample_stats.lp``, the log joint, when the kernel has one.
        ``posterior_mean`` holds per-chain means over the kept draws of what
        ``kernel.accumulate`` returns (when the kernel has it).
        ``attrs`` hold the seed, the settings and ``interrupted`` (1 when the run
        was cut short by Ctrl-C: every finished draw is kept).

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
    key, seed_used = _resolve_key(s.seed, key)
    _check_data_type(kernel, data)

    length = _chunk_length(max(s.num_warmup, s.num_draws), s.chunk_size)
    draw_fn = _chunk_fn(kernel.step, kernel.record, kernel.log_joint, s.thin, length, kernel.accumulate)
    warm_fn = _chunk_fn(kernel.warmup_step or kernel.step, kernel.record, kernel.log_joint, 1, length,
                        kernel.accumulate)
    if s.init is not None:  # check init values on the abstract state, before compiling
        abstract = jax.eval_shape(_start_fn(kernel.init), key, jax.ShapeDtypeStruct((s.num_chains,), jnp.int32), data)
        _apply_init(abstract[1], s.init, s.num_chains, kernel.check_init)
    check_run_memory(  # before anything big is allocated: refuse a run that cannot fit
        _start_fn(kernel.init), (draw_fn, warm_fn), functools.partial(_zero_accumulators, kernel.accumulate),
        key, s.num_chains, data, length=length, kept=s.num_draws + (s.num_warmup + 1 if s.save_warmup else 0),
        kernel_name=kernel.name,
    )

    run_keys, state = _start_fn(kernel.init)(key, jnp.arange(s.num_chains, dtype=jnp.int32), data)
    if s.init is not None:
        state = _apply_init(state, s.init, s.num_chains, kernel.check_init)

    phases = [("warm-up", s.num_warmup, 1, s.save_warmup, False, warm_fn),
              ("sampling", s.num_draws, s.thin, True, True, draw_fn)]
    acc = _zero_accumulators(kernel.accumulate, state, data)
    outputs: dict[str, list[dict]] = {"warm-up": [], "sampling": []}
    if s.save_warmup:
        # draw 0 of warmup_posterior is the starting state
        first = jax.device_get(_records_fn(kernel.record, kernel.log_joint)(state, data))
        outputs["warm-up"].append(_to_host(jax.tree_util.tree_map(lambda a: np.asarray(a)[None], first), 1))
    interrupted = False
    start = time.perf_counter()
    bar = _progress_bar(s.num_warmup + s.num_draws * s.thin, s.progress, kernel.name)
    t0 = 0
    try:
        with _Interrupts() as stop:
            for phase, n_iters, thin, keep, accum, fn in phases:
                state, acc, t0 = _run_phase(fn, run_keys, state, acc, data, t0, n_iters, thin, length,
                                            keep, accum, outputs[phase], stop, bar, f"{kernel.name} {phase}")
    except KeyboardInterrupt:
        interrupted = True
        if not outputs["sampling"] and not outputs["warm-up"]:
            raise
        warnings.warn(
            f"run interrupted: keeping the {sum(o['n'] for o in outputs['sampling'])} draws per chain "
            "finished so far (attrs['interrupted'] = 1)",
            RuntimeWarning,
            stacklevel=2,
        )
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - start

    posterior, stats = _stack(outputs["sampling"])
    warm_posterior, warm_stats = _stack(outputs["warm-up"])
    if not posterior:
        # interrupted during warm-up with save_warmup: no posterior draws yet
        posterior = {k: v[:, :0] for k, v in warm_posterior.items()}
    run_attrs = {
        "gibbsjax_kernel": kernel.name,
        "seed": "" if seed_used is None else seed_used,
        "num_chains": s.num_chains,
        "num_warmup": s.num_warmup,
        "warmup": warmup_description(kernel),
        "num_draws_requested": s.num_draws,
        "thin": s.thin,
        "interrupted": interrupted,
        "sampling_time_s": round(elapsed, 4),
    }
    run_attrs.update(attrs or {})
    kept = sum(o["n"] for o in outputs["sampling"])
    means = None
    if acc and kept > 0:
        means = {k: np.asarray(v) / kept for k, v in jax.device_get(acc).items()}
    return to_inference_data(
        posterior,
        sample_stats=stats,
        warmup_posterior=warm_posterior if s.save_warmup else None,
        warmup_sample_stats=warm_stats if s.save_warmup else None,
        dims=dict(kernel.dims or {}),
        coords=dict(kernel.coords(data)) if kernel.coords is not None else {},
        attrs=run_attrs,
        posterior_mean=means,
    )


def warmup_description(kernel: Kernel) -> str:
    """What the warm-up phase of ``kernel`` runs, as recorded in ``attrs["warmup"]``.

    >>> from gibbsjax.models import normal
    >>> warmup_description(normal.bivariate(rho=0.5))
    'the sampling kernel (normal.bivariate)'
    """
    if kernel.warmup_step is None:
        return f"the sampling kernel ({kernel.name})"
    return kernel.warmup_name or f"a warm-up transition of {kernel.name}"


def _run_phase(fn, run_keys, state, acc, data, t0: int, n_iters: int, thin: int, length: int,
               keep: bool, accum: bool, out: list, stop: _Interrupts, bar, desc: str):
    """Run ``n_iters`` iterations of ``thin`` sweeps from sweep ``t0`` in chunks of ``length``.

    Records go to ``out`` (host copies) when ``keep``; accumulators are summed
    when ``accum``.  Between chunks the interrupt flag is checked and the bar
    moves.  The accumulators are only replaced once a chunk has finished, so
    an interrupt never leaves a half-counted sum.  Returns ``(state, acc, t)``
    with ``t`` the next sweep's index."""
    done = 0
    while done < n_iters:
        if stop.requested:
            raise KeyboardInterrupt
        n = min(length, n_iters - done)
        state, acc, records = fn(run_keys, state, acc, data, np.int32(t0 + done * thin), np.int32(n),
                                 np.bool_(keep), np.bool_(accum))
        if keep:
            out.append(_to_host(records, n))
        else:
            jax.block_until_ready(state)
        done += n
        if bar is not None:
            bar.set_description(desc)
            bar.update(n * thin)
    return state, acc, t0 + n_iters * thin


def _to_host(out: dict, n: int) -> dict:
    """Copy one chunk's records to numpy, (length, chain, ...) -> (chain, n, ...)."""
    host = jax.device_get(out)
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
            posterior[name] = np.concatenate([c["posterior"][name] for c in chunks], axis=1)
    if "lp" in chunks[0]:
        stats["lp"] = np.concatenate([c["lp"] for c in chunks], axis=1)
    return posterior, stats
