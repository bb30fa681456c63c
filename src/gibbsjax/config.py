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
from typing import Any, NamedTuple

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
    "read_corpus",
    "DataWithExtras",
]


class ConfigError(ValueError):
    """A config file or table that cannot be run; the message names the key."""


class DataWithExtras(NamedTuple):
    """What a ``make_data`` may return besides the bare data pytree: ``extras``
    (host-side things the sampler does not need — a vocabulary, a held-out
    corpus) handed to the model's ``postprocess`` as its ``extras`` argument."""

    data: Any
    extras: dict


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
                f"[data] file {path}: column {j + 1} of {len(header)} has a missing or non-numeric value"
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


# ---------------------------------------------------------------------------- one-label text models
# naive_bayes, mixture.unigrams, mixture.unigrams_collapsed, mixture.bernoulli.
# [data] names a corpus shipped in gibbsjax.datasets.corpora (corpus = "abc" or
# "stdlib_docs") or a file (file = "...", format = "ldac" | "uci" | "folder",
# vocab = "..." for ldac/uci); naive_bayes also takes hide_labels / split_seed /
# num_classes, mixture.bernoulli max_features.
_CORPORA = {"abc": "abc_corpus", "stdlib_docs": "stdlib_docs"}
_CORPUS_FORMATS = {"ldac": "read_ldac", "uci": "read_uci", "folder": "read_folder"}
_CORPUS_KEYS = ("corpus", "file", "format", "vocab")


def read_corpus(section: Mapping[str, Any], base_dir: Path, extra_keys: tuple[str, ...] = ()):
    """The :class:`~gibbsjax.corpus.Corpus` a ``[data]`` table names.

    * ``corpus = "abc"`` / ``"stdlib_docs"``: a corpus shipped in
      :mod:`gibbsjax.datasets.corpora`;
    * ``file = "path"`` with ``format = "ldac"`` / ``"uci"`` (and optionally
      ``vocab = "vocab.txt"``) or ``"folder"`` (one text file per document,
      labelled by sub-folder), paths relative to ``base_dir``.

    Other keys than these and ``extra_keys`` raise :class:`ConfigError`.
    """
    allowed = _CORPUS_KEYS + tuple(extra_keys)
    for key in section:
        if key not in allowed:
            raise ConfigError(f"[data] unknown key {key!r}; known keys: {', '.join(allowed)}")
    sources = [k for k in ("corpus", "file") if k in section]
    if len(sources) != 1:
        found = f"found {', '.join(sources)}" if sources else "found none"
        raise ConfigError(f"[data] needs exactly one of corpus, file ({found})")
    if "corpus" in section:
        name = section["corpus"]
        if not isinstance(name, str) or name not in _CORPORA:
            raise ConfigError(f"[data] unknown corpus {name!r}; available: {', '.join(_CORPORA)}")
        for key in ("format", "vocab"):
            if key in section:
                raise ConfigError(f"[data] {key} goes with file, not with corpus")
        from gibbsjax.datasets import corpora

        return getattr(corpora, _CORPORA[name])()
    fmt = section.get("format")
    if fmt not in _CORPUS_FORMATS:
        raise ConfigError(f"[data] format must be one of {', '.join(_CORPUS_FORMATS)} with file, got {fmt!r}")
    from gibbsjax import corpus as corpus_module

    def resolve(key):
        value = section[key]
        if not isinstance(value, str) or not value:
            raise ConfigError(f"[data] {key} must be a path (a string), got {value!r}")
        path = Path(value).expanduser()
        return path if path.is_absolute() else base_dir / path

    path = resolve("file")
    reader = getattr(corpus_module, _CORPUS_FORMATS[fmt], None)
    if reader is None:
        raise ConfigError(f"[data] format {fmt!r}: gibbsjax.corpus has no {_CORPUS_FORMATS[fmt]} yet")
    try:
        if fmt == "folder":
            if "vocab" in section:
                raise ConfigError("[data] vocab goes with format ldac or uci, not folder")
            return reader(path, labels_from="subfolder")
        return reader(path, resolve("vocab") if "vocab" in section else None)
    except FileNotFoundError as e:
        raise ConfigError(f"[data] file not found: {e.filename or path}") from None


