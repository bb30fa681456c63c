"""Choosing the number of topics K by stability: many chains per K, and how many of their topics recur.

For every K, :func:`choose_num_topics` fits :class:`gibbsjax.LDA` with many
chains (run side by side, one compiled program per K; no Python loop over
chains), clusters the topics of all chains (:func:`gibbsjax.topics.stable.stable_topics`)
and reports, side by side, the stability of the topics, held-out perplexity
(document completion) and coherence.  :func:`gibbsjax.plots.plot_stability`
draws the table; :func:`stability_scorer` is the same score for
scikit-learn's ``GridSearchCV``; ``gibbsjax choose-k CONFIG --K 5,10,15`` prints it.

The score (Greene, O'Callaghan & Cunningham 2014, "How many topics? Stability
analysis for topic models", score a K by how well topics of different runs
agree; here the runs are the chains): the **stability** of a fit is the mean,
over every topic of every chain, of the share of chains that hold that topic's
cluster, Σ_m n_m² / (C² K) for clusters held by n_m of the C chains.  It is 1
when every chain finds the same K topics, and falls both when K is too small
(chains merge different pairs of true topics) and when K is too large (chains
split different topics, or make topics of their own).  The share of stable
topics alone (S / K, clusters held by at least half of the chains) does not
fall reliably for K too large: with a few spare topics most chains split the
same large topic, and such a split recurs in half of the chains.  Measured on
:func:`gibbsjax.datasets.synthetic.lda_corpus` with 10 true topics (the test
``tests/test_stable_topics.py::test_stability_peaks_at_the_true_k``), the
stability peaks at K = 10.

>>> table = choose_num_topics(corpus, [5, 10, 15], num_chains=16)   # doctest: +SKIP
>>> int(table.loc[table["stability"].idxmax(), "K"])                 # doctest: +SKIP
10
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real

import numpy as np

from gibbsjax.topics.stable import MIN_SHARE, StableTopics

__all__ = ["stability", "choose_num_topics", "stability_scorer", "table_lines"]

#: the table's columns, in order
COLUMNS = ("K", "stability", "stable", "stable_share", "rare", "perplexity", "coherence", "rhat_lp")


def stability(stable: StableTopics) -> float:
    """The mean, over every topic of every chain, of the share of chains that hold its cluster.

    That is Σ_m n_m² / (C² K), with n_m the chains that hold cluster m, C chains
    and K topics per chain (topics that match no cluster count as held by one
    chain).

    Parameters
    ----------
    stable : gibbsjax.topics.stable.StableTopics
        The clustered topics of a fit's chains.

    Returns
    -------
    float
        The stability, in (0, 1] (1.0: every chain holds every topic).

    Examples
    --------
    >>> from gibbsjax.topics.stable import stable_topics
    >>> est = np.array([[[0.9, 0.1], [0.1, 0.9]], [[0.1, 0.9], [0.85, 0.15]]])
    >>> stability(stable_topics(est))
    1.0
    """
    n = stable.recurrence.astype(np.float64)
    c, k = float(stable.num_chains), float(stable.num_topics)
    return float(((n * n).sum() + stable.num_unclustered) / (c * c * k))


def stability_scorer(estimator, X=None, y=None) -> float:
    """A scikit-learn scorer: the :func:`stability` of a fitted :class:`gibbsjax.LDA`.

    For ``GridSearchCV(LDA(...), {"num_topics": [5, 10, 15]}, scoring=stability_scorer)``.

    Parameters
    ----------
    estimator : gibbsjax.LDA
        A fitted model (one with ``stable_topics_``).
    X, y : object, optional
        Ignored: stability is a property of the fit (its chains), not of the
        documents scored.

    Returns
    -------
    float
        :func:`stability` of the model's stable topics.

    Raises
    ------
    ValueError
        When ``estimator`` has no ``stable_topics_`` (not a fitted gibbsjax.LDA).

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV                    # doctest: +SKIP
    >>> GridSearchCV(LDA(num_chains=16), {"num_topics": [5, 10]}, scoring=stability_scorer)  # doctest: +SKIP
    """
    stable = getattr(estimator, "stable_topics_", None)
    if stable is None:
        raise ValueError("stability_scorer needs a fitted gibbsjax.LDA (an estimator with stable_topics_)")
    return stability(stable)


def _check_ks(ks) -> list[int]:
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence) or not len(ks):
        raise ValueError(f"Ks must be a non-empty sequence of numbers of topics, got {ks!r}")
    out = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"Ks must hold positive integers, got {k!r}")
        out.append(int(k))
    if len(set(out)) != len(out):
        raise ValueError(f"Ks has repeated values: {out}")
    return out


def choose_num_topics(X, Ks, *, num_chains: int = 16, heldout=0.2, split_seed: int = 0, seed: int = 0,
                      num_warmup: int = 200, num_draws: int = 100, min_share: float = MIN_SHARE,
                      coherence: str = "u_mass", n_words: int = 10, vocab=None, keep_models: bool = False,
                      **lda_params):
    """Fit LDA for every K in ``Ks`` and tabulate how stable its topics are, perplexity and coherence.

    Parameters
    ----------
    X : object
        Any input :class:`gibbsjax.LDA` takes.
    Ks : sequence of int
        The numbers of topics to try (positive, distinct).
    num_chains : int, default 16
        Chains per fit.
    heldout : float or object or None, default 0.2
        A fraction in [0, 1) of the documents kept out (split by ``split_seed``)
        for held-out perplexity (:meth:`gibbsjax.LDA.perplexity`, document
        completion, from the estimates of the reference chain), 0 or None for
        none, or a held-out input itself.
    split_seed : int, default 0
        Seed of the held-out split.
    seed : int, default 0
        Seed of every fit.
    num_warmup, num_draws : int, default 200, 100
        Sweeps of warm-up and draws per fit.
    min_share : float, default gibbsjax.topics.stable.MIN_SHARE
        Share of the chains a stable topic needs (:func:`gibbsjax.topics.stable.stable_topics`).
    coherence : str, default "u_mass"
        Kind of :func:`gibbsjax.evaluate.coherence`.
    n_words : int, default 10
        Top words per topic for coherence.
    vocab : sequence of str, optional
        Names of a matrix's columns.
    keep_models : bool, default False
        Keep the fitted models in ``table.attrs["models"]``.
    **lda_params
        Other keywords (``alpha``, ``eta``, ``sampler``, ...) for :class:`gibbsjax.LDA`.

    Returns
    -------
    pandas.DataFrame
        One row per K.  Columns: ``K``; ``stability`` (:func:`stability`, the
        score to choose K by: highest is best); ``stable`` (the number of stable
        topics, clusters held by at least ``min_share`` of the chains,
        :mod:`gibbsjax.topics.stable`), ``stable_share`` (stable / K), ``rare`` (clusters
        held by fewer, and topics that match no cluster); ``perplexity`` (lower is
        better; NaN without held-out documents); ``coherence`` (the mean over the
        stable topics of :func:`gibbsjax.evaluate.coherence` of kind
        ``coherence``, gensim's defaults, on the training documents; NaN without
        stable topics); ``rhat_lp`` (R-hat of the log joint).  ``table.attrs``
        holds ``num_chains``, ``min_share``, ``coherence`` (the kind, which
        :func:`table_lines` names in the column's header), ``coherence_words``
        (``n_words``) and, with
        ``keep_models=True``, ``models`` (K -> the fitted :class:`gibbsjax.LDA`).

    Raises
    ------
    ValueError
        When an argument is invalid (checked for every K before anything is fitted).

    Examples
    --------
    >>> from gibbsjax.datasets.synthetic import lda_corpus                # doctest: +SKIP
    >>> corpus, phi, theta = lda_corpus(600, num_topics=10, vocab_size=300, seed=0)   # doctest: +SKIP
    >>> choose_num_topics(corpus, [6, 10, 14], num_chains=16)              # doctest: +SKIP
    """
    import pandas as pd

    from gibbsjax import evaluate
    from gibbsjax.diagnostics import rhat_lp
    from gibbsjax.topics.estimators import LDA
    from gibbsjax.corpus.inputs import as_corpus
    from gibbsjax.topics.stable import stable_topics_of

    ks = _check_ks(Ks)
    if not isinstance(keep_models, bool):
        raise ValueError(f"keep_models must be True or False, got {keep_models!r}")
    base = dict(lda_params, num_chains=num_chains, seed=seed, num_warmup=num_warmup, num_draws=num_draws,
                progress=lda_params.get("progress", False), warn=False)
    for k in ks:  # every argument checked (ValueError naming it) before anything is fitted
        LDA(k, **base)
    corpus = as_corpus(X, "X", vocab=vocab, **{k: lda_params[k] for k in ("token_pattern",) if k in lda_params})
    test = None
    if isinstance(heldout, Real) and not isinstance(heldout, bool):
        if not 0.0 <= float(heldout) < 1.0:
            raise ValueError(f"heldout must be a fraction in [0, 1), a held-out input or None, got {heldout!r}")
        if float(heldout) > 0:
            corpus, test = corpus.split(float(heldout), seed=split_seed)
    elif heldout is not None:
        test = as_corpus(heldout, "heldout", model_vocab=corpus.vocab)
    rows, models = [], {}
    for k in ks:  # (a loop over K; the chains of each fit run side by side)
        model = LDA(k, **base).fit(corpus)
        if keep_models:
            models[k] = model
        st = model.stable_topics_ if min_share == MIN_SHARE else stable_topics_of(model.idata_, min_share=min_share)
        coh = float("nan")
        if st.num_stable and corpus.vocab_size >= 2:
            coh = float(np.mean(evaluate.coherence(st.topic_word, corpus, kind=coherence,
                                                   n=min(n_words, corpus.vocab_size))))
        rows.append({"K": k, "stability": stability(st), "stable": st.num_stable, "stable_share": st.stable_share,
                     "rare": st.num_rare + st.num_unclustered,
                     "perplexity": model.perplexity(test) if test is not None and test.num_tokens else float("nan"),
                     "coherence": coh, "rhat_lp": rhat_lp(model.idata_)})
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table.attrs.update({"num_chains": int(num_chains), "min_share": float(min_share),
                        "coherence": coherence, "coherence_words": int(n_words)})
    if keep_models:
        table.attrs["models"] = models
    return table


def table_lines(table) -> list[str]:
    """The table of :func:`choose_num_topics` as report lines, the best K marked.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`choose_num_topics`.

    Returns
    -------
    list of str
        A header, then one line per K; the K of highest stability is marked
        ``<- most stable``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"K": [5, 10], "stability": [0.7, 0.95], "stable": [3, 10], "stable_share": [0.6, 1.0],
    ...                   "rare": [4, 0], "perplexity": [250.0, 230.0], "coherence": [-1.2, -1.0],
    ...                   "rhat_lp": [1.3, 1.05]})
    >>> t.attrs["coherence"] = "u_mass"  # as choose_num_topics records it
    >>> for line in table_lines(t): print(line)
        K  stability     stable     rare  perplexity  coherence (u_mass)  R-hat lp
        5     0.700     3 of 5        4       250.0              -1.200   1.300
       10     0.950   10 of 10        0       230.0              -1.000   1.050  <- most stable

    The coherence column is headed by the measure's name (``table.attrs["coherence"]``,
    a kind of :func:`gibbsjax.evaluate.coherence`); plain ``coherence`` when the table
    does not record it.
    """
    best = int(np.nanargmax(table["stability"].values)) if len(table) else -1
    kind = table.attrs.get("coherence")
    label = f"coherence ({kind})" if kind else "coherence"
    width = max(len(label), 9)
    lines = [f"{'K':>5}  stability     stable     rare  perplexity  {label:>{width}}  R-hat lp"]
    for i, r in enumerate(table.to_dict("records")):
        stable = f"{int(r['stable'])} of {int(r['K'])}"
        lines.append(f"{int(r['K']):5d}  {r['stability']:8.3f}  {stable:>9}  {int(r['rare']):7d}  "
                     f"{r['perplexity']:10.1f}  {r['coherence']:{width}.3f}  {r['rhat_lp']:6.3f}"
                     + ("  <- most stable" if i == best else ""))
    return lines
