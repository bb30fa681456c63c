"""How :class:`gibbsjax.LDA` runs the fit pipeline (:mod:`gibbsjax.pipeline`).

* its parameters, checked (:func:`check_params`), as a :class:`~gibbsjax.pipeline.Job`
  (:func:`job`): the sampler of :mod:`gibbsjax.models.lda` they name, the data of the
  documents with tokens, the settings and the extras of the LDA postprocess, the
  same :func:`gibbsjax.specs.lda.postprocess` as ``gibbsjax run`` applies;
* the parameters a ``gibbsjax run`` result of an LDA config was made with
  (:func:`params_from_run`);
* a post-processed result as the estimator's fitted attributes (:func:`fitted_attributes`),
  checked to be one (:func:`check_result`), and its words named (:func:`rename_words`).

``params`` is always the estimator's ``get_params()``.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from typing import Any

import numpy as np

from gibbsjax import diagnostics, evaluate
from gibbsjax._checks import check_int, check_seed, first_repeated
from gibbsjax.config import get_spec
from gibbsjax.corpus import Corpus
from gibbsjax.corpus.inputs import check_word_filters, is_anonymous
from gibbsjax.corpus.text import check_token_pattern
from gibbsjax.topics.estimator_base import resolve_auto
from gibbsjax.agreement import ESTIMATE_RULES, Agreement
from gibbsjax.models import lda
from gibbsjax.pipeline import Job, model_attrs
from gibbsjax.run import Settings, data_fingerprint
from gibbsjax.topics.stable import stable_topics_of, summary_rows

__all__ = ["EMPTY_CHOICES", "check_params", "alpha", "eta", "SKLEARN_NAMES", "SKLEARN_ALIASES", "settings", "fit_settings", "kernel", "hyperparameters", "sampled",
           "data", "buckets", "padded", "PADDED_ATTR", "job", "prior_theta", "num_topics", "fitted_attributes", "summary", "check_result", "rename_words", "params_from_run",
           "check_training_corpus"]

#: the choices of the estimator's ``empty``
EMPTY_CHOICES = ("keep", "drop", "error")


def _same(a, b) -> bool:
    try:
        return a is b or bool(a == b)
    except (TypeError, ValueError):  # e.g. arrays: refused by check_params
        return False


#: scikit-learn's ``LatentDirichletAllocation`` names that the estimator refuses, and what to do instead
SKLEARN_NAMES = {
    "max_iter": "give num_warmup (sweeps discarded per chain) and num_draws (draws kept per chain)",
    "verbose": "give progress (True, False or 'auto') for the progress bar, warn for the chains-disagree warning",
    "n_jobs": "the chains run side by side in one vectorised program (num_chains); devices= spreads them "
              "over several devices",
    "learning_method": "gibbsjax's LDA is not variational, it samples the posterior by Gibbs sampling "
                       "(sampler='partially_collapsed', 'collapsed' or 'uncollapsed')",
    **dict.fromkeys(("learning_decay", "learning_offset", "batch_size", "total_samples"),
                    "a setting of online variational Bayes; gibbsjax's LDA samples every document in every "
                    "sweep (no batches)"),
    "evaluate_every": "call score(X) or perplexity(X) after fit; every draw's log joint is "
                      "idata_.sample_stats['lp']",
    **dict.fromkeys(("perp_tol", "mean_change_tol"),
                    "a sampler's convergence is judged on its chains: extend(num_draws, "
                    "until='rhat<1.01,ess>400') samples until it holds"),
    "max_doc_update_iter": "transform(X, num_sweeps=...) sets the sweeps of inference on new documents",
}

#: scikit-learn's names of the estimator's arguments (``LatentDirichletAllocation``'s): alias -> ours
SKLEARN_ALIASES = {"n_components": "num_topics", "doc_topic_prior": "alpha", "topic_word_prior": "eta"}
#: the value of an argument given under neither of its names
_DEFAULTS = {"num_topics": 10, "alpha": 0.1, "eta": 0.01}


def _given(params: Mapping[str, Any], name: str):
    """The argument ``name`` given under our name or scikit-learn's (``SKLEARN_ALIASES``), or
    its default; ``ValueError`` naming both when both are given with different values."""
    alias = next(a for a, n in SKLEARN_ALIASES.items() if n == name)
    value, other = params[name], params.get(alias)
    if value is not None and other is not None and not _same(value, other):
        raise ValueError(f"{name}={value!r} and {alias}={other!r} (scikit-learn's name of {name}) "
                         "differ: give one of them")
    value = other if value is None else value
    return _DEFAULTS[name] if value is None else value


def num_topics(params: Mapping[str, Any]) -> int:
    """K from the estimator's ``num_topics`` or its scikit-learn name ``n_components``.

    Parameters
    ----------
    params : mapping
        The estimator's parameters (``get_params()``): ``num_topics`` and, optionally,
        ``n_components``, each None when not given.

    Returns
    -------
    int
        The one given, or 10 when neither is.

    Raises
    ------
    ValueError
        Naming both, when both are given with different values; naming them when K is
        not an integer >= 1.

    Examples
    --------
    >>> num_topics({"num_topics": None, "n_components": 3}), num_topics({"num_topics": None})
    (3, 10)
    """
    return lda.check_num_topics(_given(params, "num_topics"), "num_topics (n_components)")


def alpha(params: Mapping[str, Any]):
    """α from the estimator's ``alpha`` or its scikit-learn name ``doc_topic_prior``.

    Parameters
    ----------
    params : mapping
        The estimator's parameters: ``alpha`` and, optionally, ``doc_topic_prior``, each
        None when not given.

    Returns
    -------
    float
        The one given, or 0.1 when neither is (scikit-learn's default is 1/K).

    Raises
    ------
    ValueError
        Naming both, when both are given with different values.

    Examples
    --------
    >>> alpha({"alpha": None, "doc_topic_prior": 0.5}), alpha({"alpha": None})
    (0.5, 0.1)
    """
    return _given(params, "alpha")


def eta(params: Mapping[str, Any]):
    """η from the estimator's ``eta`` or its scikit-learn name ``topic_word_prior`` (0.01 when
    neither is given), as :func:`alpha` gives α.

    >>> eta({"eta": 0.05, "topic_word_prior": 0.05}), eta({"eta": None})
    (0.05, 0.01)
    """
    return _given(params, "eta")


def check_params(params: Mapping[str, Any]) -> None:
    """Check the arguments without changing them (``ValueError`` naming the argument).

    Parameters
    ----------
    params : mapping of str to object
        Every parameter of :class:`gibbsjax.topics.estimators.LDA`, as its ``get_params()`` gives them.

    Raises
    ------
    ValueError
        For the first bad argument, naming it.

    Examples
    --------
    >>> from gibbsjax.topics.estimators import LDA
    >>> params = LDA(num_topics=2).get_params()
    >>> check_params(params)   # fine: nothing happens
    >>> check_params({**params, "num_topics": 0})
    Traceback (most recent call last):
    ...
    ValueError: num_topics (n_components) must be an integer >= 1, got 0
    """
    num_topics(params)
    alpha(params), eta(params)
    sampler = params["sampler"]
    if not isinstance(sampler, str) or (sampler != "auto" and sampler not in lda.SAMPLERS):
        raise ValueError(f"sampler must be one of {['auto', *sorted(lda.SAMPLERS)]}, got {sampler!r}")
    kernel(params)  # the factory checks α, η and the learned-prior options
    if params["seed"] is not None and params["random_state"] is not None:
        raise ValueError("give seed or random_state (scikit-learn's name for it), not both")
    rs = params["random_state"]
    if rs is not None and not isinstance(rs, (np.random.RandomState, np.random.Generator)):
        check_seed("random_state", rs)
    for name in ("progress", "warn"):
        value = params[name]
        if not (isinstance(value, (bool, np.bool_)) or (isinstance(value, str) and value == "auto")):
            raise ValueError(f"{name} must be True, False or 'auto', got {value!r}")
    settings(params)  # Settings checks chains, draws, thin, seed, progress, chunk_size, save_warmup
    if params["num_lanes"] is not None:
        check_int("num_lanes", params["num_lanes"], 1)
    if not isinstance(params["chains"], str) or params["chains"] not in ESTIMATE_RULES:
        raise ValueError(f"chains must be one of {tuple(ESTIMATE_RULES)}, got {params['chains']!r}")
    if not isinstance(params["empty"], str) or params["empty"] not in EMPTY_CHOICES:
        raise ValueError(f"empty must be one of {EMPTY_CHOICES}, got {params['empty']!r}")
    check_word_filters(params)  # stop_words, min_df, max_df: scikit-learn's CountVectorizer's meaning
    if not isinstance(params["token_pattern"], str):  # (saved as text with the model)
        raise ValueError(f"token_pattern must be a regular expression (a str), got {params['token_pattern']!r}")
    check_token_pattern(params["token_pattern"])


def settings(params: Mapping[str, Any]) -> Settings:
    """The :class:`gibbsjax.run.Settings` a fit runs with (a RandomState or
    Generator ``random_state`` shows as ``seed=None``: it gives a seed per fit; ``progress="auto"``
    is on except inside scikit-learn's model selection,
    :func:`gibbsjax.topics.estimator_base.resolve_auto`)."""
    seed = params["seed"]
    rs = params["random_state"]
    if seed is None and rs is not None and not isinstance(rs, (np.random.RandomState, np.random.Generator)):
        seed = rs
    return Settings(num_chains=params["num_chains"], num_warmup=params["num_warmup"],
                    num_draws=params["num_draws"], thin=params["thin"], seed=seed,
                    progress=resolve_auto(params["progress"]),
                    chunk_size=params["chunk_size"], devices=params["devices"], shard=params["shard"],
                    save_warmup=params["save_warmup"],
                    # topics, not az.loo: the per-document log likelihood (a pass over tokens × topics per
                    # draw) is left out of the estimator's fits; gibbsjax.sample records it
                    log_likelihood=False)


def fit_settings(params: Mapping[str, Any]) -> Settings:
    """:func:`settings`, a RandomState or Generator ``random_state`` asked for this fit's seed."""
    out = settings(params)
    rs = params["random_state"]
    if isinstance(rs, np.random.RandomState):
        out = out.replace(seed=int(rs.randint(np.iinfo(np.int32).max)))
    elif isinstance(rs, np.random.Generator):
        out = out.replace(seed=int(rs.integers(np.iinfo(np.int32).max)))
    return out


