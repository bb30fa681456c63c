"""Continuing a run from the ``sampler_state`` group of its result: :func:`resume`."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_int as _check_int
from gibbsjax._checks import fields_of, first_where, working_dtype
from gibbsjax.diagnostics import with_current_names
from gibbsjax.kernel import Kernel
from gibbsjax.run.chunks import start_fn, zero_accumulators_shape
from gibbsjax.run.driver import check_data_type, check_until_rule, data_fingerprint, drive, interrupt_note
from gibbsjax.run.placement import layout, place_run
from gibbsjax.run.results import STATE_GROUP, Run, finish, leaf_names
from gibbsjax.run.settings import Settings

__all__ = ["resume", "check_saved_state", "check_precision", "saved_float_dtype"]


# ----------------------------------------------------------------------------- resume
def resume(idata, kernel: Kernel, data: Any = None, num_draws: int | None = None, *,
           progress: bool = True, chunk_size: int | None = None, until: str | None = None,
           max_draws: int | None = None, until_vars: Sequence[str] | None = None, devices: int | None = None):
    """Continue a finished or interrupted run for ``num_draws`` more draws per chain.

    An unfinished warm-up is finished first.  The draws of a run of 200 draws
    resumed for 300 more are bit-identical to those of one run of 500 draws (sweep
    ``t`` of chain ``c`` always uses the same key), and so are the per-chain means.
    Model postprocessing (alignment, estimates) must be applied again.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`sample` (or a file saved from one, read with
        ``arviz.from_netcdf``), with its ``sampler_state`` group.
    kernel : Kernel
        The kernel it ran.
    data : pytree, optional
        The data it ran on (checked against ``attrs["data_sha256"]``).
    num_draws : int, optional
        Draws per chain to add; defaults to the run's own ``num_draws_requested``.
        ``num_draws=0`` only finishes an interrupted warm-up (or returns the run as
        it is).
    progress : bool, default True
        Show a progress bar.
    chunk_size : int, optional
        Draws per compiled chunk (the draws do not depend on it).
    until : str, optional
        A stopping rule, as in :func:`sample`.
    max_draws : int, optional
        The cap of a run with ``until``; it counts every kept draw, old and new.
    until_vars : sequence of str, optional
        The variables the rule looks at besides ``lp``, as in :func:`sample`.
    devices : int, optional
        Spread the chains over this many devices as in :class:`Settings` (the
        draws do not depend on it).  By default a run whose chains were spread over
        devices goes on over as many devices as before where this process has them
        (else on one).  A run with its data split over devices
        (``attrs["sharding"]``) goes on with the same number of shards, by default
        on as many devices as before (``devices`` must divide the shards).

    Returns
    -------
    arviz.InferenceData
        The whole run: the old draws (as the sampler made them: ``raw_<group>``
        copies where a postprocess relabelled components) followed by the new ones.

    Raises
    ------
    ValueError
        When ``idata`` has no ``sampler_state``, or ``kernel`` or ``data`` are not
        the ones it ran, or the run computed in another float precision (resume
        under the same ``JAX_ENABLE_X64`` setting), or the saved state is damaged
        (:func:`check_saved_state`; the message names the variable and its first bad
        entry).

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> from gibbsjax.run import sample
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
        check_data_type(kernel, data)  # (data split over processes are checked by the kernel's shard plan)
    check_precision(st)  # (before the data: data of another precision would not match either)
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
    elif devices is None and str(attrs.get("sharding", "")).startswith("chains:"):
        before = int(attrs.get("devices", 1))  # chains spread as before, where this process has the devices
        devices = before if 1 < before <= len(jax.devices()) and num_chains % before == 0 else None
    s = Settings(num_chains=num_chains, num_warmup=int(st.attrs["num_warmup"]), num_draws=max(num_draws, 1),
                 thin=int(st.attrs["thin"]), progress=progress, chunk_size=chunk_size,
                 save_warmup=bool(int(st.attrs.get("save_warmup", 0))), devices=devices,
                 shard="data" if num_shards else ("chains" if devices else "auto"),
                 log_likelihood="log_likelihood" in idata.groups())  # recorded as before
    user_kernel = kernel
    kernel, data, plan, mode = layout(kernel, data, s, num_shards or None)
    kept_before = int(st.attrs["kept_draws"])
    if until is not None and num_draws == 0:
        raise ValueError("until needs num_draws >= 1: the draws added between checks")
    rule, max_draws = check_until_rule(until, max_draws, kept_before + num_draws, num_chains)

    # the state and running sums, with the kernel's own structure
    abstract_keys, abstract_state = jax.eval_shape(
        start_fn(kernel.init), jax.random.key(0), jax.ShapeDtypeStruct((num_chains,), jnp.int32), data)
    state = _restore_tree(st, "state", abstract_state)
    acc = _restore_tree(st, "acc", zero_accumulators_shape(kernel.accumulate, abstract_state, data))
    try:
        check_saved_state(state, acc, user_kernel, kernel, data)
    except ValueError as e:
        raise ValueError(f"{e}; {_DAMAGED}") from None
    state, acc = jax.tree_util.tree_map(jnp.asarray, (state, acc))
    run_keys = jax.random.wrap_key_data(jnp.asarray(st["run_key"].values, jnp.uint32),
                                        impl=str(st.attrs["key_impl"]))
    run_keys, state, acc, data = place_run(mode, devices, run_keys, state, acc, data, plan)
    run = Run(kernel, data, s, run_keys, state, acc, next_sweep=int(st.attrs["next_sweep"]), kept=kept_before,
              elapsed=float(attrs.get("sampling_time_s", 0.0) or 0.0), plan=plan, dims=user_kernel.dims)
    for phase, group, stats_group in (("sampling", "posterior", "sample_stats"),
                                      ("warm-up", "warmup_posterior", "warmup_sample_stats")):
        previous = _previous_draws(idata, group, stats_group, s.log_likelihood)
        if previous is not None:
            run.outputs[phase].append(previous)

    if num_draws or run.warmup_left:
        drive(run, num_draws, rule, max_draws, until_vars)
    if run.interrupted:
        warnings.warn(interrupt_note(run, resumed=True), RuntimeWarning, stacklevel=2)
    keep = {k: v for k, v in attrs.items() if not k.startswith("until")}
    keep["num_draws_requested"] = kept_before + num_draws if not int(attrs.get("interrupted", 0)) else \
        max(int(attrs.get("num_draws_requested", 0)), kept_before + num_draws)
    keep["resumed"] = int(attrs.get("resumed", 0)) + 1
    keep.pop("interrupted_by", None)
    if rule is not None:
        keep["until"] = ",".join(str(c) for c in rule)
        keep["max_draws"] = max_draws
    return finish(run, keep)


