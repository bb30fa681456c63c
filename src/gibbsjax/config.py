"""Ready-to-run jobs as TOML files: load, validate, run.

A config names a model from the registry, its hyperparameters, where its data
comes from, and the sampler settings.  ``gibbsjax run CONFIG.toml`` runs one;
from Python::

    from gibbsjax.config import load_config, run_config
    idata = run_config(load_config("configs/body-temperature.toml"))

Format
------
.. code-block:: toml

    [model]
    name = "normal.semiconjugate"     # a registered model (see below)
    mu0 = 98.6                        # the other keys are the factory's hyperparameters;
    sigma0 = 0.5                      # any left out take the factory's defaults
    a0 = 0.001
    b0 = 0.001

    [data]                            # one of dataset / file / values:
    dataset = "body_temperature"      # a data set shipped in gibbsjax.datasets, with column
    column = "temperature_f"
    # file = "my.csv"                 # a CSV file with a header row, path relative to the
    #                                 # config file; column may be left out if it has one column
    # values = [98.1, 98.6, 97.9]     # inline values

    [sampler]                         # every key optional; defaults as in gibbsjax.run.sample
    seed = 2026                       # left out: a fresh seed, recorded in the result's attrs
    num_chains = 4
    num_warmup = 1000                 # sweeps discarded per chain (burn-in)
    num_draws = 2000                  # draws kept per chain
    thin = 1                          # sweeps per kept draw
    # chunk_size = 100                # draws per compiled chunk (progress / Ctrl-C granularity)
    # save_warmup = false             # keep warm-up sweeps in a warmup_posterior group

    [sampler.init]                    # optional starting values, one per chain, for
    mu = [97.0, 99.5, 97.0, 99.5]     # fields of the model's state (others start at random)

    [output]                          # optional
    path = "body-temperature.nc"      # relative to the current directory; default: the
                                      # config file's name with .nc; `--out` overrides

Sections ``[model]`` and ``[sampler]`` are required; ``[data]`` is required by
models that take data and refused by those that don't (``normal.bivariate``).
Every mistake (an unknown model, section or key, a wrong type, a bad
hyperparameter such as ``sigma0 = -1``, a missing column) raises
:class:`ConfigError`, a ``ValueError`` whose message names the offending key,
before anything is compiled.

Models
------
* ``normal.bivariate``: :func:`gibbsjax.models.normal.bivariate` (``rho``); no ``[data]``.
* ``normal.semiconjugate``: :func:`gibbsjax.models.normal.semiconjugate` (``mu0``,
  ``sigma0``, ``a0``, ``b0``); ``[data]`` gives one numeric column.

New models register themselves with :func:`register_model`::

    register_model("lda.collapsed", "gibbsjax.models.lda:collapsed", make_lda_data)

where ``make_data(section, base_dir)`` turns the ``[data]`` table (a dict) into
the model's validated data, resolving relative paths against ``base_dir`` (the
config file's folder); :func:`read_column` does this for a single numeric column.
A factory given as ``"module:attribute"`` is imported only when used, so the
registry stays cheap to import.
"""

from __future__ import annotations

import importlib
import inspect
import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Config",
    "ConfigError",
    "ModelEntry",
    "SamplerSettings",
    "MODELS",
    "register_model",
    "known_models",
    "read_column",
    "load_config",
    "parse_config",
    "run_config",
    "model_entry_for",
]


class ConfigError(ValueError):
    """A config file or table that cannot be run; the message names the key."""


# ============================================================================ registry
@dataclass(frozen=True)
class ModelEntry:
    """A registered model: its factory and how to build its data from ``[data]``."""

    name: str
    factory: Callable[..., Any] | str
    make_data: Callable[[Mapping[str, Any], Path], Any] | None = None
    description: str = ""
    #: ``postprocess(idata, kernel, data) -> idata``: after sampling (e.g. align
    #: components across chains, add per-document outputs, accuracy in attrs);
    #: everything ``report`` needs must end up inside the returned InferenceData
    postprocess: Callable[[Any, Any, Any], Any] | None = None
    #: ``report(idata) -> str``: model-specific text printed after the summary
    #: table by ``gibbsjax run`` and ``gibbsjax summary`` (top words, accuracy ...)
    report: Callable[[Any], str] | None = None
    #: variables for the summary table (default: all posterior variables + lp)
    summary_vars: tuple[str, ...] | None = None

    def resolve_factory(self) -> Callable[..., Any]:
        """The factory callable (imports ``"module:attribute"`` factories)."""
        if callable(self.factory):
            return self.factory
        module, _, attr = self.factory.partition(":")
        return getattr(importlib.import_module(module), attr)


