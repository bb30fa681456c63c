"""What a model module exports next to its kernels: its :class:`ModelSpec`.

A spec says how ``gibbsjax run`` builds the model's data from a config's
``[data]`` table, what to do with a finished run (align components, compute
estimates: ``postprocess``) and what to print about it (``report``), as
NumPyro keeps ``postprocess_fn`` with its kernel.  :mod:`gibbsjax.config` only
looks specs up by name; it holds no model-specific code.

Every model module has ``SPECS``, a tuple of its specs; a user's own model is
registered with :func:`gibbsjax.config.register_model`:

>>> from gibbsjax.spec import ModelSpec
>>> from gibbsjax.models import normal
>>> spec = ModelSpec("my.normal", normal.semiconjugate,
...                  make_data=lambda section, base_dir: normal.data(section["values"]))
>>> spec.name
'my.normal'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["ModelSpec", "ConfigError", "DataWithExtras", "replace_group"]


class ConfigError(ValueError):
    """A config file or table that cannot be run; the message names the key.

    Examples
    --------
    >>> from gibbsjax.config import parse_config
    >>> from gibbsjax.spec import ConfigError
    >>> try:
    ...     parse_config({'model': {'name': 'no.such_model'}, 'sampler': {}})
    ... except ConfigError as error:
    ...     print(isinstance(error, ValueError))
    True
    """


class DataWithExtras(NamedTuple):
    """What a ``make_data`` may return besides the bare data pytree: ``extras``
    (host-side things the sampler does not need — a vocabulary, a held-out
    corpus) handed to the model's ``postprocess`` as its ``extras`` argument.

    Examples
    --------
    >>> from gibbsjax.spec import DataWithExtras
    >>> made = DataWithExtras(data=[1.0, 2.0], extras={'note': 'kept for the report'})
    >>> made.extras['note']
    'kept for the report'
    """

    data: Any
    extras: dict


@dataclass(frozen=True)
class ModelSpec:
    """A model as ``gibbsjax run`` sees it; one fixed signature per hook.

    * ``name``: the registry name, ``"<module>.<factory>"`` (e.g.
      ``"lda.partially_collapsed"``); the kernel's ``name`` is the same.
    * ``factory(**hyperparameters) -> Kernel``: its keyword arguments are the
      keys a config's ``[model]`` table may set.
    * ``make_data(section, base_dir) -> data | DataWithExtras``: the ``[data]``
      table (a dict) to validated data, relative paths resolved against
      ``base_dir``; ``None`` for models without data.  Raises ``ValueError``
      (e.g. :class:`ConfigError`) naming the bad key.
    * ``postprocess(idata, kernel, data, extras) -> idata``: after sampling;
      everything ``report`` needs ends up inside the returned InferenceData,
      so a saved file can be reported on later.
    * ``report(idata) -> str``: text printed after the summary table by
      ``gibbsjax run`` and ``gibbsjax summary``.
    * ``details(idata) -> str``: for a model whose ``report`` leads with the answer
      (LDA: the stable topics): the per-chain and per-component tables.  With it,
      ``gibbsjax run`` prints the report alone, and ``gibbsjax run --details`` and
      ``gibbsjax summary`` add the summary table and these tables after it.
    * ``summary_vars``: variables of the summary table (default: all + ``lp``).
    * ``description``: one line for ``gibbsjax models``.
    * ``sbc_case() -> (kernel, data, test_functions)``: a small example of the model for
      simulation-based calibration (:func:`gibbsjax.testing.sbc`): a kernel with
      ``sample_prior`` and ``simulate_data``, data whose shapes the simulations keep, and the
      test functions to rank (``None``: every recorded value; a model with labels ranks
      label-invariant ones).  The test suite calibrates every registered model that has one
      (``tests/test_sbc.py``), so a new model brings its own check with it.

    Examples
    --------
    >>> from gibbsjax.models import normal
    >>> from gibbsjax.spec import ModelSpec
    >>> spec = ModelSpec('mine.bivariate', normal.bivariate, description='a bivariate normal')
    >>> spec.factory(rho=0.5).name
    'normal.bivariate'
    """

    name: str
    factory: Callable[..., Any]
    make_data: Callable[[Mapping[str, Any], Path], Any] | None = None
    postprocess: Callable[[Any, Any, Any, dict], Any] | None = None
    report: Callable[[Any], str] | None = None
    summary_vars: tuple[str, ...] | None = None
    description: str = ""
    sbc_case: Callable[[], tuple[Any, Any, Any]] | None = None
    details: Callable[[Any], str] | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"model name must be a non-empty string, got {self.name!r}")
        for hook in ("factory", "make_data", "postprocess", "report", "sbc_case", "details"):
            value = getattr(self, hook)
            if value is not None and not callable(value):
                raise ValueError(f"{hook} must be callable{'' if hook == 'factory' else ' or None'}, got {value!r}")
        if self.factory is None:
            raise ValueError("factory must be callable, got None")
        if self.summary_vars is not None:
            object.__setattr__(self, "summary_vars", tuple(self.summary_vars))


def replace_group(idata, name: str, dataset) -> Any:
    """Put ``dataset`` into ``idata`` as group ``name``, replacing one already there.

    >>> import numpy as np, xarray as xr
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"m": np.zeros((2, 3))})
    >>> idata = replace_group(idata, "estimates", xr.Dataset({"x": ("k", [1.0])}))
    >>> idata = replace_group(idata, "estimates", xr.Dataset({"x": ("k", [2.0])}))
    >>> float(idata.estimates["x"][0])
    2.0
    """
    if name in idata.groups():
        del idata[name]
    idata.add_groups({name: dataset})
    return idata