_DAMAGED = ("the saved state is damaged (or was edited), so this result cannot be resumed: run it again, "
            "or resume an undamaged copy")


def _restore_tree(st, prefix: str, abstract):
    """The saved variables ``<prefix>__<leaf>`` as numpy arrays of ``abstract``'s structure, shapes
    and dtypes (integers saved as whole floats are taken; other values are refused naming the entry)."""
    leaves, treedef = jax.tree_util.tree_flatten(abstract)
    names = leaf_names(abstract)
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
        if np.issubdtype(leaf.dtype, np.integer) and arr.dtype.kind not in "iu":
            info = np.iinfo(leaf.dtype)
            at = first_where(arr, lambda b: ~(np.isfinite(b) & (b == np.round(b)) & (b >= info.min) & (b <= info.max))
                             if b.dtype.kind == "f" else np.ones(b.shape, bool))
            if at is not None:
                raise ValueError(f"sampler_state {var!r} holds integers ({leaf.dtype}), got {arr[at].item()!r} at "
                                 f"{at} (chain {at[0]}); {_DAMAGED}")
        out.append(arr.astype(leaf.dtype, copy=False))
    return jax.tree_util.tree_unflatten(treedef, out)


def saved_float_dtype(st) -> np.dtype | None:
    """The float dtype a result's run computed in: its ``sampler_state``'s ``float_dtype``, or (a
    result saved without it) float64 if any saved float variable is float64, else float32; None for
    a state without floats."""
    recorded = st.attrs.get("float_dtype")
    if recorded:
        return np.dtype(str(recorded))
    kinds = {np.dtype(v.dtype) for name, v in st.data_vars.items()
             if name.startswith(("state__", "acc__")) and np.dtype(v.dtype).kind == "f"}
    if not kinds:
        return None
    return np.dtype(np.float64) if np.dtype(np.float64) in kinds else np.dtype(np.float32)


