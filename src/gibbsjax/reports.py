"""Building blocks that several models' specs share for ``postprocess`` and ``report``.

One layer below the models (no model imports another): number formatting for
reports (the one-label document models' estimates and report are in
:mod:`gibbsjax.one_label`).

* :func:`fmt`: numbers in fixed-width columns;
* agreement across chains for every model with exchangeable components:
  :func:`add_agreement` stores :func:`gibbsjax.labels.chain_agreement` as the
  ``agreement`` group, :func:`chains_disagree` is the one decision that the
  reports and the estimators' warnings share, :func:`agreement_lines` its text.

>>> fmt([0.5, 1.25])
'  0.500   1.250'
"""

from __future__ import annotations

import json

import numpy as np

__all__ = [
    "fmt",
    "draw_mean",
    "add_agreement",
    "agreement_lines",
    "chains_disagree",
    "component_rhat",
    "rhat_lp",
    "RHAT_LIMIT",
]


def fmt(values) -> str:
    """Numbers as fixed-width ``%7.3f`` columns separated by a space.

    >>> fmt(1.0)
    '  1.000'
    """
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return " ".join(f"{v:7.3f}" for v in arr)


def draw_mean(idata, name: str, chains=None):
    """Posterior mean of ``name`` over chains and draws: from ``posterior``, or from
    the per-chain means of ``posterior_mean`` (quantities the kernel accumulates).
    ``chains``: the chains to average (positions; default all).

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> float(draw_mean(to_inference_data({"m": np.ones((2, 3))}), "m"))
    1.0
    >>> float(draw_mean(to_inference_data({"m": np.array([[1.0] * 3, [3.0] * 3])}), "m", chains=[1]))
    3.0
    """
    pick = (lambda da: da) if chains is None else (lambda da: da.isel(chain=list(chains)))
    if name in idata.posterior:
        return pick(idata.posterior[name]).mean(("chain", "draw"))
    return pick(idata["posterior_mean"][name]).mean("chain")


# ============================================================================ agreement across chains
#: R-hat above which a quantity's chains have not mixed (Vehtari, Gelman, Simpson, Carpenter
#: & Bürkner 2021, Bayesian Analysis 16(2))
RHAT_LIMIT = 1.01


