"""LDA draws keyed by document and position: independent of the packing and of the devices.

Every z-update takes token i's uniform from a hash of (document, position) under the
sweep's key (``lda.token_uniforms``), so packing the corpus into another number of lanes,
or splitting its documents over devices (``lda_shard``), leaves every draw unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda


def _corpus(num_docs=40, seed=0):
    corpus, _, _ = lda_corpus(num_docs=num_docs, num_topics=4, vocab_size=30, doc_length=10, seed=seed)
    return corpus


def test_hashed_uniforms_depend_on_their_own_pair_only():
    key = jax.random.key(3)
    a = jnp.arange(1000) % 37
    b = jnp.arange(1000) // 37
    u = np.asarray(lda.hashed_uniforms(key, a, b))
    perm = np.random.default_rng(0).permutation(1000)
    np.testing.assert_array_equal(np.asarray(lda.hashed_uniforms(key, a[perm], b[perm])), u[perm])
    np.testing.assert_array_equal(np.asarray(lda.hashed_uniforms(key, a[5:6], b[5:6])), u[5:6])
    assert u.min() >= 0.0 and u.max() < 1.0
    # uniform, and a new key gives new numbers: Kolmogorov-Smirnov and a correlation
    from scipy import stats

    assert stats.kstest(u, "uniform").pvalue > 1e-3
    other = np.asarray(lda.hashed_uniforms(jax.random.key(4), a, b))
    assert abs(np.corrcoef(u, other)[0, 1]) < 4 / np.sqrt(1000)


@pytest.mark.parametrize("z_update, k", [
    ("lanes", 40),  # the CPU default, two-level prefix sums
    pytest.param("lanes", 5, marks=pytest.mark.slow),
    pytest.param("dense", 5, marks=pytest.mark.slow),
])
def test_draws_do_not_depend_on_the_number_of_lanes(z_update, k):
    """z (in corpus order) and φ after three sweeps are bit-identical for 1, 3 lanes and the default."""
    corpus = _corpus()
    kernel = lda.partially_collapsed(k, z_update=z_update, warmup="exact")
    results = []
    for lanes in (1, 3, None):
        d = lda.data(corpus, num_lanes=lanes)

        @jax.jit
        def run(key, d=d):
            s = kernel.init(jax.random.key(1), d)
            return jax.lax.fori_loop(0, 3, lambda t, s: kernel.step(jax.random.fold_in(key, t), s, d), s)

        s = run(jax.random.key(2))
        results.append((d.words.shape, lda.tokens_in_corpus_order(d, s.z), np.asarray(s.log_phi)))
    assert len({r[0] for r in results}) == 3  # three different grids
    for shape, z, log_phi in results[1:]:
        np.testing.assert_array_equal(z, results[0][1], err_msg=str(shape))
        np.testing.assert_array_equal(log_phi, results[0][2], err_msg=str(shape))
    assert len(np.unique(results[0][1])) == k or k > 30  # the draws moved
