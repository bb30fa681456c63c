"""What a run has made (:class:`Run`, updated after every finished chunk) and the
InferenceData it becomes: the draws, per-chain means, ``attrs`` and the
``sampler_state`` group that :func:`~gibbsjax.run.resume` continues from;
:func:`keep_raw_draws` for a postprocess that rewrites draws."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import jax
import numpy as np

from gibbsjax._checks import working_dtype
from gibbsjax.diagnostics import to_inference_data
from gibbsjax.kernel import Kernel
from gibbsjax.run.chunks import recorded_log_likelihood, records_fn
from gibbsjax.run.placement import fetch
from gibbsjax.run.settings import Settings

__all__ = ["Run", "finish", "keep_raw_draws", "leaf_names", "to_host", "stack_chunks",
           "stack_log_likelihood", "STATE_GROUP",
           "DRAW_GROUPS"]


# ----------------------------------------------------------------------------- a run in progress
@dataclasses.dataclass
class Run:
    """Everything a run has made so far; updated after every finished chunk only,
    so an interrupt at any point leaves it consistent (state, sums and records
    of the same sweep).

    Examples
    --------
    >>> from gibbsjax.run.results import Run
    >>> 'kept' in Run.__dataclass_fields__
    True
    """

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


def to_host(out: dict, n: int) -> dict:
    """Copy one chunk's records to numpy, (length, chain, ...) -> (chain, n, ...)."""
    host = fetch(out)
    result: dict[str, Any] = {"n": n}
    if "posterior" in host:
        result["posterior"] = {k: np.swapaxes(np.asarray(v)[:n], 0, 1) for k, v in host["posterior"].items()}
    if "lp" in host:
        result["lp"] = np.swapaxes(np.asarray(host["lp"])[:n], 0, 1)
    if "log_likelihood" in host:
        result["log_likelihood"] = {k: np.swapaxes(np.asarray(v)[:n], 0, 1)
                                    for k, v in host["log_likelihood"].items()}
    return result


def stack_chunks(chunks: list[dict]) -> tuple[dict, dict]:
    """``(posterior, stats)`` of host chunks (:func:`to_host`), joined along the draw axis."""
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


def stack_log_likelihood(chunks: list[dict], dims: dict | None = None, sizes=None) -> dict:
    """The pointwise log likelihood of host chunks (:func:`to_host`), joined along the draw axis;
    with ``sizes``, each chunk first cut to them (:func:`cut_to_sizes`: the chunks of a resumed run
    come cut, its new ones padded).  Empty when the chunks hold none."""
    if not chunks or "log_likelihood" not in chunks[0]:
        return {}
    parts = [c["log_likelihood"] if sizes is None else cut_to_sizes(c["log_likelihood"], dims or {}, sizes, 2)
             for c in chunks]
    return {name: np.ascontiguousarray(np.concatenate([p[name] for p in parts], axis=1)) for name in parts[0]}


# ----------------------------------------------------------------------------- result
def finish(run: Run, run_attrs: dict):
    """The InferenceData of a run: draws, per-chain means and its ``sampler_state``.

    The log joint ``lp`` is in ``sample_stats`` only (where ArviZ expects it: not a
    parameter of ``az.summary`` or ``az.plot_trace``; :func:`gibbsjax.summary` adds its row)."""
    s, kernel = run.settings, run.kernel
    posterior, stats = stack_chunks(run.outputs["sampling"])
    warm_posterior, warm_stats = stack_chunks(run.outputs["warm-up"])
    sizes = None
    if run.plan is None and kernel.sizes is not None and kernel.dims:
        # data padded to bucket sizes (e.g. gibbsjax.models.lda.data(bucket=True)): every result cut to
        # the sizes of the dims the kernel declares
        sizes = dict(kernel.sizes(run.data))
        if kernel.coords is not None:  # a dim with coordinates has as many entries
            sizes.update({k: len(v) for k, v in kernel.coords(run.data).items() if np.ndim(v) == 1})
    dims = dict((run.dims if run.plan is not None else kernel.dims) or {})
    log_lik = stack_log_likelihood(run.outputs["sampling"], dims, sizes)
    warm_log_lik = stack_log_likelihood(run.outputs["warm-up"], dims, sizes)
    if not posterior:
        # interrupted during warm-up: no posterior draws yet, an empty posterior (and lp) of the right shapes
        posterior, empty_stats, empty_log_lik = _no_draws(run)
        stats = stats or empty_stats
        log_lik = log_lik or (cut_to_sizes(empty_log_lik, dims, sizes, 2) if sizes else empty_log_lik)
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
        means = {k: np.asarray(v) / run.kept for k, v in fetch(run.acc).items()}
        if run.plan is not None:
            means = run.plan.means(means)
    if sizes is not None:
        posterior, stats, warm_posterior, warm_stats = (
            cut_to_sizes(x, kernel.dims, sizes, 2) for x in (posterior, stats, warm_posterior, warm_stats))
        means = cut_to_sizes(means, kernel.dims, sizes, 1) if means is not None else None
    idata = to_inference_data(
        posterior,
        sample_stats=stats,
        warmup_posterior=warm_posterior if s.save_warmup else None,
        warmup_sample_stats=warm_stats if s.save_warmup else None,
        dims=dims,
        coords=dict(kernel.coords(run.data)) if kernel.coords is not None else {},
        attrs=run_attrs,
        posterior_mean=means,
        log_likelihood=log_lik,
        warmup_log_likelihood=warm_log_lik if s.save_warmup else None,
        observed_data=_observed(kernel, run.data) if log_lik else None,
    )
    idata.add_groups({STATE_GROUP: _state_dataset(run)})
    return idata


