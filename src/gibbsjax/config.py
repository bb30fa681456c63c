"""Ready-to-run jobs as TOML files: the model registry, parsing and running.

A config names a registered model, its hyperparameters, where its data comes
from and the sampler settings.  ``gibbsjax run CONFIG.toml`` runs one; from
Python::

    from gibbsjax.config import load_config, run_config
    idata = run_config(load_config("configs/body-temperature.toml"))

This module holds no model-specific code: every module of :mod:`gibbsjax.specs` exports
its models' :class:`~gibbsjax.spec.ModelSpec` values in ``SPECS`` (how to build the data
from ``[data]``, the postprocess and the report); the registry below maps names to those
modules and imports a module only when its model is used.

Format
------
.. code-block:: toml

    [model]
    name = "normal.semiconjugate"     # a registered model: see known_models()
    mu0 = 98.6                        # the other keys are the factory's hyperparameters;
    sigma0 = 0.5                      # any left out take the factory's defaults
    a0 = 0.001
    b0 = 0.001

    [data]                            # the model's own keys (its spec's make_data), e.g.
    dataset = "body_temperature"      # a table shipped in gibbsjax.datasets,
    column = "temperature_f"
    # file = "my.csv"                 # or a CSV file (path relative to the config file),
    # values = [98.1, 98.6, 97.9]     # or inline values

    [sampler]                         # every key optional; the fields of gibbsjax.run.Settings
    seed = 2026                       # left out: a fresh seed, recorded in the result's attrs
    num_chains = 4
    num_warmup = 1000                 # sweeps discarded per chain (burn-in)
    num_draws = 2000                  # draws kept per chain
    thin = 1                          # sweeps per kept draw
    # chunk_size = 100                # draws per compiled chunk (progress / Ctrl-C granularity)
    # save_warmup = false             # keep warm-up sweeps in a warmup_posterior group
    # log_likelihood = true           # pointwise log likelihood (az.loo); false for very large data

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

Adding a model
--------------
Write its sampler in :mod:`gibbsjax.models`, its spec module (a ``SPECS`` tuple) in
:mod:`gibbsjax.specs`, and add one line to ``_BUILTIN`` below;
or, for a model of your own, publish its specs from your own package through the entry-point
group ``gibbsjax.models`` (:data:`ENTRY_POINT_GROUP`; the entry point names a module with a
``SPECS`` tuple, a :class:`ModelSpec` or an iterable of them), and ``gibbsjax run``,
``summary``, ``plot``, ``models`` and the SBC list see it with nothing edited in gibbsjax::

    # pyproject.toml of your package
    [project.entry-points."gibbsjax.models"]
    mymodels = "mypackage.specs"

or register its spec at run time::

    from gibbsjax.config import register_model
    from gibbsjax.spec import ModelSpec
    register_model(ModelSpec("my.model", my_factory, make_data=my_make_data))
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
import json
import tomllib
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gibbsjax import pipeline, reading
from gibbsjax.pipeline import Job, model_attrs
from gibbsjax.run import Settings
from gibbsjax.sources import all_numbers, is_number
from gibbsjax.spec import ConfigError, DataWithExtras, ModelSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "plugin_specs",
    "model_rows",
    "Config",
    "ConfigError",
    "DataWithExtras",
    "ModelSpec",
    "MODELS",
    "register_model",
    "known_models",
    "get_spec",
    "spec_for",
    "load_config",
    "parse_config",
    "run_config",
    "sample_config",
    "postprocess_result",
    "resume_result",
    "config_of",
    "hyperparameters_of",
]

# ============================================================================ registry
#: built-in models: registry name -> the module whose ``SPECS`` holds its spec
_BUILTIN = {
    "normal.bivariate": "gibbsjax.specs.normal",
    "normal.semiconjugate": "gibbsjax.specs.normal",
    "naive_bayes.dirichlet_multinomial": "gibbsjax.specs.naive_bayes",
    "naive_bayes.uncollapsed": "gibbsjax.specs.naive_bayes",
    "mixtures.unigrams": "gibbsjax.specs.mixtures",
    "mixtures.unigrams_collapsed": "gibbsjax.specs.mixtures",
    "mixtures.bernoulli": "gibbsjax.specs.mixtures",
    "gaussian_mixture.normal_gamma": "gibbsjax.specs.gaussian_mixture",
    "hmm.categorical": "gibbsjax.specs.hmm",
    "hmm.gaussian": "gibbsjax.specs.hmm",
    "bayes_net.dirichlet_cpts": "gibbsjax.specs.bayes_net",
    "eight_schools.hierarchical": "gibbsjax.specs.eight_schools",
    "lda.partially_collapsed": "gibbsjax.specs.lda",
    "lda.collapsed": "gibbsjax.specs.lda",
    "lda.uncollapsed": "gibbsjax.specs.lda",
}
#: names results of gibbsjax 0.1 carry; read (``gibbsjax summary``), never listed
_OLD_NAMES = {
    "lda": "lda.partially_collapsed",
    "naive_bayes": "naive_bayes.dirichlet_multinomial",
    "mixture.unigrams": "mixtures.unigrams",
    "mixture.unigrams_collapsed": "mixtures.unigrams_collapsed",
    "mixture.bernoulli": "mixtures.bernoulli",
    "gaussian_mixture": "gaussian_mixture.normal_gamma",
    "bayes_net": "bayes_net.dirichlet_cpts",
}


#: the entry-point group through which other packages publish their models' specs
ENTRY_POINT_GROUP = "gibbsjax.models"


def plugin_specs(entry_point) -> tuple[ModelSpec, ...]:
    """The specs an entry point of :data:`ENTRY_POINT_GROUP` publishes: the object it names is a
    module (or object) with a ``SPECS`` tuple, a :class:`ModelSpec`, or an iterable of them.

    Raises
    ------
    ValueError
        Naming the entry point, when it cannot be loaded or holds no specs.

    Examples
    --------
    >>> from importlib.metadata import EntryPoint
    >>> [s.name for s in plugin_specs(EntryPoint("normal", "gibbsjax.specs.normal", ENTRY_POINT_GROUP))]
    ['normal.bivariate', 'normal.semiconjugate']
    """
    where = f"entry point {entry_point.name!r} = {entry_point.value!r} of group {ENTRY_POINT_GROUP!r}"
    try:
        obj = entry_point.load()
    except Exception as err:  # noqa: BLE001 - any failure of another package's import is reported by name
        raise ValueError(f"{where} cannot be loaded: {type(err).__name__}: {err}") from None
    specs = getattr(obj, "SPECS", obj)
    specs = (specs,) if isinstance(specs, ModelSpec) else specs
    try:
        specs = tuple(specs)
    except TypeError:
        specs = ()
    if not specs or not all(isinstance(x, ModelSpec) for x in specs):
        raise ValueError(f"{where} must name a module with a SPECS tuple of gibbsjax.spec.ModelSpec, a "
                         f"ModelSpec or an iterable of them; got {type(obj).__name__}")
    return specs


class _Registry(Mapping):
    """Model name -> :class:`ModelSpec`; built-in modules are imported on first use, the models other
    packages publish (:data:`ENTRY_POINT_GROUP`) when a name is not built in."""

    def __init__(self):
        self._specs: dict[str, ModelSpec] = {}
        self._plugins: dict[str, ModelSpec] | None = None

    def plugins(self) -> dict[str, ModelSpec]:
        """The specs of every installed package's entry points (loaded once); one that cannot be loaded
        is left out with a warning naming it."""
        if self._plugins is None:
            found: dict[str, ModelSpec] = {}
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                try:
                    for spec in plugin_specs(ep):
                        found.setdefault(spec.name, spec)
                except ValueError as err:
                    warnings.warn(str(err), RuntimeWarning, stacklevel=3)
            self._plugins = found
        return self._plugins

    def __getitem__(self, name: str) -> ModelSpec:
        if name not in self._specs and name in _BUILTIN:
            module = importlib.import_module(_BUILTIN[name])
            for spec in module.SPECS:
                self._specs.setdefault(spec.name, spec)
        if name not in self._specs and name in self.plugins():
            return self.plugins()[name]
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(_BUILTIN) | set(self._specs) | set(self.plugins())))

    def __len__(self) -> int:
        return len(set(_BUILTIN) | set(self._specs) | set(self.plugins()))

    def __contains__(self, name: object) -> bool:
        return name in _BUILTIN or name in self._specs or name in self.plugins()

    def origin(self, name: str) -> str:
        """Where a model comes from: ``"built-in"``, ``"plugin"`` or ``"registered"`` (at run time)."""
        if name in _BUILTIN:
            return "built-in"
        return "registered" if name in self._specs else "plugin"

    def add(self, spec: ModelSpec, replace: bool) -> None:
        if spec.name in self and not replace:
            raise ValueError(f"model {spec.name!r} is already registered (pass replace=True to override)")
        self._specs[spec.name] = spec

    def remove(self, name: str) -> None:
        """Forget a model registered at run time (built-in models stay)."""
        if name in _BUILTIN:
            raise ValueError(f"{name!r} is a built-in model and cannot be removed")
        self._specs.pop(name, None)


#: the model registry, name -> :class:`ModelSpec`
MODELS = _Registry()


def register_model(spec: ModelSpec, *, replace: bool = False) -> ModelSpec:
    """Make a model available to configs as ``[model] name = "<spec.name>"``.

    >>> from gibbsjax.models import normal
    >>> spec = register_model(ModelSpec("doc.bivariate", normal.bivariate), replace=True)
    >>> "doc.bivariate" in known_models()
    True
    """
    if not isinstance(spec, ModelSpec):
        raise ValueError(f"register_model takes a gibbsjax.spec.ModelSpec, got {type(spec).__name__}")
    MODELS.add(spec, replace)
    return spec


def known_models() -> list[str]:
    """Names of the registered models."""
    return list(MODELS)


def model_rows() -> list[dict[str, str]]:
    """One row per registered model, for ``gibbsjax models``: its ``name``, ``origin`` (built-in,
    plugin or registered), ``description`` and ``parameters`` (the factory's keyword arguments, with
    their defaults: the keys of a config's ``[model]`` table).

    Examples
    --------
    >>> row = next(r for r in model_rows() if r["name"] == "normal.semiconjugate")
    >>> row["origin"], row["parameters"]
    ('built-in', 'mu0=98.6, sigma0=0.5, a0=0.001, b0=0.001')
    """
    rows = []
    for name in known_models():
        spec = MODELS[name]
        params = []
        for p in inspect.signature(spec.factory).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            params.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
        rows.append({"name": name, "origin": MODELS.origin(name), "description": spec.description,
                     "parameters": ", ".join(params)})
    return rows


def get_spec(name: str) -> ModelSpec:
    """The spec registered as ``name``; ``ValueError`` naming the known models otherwise.

    >>> get_spec("normal.semiconjugate").factory.__name__
    'semiconjugate'
    """
    name = _OLD_NAMES.get(name, name)
    if name not in MODELS:
        raise ConfigError(f"[model] unknown model name {name!r}; known models: {', '.join(known_models())}")
    return MODELS[name]


def spec_for(idata) -> ModelSpec | None:
    """The spec of the model a result was produced by (``attrs["model"]``), or None."""
    name = str(getattr(idata, "attrs", {}).get("model", ""))
    name = _OLD_NAMES.get(name, name)
    return MODELS[name] if name in MODELS else None


def hyperparameters_of(factory, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every hyperparameter of ``factory``: its defaults, updated by ``given``.

    >>> from gibbsjax.models import lda
    >>> h = hyperparameters_of(lda.partially_collapsed, {"K": 8})
    >>> h["K"], h["alpha"], h["eta"], h["learn_eta"]
    (8, 0.1, 0.01, False)
    """
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return dict(given)
    out = {n: p.default for n, p in params.items()
           if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not p.empty}
    out.update(given)
    return out


# ============================================================================ the config structure
_SECTIONS = ("model", "data", "sampler", "output")


@dataclass(frozen=True)
class Config:
    """A validated config: what to sample, from what data, how, and where to save it.

    ``kernel`` and ``data`` are built (and so validated) by :func:`parse_config`.

    Examples
    --------
    >>> from gibbsjax.config import parse_config
    >>> config = parse_config({'model': {'name': 'normal.bivariate', 'rho': 0.5}, 'sampler': {'num_draws': 10}})
    >>> config.model, config.hyperparameters
    ('normal.bivariate', {'rho': 0.5})
    """

    model: str
    hyperparameters: dict[str, Any]
    sampler: Settings
    data_section: dict[str, Any] | None = None
    output: str | None = None
    path: Path | None = None
    text: str | None = field(default=None, repr=False)
    kernel: Any = field(default=None, repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    extras: dict = field(default_factory=dict, repr=False, compare=False)

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
        """What a result records about its config (netCDF-safe: strings and numbers):
        :func:`gibbsjax.pipeline.model_attrs`, the data and the config file."""
        out = model_attrs(self.model, self.hyperparameters)
        if self.data_section is not None:
            out["data"] = json.dumps(_describe_data(self.data_section), sort_keys=True)
        if self.path is not None:
            out["config_file"] = str(self.path)
        if self.text is not None:
            out["config_toml"] = self.text
        return out

    def job(self, *, progress: bool = True, **overrides) -> Job:
        """The config as a :class:`gibbsjax.pipeline.Job`: ``overrides`` replace fields
        of its settings (``None`` values are ignored); the attributes are :meth:`attrs`
        with ``postprocessed = 0``."""
        settings = self.sampler.replace(progress=progress, **{k: v for k, v in overrides.items() if v is not None})
        return Job(get_spec(self.model), self.kernel, self.data, settings, self.extras,
                   {**self.attrs(), "postprocessed": 0})


def _describe_data(section: Mapping[str, Any]) -> dict[str, Any]:
    """The [data] table, with long inline value lists shortened."""
    out = dict(section)
    if isinstance(out.get("values"), list) and len(out["values"]) > 20:
        out["values"] = f"<{len(out['values'])} inline values>"
    return out


def _table(doc: Mapping[str, Any], name: str, *, required: bool) -> dict[str, Any] | None:
    if name not in doc:
        if required:
            raise ConfigError(f"missing required section [{name}]")
        return None
    value = doc[name]
    if not isinstance(value, dict):
        raise ConfigError(f"[{name}] must be a table (a [{name}] section), got {type(value).__name__}")
    return dict(value)


def _parse_sampler(section: dict[str, Any]) -> Settings:
    known = [f.name for f in dataclasses.fields(Settings) if f.name != "progress"]
    for key in section:
        if key not in known:
            raise ConfigError(f"[sampler] unknown key {key!r}; known keys: {', '.join(known)}")
    init = section.get("init")
    if init is not None:
        if not isinstance(init, dict):
            raise ConfigError("[sampler] init must be a table ([sampler.init]) of field = [one value per chain]")
        for name, values in init.items():
            if not isinstance(values, list):
                raise ConfigError(f"[sampler.init] {name} must be a list with one value per chain, got {values!r}")
            if not all_numbers(values):
                raise ConfigError(f"[sampler.init] {name} must hold numbers only")
    try:
        settings = Settings(**section)
    except ValueError as e:
        raise ConfigError(f"[sampler] {e}") from None
    for name, values in (init or {}).items():
        if len(values) != settings.num_chains:
            raise ConfigError(
                f"[sampler.init] {name} has {len(values)} values, but num_chains = "
                f"{settings.num_chains} (one starting value per chain)"
            )
    return settings


def _check_hyperparameters(name: str, factory, hyper: dict[str, Any]) -> None:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins etc.: let the factory complain
        return
    params = {n: p for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for key, value in hyper.items():
        if key not in params:
            if takes_any:
                continue
            known = ", ".join(params) or "no hyperparameters"
            raise ConfigError(f"[model] unknown key {key!r} for {name}; it takes: {known}")
        if is_number(params[key].default) and not is_number(value):
            raise ConfigError(f"[model] {key} must be a number, got {value!r}")
    for key, p in params.items():
        if p.default is p.empty and key not in hyper:
            raise ConfigError(f"[model] missing hyperparameter {key!r} for {name}")


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

    >>> c = parse_config({"model": {"name": "normal.bivariate", "rho": 0.5}, "sampler": {"seed": 1}})
    >>> c.kernel.name, c.sampler.num_chains
    ('normal.bivariate', 4)
    """
    if not isinstance(doc, Mapping):
        raise ConfigError(f"a config must be a table, got {type(doc).__name__}")
    for key in doc:
        if key not in _SECTIONS:
            raise ConfigError(f"unknown section [{key}]; sections: {', '.join(_SECTIONS)}")
    model = _table(doc, "model", required=True)
    sampler = _parse_sampler(_table(doc, "sampler", required=True))
    data_section = _table(doc, "data", required=False)
    output_table = _table(doc, "output", required=False)

    name = model.pop("name", None)
    if name is None:
        raise ConfigError(f"[model] name is required; known models: {', '.join(known_models())}")
    if not isinstance(name, str):
        raise ConfigError(f"[model] name must be a string, got {name!r}")
    spec = get_spec(name)
    name = spec.name

    output = None
    if output_table is not None:
        for key in output_table:
            if key != "path":
                raise ConfigError(f"[output] unknown key {key!r}; known keys: path")
        output = output_table.get("path")
        if output is not None and (not isinstance(output, str) or not output):
            raise ConfigError(f"[output] path must be a non-empty string, got {output!r}")

    if spec.make_data is None and data_section is not None:
        raise ConfigError(f"[data] model {name} takes no data: remove the [data] section")
    if spec.make_data is not None and data_section is None:
        raise ConfigError(f"missing required section [data] (model {name} needs data)")

    _check_hyperparameters(name, spec.factory, model)
    try:
        kernel = spec.factory(**model)
    except ValueError as e:
        raise ConfigError(f"[model] {e}") from e
    data, extras = None, {}
    if spec.make_data is not None:
        try:
            data = spec.make_data(data_section, Path(base_dir))
        except ConfigError:
            raise
        except ValueError as e:
            raise ConfigError(f"[data] {e}") from e
        if isinstance(data, DataWithExtras):
            data, extras = data.data, dict(data.extras)
    hyper = hyperparameters_of(spec.factory, model)
    extras["hyperparameters"] = hyper
    return Config(name, hyper, sampler, data_section, output, Path(path) if path is not None else None,
                  text, kernel, data, extras)


def load_config(path: str | Path) -> Config:
    """Read and validate a TOML config file (see the module docs for the format).

    Raises :class:`ConfigError` (a ``ValueError``) naming the file for a
    missing file, one that is not a regular file (a folder, a device, a FIFO),
    larger than :data:`gibbsjax.reading.CONFIG_LIMIT` (16 MiB), not readable,
    not UTF-8 text, empty or not valid TOML; and naming the key for any invalid
    setting.  The result records the config file's absolute path
    (``attrs["config_file"]``), so relative data paths of a resumed run are
    found from any working directory.
    """
    path = Path(path)
    try:
        text = reading.read_text(path, kind="config")
    except reading.ReadError as e:
        raise ConfigError(str(e)) from None
    if not text.strip():
        raise ConfigError(f"{path}: the config file is empty (a config needs [model] and [sampler] sections)")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    path = path.absolute()  # (not resolved: a link's folder stays the base of relative paths, as for the OS)
    return parse_config(doc, base_dir=path.parent, path=path, text=text)


# ============================================================================ running
def run_config(config: Config, *, progress: bool = True, **overrides):
    """Run a loaded config with :func:`gibbsjax.run.sample`, then the model's postprocess.

    ``overrides`` replace fields of the config's :class:`~gibbsjax.run.Settings`
    (e.g. ``seed=3``, ``chunk_size=50``, ``until="rhat<1.01"``); ``None``
    values are ignored, so a command line can pass its options through unset.
    The result's ``attrs`` record the model name, its hyperparameters
    (``model_<name>``) and the config file, besides what the runner records
    (seed, settings, ``interrupted``).  Same as :func:`sample_config` followed
    by :func:`postprocess_result`.
    """
    return postprocess_result(config, sample_config(config, progress=progress, **overrides))


def sample_config(config: Config, *, progress: bool = True, **overrides):
    """Only the sampling of :func:`run_config`: the raw draws, before any
    postprocess (so they can be saved first, and nothing finished is lost if
    postprocessing fails or is interrupted).  ``attrs["postprocessed"]`` is 0."""
    return pipeline.sample(config.job(progress=progress, **overrides))


def postprocess_result(config: Config, raw):
    """The model's postprocess of raw draws (alignment, estimates), keeping copies
    of the draws it relabelled (``raw_<group>``, see
    :func:`gibbsjax.run.keep_raw_draws`) so the result can be resumed
    (:func:`gibbsjax.pipeline.postprocess`).  ``attrs["postprocessed"]`` becomes 1.
    A run without draws is returned as it is."""
    idata = pipeline.postprocess(config.job(), raw)
    idata.attrs["postprocessed"] = 1
    return idata


def config_of(idata, *, base_dir: str | Path | None = None) -> Config:
    """The config a saved result was run from, rebuilt from ``attrs["config_toml"]``.

    Relative data paths are resolved against ``base_dir`` (default: the
    folder of ``attrs["config_file"]``, as in the original run).  Results of
    :func:`load_config` configs record that path absolute, so this works from
    any working directory; older results recorded it as given on the command
    line, relative to the folder the run started in, so resume those from that
    folder (or pass ``base_dir``).  Raises :class:`ConfigError` when the result
    does not hold its config.
    """
    attrs = dict(getattr(idata, "attrs", {}))
    text = attrs.get("config_toml")
    if not text:
        raise ConfigError("this result does not hold the config it was run from (attrs config_toml); "
                          "only results of gibbsjax run / run_config can be resumed from the command line")
    path = Path(str(attrs["config_file"])) if attrs.get("config_file") else None
    if base_dir is None:
        base_dir = path.parent if path is not None else Path(".")
    try:
        doc = tomllib.loads(str(text))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"the result's stored config is not valid TOML: {e}") from None
    try:
        return parse_config(doc, base_dir=base_dir, path=path, text=str(text))
    except ConfigError as e:
        if path is None or path.is_absolute() or "not found" not in str(e):
            raise
        raise ConfigError(f"{e} (this result, made by an older gibbsjax, records its config file {str(path)!r} "
                          "relative to the folder the run started in: resume it from that folder)") from None


def resume_result(idata, num_draws: int | None = None, *, progress: bool = True, chunk_size: int | None = None,
                  until: str | None = None, max_draws: int | None = None, config: Config | None = None,
                  postprocess: bool = True, devices: int | None = None):
    """Continue a saved ``gibbsjax run`` result for ``num_draws`` more draws per chain.

    ``idata`` is the InferenceData (or a path to the NetCDF file).  The config is
    rebuilt from the result (:func:`config_of`) unless given, the data are
    checked to be the same, and the draws continue bit-identically
    (:func:`gibbsjax.run.resume`); the model's postprocess is applied to the
    whole run again.  ``num_draws=0`` only post-processes (e.g. a run whose
    postprocessing was interrupted).  ``postprocess=False`` returns the raw draws
    (``attrs["postprocessed"]`` 0), as ``gibbsjax resume`` saves them first;
    ``devices`` as :func:`gibbsjax.run.resume` takes it.

    >>> import tempfile, os
    >>> from gibbsjax.config import load_config
    >>> c = load_config("configs/body-temperature.toml")  # doctest: +SKIP
    >>> first = run_config(c, num_draws=200, progress=False)  # doctest: +SKIP
    >>> longer = resume_result(first, 300, progress=False)  # doctest: +SKIP
    """
    if isinstance(idata, (str, Path)):
        idata = reading.open_result(idata)
    config = config or config_of(idata)
    raw = pipeline.resume(config.job(), idata, num_draws, progress=progress, chunk_size=chunk_size, until=until,
                          max_draws=max_draws, devices=devices)
    raw.attrs["postprocessed"] = 0
    return postprocess_result(config, raw) if postprocess else raw