def _naive_bayes_data(section: Mapping[str, Any], base_dir: Path):
    from gibbsjax.models import naive_bayes

    corpus = read_corpus(section, base_dir, ("hide_labels", "split_seed", "num_classes"))
    kwargs = {k: section[k] for k in ("hide_labels", "split_seed", "num_classes") if k in section}
    return naive_bayes.data(corpus, **kwargs)


def _unigram_data(section: Mapping[str, Any], base_dir: Path):
    from gibbsjax.models import mixtures

    return mixtures.unigram_data(read_corpus(section, base_dir))


def _bernoulli_data(section: Mapping[str, Any], base_dir: Path):
    from gibbsjax.models import mixtures

    corpus = read_corpus(section, base_dir, ("max_features",))
    return mixtures.bernoulli_data(corpus, max_features=section.get("max_features"))


_WORD_VARS = ("theta", "beta", "p")  # class/cluster x word (or feature) variables


def _permute_per_draw(idata, perms: np.ndarray, dim: str):
    """Permute the ``dim`` axis of every posterior variable draw by draw (perms: chain, draw, K)."""
    ds = idata.posterior
    for name in list(ds.data_vars):
        da = ds[name]
        if dim not in da.dims:
            continue
        da = da.transpose("chain", "draw", dim, ...)
        index = perms.reshape(perms.shape + (1,) * (da.ndim - 3))
        values = np.take_along_axis(da.values, np.broadcast_to(index, da.shape), axis=2)
        ds[name] = da.copy(data=values).transpose(*ds[name].dims)
    return idata


def _draw_mean(idata, name: str):
    """Posterior mean of ``name`` over chains and draws: from ``posterior``, or from
    the per-chain means of ``posterior_mean`` (quantities the kernel accumulates)."""
    if name in idata.posterior:
        return idata.posterior[name].mean(("chain", "draw"))
    return idata["posterior_mean"][name].mean("chain")


