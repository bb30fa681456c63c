"""The driver of a run: checks of its arguments (seed or key, data, stopping rule, init
values), interrupts, progress, the loop over chunks, and :func:`sample`."""

from __future__ import annotations

import hashlib
import importlib
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int as _check_int
from gibbsjax._checks import check_seed
from gibbsjax.kernel import Kernel, abstract_output, check_outputs
from gibbsjax.memory import check_sizes
from gibbsjax.run.chunks import compiled, recorded_log_likelihood, records_fn, start_fn, zero_accumulators
from gibbsjax.run.placement import check_layout_memory, fetch, layout, place_data, place_run, sharding_note
from gibbsjax.run.results import Run, finish, stack_chunks, to_host
from gibbsjax.run.settings import Settings, enable_default_cache
from gibbsjax.stopping import check_until, parse_until

__all__ = ["sample", "drive", "run_phase", "check_data_type", "check_until_rule", "data_fingerprint",
           "format_lp", "warmup_description", "interrupt_note", "SEED_LIMIT", "STOP_SIGNALS"]


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
    seed = check_seed("seed", seed)  # the one seed rule of the package
    return jax.random.key(int(seed)), int(seed)


def check_data_type(kernel: Kernel, data) -> None:
    """``ValueError`` when ``data`` is not what ``kernel`` takes (its ``data_type``)."""
    expected = kernel.data_type
    if expected is None:
        # no declared type: trace ``init`` on the data (no compilation, nothing allocated)
        try:
            abstract_output(kernel.init, "init", jax.random.key(0), data)  # a state of non-arrays: named
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


def check_until_rule(until, max_draws, num_draws: int, num_chains: int):
    """``(rule, max_draws)``: the parsed stopping rule ``until`` and its cap (default
    ``10 * num_draws``), or ``(None, None)`` without a rule; ``ValueError`` as :class:`Settings`."""
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


def import_beside_the_run(module: str = "arviz") -> None:
    """Start importing ``module`` on a daemon thread where it is not imported yet.

    A run ends by building ArviZ's InferenceData, and ``import arviz`` takes 1-3 s on a CPU
    (it imports matplotlib, SciPy and xarray): in a new process the first run would wait for
    it after its last sweep.  Compiling and sampling release the GIL, so the import overlaps
    them instead.  An import that fails here fails again, with its message, where it is used.

    >>> import_beside_the_run("json")
    """
    if module in sys.modules:
        return

    def work():
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - raised again by the import that needs it
            pass

    threading.Thread(target=work, name=f"gibbsjax-import-{module}", daemon=True).start()


def _fingerprint_later(data) -> Callable[[], str]:
    """Start :func:`data_fingerprint` of ``data`` beside the run; the returned function waits for
    it and gives the digest (or raises what it raised).

    In a thread (``hashlib`` and the device-to-host copies release the GIL): the SHA-256 of a
    100 M-token corpus (about 1 GB of packed arrays) then overlaps the sweeps instead of following
    them.  Data spread over several processes are hashed at the end, in this thread: their
    digest is a collective every process makes in the same order."""
    leaves = jax.tree_util.tree_leaves(data)
    if any(isinstance(x, jax.Array) and not x.is_fully_addressable for x in leaves):
        return lambda: data_fingerprint(data)
    box: dict[str, Any] = {}

    def work():
        try:
            box["digest"] = data_fingerprint(data)
        except BaseException as err:  # noqa: BLE001 - handed to the caller of finish()
            box["error"] = err

    thread = threading.Thread(target=work, name="gibbsjax-data-fingerprint", daemon=True)
    thread.start()

    def finish() -> str:
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["digest"]

    return finish


def _global_fingerprint(x: jax.Array) -> bytes:
    """A digest of an array spread over the devices of several processes (``jax.distributed``):
    each process hashes the pieces it holds (by their index), the digests are gathered and
    hashed in process order; a collective (every process calls it), nothing but 32 bytes per
    process is exchanged.  The same data split the same way give the same digest."""
    from jax.experimental import multihost_utils

    h = hashlib.sha256(f"{np.dtype(x.dtype).str}{x.shape}{x.sharding}".encode())
    for shard in sorted((s for s in x.addressable_shards if s.replica_id == 0), key=lambda s: str(s.index)):
        h.update(str(shard.index).encode())
        h.update(memoryview(np.ascontiguousarray(np.asarray(shard.data))).cast("B"))
    every = multihost_utils.process_allgather(np.frombuffer(h.digest(), np.uint8))
    return hashlib.sha256(np.asarray(every).tobytes()).digest()