def sampler_name(params: Mapping[str, Any]) -> str:
    """The sampler a fit runs: ``params["sampler"]``, or for ``"auto"`` the collapsed sampler where its
    native sweep runs (a CPU with the native kernels, one device, no φ recorded per draw with fixed
    priors: one chain per thread, each token seeing every earlier update), else the partially
    collapsed one (documents in parallel: a GPU, several devices, or no native kernels).

    >>> from gibbsjax import LDA
    >>> sampler_name(LDA(num_topics=3, sampler="uncollapsed").get_params())
    'uncollapsed'
    >>> sampler_name(LDA(num_topics=3, devices=2).get_params())
    'partially_collapsed'
    """
    name = params["sampler"]
    if name != "auto":
        return name
    if params["devices"] not in (None, 1):
        return "partially_collapsed"
    fixed = params["learn_alpha"] == "fixed" and not params["learn_eta"]
    needs_phi = fixed and params["record_phi"] is not None
    native_sweep = lda.resolve_collapsed_z_update("auto", needs_phi=needs_phi) == "native"
    return "collapsed" if native_sweep else "partially_collapsed"


def kernel(params: Mapping[str, Any], corpus: Corpus | None = None):
    """The sampler (:mod:`gibbsjax.models.lda`) the parameters name (:func:`sampler_name`); with ``corpus``,
    its ``record_theta`` names the sampled documents (:func:`_record_options`)."""
    return lda.SAMPLERS[sampler_name(params)](num_topics(params), alpha=alpha(params), eta=eta(params),
                                           **_prior_options(params), **_record_options(params, corpus))