def _one_label_postprocess(idata, kernel, data, *, align: bool):
    """Align clusters (mixtures), then store per-document label probabilities, the
    posterior-mean word (feature) distributions, top words and accuracies in an
    ``estimates`` group, so that :func:`_one_label_report` works from a saved file."""
    import json

    import xarray as xr

    from gibbsjax import evaluate

    idata = idata.copy()
    groups = [idata.posterior] + ([idata["posterior_mean"]] if "posterior_mean" in idata.groups() else [])
    word_var = next(v for v in _WORD_VARS if any(v in g for g in groups))
    dims = next(g[word_var].dims for g in groups if word_var in g)
    class_dim, item_dim = dims[-2:]
    attrs: dict[str, Any] = {"word_var": word_var, "class_dim": class_dim}
    if align:
        post = idata.posterior
        if word_var in post:
            # label switching within chains (overlapping clusters, small data): relabel
            # every draw to a common reference first
            draws = post[word_var].transpose("chain", "draw", class_dim, item_dim).values
            if draws.shape[-1] > 200:  # match on the 200 most probable words: enough, and small
                keep = np.argsort(-draws.mean(axis=(0, 1, 2)), kind="stable")[:200]
                draws = draws[..., keep]
            if int(post.sizes["draw"]) > 1 or int(post.sizes["chain"]) > 1:
                perms = evaluate.relabel_draws(np.sqrt(np.clip(draws, 0, None)))  # Hellinger geometry
                idata = _permute_per_draw(idata, perms, class_dim)
            attrs["aligned"] = "per draw (evaluate.relabel_draws), then across chains (diagnostics.align_chains)"
        else:
            attrs["aligned"] = "across chains (diagnostics.align_chains on per-chain means)"
        from gibbsjax.diagnostics import align_chains

        idata, _ = align_chains(idata, word_var, class_dim, distance="hellinger")

    doc_probs = _draw_mean(idata, "doc_probs")
    word_mean = _draw_mean(idata, word_var)
    predicted = doc_probs.values.argmax(axis=1).astype(np.int32)
    truth = np.asarray(data.true_labels)
    labels = np.asarray(getattr(data, "labels", np.full(truth.shape, -1)))
    hidden = (labels < 0) & (truth >= 0)
    classes = [str(c) for c in doc_probs[class_dim].values]
    top = evaluate.top_words(word_mean.values, [str(w) for w in word_mean[item_dim].values], n=10)
    top_p = np.sort(word_mean.values, axis=1)[:, ::-1][:, :10]
    attrs["top_words"] = json.dumps(dict(zip(classes, top)))
    attrs["top_word_probs"] = json.dumps(dict(zip(classes, np.round(top_p, 4).tolist())))
    attrs["num_docs"] = int(truth.size)
    if np.any(labels >= 0):  # naive Bayes: accuracy on the labels hidden from the sampler
        attrs["num_hidden"] = int(hidden.sum())
        attrs["hidden_accuracy"] = evaluate.accuracy(predicted, truth, mask=hidden) if hidden.any() else float("nan")
    elif np.any(truth >= 0):  # mixtures: clusters against known labels, best one-to-one match
        acc, mapping = evaluate.matched_accuracy(predicted, truth)
        names = data.info.label_names or tuple(str(i) for i in range(int(truth.max()) + 1))
        attrs["matched_accuracy"] = acc
        attrs["cluster_labels"] = json.dumps(
            {c: (names[m] if 0 <= m < len(names) else "") for c, m in zip(classes, mapping.tolist())}
        )
    estimates = xr.Dataset(
        {
            "doc_probs": doc_probs,
            f"{word_var}_mean": word_mean,
            "predicted": (("doc",), predicted),
            "true_label": (("doc",), truth.astype(np.int32)),
            "label_hidden": (("doc",), hidden.astype(np.int8)),
        },
        attrs=attrs,
    )
    if "estimates" in idata.groups():
        del idata["estimates"]
    idata.add_groups({"estimates": estimates})
    return idata


def _one_label_report(idata) -> str:
    """Top words per class/cluster and accuracy, from the ``estimates`` group."""
    import json

    if "estimates" not in idata.groups():
        return "(no estimates group: run postprocessing to get top words and accuracy)"
    est = idata.estimates
    a = est.attrs
    class_dim = str(a.get("class_dim", "class"))
    lines = [f"top words per {class_dim} (posterior mean of {a.get('word_var', '?')}):"]
    top = json.loads(str(a.get("top_words", "{}")))
    names = json.loads(str(a["cluster_labels"])) if "cluster_labels" in a else {}
    probs = json.loads(str(a.get("top_word_probs", "{}")))
    share = est["doc_probs"].mean("doc").values
    lines[0] += " word (probability); [share of documents]"
    for (c, words), s in zip(top.items(), share):
        tag = f" (~{names[c]})" if names.get(c) else ""
        shown = " ".join(f"{w} ({p:.3f})" for w, p in zip(words, probs.get(c, [])))
        lines.append(f"  {c}{tag} [{s:.2f}]: {shown or ' '.join(words)}")
    if "hidden_accuracy" in a:
        lines.append(f"accuracy on the {int(a['num_hidden'])} hidden labels: {float(a['hidden_accuracy']):.3f}")
    if "matched_accuracy" in a:
        lines.append(f"accuracy of clusters against the known labels (best one-to-one match): "
                     f"{float(a['matched_accuracy']):.3f}")
    return "\n".join(lines)


def _aligned(align: bool):
    def postprocess(idata, kernel, data):
        return _one_label_postprocess(idata, kernel, data, align=align)

    return postprocess