def check_sizes_first(kernel: Kernel, data, s: Settings, plan=None) -> None:
    """:func:`gibbsjax.memory.check_sizes` of a kernel that declares ``sizes``, before
    anything is traced (data the kernel cannot read are left to :func:`check_data_type`)."""
    if kernel.sizes is None or not kernel.dims:
        return
    try:
        sizes = kernel.sizes(data)
    except (AttributeError, TypeError, IndexError):
        return
    split = len(list(plan.mesh.devices.flat)) if plan is not None else 0
    check_sizes(sizes, kernel.dims, kernel.label_dims, s.num_chains, kernel_name=kernel.name, split=split)


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
        raw = np.asarray(value)
        if raw.dtype.kind in "USOb":  # strings, objects and bools are not values of a state field
            raise ValueError(f"init[{name!r}] must hold numbers, got {raw.dtype} values")
        if np.issubdtype(ref.dtype, np.integer) and raw.dtype.kind == "f":
            if not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
                raise ValueError(f"init[{name!r}] holds integers (labels, counts), got non-integer values")
        arr = np.asarray(raw, dtype=np.result_type(ref.dtype))
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
    thread (elsewhere signals cannot be handled), and not for a signal the process
    was started ignoring (a background job of a script: ``cmd &``); the previous
    handlers are restored on exit.  ``signal_name`` says which signal arrived.
    """

    def __init__(self):
        self.requested = False
        self.signal_name: str | None = None
        self._previous: dict = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for name in STOP_SIGNALS:
                signum = getattr(signal, name, None)
                if signum is None or signal.getsignal(signum) == signal.SIG_IGN:
                    continue  # a signal the parent asked this process to ignore stays ignored
                try:
                    self._previous[signum] = signal.signal(signum, self._handle)
                except (ValueError, OSError):  # embedded interpreters
                    pass
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self.signal_name = signal.Signals(signum).name

    def __exit__(self, *exc):
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        return False


# ----------------------------------------------------------------------------- progress
def format_lp(lp) -> str:
    """The ``lp=`` text of the progress bar: the log joint of every chain's last
    draw, one value or ``min..max`` across chains (whole numbers from 1000 on).

    >>> format_lp([-1523.4, -1498.02])
    'lp=-1523..-1498'
    >>> format_lp([-12.3456])
    'lp=-12.35'
    """
    values = np.asarray(lp, dtype=np.float64).ravel()

    def number(v: float) -> str:
        if not np.isfinite(v):
            return str(v)
        return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"

    finite = values[np.isfinite(values)]
    if finite.size < values.size:  # a NaN or infinite lp is shown as such, not hidden by min/max
        low, high = number(float(values[~np.isfinite(values)][0])), None
    else:
        low, high = number(float(finite.min())), number(float(finite.max()))
    return f"lp={low}" if high is None or high == low else f"lp={low}..{high}"


def _progress_bar(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="sweep", leave=True, dynamic_ncols=True)


class _Progress:
    """The progress bar (``settings.progress``) and the ``callback`` of a run, both told
    once per finished chunk, with the log joint ``lp`` of every chain's last draw.

    ``lp`` is the chunk's own record when it keeps records (sampling, or warm-up with
    ``save_warmup``); in a warm-up chunk that keeps none, ``kernel.log_joint`` is
    evaluated once on the chunk's final state (one evaluation per chunk, never per
    sweep; only when a bar or callback is on, and only in a single-process run: with
    ``jax.distributed`` the bar is often on one process only, and a computation on
    global arrays that the other processes do not run would wait for them forever).
    Kernels without ``log_joint``: no lp."""

    def __init__(self, run: Run, total: int, callback: Callable[[dict], Any] | None):
        self.bar = _progress_bar(total, run.settings.progress, run.kernel.name)
        self.callback = callback
        self.done, self.total = 0, total
        self.on = self.bar is not None or callback is not None
        log_joint = run.kernel.log_joint
        alone = jax.process_count() == 1
        self._lp_fn = records_fn(None, log_joint) if self.on and alone and log_joint is not None else None

    def grow(self, sweeps: int) -> None:
        self.total += sweeps
        if self.bar is not None:
            self.bar.total += sweeps
            self.bar.refresh()

    def chunk(self, run: Run, phase: str, sweeps: int, host: dict | None) -> None:
        """After a finished chunk of ``sweeps`` sweeps (its host records ``host``, or None)."""
        if not self.on:
            return
        self.done += sweeps
        lp = None
        if host is not None and "lp" in host:
            lp = np.asarray(host["lp"])[:, -1]
        elif self._lp_fn is not None:
            lp = np.asarray(fetch(self._lp_fn(run.state, run.data))["lp"])
        if self.bar is not None:
            if lp is not None:
                self.bar.set_postfix_str(format_lp(lp), refresh=False)
            self.bar.set_description(f"{run.kernel.name} {phase}")  # shown at once, every chunk (as before)
            self.bar.update(sweeps)
        if self.callback is not None:
            self.callback({"phase": phase, "sweeps_done": self.done, "sweeps_total": self.total,
                           "draws": run.kept, "lp": lp})

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ----------------------------------------------------------------------------- the loop over chunks
def _advance(run: Run, num_draws: int, stop: _Interrupts, progress: _Progress) -> None:
    """Finish the warm-up, then add ``num_draws`` kept draws, chunk by chunk."""
    kernel, s = run.kernel, run.settings
    length, warm_fn, draw_fn = compiled(kernel, s, max(run.warmup_left, num_draws))
    if run.warmup_left:
        run_phase(run, warm_fn, run.warmup_left, 1, length, s.save_warmup, False, "warm-up", stop, progress)
    if num_draws:
        run_phase(run, draw_fn, num_draws, s.thin, length, True, True, "sampling", stop, progress)


def run_phase(run: Run, fn, n_iters: int, thin: int, length: int, keep: bool, accum: bool,
              phase: str, stop: _Interrupts, progress: _Progress | None) -> None:
    """Run ``n_iters`` iterations of ``thin`` sweeps in chunks of ``length``.

    Records go to ``run.outputs[phase]`` (host copies) when ``keep``;
    accumulators are summed when ``accum``.  Between chunks the interrupt flag
    is checked and ``progress`` (bar and callback) is told.  ``run`` is only
    updated once a chunk has finished and its records are on the host."""
    done = 0
    while done < n_iters:
        if stop.requested:
            raise KeyboardInterrupt
        n = min(length, n_iters - done)
        state, acc, records = fn(run.run_keys, run.state, run.acc, run.data, np.int32(run.next_sweep),
                                 np.int32(n), np.bool_(keep), np.bool_(accum))
        host = None
        if keep:
            host = to_host(records, n)
        else:
            jax.block_until_ready(state)
        run.state, run.acc, run.next_sweep = state, acc, run.next_sweep + n * thin
        if keep:
            run.outputs[phase].append(host)
        if accum:
            run.kept += n
        done += n
        if progress is not None:
            progress.chunk(run, phase, n * thin, host)


def drive(run: Run, num_draws: int, until, max_draws: int | None, until_vars,
          callback: Callable[[dict], Any] | None = None) -> None:
    """Sample ``num_draws`` more draws; with a rule ``until``, then keep adding
    ``num_draws`` at a time until it holds or ``max_draws`` draws are kept.
    ``callback`` is called once per finished chunk (see :func:`sample`)."""
    s = run.settings
    total = run.warmup_left + num_draws * s.thin
    progress = _Progress(run, total, callback)
    start = time.perf_counter()
    try:
        with _Interrupts() as stop:
            try:
                _advance(run, num_draws, stop, progress)
                while until is not None:
                    result = check_until(until, _invariant_draws(run, until_vars))
                    run.until_note = {"until_met": int(result.met), "until_checked_draws": run.kept,
                                      "until_values": result.describe()}
                    if result.met or run.kept >= max_draws:
                        break
                    more = min(num_draws, max_draws - run.kept)
                    if more <= 0:
                        break
                    progress.grow(more * s.thin)
                    _advance(run, more, stop, progress)
            finally:
                run.signal_name = stop.signal_name
    except KeyboardInterrupt:
        run.interrupted = True
        if run.signal_name is None:
            run.signal_name = "SIGINT"
    finally:
        progress.close()
        run.elapsed += time.perf_counter() - start


def _invariant_draws(run: Run, names) -> dict:
    """``lp`` and the label-invariant recorded variables, (chain, draw, ...)."""
    posterior, stats = stack_chunks(run.outputs["sampling"])
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
           until_vars: Sequence[str] | None = None, callback: Callable[[dict], Any] | None = None,
           preflight: Callable[[], Any] | None = None, **options):
    """Run ``num_chains`` chains of ``kernel`` on ``data`` and return ArviZ InferenceData.

    Parameters
    ----------
    kernel : Kernel
        A :class:`gibbsjax.Kernel`, e.g. ``gibbsjax.models.normal.semiconjugate()``.
    data : pytree, optional
        The model's validated data pytree (e.g. ``normal.data(y)``); ``None``
        for models without data.
    settings : Settings, optional
        How to run (:class:`Settings`); its fields may also be given as keywords
        (``**options``), which override it.
    key : jax.Array, optional
        A typed key ``jax.random.key(...)`` instead of a seed.
    attrs : mapping, optional
        Extra attributes stored in the result.
    until_vars : sequence of str, optional
        The recorded variables the rule ``until`` looks at besides ``lp`` (default:
        the label-invariant ones).
    callback : callable, optional
        Called on the host once per finished chunk (about ``DEFAULT_NUM_CHUNKS``
        times per phase, never per sweep) with a dict: ``phase`` (``"warm-up"``
        or ``"sampling"``), ``sweeps_done`` and ``sweeps_total`` (as the progress
        bar counts them), ``draws`` (kept per chain so far) and ``lp`` (the log
        joint of every chain's last sweep, a numpy array; None for a kernel
        without ``log_joint``, and in the warm-up of a multi-process run without
        ``save_warmup``).  An exception it raises ends the run and propagates.
        The progress bar shows the same ``lp`` (:func:`format_lp`).
    preflight : callable, optional
        Called with no argument once the run's own checks have passed (its memory among them),
        before anything big is allocated: a caller's check of its own (``gibbsjax run`` checks
        the disk the result goes to), refusing the run by raising.
    **options
        Fields of :class:`Settings` (``seed``, ``num_chains``, ``num_warmup``,
        ``num_draws``, ``thin``, ``init``, ``progress``, ``chunk_size``,
        ``save_warmup``, ``until``, ``max_draws``, ``devices``, ``shard``, ``log_likelihood``).  Without
        a seed (nor ``key``) a fresh one is drawn and stored in ``attrs["seed"]`` so
        the run can be repeated.  With ``until`` (e.g. ``"rhat<1.01,ess>400"``) the
        run goes on past ``num_draws`` until the rule holds or ``max_draws`` draws
        are kept; ``attrs["until_met"]`` says which.

    Returns
    -------
    arviz.InferenceData
        ``posterior`` (dims ``chain, draw, ...``) with what ``kernel.record``
        returns; ``sample_stats.lp``, the log joint, when the kernel has one.
        ``posterior_mean`` holds per-chain means over the kept draws of what
        ``kernel.accumulate`` returns (when the kernel has it).  ``log_likelihood``
        (the pointwise log likelihood of every kept draw, for ``az.loo``, ``az.waic``
        and ``az.compare``) and ``observed_data`` when the kernel defines them and
        ``log_likelihood`` is not turned off: chains × draws × observations × 4
        bytes (8 with x64), counted by the memory check.
        ``sampler_state`` holds what :func:`resume` needs to continue the run
        (the last state of every chain, its key, the running sums, the sweep
        count) as plain arrays.  ``attrs`` hold the seed, the settings and
        ``interrupted`` (1 when the run was cut short by Ctrl-C or SIGTERM:
        every finished draw is kept).

    Raises
    ------
    ValueError
        On bad settings, a key that is not a typed key, data of a type the kernel
        does not take, bad initial values, or a kernel whose ``init`` or ``record``
        returns what the run cannot store (:func:`gibbsjax.kernel.check_outputs`),
        before anything is compiled.

    Examples
    --------
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
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be a function taking one dict, got {type(callback).__name__}")
    if preflight is not None and not callable(preflight):
        raise ValueError(f"preflight must be a function of no argument, got {type(preflight).__name__}")
    import_beside_the_run("arviz")  # the result is ArviZ's: imported while the chains compile and run
    enable_default_cache()
    s = (settings or Settings()).replace(**options)
    rule, max_draws = check_until_rule(s.until, s.max_draws, s.num_draws, s.num_chains)
    key, seed_used = _resolve_key(s.seed, key)
    user_data, user_kernel = data, kernel
    kernel, data, plan, mode = layout(kernel, data, s)
    check_sizes_first(kernel, data, s, plan)  # sizes too large even to trace: refused with an estimate
    check_data_type(kernel, data)  # the kernel that runs: data already split (lda_shard.from_parts) fit it
    if plan is None:  # what init, step and record return, on abstract shapes: one ValueError before compiling
        check_outputs(kernel, data, log_likelihood=s.log_likelihood)
    if plan is not None and s.init is not None:
        raise ValueError("init values cannot be given with the data split over devices (shard='data'): the "
                         "state is laid out by shard; start from the kernel's random state, or use shard='chains'")

    if s.init is not None:  # check init values on the abstract state, before compiling
        abstract = jax.eval_shape(start_fn(kernel.init), key, jax.ShapeDtypeStruct((s.num_chains,), jnp.int32), data)
        _apply_init(abstract[1], s.init, s.num_chains, kernel.check_init)
    # before anything big is allocated (with the data split over devices: per device)
    check_layout_memory(kernel, data, s, key, plan, mode)
    if preflight is not None:
        preflight()

    fingerprint = _fingerprint_later(user_data)  # hashed while the chains run
    data = place_data(plan, data)
    run_keys, state = start_fn(kernel.init)(key, jnp.arange(s.num_chains, dtype=jnp.int32), data)
    if s.init is not None:
        state = _apply_init(state, s.init, s.num_chains, kernel.check_init)
    run_keys, state, acc, data = place_run(mode, s.devices, run_keys, state,
                                           zero_accumulators(kernel.accumulate, state, data), data, plan)
    run = Run(kernel, data, s, run_keys, state, acc, plan=plan, dims=user_kernel.dims)
    if s.save_warmup:
        # draw 0 of warmup_posterior is the starting state
        first = fetch(records_fn(kernel.record, kernel.log_joint, recorded_log_likelihood(kernel, s))(state, data))
        run.outputs["warm-up"].append(to_host(jax.tree_util.tree_map(lambda a: np.asarray(a)[None], first), 1))

    drive(run, s.num_draws, rule, max_draws, until_vars, callback)
    if run.interrupted:
        if run.next_sweep == 0 and not run.outputs["sampling"] and not run.outputs["warm-up"]:
            raise KeyboardInterrupt  # not one chunk finished: nothing to keep
        warnings.warn(interrupt_note(run), RuntimeWarning, stacklevel=2)
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
        "sharding": sharding_note(mode, plan, s),
        "data_sha256": fingerprint(),
    }
    if rule is not None:
        run_attrs["until"] = ",".join(str(c) for c in rule)
        run_attrs["max_draws"] = max_draws
    run_attrs.update(attrs or {})
    return finish(run, run_attrs)


