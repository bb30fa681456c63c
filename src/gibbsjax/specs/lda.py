"""The LDA models' specs: their ``[data]`` readers, post-processing, report, SBC cases and θ draws.

:func:`postprocess` turns a run's raw draws into the result ``gibbsjax run`` and
:class:`gibbsjax.LDA` keep (topics aligned across chains, the chains' agreement, the
estimates of one mode with their top words, coherence and held-out perplexity);
:func:`report` prints it, answer first, and :func:`details` the tables behind it; :data:`SPECS` hands both, with the ``[data]`` reader, to the
config registry.
"""

from __future__ import annotations

import json

import jax
import numpy as np

from gibbsjax import evaluate
from gibbsjax.agreement import ESTIMATE_RULES, reference_chain
from gibbsjax.labels import align_chains
from gibbsjax.models.lda.shard import from_parts
from gibbsjax.models.lda.inference import heldout_perplexity
from gibbsjax.models.lda.kernels import SAMPLERS
from gibbsjax.models.lda.layout import data
from gibbsjax.agreement import add_agreement
from gibbsjax.diagnostics import rhat_lp
from gibbsjax.reports import agreement_lines, verdict_line
from gibbsjax.sources import is_number, read_corpus
from gibbsjax.topics.stable import add_stable_topics, report_lines, stable_topics_of
from gibbsjax.spec import ConfigError, DataWithExtras, ModelSpec, replace_group

__all__ = ["theta_draws", "config_data_by_process", "postprocess", "report", "details", "SPECS"]


def theta_draws(concentration, seed=0) -> np.ndarray:
    """θ_d ~ Dir(``concentration``), one draw per entry of the leading axes.

    Float64, normalised gamma draws (NumPy, on the host): what :func:`postprocess` makes
    of a recorded ``theta_concentration`` (n_d· + α at each draw).

    Parameters
    ----------
    concentration : array_like
        (..., K) positive concentrations.
    seed : int or numpy.random.Generator or None, default 0
        Anything ``numpy.random.default_rng`` takes.

    Returns
    -------
    numpy.ndarray
        (..., K) float64 draws, each row summing to 1.

    Raises
    ------
    ValueError
        For a concentration that is not finite and positive (the error names it).

    Examples
    --------
    >>> theta_draws(np.array([[[1.0, 2.0, 3.0]]]), seed=1).sum(-1).round(6).tolist()
    [[1.0]]
    """
    conc = np.asarray(concentration, np.float64)
    if conc.size and (not np.all(np.isfinite(conc)) or np.any(conc <= 0)):
        raise ValueError("theta concentrations must be finite and > 0")
    g = np.random.default_rng(seed).standard_gamma(conc)
    total = g.sum(axis=-1, keepdims=True)
    # a tiny concentration can underflow every gamma draw of a row to 0: the largest log-gamma wins
    with np.errstate(invalid="ignore", divide="ignore"):
        out = g / total
    bad = ~np.isfinite(out).all(axis=-1)
    if np.any(bad):
        out[bad] = np.eye(conc.shape[-1])[np.argmax(conc[bad], axis=-1)]
    return out


def config_data_by_process(section, base_dir):
    """A config's ``[data]`` for ``lda.partially_collapsed`` run by several processes
    (``jax.distributed``): this process's part of an ``ldac`` / ``uci`` ``file``
    (``part=(jax.process_index(), jax.process_count())``) packed by :func:`gibbsjax.models.lda.shard.from_parts`.

    Keys as for one process (``file``, ``format``, ``vocab``, ``num_lanes``); ``vocab``
    is required for ``ldac``; ``heldout`` is refused (a held-out split would differ
    from the one of a whole-file read).  The extras hold no corpus (no process has it
    all), so the postprocess names no words by text beyond the vocabulary's ids and
    computes no coherence.

    Parameters
    ----------
    section : dict
        The config's ``[data]`` section.
    base_dir : str or pathlib.Path
        The directory relative file names are read from.

    Returns
    -------
    gibbsjax.spec.DataWithExtras
        The data of :func:`gibbsjax.models.lda.shard.from_parts`, with extras ``{"corpus": None, "heldout": None}``.

    Raises
    ------
    gibbsjax.spec.ConfigError
        For a held-out fraction, or a bad ``[data]`` section.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from gibbsjax.corpus import Corpus, write_uci
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_uci(Corpus.from_token_lists([["a", "b", "a"], ["c"], ["b", "c"]]), d / "dw.txt", d / "v.txt")
    >>> config_data_by_process({"file": "dw.txt", "vocab": "v.txt", "format": "uci"}, d).data.words.shape[0] == len(jax.devices())
    True
    """
    heldout = section.get("heldout", 0.0)
    if not is_number(heldout) or float(heldout) != 0.0:
        raise ConfigError("[data] heldout is not available when every process reads its part of the corpus")
    corpus = read_corpus(section, base_dir, ("heldout", "split_seed", "num_lanes"),
                         part=(jax.process_index(), jax.process_count()))
    return DataWithExtras(from_parts(corpus, num_lanes=section.get("num_lanes")), {"corpus": None, "heldout": None})


