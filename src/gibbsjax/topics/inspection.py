"""What a fitted :class:`gibbsjax.LDA` shows: perplexity, top words, coherence, pyLDAvis data, summary.

:class:`LDAInspection` holds the post-fit evaluation and inspection methods of
:class:`gibbsjax.LDA`, which inherits them (documented there); it has no state and no
constructor of its own, so ``get_params``, ``clone`` and saved models are those of
:class:`gibbsjax.LDA`.  A subclass supplies ``topic_word_``, ``doc_topic_``, ``vocab_``,
``corpus_``, ``idata_``, ``token_pattern``, ``get_params()`` (and, fitted with learned priors,
``alpha_``) and ``_check_fitted`` (:class:`gibbsjax.topics.estimator_base.Estimator`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gibbsjax import evaluate
from gibbsjax.topics import fit as lda_fit
from gibbsjax.corpus.inputs import as_corpus
from gibbsjax.models.lda import heldout_perplexity

__all__ = ["LDAInspection"]


class LDAInspection:
    """The post-fit evaluation and inspection methods of :class:`gibbsjax.LDA` (a mixin, no state of its own).

    Examples
    --------
    >>> from gibbsjax import LDA
    >>> from gibbsjax.topics.inspection import LDAInspection
    >>> issubclass(LDA, LDAInspection), hasattr(LDA, 'perplexity')
    (True, True)
    """

    def _training_corpus(self, what: str):
        if self.corpus_ is None:
            raise ValueError(f"{what} needs the training corpus, which this model does not hold (it was loaded "
                             "from a gibbsjax run result): load it with LDA.load(path, corpus=training_corpus)")
        return self.corpus_

    def _alpha(self):
        """α the fitted model uses for new documents: the learned one (posterior mean from
        the estimate chains, one per topic or a scalar) or ``alpha`` as given."""
        learned = getattr(self, "alpha_", None)
        return lda_fit.alpha(self.get_params()) if learned is None else learned

    def score(self, X, y=None, **kwargs) -> float:
        """The *negative* held-out perplexity of ``X`` by document completion
        (:meth:`perplexity`), so that greater is better, as scikit-learn's model
        selection (``GridSearchCV``, ``cross_val_score``) expects.  Not
        scikit-learn's ``LatentDirichletAllocation.score`` (a variational bound
        on the log likelihood).

        Parameters
        ----------
        X : Corpus, matrix, bag of words, token lists or texts
            Held-out documents.
        y : None
            Ignored (scikit-learn passes one).
        **kwargs
            Passed to :meth:`perplexity`.

        Returns
        -------
        float
            Minus the perplexity.

        Examples
        --------
        >>> from gibbsjax import LDA
        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.score(abc_corpus()) == -model.perplexity(abc_corpus())
        True
        """
        self._check_fitted()  # (naming score, not perplexity)
        return -self.perplexity(X, **kwargs)

    def perplexity(self, X_heldout, *, vocab=None, **kwargs) -> float:
        """Held-out perplexity by document completion (:func:`gibbsjax.models.lda.heldout_perplexity`).

        Parameters
        ----------
        X_heldout : Corpus, matrix, bag of words, token lists or texts
            Any input, matched to the model's words.
        vocab : optional
            Names the columns of a matrix or bag-of-words ids.
        **kwargs
            Passed to :func:`gibbsjax.models.lda.heldout_perplexity` (``fraction``,
            ``num_sweeps``, ``num_burn``, ``seed``, ``shuffle_seed``).

        Returns
        -------
        float
            The perplexity; lower is better.

        Examples
        --------
        >>> from gibbsjax import LDA
        >>> import warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax.datasets import abc_corpus
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> 1 < model.perplexity(abc_corpus()) < 3   # 3 words: a uniform guess scores 3
        True
        """
        self._check_fitted()
        corpus = as_corpus(X_heldout, "X_heldout", vocab=vocab, model_vocab=self.vocab_,
                           token_pattern=self.token_pattern)
        return heldout_perplexity(self.topic_word_, corpus, alpha=self._alpha(), **kwargs)

    def top_words(self, n: int = 10, *, with_probabilities: bool = False) -> list[list]:
        """The ``n`` most probable words of every topic (from ``topic_word_``), best first.

        Parameters
        ----------
        n : int, default 10
            Words per topic.
        with_probabilities : bool, default False
            Give pairs ``(word, φ_kw)`` instead of words.

        Returns
        -------
        list of list
            One list per topic.

        Examples
        --------
        >>> from gibbsjax.datasets import abc_corpus
        >>> from gibbsjax import LDA
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> word, p = model.top_words(1, with_probabilities=True)[0][0]
        >>> isinstance(word, str) and 0 < p <= 1
        True
        """
        self._check_fitted()
        return evaluate.top_words(self.topic_word_, self.vocab_, n, with_probabilities=with_probabilities)

    def _num_topics(self) -> int:
        """K: ``num_topics`` or ``n_components``, whichever is given (default 10)."""
        return lda_fit.num_topics(self.get_params())

    def coherence(self, kind: str = "u_mass", n: int = 10, X=None, **kwargs) -> np.ndarray:
        """Per-topic coherence of the top ``n`` words, as gensim's ``CoherenceModel`` computes it.

        See :func:`gibbsjax.evaluate.coherence`: the kinds named after gensim's
        (``u_mass``, ``c_npmi``, ``c_v``) give gensim 4.4's numbers for the same top
        words and texts.  Window-based kinds need the documents in reading order.

        Parameters
        ----------
        kind : str, default "u_mass"
            One of :data:`gibbsjax.evaluate.COHERENCE_KINDS`: ``"u_mass"`` (a mean over
            word pairs with ε), ``"c_npmi"`` (sliding windows of 10 tokens;
            ``window_size=``), ``"c_v"`` (Röder et al. 2015) or ``"umass_sum"``
            (Mimno et al. 2011: a sum with +1).
        n : int, default 10
            Top words per topic.
        X : optional
            The reference documents, any input of :class:`gibbsjax.LDA` (default: the
            training corpus).
        **kwargs
            Passed to :func:`gibbsjax.evaluate.coherence` (``eps``, ``window_size``,
            ``window_count="boolean"`` for true boolean windows instead of gensim's count).

        Returns
        -------
        numpy.ndarray
            (K,): one coherence per topic.

        Examples
        --------
        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax import LDA
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.coherence("u_mass", n=2).shape
        (2,)
        """
        self._check_fitted()
        corpus = self._training_corpus("coherence without X") if X is None else \
            as_corpus(X, "X", model_vocab=self.vocab_, token_pattern=self.token_pattern)
        return evaluate.coherence(self.topic_word_, corpus, kind=kind, n=n, **kwargs)

    def to_pyldavis(self) -> dict[str, Any]:
        """The five arrays ``pyLDAvis.prepare`` takes, for the training documents.

        ``pyLDAvis.prepare(**model.to_pyldavis())`` (pyLDAvis is not a dependency;
        see :func:`gibbsjax.evaluate.pyldavis_data`).

        Returns
        -------
        dict
            ``topic_term_dists``, ``doc_topic_dists``, ``doc_lengths``, ``vocab``,
            ``term_frequency``.

        Examples
        --------
        >>> import warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax.datasets import abc_corpus
        >>> from gibbsjax import LDA
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.to_pyldavis()["topic_term_dists"].shape
        (2, 3)
        """
        self._check_fitted()
        return evaluate.pyldavis_data(self.topic_word_, self.doc_topic_, self._training_corpus("to_pyldavis"),
                                      vocab=self.vocab_)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of :meth:`transform`'s columns, as scikit-learn's ``set_output`` asks for.

        Parameters
        ----------
        input_features : optional
            Ignored (scikit-learn's signature).

        Returns
        -------
        numpy.ndarray
            ``"topic0"``, ..., one per topic (dtype object).

        Examples
        --------
        >>> from gibbsjax import LDA
        >>> LDA(3).get_feature_names_out().tolist()
        ['topic0', 'topic1', 'topic2']
        """
        return np.array([f"topic{k}" for k in range(self._num_topics())], dtype=object)

    def set_vocab(self, vocab):
        """Name the words of a model fitted on a matrix without ``vocab``.

        E.g. in a ``Pipeline`` after a ``CountVectorizer``:
        ``pipe["lda"].set_vocab(pipe["vectorizer"].get_feature_names_out())``, so
        that :meth:`top_words`, :meth:`save` and :meth:`transform` use the words.

        Parameters
        ----------
        vocab : sequence of str
            The V words, in column order.

        Returns
        -------
        LDA
            ``self``.

        Raises
        ------
        ValueError
            When ``vocab`` does not have V words or the model already knows its words.

        Examples
        --------
        >>> from gibbsjax import LDA
        >>> import numpy as np, warnings; warnings.simplefilter("ignore")
        >>> X = np.array([[3, 0, 1], [0, 2, 2], [4, 1, 0]])
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(X)
        >>> model.vocab_
        ('0', '1', '2')
        >>> model.set_vocab(["cat", "dog", "pet"]).vocab_
        ('cat', 'dog', 'pet')
        """
        self._check_fitted()
        words = tuple(str(w) for w in vocab)
        self.corpus_ = lda_fit.rename_words(self.idata_, self.corpus_, self.vocab_, words, self.topic_word_)
        self.vocab_ = words
        self.feature_names_in_ = np.asarray(words, dtype=object)
        return self

    def summary(self):
        """R-hat/ESS of ``lp``, each aligned topic's share of tokens and each stable topic's.

        Returns
        -------
        pandas.DataFrame
            One row per quantity (:func:`gibbsjax.topics.fit.summary`).

        Examples
        --------
        >>> import warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax import LDA
        >>> from gibbsjax.datasets import abc_corpus
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.summary().index.tolist()
        ['topic_share[0]', 'topic_share[1]', 'lp', 'stable_topic_share[0]', 'stable_topic_share[1]']
        """
        self._check_fitted()
        return lda_fit.summary(self.idata_)

    def to_inference_data(self):
        """The aligned ArviZ InferenceData of the fit.

        Returns
        -------
        arviz.InferenceData
            ``idata_``.

        Examples
        --------
        >>> import warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax import LDA
        >>> from gibbsjax.datasets import abc_corpus
        >>> corpus = abc_corpus()
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(corpus)
        >>> idata = model.to_inference_data()
        >>> idata is model.idata_, idata.posterior["topic_share"].dims
        (True, ('chain', 'draw', 'topic'))
        """
        self._check_fitted()
        return self.idata_
