"""Building blocks that several models' specs share for ``postprocess`` and ``report``.

One layer below the models (no model imports another): the estimates and the
report of *one-label document models* — every document has one class or
cluster (naive Bayes, the mixture of unigrams, the Bernoulli mixture) — and
number formatting for reports.

* :func:`one_label_postprocess`: undo label switching (mixtures), then store
  per-document label probabilities, posterior-mean word distributions, top
  words and accuracies in an ``estimates`` group;
* :func:`one_label_report`: the text of that group;
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
from typing import Any

import numpy as np

from gibbsjax.diagnostics import RHAT_LIMIT, rhat_lp
from gibbsjax.labels import Agreement, disagreement
# computed in gibbsjax.labels; importable here for callers not yet updated
# (models/lda.py, models/gaussian_mixture.py: add_agreement)
from gibbsjax.labels import add_agreement  # noqa: F401

__all__ = [
    "one_label_postprocess",
    "one_label_report",
    "fmt",
    "draw_mean",
    "agreement_lines",
    "chains_disagree",
]

_WORD_VARS = ("theta", "beta", "p")  # class/cluster x word (or feature) variables


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


def one_label_postprocess(idata, data, *, align: bool):
    """Align clusters (mixtures), then store per-document label probabilities, the
    posterior-mean word (feature) distributions, top words and accuracies in an
    ``estimates`` group, so that :func:`one_label_report` works from a saved file.

    With ``align``: when the word distributions are recorded per draw, draws are
    relabelled to a common reference first (within-chain switching,
    :func:`gibbsjax.labels.relabel_draws`), then chains are aligned
    (:func:`gibbsjax.labels.align_chains`); :func:`add_agreement` stores which
    clusters every chain reproduces (Hellinger distance between the chains'
    word distributions, or between their products of Bernoulli features for
    ``p``; R-hat of ``pi``), and the estimates are the mean of the chains that
    reproduce every cluster of the reference chain (one mode, never a blend;
    ``estimates.attrs["estimate_chains"]``, ``["estimate_rule"]``), which is
    every chain when they agree.  ``data`` is the model's
    :class:`~gibbsjax.conjugate.Documents` or
    :class:`~gibbsjax.conjugate.BinaryData` (``true_labels``, ``labels``, ``info``).
    """
    import xarray as xr

    from gibbsjax import evaluate, labels
    from gibbsjax.spec import replace_group

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
                perms = labels.relabel_draws(np.sqrt(np.clip(draws, 0, None)))  # Hellinger geometry
                idata = labels.permute(idata, perms, class_dim, groups=("posterior",))
            attrs["aligned"] = "per draw (labels.relabel_draws), then across chains (labels.align_chains)"
        else:
            attrs["aligned"] = "across chains (labels.align_chains on per-chain means)"
        idata, _ = labels.align_chains(idata, word_var, class_dim, distance="hellinger")
        per_chain = (idata.posterior[word_var].mean("draw") if word_var in idata.posterior
                     else idata["posterior_mean"][word_var])
        idata, agreement = labels.add_agreement(idata, per_chain, class_dim, rhat_vars=("pi",),
                                         distance="bernoulli" if word_var == "p" else "hellinger")
        chains = agreement.estimate_chains("agreeing")
        attrs["estimate_chains"] = json.dumps(chains)
        attrs["estimate_rule"] = labels.ESTIMATE_RULES["agreeing"]
    else:
        chains = None

    doc_probs = draw_mean(idata, "doc_probs", chains)
    word_mean = draw_mean(idata, word_var, chains)
    predicted = doc_probs.values.argmax(axis=1).astype(np.int32)
    truth = np.asarray(data.true_labels)
    known = np.asarray(getattr(data, "labels", np.full(truth.shape, -1)))
    hidden = (known < 0) & (truth >= 0)
    classes = [str(c) for c in doc_probs[class_dim].values]
    top = evaluate.top_words(word_mean.values, [str(w) for w in word_mean[item_dim].values], n=10)
    top_p = np.sort(word_mean.values, axis=1)[:, ::-1][:, :10]
    attrs["top_words"] = json.dumps(dict(zip(classes, top)))
    attrs["top_word_probs"] = json.dumps(dict(zip(classes, np.round(top_p, 4).tolist())))
    attrs["num_docs"] = int(truth.size)
    if np.any(known >= 0):  # naive Bayes: accuracy on the labels hidden from the sampler
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
    return replace_group(idata, "estimates", estimates)


def one_label_report(idata) -> str:
    """Top words per class/cluster and accuracy, from the ``estimates`` group."""
    if "estimates" not in idata.groups():
        return "(no estimates group: run postprocessing to get top words and accuracy)"
    est = idata.estimates
    a = est.attrs
    class_dim = str(a.get("class_dim", "class"))
    source = ""
    if "estimate_chains" in a:
        chains = json.loads(str(a["estimate_chains"]))
        source = f", chain{'s' if len(chains) > 1 else ''} {_chains(chains, int(idata.posterior.sizes['chain']))}"
    lines = [f"top words per {class_dim} (posterior mean of {a.get('word_var', '?')}{source}):"]
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
    if "agreement" in idata.groups():
        lines += agreement_lines(idata)
    return "\n".join(lines)


# ============================================================================ agreement across chains
def _chains(chains: list[int], total: int) -> str:
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
                lines.append(f"  {str(label):>{width}}  {a.rhat[k]:6.3f}  {_chains(chains, total)}")
    if total > 1:
        lines.append(f"R-hat of the log joint lp: {rhat_lp(idata):.3f}")
        problem = chains_disagree(idata)
        if problem:
            lines += textwrap.wrap(problem, width=100, initial_indent="-> ", subsequent_indent="   ")
        else:
            lines.append("-> chains agree")
    return lines
