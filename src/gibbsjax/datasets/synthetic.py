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
    """Draw a corpus from the LDA generative process (seed 003 §4.1).

    φ_k ~ Dir_V(η); θ_d ~ Dir_K(α); document lengths ~ Poisson(``doc_length``)
    (at least 1; exactly ``doc_length`` with ``fixed_length``); z_i ~ Cat(θ_d);
    w_i ~ Cat(φ_{z_i}).  Returns ``(corpus, phi, theta)``: the corpus (words
    named ``w0 .. w{V-1}``) and the true parameters.  Vectorised with numpy:
    about 10 M tokens take a few seconds.
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
    doc_ids = np.repeat(np.arange(num_docs), lengths)
    # z_i ~ Cat(θ_d): inverse CDF with one uniform per token
    cdf_theta = np.cumsum(theta, axis=1)
    u = rng.random(doc_ids.size) * cdf_theta[doc_ids, -1]
    z = np.minimum((cdf_theta[doc_ids] <= u[:, None]).sum(axis=1), num_topics - 1)
    # w_i ~ Cat(φ_{z_i}): per topic, searchsorted into that topic's CDF
    cdf_phi = np.cumsum(phi, axis=1)
    u = rng.random(doc_ids.size)
    words = np.empty(doc_ids.size, np.int64)
    for k in range(num_topics):  # topics, not tokens
        sel = z == k
        words[sel] = np.searchsorted(cdf_phi[k], u[sel] * cdf_phi[k, -1], side="right")
    words = np.minimum(words, vocab_size - 1)
    corpus = Corpus(
        words.astype(np.int32),
        np.concatenate([[0], np.cumsum(lengths)]),
        tuple(f"w{i}" for i in range(vocab_size)),
    )
    return corpus, phi, theta