#: the model registry, name -> :class:`ModelEntry`; add to it with :func:`register_model`
MODELS: dict[str, ModelEntry] = {}


def register_model(
    name: str,
    factory: Callable[..., Any] | str,
    make_data: Callable[[Mapping[str, Any], Path], Any] | None = None,
    *,
    description: str = "",
    replace: bool = False,
    postprocess: Callable[[Any, Any, Any], Any] | None = None,
    report: Callable[[Any], str] | None = None,
    summary_vars: tuple[str, ...] | None = None,
) -> ModelEntry:
    """Make a model available to configs as ``[model] name = "<name>"``.

    ``factory(**hyperparameters)`` returns a :class:`gibbsjax.Kernel`; it may
    be given as ``"package.module:function"`` to import it lazily.  Its keyword
    arguments are the hyperparameters a config may set.  ``make_data(section,
    base_dir)`` builds the model's data from the ``[data]`` table (``None`` for
    models without data); it should raise ``ValueError`` naming the bad key.
    ``postprocess``, ``report`` and ``summary_vars``: see :class:`ModelEntry`.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"model name must be a non-empty string, got {name!r}")
    if not (callable(factory) or (isinstance(factory, str) and ":" in factory)):
        raise ValueError(f"factory must be callable or 'module:attribute', got {factory!r}")
    if make_data is not None and not callable(make_data):
        raise ValueError(f"make_data must be callable or None, got {make_data!r}")
    if name in MODELS and not replace:
        raise ValueError(f"model {name!r} is already registered (pass replace=True to override)")
    for hook_name, hook in (("postprocess", postprocess), ("report", report)):
        if hook is not None and not callable(hook):
            raise ValueError(f"{hook_name} must be callable or None, got {hook!r}")
    entry = ModelEntry(
        name, factory, make_data, description, postprocess, report,
        None if summary_vars is None else tuple(summary_vars),
    )
    MODELS[name] = entry
    return entry


def known_models() -> list[str]:
    """Names of the registered models."""
    return sorted(MODELS)


# ============================================================================ data helpers
_COLUMN_KEYS = ("dataset", "file", "values", "column")


def read_column(section: Mapping[str, Any], base_dir: Path) -> np.ndarray:
    """One numeric column from a ``[data]`` table with one of ``dataset``, ``file``, ``values``.

    * ``dataset = "name"`` and ``column = "col"``: a data set shipped in
      :mod:`gibbsjax.datasets`;
    * ``file = "path.csv"`` (relative to ``base_dir``) and ``column``: a CSV file
      with a header row (``column`` may be left out when the file has one column);
    * ``values = [...]``: inline numbers.

    >>> read_column({"values": [1, 2.5]}, Path("."))
    array([1. , 2.5])
    """
    unknown = [k for k in section if k not in _COLUMN_KEYS]
    if unknown:
        raise ConfigError(
            f"[data] unknown key {unknown[0]!r}; expected one of dataset, file, values (and column)"
        )
    sources = [k for k in ("dataset", "file", "values") if k in section]
    if len(sources) != 1:
        found = f"found {', '.join(sources)}" if sources else "found none"
        raise ConfigError(f"[data] needs exactly one of dataset, file, values ({found})")
    source = sources[0]
    column = section.get("column")
    if column is not None and not isinstance(column, str):
        raise ConfigError(f"[data] column must be a string, got {column!r}")

    if source == "values":
        if column is not None:
            raise ConfigError("[data] column goes with dataset or file, not with values")
        values = section["values"]
        if not isinstance(values, list) or not all(_is_number(v) for v in values):
            raise ConfigError("[data] values must be a list of numbers")
        return np.asarray(values, dtype=np.float64)

    if source == "dataset":
        name = section["dataset"]
        if not isinstance(name, str):
            raise ConfigError(f"[data] dataset must be a string, got {name!r}")
        from gibbsjax import datasets

        if name not in datasets.available():
            raise ConfigError(
                f"[data] unknown dataset {name!r}; available: {', '.join(datasets.available())}"
            )
        table = datasets.load(name)
        where = f"dataset {name!r}"
    else:
        name = section["file"]
        if not isinstance(name, str):
            raise ConfigError(f"[data] file must be a string (a path), got {name!r}")
        path = Path(name).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        table = _read_csv(path)
        where = f"file {str(path)!r}"

    if column is None:
        if len(table) != 1:
            raise ConfigError(
                f"[data] column is required: {where} has columns {', '.join(table)}"
            )
        column = next(iter(table))
    if column not in table:
        raise ConfigError(
            f"[data] column {column!r} not in {where}; columns: {', '.join(table)}"
        )
    return np.asarray(table[column], dtype=np.float64)


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    import csv

    try:
        with path.open("r", encoding="utf-8", newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    except FileNotFoundError:
        raise ConfigError(f"[data] file not found: {path}") from None
    except OSError as e:
        raise ConfigError(f"[data] cannot read {path}: {e.strerror or e}") from None
    if not rows:
        raise ConfigError(f"[data] file {path} is empty")
    header, body = [h.strip() for h in rows[0]], rows[1:]
    columns: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        try:
            columns[name] = np.array([float(r[j]) for r in body], dtype=np.float64)
        except (ValueError, IndexError):
            raise ConfigError(
                f"[data] file {path}: column {name!r} has a missing or non-numeric value"
            ) from None
    return columns


def _normal_data(section: Mapping[str, Any], base_dir: Path):
    from gibbsjax.models import normal

    return normal.data(read_column(section, base_dir))


register_model(
    "normal.bivariate",
    "gibbsjax.models.normal:bivariate",
    None,
    description="bivariate normal with correlation rho (seed 003, Example 1); no data",
)
register_model(
    "normal.semiconjugate",
    "gibbsjax.models.normal:semiconjugate",
    _normal_data,
    description="normal with unknown mean and variance, semi-conjugate priors (seed 003, Example 2)",
)


# ============================================================================ the config structure
@dataclass(frozen=True)
class SamplerSettings:
    """The ``[sampler]`` table; keyword arguments of :func:`gibbsjax.run.sample`."""

    seed: int | None = None
    num_chains: int = 4
    num_warmup: int = 1000
    num_draws: int = 1000
    thin: int = 1
    chunk_size: int | None = None
    save_warmup: bool = False
    init: dict[str, list] | None = None


_SAMPLER_INTS = {"seed": 0, "num_chains": 1, "num_warmup": 0, "num_draws": 1, "thin": 1, "chunk_size": 1}
_SAMPLER_KEYS = (*_SAMPLER_INTS, "save_warmup", "init")
_SECTIONS = ("model", "data", "sampler", "output")


@dataclass(frozen=True)
class Config:
    """A validated config: what to sample, from what data, how, and where to save it.

    ``kernel`` and ``data`` are built (and so validated) by :func:`parse_config`.
    """

    model: str
    hyperparameters: dict[str, Any]
    sampler: SamplerSettings
    data_section: dict[str, Any] | None = None
    output: str | None = None
    path: Path | None = None
    text: str | None = field(default=None, repr=False)
    kernel: Any = field(default=None, repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)

    def output_path(self, override: str | Path | None = None) -> Path:
        """Where the result goes: ``override``, else ``[output] path``, else
        ``<config name>.nc`` (relative paths: to the current directory)."""
        if override is not None:
            return Path(override)
        if self.output is not None:
            return Path(self.output)
        stem = self.path.stem if self.path is not None else self.model.replace(".", "-")
        return Path(f"{stem}.nc")

    def attrs(self) -> dict[str, str | int | float]:
        """What a result records about its config (netCDF-safe: strings and numbers)."""
        out: dict[str, str | int | float] = {"model": self.model}
        for k, v in self.hyperparameters.items():
            out[f"model_{k}"] = _attr_value(v)
        out["hyperparameters"] = json.dumps(self.hyperparameters, sort_keys=True)
        if self.data_section is not None:
            out["data"] = json.dumps(_describe_data(self.data_section), sort_keys=True)
        if self.path is not None:
            out["config_file"] = str(self.path)
        if self.text is not None:
            out["config_toml"] = self.text
        return out


def _attr_value(v: Any) -> str | int | float:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float, str)):
        return v
    return json.dumps(v)


def _describe_data(section: Mapping[str, Any]) -> dict[str, Any]:
    """The [data] table, with long inline value lists shortened."""
    out = dict(section)
    if isinstance(out.get("values"), list) and len(out["values"]) > 20:
        out["values"] = f"<{len(out['values'])} inline values>"
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _table(doc: Mapping[str, Any], name: str, *, required: bool) -> dict[str, Any] | None:
    if name not in doc:
        if required:
            raise ConfigError(f"missing required section [{name}]")
        return None
    value = doc[name]
    if not isinstance(value, dict):
        raise ConfigError(f"[{name}] must be a table (a [{name}] section), got {type(value).__name__}")
    return dict(value)


def _parse_sampler(section: dict[str, Any]) -> SamplerSettings:
    for key in section:
        if key not in _SAMPLER_KEYS:
            raise ConfigError(f"[sampler] unknown key {key!r}; known keys: {', '.join(_SAMPLER_KEYS)}")
    kwargs: dict[str, Any] = {}
    for key, minimum in _SAMPLER_INTS.items():
        if key in section:
            v = section[key]
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"[sampler] {key} must be an integer, got {v!r}")
            if v < minimum:
                raise ConfigError(f"[sampler] {key} must be >= {minimum}, got {v}")
            kwargs[key] = v
    if "save_warmup" in section:
        v = section["save_warmup"]
        if not isinstance(v, bool):
            raise ConfigError(f"[sampler] save_warmup must be true or false, got {v!r}")
        kwargs["save_warmup"] = v
    settings = SamplerSettings(**kwargs)
    if "init" in section:
        init = section["init"]
        if not isinstance(init, dict):
            raise ConfigError("[sampler] init must be a table ([sampler.init]) of field = [one value per chain]")
        for name, values in init.items():
            if not isinstance(values, list):
                raise ConfigError(
                    f"[sampler.init] {name} must be a list with one value per chain, got {values!r}"
                )
            if len(values) != settings.num_chains:
                raise ConfigError(
                    f"[sampler.init] {name} has {len(values)} values, but num_chains = "
                    f"{settings.num_chains} (one starting value per chain)"
                )
            if not _all_numbers(values):
                raise ConfigError(f"[sampler.init] {name} must hold numbers only")
        settings = SamplerSettings(**{**settings.__dict__, "init": init})
    return settings


def _all_numbers(values: Any) -> bool:
    if isinstance(values, list):
        return all(_all_numbers(v) for v in values)
    return _is_number(values)


def _check_hyperparameters(entry: ModelEntry, factory: Callable, hyper: dict[str, Any]) -> None:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins etc.: let the factory complain
        return
    params = {
        n: p
        for n, p in sig.parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for key, value in hyper.items():
        if key not in params:
            if takes_any:
                continue
            known = ", ".join(params) or "no hyperparameters"
            raise ConfigError(f"[model] unknown key {key!r} for {entry.name}; it takes: {known}")
        default = params[key].default
        if _is_number(default) and not _is_number(value):
            raise ConfigError(f"[model] {key} must be a number, got {value!r}")
    for name, p in params.items():
        if p.default is p.empty and name not in hyper:
            raise ConfigError(f"[model] missing hyperparameter {name!r} for {entry.name}")


def parse_config(
    doc: Mapping[str, Any],
    *,
    base_dir: str | Path = ".",
    path: str | Path | None = None,
    text: str | None = None,
) -> Config:
    """Validate a config already parsed into a dict (e.g. by ``tomllib``).

    Builds the kernel and the data, so bad hyperparameters or data fail here,
    with a :class:`ConfigError` / ``ValueError`` naming the key.
    """
    if not isinstance(doc, Mapping):
        raise ConfigError(f"a config must be a table, got {type(doc).__name__}")
    for key in doc:
        if key not in _SECTIONS:
            raise ConfigError(f"unknown section [{key}]; sections: {', '.join(_SECTIONS)}")
    model = _table(doc, "model", required=True)
    sampler_table = _table(doc, "sampler", required=True)
    data_section = _table(doc, "data", required=False)
    output_table = _table(doc, "output", required=False)

    name = model.pop("name", None)
    if name is None:
        raise ConfigError(f"[model] name is required; known models: {', '.join(known_models())}")
    if not isinstance(name, str):
        raise ConfigError(f"[model] name must be a string, got {name!r}")
    if name not in MODELS:
        raise ConfigError(f"[model] unknown model name {name!r}; known models: {', '.join(known_models())}")
    entry = MODELS[name]
    hyper = model

    sampler = _parse_sampler(sampler_table)

    output = None
    if output_table is not None:
        for key in output_table:
            if key != "path":
                raise ConfigError(f"[output] unknown key {key!r}; known keys: path")
        output = output_table.get("path")
        if output is not None and (not isinstance(output, str) or not output):
            raise ConfigError(f"[output] path must be a non-empty string, got {output!r}")

    base = Path(base_dir)
    if entry.make_data is None:
        if data_section is not None:
            raise ConfigError(f"[data] model {name} takes no data: remove the [data] section")
    elif data_section is None:
        raise ConfigError(f"missing required section [data] (model {name} needs data)")

    factory = entry.resolve_factory()
    _check_hyperparameters(entry, factory, hyper)
    try:
        kernel = factory(**hyper)
    except ValueError as e:
        raise ConfigError(f"[model] {e}") from e
    data = None
    if entry.make_data is not None:
        try:
            data = entry.make_data(data_section, base)
        except ConfigError:
            raise
        except ValueError as e:
            raise ConfigError(f"[data] {e}") from e

    return Config(
        model=name,
        hyperparameters=hyper,
        sampler=sampler,
        data_section=data_section,
        output=output,
        path=Path(path) if path is not None else None,
        text=text,
        kernel=kernel,
        data=data,
    )


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config file (see the module docs for the format).

    Raises :class:`ConfigError` (a ``ValueError``) for a missing or unreadable
    file, a TOML syntax error or any invalid setting.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"config path is a directory, not a file: {path}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror or e}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    return parse_config(doc, base_dir=path.parent, path=path, text=text)


# ============================================================================ running
def run_config(
    config: Config,
    *,
    seed: int | None = None,
    chunk_size: int | None = None,
    progress: bool = True,
):
    """Run a loaded config with :func:`gibbsjax.run.sample`; returns InferenceData.

    ``seed`` and ``chunk_size`` override the config's.  The result's ``attrs``
    record the model name, its hyperparameters (``model_<name>``) and the config
    file, besides what the runner records (seed, settings, ``interrupted``).
    """
    from gibbsjax.run import sample

    s = config.sampler
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    idata = sample(
        config.kernel,
        config.data,
        seed=s.seed if seed is None else seed,
        num_chains=s.num_chains,
        num_warmup=s.num_warmup,
        num_draws=s.num_draws,
        thin=s.thin,
        init=s.init,
        progress=progress,
        chunk_size=s.chunk_size if chunk_size is None else chunk_size,
        save_warmup=s.save_warmup,
        attrs=config.attrs(),
    )
    entry = MODELS[config.model]
    if entry.postprocess is not None and int(idata.posterior.sizes.get("draw", 0)) > 0:
        idata = entry.postprocess(idata, config.kernel, config.data)
    return idata


def model_entry_for(idata) -> ModelEntry | None:
    """The registry entry of the model a result was produced by (``attrs["model"]``)."""
    name = str(getattr(idata, "attrs", {}).get("model", ""))
    return MODELS.get(name)