def _record_options(params: Mapping[str, Any], corpus: Corpus | None = None) -> dict[str, Any]:
    """``record_phi`` / ``record_theta`` for the factory; with ``corpus``, document
    indices of ``record_theta`` mapped to the documents that are sampled (those with
    tokens), or ``ValueError`` naming an empty one."""
    out = {k: params[k] for k in ("record_phi", "record_theta") if params[k] is not None}
    theta = out.get("record_theta")
    if corpus is not None and theta is not None and not np.all(corpus.doc_lengths > 0):
        has_tokens = corpus.doc_lengths > 0
        if theta == "all":
            out["record_theta"] = "all"
        else:
            ids = np.arange(theta) if isinstance(theta, (int, np.integer)) else np.asarray(theta, np.int64)
            if ids.size and (ids.min() < 0 or ids.max() >= corpus.num_docs):
                raise ValueError(f"record_theta has document index {int(ids.max())}, but X has "
                                 f"{corpus.num_docs} documents")
            empty = ids[~has_tokens[ids]]
            if empty.size:
                raise ValueError(f"record_theta names document {int(empty[0])}, which has no tokens "
                                 "(its θ is its prior, not sampled)")
            out["record_theta"] = (np.cumsum(has_tokens) - 1)[ids].tolist()
    return out


