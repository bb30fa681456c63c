"""LDA with the topics held fixed: topic proportions of new documents and held-out perplexity.

:func:`infer_doc_topics` runs the exact partially collapsed z-update given φ on new
documents (on a CPU in its lanes form,
:func:`~gibbsjax.models.lda.conditionals.sample_z_lanes`; elsewhere
:func:`~gibbsjax.models.lda.conditionals.sample_z_partially_collapsed`);
:func:`heldout_perplexity` scores held-out documents by document completion.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax._checks import check_concentration, check_seed
from gibbsjax.corpus import Corpus
from gibbsjax.corpus.inputs import as_corpus
from gibbsjax.models.lda.layout import LDAData, LDAState, data, initial_topics, num_docs_of, topic_counts
from gibbsjax.models.lda.z_updates import SAMPLE_Z

__all__ = ["infer_doc_topics", "heldout_perplexity"]


def _check_alpha(alpha, K: int):
    """One positive α (a float) or K of them (a float32 array), else ``ValueError``."""
    value = check_concentration("alpha", alpha, ((), (K,)))
    return value if isinstance(value, float) else jnp.asarray(value, jnp.float32)


#: the z-update of :func:`infer_doc_topics` per backend: the same conditional, visiting order and
#: uniforms either way (equal draws up to float32 summation order).  On a 2-core CPU the lanes form
#: ran 100 sweeps over 100,356 held-out tokens (K = 20, V = 2,000) in 1.15 s against 4.58 s and
#: compiled in 1.4 s against 1.9 s (``benchmarks/infer.py``, 2026-11-28); the GPU keeps the XLA scan
#: (the fused kernels take α as a constant of the program, and lanes are a CPU layout).
INFER_Z_UPDATES = {"cpu": "lanes"}


def infer_z_update(backend: str | None = None) -> str:
    """The z-update :func:`infer_doc_topics` runs on ``backend``.

    Parameters
    ----------
    backend : str, optional
        ``"cpu"``, ``"gpu"``, ...; default JAX's default backend.

    Returns
    -------
    str
        ``"lanes"`` on a CPU, ``"dense"`` elsewhere (:data:`INFER_Z_UPDATES`).

    Examples
    --------
    >>> infer_z_update("cpu"), infer_z_update("gpu")
    ('lanes', 'dense')
    """
    return INFER_Z_UPDATES.get(backend or jax.default_backend(), "dense")


@functools.partial(jax.jit, static_argnames=("num_sweeps", "num_burn", "K", "z_update"))
def _infer(key, log_phi, d: LDAData, *, K: int, alpha: float, num_sweeps: int, num_burn: int,
           z_update: str = "dense"):
    ndk0 = jnp.zeros((num_docs_of(d) + 1, K), jnp.float32)
    key, k_init = jax.random.split(key)
    z0 = initial_topics(k_init, d, K)
    sample_z = SAMPLE_Z[z_update]  # the samplers' own table of z-updates

    def one_sweep(carry, t):
        z, acc = carry
        z = sample_z(jax.random.fold_in(key, t), LDAState(z, log_phi), d, K=K, alpha=alpha)
        ndk, _, _ = topic_counts(z, d, K)
        acc = acc + jnp.where(t >= num_burn, ndk.astype(jnp.float32), 0.0)
        return (z, acc), None

    (z, acc), _ = jax.lax.scan(one_sweep, (z0, ndk0), jnp.arange(num_sweeps))
    kept = num_sweeps - num_burn
    total = K * alpha if jnp.ndim(alpha) == 0 else jnp.sum(alpha)  # one α, or one α_k per topic
    theta = (acc[:-1] / kept + alpha) / (d.doc_lengths[:, None] + total)
    return theta


def infer_doc_topics(topic_word, corpus: Corpus, *, alpha: float = 0.1, num_sweeps: int = 100,
                     num_burn: int = 50, seed: int = 0, num_lanes: int | None = None) -> np.ndarray:
    """Topic proportions θ (D × K) of new documents with the topics φ held fixed.

    Runs the partially collapsed z-update (exact given φ) ``num_sweeps`` times
    and averages E[θ_d | z] over the sweeps after ``num_burn``; on a CPU in its
    lanes form, several times faster (:func:`infer_z_update`).

    Parameters
    ----------
    topic_word : array_like
        K × V matrix of word probabilities (e.g. a fitted model's ``topic_word_``).
    corpus : gibbsjax.corpus.Corpus
        The new documents, with the same vocabulary size V.
    alpha : float or array_like, default 0.1
        One symmetric concentration or K of them (a learned asymmetric α).
    num_sweeps : int, default 100
        Sweeps of the z-update.
    num_burn : int, default 50
        Sweeps left out of the average (``0 <= num_burn < num_sweeps``).
    seed : int, default 0
        Seed of the sweeps.
    num_lanes : int, optional
        Lanes of the packed grid (:func:`data`).

    Returns
    -------
    numpy.ndarray
        (D, K): θ, each row a distribution over topics.

    Raises
    ------
    ValueError
        For a ``topic_word`` that is not a non-negative K × V matrix, a vocabulary of
        another size, or invalid ``alpha``, ``seed``, ``num_sweeps`` or ``num_burn``.

    Examples
    --------

    >>> import numpy as np
    >>> from gibbsjax.corpus import Corpus
    >>> phi = np.array([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]])
    >>> theta = infer_doc_topics(phi, Corpus.from_token_lists([["a", "a", "c"]], vocab=["a", "b", "c"]))
    >>> theta.shape
    (1, 2)
    """
    phi = np.asarray(topic_word, dtype=np.float64)
    if phi.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {phi.shape}")
    bad = ~np.isfinite(phi) | (phi < 0)
    if bad.any():
        k, w = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"topic_word must hold finite non-negative probabilities, got {phi[k, w].item()!r} at "
                         f"(topic {k}, word {w})")
    K, v = phi.shape
    if corpus.vocab_size != v:
        raise ValueError(
            f"corpus has a vocabulary of {corpus.vocab_size} words but topic_word has {v} columns"
        )
    alpha = _check_alpha(alpha, K)
    seed = check_seed("seed", seed)
    if not (isinstance(num_sweeps, int) and isinstance(num_burn, int) and 0 <= num_burn < num_sweeps):
        raise ValueError(f"need integers 0 <= num_burn < num_sweeps, got {num_burn}, {num_sweeps}")
    d = data(corpus, num_lanes=num_lanes)
    log_phi = jnp.log(jnp.asarray(phi, jnp.float32) + 1e-30)
    theta = _infer(jax.random.key(seed), log_phi, d, K=K, alpha=alpha, num_sweeps=num_sweeps, num_burn=num_burn,
                   z_update=infer_z_update())
    return np.asarray(theta)


# ============================================================================ evaluation
def heldout_perplexity(topic_word, X_heldout, *, alpha: float = 0.1, fraction: float = 0.5,
                       num_sweeps: int = 100, num_burn: int = 50, seed: int = 0,
                       shuffle_seed: int | None = 0) -> float:
    """Held-out perplexity by document completion (Wallach, Murray, Salakhutdinov & Mimno, ICML 2009).

    For every held-out document, θ_d is estimated from its first ``fraction`` of
    tokens with the topics φ (``topic_word``, K × V) held fixed (the exact
    partially collapsed z-sampler, :func:`infer_doc_topics`), and the remaining
    tokens are scored:
    perplexity = exp(−Σ_d Σ_{i ∈ second part} log Σ_k θ_dk φ_{k,w_i} / #scored tokens).
    Lower is better; a model that knows nothing (uniform over V words) scores V.
    Tokens are shuffled within each document first, since documents read from a
    count matrix are sorted by word id.  Documents with fewer than two tokens are skipped.

    Parameters
    ----------
    topic_word : array_like
        K × V matrix of the topics' word probabilities (rows are normalised).
    X_heldout : Corpus or array_like or scipy.sparse matrix
        The held-out documents: a corpus or a document-term count matrix with V columns.
    alpha : float or array_like, default 0.1
        The θ prior of the completion, one α or K of them.
    fraction : float, default 0.5
        The share of each document's tokens that estimates θ_d, in (0, 1).
    num_sweeps, num_burn, seed
        As for :func:`infer_doc_topics`.
    shuffle_seed : int or None, default 0
        Seed of the shuffle of tokens within each document; ``None`` keeps their order.

    Returns
    -------
    float
        The perplexity.

    Raises
    ------
    ValueError
        For invalid arguments, or no document with at least two tokens.

    Examples
    --------

    >>> import numpy as np
    >>> phi = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    >>> X = np.array([[6, 2, 0], [0, 2, 6]])
    >>> round(heldout_perplexity(phi, X, num_sweeps=40, num_burn=10), 1) < 3.0
    True
    """
    phi = np.asarray(topic_word, dtype=np.float64)
    if phi.ndim != 2:
        raise ValueError(f"topic_word must be a K × V matrix, got shape {phi.shape}")
    corpus = as_corpus(X_heldout, "X_heldout", vocab_size=phi.shape[1])
    check_seed("seed", seed)
    if shuffle_seed is not None:
        check_seed("shuffle_seed", shuffle_seed)
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    keep = corpus.doc_lengths >= 2
    if not np.any(keep):
        raise ValueError("X_heldout has no document with at least two tokens")
    corpus = corpus.subset(keep)
    observed, scored = corpus.split_tokens(fraction, seed=shuffle_seed)
    ok = (observed.doc_lengths > 0) & (scored.doc_lengths > 0)
    observed, scored = observed.subset(ok), scored.subset(ok)
    theta = infer_doc_topics(phi, observed, alpha=alpha, num_sweeps=num_sweeps, num_burn=num_burn, seed=seed)
    phi = phi / phi.sum(axis=1, keepdims=True)
    # p(w_i | θ_d, φ) for every scored token, without a loop over documents
    probs = np.einsum("nk,kn->n", theta[scored.doc_ids], phi[:, scored.tokens])
    return float(np.exp(-np.mean(np.log(np.maximum(probs, 1e-300)))))
