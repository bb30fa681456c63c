"""One-label-per-document mixtures: the mixture of unigrams and the Bernoulli mixture.

* :func:`unigrams` -- the Bayesian document model of Sarkar's lecture notes 21
  ("Bayesian Document Model"), uncollapsed exactly as those notes write it, and the
  sampler of the CSE 5523 lecture notes 23 §23.3 (the a/b/c two-topic example):

      π ~ Dir(α),  β_k ~ Dir(λ) (k = 1..K),  Z_d | π ~ Cat(π),
      W_id | Z_d = k, β ~ Cat(β_k).

  One sweep: π | Z and β | Z, W (:func:`sample_pi_beta`, one block: they are
  independent given Z), then :func:`sample_z`.  These conditionals (and
  :class:`UnigramState`, :func:`pi_posterior`, :func:`beta_posterior`) live in
  :mod:`gibbsjax.models.one_label`, which naive Bayes with π drawn shares; they are
  re-exported here.
* :func:`unigrams_collapsed` -- the same model with π integrated out (Sarkar's lecture notes 21
  §21.2.2): :func:`sample_beta`, then :func:`sample_z_collapsed`.
* :func:`bernoulli` -- the two-class mixture over binary features of Padó (2012)
  (Padó, "Gibbs sampling", §4-5), for K >= 2 classes:

      π ~ Dir(α) (Beta(α_0, α_1) for K = 2),  p_kf ~ Beta(a, b),
      S_d | π ~ Cat(π),  F_df | S_d = k, p ~ Bernoulli(p_kf).

  One sweep: π | S and p | S, F (:func:`sample_pi_p`, one block), then :func:`sample_s`.

Exactness and parallelism
-------------------------
Uncollapsed samplers (:func:`unigrams`, :func:`bernoulli`): given π and the
class parameters the labels are conditionally independent (each depends only
on its own document), so all of them are drawn at once -- one categorical per
document -- which is an exact draw from their joint full conditional.  Given the
labels, π and every class's parameters are independent conjugate draws.

Collapsed sampler (:func:`unigrams_collapsed`): with π integrated out the
labels are coupled through the class counts, so they are drawn one document
after another (``lax.scan`` over documents carrying the counts), each from its
exact full conditional (C_k^{(−d)} + α_k) Π_i β_{k,W_id}.  Drawing them all at
once from stale counts would be an approximation; we do not.

Outputs
-------
Per draw: ``pi`` (cluster) -- for the collapsed sampler the Rao-Blackwellised
E[π | Z] = (C + α)/(D + Σα) --, the cluster parameters ``beta`` (cluster, word)
or ``p`` (cluster, feature), and ``doc_probs`` (doc, cluster): each document's
full conditional P(Z_d = k | rest) evaluated at the current state
(Rao-Blackwellised label probabilities; their average over draws estimates
P(Z_d = k | data)).  With ``keep_draws=False`` only ``pi`` is recorded per draw
and the big ``beta``/``p`` and ``doc_probs`` are averaged on the device
(``accumulate``: per-chain means in the ``posterior_mean`` group) -- for large
corpora, at the price that label switching *within* a chain can then no longer
be undone.  Clusters are exchangeable: chains find them in different orders and
small, overlapping data make chains switch labels, so relabel them
(:func:`gibbsjax.labels.relabel_draws` per draw,
:func:`gibbsjax.labels.align_chains` across chains; the spec's postprocess does
both) before comparing per-cluster quantities; the log joint (``lp``) is
label-invariant.

Typos in the seeds, corrected here
----------------------------------
* Seed 001 writes the β_k prior as Dir(λ_1, ..., λ_{N_d}) and the exponent as
  m_dv + λ_k − 1; the prior has one entry per vocabulary word, Dir(λ_1..λ_V),
  and the posterior is Dir(m_k1 + λ_1, ..., m_kV + λ_V) with m_kv the count of
  word v in documents of topic k.  The π prior is written both Dir(λ) and
  Dir(α), its exponent with d_k: it is Dir(α) with posterior Dir(n_k + α_k).
  The normaliser of Z_d's conditional sums over k = 1..K, not 1..N_d.
* Seed 004's eq. (16) gives (1 − x)^{C_1 + α − 1}; with π ~ Beta(α, β) it is
  x^{C_0 + α − 1} (1 − x)^{C_1 + β − 1}.  Its step 1 estimates P(F | S) "by
  counting"; the Bayesian version used here draws p_kf from its Beta posterior,
  the prior read as pseudo-counts (a ones and b zeros per class and feature).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import conjugate as cj
from gibbsjax.models import one_label as ol
from gibbsjax import random as gr
from gibbsjax import rows as rw
from gibbsjax._checks import check_concentration, check_int, init_checker
from gibbsjax.corpus import Corpus
from gibbsjax.kernel import Kernel, sweep
from gibbsjax.models.one_label import (BinaryData, Documents, UnigramState, beta_posterior, pi_posterior, sample_pi_beta,
                                sample_z)
from gibbsjax.rows import Rows
from jax.sharding import PartitionSpec as P

__all__ = [
    "UnigramState",
    "CollapsedUnigramState",
    "BernoulliState",
    "unigram_data",
    "bernoulli_data",
    "unigrams",
    "unigrams_collapsed",
    "bernoulli",
    "pi_posterior",
    "beta_posterior",
    "p_posterior",
    "sample_pi_beta",
    "sample_beta",
    "sample_z",
    "sample_z_collapsed",
    "sample_pi_p",
    "sample_s",
]


# ============================================================================ data
def unigram_data(corpus) -> Documents:
    """Validate a :class:`~gibbsjax.corpus.Corpus` for :func:`unigrams` / :func:`unigrams_collapsed`.

    Every document's cluster is latent; the corpus's labels, if any, are kept in
    ``true_labels`` for evaluation only.

    Parameters
    ----------
    corpus : Corpus
        The documents.

    Returns
    -------
    Documents
        The validated data.

    Raises
    ------
    ValueError
        For an empty corpus or a document without tokens (see
        :func:`gibbsjax.models.one_label.documents`).

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> d = unigram_data(Corpus.from_token_lists([["a", "a"], ["c", "c"], ["a", "c"]]))
    >>> d.true_labels.tolist()   # no labels: every cluster is latent
    [-1, -1, -1]
    """
    return ol.documents(corpus, observed=False)


def bernoulli_data(features, *, labels=None, feature_names=None, label_names=(), doc_names=None,
                   max_features: int | None = None) -> BinaryData:
    """Validate binary features for :func:`bernoulli`.

    Parameters
    ----------
    features : array_like, scipy.sparse matrix or Corpus
        A D × F 0/1 matrix (numpy, nested lists or scipy.sparse), or a
        :class:`~gibbsjax.corpus.Corpus`, which becomes word presence (x_dv = 1 if
        word v occurs in document d), with the corpus's vocabulary, document names
        and labels.
    labels : array_like of int, optional
        Known labels (-1 = unknown), for evaluation only.
    feature_names : sequence of str, optional
        A name per feature.
    label_names : sequence of str, optional
        The labels' names.
    doc_names : sequence of str, optional
        A name per document.
    max_features : int, optional
        For a corpus: keep the words that occur in most documents (ties by word id).

    Returns
    -------
    BinaryData
        The validated data.

    Raises
    ------
    ValueError
        Naming the argument for a matrix that is not 2-D, empty or not binary, and
        for names or labels of the wrong length.

    Examples
    --------
    >>> d = bernoulli_data([[1, 0, 1], [0, 1, 1]])
    >>> d.x.tolist(), d.x.dtype
    ([[1, 0, 1], [0, 1, 1]], dtype('int32'))
    >>> bernoulli_data([[1, 2]])
    Traceback (most recent call last):
    ...
    ValueError: features must be binary: every entry 0 or 1 (True/False)
    """
    if max_features is not None:
        max_features = check_int("max_features", max_features, 1)
    if isinstance(features, Corpus):
        corpus = features
        if corpus.num_docs == 0:
            raise ValueError("features: the corpus is empty")
        dtm = corpus.to_dtm()
        dtm.data[:] = 1
        vocab = np.asarray(corpus.vocab, dtype=object)
        if max_features is not None and max_features < corpus.vocab_size:
            df = np.asarray(dtm.sum(axis=0)).ravel()
            keep = np.sort(np.argsort(-df, kind="stable")[:max_features])
            dtm, vocab = dtm[:, keep], vocab[keep]
        return ol.binary_data(
            dtm,
            labels=corpus.labels if labels is None else labels,
            feature_names=tuple(vocab) if feature_names is None else feature_names,
            label_names=corpus.label_names if not label_names else label_names,
            doc_names=corpus.doc_names if doc_names is None else doc_names,
        )
    if max_features is not None:
        raise ValueError("max_features applies to a Corpus only; select columns of the matrix yourself")
    return ol.binary_data(features, labels=labels, feature_names=feature_names,
                          label_names=label_names, doc_names=doc_names)


def _check_num_clusters(K) -> int:
    return check_int("K", K, 2)


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def _check_binary(data) -> BinaryData:
    if not isinstance(data, BinaryData):
        raise ValueError(f"data must be built by mixtures.bernoulli_data(features), got {type(data).__name__}")
    return data


def _doc_coords(data, k: int, item_dim: str) -> dict:
    return {"cluster": list(range(k)), item_dim: list(data.info.items), "document": list(data.info.doc_names)}


# ============================================================================ conditionals
class CollapsedUnigramState(NamedTuple):
    """π-collapsed mixture of unigrams.

    Parameters
    ----------
    log_beta, z : jax.Array
        As in :class:`~gibbsjax.models.one_label.UnigramState` (π is integrated out).

    Examples
    --------
    >>> import jax
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import mixtures
    >>> d = mixtures.unigram_data(Corpus.from_texts(['a b a', 'c d', 'a a b']))
    >>> state = mixtures.unigrams_collapsed(2).init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('CollapsedUnigramState', ('log_beta', 'z'))
    """

    log_beta: jax.Array
    z: jax.Array


class BernoulliState(NamedTuple):
    """Bernoulli mixture state.

    Parameters
    ----------
    log_pi : jax.Array
        log π, (K,).
    log_p, log1m_p : jax.Array
        log p and log(1 − p), (K, F).
    z : jax.Array
        S, (D,) int32.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from gibbsjax.models import mixtures
    >>> d = mixtures.bernoulli_data(np.array([[1, 0, 1], [0, 1, 1]]))
    >>> state = mixtures.bernoulli(2).init(jax.random.key(0), d)
    >>> type(state).__name__, state._fields
    ('BernoulliState', ('log_pi', 'log_p', 'log1m_p', 'z'))
    """

    log_pi: jax.Array
    log_p: jax.Array
    log1m_p: jax.Array
    z: jax.Array


def sample_beta(key, state, data: Documents, *, lam: float) -> jax.Array:
    """β_k | {Z_d}, {W_id} ~ Dir(m_k + λ) for every k (Sarkar's lecture notes 21, 2.).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : CollapsedUnigramState
        The current state; its labels are used.
    data : Documents
        The documents.
    lam : float
        The concentration λ.

    Returns
    -------
    jax.Array
        The new log β, (K, V).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> d = unigram_data(Corpus.from_token_lists([["a", "a"], ["c", "c"], ["a", "c"]]))
    >>> s = CollapsedUnigramState(log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])), z=jnp.array([0, 1, 0]))
    >>> log_beta = sample_beta(jax.random.key(0), s, d, lam=1.0)
    >>> log_beta.shape, [round(float(v), 4) for v in jnp.exp(log_beta).sum(axis=1)]
    ((2, 2), [1.0, 1.0])
    """
    return gr.log_dirichlet(key, beta_posterior(state, data, lam=lam))


def sample_z_collapsed(key, state: CollapsedUnigramState, data: Documents, *, alpha) -> jax.Array:
    """Z_d | Z_{−d}, β, W ∝ (n_k^{(−d)} + α_k) Π_i β_{k, W_id}, one d after another (Sarkar's lecture notes 21 §21.2.2).

    n_k^{(−d)} = #{d' ≠ d : Z_d' = k}.  Sequential because collapsing π couples
    the labels through the counts (``lax.scan`` over documents).

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : CollapsedUnigramState
        The current state.
    data : Documents
        The documents.
    alpha : float or jax.Array
        The concentration of π.

    Returns
    -------
    jax.Array
        The new labels ((D,) int32).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from gibbsjax.corpus import Corpus
    >>> s = CollapsedUnigramState(log_beta=jnp.log(jnp.array([[0.9, 0.1], [0.1, 0.9]])), z=jnp.array([0, 1, 0]))
    >>> d = unigram_data(Corpus.from_token_lists([["a", "a"], ["c", "c"], ["a", "c"]]))
    >>> z = sample_z_collapsed(jax.random.key(0), s, d, alpha=1.0)
    >>> z.shape, z.dtype
    ((3,), dtype('int32'))
    """
    k = state.log_beta.shape[0]
    loglik = ol.doc_log_likelihood(state.log_beta, data)
    return ol.sample_labels_sequential(key, ol.current_labels(state, data), loglik,
                                       cj.concentration_vector("alpha", alpha, k), data.latent)


def p_posterior(state: BernoulliState, data: BinaryData, *, a: float, b: float,
                rows: Rows | None = None) -> jax.Array:
    """Parameters of p_kf | S, F ~ Beta(a + n1_kf, b + n0_kf), stacked (K, F, 2) (Padó 2012, §4-5).

    n1_kf / n0_kf = number of class-k documents with feature f on / off: the
    prior adds a pseudo-counts of "on" and b of "off".

    Parameters
    ----------
    state : BernoulliState
        The current state (labels are used).
    data : BinaryData
        The features.
    a, b : float
        The Beta prior.
    rows : Rows, optional
        With documents split over devices (:mod:`gibbsjax.rows`), counts summed
        over every device's documents.

    Returns
    -------
    jax.Array
        (K, F, 2): the two Beta parameters.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> d = bernoulli_data([[1, 0, 1], [0, 1, 1]])
    >>> p = jnp.array([[0.9, 0.1, 0.5], [0.1, 0.9, 0.5]])
    >>> s = BernoulliState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_p=jnp.log(p), log1m_p=jnp.log1p(-p),
    ...                    z=jnp.array([0, 1]))
    >>> p_posterior(s, d, a=1.0, b=1.0)[0].tolist()   # class 0 holds document 0, features (1, 0, 1)
    [[2.0, 1.0], [1.0, 2.0], [2.0, 1.0]]
    """
    k = state.log_p.shape[0]
    n1, n0 = rw.total(rows, ol.feature_counts(rw.here(rows, state.z, k), data.x, k))
    f = jnp.result_type(float)
    return jnp.stack([n1.astype(f) + a, n0.astype(f) + b], axis=-1)


def sample_pi_p(key, state: BernoulliState, data: BinaryData, *, alpha, a: float, b: float,
                rows: Rows | None = None) -> BernoulliState:
    """π | S ~ Dir(C + α) and p_kf | S, F ~ Beta(a + n1_kf, b + n0_kf) (Padó 2012), as one block.

    Given the labels S, π and the p_kf are independent, so one joint draw (one
    gamma call; a Beta draw is a two-category Dirichlet draw, which keeps both
    log p and log(1 − p) accurate) equals drawing them in turn.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : BernoulliState
        The current state: its labels are used.
    data : BinaryData
        The features.
    alpha : float or jax.Array
        The concentration of π.
    a, b : float
        The Beta prior of p.
    rows : Rows, optional
        Documents split over devices: counts summed over the devices.

    Returns
    -------
    BernoulliState
        The state with new log π, log p and log(1 − p).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> p = jnp.array([[0.9, 0.1, 0.5], [0.1, 0.9, 0.5]])
    >>> d = bernoulli_data([[1, 0, 1], [0, 1, 1]])
    >>> s = BernoulliState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_p=jnp.log(p), log1m_p=jnp.log1p(-p),
    ...                    z=jnp.array([0, 1]))
    >>> new = sample_pi_p(jax.random.key(0), s, d, alpha=1.0, a=1.0, b=1.0)
    >>> new.log_p.shape, bool(jnp.allclose(jnp.exp(new.log_p) + jnp.exp(new.log1m_p), 1.0, atol=1e-5))
    ((2, 3), True)
    """
    log_pi, log_pq = cj.sample_log_dirichlets(
        key, pi_posterior(state, data, alpha=alpha, rows=rows), p_posterior(state, data, a=a, b=b, rows=rows))
    return state._replace(log_pi=log_pi, log_p=log_pq[..., 0], log1m_p=log_pq[..., 1])


def _s_logits(state: BernoulliState, data: BinaryData) -> jax.Array:
    return state.log_pi + ol.bernoulli_log_likelihood(state.log_p, state.log1m_p, data.x)


def sample_s(key, state: BernoulliState, data: BinaryData, rows: Rows | None = None) -> jax.Array:
    """S_d | π, p, F for every d at once (Padó 2012, eq. 7).

    P(S_d = k) ∝ π_k Π_f p_kf^{F_df} (1 − p_kf)^{1 − F_df}.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    state : BernoulliState
        The current state.
    data : BinaryData
        The features.
    rows : Rows, optional
        Documents split over devices; document d's draw is the same as on one device.

    Returns
    -------
    jax.Array
        (D,) int32, the documents' new labels.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> p = jnp.array([[0.9, 0.1, 0.5], [0.1, 0.9, 0.5]])
    >>> s = BernoulliState(log_pi=jnp.log(jnp.array([0.5, 0.5])), log_p=jnp.log(p), log1m_p=jnp.log1p(-p),
    ...                    z=jnp.array([0, 1]))
    >>> d = bernoulli_data([[1, 0, 1], [0, 1, 1]])
    >>> z = sample_s(jax.random.key(0), s, d)
    >>> z.shape, z.dtype
    ((2,), dtype('int32'))
    """
    if rows is None:
        return ol.sample_labels_parallel(key, _s_logits(state, data))
    return rows.categorical(key, _s_logits(state, data))


# ============================================================================ factories
def unigrams(K: int = 2, alpha: float | tuple[float, ...] = 1.0, lam: float = 1.0,
             keep_draws: bool = True) -> Kernel:
    """Uncollapsed Gibbs sampler for the mixture of unigrams (Sarkar's lecture notes 21; the CSE 5523 lecture notes 23 §23.3).

    The the CSE 5523 lecture notes 23 code uses α = λ = 1.  Each sweep draws π | Z, β | Z,
    W, then all Z_d | π, β at once (exact: see the module docs).  Random start: Z
    uniform (π and β are drawn from Z first).

    Parameters
    ----------
    K : int, default 2
        Clusters, >= 2.
    alpha : float or tuple of float, default 1.0
        The Dirichlet concentration of π (a number or one per cluster).
    lam : float, default 1.0
        The symmetric Dirichlet concentration λ of every β_k.
    keep_draws : bool, default True
        Record ``beta`` and ``doc_probs`` every draw, or (False) only their
        per-chain means (see the module docs).

    Returns
    -------
    Kernel
        The sampler: pass it to :func:`gibbsjax.sample`.

    Examples
    --------
    >>> import gibbsjax
    >>> from gibbsjax.corpus import Corpus
    >>> c = Corpus.from_token_lists([["a", "a"], ["c", "c"]] * 3)
    >>> idata = gibbsjax.sample(unigrams(2), unigram_data(c), seed=0, num_warmup=20,
    ...                         num_draws=20, progress=False)
    >>> idata.posterior["beta"].shape
    (4, 20, 2, 2)
    """
    k = _check_num_clusters(K)
    alpha = check_concentration("alpha", alpha, ((), (None,)))
    lam = check_concentration("lam", lam)
    cj.concentration_vector("alpha", alpha, k)  # length check now, not at trace time
    return _unigrams(k, alpha, lam, _check_flag("keep_draws", keep_draws))


@functools.lru_cache(maxsize=64)
def _unigrams(k: int, alpha, lam: float, keep_draws: bool) -> Kernel:
    functions = ol.unigram_functions(k, alpha, lam, keep_draws)

    def sample_prior(key, data: Documents):
        ol.check_documents(data, k)
        k1, k2 = jax.random.split(key)
        log_pi, log_beta = cj.sample_log_dirichlets(
            k1, cj.concentration_vector("alpha", alpha, k), jnp.full((k, data.vocab_size), lam))
        return UnigramState(log_pi, log_beta, gr.categorical(k2, log_pi, shape=(data.num_docs,)))

    def simulate_data(key, state: UnigramState, data: Documents):
        """New words W_id ~ Cat(β_{Z_d}) at the same positions (labels all latent)."""
        tokens = ol.simulate_tokens(key, state.log_beta, ol.current_labels(state, data), data)
        return _replace_tokens(data, tokens)

    # shard: documents split over devices (:mod:`gibbsjax.rows`), each document's label drawn as on one device
    return rw.kernel(
        functions, check=_check_unigram_data, num_rows=lambda data: data.num_docs, padded=ol.pad_documents,
        state_specs=UnigramState(P(), P(), P(rw.AXIS)), row_accumulators=("doc_probs",), what="documents",
        dims={"pi": ("cluster",), "beta": ("cluster", "word"), "doc_probs": ("document", "cluster"),
              "w": ("document",)},
        coords=lambda data: _doc_coords(data, k, "word"),
        observed_data=ol.observed_tokens,
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="mixtures.unigrams",
        label_dims=("cluster",),
        check_init=init_checker(log_simplex=("log_pi", "log_beta"), labels={"z": k}),
    )


def _check_unigram_data(data) -> Documents:
    if not isinstance(data, Documents):
        raise ValueError(f"data must be built by mixtures.unigram_data(corpus), got {type(data).__name__}")
    return data


def _replace_tokens(data: Documents, tokens) -> Documents:
    return Documents(tokens, data.doc_ids, data.doc_lengths, data.labels, data.latent,
                     data.true_labels, data.vocab_size, data.num_classes, data.info)


def unigrams_collapsed(K: int = 2, alpha: float | tuple[float, ...] = 1.0,
                       lam: float = 1.0, keep_draws: bool = True) -> Kernel:
    """Gibbs sampler for the mixture of unigrams with π integrated out (Sarkar's lecture notes 21 §21.2.2).

    Each sweep draws β | Z, W, then the labels one document at a time from
    (n_k^{(−d)} + α_k) Π_i β_{k, W_id} (exact: see the module docs).  ``pi`` is
    recorded as E[π | Z] = (n + α) / (D + Σα).  Random start: Z uniform (β is
    drawn from Z first).

    Parameters
    ----------
    K : int, default 2
        Clusters, >= 2.
    alpha : float or tuple of float, default 1.0
        The Dirichlet concentration of π.
    lam : float, default 1.0
        The symmetric Dirichlet concentration λ of every β_k.
    keep_draws : bool, default True
        As in :func:`unigrams`.

    Returns
    -------
    Kernel
        The sampler, π integrated out.

    Examples
    --------
    Sampled like :func:`unigrams` (``gibbsjax.sample(unigrams_collapsed(2), unigram_data(corpus))``):

    >>> unigrams_collapsed(K=3, alpha=0.5).name
    'mixtures.unigrams_collapsed'
    >>> unigrams_collapsed(K=2, alpha=(1.0,))
    Traceback (most recent call last):
    ...
    ValueError: alpha has 1 entries, but the model has K = 2 classes
    """
    k = _check_num_clusters(K)
    alpha = check_concentration("alpha", alpha, ((), (None,)))
    lam = check_concentration("lam", lam)
    cj.concentration_vector("alpha", alpha, k)
    return _unigrams_collapsed(k, alpha, lam, _check_flag("keep_draws", keep_draws))


@functools.lru_cache(maxsize=64)
def _unigrams_collapsed(k: int, alpha, lam: float, keep_draws: bool) -> Kernel:
    def init(key, data: Documents):
        """Z uniform at random; β uniform (the first sweep redraws it from Z)."""
        ol.check_documents(data, k)
        z = jax.random.randint(key, (data.num_docs,), 0, k, dtype=jnp.int32)
        return CollapsedUnigramState(ol.uniform_log(k, data.vocab_size), ol.merge_labels(z, data.labels))

    def big(state: CollapsedUnigramState, data: Documents):
        a = cj.concentration_vector("alpha", alpha, k)
        loglik = ol.doc_log_likelihood(state.log_beta, data)
        return {
            "beta": jnp.exp(state.log_beta),
            "doc_probs": ol.collapsed_label_probs(ol.current_labels(state, data), loglik, a, data.labels),
        }

    def record(state: CollapsedUnigramState, data: Documents):
        a = cj.concentration_vector("alpha", alpha, k)
        pi = (cj.class_counts(ol.current_labels(state, data), k).astype(a.dtype) + a) / (data.num_docs + a.sum())
        return {"pi": pi, **(big(state, data) if keep_draws else {})}

    def log_joint(state: CollapsedUnigramState, data: Documents):
        """log p(W, Z, β) with π integrated out."""
        z = ol.current_labels(state, data)
        return (
            cj.log_dirichlet_multinomial(cj.class_counts(z, k), cj.concentration_vector("alpha", alpha, k))
            + jnp.sum(cj.log_dirichlet_density(state.log_beta, lam))
            + ol.token_log_likelihood(state.log_beta, z, data)
        )

    def sample_prior(key, data: Documents):
        ol.check_documents(data, k)
        k1, k2 = jax.random.split(key)
        log_pi, log_beta = cj.sample_log_dirichlets(
            k1, cj.concentration_vector("alpha", alpha, k), jnp.full((k, data.vocab_size), lam))
        return CollapsedUnigramState(log_beta, gr.categorical(k2, log_pi, shape=(data.num_docs,)))

    def simulate_data(key, state: CollapsedUnigramState, data: Documents):
        """New words W_id ~ Cat(β_{Z_d}) at the same positions (labels all latent)."""
        return _replace_tokens(data, ol.simulate_tokens(key, state.log_beta, ol.current_labels(state, data), data))

    return Kernel(
        init=init,
        step=sweep(
            ("log_beta", functools.partial(sample_beta, lam=lam)),
            ("z", functools.partial(sample_z_collapsed, alpha=alpha)),
        ),
        record=record,
        dims={"pi": ("cluster",), "beta": ("cluster", "word"), "doc_probs": ("document", "cluster")},
        log_joint=log_joint,
        coords=lambda data: _doc_coords(data, k, "word"),
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="mixtures.unigrams_collapsed",
        label_dims=("cluster",),
        check_init=init_checker(log_simplex=("log_beta",), labels={"z": k}),
        accumulate=None if keep_draws else big,
    )


def bernoulli(K: int = 2, alpha: float | tuple[float, ...] = 1.0, a: float = 1.0,
              b: float = 1.0, keep_draws: bool = True) -> Kernel:
    """Gibbs sampler for the mixture of Bernoulli feature vectors (Padó 2012).

    Each sweep draws π | S, p | S, F, then all S_d | π, p at once (exact: see the
    module docs).  Random start: S uniform (π and p are drawn from S first).

    Parameters
    ----------
    K : int, default 2
        Clusters, >= 2 (the seed: 2).
    alpha : float or tuple of float, default 1.0
        The Dirichlet concentration of the class proportions π (Beta(α_0, α_1) for
        K = 2; a number or one per class -- Padó's (2012) α = 2, β = 2 is
        ``alpha=2.0``, its 20/80 prior ``alpha=(20.0, 80.0)``).
    a, b : float, default 1.0
        The Beta prior of every p_kf, read as a pseudo-counts of "on" and b of
        "off" per class and feature.
    keep_draws : bool, default True
        As in :func:`unigrams`.

    Returns
    -------
    Kernel
        The sampler (Bernoulli features).

    Examples
    --------
    Sampled like :func:`unigrams` (``gibbsjax.sample(bernoulli(2), bernoulli_data(features))``):

    >>> bernoulli(K=3, alpha=2.0).name
    'mixtures.bernoulli'
    >>> bernoulli(K=1)
    Traceback (most recent call last):
    ...
    ValueError: K must be an integer >= 2, got 1
    """
    k = _check_num_clusters(K)
    alpha = check_concentration("alpha", alpha, ((), (None,)))
    a = check_concentration("a", a)
    b = check_concentration("b", b)
    cj.concentration_vector("alpha", alpha, k)
    return _bernoulli(k, alpha, a, b, _check_flag("keep_draws", keep_draws))


@functools.lru_cache(maxsize=64)
def _bernoulli(k: int, alpha, a: float, b: float, keep_draws: bool) -> Kernel:
    def functions(rows: Rows | None):
        """The kernel's functions on all documents (``rows`` None) or on one device's
        documents (:mod:`gibbsjax.rows`)."""

        def init(key, data: BinaryData):
            """S uniform at random; π uniform and p = 1/2 (the first sweep redraws them from S)."""
            if rows is None:
                _check_binary(data)
            n = data.num_docs if rows is None else rows.num_rows
            z = rw.take_rows(rows, jax.random.randint(key, (n,), 0, k, dtype=jnp.int32))
            half = jnp.full((k, data.num_features), -jnp.log(2.0), jnp.result_type(float))
            return BernoulliState(ol.uniform_log(k), half, half, z)

        def big(state: BernoulliState, data: BinaryData, gather=lambda x: x):
            return {"p": jnp.exp(state.log_p), "doc_probs": gather(ol.label_probs(_s_logits(state, data)))}

        def record(state: BernoulliState, data: BinaryData):
            gather = (lambda x: x) if rows is None else rows.gather
            return {"pi": jnp.exp(state.log_pi), **(big(state, data, gather) if keep_draws else {})}

        def log_joint(state: BernoulliState, data: BinaryData):
            """log p(F, S, π, p)."""
            n1, n0 = rw.total(rows, ol.feature_counts(rw.here(rows, state.z, k), data.x, k))
            return (
                cj.log_dirichlet_density(state.log_pi, cj.concentration_vector("alpha", alpha, k))
                + jnp.sum(cj.log_beta_density(state.log_p, state.log1m_p, a, b))
                + rw.row_sum(rows, state.log_pi[state.z])
                + jnp.sum(cj.xlogy(n1, state.log_p) + cj.xlogy(n0, state.log1m_p))
            )

        def log_likelihood(state: BernoulliState, data: BinaryData):
            # log p(F_d | π, p) = log Σ_k π_k Π_f p_kf^F_df (1 − p_kf)^(1 − F_df) per document (S_d summed out)
            return {"x": jax.nn.logsumexp(_s_logits(state, data), axis=-1)}

        step = sweep(functools.partial(sample_pi_p, alpha=alpha, a=a, b=b, rows=rows),
                     ("z", functools.partial(sample_s, rows=rows)))
        return {"init": init, "step": step, "record": record, "log_joint": log_joint,
                "accumulate": None if keep_draws else big, "log_likelihood": log_likelihood}

    def sample_prior(key, data: BinaryData):
        _check_binary(data)
        k1, k2 = jax.random.split(key)
        f = jnp.result_type(float)
        log_pi, log_pq = cj.sample_log_dirichlets(
            k1, cj.concentration_vector("alpha", alpha, k),
            jnp.broadcast_to(jnp.asarray([a, b], f), (k, data.num_features, 2)))
        return BernoulliState(log_pi, log_pq[..., 0], log_pq[..., 1],
                              gr.categorical(k2, log_pi, shape=(data.num_docs,)))

    def simulate_data(key, state: BernoulliState, data: BinaryData):
        """New features F_df ~ Bernoulli(p_{S_d f})."""
        x = ol.simulate_binary(key, state.log_p, state.z)
        return BinaryData(x, data.true_labels, data.num_classes, data.info)

    # shard: documents split over devices (:mod:`gibbsjax.rows`): draws identical to one device's
    return rw.kernel(
        functions, check=_check_binary, num_rows=lambda data: data.num_docs,
        padded=lambda data, p, r: rw.pad_row_fields(data, ["x", "true_labels"], p, r, {"true_labels": -1}),
        state_specs=BernoulliState(P(), P(), P(), P(rw.AXIS)), row_accumulators=("doc_probs",), what="documents",
        dims={"pi": ("cluster",), "p": ("cluster", "feature"), "doc_probs": ("document", "cluster"),
              "x": ("document",)},
        coords=lambda data: _doc_coords(data, k, "feature"),
        observed_data=lambda data: {"x": (("document", "feature"), np.asarray(data.x))},
        sample_prior=sample_prior,
        simulate_data=simulate_data,
        name="mixtures.bernoulli",
        label_dims=("cluster",),
        check_init=init_checker(log_simplex=("log_pi",), log_probability=("log_p", "log1m_p"), labels={"z": k}),
    )

