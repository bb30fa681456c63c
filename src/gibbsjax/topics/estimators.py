"""Estimators with a scikit-learn / ``lda``-package feel, built on the kernels and the runner.

:class:`LDA` fits latent Dirichlet allocation with several exact chains at once,
aligns topics across chains, measures which topics the chains reproduce, takes
its estimates from one mode (never a blend of modes) and warns when the chains
disagree.  It follows scikit-learn's estimator conventions without importing
scikit-learn (``clone``, ``Pipeline`` and ``GridSearchCV`` work), takes every
kind of input a topic-model user has, and saves to and loads from NetCDF (no
pickle).
"""

from __future__ import annotations

import os
import numpy as np

from gibbsjax import pipeline
from gibbsjax.topics import fit as lda_fit
from gibbsjax._checks import check_seed
from gibbsjax.topics.estimator_base import Estimator, TopicModelNames, read_estimator, write_estimator
from gibbsjax.topics.estimator_base import refusing_foreign_names, resolve_auto
from gibbsjax.corpus import TOKEN_PATTERN, WORD_PATTERN
from gibbsjax.corpus.inputs import as_corpus, word_filters
from gibbsjax.topics.inspection import LDAInspection
from gibbsjax.models.lda import infer_doc_topics
from gibbsjax.reports import warn_if_chains_disagree

__all__ = ["LDA"]


