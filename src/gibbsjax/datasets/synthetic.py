"""Synthetic data from the models' generative processes (for recovery tests and scaling).

>>> corpus, phi, theta = lda_corpus(num_docs=20, num_topics=3, vocab_size=50, doc_length=30, seed=0)
>>> corpus.num_docs, phi.shape, theta.shape
(20, (3, 50), (20, 3))
"""

from __future__ import annotations

import numpy as np

__all__ = ["lda_corpus"]


def lda_corpus(
    num_docs: int = 2000,
    num_topics: int = 10,
    vocab_size: int = 500,
    doc_length: int = 100,
    *,
    alpha: float = 0.1,
    eta: float = 0.05,
    fixed_length: bool = False,
    seed: int = 0,
):
    """Draw a corpus from the LDA generative process (Wang 2015, §4.1).

    φ_k ~ Dir_V(η); θ_d ~ Dir_K(α); document lengths ~ Poisson(``doc_length``)
    (at least 1; exactly ``doc_length`` with ``fixed_length``); z_i ~ Cat(θ_d);
    w_i ~ Cat(φ_{z_i}) (drawn as per-document topic counts, then words topic by
    topic, then shuffled within documents: the same distribution, O(N) memory).
    About 10 M tokens take a few seconds.

    Parameters
    ----------
    num_docs : int, default 2000
        Documents, D.
    num_topics : int, default 10
        Topics, K.
    vocab_size : int, default 500
        Words, V.
    doc_length : int, default 100
        The mean document length.
    alpha : float, default 0.1
        The document-topic concentration α.
    eta : float, default 0.05
        The topic-word concentration η.
    fixed_length : bool, default False
        Every document exactly ``doc_length`` tokens long.
    seed : int, default 0
        The seed.

    Returns
    -------
    corpus : Corpus
        The corpus (words named ``w0 .. w{V-1}``).
    phi : numpy.ndarray
        The true topic-word distributions, (K, V).
    theta : numpy.ndarray
        The true document-topic proportions, (D, K).

    Examples
    --------
    >>> corpus, phi, theta = lda_corpus(num_docs=3, num_topics=2, vocab_size=4, doc_length=5, fixed_length=True)
    >>> corpus.vocab, corpus.doc_lengths.tolist()
    (('w0', 'w1', 'w2', 'w3'), [5, 5, 5])
    >>> phi.shape, theta.shape, bool(np.allclose(phi.sum(axis=1), 1.0))
    ((2, 4), (3, 2), True)
    """
    from gibbsjax.corpus import Corpus

    for name, value in (("num_docs", num_docs), ("num_topics", num_topics), ("vocab_size", vocab_size),
                        ("doc_length", doc_length)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    for name, value in (("alpha", alpha), ("eta", eta)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be positive, got {value!r}")
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(vocab_size, eta), size=num_topics)
    theta = rng.dirichlet(np.full(num_topics, alpha), size=num_docs)
    if fixed_length:
        lengths = np.full(num_docs, doc_length, np.int64)
    else:
        lengths = np.maximum(rng.poisson(doc_length, size=num_docs), 1)
    # topics: per-document counts n_dk ~ Multinomial(n_d, θ_d) (exchangeable tokens), O(N) memory
    counts = rng.multinomial(lengths, theta)  # (D, K)
    z = np.repeat(np.tile(np.arange(num_topics), num_docs), counts.ravel())
    # words: w_i ~ Cat(φ_{z_i}), topic by topic (the loop is over topics, not tokens)
    words = np.empty(z.size, np.int64)
    for k in range(num_topics):
        sel = np.flatnonzero(z == k)
        words[sel] = rng.choice(vocab_size, size=sel.size, p=phi[k])
    # shuffle tokens within each document (so a document's first half is a random half)
    doc_ids = np.repeat(np.arange(num_docs), lengths)
    order = np.lexsort((rng.random(z.size), doc_ids))
    words = words[order]
    corpus = Corpus(
        words.astype(np.int32),
        np.concatenate([[0], np.cumsum(lengths)]),
        tuple(f"w{i}" for i in range(vocab_size)),
    )
    return corpus, phi, theta