def interrupt_note(run: Run, resumed: bool = False) -> str:
    """The warning of an interrupted run: what it keeps, and that it can be resumed.

    During warm-up (``run.warmup_left > 0``) it keeps no draw, only the state the
    finished warm-up sweeps reached (``sampler_state``); :func:`resume` finishes the
    warm-up and samples, exactly as one uninterrupted run would."""
    what = "resumed run" if resumed else "run"
    if run.warmup_left:
        return (f"{what} interrupted ({run.signal_name}) during warm-up after {run.next_sweep} of "
                f"{run.settings.num_warmup} warm-up sweeps: no posterior draws yet; keeping the warm-up state "
                "(sampler_state, attrs['interrupted'] = 1); gibbsjax.resume finishes the warm-up and samples")
    return (f"{what} interrupted ({run.signal_name}): keeping the {run.kept} draws per chain "
            "finished so far (attrs['interrupted'] = 1); gibbsjax.resume can continue it")


def warmup_description(kernel: Kernel) -> str:
    """What the warm-up phase of ``kernel`` runs, as recorded in ``attrs["warmup"]``.

    >>> from gibbsjax.models import normal
    >>> warmup_description(normal.bivariate(rho=0.5))
    'the sampling kernel (normal.bivariate)'
    """
    if kernel.warmup_step is None:
        return f"the sampling kernel ({kernel.name})"
    return kernel.warmup_name or f"a warm-up transition of {kernel.name}"