register_model(
    "naive_bayes",
    "gibbsjax.models.naive_bayes:dirichlet_multinomial",
    _naive_bayes_data,
    description="Dirichlet-multinomial naive Bayes, pi collapsed, some labels observed (seed 000)",
    postprocess=_aligned(False),
    report=_one_label_report,
    summary_vars=("pi",),
)
register_model(
    "mixture.unigrams",
    "gibbsjax.models.mixtures:unigrams",
    _unigram_data,
    description="mixture of unigrams, uncollapsed (seed 001; seed 002 section 23.3)",
    postprocess=_aligned(True),
    report=_one_label_report,
    summary_vars=("pi",),
)
register_model(
    "mixture.unigrams_collapsed",
    "gibbsjax.models.mixtures:unigrams_collapsed",
    _unigram_data,
    description="mixture of unigrams with pi collapsed (seed 001, section 21.2.2)",
    postprocess=_aligned(True),
    report=_one_label_report,
    summary_vars=("pi",),
)
register_model(
    "mixture.bernoulli",
    "gibbsjax.models.mixtures:bernoulli",
    _bernoulli_data,
    description="mixture of binary feature vectors, Beta priors as pseudo-counts (seed 004)",
    postprocess=_aligned(True),
    report=_one_label_report,
    summary_vars=("pi",),
)


# ---------------------------------------------------------------------------- Gaussian mixture, HMMs
# gaussian_mixture, hmm.categorical, hmm.gaussian.
# gaussian_mixture [data]: one column as for normal.semiconjugate (dataset / file / values,
#   with column), or columns = ["a", "b"] (with dataset or file) for the diagonal model (dim = 2);
#   dataset = "faithful" is gibbsjax.datasets.tabular.faithful.
# hmm.categorical [data]: dataset = "casino" (gibbsjax.datasets.tabular.casino, with its
#   num_sequences / min_length / max_length / seed), or sequences = [[0, 3, ...], ...] inline;
#   num_symbols and pad_to optional.
# hmm.gaussian [data]: sequences = [[...], ...] inline, or one sequence from a column
#   (dataset / file / values, with column); pad_to optional.
def _tabular_column(section: Mapping[str, Any], base_dir: Path) -> np.ndarray:
    """:func:`read_column`, also for the tables of :mod:`gibbsjax.datasets.tabular` (faithful)."""
    from gibbsjax import datasets
    from gibbsjax.datasets import tabular

    name = section.get("dataset")
    if isinstance(name, str) and name in tabular.TABLES and name not in datasets.available():
        for key in section:
            if key not in ("dataset", "column"):
                raise ConfigError(f"[data] unknown key {key!r} with dataset {name!r}; expected column")
        table = tabular.TABLES[name]()
        column = section.get("column")
        if not isinstance(column, str) or column not in table:
            raise ConfigError(f"[data] column must name a column of dataset {name!r}: {', '.join(table)}")
        return np.asarray(table[column], dtype=np.float64)
    return read_column(section, base_dir)


def _gaussian_mixture_data(section: Mapping[str, Any], base_dir: Path):
    from gibbsjax.models import gaussian_mixture

    section = dict(section)
    columns = section.pop("columns", None)
    if columns is None:
        return gaussian_mixture.data(_tabular_column(section, base_dir))
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise ConfigError(f"[data] columns must be a non-empty list of column names, got {columns!r}")
    if "column" in section:
        raise ConfigError("[data] give column (univariate) or columns (diagonal), not both")
    x = np.stack([_tabular_column({**section, "column": c}, base_dir) for c in columns], axis=1)
    return gaussian_mixture.data(x)


def _inline_sequences(section: Mapping[str, Any]) -> list:
    seqs = section["sequences"]
    if not isinstance(seqs, list) or not all(isinstance(s, list) and _all_numbers(s) for s in seqs):
        raise ConfigError("[data] sequences must be a list of lists of numbers, one list per sequence")
    for key in section:
        if key != "sequences":
            raise ConfigError(f"[data] unknown key {key!r} with sequences; expected pad_to, num_symbols")
    return seqs


