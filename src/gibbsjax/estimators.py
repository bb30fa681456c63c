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

import inspect
import json
import os
import warnings
from typing import Any

import numpy as np

from gibbsjax._checks import check_int

__all__ = ["LDA"]

_EMPTY_CHOICES = ("keep", "drop", "error")
#: the group of a saved estimator that holds its parameters (attributes) and the
#: training corpus (arrays)
_ESTIMATOR_GROUP = "estimator"
_SAVE_FORMAT = 1


def _anonymous(vocab) -> bool:
    """A vocabulary ``("0", "1", ..., "V-1")``: columns of a matrix given without words."""
    return tuple(vocab) == tuple(str(i) for i in range(len(vocab)))


class LDA:
    """Latent Dirichlet allocation by exact Gibbs sampling, several chains at once.

    Parameters
    ----------
    num_topics : int
        K, the number of topics.
    alpha, eta : float
        Symmetric Dirichlet concentrations of θ_d (document–topic) and φ_k
        (topic–word); with learned priors, their starting values.
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
        conditional at every kept draw (:func:`gibbsjax.models.lda.theta_draws`).
    devices, shard : int or None, {"auto", "chains", "data"}
        Run on this many devices (e.g. GPUs), as :class:`gibbsjax.run.Settings`
        says: chains spread over them, or (fewer chains than devices, or
        ``shard="data"``) the documents split over them, every chain on every
        device (the partially collapsed sampler with fixed α and η, recording no
        φ or θ per draw).  Draws do not depend on the number of devices.
    sampler : {"partially_collapsed", "collapsed", "uncollapsed"}
        See :mod:`gibbsjax.models.lda`; all three are exact.  The default draws
        φ and integrates θ out, updating all documents in parallel.
    num_chains, num_warmup, num_draws, thin, seed, progress, chunk_size
        Passed to :func:`gibbsjax.sample` (``seed=None``: a fresh seed per fit,
        recorded in ``idata_.attrs["seed"]``).
    random_state : int, numpy RandomState or Generator, optional
        scikit-learn's name for the seed; give ``seed`` or ``random_state``,
        not both (``ValueError``).  A RandomState or Generator is asked for a
        seed at every :meth:`fit`, as scikit-learn does.
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
    empty : {"keep", "drop", "error"}
        Documents without tokens (after tokenising, or words unknown to the
        model in :meth:`transform`).  ``"keep"`` (the default): one output row
        per input document, as scikit-learn expects; an empty document's θ is
        its prior mean α/(Kα) = 1/K, exactly its posterior mean since it has no
        tokens, and it takes no part in sampling.  ``"drop"`` and ``"error"`` do
        what the corpus readers do (:mod:`gibbsjax.corpus`): drop them with an
        :class:`~gibbsjax.corpus.EmptyDocumentWarning` naming them (fewer rows
        out), or raise ``ValueError``.

    The constructor stores its arguments as given and checks them (``ValueError``
    naming the argument; :meth:`set_params` checks likewise); everything else
    happens in :meth:`fit`.

    Inputs (:meth:`fit`, :meth:`transform`, :meth:`score`, :meth:`perplexity`)
    --------------------------------------------------------------------------
    * a :class:`~gibbsjax.corpus.Corpus`;
    * a document-term count matrix (D × V, scipy.sparse or dense, e.g. from
      scikit-learn's ``CountVectorizer``), with ``vocab=`` naming its columns
      (without it the words are ``"0"``, ..., ``"V-1"``; :meth:`set_vocab` names
      them later);
    * an iterable of token lists (``[["cat", "sat"], ...]``,
      :meth:`Corpus.from_token_lists <gibbsjax.corpus.Corpus.from_token_lists>`);
    * an iterable of raw strings, tokenised by
      :meth:`Corpus.from_texts <gibbsjax.corpus.Corpus.from_texts>` (its default
      tokenizer, lower-cased, no stop words; build a Corpus yourself, or put a
      ``CountVectorizer`` before the model, for other choices).

    A mix (strings and token lists, ragged rows of numbers) is a ``ValueError``.
    New documents are matched to the model's words *by name* whenever both
    sides have names: a Corpus or a matrix with ``vocab=`` in another word order
    is reordered, and one whose vocabulary differs is refused (``ValueError``
    naming a word); token lists and texts are encoded with the model's
    vocabulary, words it does not know being ignored.  A matrix without names
    (what a ``CountVectorizer`` passes along in a ``Pipeline``) can only be
    checked for its number of columns.

    Attributes (after :meth:`fit` or :meth:`load`)
    ----------------------------------------------
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
        The training corpus (None after loading a ``gibbsjax run`` file without
        passing it).
    n_features_in_ : int
        V, as scikit-learn names it.

    The names ``topic_word_`` and ``doc_topic_`` are those of the ``lda``
    package; ``n_features_in_``, ``fit_transform``, ``get_params`` and
    ``set_params`` are scikit-learn's.  :meth:`fit` warns (``UserWarning``, with
    R-hat and the agreement verdict) exactly when ``gibbsjax run`` reports
    "chains disagree" (:func:`gibbsjax.reports.chains_disagree`): when a chain
    does not reproduce every topic of the reference chain, or R-hat of ``lp`` or
    of a topic's share exceeds 1.01.

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
        num_topics: int = 10,
        alpha: float = 0.1,
        eta: float = 0.01,
        sampler: str = "partially_collapsed",
        *,
        num_chains: int = 4,
        num_warmup: int = 100,
        num_draws: int = 100,
        thin: int = 1,
        seed: int | None = None,
        random_state=None,
        progress: bool = True,
        chunk_size: int | None = None,
        num_lanes: int | None = None,
        chains: str = "best",
        empty: str = "keep",
        learn_alpha: str = "fixed",
        asymmetric_alpha: bool = False,
        learn_eta: bool = False,
        alpha_prior: tuple[float, float] = (1.0, 1.0),
        eta_prior: tuple[float, float] = (1.0, 1.0),
        record_phi=None,
        record_theta=None,
        devices: int | None = None,
        shard: str = "auto",
    ):
        self.num_topics = num_topics
        self.alpha = alpha
        self.eta = eta
        self.sampler = sampler
        self.num_chains = num_chains
        self.num_warmup = num_warmup
        self.num_draws = num_draws
        self.thin = thin
        self.seed = seed
        self.random_state = random_state
        self.progress = progress
        self.chunk_size = chunk_size
        self.num_lanes = num_lanes
        self.chains = chains
        self.empty = empty
        self.learn_alpha = learn_alpha
        self.asymmetric_alpha = asymmetric_alpha
        self.learn_eta = learn_eta
        self.alpha_prior = alpha_prior
        self.eta_prior = eta_prior
        self.record_phi = record_phi
        self.record_theta = record_theta
        self.devices = devices
        self.shard = shard
        self._check_params()

    # ------------------------------------------------------------------ parameters (scikit-learn)
    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's arguments, as given (scikit-learn's convention).

        >>> LDA(num_topics=5, seed=0).get_params()["num_topics"]
        5
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params) -> LDA:
        """Set constructor arguments by name and return ``self`` (checked like the
        constructor's; an unknown name is a ``ValueError``).  Fitted attributes stay
        until the next :meth:`fit`.

        >>> LDA(num_topics=5).set_params(num_topics=7, alpha=0.5).num_topics
        7
        """
        known = self._param_names()
        for name in params:
            if name not in known:
                raise ValueError(f"unknown parameter {name!r} for LDA; parameters are: {', '.join(known)}")
        old = {name: getattr(self, name) for name in params}
        for name, value in params.items():
            setattr(self, name, value)
        try:
            self._check_params()
        except ValueError:
            for name, value in old.items():
                setattr(self, name, value)
            raise
        return self

    def _check_params(self) -> None:
        """Check the arguments without changing them (``ValueError`` naming the argument)."""
        from gibbsjax.labels import ESTIMATE_RULES
        from gibbsjax.models import lda

        check_int("num_topics", self.num_topics, 1)
        if not isinstance(self.sampler, str) or self.sampler not in lda.SAMPLERS:
            raise ValueError(f"sampler must be one of {sorted(lda.SAMPLERS)}, got {self.sampler!r}")
        self.kernel  # noqa: B018 -- the factory checks α, η and the learned-prior options
        if self.seed is not None and self.random_state is not None:
            raise ValueError("give seed or random_state (scikit-learn's name for it), not both")
        rs = self.random_state
        if rs is not None and not isinstance(rs, (np.random.RandomState, np.random.Generator)):
            check_int("random_state", rs, 0)
        self.settings  # noqa: B018 -- Settings checks chains, draws, thin, seed, progress, chunk_size
        if self.num_lanes is not None:
            check_int("num_lanes", self.num_lanes, 1)
        if not isinstance(self.chains, str) or self.chains not in ESTIMATE_RULES:
            raise ValueError(f"chains must be one of {tuple(ESTIMATE_RULES)}, got {self.chains!r}")
        if not isinstance(self.empty, str) or self.empty not in _EMPTY_CHOICES:
            raise ValueError(f"empty must be one of {_EMPTY_CHOICES}, got {self.empty!r}")

    @property
    def settings(self):
        """The :class:`gibbsjax.run.Settings` a fit runs with (a RandomState or
        Generator ``random_state`` shows as ``seed=None``: it gives a seed per fit)."""
        from gibbsjax.run import Settings

        seed = self.seed
        if seed is None and self.random_state is not None and not isinstance(
                self.random_state, (np.random.RandomState, np.random.Generator)):
            seed = self.random_state
        return Settings(num_chains=self.num_chains, num_warmup=self.num_warmup, num_draws=self.num_draws,
                        thin=self.thin, seed=seed, progress=self.progress, chunk_size=self.chunk_size,
                        devices=self.devices, shard=self.shard)

    @property
    def kernel(self):
        """The sampler (:mod:`gibbsjax.models.lda`) the parameters name."""
        from gibbsjax.models import lda

        return lda.SAMPLERS[self.sampler](self.num_topics, alpha=self.alpha, eta=self.eta, **self._prior_options(),
                                          **self._record_options())

    def _record_options(self, corpus=None) -> dict[str, Any]:
        """``record_phi`` / ``record_theta`` for the factory; with ``corpus``, document
        indices of ``record_theta`` mapped to the documents that are sampled (those with
        tokens), or ``ValueError`` naming an empty one."""
        out = {k: getattr(self, k) for k in ("record_phi", "record_theta") if getattr(self, k) is not None}
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

    def _kernel_for(self, corpus):
        from gibbsjax.models import lda

        return lda.SAMPLERS[self.sampler](self.num_topics, alpha=self.alpha, eta=self.eta, **self._prior_options(),
                                          **self._record_options(corpus))

    def _prior_options(self) -> dict[str, Any]:
        """The learned-prior arguments of the kernel factory (none when both are fixed,
        so a plain model keeps the factory's plain signature in its results)."""
        if self.learn_alpha == "fixed" and not self.learn_eta:
            if self.asymmetric_alpha:  # refused by the factory, with its message
                return {"learn_alpha": self.learn_alpha, "asymmetric_alpha": self.asymmetric_alpha}
            return {}
        return {"learn_alpha": self.learn_alpha, "asymmetric_alpha": self.asymmetric_alpha,
                "learn_eta": self.learn_eta, "alpha_prior": tuple(self.alpha_prior),
                "eta_prior": tuple(self.eta_prior)}

    def _fit_settings(self):
        settings = self.settings
        rs = self.random_state
        if isinstance(rs, np.random.RandomState):
            settings = settings.replace(seed=int(rs.randint(np.iinfo(np.int32).max)))
        elif isinstance(rs, np.random.Generator):
            settings = settings.replace(seed=int(rs.integers(np.iinfo(np.int32).max)))
        return settings

    def __sklearn_tags__(self):
        """scikit-learn ≥ 1.6 asks estimators for their tags; scikit-learn is imported
        here only, when it asks (older versions read :meth:`_more_tags`)."""
        try:
            from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags
        except ImportError:  # scikit-learn < 1.6 does not call this method
            return self._more_tags()
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=["float64"]),
                    input_tags=InputTags(two_d_array=True, sparse=True, positive_only=True, string=True),
                    requires_fit=True)

    def _more_tags(self) -> dict[str, Any]:
        """Tags for scikit-learn < 1.6."""
        return {"requires_positive_X": True, "X_types": ["2darray", "sparse", "string"],
                "requires_y": False, "preserves_dtype": [np.float64]}

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "topic_word_")

    def __repr__(self) -> str:
        defaults = {n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()
                    if n != "self"}
        shown = [f"{n}={v!r}" for n, v in self.get_params().items()
                 if n == "num_topics" or not (type(v) is type(defaults[n]) and v == defaults[n])]
        return f"LDA({', '.join(shown)})"

    # ------------------------------------------------------------------ inputs
    def _documents(self, X, name: str, vocab=None, *, fitting: bool):
        """``X`` as a Corpus of every input document (empty ones kept), matched to
        the model's vocabulary when not ``fitting``."""
        import scipy.sparse as sp

        from gibbsjax.corpus import Corpus

        known = None if fitting else self.vocab_
        if vocab is not None:
            vocab = tuple(str(w) for w in vocab)
        if isinstance(X, Corpus):
            if vocab is not None:
                raise ValueError(f"vocab names the columns of a document-term matrix; {name} is a Corpus, "
                                 "which carries its own vocabulary")
            return X if known is None else self._match_corpus(X, name)
        if X is None or isinstance(X, (str, bytes)):
            raise ValueError(f"{name} must be a collection of documents (a Corpus, a document-term matrix, "
                             f"token lists or strings), got {'a single string' if X is not None else 'None'}")
        if sp.issparse(X) or len(getattr(X, "shape", ())) == 2:  # also pandas, JAX arrays
            return self._matrix(X, name, vocab, known)
        try:
            docs = list(X)
        except TypeError:
            raise ValueError(f"{name} must be a Corpus, a document-term matrix, an iterable of token lists or "
                             f"an iterable of strings, got {type(X).__name__}") from None
        if not docs:
            raise ValueError(f"{name} holds no documents")
        kind = self._kind_of_documents(docs, name)
        if kind == "counts":
            try:
                matrix = np.asarray(docs)
            except ValueError:
                raise ValueError(f"{name}: rows of numbers must all have one length (a document-term "
                                 "matrix)") from None
            return self._matrix(matrix, name, vocab, known)
        if vocab is not None:
            raise ValueError(f"vocab names the columns of a document-term matrix; {name} holds {kind}")
        if kind == "texts":
            if known is not None and _anonymous(known):
                raise ValueError(f"{name} holds texts, but this model was fitted on a matrix without words; "
                                 "name them with set_vocab(words) first, or pass a document-term matrix")
            return Corpus.from_texts(docs, vocab=known, empty="keep")
        # token lists
        if known is not None:
            if _anonymous(known):
                raise ValueError(f"{name} holds token lists, but this model was fitted on a matrix without "
                                 "words; name them with set_vocab(words) first, or pass a document-term matrix")
            index = set(known)
            docs = [[w for w in d if w in index] for d in docs]  # words the model does not know: ignored
        return Corpus.from_token_lists(docs, vocab=known, empty="keep")

    @staticmethod
    def _kind_of_documents(docs: list, name: str) -> str:
        kinds: dict[str, int] = {}
        for j, d in enumerate(docs):
            if isinstance(d, str):
                kind = "texts"
            elif isinstance(d, bytes):
                raise ValueError(f"{name}[{j}] is bytes: decode texts to str first")
            else:
                try:
                    items = list(d)
                except TypeError:
                    raise ValueError(f"{name}[{j}] must be a string or a list of words, got "
                                     f"{type(d).__name__}") from None
                words = sum(isinstance(w, str) for w in items)
                numbers = sum(isinstance(w, (int, float, np.integer, np.floating)) and not isinstance(w, bool)
                              for w in items)
                if words and words == len(items):
                    kind = "token lists"
                elif numbers and numbers == len(items):
                    kind = "counts"
                elif not items:
                    continue  # an empty document: any kind
                else:
                    bad = next(w for w in items if not isinstance(w, str))
                    raise ValueError(f"{name}[{j}] mixes words with {type(bad).__name__} values; a token list "
                                     "holds strings only")
            if kinds and kind not in kinds:
                other, i = next(iter(kinds.items()))
                raise ValueError(f"{name} mixes {other} ({name}[{i}]) and {kind} ({name}[{j}]); give one kind "
                                 "of document")
            kinds.setdefault(kind, j)
        if not kinds:  # every document empty
            return "token lists"
        return next(iter(kinds))

    def _matrix(self, X, name: str, vocab, known):
        import scipy.sparse as sp

        from gibbsjax.corpus import Corpus

        if not sp.issparse(X):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"{name} must be a 2-D document-term matrix, got shape {X.shape}")
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name}: a document-term matrix holds counts, got dtype {X.dtype}")
        if vocab is not None and len(vocab) != X.shape[1]:
            raise ValueError(f"vocab has {len(vocab)} words for the {X.shape[1]} columns of {name}")
        if known is not None:
            if X.shape[1] != len(known) and (vocab is None or _anonymous(known) or _anonymous(vocab)):
                raise ValueError(f"{name} has a vocabulary of {X.shape[1]} words; the model was fitted on "
                                 f"{len(known)}")
            if vocab is not None and not _anonymous(known) and not _anonymous(vocab) and vocab != known:
                order = self._reorder(vocab, name)
                X = X[:, order]  # the model's word order
            vocab = known
        try:
            return Corpus.from_dtm(X, vocab=vocab, empty="keep")
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None

    def _reorder(self, vocab, name: str) -> np.ndarray:
        """Positions in ``vocab`` of the model's words, or a ValueError naming a word
        one side has and the other lacks."""
        known = self.vocab_
        position = {w: i for i, w in enumerate(vocab)}
        if len(position) != len(vocab):
            raise ValueError(f"{name}'s vocabulary has repeated words")
        missing = [w for w in known if w not in position]
        extra = [w for w in vocab if w not in set(known)]
        if missing or extra:
            what = "; ".join(([f"the model's word {missing[0]!r} is not in it"] if missing else [])
                             + ([f"its word {extra[0]!r} is not among the model's"] if extra else []))
            raise ValueError(
                f"{name}'s vocabulary differs from the model's ({len(vocab)} words vs {len(known)}; {what}); "
                "encode new documents with the model's vocabulary, e.g. Corpus.from_texts(texts, "
                "vocab=model.vocab_), or pass the texts or token lists themselves (unknown words are ignored)")
        return np.array([position[w] for w in known], dtype=np.int64)

    def _match_corpus(self, corpus, name: str):
        from gibbsjax.corpus import Corpus

        known = self.vocab_
        if corpus.vocab == known:
            return corpus
        if _anonymous(known) or _anonymous(corpus.vocab):
            if corpus.vocab_size != len(known):
                raise ValueError(f"{name} has a vocabulary of {corpus.vocab_size} words; the model was fitted "
                                 f"on {len(known)}")
            return corpus
        order = self._reorder(corpus.vocab, name)
        new_id = np.empty(len(known), np.int32)
        new_id[order] = np.arange(len(known), dtype=np.int32)
        return Corpus(new_id[corpus.tokens], corpus.doc_offsets, known, corpus.doc_names,
                      corpus.labels, corpus.label_names)

    def _apply_empty(self, corpus, name: str):
        """The readers' ``empty`` handling for "drop" and "error"; "keep" keeps."""
        from gibbsjax.corpus import _apply_empty

        if self.empty == "keep":
            return corpus
        return _apply_empty(corpus, self.empty, where=f" in {name}", stacklevel=4)

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, *, vocab=None) -> LDA:
        """Fit to ``X`` (any input of the class docstring; ``vocab`` names the
        columns of a matrix; ``y`` is ignored, as scikit-learn passes one) and
        return ``self``.

        Post-processing is :func:`gibbsjax.models.lda.postprocess`, the same as
        ``gibbsjax run`` applies to an LDA config.  Warns (``UserWarning``) when
        the chains disagree, with the same message the report prints.
        :meth:`extend` continues the run.

        >>> import warnings; warnings.simplefilter("ignore")
        >>> docs = [["apple", "pear", "apple"], ["stock", "bond"], ["pear", "apple"], ["bond", "stock", "stock"]]
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(docs)
        >>> model.vocab_, model.doc_topic_.shape
        (('apple', 'bond', 'pear', 'stock'), (4, 2))
        """
        from gibbsjax.config import _attr_value
        from gibbsjax.models import lda
        from gibbsjax.run import sample

        self._check_params()
        corpus = self._apply_empty(self._documents(X, "X", vocab, fitting=True), "X")
        if corpus.num_tokens == 0:
            raise ValueError("X has no tokens: LDA needs at least one document with words")
        sampled = self._sampled(corpus)
        data = lda.data(sampled, num_lanes=self.num_lanes)
        hyper = self._hyperparameters()
        kernel = self._kernel_for(corpus)
        raw = sample(kernel, data, self._fit_settings(),
                     attrs={"model": kernel.name, **{f"model_{k}": _attr_value(v) for k, v in hyper.items()},
                            "hyperparameters": json.dumps(hyper, sort_keys=True)})
        return self._set_result(raw, corpus, data)

    def fit_transform(self, X, y=None, *, vocab=None) -> np.ndarray:
        """:meth:`fit`, then θ of the training documents: ``doc_topic_`` (the
        posterior mean from the fit itself, not a new inference).

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0,
        ...     progress=False).fit_transform(abc_corpus()).shape
        (12, 2)
        """
        return self.fit(X, y, vocab=vocab).doc_topic_.astype(np.float64)

    @staticmethod
    def _sampled(corpus):
        """The documents with tokens: the empty ones take no part in sampling."""
        lengths = corpus.doc_lengths
        return corpus if np.all(lengths > 0) else corpus.subset(lengths > 0)

    def _hyperparameters(self) -> dict:
        out = {"K": int(self.num_topics), "alpha": float(self.alpha), "eta": float(self.eta)}
        for k, v in {**self._prior_options(), **self._record_options()}.items():
            out[k] = np.asarray(v).tolist() if isinstance(v, (tuple, list, np.ndarray)) else v
        return out

    def _alpha(self):
        """α the fitted model uses for new documents: the learned one (posterior mean from
        the estimate chains, one per topic or a scalar) or ``alpha`` as given."""
        learned = getattr(self, "alpha_", None)
        return self.alpha if learned is None else learned

    def _prior_theta(self) -> np.ndarray:
        """E[θ_d] under the prior Dir(α): an empty document's posterior mean."""
        a = np.broadcast_to(np.asarray(self._alpha(), np.float64), (int(self.num_topics),))
        return a / a.sum()

    def extend(self, num_draws: int, *, until: str | None = None, max_draws: int | None = None) -> LDA:
        """Continue the fitted chains for ``num_draws`` more draws each (or, with
        ``until="rhat<1.01,ess>400"``, until the rule holds or ``max_draws`` draws
        are kept), then post-process the whole run again.  The draws are
        bit-identical to those of one longer fit (:func:`gibbsjax.resume`).  Works
        on a loaded model too when it knows its training corpus.

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
        corpus = self._training_corpus("extend")
        data = lda.data(self._sampled(corpus), num_lanes=self.num_lanes)
        raw = resume(self.idata_, self._kernel_for(corpus), data, num_draws, progress=self.progress,
                     chunk_size=self.chunk_size, until=until, max_draws=max_draws, devices=self.devices)
        return self._set_result(raw, corpus, data)

    def _set_result(self, raw, corpus, data) -> LDA:
        from gibbsjax.models import lda
        from gibbsjax.reports import chains_disagree
        from gibbsjax.run import keep_raw_draws

        idata = lda.postprocess(raw.copy(), self._kernel_for(corpus), data,
                                {"corpus": self._sampled(corpus), "hyperparameters": self._hyperparameters(),
                                 "chains": self.chains})
        idata = keep_raw_draws(idata, raw)  # so the run can be extended
        self._adopt(idata, corpus, corpus.vocab)
        problem = chains_disagree(idata)
        if problem:
            warnings.warn(problem, UserWarning, stacklevel=3)
        return self

    def _adopt(self, idata, corpus, vocab) -> None:
        """Set the fitted attributes from a post-processed result (a fit's or a file's)."""
        from gibbsjax.labels import Agreement

        self.idata_ = idata
        attrs = idata.topics.attrs
        self.alpha_ = np.asarray(json.loads(str(attrs["learned_alpha"]))) if "learned_alpha" in attrs else None
        self.eta_ = float(json.loads(str(attrs["learned_eta"]))) if "learned_eta" in attrs else None
        self.permutations_ = idata.topics["permutation"].values
        self.corpus_ = corpus
        self.vocab_ = tuple(vocab)
        self.n_features_in_ = len(self.vocab_)
        self.agreement_ = Agreement.from_dataset(idata.agreement)
        self.estimate_chains_ = json.loads(str(idata.topics.attrs["estimate_chains"]))
        means = idata.posterior_mean
        self.topic_word_per_chain_ = means["topic_word"].transpose("chain", "topic", "word").values
        per_chain = means["doc_topic"].transpose("chain", "document", "topic").values
        if corpus is not None and corpus.num_docs != per_chain.shape[1]:
            # empty documents kept (empty="keep"): not sampled, their θ is the prior mean
            has_tokens = corpus.doc_lengths > 0
            if int(has_tokens.sum()) != per_chain.shape[1]:
                raise ValueError(f"the result has θ for {per_chain.shape[1]} documents; the corpus has "
                                 f"{int(has_tokens.sum())} with tokens")
            full = np.broadcast_to(self._prior_theta().astype(per_chain.dtype),
                                   (per_chain.shape[0], corpus.num_docs, per_chain.shape[2])).copy()
            full[:, has_tokens] = per_chain
            per_chain = full
        self.doc_topic_per_chain_ = per_chain
        self.topic_word_ = idata.topics["topic_word"].values
        self.doc_topic_ = self.doc_topic_per_chain_[self.estimate_chains_].mean(axis=0)

    def _check_fitted(self):
        if not hasattr(self, "topic_word_"):
            raise RuntimeError("call fit(X) first")

    def _training_corpus(self, what: str):
        if self.corpus_ is None:
            raise ValueError(f"{what} needs the training corpus, which this model does not hold (it was loaded "
                             "from a gibbsjax run result): load it with LDA.load(path, corpus=training_corpus)")
        return self.corpus_

    # ------------------------------------------------------------------ outputs
    def transform(self, X, *, vocab=None, num_sweeps: int = 100, num_burn: int = 50, seed: int = 0) -> np.ndarray:
        """θ (D_new × K) of new documents ``X`` (any input of the class docstring,
        matched to the model's words by name where both have names), the fitted
        topics φ held fixed: the average of E[θ_d | z] over ``num_sweeps −
        num_burn`` sweeps of the exact z-sampler given φ
        (:func:`gibbsjax.models.lda.infer_doc_topics`).  The same ``seed`` gives
        the same output.  Empty documents: see ``empty``.

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.transform([["a", "a", "b"], ["c", "unknown"], []]).round(2).shape
        (3, 2)
        """
        from gibbsjax.models.lda import infer_doc_topics

        self._check_fitted()
        corpus = self._apply_empty(self._documents(X, "X", vocab, fitting=False), "X")
        theta = np.broadcast_to(self._prior_theta(), (corpus.num_docs, int(self.num_topics))).copy()
        has_tokens = corpus.doc_lengths > 0
        if np.any(has_tokens):
            theta[has_tokens] = infer_doc_topics(self.topic_word_, self._sampled(corpus), alpha=self._alpha(),
                                                 num_sweeps=num_sweeps, num_burn=num_burn, seed=seed)
        return theta

    def score(self, X, y=None, **kwargs) -> float:
        """The *negative* held-out perplexity of ``X`` by document completion
        (:meth:`perplexity`), so that greater is better, as scikit-learn's model
        selection (``GridSearchCV``, ``cross_val_score``) expects.  Not
        scikit-learn's ``LatentDirichletAllocation.score`` (a variational bound
        on the log likelihood).  ``kwargs`` go to :meth:`perplexity`.

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.score(abc_corpus()) == -model.perplexity(abc_corpus())
        True
        """
        return -self.perplexity(X, **kwargs)

    def perplexity(self, X_heldout, *, vocab=None, **kwargs) -> float:
        """Held-out perplexity by document completion (:func:`gibbsjax.models.lda.heldout_perplexity`;
        lower is better; ``X_heldout`` any input, matched to the model's words).

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> 1 < model.perplexity(abc_corpus()) < 3   # 3 words: a uniform guess scores 3
        True
        """
        from gibbsjax.models.lda import heldout_perplexity

        self._check_fitted()
        corpus = self._documents(X_heldout, "X_heldout", vocab, fitting=False)
        return heldout_perplexity(self.topic_word_, corpus, alpha=self._alpha(), **kwargs)

    def top_words(self, n: int = 10, *, with_probabilities: bool = False) -> list[list]:
        """The ``n`` most probable words of every topic; with
        ``with_probabilities=True``, pairs ``(word, φ_kw)``.

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> word, p = model.top_words(1, with_probabilities=True)[0][0]
        >>> isinstance(word, str) and 0 < p <= 1
        True
        """
        from gibbsjax.evaluate import top_words

        self._check_fitted()
        return top_words(self.topic_word_, self.vocab_, n, with_probabilities=with_probabilities)

    def coherence(self, kind: str = "umass", n: int = 10, X=None, **kwargs) -> np.ndarray:
        """Per-topic coherence of the top ``n`` words in ``X`` (default: the training
        corpus).  ``kind`` is one of :data:`gibbsjax.evaluate.COHERENCE_KINDS`:
        ``"umass"`` (Mimno et al. 2011: a sum over word pairs with +1 smoothing),
        ``"umass_gensim"`` (gensim's ``u_mass``: a mean with ε), ``"npmi"``
        (document co-occurrence) or ``"c_v"`` (Röder et al. 2015; needs the
        training documents in reading order: a Corpus, token lists or texts).
        See :func:`gibbsjax.evaluate.coherence`.

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.coherence("umass_gensim", n=2).shape
        (2,)
        """
        from gibbsjax.evaluate import coherence

        self._check_fitted()
        corpus = self._training_corpus("coherence without X") if X is None else \
            self._documents(X, "X", None, fitting=False)
        return coherence(self.topic_word_, corpus, kind=kind, n=n, **kwargs)

    def to_pyldavis(self) -> dict[str, Any]:
        """The five arrays ``pyLDAvis.prepare`` takes, for the training documents:
        ``pyLDAvis.prepare(**model.to_pyldavis())`` (pyLDAvis is not a dependency;
        see :func:`gibbsjax.evaluate.pyldavis_data`).

        >>> from gibbsjax.datasets import abc_corpus
        >>> import warnings; warnings.simplefilter("ignore")
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> model.to_pyldavis()["topic_term_dists"].shape
        (2, 3)
        """
        from gibbsjax.evaluate import pyldavis_data

        self._check_fitted()
        return pyldavis_data(self.topic_word_, self.doc_topic_, self._training_corpus("to_pyldavis"),
                             vocab=self.vocab_)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of :meth:`transform`'s columns, ``"topic0"``, ..., as scikit-learn's
        ``set_output`` and ``ColumnTransformer`` ask for.

        >>> LDA(3).get_feature_names_out().tolist()
        ['topic0', 'topic1', 'topic2']
        """
        return np.array([f"topic{k}" for k in range(int(self.num_topics))], dtype=object)

    def set_vocab(self, vocab) -> LDA:
        """Name the words of a model fitted on a matrix without ``vocab`` (e.g. in a
        ``Pipeline`` after a ``CountVectorizer``:
        ``pipe["lda"].set_vocab(pipe["vectorizer"].get_feature_names_out())``), so
        that :meth:`top_words`, :meth:`save` and :meth:`transform` use the words.
        Returns ``self``.

        >>> import numpy as np, warnings; warnings.simplefilter("ignore")
        >>> X = np.array([[3, 0, 1], [0, 2, 2], [4, 1, 0]])
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(X)
        >>> model.vocab_
        ('0', '1', '2')
        >>> model.set_vocab(["cat", "dog", "pet"]).vocab_
        ('cat', 'dog', 'pet')
        """
        from gibbsjax import evaluate
        from gibbsjax.corpus import Corpus

        self._check_fitted()
        words = tuple(str(w) for w in vocab)
        if len(words) != len(self.vocab_):
            raise ValueError(f"vocab has {len(words)} words; the model has {len(self.vocab_)}")
        if len(set(words)) != len(words):
            raise ValueError("vocab has repeated words")
        if words == self.vocab_:
            return self
        if not _anonymous(self.vocab_):
            raise ValueError("this model already knows its words (vocab_); set_vocab names those of a model "
                             "fitted on a matrix without vocab")
        c = self.corpus_
        if c is not None:
            self.corpus_ = Corpus(c.tokens, c.doc_offsets, words, c.doc_names, c.labels, c.label_names)
        self.idata_.posterior_mean = self.idata_.posterior_mean.assign_coords(word=list(words))
        topics = self.idata_.topics
        if "top_words" in topics.attrs:
            topics.attrs["top_words"] = json.dumps(evaluate.top_words(self.topic_word_, words, 10))
        self.vocab_ = words
        return self

    def summary(self):
        """Convergence table: R-hat/ESS of ``lp`` and of each aligned topic's share of tokens."""
        from gibbsjax.diagnostics import summary

        self._check_fitted()
        return summary(self.idata_)

    def to_inference_data(self):
        """The aligned ArviZ InferenceData of the fit."""
        self._check_fitted()
        return self.idata_

    # ------------------------------------------------------------------ save and load (NetCDF, no pickle)
    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted model to a NetCDF file: ``idata_`` as it is (so
        ``gibbsjax summary`` and ``gibbsjax plot`` read it), plus a group
        ``estimator`` with the constructor's arguments (JSON, in its attributes)
        and the training corpus (tokens, document offsets, words, document
        names).  Plain arrays and text, no pickle: :meth:`load` rebuilds the
        model without running code from the file.

        >>> import os, tempfile, warnings; warnings.simplefilter("ignore")
        >>> from gibbsjax.datasets import abc_corpus
        >>> model = LDA(2, num_chains=2, num_warmup=20, num_draws=20, seed=0, progress=False).fit(abc_corpus())
        >>> path = os.path.join(tempfile.mkdtemp(), "lda.nc")
        >>> model.save(path)
        >>> (LDA.load(path).topic_word_ == model.topic_word_).all()
        np.True_
        """
        import arviz as az
        import xarray as xr

        self._check_fitted()
        params = self.get_params()
        if params["random_state"] is not None and not isinstance(params["random_state"], (int, np.integer)):
            params["random_state"] = None  # a RandomState: the seed it gave is recorded
            params["seed"] = int(self.idata_.attrs["seed"])
        params = {k: (int(v) if isinstance(v, np.integer) else float(v) if isinstance(v, np.floating)
                      else np.asarray(v).tolist() if isinstance(v, (tuple, list, np.ndarray)) else v)
                  for k, v in params.items()}
        attrs = {"params": json.dumps(params), "format": _SAVE_FORMAT,
                 "note": "a gibbsjax.LDA: load it with gibbsjax.LDA.load(path)"}
        variables = {"vocab": ("word", np.array(self.vocab_, dtype=str))}
        c = self.corpus_
        if c is not None:
            variables.update({
                "tokens": ("token", np.asarray(c.tokens, np.int32)),
                "doc_offsets": ("doc_offset", np.asarray(c.doc_offsets, np.int64)),
                "doc_names": ("document", np.array(c.doc_names, dtype=str)),
            })
            if c.labels is not None:
                variables["labels"] = ("document", np.asarray(c.labels, np.int32))
                attrs["label_names"] = json.dumps(list(c.label_names))
        groups = {g: self.idata_[g] for g in self.idata_.groups()}
        groups[_ESTIMATOR_GROUP] = xr.Dataset(variables, attrs=attrs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # groups outside ArviZ's schema
            out = az.InferenceData(**groups)
        out.attrs = dict(self.idata_.attrs)  # the run's attributes (seed, config, ...)
        out.to_netcdf(str(path))

    @classmethod
    def load(cls, path: str | os.PathLike, *, corpus=None) -> LDA:
        """A fitted :class:`LDA` from a file written by :meth:`save`, or by
        ``gibbsjax run`` for an LDA config (its parameters then come from the
        file's attributes: K, α, η, sampler, chains, warm-up, draws, seed).

        ``topic_word_``, ``doc_topic_``, :meth:`top_words`, :meth:`transform`
        (the same seed gives the same output as before saving),
        :meth:`perplexity`, :meth:`score` and :meth:`summary` work on any such
        file.  :meth:`coherence` (without ``X``), :meth:`to_pyldavis` and
        :meth:`extend` need the training corpus: a saved estimator holds it; for
        a ``gibbsjax run`` result pass it as ``corpus`` (the training part of the
        config's data, checked against the file's ``data_sha256``).  Example: see
        :meth:`save`.
        """
        import arviz as az

        from gibbsjax.corpus import Corpus

        with az.rc_context({"data.load": "eager"}):
            idata = az.from_netcdf(str(path))
        attrs = dict(idata.attrs)
        if not str(attrs.get("model", "")).startswith("lda.") or "posterior_mean" not in idata.groups():
            raise ValueError(f"{path} is not an LDA result (attrs['model'] = {attrs.get('model')!r})")
        if "topics" not in idata.groups() or "agreement" not in idata.groups():
            raise ValueError(f"{path} holds raw draws that were never post-processed; run "
                             f"`gibbsjax resume {path} --draws 0` first")
        groups = [g for g in idata.groups() if g != _ESTIMATOR_GROUP]
        saved = idata[_ESTIMATOR_GROUP] if _ESTIMATOR_GROUP in idata.groups() else None
        means = idata.posterior_mean
        if saved is not None:
            params = json.loads(str(saved.attrs["params"]))
            vocab = tuple(str(w) for w in saved["vocab"].values)
            stored = None
            if "tokens" in saved:
                labels = saved["labels"].values if "labels" in saved else None
                names = json.loads(str(saved.attrs["label_names"])) if "label_names" in saved.attrs else ()
                stored = Corpus(saved["tokens"].values, saved["doc_offsets"].values, vocab,
                                tuple(str(n) for n in saved["doc_names"].values), labels, tuple(names))
        else:
            params = cls._params_from_run(idata)
            vocab = tuple(str(w) for w in means["word"].values)
            stored = None
        known = cls._param_names()
        for name in ("alpha_prior", "eta_prior"):  # JSON gave lists back; the constructor's default is a tuple
            if isinstance(params.get(name), list):
                params[name] = tuple(params[name])
        model = cls(**{k: v for k, v in params.items() if k in known})
        keep = {g: idata[g] for g in groups}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clean = az.InferenceData(**keep)
        clean.attrs = attrs
        if corpus is not None:
            if stored is not None:
                raise ValueError(f"{path} holds its training corpus; corpus= is for gibbsjax run results")
            stored = model._check_training_corpus(corpus, clean, vocab)
        model._adopt(clean, stored, vocab)
        return model

    @staticmethod
    def _params_from_run(idata) -> dict[str, Any]:
        """Constructor arguments from the attributes of a ``gibbsjax run`` result."""
        import tomllib

        from gibbsjax.labels import ESTIMATE_RULES

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
            "num_lanes": num_lanes, "chains": chains,
        }

    def _check_training_corpus(self, corpus, idata, vocab):
        from gibbsjax.corpus import Corpus
        from gibbsjax.models import lda
        from gibbsjax.run import data_fingerprint

        if not isinstance(corpus, Corpus):
            raise ValueError(f"corpus must be a gibbsjax.corpus.Corpus, got {type(corpus).__name__}")
        if corpus.vocab != tuple(vocab):
            raise ValueError("corpus has another vocabulary than the result's; pass the training corpus")
        stored = str(idata.attrs.get("data_sha256", ""))
        if stored and data_fingerprint(lda.data(self._sampled(corpus), num_lanes=self.num_lanes)) != stored:
            raise ValueError("corpus differs from the one this result was sampled on (data_sha256 does not "
                             "match); pass the training part of the config's data")
        return corpus