def _config_data(section, base_dir):
    """``[data]`` for LDA: a corpus (``corpus = "stdlib_docs"`` | ``"abc"``, or a file), with
    ``heldout`` (a fraction of documents kept out for perplexity), ``split_seed`` and ``num_lanes``.
    Run by several processes (``jax.distributed``, ``gibbsjax run --distributed``) on an
    ``ldac`` / ``uci`` file, each process reads only its part
    (:func:`config_data_by_process`)."""
    if jax.process_count() > 1 and section.get("format") in ("ldac", "uci") and "file" in section:
        # several processes (jax.distributed): each reads and packs only its part of the file
        return config_data_by_process(section, base_dir)
    corpus = read_corpus(section, base_dir, ("heldout", "split_seed", "num_lanes"))
    heldout = section.get("heldout", 0.0)
    if not is_number(heldout) or not 0.0 <= float(heldout) < 1.0:
        raise ConfigError(f"[data] heldout must be a fraction in [0, 1), got {heldout!r}")
    seed = section.get("split_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"[data] split_seed must be a non-negative integer, got {seed!r}")
    test = None
    if float(heldout) > 0:
        corpus, test = corpus.split(float(heldout), seed=seed)
    return DataWithExtras(data(corpus, num_lanes=section.get("num_lanes")), {"corpus": corpus, "heldout": test})


def postprocess(idata, kernel, d, extras):
    """Name words and documents, align topics across chains, measure how well the chains
    agree, and store the topics of one mode with their top words, coherence and (with
    ``extras["heldout"]``) held-out perplexity in a ``topics`` group.

    Topics are aligned (:func:`gibbsjax.labels.align_chains`, Hellinger matching of
    the per-chain ``topic_word``), then :func:`gibbsjax.agreement.add_agreement`
    stores the ``agreement`` group: Hellinger distances between the chains' topics,
    which chains reproduce each topic of the reference chain (the chain with the
    highest mean ``lp`` over the sampling phase) and R-hat of each aligned topic's
    share of tokens; :func:`gibbsjax.topics.stable.add_stable_topics` the ``stable_topics``
    group (the topics that recur across chains).  The estimates in ``topics`` never average across modes: they
    come from ``extras["chains"]`` (default ``"best"``, the reference chain alone;
    ``"agreeing"``, the mean of the chains that reproduce every topic of the
    reference chain; :data:`gibbsjax.agreement.ESTIMATE_RULES`), recorded in its
    attributes ``estimate_chains`` (JSON) and ``estimate_rule``.  Per-chain
    estimates stay in ``posterior_mean``.  ``extras``: ``corpus`` (the training
    corpus), ``heldout`` (a Corpus or None), ``hyperparameters`` (``alpha`` is
    used) and ``chains``.  Shared by ``gibbsjax run`` and :class:`gibbsjax.LDA`.
    With learned priors the posterior means of α and η from the estimate chains
    are stored as ``learned_alpha``/``learned_eta`` (JSON) and that α is used
    for held-out perplexity.

    Parameters
    ----------
    idata : arviz.InferenceData
        The result of an LDA kernel.
    kernel : gibbsjax.kernel.Kernel
        The kernel that produced it.
    d : LDAData
        The packed training corpus.
    extras : dict
        ``corpus`` (the training corpus), ``heldout`` (a Corpus or None),
        ``hyperparameters`` (``alpha`` is used) and ``chains`` (``"best"`` or ``"agreeing"``).

    Returns
    -------
    arviz.InferenceData
        The result with the groups above.

    Examples
    --------
    >>> import warnings; warnings.simplefilter("ignore")
    >>> import gibbsjax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> corpus = Corpus.from_token_lists([["a", "b", "a"], ["c", "b", "c"], ["a", "a", "b"]] * 4)
    >>> d, kernel = lda.data(corpus), lda.partially_collapsed(2)
    >>> raw = gibbsjax.sample(kernel, d, seed=0, num_chains=2, num_warmup=20, num_draws=20, progress=False)
    >>> extras = {"corpus": corpus, "heldout": None, "hyperparameters": {"alpha": 0.1}, "chains": "best"}
    >>> idata = postprocess(raw, kernel, d, extras)
    >>> sorted(set(idata.groups()) - set(raw.groups()))
    ['agreement', 'stable_topics', 'topics']
    """
    import xarray as xr  # heavy: imported when a result is post-processed, not with the model

    corpus = extras.get("corpus")
    alpha = float(extras["hyperparameters"]["alpha"])
    which = extras.get("chains", "best")
    if which not in ESTIMATE_RULES:
        raise ValueError(f"chains must be one of {tuple(ESTIMATE_RULES)}, got {which!r}")
    if corpus is not None:
        idata.posterior_mean = idata.posterior_mean.assign_coords(
            word=list(corpus.vocab), document=list(corpus.doc_names)
        )
    idata = _recorded_draws(idata, corpus)
    num_topics = idata.posterior_mean.sizes["topic"]
    perms = np.arange(num_topics)[None]
    if idata.posterior.sizes["chain"] > 1:
        # match every chain to the reference chain's topics first (lp is label-invariant)
        ref = reference_chain(idata.sample_stats["lp"].values) if "lp" in idata.sample_stats else 0
        idata, perms = align_chains(idata, "topic_word", "topic", distance="hellinger", reference_chain=ref)
    idata, agreement = add_agreement(idata, idata.posterior_mean["topic_word"], "topic",
                                     rhat_vars=("topic_share",))
    idata, _ = add_stable_topics(idata)  # the topics that recur across chains (gibbsjax.topics.stable)
    chains = agreement.estimate_chains(which)
    phi = idata.posterior_mean["topic_word"].isel(chain=chains).mean("chain").values
    attrs: dict = {"estimate_chains": json.dumps(chains), "estimate_rule": ESTIMATE_RULES[which]}
    # learned priors (learn_alpha / learn_eta): their posterior means from the same chains
    for name in ("alpha", "eta"):
        if name in idata.posterior_mean:
            value = idata.posterior_mean[name].isel(chain=chains).mean("chain").values
            attrs[f"learned_{name}"] = json.dumps(np.round(np.asarray(value, np.float64), 6).tolist())
            if name == "alpha":
                alpha = value
    if corpus is not None:
        attrs["top_words"] = json.dumps(evaluate.top_words(phi, corpus.vocab, 10))
        n = min(10, phi.shape[1])
        if n >= 2:
            # gensim's u_mass (shown by report) and NPMI over whole documents (valid for any corpus)
            for name, kind, window in (("u_mass", "u_mass", None), ("npmi_document", "c_npmi", "document")):
                values = evaluate.coherence(phi, corpus, kind=kind, n=n, window_size=window)
                attrs[name] = json.dumps([round(float(x), 3) for x in values])
    test = extras.get("heldout")
    if test is not None and test.num_docs:
        attrs["heldout_perplexity"] = heldout_perplexity(phi, test, alpha=alpha)
        attrs["heldout_docs"] = int(test.num_docs)
    topics = xr.Dataset({"topic_word": (("topic", "word"), phi), "permutation": (("chain", "topic"), perms)},
                        attrs=attrs)
    return replace_group(idata, "topics", topics)


def _recorded_draws(idata, corpus):
    """Per-draw records of ``record_phi`` / ``record_theta``: θ drawn from each recorded
    conditional (:func:`theta_draws`, seeded by the run's seed), words and documents named."""
    seed = int(idata.attrs.get("seed", 0))
    for group in ("posterior", "warmup_posterior"):
        if group not in idata.groups():
            continue
        post = idata[group]
        if "theta_concentration" in post:
            conc = post["theta_concentration"]
            theta = theta_draws(conc.values, seed=np.random.SeedSequence([seed, 0x7E7A, group == "posterior"]))
            post = post.drop_vars("theta_concentration").assign(theta=(conc.dims, theta.astype(np.float32)))
        if corpus is not None:
            if "phi_word" in post.coords:
                post = post.assign_coords(phi_word=[corpus.vocab[i] for i in post["phi_word"].values.tolist()])
            if "theta_document" in post.coords:
                post = post.assign_coords(
                    theta_document=[corpus.doc_names[i] for i in post["theta_document"].values.tolist()])
        setattr(idata, group, post)
    return idata


def _coherence_attr(attrs) -> tuple[str, list | None]:
    """The per-topic coherence stored in a ``topics`` group's attributes, with the words that
    name it: gensim's ``u_mass`` (``"u_mass"``), or Mimno et al.'s sum in files written before
    the kinds were renamed (``"umass"``)."""
    if "u_mass" in attrs:
        return "coherence u_mass, gensim's mean over word pairs", json.loads(attrs["u_mass"])
    if "umass" in attrs:
        return "coherence umass_sum, Mimno et al.'s sum over word pairs", json.loads(attrs["umass"])
    return "", None


def report(idata) -> str:
    """The answer first: the stable topics (each with its share of chains and top words)
    and held-out perplexity; then the diagnostics in three lines: the agreement of the
    chains, R-hat of lp, and whether the chains disagree (:func:`gibbsjax.reports.verdict_line`,
    the decision :class:`gibbsjax.LDA` warns with and ``--strict`` exits on).

    Each topic appears once.  A result without stable topics (one chain, or saved before
    they existed) lists the top words per topic of its estimates instead.  The per-chain
    and per-topic tables are in :func:`details`.

    Parameters
    ----------
    idata : arviz.InferenceData
        An LDA result (post-processed by :func:`postprocess` for the top words).

    Returns
    -------
    str
        The report.

    Raises
    ------
    ValueError
        If ``idata`` is not an LDA result (no ``topic_share`` in its posterior).

    Examples
    --------
    >>> import warnings; warnings.simplefilter("ignore")
    >>> from gibbsjax import sample
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> corpus = Corpus.from_token_lists([["a", "b", "a"], ["c", "b", "c"], ["a", "a", "b"]] * 4)
    >>> d, kernel = lda.data(corpus), lda.partially_collapsed(2)
    >>> raw = sample(kernel, d, seed=0, num_chains=2, num_warmup=20, num_draws=20, progress=False)
    >>> extras = {"corpus": corpus, "heldout": None, "hyperparameters": {"alpha": 0.1}, "chains": "best"}
    >>> text = report(postprocess(raw, kernel, d, extras))
    >>> [line.split(" (")[0].split(":")[0] for line in text.splitlines() if line and not line.startswith((" ", "->"))]
    ['stable topics', 'diagnostics', 'agreement', 'R-hat of the log joint lp']
    """
    _check_lda(idata)
    lines = []
    stable = stable_topics_of(idata) if "stable_topics" in idata.groups() else None
    if stable is not None:
        lines += report_lines(stable, compact=True)
    if stable is None or stable.num_chains < 2 or not stable.num_stable:
        lines += _top_words_lines(idata)
    if "topics" in idata.groups():
        attrs = idata.topics.attrs
        if "heldout_perplexity" in attrs:
            lines.append(f"held-out perplexity (document completion, {int(attrs['heldout_docs'])} documents, "
                         f"{_estimate_source(attrs, 'the topics')}): {float(attrs['heldout_perplexity']):.1f}")
        learned = [f"{name} = {attrs[f'learned_{name}']}" for name in ("alpha", "eta") if f"learned_{name}" in attrs]
        if learned:
            lines.append(f"learned priors (posterior means): {'; '.join(learned)}")
    diagnostics = []
    if "agreement" in idata.groups():
        diagnostics.append(f"agreement: {idata.agreement.attrs['verdict']}")
    if int(idata.posterior.sizes["chain"]) > 1:
        diagnostics.append(f"R-hat of the log joint lp: {rhat_lp(idata):.3f}")
        rely = "the stable topics above" if stable is not None and stable.num_stable else None
        diagnostics.append(verdict_line(idata, rely_on=rely))
    if diagnostics:
        lines += ["", "diagnostics:", *diagnostics]
    return "\n".join(lines)


def details(idata) -> str:
    """The tables behind :func:`report` (``gibbsjax run --details``, ``gibbsjax summary``):
    the top words per topic of the estimates with their coherence (u_mass), the stable
    topics with their spread and R-hat and the most recurrent rare topics, and the
    agreement of the chains: per aligned topic its R-hat and the chains that reproduce it,
    with what helps when they disagree (:func:`gibbsjax.reports.chains_disagree`).

    Parameters
    ----------
    idata : arviz.InferenceData
        An LDA result (post-processed by :func:`postprocess`).

    Returns
    -------
    str
        The tables.

    Raises
    ------
    ValueError
        As :func:`report`, for a result that is not LDA's.

    Examples
    --------
    >>> import warnings; warnings.simplefilter("ignore")
    >>> from gibbsjax import LDA
    >>> from gibbsjax.datasets import abc_corpus
    >>> model = LDA(num_topics=2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
    >>> [line.split(" (")[0].split(":")[0] for line in details(model.idata_).splitlines()
    ...  if line and not line.startswith((" ", "->"))]
    ['top words per topic', 'stable topics', 'agreement', 'R-hat of the log joint lp']
    """
    _check_lda(idata)
    sections = [_top_words_lines(idata)]
    if "stable_topics" in idata.groups():
        sections.append(report_lines(stable_topics_of(idata)))
    sections.append(agreement_lines(idata))
    return "\n\n".join("\n".join(lines) for lines in sections if lines)


def _check_lda(idata) -> None:
    if "topic_share" not in idata.posterior:
        raise ValueError("not an LDA result: its posterior has no variable 'topic_share'")


def _estimate_source(attrs, what: str) -> str:
    """``"<what> of chain 3"`` / ``"<what> of chains 0, 2"``: where a ``topics`` group's estimates come from."""
    if "estimate_chains" not in attrs:
        return f"{what} aligned across chains"
    chains = json.loads(str(attrs["estimate_chains"]))
    return f"{what} of chain{'s' if len(chains) > 1 else ''} {', '.join(map(str, chains))}"


def _top_words_lines(idata) -> list[str]:
    """The top words per topic of the estimates (the ``topics`` group), with their coherence."""
    if "topics" not in idata.groups():
        return []
    attrs = idata.topics.attrs
    words = json.loads(attrs["top_words"]) if "top_words" in attrs else None
    if not words:
        return []
    measure, umass = _coherence_attr(attrs)
    source = _estimate_source(attrs, "the topics")
    lines = [f"top words per topic ({source}{'; ' + measure if measure else ''}):"]
    for k, ws in enumerate(words):
        c = f"{umass[k]:8.2f}" if umass else ""
        lines.append(f"  topic {k:2d} {c}  {' '.join(ws)}")
    return lines


def _sbc_case(factory):
    """SBC example: K = 2, three words, three short documents; ranks the collapsed log joint and the
    sorted topic sizes (both invariant under relabelling topics)."""
    import jax.numpy as jnp

    from gibbsjax.corpus import Corpus
    from gibbsjax.models.lda.conditionals import log_joint_collapsed
    from gibbsjax.testing import sorted_values

    K, alpha, eta = 2, 0.6, 0.35
    d = data(Corpus.from_token_lists([["a", "b"], ["b", "c", "c"], ["a", "c"]], vocab=["a", "b", "c"]))
    fns = {"log_joint": lambda s, d: log_joint_collapsed(s, d, K=K, alpha=alpha, eta=eta),
           "topic_counts_sorted": lambda s, d: sorted_values(
               jnp.stack([jnp.sum((s.z == t) * d.mask) for t in range(K)]))}
    return factory(K, alpha=alpha, eta=eta), d, fns


def _specs():
    import functools

    return tuple(
        ModelSpec(f"lda.{name}", factory, _config_data, postprocess, report,
                  description=f"latent Dirichlet allocation, {name.replace('_', ' ')} Gibbs sampler "
                              "(Wang 2015, §4)", sbc_case=functools.partial(_sbc_case, factory),
                  details=details)
        for name, factory in SAMPLERS.items()
    )


#: the LDA models for ``gibbsjax run`` (see :class:`gibbsjax.spec.ModelSpec`; ``gibbsjax.config`` reads them
#: from :mod:`gibbsjax.models.lda`)
SPECS = _specs()