class LDA(LDAInspection, Estimator, TopicModelNames):
    """Latent Dirichlet allocation by exact Gibbs sampling, several chains at once.

    Arguments are stored as given and checked (``ValueError`` naming one); :meth:`fit` does the rest.

    Parameters
    ----------
    num_topics : int, optional
        K, the number of topics (default 10).
    alpha, eta : float, optional
        Symmetric Dirichlet concentrations of θ_d (document–topic) and φ_k
        (topic–word), default 0.1 and 0.01; with learned priors, their starting values.
    sampler : {"auto", "collapsed", "partially_collapsed", "uncollapsed"}
        All exact (:mod:`gibbsjax.models.lda`).  ``"auto"``: the collapsed sampler where its native
        sweep runs (a CPU with the native kernels, one device: one chain per thread), else the
        partially collapsed one (:func:`gibbsjax.topics.fit.sampler_name`).
    stop_words, min_df, max_df : None, "english" or list; int or float (documents or share)
        Words :meth:`fit` leaves out of texts and token lists, as ``CountVectorizer``
        does (stop words; words in fewer than min_df or more than max_df documents).
    token_pattern : str
        The regex of a word in texts, ``CountVectorizer``'s option; default its default
        :data:`~gibbsjax.corpus.TOKEN_PATTERN` (two or more characters).
    num_chains, num_warmup, num_draws, thin, seed
        Passed to :func:`gibbsjax.sample` (``seed=None``: a fresh seed per fit,
        recorded in ``idata_.attrs["seed"]``).
    random_state : int, numpy RandomState or Generator, optional
        scikit-learn's name for the seed; give ``seed`` or ``random_state``,
        not both (``ValueError``).  A RandomState or Generator is asked for a
        seed at every :meth:`fit`, as scikit-learn does.
    progress, chunk_size
        Passed to :func:`gibbsjax.sample`; ``progress="auto"`` (default) is True except
        inside scikit-learn's model selection (``GridSearchCV``, ``cross_val_score``).
    num_lanes : int, optional
        Documents updated side by side (see :func:`gibbsjax.models.lda.data`).
    chains : {"best", "agreeing"}
        Which chains the estimates come from.  LDA posteriors have many modes
        and chains often settle in different ones; an average across them is a
        blend that is none of the modes, so it is never taken.  ``"best"`` (the
        default): the reference chain, the one with the highest mean log joint
        ``lp`` over the sampling phase.  ``"agreeing"``: the mean of the chains
        that reproduce every topic of the reference chain (Hellinger distance at
        most :data:`gibbsjax.agreement.AGREEMENT_THRESHOLD`); when all chains agree
        that is every chain.
    empty : {"keep", "drop", "error"}
        Documents without tokens (after tokenising, or words unknown to the
        model in :meth:`transform`).  ``"keep"`` (the default): one output row
        per input document, as scikit-learn expects; an empty document's θ is
        its prior mean α/(Kα) = 1/K, exactly its posterior mean since it has no
        tokens, and it takes no part in sampling.  ``"drop"`` and ``"error"`` do
        what the corpus readers do (:mod:`gibbsjax.corpus`): drop them with an
        :class:`~gibbsjax.corpus.EmptyDocumentWarning` naming them (fewer rows
        out), or raise ``ValueError``.
    learn_alpha : {"fixed", "sample", "minka"}
        ``"sample"``: α is sampled in every sweep from its exact conditional
        given the topic assignments (θ integrated out; slice sampling on log α
        under a gamma hyperprior ``alpha_prior``) and recorded per draw, with
        its R-hat in :meth:`summary`; ``"minka"``: Minka's fixed-point estimate
        during warm-up only, then held fixed (tomotopy's behaviour); ``"fixed"``
        (default): ``alpha`` as given.  See :func:`gibbsjax.models.lda.partially_collapsed`.
    asymmetric_alpha : bool
        One α_k per topic (Wallach, Mimno & McCallum 2009) instead of one
        symmetric α; needs ``learn_alpha`` "sample" or "minka".
    learn_eta : bool
        Sample the symmetric η in every sweep (φ integrated out), under the
        gamma hyperprior ``eta_prior``, recorded per draw.
    alpha_prior, eta_prior : (shape, rate)
        Gamma hyperpriors of α (of each α_k) and η; default (1, 1).
    record_phi : None, "all", int or sequence of int
        Keep φ per draw for some words, as ``idata_.posterior["phi"]`` (dims
        chain, draw, topic, phi_word; words named): "all" (K × V per draw, when
        that fits), M (the M most frequent training words) or word ids.  For
        credible intervals, e.g. ``arviz.hdi(model.idata_.posterior["phi"])``.
        Thinned with ``thin``.
    record_theta : None, "all", int or sequence of int
        Keep θ_d per draw for some training documents (indices into the ``X``
        given to :meth:`fit`; "all", or n for the first n), as
        ``idata_.posterior["theta"]``: θ_d ~ Dir(n_d· + α) drawn from its exact
        conditional at every kept draw (:func:`gibbsjax.specs.lda.theta_draws`).
    devices, shard : int or None, {"auto", "chains", "data"}
        Run on this many devices (e.g. GPUs), as :class:`gibbsjax.run.Settings`
        says: chains spread over them, or (fewer chains than devices, or
        ``shard="data"``) the documents split over them, every chain on every
        device (the partially collapsed sampler with fixed α and η, recording no
        φ or θ per draw).  Draws do not depend on the number of devices.
    warn : bool or "auto"
        ``False``: no :class:`~gibbsjax.ChainDisagreementWarning`; "auto" (default): none in model selection.
    save_warmup : bool
        Passed to :func:`gibbsjax.sample`: the warm-up sweeps and their ``lp`` kept in
        ``idata_.warmup_posterior``, ``warmup_sample_stats``.
    n_components, doc_topic_prior, topic_word_prior : optional
        scikit-learn's names (``LatentDirichletAllocation``'s) of ``num_topics``, ``alpha``
        and ``eta``: give either (both, with different values: ``ValueError``); both are
        stored as given (the other None), and ``set_params`` setting one sets both.  Its
        other names (``max_iter``, ``verbose``, ``n_jobs``, ...) are refused, naming ours.

    Attributes
    ----------
    topic_word_ : (K, V) array
        Posterior mean of φ from the chains in ``estimate_chains_`` (rows sum to
        1); ``components_`` is scikit-learn's name (sklearn's holds pseudo-counts).
    doc_topic_ : (D, K) array
        Posterior mean of θ for the training documents, from the same chains.
    topic_word_per_chain_ : (chains, K, V) array
        Every chain's posterior mean of φ, topics aligned across chains.
    doc_topic_per_chain_ : (chains, D, K) array
        Every chain's posterior mean of θ, aligned likewise.
    estimate_chains_ : list of int
        The chains ``topic_word_``, ``doc_topic_`` and :meth:`top_words` come from.
    agreement_ : gibbsjax.agreement.Agreement
        Which topics every chain reproduces (``agreement_.verdict``, e.g. "6 of 8
        topics reproduced by all 4 chains"), pairwise Hellinger distances, the
        reference chain and R-hat per aligned topic; also ``idata_.agreement``.
    stable_topics_ : gibbsjax.topics.stable.StableTopics
        The topics that recur across chains (clusters held by at least half of the chains), with
        recurrence, spread, R-hat and estimates from those chains; also ``idata_.stable_topics``.
    idata_ : arviz.InferenceData
        ``sample_stats.lp`` (log p(w, z), label-invariant), ``posterior.topic_share``
        (aligned), ``posterior_mean`` (per-chain aligned φ and θ means of the
        documents with tokens), ``agreement`` and ``topics`` (the estimates, as
        ``gibbsjax run`` saves them), ``sampler_state`` (for :meth:`extend`).
    alpha_, eta_ : array, float or None
        With learned priors, the posterior means of α (one per topic when
        ``asymmetric_alpha``) and η from the estimate chains; :meth:`transform`,
        :meth:`perplexity` and :meth:`score` use this α.  None when fixed.
    permutations_ : (chains, K) array
        How each chain's topics were relabelled to match.
    vocab_ : tuple of str
        The words (``"0"``, ..., ``"V-1"`` for a matrix given without names).
    corpus_ : Corpus or None
        The training corpus (None for a ``gibbsjax run`` file loaded without it).
    n_features_in_, feature_names_in_ : int, array of str
        V and the words (those only when known, not for a matrix without names).

    Notes
    -----
    Inputs of :meth:`fit`, :meth:`transform`, :meth:`score`, :meth:`perplexity`:

    * a :class:`~gibbsjax.corpus.Corpus`;
    * a document-term count matrix (D × V, scipy.sparse, dense or a DataFrame), ``vocab=``
      naming its columns (or a DataFrame's column names; else the words are ``"0"``, ...,
      ``"V-1"``; :meth:`set_vocab` names them later);
    * gensim's bag of words, documents ``[(id, count), ...]``, ``vocab=`` mapping
      ids to words (a gensim ``Dictionary``, any mapping id -> word, or a list
      of words); without it the words are the ids as strings;
    * token lists (``[["cat", "sat"], ...]``), or raw strings, tokenised by
      :meth:`Corpus.from_texts <gibbsjax.corpus.Corpus.from_texts>` (lower-cased);
      for these two, :meth:`fit` leaves out ``stop_words`` and words outside
      ``min_df``/``max_df`` (a ``ValueError`` for other inputs).

    A mix of kinds is a ``ValueError``.  New documents are matched to the
    model's words *by name* where both sides have names (a different vocabulary
    is refused, naming a word); unknown words of texts and token lists are
    ignored; a matrix without names is checked for its number of columns.
    Details: :mod:`gibbsjax.corpus.inputs`.

    The names ``topic_word_`` and ``doc_topic_`` are those of the ``lda``
    package; ``n_features_in_``, ``fit_transform``, ``get_params`` and
    ``set_params`` are scikit-learn's.  :meth:`fit` warns (one line, a
    :class:`~gibbsjax.ChainDisagreementWarning`) exactly when ``gibbsjax run`` reports
    "chains disagree" (:func:`gibbsjax.reports.chains_disagree`, also the warning's
    ``details``): a chain misses a topic of the reference chain, or an R-hat exceeds 1.01.

    Examples
    --------
    >>> from gibbsjax import LDA
    >>> from gibbsjax.datasets import abc_corpus
    >>> model = LDA(num_topics=2, alpha=1.0, eta=0.5, num_chains=2, num_warmup=50,
    ...             num_draws=50, seed=0, progress=False).fit(abc_corpus())
    >>> model.topic_word_.shape
    (2, 3)
    >>> len(model.top_words(2))
    2
    >>> model.agreement_.verdict
    '2 of 2 topics reproduced by all 2 chains'
    """

    _fitted_attribute = "topic_word_"
    _always_shown = ("num_topics",)
    _aliases = lda_fit.SKLEARN_ALIASES
    _refused, _refused_from = lda_fit.SKLEARN_NAMES, "scikit-learn's LatentDirichletAllocation"

    @refusing_foreign_names
    def __init__(
        self, num_topics: int | None = None, alpha: float | None = None, eta: float | None = None,
        sampler: str = "auto", *,
        stop_words=None, min_df: int | float = 1, max_df: int | float = 1.0, token_pattern: str = TOKEN_PATTERN,
        num_chains: int = 4, num_warmup: int = 100, num_draws: int = 100, thin: int = 1, seed: int | None = None,
        random_state=None, progress: bool | str = "auto", chunk_size: int | None = None, num_lanes: int | None = None,
        chains: str = "best", empty: str = "keep", learn_alpha: str = "fixed", asymmetric_alpha: bool = False,
        learn_eta: bool = False, alpha_prior: tuple[float, float] = (1.0, 1.0),
        eta_prior: tuple[float, float] = (1.0, 1.0), record_phi=None, record_theta=None, devices: int | None = None,
        shard: str = "auto", warn: bool | str = "auto", save_warmup: bool = False, n_components: int | None = None,
        doc_topic_prior: float | None = None, topic_word_prior: float | None = None,
    ):
        given = locals()
        for name in self._param_names():  # scikit-learn's convention: store the arguments as given
            setattr(self, name, given[name])
        self._check_params()

    def _check_params(self) -> None:
        lda_fit.check_params(self.get_params())

    @property
    def settings(self):
        """The :class:`gibbsjax.run.Settings` a fit runs with (a RandomState or
        Generator ``random_state`` shows as ``seed=None``: it gives a seed per fit)."""
        return lda_fit.settings(self.get_params())

    @property
    def kernel(self):
        """The sampler (:mod:`gibbsjax.models.lda`) the parameters name."""
        return lda_fit.kernel(self.get_params())

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, *, vocab=None) -> LDA:
        """Fit to ``X``: sample, align topics across chains, take the estimates.

        Post-processing is :func:`gibbsjax.specs.lda.postprocess`, the same as
        ``gibbsjax run`` applies to an LDA config.  Warns in one line when the
        chains disagree (see ``warn``); the report has the full text.
        :meth:`extend` continues the run.

        Parameters
        ----------
        X : Corpus, matrix, bag of words, token lists or texts
            Any input of the class docstring.
        y : None
            Ignored (scikit-learn passes one).
        vocab : optional
            Names the columns of a matrix or bag-of-words ids.

        Returns
        -------
        LDA
            ``self``, fitted.

        Raises
        ------
        ValueError
            For invalid parameters or input, or input without tokens.

        Examples
        --------
        >>> import warnings; warnings.simplefilter("ignore")
        >>> docs = [["apple", "pear", "apple"], ["stock", "bond"], ["pear", "apple"], ["bond", "stock", "stock"]]
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(docs)
        >>> model.vocab_, model.doc_topic_.shape
        (('apple', 'bond', 'pear', 'stock'), (4, 2))
        """
        self._check_params()
        corpus = as_corpus(X, "X", vocab=vocab, empty=self.empty, token_pattern=self.token_pattern,
                           **word_filters(self.get_params()))
        if corpus.num_tokens == 0:
            raise ValueError(f"X has no tokens ({corpus.num_docs} document(s), empty after token_pattern and the "
                             "word filters): LDA needs at least one document with words")
        job = lda_fit.job(self.get_params(), corpus)
        return self._set_result(pipeline.fit(job), corpus)

    def fit_transform(self, X, y=None, *, vocab=None) -> np.ndarray:
        """:meth:`fit`, then θ of the training documents (from the fit itself, not a new inference).

        Parameters
        ----------
        X, y, vocab
            As for :meth:`fit`.

        Returns
        -------
        numpy.ndarray
            (D, K) float64: ``doc_topic_``.

        Examples
        --------
        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0,
        ...     progress=False).fit_transform(abc_corpus()).shape
        (12, 2)
        """
        return self.fit(X, y, vocab=vocab).doc_topic_.astype(np.float64)

    def extend(self, num_draws: int, *, until: str | None = None, max_draws: int | None = None) -> LDA:
        """Continue the fitted chains, then post-process the whole run again.

        The draws are bit-identical to those of one longer fit (:func:`gibbsjax.resume`).
        Works on a loaded model too when it knows its training corpus.

        Parameters
        ----------
        num_draws : int
            More draws per chain (with ``until``: the draws per check).
        until : str, optional
            A stopping rule, e.g. ``"rhat<1.01,ess>400"``: continue until it holds or
            ``max_draws`` draws are kept.
        max_draws : int, optional
            The most draws kept, with ``until``.

        Returns
        -------
        LDA
            ``self``, with the longer run.

        Examples
        --------
        >>> from gibbsjax import LDA
        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(num_topics=2, num_chains=2, num_warmup=20, num_draws=20, seed=0,
        ...             progress=False).fit(abc_corpus())
        >>> model.extend(30).idata_.posterior.sizes["draw"]
        50
        """
        self._check_fitted()
        corpus = self._training_corpus("extend")
        job = lda_fit.job(self.get_params(), corpus, fit=False, bucket=lda_fit.padded(self.idata_))
        raw = pipeline.resume(job, self.idata_, num_draws, progress=resolve_auto(self.progress), chunk_size=self.chunk_size,
                              until=until, max_draws=max_draws, devices=self.devices)
        return self._set_result(pipeline.postprocess(job, raw), corpus)

    def _set_result(self, idata, corpus) -> LDA:
        self._adopt(idata, corpus, corpus.vocab)
        if resolve_auto(self.warn):
            warn_if_chains_disagree(idata, stacklevel=3)
        return self

    def _adopt(self, idata, corpus, vocab) -> None:
        """Set the fitted attributes from a post-processed result (a fit's or a file's)."""
        vars(self).pop("feature_names_in_", None)  # a refit on a matrix without names has none
        vars(self).update(lda_fit.fitted_attributes(idata, corpus, vocab, lda_fit.alpha(self.get_params()),
                                                    self._num_topics()))

    # ------------------------------------------------------------------ outputs
    def transform(self, X, *, vocab=None, num_sweeps: int = 100, num_burn: int = 50, seed: int = 0) -> np.ndarray:
        """θ of new documents ``X``, the fitted topics φ held fixed.

        The average of E[θ_d | z] over ``num_sweeps − num_burn`` sweeps of the exact
        z-sampler given φ (:func:`gibbsjax.models.lda.infer_doc_topics`).  The same
        ``seed`` gives the same output.  Empty documents: see ``empty``.

        Parameters
        ----------
        X : Corpus, matrix, bag of words, token lists or texts
            Any input of the class docstring, matched to the model's words by name where
            both have names.
        vocab : optional
            Names the columns of a matrix or bag-of-words ids.
        num_sweeps : int, default 100
            Sweeps of the z-sampler.
        num_burn : int, default 50
            Sweeps left out of the average.
        seed : int, default 0
            Seed of the sweeps.

        Returns
        -------
        numpy.ndarray
            (D_new, K): θ, one row per document.

        Examples
        --------
        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.transform([["a", "a", "b"], ["c", "unknown"], []]).round(2).shape
        (3, 2)
        """
        self._check_fitted()
        check_seed("seed", seed)  # before any work, as gibbsjax.sample takes it
        corpus = as_corpus(X, "X", vocab=vocab, model_vocab=self.vocab_, empty=self.empty,
                           token_pattern=self.token_pattern)
        theta = np.broadcast_to(lda_fit.prior_theta(self._alpha(), self._num_topics()),
                                (corpus.num_docs, self._num_topics())).copy()
        has_tokens = corpus.doc_lengths > 0
        if np.any(has_tokens):
            theta[has_tokens] = infer_doc_topics(self.topic_word_, lda_fit.sampled(corpus), alpha=self._alpha(),
                                                 num_sweeps=num_sweeps, num_burn=num_burn, seed=seed)
        return theta

    # ------------------------------------------------------------------ save and load (NetCDF, no pickle)
    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """Write the fitted model to a NetCDF file (no pickle).

        ``idata_`` as it is (so ``gibbsjax summary`` and ``gibbsjax plot`` read it), plus a group
        ``estimator`` with the constructor's arguments (JSON, in its attributes)
        and the training corpus (tokens, document offsets, words, document
        names).  Plain arrays and text, no pickle: :meth:`load` rebuilds the
        model without running code from the file.  Written atomically (an
        interrupted save leaves the previous file); an existing file that is not a
        gibbsjax result is replaced only with ``overwrite=True`` (``ValueError``).

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        overwrite : bool, default False
            Replace an existing file that is not a gibbsjax result.

        Examples
        --------
        >>> import os, tempfile, warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax.datasets import abc_corpus
        >>> path = os.path.join(tempfile.mkdtemp(), "lda.nc")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.save(path)
        >>> os.path.getsize(path) > 0
        True
        """
        self._check_fitted()
        write_estimator(path, self.idata_, self.get_params(), self.corpus_, self.vocab_, name="LDA",
                        overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike, *, corpus=None) -> LDA:
        """A fitted :class:`LDA` from a file written by :meth:`save` or by ``gibbsjax run``.

        For a ``gibbsjax run`` result of an LDA config the parameters come from the
        file's attributes: K, α, η, sampler, chains, warm-up, draws, seed.

        ``topic_word_``, ``doc_topic_``, :meth:`top_words`, :meth:`transform`
        (the same seed gives the same output as before saving),
        :meth:`perplexity`, :meth:`score` and :meth:`summary` work on any such
        file.  :meth:`coherence` (without ``X``), :meth:`to_pyldavis` and
        :meth:`extend` need the training corpus: a saved estimator holds it; for
        a ``gibbsjax run`` result pass it as ``corpus`` (the training part of the
        config's data, checked against the file's ``data_sha256``).  Example: see
        :meth:`save`.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        corpus : Corpus, optional
            The training corpus of a ``gibbsjax run`` result.

        Returns
        -------
        LDA
            The fitted model.

        Raises
        ------
        ValueError
            For a file that is not a post-processed LDA result, or a ``corpus`` that does not fit.

        Examples
        --------
        >>> import os, tempfile, warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax.datasets import abc_corpus
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> path = os.path.join(tempfile.mkdtemp(), "lda.nc")
        >>> model.save(path)
        >>> loaded = LDA.load(path)
        >>> loaded.vocab_ == model.vocab_, bool((loaded.doc_topic_ == model.doc_topic_).all())
        (True, True)
        """
        idata, params, stored, vocab = read_estimator(path, lambda idata: lda_fit.check_result(idata, path))
        if params is None:  # a gibbsjax run result
            params = lda_fit.params_from_run(idata)
            vocab = tuple(str(w) for w in idata.posterior_mean["word"].values)
        elif "token_pattern" not in params:  # saved before the option: texts were split into WORD_PATTERN words
            params["token_pattern"] = WORD_PATTERN
        model = cls._from_params(params)
        if corpus is not None:
            if stored is not None:
                raise ValueError(f"{path} holds its training corpus; corpus= is for gibbsjax run results")
            stored = lda_fit.check_training_corpus(model.get_params(), corpus, idata, vocab)
        model._adopt(idata, stored, vocab)
        return model