def _rhat_many(values: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat of ``values`` (chain, draw, n), in float64, one per column;
    NaN where undefined (one chain, non-finite draws, draws constant within every chain)."""
    import warnings

    import arviz as az
    import xarray as xr

    x = np.asarray(values, dtype=np.float64)
    out = np.full(x.shape[2], np.nan)
    if x.shape[0] < 2 or x.shape[1] < 4:
        return out
    ok = np.all(np.isfinite(x), axis=(0, 1)) & ~np.all(np.ptp(x, axis=1) == 0, axis=0)
    if np.any(ok):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = az.rhat(xr.Dataset({"x": (("chain", "draw", "n"), x[:, :, ok])}))["x"].values
        out[ok] = r
    return out


def rhat_lp(idata) -> float:
    """R-hat of the log joint ``lp`` (``sample_stats``), NaN when there is none or one chain.

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"m": np.zeros((2, 50))})
    >>> bool(np.isnan(rhat_lp(idata)))
    True
    """
    if "sample_stats" not in idata.groups() or "lp" not in idata.sample_stats:
        return float("nan")
    lp = idata.sample_stats["lp"].transpose("chain", "draw").values
    return float(_rhat_many(lp[:, :, None])[0])


def component_rhat(idata, var_names, component_dim: str) -> np.ndarray:
    """R-hat of each aligned component, (K,): for every posterior variable in
    ``var_names`` that has ``component_dim``, R-hat of each element, and per
    component the largest over variables and other dimensions (NaN where none
    is defined, e.g. one chain).

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 100, 2))
    >>> r = component_rhat(to_inference_data({"m": x}, dims={"m": ["topic"]}), ["m"], "topic")
    >>> r.shape, bool(np.all(r < 1.05))
    ((2,), True)
    """
    post = idata.posterior
    k = int(post.sizes[component_dim]) if component_dim in post.sizes else 0
    out = np.full(k, np.nan)
    for name in var_names:
        if name not in post or component_dim not in post[name].dims:
            continue
        da = post[name].transpose("chain", "draw", component_dim, ...)
        x = da.values.reshape(da.shape[0], da.shape[1], k, -1)
        r = _rhat_many(x.reshape(x.shape[0], x.shape[1], -1)).reshape(k, -1)
        with np.errstate(invalid="ignore"):
            r = np.where(np.isnan(r), -np.inf, r).max(axis=1)
        out = np.fmax(out, np.where(np.isfinite(r), r, np.nan))
    return out


def add_agreement(idata, estimates, component_dim: str, *, distance: str = "hellinger", rhat_vars=(),
                  threshold: float | None = None):
    """Compute :func:`gibbsjax.labels.chain_agreement` for aligned ``estimates`` and store it
    as the ``agreement`` group.  Returns ``(idata, agreement)``.

    ``estimates``: per-chain estimates of every component, an array
    ``(chain, K, ...)`` or a DataArray with dims ``chain`` and ``component_dim``.
    The reference chain comes from ``sample_stats.lp``; R-hat per component
    from the posterior variables ``rhat_vars`` (:func:`component_rhat`).

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> idata = to_inference_data({"share": np.full((2, 5, 2), 0.5)}, dims={"share": ["topic"]})
    >>> est = np.array([[[0.7, 0.3], [0.2, 0.8]]] * 2)
    >>> idata, a = add_agreement(idata, est, "topic")
    >>> idata.agreement.attrs["verdict"]
    '2 of 2 topics reproduced by all 2 chains'
    """
    from gibbsjax import labels
    from gibbsjax.spec import replace_group

    if hasattr(estimates, "dims"):
        estimates = estimates.transpose("chain", component_dim, ...).values
    lp = None
    if "sample_stats" in idata.groups() and "lp" in idata.sample_stats:
        lp = idata.sample_stats["lp"].transpose("chain", "draw").values
    post = idata.posterior
    components = post[component_dim].values.tolist() if component_dim in post.coords else None
    agreement = labels.chain_agreement(
        estimates, lp=lp, rhat=component_rhat(idata, rhat_vars, component_dim),
        threshold=labels.AGREEMENT_THRESHOLD if threshold is None else threshold,
        distance=distance, component_name=component_dim, components=components)
    return replace_group(idata, "agreement", agreement.to_dataset(component_dim)), agreement


def _estimate_source(idata) -> tuple[list[int] | None, str]:
    """Which chains a model's saved estimates come from, and the rule (``estimate_chains``,
    ``estimate_rule`` attributes of its ``topics`` or ``estimates`` group)."""
    for group in ("topics", "estimates"):
        if group in idata.groups() and "estimate_chains" in idata[group].attrs:
            attrs = idata[group].attrs
            return json.loads(str(attrs["estimate_chains"])), str(attrs.get("estimate_rule", ""))
    return None, ""


def _chains(chains: list[int], total: int) -> str:
    if len(chains) == total:
        return f"all {total}"
    if len(chains) > 12:
        return f"{len(chains)} of {total}"
    return ", ".join(str(c) for c in chains) or "none"


def chains_disagree(idata) -> str | None:
    """The one decision "do the chains disagree?", shared by the reports (``gibbsjax run``,
    ``gibbsjax summary``) and the estimators' warnings.

    Chains disagree when some chain does not reproduce every component of the
    reference chain (the ``agreement`` group, :func:`add_agreement`), or when
    R-hat of ``lp`` or of an aligned component exceeds :data:`RHAT_LIMIT`.
    Returns ``None`` when they agree (or there is one chain: nothing to
    compare), else a message that starts with ``"chains disagree"`` and says
    where the estimates come from and what can help.

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> chains_disagree(to_inference_data({"m": x}, sample_stats={"lp": x})) is None
    True
    >>> chains_disagree(to_inference_data({"m": x}, sample_stats={"lp": x + np.arange(4)[:, None]}))[:15]
    'chains disagree'
    """
    from gibbsjax.labels import Agreement

    total = int(idata.posterior.sizes["chain"])
    if total < 2:
        return None
    r_lp = rhat_lp(idata)
    agreement = Agreement.from_dataset(idata.agreement) if "agreement" in idata.groups() else None
    r_comp = agreement.rhat if agreement is not None else np.full(0, np.nan)
    finite = r_comp[np.isfinite(r_comp)]
    worst = max([r_lp] * bool(np.isfinite(r_lp)) + finite.tolist(), default=float("nan"))
    modes_differ = agreement is not None and not agreement.all_agree
    if not modes_differ and not worst > RHAT_LIMIT:
        return None
    noun = f"{agreement.component_name}s" if agreement is not None else "components"
    rhat_text = f"R-hat of lp {r_lp:.3f}" + (f", of the aligned {noun} up to {finite.max():.3f}" if finite.size else "")
    source, _ = _estimate_source(idata)
    if agreement is None:
        return (f"chains disagree: {rhat_text} (above {RHAT_LIMIT}). This result has no agreement group "
                "(saved before it existed): post-process it again to see which components the chains reproduce.")
    if not modes_differ:
        return (f"chains disagree: {rhat_text} (above {RHAT_LIMIT}), although {agreement.verdict}. "
                f"The chains find the same {noun} but have not mixed yet, or (small data, overlapping {noun}) "
                "labels switch within chains: run longer (more draws) and look at the traces of lp and of "
                f"the {noun}.")
    ref = agreement.reference_chain
    missing = np.flatnonzero(~agreement.reproduced_by_all).tolist()
    labels_ = list(agreement.components) or list(range(agreement.num_components))
    name = agreement.component_name
    if source is None:
        estimates = ""
    elif source == [ref]:
        estimates = f"Estimates come from chain {ref} alone. "
    else:
        estimates = f"Estimates come from chain{'s' if len(source) > 1 else ''} {_chains(source, total)}. "
    return (
        f"chains disagree: {agreement.verdict} ({rhat_text}): the chains sit in different modes. "
        f"Reference chain {ref} is {agreement.rule}. {estimates}"
        f"Chains that reproduce every {name} of chain {ref}: {_chains(agreement.agreeing_chains, total)}; "
        f"{noun} not reproduced by every chain: {', '.join(str(labels_[i]) for i in missing)}. "
        f"Running longer rarely brings such chains together. What helps: more chains, to see which {noun} "
        f"recur (`gibbsjax plot RESULT.nc --kind agreement`); reporting only the {noun} every chain "
        f"reproduces; another number of {noun} K."
    )


def agreement_lines(idata) -> list[str]:
    """Report lines: the agreement verdict, per component its R-hat and the chains that
    reproduce it, R-hat of lp, and the :func:`chains_disagree` decision.

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(1).normal(size=(4, 200, 2))
    >>> idata = to_inference_data({"m": x}, dims={"m": ["topic"]}, sample_stats={"lp": x[..., 0]})
    >>> idata, _ = add_agreement(idata, np.full((4, 2, 3), 1 / 3), "topic", rhat_vars=["m"])
    >>> agreement_lines(idata)[0]
    'agreement: 2 of 2 topics reproduced by all 4 chains'
    """
    import textwrap

    from gibbsjax.labels import Agreement

    lines = []
    total = int(idata.posterior.sizes["chain"])
    if "agreement" in idata.groups():
        a = Agreement.from_dataset(idata.agreement)
        name = a.component_name
        lines.append(f"agreement: {a.verdict}")
        if total > 1:
            lines += textwrap.wrap(f"(reference chain {a.reference_chain}: {a.rule}; a chain reproduces a {name} "
                                   f"when its Hellinger distance to the reference chain's is at most {a.threshold:g})",
                                   width=100, initial_indent="  ", subsequent_indent="   ")
            labels_ = list(a.components) or list(range(a.num_components))
            width = max(len(name), *(len(str(c)) for c in labels_))
            lines.append(f"  {name:>{width}}   R-hat  reproduced by chains")
            for k, label in enumerate(labels_):
                chains = np.flatnonzero(a.reproduced[:, k]).tolist()
                lines.append(f"  {str(label):>{width}}  {a.rhat[k]:6.3f}  {_chains(chains, total)}")
    if total > 1:
        lines.append(f"R-hat of the log joint lp: {rhat_lp(idata):.3f}")
        problem = chains_disagree(idata)
        if problem:
            lines += textwrap.wrap(problem, width=100, initial_indent="-> ", subsequent_indent="   ")
        else:
            lines.append("-> chains agree")
    return lines
