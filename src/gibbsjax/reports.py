"""Building blocks that several models' specs share for ``postprocess`` and ``report``.

One layer below the models (no model imports another): number formatting for
reports (the one-label document models' estimates and report are in
:mod:`gibbsjax.models.one_label`).

* :func:`fmt`: numbers in fixed-width columns;
* the text of the agreement across chains for every model with exchangeable
  components: :func:`chains_disagree` words the one decision that the reports
  and the estimators' warnings share (:func:`gibbsjax.agreement.disagreement`) in
  full, :func:`disagreement_line` in one line (the warning
  :class:`ChainDisagreementWarning` that :func:`warn_if_chains_disagree` gives,
  and ``gibbsjax run --strict``), :func:`agreement_lines` the ``agreement``
  group (:func:`gibbsjax.agreement.add_agreement`) with R-hats and that decision,
  :func:`verdict_line` that decision in one report line.

What is computed (alignment, agreement, R-hat) lives below, in
:mod:`gibbsjax.labels` and :mod:`gibbsjax.diagnostics`; this module only formats.

>>> fmt([0.5, 1.25])
'  0.500   1.250'
"""

from __future__ import annotations

import json
import textwrap
import warnings

import numpy as np

from gibbsjax.diagnostics import RHAT_LIMIT, rhat_lp
from gibbsjax.agreement import Agreement, disagreement

__all__ = [
    "fmt",
    "draw_mean",
    "agreement_lines",
    "verdict_line",
    "chains_disagree",
    "chain_list",
    "ChainDisagreementWarning",
    "disagreement_line",
    "warn_if_chains_disagree",
]


def fmt(values) -> str:
    """Numbers as fixed-width ``%7.3f`` columns separated by a space.

    Parameters
    ----------
    values : float or array_like of float
        The numbers (flattened in order).

    Returns
    -------
    str
        The formatted numbers.

    Examples
    --------
    >>> fmt(1.0)
    '  1.000'
    """
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return " ".join(f"{v:7.3f}" for v in arr)


def draw_mean(idata, name: str, chains=None):
    """Posterior mean of ``name`` over chains and draws.

    Taken from ``posterior``, or, for a quantity that only the kernel accumulates,
    from the per-chain means of ``posterior_mean``.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    name : str
        A variable of ``posterior`` or ``posterior_mean``.
    chains : sequence of int, optional
        The chains to average (positions; default all).

    Returns
    -------
    xarray.DataArray
        The mean, without the chain and draw dimensions.

    Examples
    --------
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
    """Chains named for a report: "all 4", "0, 2" style lists, or "13 of 20".

    Parameters
    ----------
    chains : list of int
        The chains to name.
    total : int
        The number of chains of the fit.

    Returns
    -------
    str
        ``"all <total>"`` when every chain is listed, ``"<n> of <total>"`` for
        more than 12 chains, else the chains separated by commas (``"none"``
        when empty).

    Examples
    --------
    >>> chain_list([0, 1], 2)
    'all 2'
    """
    if len(chains) == total:
        return f"all {total}"
    if len(chains) > 12:
        return f"{len(chains)} of {total}"
    return ", ".join(str(c) for c in chains) or "none"


def chains_disagree(idata) -> str | None:
    """The one decision "do the chains disagree?" (:func:`gibbsjax.agreement.disagreement`) in words.

    Shared by the reports (``gibbsjax run``, ``gibbsjax summary``) and the
    estimators' warnings.

    Parameters
    ----------
    idata : arviz.InferenceData
        As in :func:`gibbsjax.agreement.disagreement`.

    Returns
    -------
    str or None
        ``None`` when the chains agree (or there is one chain: nothing to
        compare), else a message that starts with ``"chains disagree"`` and says
        where the estimates come from and what can help.

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> idata = to_inference_data({"m": x}, sample_stats={"lp": x})
    >>> chains_disagree(idata) is None
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
        f"Running longer rarely brings such chains together. What helps: {_what_helps(idata, noun)}"
    )


def _what_helps(idata, noun: str) -> str:
    """The advice that ends :func:`chains_disagree`: with a ``stable_topics`` group (LDA), rely
    on the stable topics and choose K by stability; otherwise look at which components recur."""
    if "stable_topics" in idata.groups():
        return (f"rely on the stable {noun} (held by most chains: the table 'stable topics', "
                "`gibbsjax plot RESULT.nc --kind stable`; more chains make it surer); choose K by "
                "stability (`gibbsjax choose-k CONFIG --K ...`).")
    return (f"more chains, to see which {noun} recur (`gibbsjax plot RESULT.nc --kind agreement`); "
            f"reporting only the {noun} every chain reproduces; another number of {noun} K.")


class ChainDisagreementWarning(UserWarning):
    """The chains of a fit disagree (:func:`gibbsjax.agreement.disagreement`).

    Exported as ``gibbsjax.ChainDisagreementWarning``, so that it can be filtered:
    ``warnings.filterwarnings("ignore", category=gibbsjax.ChainDisagreementWarning)``
    (or ``LDA(..., warn=False)`` for one model).

    Parameters
    ----------
    message : str
        One line, :func:`disagreement_line`.
    details : str, optional
        The full explanation (:func:`chains_disagree`, what the report of
        ``gibbsjax run`` prints); ``message`` when not given.  Kept as the
        attribute ``details``.

    Examples
    --------
    >>> w = ChainDisagreementWarning("chains disagree: ...", details="chains disagree: ... What helps: ...")
    >>> str(w), w.details.endswith("What helps: ..."), issubclass(ChainDisagreementWarning, UserWarning)
    ('chains disagree: ...', True, True)
    """

    def __init__(self, message: str, details: str | None = None):
        super().__init__(message, message if details is None else details)  # (both survive pickling)
        self.details = self.args[1]

    def __str__(self) -> str:
        return str(self.args[0])