def cut_to_sizes(arrays: dict, dims: dict, sizes, lead: int) -> dict:
    """``arrays`` (each with ``lead`` axes before its dims) cut to ``sizes`` along every dim they
    exceed it: the results of data padded to bucket sizes, without the padding.

    >>> cut_to_sizes({"x": np.zeros((2, 3, 8))}, {"x": ("document",)}, {"document": 5}, 2)["x"].shape
    (2, 3, 5)
    """
    out = {}
    for name, a in arrays.items():
        names = tuple(dims.get(name, ()))
        index = [slice(None)] * np.ndim(a)
        for axis, dim in enumerate(names):
            if lead + axis < np.ndim(a) and dim in sizes and a.shape[lead + axis] > sizes[dim]:
                index[lead + axis] = slice(0, int(sizes[dim]))
        out[name] = a[tuple(index)] if any(i != slice(None) for i in index) else a
    return out


def _observed(kernel: Kernel, data) -> dict | None:
    """The kernel's ``observed_data(data)``: ``{name: (dims, numpy array)}``, or None."""
    if kernel.observed_data is None:
        return None
    return {k: (tuple(d), np.asarray(v)) for k, (d, v) in kernel.observed_data(data).items()}


def _no_draws(run: Run) -> tuple[dict, dict, dict]:
    """``(posterior, stats, log_likelihood)`` with zero draws per chain, shaped as the kernel records
    them (on abstract shapes: nothing is computed)."""
    shapes = jax.eval_shape(records_fn(run.kernel.record, run.kernel.log_joint,
                                       recorded_log_likelihood(run.kernel, run.settings)), run.state, run.data)

    def empty(sd):
        return np.zeros((sd.shape[0], 0, *sd.shape[1:]), sd.dtype)

    posterior = {k: empty(v) for k, v in shapes.get("posterior", {}).items()}
    stats = {"lp": empty(shapes["lp"])} if "lp" in shapes else {}
    log_lik = {k: empty(v) for k, v in shapes.get("log_likelihood", {}).items()}
    return posterior, stats, log_lik


#: the group of a result that holds what :func:`resume` needs
STATE_GROUP = "sampler_state"
#: groups a model's postprocess may rewrite (aligning components); their raw
#: draws are kept as ``raw_<group>`` by :func:`keep_raw_draws` where they differ
DRAW_GROUPS = ("posterior", "sample_stats", "warmup_posterior", "warmup_sample_stats")


def leaf_names(tree) -> list[str]:
    """A name per leaf of a pytree: the fields along its path joined by ``__``.

    Parameters
    ----------
    tree : pytree
        A NamedTuple, dict, list or nesting of them.

    Returns
    -------
    list of str
        One name per leaf, in ``jax.tree_util`` order (``"value"`` for a bare leaf).

    Examples
    --------
    >>> leaf_names({"a": 1, "b": (2, 3)})
    ['a', 'b__0', 'b__1']
    """
    def part(k) -> str:
        for attr in ("name", "key", "idx"):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)

    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    return ["__".join(part(k) for k in path) or "value" for path, _ in paths]


def _state_dataset(run: Run):
    import xarray as xr

    variables = {}
    for prefix, tree in (("state", run.state), ("acc", run.acc)):
        leaves = fetch(jax.tree_util.tree_leaves(tree))
        for name, leaf in zip(leaf_names(tree), leaves):
            arr = np.asarray(leaf)
            var = f"{prefix}__{name}"
            variables[var] = (("chain", *[f"{var}_dim_{i}" for i in range(arr.ndim - 1)]), arr)
    keys = np.asarray(fetch(jax.random.key_data(run.run_keys)))
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
        "float_dtype": str(working_dtype()),  # resume refuses another precision (JAX_ENABLE_X64)
        "note": "the last state of every chain, its run key and the running sums of the "
                "per-chain means: what gibbsjax.resume needs to continue this run",
    }
    return xr.Dataset(variables, attrs=attrs)


def keep_raw_draws(processed, raw):
    """Keep copies of the draws as the sampler made them beside their postprocessed form.

    Unchanged groups are not copied.

    Parameters
    ----------
    processed : arviz.InferenceData
        The postprocessed result (e.g. components relabelled); changed in place.
    raw : arviz.InferenceData
        The result as :func:`sample` returned it.

    Returns
    -------
    arviz.InferenceData
        ``processed``, with copies ``raw_<group>`` of the groups of ``raw`` that the
        postprocess changed, so :func:`resume` can continue from the draws as the
        sampler made them.

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> from gibbsjax.run import sample
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