def _hmm_categorical_data(section: Mapping[str, Any], base_dir: Path):
    import inspect

    from gibbsjax.datasets import tabular
    from gibbsjax.models import hmm

    section = dict(section)
    pad_to = section.pop("pad_to", None)
    num_symbols = section.pop("num_symbols", None)
    if "sequences" in section:
        seqs = _inline_sequences(section)
    elif "dataset" in section:
        name = section.pop("dataset")
        if not isinstance(name, str) or name not in tabular.GENERATORS:
            raise ConfigError(f"[data] unknown dataset {name!r}; available: {', '.join(tabular.GENERATORS)}")
        generator = tabular.GENERATORS[name]
        known = list(inspect.signature(generator).parameters)
        for key in section:
            if key not in known:
                raise ConfigError(f"[data] unknown key {key!r} for dataset {name!r}; it takes: {', '.join(known)}")
        generated = generator(**section)
        seqs = generated["sequences"]
        num_symbols = generated["num_symbols"] if num_symbols is None else num_symbols
    else:
        raise ConfigError("[data] needs sequences (inline lists) or dataset (e.g. \"casino\")")
    return hmm.categorical_data(seqs, num_symbols, pad_to=pad_to)


def _hmm_gaussian_data(section: Mapping[str, Any], base_dir: Path):
    from gibbsjax.models import hmm

    section = dict(section)
    pad_to = section.pop("pad_to", None)
    seqs = _inline_sequences(section) if "sequences" in section else [_tabular_column(section, base_dir)]
    return hmm.gaussian_data(seqs, pad_to=pad_to)


def _fmt(values) -> str:
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return " ".join(f"{v:7.3f}" for v in arr)


def _mixture_report(idata) -> str:
    """Aligned components: posterior mean weight, mean(s) and sd(s) per component."""
    post = idata.posterior
    means = {v: post[v].mean(("chain", "draw")).values for v in ("weights", "mu", "sigma")}
    aligned = "aligned across chains" if "aligned_on" in post.attrs else "NOT aligned across chains"
    lines = [f"components ({aligned}; posterior means):", "  component  weight    mean(s)   sd(s)"]
    for k in range(means["weights"].shape[0]):
        lines.append(f"  {k:>9}  {means['weights'][k]:6.3f}  {_fmt(means['mu'][k])}  {_fmt(means['sigma'][k])}")
    return "\n".join(lines)


def _hmm_report(idata) -> str:
    """Aligned states: transition matrix and emission parameters (posterior means)."""
    post = idata.posterior
    aligned = "aligned across chains" if "aligned_on" in post.attrs else "NOT aligned across chains"
    trans = post["transition"].mean(("chain", "draw")).values
    lines = [f"states ({aligned}; posterior means):", "  transition matrix (row: from, column: to):"]
    lines += [f"    {k:>3}: {_fmt(row)}" for k, row in enumerate(trans)]
    if "emission" in post:
        lines.append("  emission probabilities (row: state, column: symbol):")
        lines += [f"    {k:>3}: {_fmt(row)}" for k, row in enumerate(post["emission"].mean(("chain", "draw")).values)]
    else:
        mu, sigma = (post[v].mean(("chain", "draw")).values for v in ("mu", "sigma"))
        lines.append("  state   mean      sd")
        lines += [f"    {k:>3}: {mu[k]:7.3f} {sigma[k]:7.3f}" for k in range(mu.shape[0])]
    return "\n".join(lines)


def _mixture_postprocess(idata, kernel, data):
    from gibbsjax.models import gaussian_mixture

    return gaussian_mixture.align(idata)


def _hmm_postprocess(idata, kernel, data):
    from gibbsjax.models import hmm

    return hmm.align(idata)