def check_precision(st) -> None:
    """Refuse to resume a run in another float precision than it was sampled in (one line that says
    which, and how to resume): its state, its running sums and its draws would change precision
    midway, and the draws would no longer be those of one uninterrupted run."""
    saved, now = saved_float_dtype(st), working_dtype()
    if saved is None or saved == now:
        return
    setting = {np.dtype(np.float64): "JAX_ENABLE_X64=1", np.dtype(np.float32): "JAX_ENABLE_X64 unset or 0"}
    raise ValueError(
        f"this result was sampled in {saved} ({setting.get(saved, str(saved))}) and this process computes in "
        f"{now} ({setting[now]}): a run cannot change precision midway; resume it with "
        f"{setting.get(saved, 'the same JAX_ENABLE_X64 setting')}, as it was sampled")


def check_saved_state(state, acc, kernel: Kernel, laid_out: Kernel | None = None, data: Any = None) -> None:
    """Check the values of a saved state (numpy, chains first) before a run continues from it.

    * every float is a number: no NaN; no infinity, except ``-inf`` in a field whose name
      starts with ``log`` (the log of a probability zero, e.g. a padded CPT entry); the
      running sums (``acc``) are all finite;
    * ``kernel.check_init`` (the user's kernel) on the state's fields: labels and topic ids
      within ``0..K-1``, log-probabilities on the simplex, variances > 0;
    * ``laid_out.check_state(state, data, label)`` (the kernel that runs, default ``kernel``): what
      needs the data (labels whose K the data set, counts equal to those of the assignments).

    A ``ValueError`` names the saved variable (``sampler_state 'state__z'``) and the first bad
    entry (its index, the chain first).
    """
    laid_out = kernel if laid_out is None else laid_out
    for prefix, tree in (("state", state), ("acc", acc)):
        for name, leaf in zip(leaf_names(tree), jax.tree_util.tree_leaves(tree)):
            arr = np.asarray(leaf)
            if arr.dtype.kind != "f":
                continue
            allowed = prefix == "state" and name.split("__")[-1].startswith("log")
            at = first_where(arr, lambda b: np.isnan(b) | (b == np.inf) | ((b == -np.inf) & (not allowed)))
            if at is not None:
                what = ("running sums hold finite numbers" if prefix == "acc" else
                        "a log-probability is finite or -inf" if allowed else "a state holds finite numbers")
                chain = f" (chain {at[0]})" if at else ""
                raise ValueError(f"sampler_state '{prefix}__{name}' holds {arr[at]} at {at}{chain}; {what}")

    def label(field: str) -> str:
        return f"sampler_state 'state__{field}'"

    if kernel.check_init is not None and (hasattr(state, "_asdict") or isinstance(state, dict)):
        values = {k: v for k, v in fields_of(state).items() if v.dtype != object}
        try:
            takes_label = "label" in inspect.signature(kernel.check_init).parameters
        except (TypeError, ValueError):
            takes_label = False
        if takes_label:
            kernel.check_init(values, label=label)
        else:
            try:
                kernel.check_init(values)
            except ValueError as e:
                raise ValueError(f"sampler_state: {e}") from None
    if laid_out.check_state is not None:
        laid_out.check_state(state, data, label=label)


def _previous_draws(idata, group: str, stats_group: str, log_likelihood: bool = False) -> dict | None:
    """A run's earlier records as one chunk (the raw copies where a postprocess changed them), with
    the pointwise log likelihood when the run records it."""
    def pick(name):
        for g in (f"raw_{name}", name):
            if g in idata.groups():
                return idata[g]
        return None

    post, stats = pick(group), pick(stats_group)
    if post is None:
        return None
    n = int(post.sizes.get("draw", 0))
    has_lp = stats is not None and "lp" in stats  # (older results hold lp in the posterior too: not a record)
    chunk: dict[str, Any] = {"n": n, "posterior": {k: np.asarray(v.transpose("chain", "draw", ...).values)
                                                   for k, v in post.data_vars.items()
                                                   if not (k == "lp" and has_lp)}}
    if stats is not None and "lp" in stats:
        chunk["lp"] = np.asarray(stats["lp"].transpose("chain", "draw").values)
    ll_group = "log_likelihood" if group == "posterior" else "warmup_log_likelihood"
    if log_likelihood and ll_group in idata.groups():
        chunk["log_likelihood"] = {k: np.asarray(v.transpose("chain", "draw", ...).values)
                                   for k, v in idata[ll_group].data_vars.items()}
    return chunk if n else None
