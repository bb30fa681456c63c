"""The one-label document models' post-processing and report (naive Bayes and the mixtures) (:mod:`gibbsjax.models.one_label`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from gibbsjax import evaluate, reports
from gibbsjax import agreement as ag
from gibbsjax import labels as lb
from gibbsjax.spec import replace_group

# ============================================================================ post-processing and report
_WORD_VARS = ("theta", "beta", "p")  # class/cluster x word (or feature) variables


def one_label_postprocess(idata, data, *, align: bool):
    """Align clusters (mixtures), then store per-document label probabilities, the
    posterior-mean word (feature) distributions, top words and accuracies in an
    ``estimates`` group, so that :func:`one_label_report` works from a saved file.

    With ``align``: when the word distributions are recorded per draw, draws are
    relabelled to a common reference first (within-chain switching,
    :func:`gibbsjax.labels.relabel_draws`), then chains are aligned
    (:func:`gibbsjax.labels.align_chains`); :func:`gibbsjax.agreement.add_agreement` stores which
    clusters every chain reproduces (Hellinger distance between the chains'
    word distributions, or between their products of Bernoulli features for
    ``p``; R-hat of ``pi``), and the estimates are the mean of the chains that
    reproduce every cluster of the reference chain (one mode, never a blend;
    ``estimates.attrs["estimate_chains"]``, ``["estimate_rule"]``), which is
    every chain when they agree.  ``data`` is the model's :class:`Documents` or
    :class:`BinaryData` (``true_labels``, ``labels``, ``info``).
    """
    import xarray as xr

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
                perms = lb.relabel_draws(np.sqrt(np.clip(draws, 0, None)))  # Hellinger geometry
                idata = lb.permute(idata, perms, class_dim, groups=("posterior",))
            attrs["aligned"] = "per draw (labels.relabel_draws), then across chains (labels.align_chains)"
        else:
            attrs["aligned"] = "across chains (labels.align_chains on per-chain means)"
        idata, _ = lb.align_chains(idata, word_var, class_dim, distance="hellinger")
        per_chain = (idata.posterior[word_var].mean("draw") if word_var in idata.posterior
                     else idata["posterior_mean"][word_var])
        idata, agreement = ag.add_agreement(idata, per_chain, class_dim, rhat_vars=("pi",),
                                         distance="bernoulli" if word_var == "p" else "hellinger")
        chains = agreement.estimate_chains("agreeing")
        attrs["estimate_chains"] = json.dumps(chains)
        attrs["estimate_rule"] = ag.ESTIMATE_RULES["agreeing"]
    else:
        chains = None

    doc_probs = reports.draw_mean(idata, "doc_probs", chains)
    word_mean = reports.draw_mean(idata, word_var, chains)
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
            "predicted": (("document",), predicted),
            "true_label": (("document",), truth.astype(np.int32)),
            "label_hidden": (("document",), hidden.astype(np.int8)),
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
        total = int(idata.posterior.sizes["chain"])
        source = f", chain{'s' if len(chains) > 1 else ''} {reports.chain_list(chains, total)}"
    lines = [f"top words per {class_dim} (posterior mean of {a.get('word_var', '?')}{source}):"]
    top = json.loads(str(a.get("top_words", "{}")))
    names = json.loads(str(a["cluster_labels"])) if "cluster_labels" in a else {}
    probs = json.loads(str(a.get("top_word_probs", "{}")))
    share = est["doc_probs"].mean("document").values
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
        lines += reports.agreement_lines(idata)
    return "\n".join(lines)
