"""Shapes padded to bucket sizes (``gibbsjax.models.lda.data(bucket=True)``, what ``LDA.fit`` does where the
native CPU kernels run) and the native hash that jax.random's keys take on a CPU.

* the bucket sizes: at least the size asked, of the form 2^e or 3 · 2^e, at most 1.5 times the size;
* padded data hold the same corpus (tokens back in corpus order) and count their real documents;
* a run on padded data draws exactly what the run on unpadded data draws (topics, φ, means, lp), and its
  results have the corpus's documents only;
* ``LDA.fit`` on a second corpus in the same bucket compiles nothing (jax's compile events), and its
  results equal a fit on lanes chosen by hand (no padding);
* the native lowering of jax's Threefry hash gives jax's bits (a subprocess with it off), and is the one
  in use (the lowered program calls it);
* the collapsed log joint's native sum: empty rows appended leave it exactly as it was.
"""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gibbsjax
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.models.lda import buckets, layout, native

needs_native = pytest.mark.skipif(not native.available(),
                                  reason=f"native kernels not built here: {native.unavailable_reason()}")


def test_bucket_sizes_are_few_and_close():
    sizes = [buckets.bucket_size(n) for n in range(1, 5000)]
    assert all(b >= n for n, b in zip(range(1, 5000), sizes))
    assert all(b <= max(1.5 * n, 2) for n, b in zip(range(1, 5000), sizes))
    assert np.all(np.diff(sizes) >= 0)
    for b in set(sizes):
        power = b if b & (b - 1) == 0 else b // 3
        assert power & (power - 1) == 0 and b in (power, 3 * power), b
    assert len(set(sizes)) <= 2 * 13
    assert buckets.bucket_size(3, 512) == 512 and buckets.bucket_size(513, 512) == 768


def test_padded_data_hold_the_same_corpus():
    corpus, _, _ = lda_corpus(num_docs=70, num_topics=3, vocab_size=40, doc_length=15, seed=2)
    plain, padded = lda.data(corpus), lda.data(corpus, bucket=True)
    assert padded.words.shape[0] >= plain.words.shape[0] and padded.words.shape[1] >= 512
    assert layout.num_docs_of(padded) == 512 and buckets.num_real_docs(padded) == 70
    assert buckets.num_real_docs(plain) == 70
    np.testing.assert_array_equal(layout.tokens_in_corpus_order(padded, padded.words), corpus.tokens)
    np.testing.assert_array_equal(padded.word_counts, plain.word_counts)
    assert int(padded.mask.sum()) == corpus.num_tokens
    assert not np.asarray(padded.doc_lengths)[70:].any()
    assert (np.asarray(padded.doc_ids)[70:] == -1).all()


@needs_native
@pytest.mark.parametrize("k", [5, 70])  # the dense and the sparse native forms
def test_a_run_on_padded_data_draws_the_same(k):
    corpus, _, _ = lda_corpus(num_docs=90, num_topics=4, vocab_size=120, doc_length=30, seed=3)
    kernel = lda.partially_collapsed(k, record_theta="all")
    runs = []
    for bucket in (False, True):
        d = lda.data(corpus, bucket=bucket)
        idata = gibbsjax.sample(kernel, d, num_chains=3, num_warmup=6, num_draws=5, seed=4, progress=False)
        z = np.stack([layout.tokens_in_corpus_order(d, zc) for zc in idata.sampler_state["state__z"].values])
        runs.append((idata, z))
    (plain, z0), (padded, z1) = runs
    np.testing.assert_array_equal(z1, z0)
    np.testing.assert_array_equal(padded.sampler_state["state__log_phi"].values,
                                  plain.sampler_state["state__log_phi"].values)
    for group in ("posterior", "sample_stats", "posterior_mean"):
        assert set(padded[group].data_vars) == set(plain[group].data_vars)
        for v in plain[group].data_vars:
            assert padded[group][v].shape == plain[group][v].shape, (group, v)
            np.testing.assert_array_equal(padded[group][v].values, plain[group][v].values, err_msg=f"{group}.{v}")
    assert padded.posterior_mean["doc_topic"].sizes["document"] == 90


def _compiles_during(fn) -> int:
    events = []

    def listen(name, secs, **kwargs):
        if name == "/jax/core/compile/backend_compile_duration":
            events.append(secs)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    return len(events)


