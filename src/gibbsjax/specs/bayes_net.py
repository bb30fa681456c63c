"""The Bayesian network's spec: its ``[data]`` reader, post-processing, report and SBC case (:mod:`gibbsjax.models.bayes_net`).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from gibbsjax.models.bayes_net import data, dirichlet_cpts, merge_observed, network

def _config_data(section, base_dir):
    """``[data]``: ``example = "sprinkler" | "abc"`` (a ``"network"`` data set of
    :mod:`gibbsjax.datasets`), the example's own keys (sprinkler: ``num_rows``,
    ``hide``, ``seed``) and ``concentration`` (a number)."""
    import inspect

    from gibbsjax import datasets
    from gibbsjax.sources import check_keys
    from gibbsjax.spec import ConfigError, DataWithExtras

    section = dict(section)
    name = section.pop("example", None)
    if name not in datasets.REGISTRY["network"]:
        raise ConfigError(f"[data] example must be one of {datasets.available('network')}, got {name!r}")
    conc = section.pop("concentration", None)
    loader = datasets.REGISTRY["network"][name]
    own = tuple(inspect.signature(loader).parameters)
    check_keys(section, ("example", "concentration", *own), f"for example {name!r}")
    ex = loader(**section)
    net = network(ex.variables, ex.concentration if conc is None else conc, ex.tied)
    return DataWithExtras(data(net, ex.rows), {"example": ex})


def postprocess(idata, kernel, d, extras):
    """Store the imputed entries' posterior value probabilities (``imputed`` group) and the CPT rows'
    posterior means (``cpt_means`` group; padding columns dropped per row by the report)."""
    import xarray as xr

    from gibbsjax.reports import draw_mean
    from gibbsjax.spec import replace_group

    net = d.network
    values = np.asarray(d.values)
    probs = idata.posterior_mean["imputed_probs"].mean("chain").values  # (row, variable, value)
    miss = np.argwhere(values < 0)
    labels = [f"row {n}: {net.names[v]}" for n, v in miss]
    p = probs[miss[:, 0], miss[:, 1]] if len(miss) else np.zeros((0, net.max_card))
    attrs: dict[str, Any] = {}
    truth = getattr(extras.get("example"), "truth", None)
    if truth is not None and len(miss):
        attrs["accuracy_vs_truth"] = float(np.mean(p.argmax(-1) == truth[miss[:, 0], miss[:, 1]]))
    imputed = xr.Dataset(
        {"probability": (("entry", "value"), p), "row": ("entry", miss[:, 0]), "variable": ("entry", miss[:, 1]),
         "cardinality": ("entry", np.asarray(net.cards, int)[miss[:, 1]])},
        coords={"entry": labels, "value": list(range(net.max_card))}, attrs=attrs)
    cards = np.asarray(net.valid()).sum(1)
    means = xr.Dataset({"cpt": draw_mean(idata, "cpt"), "cardinality": ("cpt_row", cards)})
    return replace_group(replace_group(idata, "imputed", imputed), "cpt_means", means)


def report(idata) -> str:
    """CPT rows' posterior means and the imputed entries' value probabilities."""
    from gibbsjax.reports import fmt

    lines = ["CPT rows (posterior means; chains may label a never-observed variable's values differently):"]
    means = idata["cpt_means"]
    for r, name in enumerate(means["cpt_row"].values):
        c = int(means["cardinality"].values[r])
        lines.append(f"  {name:<40} {fmt(means['cpt'].values[r, :c])}")
    imp = idata["imputed"]
    n = int(imp.sizes["entry"])
    shown = min(n, 20)
    lines.append(f"imputed entries ({n}; posterior probability of each value, first {shown}):")
    for i in range(shown):
        c = int(imp["cardinality"].values[i])
        lines.append(f"  {imp['entry'].values[i]:<24} {fmt(imp['probability'].values[i, :c])}")
    if "accuracy_vs_truth" in imp.attrs:
        lines.append(f"most probable value = hidden true value for {imp.attrs['accuracy_vs_truth']:.1%} of entries")
    return "\n".join(lines)


def _sbc_case():
    """SBC example: A -> B -> C with A -> C, generic concentrations, four rows with missing entries;
    ranks the real CPT entries (rows are padded to the largest cardinality) and the completed table."""
    net = network([("A", 2, []), ("B", 3, ["A"]), ("C", 2, ["A", "B"])],
                  concentration={"A": [[1.5, 0.6]], "B": [[0.8, 2.0, 1.1], [2.4, 0.5, 1.3]],
                                 "C": [[1.3, 0.4], [0.6, 1.9], [2.2, 0.9], [0.7, 1.6], [1.2, 2.6], [0.35, 0.8]]})
    d = data(net, [[0, -1, 1], [-1, 2, -1], [1, -1, 0], [-1, -1, 1]])
    valid = np.nonzero(net.valid())
    fns = {"cpt": lambda s, d: jnp.exp(s.log_cpt)[valid], "x": lambda s, d: merge_observed(s.x, d)}
    return dirichlet_cpts(), d, fns


def _specs():
    from gibbsjax.spec import ModelSpec

    return (ModelSpec("bayes_net.dirichlet_cpts", dirichlet_cpts, _config_data, postprocess, report,
                      description="discrete Bayesian network, Dirichlet CPTs, missing entries imputed "
                                  "(the CSE 5523 lecture notes 23 §23.2-23.3)", sbc_case=_sbc_case),)


#: this module's models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`)
SPECS = _specs()
