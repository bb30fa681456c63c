"""The LDA posterior kept per draw: φ of chosen words and θ of chosen documents (issue 12, item 5)."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import gibbsjax
from gibbsjax.datasets.synthetic import lda_corpus
from gibbsjax.models import lda
from gibbsjax.models.lda.kernels import recorded_ids
from gibbsjax.specs import lda as lda_spec

K = 3


@pytest.fixture(scope="module")
def corpus():
    c, _, _ = lda_corpus(num_docs=40, num_topics=K, vocab_size=20, doc_length=15, alpha=0.3, eta=0.1, seed=2)
    return c


@pytest.fixture(scope="module")
def run(corpus):
    d = lda.data(corpus)
    kernel = lda.partially_collapsed(K, alpha=0.2, record_phi="all", record_theta=[0, 3, 7], warmup="exact")
    idata = gibbsjax.sample(kernel, d, seed=0, num_chains=2, num_warmup=30, num_draws=200, progress=False)
    return kernel, d, idata


def test_recorded_indices_pick_the_most_frequent_words_like_the_traced_rule():
    counts = np.array([5, 1, 9, 5, 0, 9, 5])  # ties: the lower word id first
    assert lda.recorded_indices(3, counts).tolist() == [0, 2, 5]
    assert lda.recorded_indices(4, counts).tolist() == [0, 2, 3, 5]
    traced = jax.jit(lambda c: recorded_ids(4, c, "record_phi"))(jax.numpy.asarray(counts))
    assert traced.tolist() == [0, 2, 3, 5]
    assert lda.recorded_indices([6, 1], counts).tolist() == [1, 6]
    assert lda.recorded_indices(2, counts, "record_theta").tolist() == [0, 1]
    assert lda.recorded_indices(None, counts) is None


def test_a_subset_of_words_records_the_same_phi_draws(corpus, run):
    kernel, d, full = run
    phi = full.posterior["phi"].values  # (chain, draw, K, V)
    np.testing.assert_allclose(phi.sum(-1), 1, atol=1e-4)
    top = lda.recorded_indices(4, np.bincount(corpus.tokens, minlength=corpus.vocab_size))
    sub_kernel = lda.partially_collapsed(K, alpha=0.2, record_phi=4, record_theta=[0, 3, 7], warmup="exact")
    sub = gibbsjax.sample(sub_kernel, d, seed=0, num_chains=2, num_warmup=30, num_draws=200, progress=False)
    assert sub.posterior["phi_word"].values.tolist() == top.tolist()
    np.testing.assert_array_equal(sub.posterior["phi"].values, phi[..., top])  # recording changes no draw
    np.testing.assert_array_equal(sub.posterior["topic_share"].values, full.posterior["topic_share"].values)


def test_phi_draws_scatter_around_their_conditional_means_as_a_dirichlet_does(corpus):
    """The collapsed sweep draws z_t, then φ_t | z_t ~ Dir(n_k·(z_t) + η); the runner
    accumulates E[φ | z_t] = (n_kw + η)/(n_k + Vη) into posterior_mean.  Given the z's the
    φ_t are independent, so (mean of the φ draws) − posterior_mean has standard deviation
    sqrt(Σ_t Var(φ_t | z_t)) / n, Var = m(1 − m)/(n_k + Vη + 1), m the conditional mean
    (taken as the chain's posterior mean; n_k from the recorded topic shares)."""
    eta = 0.05
    kernel = lda.collapsed(K, alpha=0.2, eta=eta, record_phi="all", warmup="exact")
    idata = gibbsjax.sample(kernel, lda.data(corpus), seed=2, num_chains=2, num_warmup=20, num_draws=300,
                            progress=False)
    phi = idata.posterior["phi"].values  # (chain, draw, K, V)
    rb = idata.posterior_mean["topic_word"].values  # (chain, K, V)
    nk = idata.posterior["topic_share"].values * corpus.num_tokens  # (chain, draw, K)
    var = rb[:, None] * (1 - rb[:, None]) / (nk[..., None] + corpus.vocab_size * eta + 1)
    sd = np.sqrt(var.sum(axis=1)) / phi.shape[1]
    z = (phi.mean(axis=1) - rb) / sd
    assert np.all(np.abs(z) < 4.5), np.abs(z).max()
    assert np.abs(z).max() > 0.5  # the draws really scatter (not the conditional means recorded)


def test_theta_concentration_is_the_documents_counts_plus_alpha(corpus, run):
    kernel, d, _ = run

    def init_and_record(key, d):
        state = kernel.init(key, d)
        return state, kernel.record(state, d)

    # one compiled program (op by op, every operation would compile one of its own), as the runner
    # calls both inside its compiled programs
    state, rec = jax.jit(init_and_record)(jax.random.key(3), d)
    z = lda.layout.tokens_in_corpus_order(d, np.asarray(state.z))
    for row, doc in enumerate([0, 3, 7]):
        lo, hi = corpus.doc_offsets[doc], corpus.doc_offsets[doc + 1]
        expected = np.bincount(z[lo:hi], minlength=K) + 0.2
        np.testing.assert_allclose(np.asarray(rec["theta_concentration"])[row], expected, rtol=1e-6)


def test_theta_draws_match_the_rao_blackwellised_mean_within_monte_carlo_error(corpus, run):
    kernel, d, idata = run
    out = lda_spec.postprocess(idata.copy(), kernel, d, {"corpus": corpus, "hyperparameters": {"alpha": 0.2}})
    post = out.posterior
    assert "theta_concentration" not in post and post["theta"].dims == ("chain", "draw", "theta_document", "topic")
    assert post["theta_document"].values.tolist() == [corpus.doc_names[i] for i in (0, 3, 7)]
    assert post["phi_word"].values.tolist() == list(corpus.vocab)
    theta = post["theta"].values
    np.testing.assert_allclose(theta.sum(-1), 1, atol=1e-5)
    # given z, θ_d ~ Dir(a) with a = n_d + α: mean a/a0, variance a(a0 − a)/(a0²(a0 + 1)).
    # The average of the draws minus the average of the conditional means is a sum of
    # independent zero-mean terms (the θ draws are independent given the z's).
    conc = idata.posterior["theta_concentration"].values  # unaligned; align with the permutation
    perms = out.topics["permutation"].values
    conc = np.stack([conc[c][..., perms[c]] for c in range(conc.shape[0])])
    a0 = conc.sum(-1, keepdims=True)
    n = conc.shape[1]
    diff = theta.mean(axis=1) - (conc / a0).mean(axis=1)
    sd = np.sqrt((conc * (a0 - conc) / (a0 ** 2 * (a0 + 1))).sum(axis=1)) / n
    assert np.all(np.abs(diff) <= 4.5 * sd), np.max(np.abs(diff) / sd)
    assert not np.allclose(theta, conc / a0)  # draws, not the conditional means themselves


def test_theta_draws_sample_the_dirichlet():
    conc = np.array([0.5, 2.0, 4.0])
    draws = lda_spec.theta_draws(np.broadcast_to(conc, (20000, 3)), seed=1)
    a0 = conc.sum()
    se = np.sqrt(conc * (a0 - conc) / (a0 ** 2 * (a0 + 1)) / 20000)
    assert np.all(np.abs(draws.mean(0) - conc / a0) < 4.5 * se)
    with pytest.raises(ValueError, match="> 0"):
        lda_spec.theta_draws(np.array([[1.0, 0.0]]))


@pytest.mark.parametrize("kwargs,match", [
    (dict(record_phi=0), "record_phi"),
    (dict(record_phi=[1, 1]), "repeated"),
    (dict(record_phi="some"), "record_phi"),
    (dict(record_theta=[-1]), "record_theta"),
    (dict(record_theta=[0.5]), "record_theta"),
])
def test_bad_record_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lda.partially_collapsed(K, **kwargs)


def test_out_of_range_ids_are_refused_before_sampling(corpus):
    d = lda.data(corpus)
    for kwargs, match in ((dict(record_phi=[99]), "word id 99"), (dict(record_theta=1000), "only 40 documents")):
        with pytest.raises(ValueError, match=match):
            gibbsjax.sample(lda.partially_collapsed(K, **kwargs), d, seed=0, num_chains=1, num_warmup=1,
                            num_draws=1, progress=False)


def test_the_estimator_keeps_phi_and_theta_of_chosen_documents(corpus):
    from gibbsjax.corpus import Corpus

    docs = corpus.to_token_lists()
    docs.insert(2, [])  # an empty document, kept (empty="keep"): indices refer to the input
    # input documents 0, 4 and 8 are sampled documents 0, 3 and 7, and the corpus keeps the fixture's
    # vocabulary: the recording kernel and data shapes of test_a_subset_of_words_..., with its chains and
    # chunk length, so its compiled programs serve this fit (no warm-up: the estimator's warm-up sweep
    # would be another program; what is tested is what the draws keep)
    X = Corpus.from_token_lists(docs, vocab=corpus.vocab, empty="keep")
    model = gibbsjax.LDA(K, alpha=0.2, num_chains=2, num_warmup=0, num_draws=30, chunk_size=16, seed=0,
                         progress=False, record_phi=4, record_theta=[0, 4, 8])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.fit(X)
    post = model.idata_.posterior
    assert post["phi"].shape == (2, 30, K, 4) and post["theta"].shape == (2, 30, 3, K)
    names = model.corpus_.doc_names
    assert post["theta_document"].values.tolist() == [names[0], names[4], names[8]]
    with pytest.raises(ValueError, match="no tokens"):
        gibbsjax.LDA(K, record_theta=[2], progress=False).fit(docs)