def _prior_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The learned-prior arguments of the kernel factory (none when both are fixed,
    so a plain model keeps the factory's plain signature in its results)."""
    if params["learn_alpha"] == "fixed" and not params["learn_eta"]:
        if params["asymmetric_alpha"]:  # refused by the factory, with its message
            return {"learn_alpha": params["learn_alpha"], "asymmetric_alpha": params["asymmetric_alpha"]}
        return {}
    return {"learn_alpha": params["learn_alpha"], "asymmetric_alpha": params["asymmetric_alpha"],
            "learn_eta": params["learn_eta"], "alpha_prior": tuple(params["alpha_prior"]),
            "eta_prior": tuple(params["eta_prior"])}


def hyperparameters(params: Mapping[str, Any]) -> dict:
    """The hyperparameters a fit records (``model_<name>`` attributes and ``hyperparameters``)."""
    out = {"K": num_topics(params), "alpha": float(alpha(params)), "eta": float(eta(params))}
    for k, v in {**_prior_options(params), **_record_options(params)}.items():
        out[k] = np.asarray(v).tolist() if isinstance(v, (tuple, list, np.ndarray)) else v
    return out


def sampled(corpus: Corpus) -> Corpus:
    """The documents with tokens: the empty ones take no part in sampling."""
    lengths = corpus.doc_lengths
    return corpus if np.all(lengths > 0) else corpus.subset(lengths > 0)


def data(params: Mapping[str, Any], corpus: Corpus, bucket: bool | None = None) -> lda.LDAData:
    """The sampler's data (:func:`gibbsjax.models.lda.data`) of the documents of ``corpus`` with tokens,
    padded to bucket sizes with ``bucket``; by default where a new fit takes the native CPU kernels
    (:func:`buckets`), for a result as it was sampled (:func:`padded`).  The collapsed sampler visits
    one token after another, so its documents go into one lane (no lane of padding to pass over)."""
    if bucket is None:
        bucket = buckets(params)
    lanes = params["num_lanes"]
    if lanes is None and sampler_name(params) == "collapsed":
        lanes = 1  # one sequence of tokens: every slot of another lane would be padding it passes over
    return lda.data(sampled(corpus), num_lanes=lanes, bucket=bucket)


#: the result attribute that says a fit's data were padded to bucket sizes (1) or not (0, or absent)
PADDED_ATTR = "data_padded"


def padded(idata) -> bool:
    """Whether the result ``idata`` was sampled on data padded to bucket sizes (its ``data_padded``
    attribute; a ``gibbsjax run`` result: no), so that a resume or a check of its corpus packs the
    corpus the same way.

    >>> import arviz as az
    >>> padded(az.InferenceData(attrs={"data_padded": 1})), padded(az.InferenceData())
    (True, False)
    """
    return bool(int(getattr(idata, "attrs", {}).get(PADDED_ATTR, 0)))


def buckets(params: Mapping[str, Any]) -> bool:
    """Whether a fit pads its data to bucket sizes (``gibbsjax.models.lda.data(bucket=True)``), so that
    corpora of nearby sizes (folds of a cross-validation, a refit on more documents) share one compiled
    program: where the native CPU kernels run the collapsed or partially collapsed sampler with fixed priors on one
    device (their cost does not grow with empty slots) and the lanes are not chosen by hand.  The draws are the same
    either way.

    >>> from gibbsjax import LDA
    >>> buckets(LDA(num_topics=3, num_lanes=8).get_params())
    False
    """
    fixed = params["learn_alpha"] == "fixed" and not params["learn_eta"]
    one_device = params["devices"] in (None, 1)
    sampler = sampler_name(params)
    if not (fixed and one_device and params["num_lanes"] is None):
        return False
    if sampler == "collapsed":
        return lda.resolve_collapsed_z_update("auto", needs_phi=params["record_phi"] is not None) == "native"
    return sampler == "partially_collapsed" and lda.resolve_z_update("auto", K=num_topics(params)) == "native"


def job(params: Mapping[str, Any], corpus: Corpus, *, fit: bool = True, bucket: bool | None = None) -> Job:
    """A fit of ``corpus`` (every input document, empty ones kept) as a pipeline job:
    the kernel, the data of the documents with tokens (padded with ``bucket``, by default as
    :func:`buckets` says), the extras of the LDA postprocess and the attributes the result
    records; with ``fit``, the settings (a RandomState ``random_state`` asked for the seed),
    else none (a job to resume: pass ``bucket=padded(result)``)."""
    bucket = buckets(params) if bucket is None else bool(bucket)
    arrays = data(params, corpus, bucket)
    hyper = hyperparameters(params)
    sampler = kernel(params, corpus)
    return Job(get_spec(sampler.name), sampler, arrays, fit_settings(params) if fit else None,
               {"corpus": sampled(corpus), "hyperparameters": hyper, "chains": params["chains"]},
               {**model_attrs(sampler.name, hyper), PADDED_ATTR: int(bucket)})


def prior_theta(alpha, num_topics: int) -> np.ndarray:
    """E[θ_d] under the prior Dir(α): an empty document's posterior mean."""
    a = np.broadcast_to(np.asarray(alpha, np.float64), (int(num_topics),))
    return a / a.sum()


def fitted_attributes(idata, corpus: Corpus | None, vocab, alpha, num_topics: int) -> dict[str, Any]:
    """The fitted attributes (``idata_``, ``alpha_``, ..., ``doc_topic_``) from a post-processed
    result (a fit's or a file's); ``alpha`` is the estimator's, used unless α was learned."""
    out: dict[str, Any] = {"idata_": idata}
    attrs = idata.topics.attrs
    out["alpha_"] = np.asarray(json.loads(str(attrs["learned_alpha"]))) if "learned_alpha" in attrs else None
    out["eta_"] = float(json.loads(str(attrs["learned_eta"]))) if "learned_eta" in attrs else None
    out["permutations_"] = idata.topics["permutation"].values
    out["corpus_"] = corpus
    out["vocab_"] = tuple(vocab)
    out["n_features_in_"] = len(out["vocab_"])
    if not is_anonymous(out["vocab_"]):  # scikit-learn's name of the words, when they are known
        out["feature_names_in_"] = np.asarray(out["vocab_"], dtype=object)
    out["agreement_"] = Agreement.from_dataset(idata.agreement)
    out["stable_topics_"] = stable_topics_of(idata)  # read back, or computed for a file written before it
    out["estimate_chains_"] = json.loads(str(idata.topics.attrs["estimate_chains"]))
    means = idata.posterior_mean
    out["topic_word_per_chain_"] = means["topic_word"].transpose("chain", "topic", "word").values
    per_chain = means["doc_topic"].transpose("chain", "document", "topic").values
    if corpus is not None and corpus.num_docs != per_chain.shape[1]:
        # empty documents kept (empty="keep"): not sampled, their θ is the prior mean
        has_tokens = corpus.doc_lengths > 0
        if int(has_tokens.sum()) != per_chain.shape[1]:
            raise ValueError(f"the result has θ for {per_chain.shape[1]} documents; the corpus has "
                             f"{int(has_tokens.sum())} with tokens")
        theta = prior_theta(alpha if out["alpha_"] is None else out["alpha_"], num_topics)
        full = np.broadcast_to(theta.astype(per_chain.dtype),
                               (per_chain.shape[0], corpus.num_docs, per_chain.shape[2])).copy()
        full[:, has_tokens] = per_chain
        per_chain = full
    out["doc_topic_per_chain_"] = per_chain
    out["topic_word_"] = idata.topics["topic_word"].values
    out["doc_topic_"] = per_chain[out["estimate_chains_"]].mean(axis=0)
    return out


def summary(idata):
    """:func:`gibbsjax.diagnostics.summary` of a fit (lp, each aligned topic's share of tokens),
    then a row per stable topic (:func:`gibbsjax.topics.stable.summary_rows`: its share of tokens over
    the chains that hold it)."""
    import pandas as pd

    table = diagnostics.summary(idata)
    if "stable_topics" not in idata.groups():
        return table
    return pd.concat([table, summary_rows(idata)])


def check_result(idata, path) -> None:
    """``ValueError`` unless ``idata`` (read from ``path``) is a post-processed LDA result."""
    attrs = idata.attrs
    if not str(attrs.get("model", "")).startswith("lda.") or "posterior_mean" not in idata.groups():
        raise ValueError(f"{path} is not an LDA result (attrs['model'] = {attrs.get('model')!r})")
    if "topics" not in idata.groups() or "agreement" not in idata.groups():
        raise ValueError(f"{path} holds raw draws that were never post-processed; run "
                         f"`gibbsjax resume {path} --draws 0` first")


def rename_words(idata, corpus: Corpus | None, vocab: tuple, words: tuple, topic_word) -> Corpus | None:
    """Name the words ``vocab`` of a model fitted on a matrix without names ``words``: in
    ``idata`` (changed in place) and ``corpus`` (returned renamed); ``ValueError`` when
    ``words`` do not fit or the model already knows its words."""
    if len(words) != len(vocab):
        raise ValueError(f"vocab has {len(words)} words; the model has {len(vocab)}")
    if len(set(words)) != len(words):
        word, first, second = first_repeated(words)
        raise ValueError(f"vocab has the word {word!r} twice (vocab[{first}] and vocab[{second}])")
    if words == vocab:
        return corpus
    if not is_anonymous(vocab):
        raise ValueError("this model already knows its words (vocab_); set_vocab names those of a model "
                         "fitted on a matrix without vocab")
    c = corpus
    if c is not None:
        corpus = Corpus(c.tokens, c.doc_offsets, words, c.doc_names, c.labels, c.label_names)
    idata.posterior_mean = idata.posterior_mean.assign_coords(word=list(words))
    topics = idata.topics
    if "top_words" in topics.attrs:
        topics.attrs["top_words"] = json.dumps(evaluate.top_words(topic_word, words, 10))
    return corpus


def params_from_run(idata) -> dict[str, Any]:
    """Constructor arguments from the attributes of a ``gibbsjax run`` result."""
    a = idata.attrs
    rule = str(idata.topics.attrs.get("estimate_rule", ""))
    chains = next((k for k, text in ESTIMATE_RULES.items() if text == rule), "best")
    num_lanes = None
    if "config_toml" in a:
        try:
            num_lanes = tomllib.loads(str(a["config_toml"])).get("data", {}).get("num_lanes")
        except tomllib.TOMLDecodeError:
            num_lanes = None
    try:
        hyper = json.loads(str(a.get("hyperparameters", "{}")))
    except json.JSONDecodeError:
        hyper = {}
    priors = {k: hyper[k] for k in ("learn_alpha", "asymmetric_alpha", "learn_eta", "alpha_prior", "eta_prior",
                                    "record_phi", "record_theta") if k in hyper}
    return {
        **priors,
        "num_topics": int(a["model_K"]), "alpha": float(a["model_alpha"]), "eta": float(a["model_eta"]),
        "sampler": str(a["model"]).removeprefix("lda."), "num_chains": int(a["num_chains"]),
        "num_warmup": int(a["num_warmup"]), "num_draws": max(int(a.get("num_draws_requested", 1)), 1),
        "thin": int(a.get("thin", 1)), "seed": int(a["seed"]) if "seed" in a else None,
        "num_lanes": num_lanes, "chains": chains, "save_warmup": bool(int(a.get("save_warmup", 0))),
    }


def check_training_corpus(params: Mapping[str, Any], corpus, idata, vocab) -> Corpus:
    """``corpus``, checked to be the training corpus of the ``gibbsjax run`` result ``idata``."""
    if not isinstance(corpus, Corpus):
        raise ValueError(f"corpus must be a gibbsjax.corpus.Corpus, got {type(corpus).__name__}")
    if corpus.vocab != tuple(vocab):
        raise ValueError("corpus has another vocabulary than the result's; pass the training corpus")
    stored = str(idata.attrs.get("data_sha256", ""))
    if stored and data_fingerprint(data(params, corpus, padded(idata))) != stored:
        raise ValueError("corpus differs from the one this result was sampled on (data_sha256 does not "
                         "match); pass the training part of the config's data")
    return corpus
