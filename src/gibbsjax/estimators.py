"""Estimators with a scikit-learn / ``lda``-package feel, built on the kernels and the runner.

:class:`LDA` fits latent Dirichlet allocation with several exact chains at once,
aligns topics across chains, measures which topics the chains reproduce, takes
its estimates from one mode (never a blend of modes) and warns when the chains
disagree.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np

from gibbsjax._checks import check_int

__all__ = ["LDA"]


class LDA:
    """Latent Dirichlet allocation by exact Gibbs sampling, several chains at once.

    Parameters
    ----------
    num_topics : int
        K, the number of topics.
    alpha, eta : float
        Symmetric Dirichlet concentrations of θ_d (document–topic) and φ_k
        (topic–word).
    sampler : {"partially_collapsed", "collapsed", "uncollapsed"}
        See :mod:`gibbsjax.models.lda`; all three are exact.  The default draws
        φ and integrates θ out, updating all documents in parallel.
    num_chains, num_warmup, num_draws, thin, seed, progress, chunk_size
        Passed to :func:`gibbsjax.sample`.
    num_lanes : int, optional
        Documents updated side by side (see :func:`gibbsjax.models.lda.data`).
    chains : {"best", "agreeing"}
        Which chains the estimates come from.  LDA posteriors have many modes
        and chains often settle in different ones; an average across them is a
        blend that is none of the modes, so it is never taken.  ``"best"`` (the
        default): the reference chain, the one with the highest mean log joint
        ``lp`` over the sampling phase.  ``"agreeing"``: the mean of the chains
        that reproduce every topic of the reference chain (Hellinger distance at
        most :data:`gibbsjax.labels.AGREEMENT_THRESHOLD`); when all chains agree
        that is every chain.

    Attributes (after :meth:`fit`)
    ------------------------------
    topic_word_ : (K, V) array
        Posterior mean of φ from the chains in ``estimate_chains_``.
    doc_topic_ : (D, K) array
        Posterior mean of θ for the training documents, from the same chains.
    topic_word_per_chain_ : (chains, K, V) array
        Every chain's posterior mean of φ, topics aligned across chains.
    doc_topic_per_chain_ : (chains, D, K) array
        Every chain's posterior mean of θ, aligned likewise.
    estimate_chains_ : list of int
        The chains ``topic_word_``, ``doc_topic_`` and :meth:`top_words` come from.
    agreement_ : gibbsjax.labels.Agreement
        Which topics every chain reproduces (``agreement_.verdict``, e.g. "6 of 8
        topics reproduced by all 4 chains"), pairwise Hellinger distances, the
        reference chain and R-hat per aligned topic; also ``idata_.agreement``.
    idata_ : arviz.InferenceData
        ``sample_stats.lp`` (log p(w, z), label-invariant), ``posterior.topic_share``
        (aligned), ``posterior_mean`` (per-chain aligned φ and θ means),
        ``agreement`` and ``topics`` (the estimates, as ``gibbsjax run`` saves them).
    permutations_ : (chains, K) array
        How each chain's topics were relabelled to match.
    vocab_ : tuple of str

    :meth:`fit` warns (``UserWarning``, with R-hat and the agreement verdict) exactly
    when ``gibbsjax run`` reports "chains disagree"
    (:func:`gibbsjax.reports.chains_disagree`): when a chain does not reproduce
    every topic of the reference chain, or R-hat of ``lp`` or of a topic's share
    exceeds 1.01.

    Example
    -------
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

    def __init__(
        self,
        num_topics: int,
        alpha: float = 0.1,
        eta: float = 0.01,
        sampler: str = "partially_collapsed",
        *,
        num_chains: int = 4,
        num_warmup: int = 100,
        num_draws: int = 100,
        thin: int = 1,
        seed: int | None = None,
        progress: bool = True,
        chunk_size: int | None = None,
        num_lanes: int | None = None,
        chains: str = "best",
    ):
        from gibbsjax.labels import ESTIMATE_RULES
        from gibbsjax.models import lda
        from gibbsjax.run import Settings

        check_int("num_topics", num_topics, 1)
        if sampler not in lda.SAMPLERS:
            raise ValueError(f"sampler must be one of {sorted(lda.SAMPLERS)}, got {sampler!r}")
        self.kernel = lda.SAMPLERS[sampler](num_topics, alpha=alpha, eta=eta)  # validates K, α, η
        self.num_topics = int(num_topics)
        self.alpha = float(alpha)
        self.eta = float(eta)
        self.sampler = sampler
        self.settings = Settings(num_chains=num_chains, num_warmup=num_warmup, num_draws=num_draws, thin=thin,
                                 seed=seed, progress=progress, chunk_size=chunk_size)
        self.num_lanes = num_lanes
        if chains not in ESTIMATE_RULES:
            raise ValueError(f"chains must be one of {tuple(ESTIMATE_RULES)}, got {chains!r}")
        self.chains = chains

    # ------------------------------------------------------------------ fitting
    def _corpus(self, X, name: str, vocab=None):
        from gibbsjax.corpus import Corpus

        if isinstance(X, Corpus):
            return X
        try:
            return Corpus.from_dtm(X, vocab=vocab, empty="error")
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None

    def fit(self, X, vocab=None) -> LDA:
        """Fit to ``X``: a :class:`~gibbsjax.corpus.Corpus` or a document-term
        count matrix (D × V, scipy.sparse or dense), with an optional ``vocab``.

        Post-processing is :func:`gibbsjax.models.lda.postprocess`, the same as
        ``gibbsjax run`` applies to an LDA config.  Warns (``UserWarning``) when
        the chains disagree, with the same message the report prints.
        :meth:`extend` continues the run."""
        from gibbsjax.models import lda
        from gibbsjax.run import sample

        corpus = self._corpus(X, "X", vocab)
        data = lda.data(corpus, num_lanes=self.num_lanes)
        hyper = self._hyperparameters()
        raw = sample(self.kernel, data, self.settings,
                     attrs={"model": self.kernel.name, **{f"model_{k}": v for k, v in hyper.items()}})
        return self._set_result(raw, corpus, data)

    def _hyperparameters(self) -> dict:
        return {"K": self.num_topics, "alpha": self.alpha, "eta": self.eta}

    def extend(self, num_draws: int, *, until: str | None = None, max_draws: int | None = None) -> LDA:
        """Continue the fitted chains for ``num_draws`` more draws each (or, with
        ``until="rhat<1.01,ess>400"``, until the rule holds or ``max_draws`` draws
        are kept), then post-process the whole run again.  The draws are
        bit-identical to those of one longer fit (:func:`gibbsjax.resume`).

        >>> from gibbsjax import LDA
        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(num_topics=2, num_chains=2, num_warmup=20, num_draws=20, seed=0,
        ...             progress=False).fit(abc_corpus())
        >>> model.extend(30).idata_.posterior.sizes["draw"]
        50
        """
        from gibbsjax.models import lda
        from gibbsjax.run import resume

        self._check_fitted()
        data = lda.data(self.corpus_, num_lanes=self.num_lanes)
        raw = resume(self.idata_, self.kernel, data, num_draws, progress=self.settings.progress,
                     chunk_size=self.settings.chunk_size, until=until, max_draws=max_draws)
        return self._set_result(raw, self.corpus_, data)

    def _set_result(self, raw, corpus, data) -> LDA:
        from gibbsjax.labels import Agreement
        from gibbsjax.models import lda
        from gibbsjax.reports import chains_disagree
        from gibbsjax.run import keep_raw_draws

        idata = lda.postprocess(raw.copy(), self.kernel, data,
                                {"corpus": corpus, "hyperparameters": self._hyperparameters(), "chains": self.chains})
        idata = keep_raw_draws(idata, raw)  # so the run can be extended
        self.idata_ = idata
        self.permutations_ = idata.topics["permutation"].values
        self.corpus_ = corpus
        self.vocab_ = corpus.vocab
        self.agreement_ = Agreement.from_dataset(idata.agreement)
        self.estimate_chains_ = json.loads(idata.topics.attrs["estimate_chains"])
        means = idata.posterior_mean
        self.topic_word_per_chain_ = means["topic_word"].transpose("chain", "topic", "word").values
        self.doc_topic_per_chain_ = means["doc_topic"].transpose("chain", "document", "topic").values
        self.topic_word_ = idata.topics["topic_word"].values
        self.doc_topic_ = self.doc_topic_per_chain_[self.estimate_chains_].mean(axis=0)
        problem = chains_disagree(idata)
        if problem:
            warnings.warn(problem, UserWarning, stacklevel=2)
        return self

    def _check_fitted(self):
        if not hasattr(self, "topic_word_"):
            raise RuntimeError("call fit(X) first")

    # ------------------------------------------------------------------ outputs
    def transform(self, X_new, *, num_sweeps: int = 100, num_burn: int = 50, seed: int = 0) -> np.ndarray:
        """θ (D_new × K) for unseen documents, with the fitted topics held fixed."""
        from gibbsjax.models.lda import infer_doc_topics

        self._check_fitted()
        corpus = self._corpus(X_new, "X_new")
        if corpus.vocab_size != len(self.vocab_):
            raise ValueError(
                f"X_new has a vocabulary of {corpus.vocab_size} words; the model was fitted on {len(self.vocab_)}"
            )
        return infer_doc_topics(self.topic_word_, corpus, alpha=self.alpha, num_sweeps=num_sweeps,
                                num_burn=num_burn, seed=seed)

    def top_words(self, n: int = 10) -> list[list[str]]:
        """The ``n`` most probable words of every topic."""
        from gibbsjax.evaluate import top_words

        self._check_fitted()
        return top_words(self.topic_word_, self.vocab_, n)

    def perplexity(self, X_heldout, **kwargs) -> float:
        """Held-out perplexity by document completion (:func:`gibbsjax.models.lda.heldout_perplexity`)."""
        from gibbsjax.models.lda import heldout_perplexity

        self._check_fitted()
        return heldout_perplexity(self.topic_word_, X_heldout, alpha=self.alpha, **kwargs)

    def coherence(self, kind: str = "umass", n: int = 10, X=None) -> np.ndarray:
        """Per-topic UMass or NPMI coherence of the top ``n`` words (on the training corpus by default)."""
        from gibbsjax.evaluate import coherence

        self._check_fitted()
        return coherence(self.topic_word_, self.corpus_ if X is None else X, kind=kind, n=n)

    def summary(self):
        """Convergence table: R-hat/ESS of ``lp`` and of each aligned topic's share of tokens."""
        from gibbsjax.diagnostics import summary

        self._check_fitted()
        return summary(self.idata_)

    def to_inference_data(self):
        """The aligned ArviZ InferenceData of the fit."""
        self._check_fitted()
        return self.idata_

    def __repr__(self) -> str:
        return (f"LDA(num_topics={self.num_topics}, alpha={self.alpha}, eta={self.eta}, "
                f"sampler={self.sampler!r}, num_chains={self.settings.num_chains}, chains={self.chains!r})")

    def get_params(self) -> dict[str, Any]:
        s = self.settings
        return {"num_topics": self.num_topics, "alpha": self.alpha, "eta": self.eta, "sampler": self.sampler,
                "num_chains": s.num_chains, "num_warmup": s.num_warmup, "num_draws": s.num_draws, "thin": s.thin,
                "seed": s.seed, "progress": s.progress, "chunk_size": s.chunk_size, "num_lanes": self.num_lanes,
                "chains": self.chains}
