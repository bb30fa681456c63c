"""The pointwise log likelihood of an LDA draw (``Kernel.log_likelihood`` of the LDA kernels), one
value per document, and the observed words (``Kernel.observed_data``): the ``log_likelihood`` and
``observed_data`` groups of a result, for ``az.loo``, ``az.waic`` and ``az.compare``."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax.kernel import Kernel
from gibbsjax.models.lda.layout import LDAData, num_docs_of, tokens_in_corpus_order, topic_counts

__all__ = ["document_log_likelihood", "observed_words", "with_log_likelihood", "LOG_LIK_BLOCK_ENTRIES"]


#: tokens × topics evaluated at once by :func:`document_log_likelihood` (its memory per chain)
LOG_LIK_BLOCK_ENTRIES = 1 << 20


def document_log_likelihood(state, d: LDAData, *, K: int, alpha=None, counts=topic_counts, eta=None):
    """The pointwise log likelihood of an LDA draw, one value per document (``Kernel.log_likelihood``).

    log p(w_d | θ̄_d, φ) = Σ_{i in d} log Σ_k θ̄_dk φ_{k, w_i}, with the draw's φ and
    θ̄_d = E[θ_d | z_d, α] = (n_dk + α_k) / (n_d + Σ_k α_k), the document's topic proportions
    given its topics (θ_d | z_d ~ Dir(n_d· + α), Griffiths & Steyvers 2004): defined for every
    sampler (θ is never in the state) and one pass over the tokens.  A state of topics only
    (:class:`~gibbsjax.models.lda.LDATopicState`, the native collapsed sampler) has no φ: its
    φ̄_k = E[φ_k | z, w] = (n_k· + η) / (n_k + Vη) takes the draw's place, as θ̄ does θ's.

    Parameters
    ----------
    state : LDAState, LDALearnedState or LDATopicState
        One chain's draw: topics ``z`` and ``log_phi`` (and ``log_alpha`` when learned), or ``z`` only.
    d : LDAData
        The packed corpus.
    K : int
        Number of topics.
    alpha : float, optional
        The fixed α; None reads ``state.log_alpha``.
    counts : callable, default :func:`~gibbsjax.models.lda.layout.topic_counts`
        The count tables of ``z`` (the native ones give the same).
    eta : float, optional
        η, for a state without ``log_phi``.

    Returns
    -------
    dict
        ``{"w": (D,)}``: each document's log likelihood (the grid's rows; a bucket's empty
        padding documents hold 0).

    Examples
    --------
    >>> import jax, numpy as np
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> d = lda.data(Corpus.from_token_lists([["a", "b"], ["b", "c"]]))
    >>> k = lda.partially_collapsed(2)
    >>> ll = document_log_likelihood(k.init(jax.random.key(0), d), d, K=2, alpha=0.1)["w"]
    >>> ll.shape, bool(np.all(np.asarray(ll) < 0))
    ((2,), True)
    """
    ndk, nkw, nk = counts(state.z, d, K)
    log_phi = getattr(state, "log_phi", None)
    dtype = jnp.float32 if log_phi is None else log_phi.dtype
    a = jnp.broadcast_to(jnp.exp(state.log_alpha) if alpha is None else jnp.asarray(alpha, dtype), (K,))
    theta = (ndk + a) / (jnp.sum(ndk, axis=-1, keepdims=True) + jnp.sum(a))  # (D + 1, K)
    if log_phi is None:  # topics only: E[φ | z, w]
        phi_t = ((nkw + eta) / (nk[:, None] + nkw.shape[1] * eta)).astype(dtype).T  # (V, K)
    else:
        phi_t = jnp.exp(log_phi).T  # (V, K)
    # Σ_k θ̄_dk φ_kw of every token: a dot product of two gathered rows, no logarithm per topic (every
    # θ̄_dk > 0 and the φ_kw of an observed word are far from underflow), in blocks of tokens (at most
    # LOG_LIK_BLOCK_ENTRIES of them × K at a time: O(block × K) memory, never a tokens × K array)
    words, docs = d.words.ravel(), d.docs.ravel()
    block = max(1, min(words.shape[0], LOG_LIK_BLOCK_ENTRIES // K))
    pad = -words.shape[0] % block
    words = jnp.pad(words, (0, pad)).reshape(-1, block)
    docs = jnp.pad(docs, (0, pad), constant_values=num_docs_of(d)).reshape(-1, block)  # padding: the dummy row

    def one_block(wd):
        w, doc = wd
        return jnp.einsum("bk,bk->b", theta[doc], phi_t[w])

    per_token = jax.lax.map(one_block, (words, docs)).ravel()[:d.words.size].reshape(d.words.shape)
    per_token = jnp.where(d.mask, jnp.log(jnp.where(d.mask, per_token, 1.0)), 0.0)  # (S, R)
    rows = num_docs_of(d)
    return {"w": jax.ops.segment_sum(per_token.ravel(), d.docs.ravel(), num_segments=rows + 1)[:rows]}


def observed_words(d: LDAData) -> dict:
    """``Kernel.observed_data`` of the LDA kernels: the word of every token and its document.

    Parameters
    ----------
    d : LDAData
        The packed corpus.

    Returns
    -------
    dict
        ``{"w": (("token",), word ids), "token_document": (("token",), document ids)}`` in corpus
        order, numpy arrays on the host.

    Examples
    --------
    >>> from gibbsjax.corpus import Corpus
    >>> from gibbsjax.models import lda
    >>> observed_words(lda.data(Corpus.from_token_lists([["a", "b"], ["b"]])))["token_document"][1].tolist()
    [0, 0, 1]
    """
    rows = np.asarray(d.doc_ids)
    return {"w": (("token",), tokens_in_corpus_order(d, d.words)),
            "token_document": (("token",), rows[tokens_in_corpus_order(d, d.docs)])}


def with_log_likelihood(kernel: Kernel, K: int, alpha, counts=topic_counts, eta=None) -> Kernel:
    """``kernel`` with the LDA ``log_likelihood`` (:func:`document_log_likelihood`, dims ``w:
    (document,)``) and ``observed_data`` (:func:`observed_words`).

    Parameters
    ----------
    kernel : Kernel
        An LDA kernel (its state holds ``z`` and ``log_phi``).
    K : int
        Number of topics.
    alpha : float or None
        The fixed α; None: learned, read from the state's ``log_alpha``.
    counts : callable, default :func:`~gibbsjax.models.lda.layout.topic_counts`
        The count tables the kernel uses.
    eta : float, optional
        η, for a kernel whose state holds no φ (:class:`~gibbsjax.models.lda.LDATopicState`).

    Returns
    -------
    Kernel
        The same kernel with both hooks.

    Examples
    --------
    >>> from gibbsjax.models import lda
    >>> lda.partially_collapsed(3).dims["w"]
    ('document',)
    """
    return kernel._replace(log_likelihood=functools.partial(document_log_likelihood, K=K, alpha=alpha, counts=counts,
                                                            eta=eta),
                           observed_data=observed_words, dims={**(kernel.dims or {}), "w": ("document",)})
