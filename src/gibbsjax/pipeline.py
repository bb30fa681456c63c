"""The fit pipeline of every front door: ``gibbsjax run`` and ``gibbsjax resume``
(:func:`gibbsjax.config.run_config`, :func:`gibbsjax.config.resume_result`) and
:class:`gibbsjax.LDA` (``fit``, ``extend``).

A :class:`Job` is the one settings object they share: the model's spec, the kernel
and data built for it, the extras its postprocess reads, the sampler settings and
the attributes the result records (:func:`model_attrs`).  Then

* :func:`sample` -- the raw draws (:func:`gibbsjax.run.sample`);
* :func:`resume` -- more raw draws of a result of the job (:func:`gibbsjax.run.resume`);
* :func:`postprocess` -- the spec's postprocess, keeping copies of the draws it
  relabelled (:func:`gibbsjax.run.keep_raw_draws`) so the result can be resumed;
* :func:`fit` -- :func:`sample`, then :func:`postprocess`.

How a front door builds its job is its own (a config file through its spec's
``factory`` and ``make_data`` in :func:`gibbsjax.config.parse_config`; the estimator
from its parameters and a corpus); what happens to a job is the same for all.

>>> from gibbsjax.config import get_spec
>>> from gibbsjax.models import normal
>>> from gibbsjax.run import Settings
>>> spec = get_spec("normal.bivariate")
>>> job = Job(spec, spec.factory(rho=0.5), None, Settings(num_draws=10, seed=0, progress=False),
...           attrs=model_attrs(spec.name, {"rho": 0.5}))
>>> idata = fit(job)
>>> idata.attrs["model"], idata.attrs["model_rho"], idata.posterior.sizes["draw"]
('normal.bivariate', 0.5, 10)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gibbsjax import run
from gibbsjax.diagnostics import copy_sharing_arrays
from gibbsjax.run import Settings
from gibbsjax.spec import ModelSpec

__all__ = ["Job", "attr_value", "model_attrs", "sample", "resume", "postprocess", "fit"]


@dataclass(frozen=True)
class Job:
    """What a fit runs: ``spec`` (whose ``postprocess`` finishes the run), ``kernel``
    and ``data`` (built for it), ``settings`` (a :class:`gibbsjax.run.Settings`, used
    by :func:`sample`; None for a job that is only resumed), ``extras`` (handed to
    the postprocess) and ``attrs`` (recorded in the result, e.g. :func:`model_attrs`).

    Examples
    --------
    >>> from gibbsjax.pipeline import Job
    >>> [f for f in Job.__dataclass_fields__]
    ['spec', 'kernel', 'data', 'settings', 'extras', 'attrs']
    """

    spec: ModelSpec
    kernel: Any
    data: Any
    settings: Settings | None
    extras: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)


def attr_value(v: Any) -> str | int | float:
    """``v`` as a netCDF attribute: numbers and strings as they are, booleans as 0/1,
    anything else as JSON.

    >>> attr_value(True), attr_value(0.5), attr_value((1.0, 2.0))
    (1, 0.5, '[1.0, 2.0]')
    """
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float, str)):
        return v
    return json.dumps(v, default=str)


def model_attrs(model: str, hyperparameters: Mapping[str, Any]) -> dict[str, str | int | float]:
    """What a result records about its model: ``model`` (the registry name), one
    ``model_<name>`` per hyperparameter and all of them as JSON (``hyperparameters``).

    >>> model_attrs("lda.collapsed", {"K": 3, "alpha": 0.1})
    {'model': 'lda.collapsed', 'model_K': 3, 'model_alpha': 0.1, 'hyperparameters': '{"K": 3, "alpha": 0.1}'}
    """
    out: dict[str, str | int | float] = {"model": model}
    for k, v in hyperparameters.items():
        out[f"model_{k}"] = attr_value(v)
    out["hyperparameters"] = json.dumps(hyperparameters, sort_keys=True, default=str)
    return out


def sample(job: Job, *, preflight=None):
    """The raw draws of ``job``: :func:`gibbsjax.run.sample` with its settings and attributes
    (and its ``preflight``, a caller's check once the run's own have passed)."""
    return run.sample(job.kernel, job.data, settings=job.settings, attrs=job.attrs, preflight=preflight)


def resume(job: Job, idata, num_draws: int | None = None, *, progress: bool = True, chunk_size: int | None = None,
           until: str | None = None, max_draws: int | None = None, devices: int | None = None):
    """More raw draws of ``idata``, a result of ``job`` (:func:`gibbsjax.run.resume`:
    the draws continue bit-identically), without copies ``raw_<group>`` of an
    earlier postprocess."""
    raw = run.resume(idata, job.kernel, job.data, num_draws, progress=progress, chunk_size=chunk_size,
                     until=until, max_draws=max_draws, devices=devices)
    for group in [g for g in raw.groups() if g.startswith("raw_")]:
        del raw[group]
    return raw


def postprocess(job: Job, raw):
    """The spec's postprocess of raw draws (alignment, estimates), keeping copies of
    the draws it relabelled (``raw_<group>``, see :func:`gibbsjax.run.keep_raw_draws`)
    so the result can be resumed.  A run without draws, or of a model without a
    postprocess, is returned as it is."""
    if job.spec.postprocess is None or int(raw.posterior.sizes.get("draw", 0)) == 0:
        return raw
    # the postprocess works on a copy sharing raw's arrays (it replaces variables and groups, never
    # writes into an array): no copy of the gigabytes a large LDA result holds, raw stays as it was
    return run.keep_raw_draws(job.spec.postprocess(copy_sharing_arrays(raw), job.kernel, job.data, job.extras), raw)


def fit(job: Job):
    """:func:`sample`, then :func:`postprocess`.  A run interrupted before its first
    draw (during warm-up) has nothing to fit: ``KeyboardInterrupt``, as Python code
    interrupted by Ctrl-C expects (:func:`gibbsjax.sample` returns the warm-up state
    instead, for :func:`gibbsjax.resume`)."""
    raw = sample(job)
    if int(raw.attrs.get("interrupted", 0)) and int(raw.posterior.sizes.get("draw", 0)) == 0:
        raise KeyboardInterrupt("interrupted during warm-up, before the first draw: nothing fitted")
    return postprocess(job, raw)