#: where :func:`disagreement_line` points an estimator's user to
ESTIMATOR_HINT = "see model.agreement_ and model.summary(); warn=False silences this"


def disagreement_line(idata, hint: str = ESTIMATOR_HINT) -> str | None:
    """The :func:`chains_disagree` decision in one line (no newline).

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    hint : str, default ESTIMATOR_HINT
        Where to look, appended after a ``;``.

    Returns
    -------
    str or None
        The verdict, R-hat of lp, where the estimates come from, then ``hint``;
        ``None`` when the chains agree (or there is one chain).

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 500))
    >>> disagreement_line(to_inference_data({"m": x}, sample_stats={"lp": x})) is None
    True
    >>> line = disagreement_line(to_inference_data({"m": x}, sample_stats={"lp": x + np.arange(4)[:, None]}), "see X")
    >>> line.startswith("chains disagree: R-hat of lp 1."), line.endswith(" (above 1.01); see X")
    (True, True)
    """
    found = disagreement(idata)
    if found is None:
        return None
    agreement, finite = found.agreement, found.rhat_components
    rhat_text = f"R-hat of lp {found.rhat_lp:.3f}"
    if agreement is None:
        text = f"{rhat_text} (above {RHAT_LIMIT})"
    elif not found.modes_differ:
        if finite.size and not found.rhat_lp > RHAT_LIMIT:
            rhat_text += f", of the aligned {agreement.component_name}s up to {finite.max():.3f}"
        text = f"{rhat_text} (above {RHAT_LIMIT}) although {agreement.verdict}: not mixed yet, run longer"
    else:
        text = f"{agreement.verdict} ({rhat_text})"
        source = found.estimate_chains
        if source:
            text += (f"; estimates from chain{'s' if len(source) > 1 else ''} "
                     f"{chain_list(source, found.num_chains)}")
    return " ".join(f"chains disagree: {text}; {hint}".split())


def warn_if_chains_disagree(idata, *, stacklevel: int = 2) -> bool:
    """Warn (:class:`ChainDisagreementWarning`, one line) when the chains of ``idata`` disagree.

    The warning's ``details`` hold the full :func:`chains_disagree` text.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    stacklevel : int, default 2
        As for :func:`warnings.warn`, counted from the caller.

    Returns
    -------
    bool
        Whether it warned.

    Examples
    --------
    >>> import warnings
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_if_chains_disagree(to_inference_data({"m": x}, sample_stats={"lp": x + np.arange(4)[:, None]}))
    True
    >>> caught[0].category.__name__, "\\n" in str(caught[0].message)
    ('ChainDisagreementWarning', False)
    """
    line = disagreement_line(idata)
    if line is None:
        return False
    warnings.warn(ChainDisagreementWarning(line, chains_disagree(idata)), stacklevel=stacklevel + 1)
    return True


def agreement_lines(idata) -> list[str]:
    """Report lines on the agreement of the chains.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result, with or without an ``agreement`` group
        (:func:`gibbsjax.agreement.add_agreement`).

    Returns
    -------
    list of str
        The agreement verdict, per component its R-hat and the chains that
        reproduce it (with an ``agreement`` group), then, with more than one
        chain, R-hat of lp and the :func:`chains_disagree` decision.

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> from gibbsjax.agreement import add_agreement
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


def verdict_line(idata, rely_on: str | None = None) -> str | None:
    """The :func:`chains_disagree` decision as one report line, ``"-> chains agree"`` or
    ``"-> chains disagree: ..."`` with why in a few words.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result.
    rely_on : str, optional
        What to rely on when the chains sit in different modes (e.g. ``"the stable
        topics above"``); default: the components every chain reproduces.

    Returns
    -------
    str or None
        The line; ``None`` for a single chain (nothing to compare).

    Examples
    --------
    >>> from gibbsjax.diagnostics import to_inference_data
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> verdict_line(to_inference_data({"m": x}, sample_stats={"lp": x}))
    '-> chains agree'
    >>> verdict_line(to_inference_data({"m": x}, sample_stats={"lp": x + np.arange(4)[:, None]}))
    '-> chains disagree: R-hat of lp 1.537 (above 1.01)'
    """
    if int(idata.posterior.sizes["chain"]) < 2:
        return None
    found = disagreement(idata)
    if found is None:
        return "-> chains agree"
    agreement = found.agreement
    if agreement is None:
        return f"-> chains disagree: R-hat of lp {found.rhat_lp:.3f} (above {RHAT_LIMIT})"
    noun = f"{agreement.component_name}s"
    if not found.modes_differ:
        return f"-> chains disagree: they find the same {noun} but have not mixed yet; run longer"
    source = found.estimate_chains
    estimates = (f" (estimates from chain{'s' if len(source) > 1 else ''} {chain_list(source, found.num_chains)})"
                 if source else "")
    rely = rely_on or f"the {noun} every chain reproduces"
    return f"-> chains disagree: they sit in different modes{estimates}; rely on {rely}"
