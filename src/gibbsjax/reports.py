"""Building blocks that several models' specs share for ``postprocess`` and ``report``.

One layer below the models (no model imports another): number formatting for
reports (the one-label document models' estimates and report are in
:mod:`gibbsjax.one_label`).

* :func:`fmt`: numbers in fixed-width columns;
* the text of the agreement across chains for every model with exchangeable
  components: :func:`chains_disagree` words the one decision that the reports
  and the estimators' warnings share (:func:`gibbsjax.labels.disagreement`),
  :func:`agreement_lines` the ``agreement`` group
  (:func:`gibbsjax.labels.add_agreement`) with R-hats and that decision.

What is computed (alignment, agreement, R-hat) lives below, in
:mod:`gibbsjax.labels` and :mod:`gibbsjax.diagnostics`; this module only formats.

>>> fmt([0.5, 1.25])
'  0.500   1.250'
"""

from __future__ import annotations

import json
import textwrap

import numpy as np

from gibbsjax.diagnostics import RHAT_LIMIT, rhat_lp
from gibbsjax.labels import Agreement, disagreement

__all__ = [
    "fmt",
    "draw_mean",
    "agreement_lines",
    "chains_disagree",
    "chain_list",
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
def chain_list(chains: list[int], total: int) -> str:
    """Chains named for a report: "all 4", "chains 0, 2" style lists, or "13 of 20".

    >>> chain_list([0, 1], 2)
    'all 2'
    """
    if len(chains) == total:
        return f"all {total}"
    if len(chains) > 12:
        return f"{len(chains)} of {total}"
    return ", ".join(str(c) for c in chains) or "none"


def chains_disagree(idata) -> str | None:
    """The one decision "do the chains disagree?" (:func:`gibbsjax.labels.disagreement`) in words,
    shared by the reports (``gibbsjax run``, ``gibbsjax summary``) and the estimators' warnings.

    Returns ``None`` when the chains agree (or there is one chain: nothing to
    compare), else a message that starts with ``"chains disagree"`` and says
    where the estimates come from and what can help.

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> chains_disagree(to_inference_data({"m": x}, sample_stats={"lp": x})) is None
    True
    >>> chains_disagree(to_inference_data({"m": x}, sample_stats={"lp": x + np.arange(4)[:, None]}))[:15]
    'chains disagree'
    """
    found = disagreement(idata)
    if found is None:
        return None
    total, r_lp, finite, agreement = found.num_chains, found.rhat_lp, found.rhat_components, found.agreement
    noun = f"{agreement.component_name}s" if agreement is not None else "components"
    rhat_text = f"R-hat of lp {r_lp:.3f}" + (f", of the aligned {noun} up to {finite.max():.3f}" if finite.size else "")
    source = found.estimate_chains
    if agreement is None:
        return (f"chains disagree: {rhat_text} (above {RHAT_LIMIT}). This result has no agreement group "
                "(saved before it existed): post-process it again to see which components the chains reproduce.")
    if not found.modes_differ:
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
        estimates = f"Estimates come from chain{'s' if len(source) > 1 else ''} {chain_list(source, total)}. "
    return (
        f"chains disagree: {agreement.verdict} ({rhat_text}): the chains sit in different modes. "
        f"Reference chain {ref} is {agreement.rule}. {estimates}"
        f"Chains that reproduce every {name} of chain {ref}: {chain_list(agreement.agreeing_chains, total)}; "
        f"{noun} not reproduced by every chain: {', '.join(str(labels_[i]) for i in missing)}. "
        f"Running longer rarely brings such chains together. What helps: more chains, to see which {noun} "
        f"recur (`gibbsjax plot RESULT.nc --kind agreement`); reporting only the {noun} every chain "
        f"reproduces; another number of {noun} K."
    )


def agreement_lines(idata) -> list[str]:
    """Report lines: the agreement verdict, per component its R-hat and the chains that
    reproduce it, R-hat of lp, and the :func:`chains_disagree` decision.

    >>> from gibbsjax.diagnostics import to_inference_data
    >>> from gibbsjax.labels import add_agreement
    >>> x = np.random.default_rng(1).normal(size=(4, 200, 2))
    >>> idata = to_inference_data({"m": x}, dims={"m": ["topic"]}, sample_stats={"lp": x[..., 0]})
    >>> idata, _ = add_agreement(idata, np.full((4, 2, 3), 1 / 3), "topic", rhat_vars=["m"])
    >>> agreement_lines(idata)[0]
    'agreement: 2 of 2 topics reproduced by all 4 chains'
    """
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
                lines.append(f"  {str(label):>{width}}  {a.rhat[k]:6.3f}  {chain_list(chains, total)}")
    if total > 1:
        lines.append(f"R-hat of the log joint lp: {rhat_lp(idata):.3f}")
        problem = chains_disagree(idata)
        if problem:
            lines += textwrap.wrap(problem, width=100, initial_indent="-> ", subsequent_indent="   ")
        else:
            lines.append("-> chains agree")
    return lines