register_model(
    "gaussian_mixture",
    "gibbsjax.models.gaussian_mixture:normal_gamma",
    _gaussian_mixture_data,
    description="Gaussian mixture, Normal-Gamma priors, univariate or diagonal (seed 002, section 23.4)",
    postprocess=_mixture_postprocess,
    report=_mixture_report,
    summary_vars=("log_lik", "mu_sorted", "sigma_sorted", "weights_sorted", "mu"),
)
register_model(
    "hmm.categorical",
    "gibbsjax.models.hmm:categorical",
    _hmm_categorical_data,
    description="hidden Markov model, categorical emissions, paths by FFBS (Carter & Kohn 1996)",
    postprocess=_hmm_postprocess,
    report=_hmm_report,
    summary_vars=("log_lik", "transition_sorted", "emission_sorted"),
)
register_model(
    "hmm.gaussian",
    "gibbsjax.models.hmm:gaussian",
    _hmm_gaussian_data,
    description="hidden Markov model, Gaussian emissions with Normal-Gamma priors, paths by FFBS",
    postprocess=_hmm_postprocess,
    report=_hmm_report,
    summary_vars=("log_lik", "mu_sorted", "sigma_sorted", "transition_sorted"),
)


# ---------------------------------------------------------------------------- LDA
def _lda_data(section: Mapping[str, Any], base_dir: Path):
    """``[data]`` for LDA: a corpus (``corpus = "stdlib_docs"`` | ``"abc"``, or a file), with
    ``heldout`` (a fraction of documents kept out for perplexity) and ``split_seed``."""
    from gibbsjax.models import lda

    corpus = read_corpus(section, base_dir, ("heldout", "split_seed", "num_lanes"))
    heldout = section.get("heldout", 0.0)
    if not _is_number(heldout) or not 0.0 <= float(heldout) < 1.0:
        raise ConfigError(f"[data] heldout must be a fraction in [0, 1), got {heldout!r}")
    seed = section.get("split_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"[data] split_seed must be a non-negative integer, got {seed!r}")
    test = None
    if float(heldout) > 0:
        corpus, test = corpus.split(float(heldout), seed=seed)
    lanes = section.get("num_lanes")
    return DataWithExtras(lda.data(corpus, num_lanes=lanes), {"corpus": corpus, "heldout": test})


def _lda_postprocess(idata, kernel, data, extras=None):
    """Name words and documents, align topics across chains, and store top words,
    coherence and held-out perplexity in a ``topics`` group for the report."""
    import json

    import xarray as xr

    from gibbsjax import evaluate
    from gibbsjax.diagnostics import align_chains

    extras = extras or {}
    corpus = extras.get("corpus")
    alpha = float(idata.attrs.get("model_alpha", 0.1))
    if corpus is not None:
        idata.posterior_mean = idata.posterior_mean.assign_coords(
            word=list(corpus.vocab), document=list(corpus.doc_names)
        )
    if idata.posterior.sizes["chain"] > 1:
        idata, _ = align_chains(idata, "topic_word", "topic", distance="hellinger")
    phi = idata.posterior_mean["topic_word"].mean("chain").values
    attrs: dict[str, Any] = {}
    if corpus is not None:
        attrs["top_words"] = json.dumps(evaluate.top_words(phi, corpus.vocab, 10))
        n = min(10, phi.shape[1])
        if n >= 2:
            attrs["umass"] = json.dumps([round(float(x), 3) for x in evaluate.coherence(phi, corpus, kind="umass", n=n)])
            attrs["npmi"] = json.dumps([round(float(x), 3) for x in evaluate.coherence(phi, corpus, kind="npmi", n=n)])
    test = extras.get("heldout")
    if test is not None and test.num_docs:
        attrs["heldout_perplexity"] = evaluate.heldout_perplexity(phi, test, alpha=alpha)
        attrs["heldout_docs"] = int(test.num_docs)
    topics = xr.Dataset({"topic_word": (("topic", "word"), phi)}, attrs=attrs)
    if "topics" in idata.groups():
        del idata["topics"]
    idata.add_groups({"topics": topics})
    return idata


def _lda_report(idata) -> str:
    import json

    from gibbsjax.diagnostics import summary

    lines = []
    if "topics" in idata.groups():
        attrs = idata.topics.attrs
        words = json.loads(attrs["top_words"]) if "top_words" in attrs else None
        umass = json.loads(attrs["umass"]) if "umass" in attrs else None
        if words:
            lines.append("top words per topic (aligned across chains; UMass coherence):")
            for k, ws in enumerate(words):
                c = f"{umass[k]:8.2f}" if umass else ""
                lines.append(f"  topic {k:2d} {c}  {' '.join(ws)}")
        if "heldout_perplexity" in attrs:
            lines.append(f"held-out perplexity (document completion, {int(attrs['heldout_docs'])} documents): "
                         f"{float(attrs['heldout_perplexity']):.1f}")
    if int(idata.posterior.sizes["chain"]) >= 2:
        table = summary(idata)
        worst = table["r_hat"].max()
        lines.append(f"R-hat: log joint lp {table.loc['lp', 'r_hat']:.3f}; aligned topic shares max {worst:.3f}"
                     + ("  -> chains agree" if worst < 1.01 else "  -> chains disagree: run longer or check modes"))
    return "\n".join(lines)


for _name, _factory in (("lda", "partially_collapsed"), ("lda.partially_collapsed", "partially_collapsed"),
                        ("lda.collapsed", "collapsed"), ("lda.uncollapsed", "uncollapsed")):
    register_model(
        _name,
        f"gibbsjax.models.lda:{_factory}",
        _lda_data,
        description=f"latent Dirichlet allocation, {_factory.replace('_', ' ')} Gibbs sampler (seed 003 §4)",
        postprocess=_lda_postprocess,
        report=_lda_report,
    )


# ---------------------------------------------------------------------------- discrete Bayesian networks
def _bayes_net_data(section: Mapping[str, Any], base_dir: Path):
    """``[data]`` for ``bayes_net``: ``example = "sprinkler" | "abc"`` (gibbsjax.datasets.networks), the
    example's own keys (sprinkler: ``num_rows``, ``hide``, ``seed``) and ``concentration`` (a number)."""
    from gibbsjax.datasets import networks
    from gibbsjax.models import bayes_net

    section = dict(section)
    name = section.pop("example", None)
    if name not in networks.EXAMPLES:
        raise ConfigError(f"[data] example must be one of {sorted(networks.EXAMPLES)}, got {name!r}")
    conc = section.pop("concentration", None)
    allowed = {"sprinkler": ("num_rows", "hide", "seed"), "abc": ()}[name]
    for key in section:
        if key not in allowed:
            raise ConfigError(f"[data] unknown key {key!r} for example {name!r}; known keys: "
                              f"example, concentration{''.join(', ' + k for k in allowed)}")
    ex = networks.EXAMPLES[name](**section)
    net = bayes_net.network(ex.variables, ex.concentration if conc is None else conc, ex.tied)
    return DataWithExtras(bayes_net.data(net, ex.rows), {"example": ex})


def _bayes_net_postprocess(idata, kernel, data, extras=None):
    """Store the imputed entries' posterior value probabilities (``imputed`` group) and the CPT rows'
    posterior means (``cpt_means`` group; padding columns dropped per row by the report)."""
    import xarray as xr

    net = data.network
    values = np.asarray(data.values)
    probs = idata.posterior_mean["imputed_probs"].mean("chain").values  # (row, variable, value)
    miss = np.argwhere(values < 0)
    labels = [f"row {n}: {net.names[v]}" for n, v in miss]
    p = probs[miss[:, 0], miss[:, 1]] if len(miss) else np.zeros((0, net.max_card))
    attrs: dict[str, Any] = {}
    truth = getattr((extras or {}).get("example"), "truth", None)
    if truth is not None and len(miss):
        attrs["accuracy_vs_truth"] = float(np.mean(p.argmax(-1) == truth[miss[:, 0], miss[:, 1]]))
    imputed = xr.Dataset(
        {"probability": (("entry", "value"), p), "row": ("entry", miss[:, 0]), "variable": ("entry", miss[:, 1]),
         "cardinality": ("entry", np.asarray(net.cards, int)[miss[:, 1]])},
        coords={"entry": labels, "value": list(range(net.max_card))}, attrs=attrs)
    cpt = (idata.posterior["cpt"].mean(("chain", "draw")) if "cpt" in idata.posterior
           else idata.posterior_mean["cpt"].mean("chain"))
    cards = np.asarray(net.valid()).sum(1)
    means = xr.Dataset({"cpt": cpt, "cardinality": ("cpt_row", cards)})
    for group, ds in (("imputed", imputed), ("cpt_means", means)):
        if group in idata.groups():
            del idata[group]
        idata.add_groups({group: ds})
    return idata


def _bayes_net_report(idata) -> str:
    lines = ["CPT rows (posterior means; chains may label a never-observed variable's values differently):"]
    means = idata["cpt_means"]
    for r, name in enumerate(means["cpt_row"].values):
        c = int(means["cardinality"].values[r])
        lines.append(f"  {name:<40} {_fmt(means['cpt'].values[r, :c])}")
    imp = idata["imputed"]
    n = int(imp.sizes["entry"])
    shown = min(n, 20)
    lines.append(f"imputed entries ({n}; posterior probability of each value, first {shown}):")
    for i in range(shown):
        c = int(imp["cardinality"].values[i])
        lines.append(f"  {imp['entry'].values[i]:<24} {_fmt(imp['probability'].values[i, :c])}")
    if "accuracy_vs_truth" in imp.attrs:
        lines.append(f"most probable value = hidden true value for {imp.attrs['accuracy_vs_truth']:.1%} of entries")
    return "\n".join(lines)


register_model(
    "bayes_net",
    "gibbsjax.models.bayes_net:bayes_net",
    _bayes_net_data,
    description="discrete Bayesian network, Dirichlet CPTs, missing entries imputed (seed 002 §23.2-23.3)",
    postprocess=_bayes_net_postprocess,
    report=_bayes_net_report,
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
    extras: dict = {}
    if entry.make_data is not None:
        try:
            data = entry.make_data(data_section, base)
        except ConfigError:
            raise
        except ValueError as e:
            raise ConfigError(f"[data] {e}") from e
        if isinstance(data, DataWithExtras):
            data, extras = data.data, dict(data.extras)

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
        extras=extras,
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
    num_chains: int | None = None,
    num_warmup: int | None = None,
    num_draws: int | None = None,
):
    """Run a loaded config with :func:`gibbsjax.run.sample`; returns InferenceData.

    ``seed``, ``chunk_size``, ``num_chains``, ``num_warmup`` and ``num_draws``
    override the config's (``[sampler.init]`` values need the config's
    ``num_chains``).  The result's ``attrs``
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
        num_chains=s.num_chains if num_chains is None else num_chains,
        num_warmup=s.num_warmup if num_warmup is None else num_warmup,
        num_draws=s.num_draws if num_draws is None else num_draws,
        thin=s.thin,
        init=s.init,
        progress=progress,
        chunk_size=s.chunk_size if chunk_size is None else chunk_size,
        save_warmup=s.save_warmup,
        attrs=config.attrs(),
    )
    entry = MODELS[config.model]
    if entry.postprocess is not None and int(idata.posterior.sizes.get("draw", 0)) > 0:
        if "extras" in inspect.signature(entry.postprocess).parameters:
            idata = entry.postprocess(idata, config.kernel, config.data, extras=config.extras)
        else:
            idata = entry.postprocess(idata, config.kernel, config.data)
    return idata


def model_entry_for(idata) -> ModelEntry | None:
    """The registry entry of the model a result was produced by (``attrs["model"]``)."""
    name = str(getattr(idata, "attrs", {}).get("model", ""))
    return MODELS.get(name)