@needs_native
def test_a_second_fit_in_the_same_bucket_compiles_nothing():
    first, _, _ = lda_corpus(num_docs=60, num_topics=4, vocab_size=50, doc_length=20, fixed_length=True, seed=0)
    second, _, _ = lda_corpus(num_docs=45, num_topics=4, vocab_size=50, doc_length=20, fixed_length=True, seed=1)
    options = dict(num_chains=2, num_warmup=10, num_draws=10, progress=False, warn=False, seed=5)
    from gibbsjax.topics import fit as lda_fit
    assert lda_fit.buckets(gibbsjax.LDA(4, **options).get_params())
    gibbsjax.LDA(4, **options).fit(first)
    model = gibbsjax.LDA(4, **options)
    assert _compiles_during(lambda: model.fit(second)) == 0
    # a corpus of another bucket compiles (the count above can fail)
    other, _, _ = lda_corpus(num_docs=700, num_topics=4, vocab_size=50, doc_length=20, fixed_length=True, seed=1)
    assert _compiles_during(lambda: gibbsjax.LDA(4, **options).fit(other)) > 0
    # lanes chosen by hand: no padding, the same draws
    by_hand = gibbsjax.LDA(4, num_lanes=7, **options).fit(second)
    assert model.doc_topic_.shape == (45, 4)
    np.testing.assert_array_equal(model.doc_topic_, by_hand.doc_topic_)
    np.testing.assert_array_equal(model.topic_word_, by_hand.topic_word_)
    np.testing.assert_array_equal(model.idata_.sample_stats["lp"].values, by_hand.idata_.sample_stats["lp"].values)


_HASHES = """
import hashlib, sys
import numpy as np, jax, jax.numpy as jnp
from gibbsjax.models.lda import native
assert native.available()
k = jax.random.key(42)
outs = [jax.random.key_data(jax.random.split(k, 7)), jax.random.key_data(jax.random.fold_in(k, 123)),
        jax.random.bits(k, (1001,)), jax.random.uniform(k, (3, 333)), jax.random.normal(k, (257,)),
        jax.random.gamma(k, 0.3, (100,)), jax.vmap(lambda kk: jax.random.uniform(kk, (5,)))(jax.random.split(k, 4)),
        jax.jit(lambda kk: jax.random.categorical(kk, jnp.zeros((50, 7))))(k), jax.random.permutation(k, 100),
        jax.random.key_data(jax.vmap(jax.random.fold_in, in_axes=(None, 0))(k, jnp.arange(9))),
        jax.random.bits(jax.random.PRNGKey(3), (17,), dtype=jnp.uint8)]
hlo = jax.jit(lambda kk: jax.random.bits(kk, (8,))).lower(k).as_text()
print(hashlib.sha256(b"".join(np.asarray(o).tobytes() for o in outs)).hexdigest(), "gibbsjax_threefry2x32" in hlo)
"""


@needs_native
def test_the_native_hash_gives_jax_s_bits():
    def run(flag):
        env = dict(os.environ, GIBBSJAX_NATIVE_THREEFRY=flag, JAX_PLATFORMS="cpu")
        proc = subprocess.run([sys.executable, "-c", _HASHES], capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.split()

    native_digest, native_used = run("1")
    jax_digest, jax_used = run("0")
    assert (native_used, jax_used) == ("True", "False")
    assert native_digest == jax_digest


@needs_native
def test_the_native_log_joint_sum_ignores_appended_empty_rows():
    rng = np.random.default_rng(0)
    counts = jnp.asarray(rng.poisson(0.7, size=(37, 11)), jnp.int32)
    padded = jnp.concatenate([counts, jnp.zeros((91, 11), jnp.int32)])
    alpha = jnp.asarray(rng.uniform(0.05, 2.0, 11), jnp.float32)
    assert float(native.log_dm_sum(padded, alpha)) == float(native.log_dm_sum(counts, alpha))
    from scipy.special import gammaln
    c, a = np.asarray(counts, np.float64), np.asarray(alpha, np.float64)
    want = np.sum(gammaln(c + a) - gammaln(a)) - np.sum(gammaln(c.sum(1) + a.sum()) - gammaln(a.sum()))
    assert abs(float(native.log_dm_sum(counts, alpha)) - want) <= 1e-6 * abs(want)
    batched = jax.vmap(native.log_dm_sum, in_axes=(0, None))(jnp.stack([counts, counts[::-1]]), alpha)
    assert float(batched[0]) == float(batched[1]) or abs(float(batched[0]) - float(batched[1])) < 1e-3
    with pytest.raises(ValueError, match="rows, C"):
        native.log_dm_sum(jnp.zeros((2, 3, 4), jnp.int32), 0.5)
