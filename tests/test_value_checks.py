"""Values checked before compilation (issue 21): hyperparameters, data, initial values, seeds.

Every bad value gives a ``ValueError`` naming the parameter (and, for a range, the
dtype), raised before anything is compiled or sampled: the ``guard`` context makes
reaching a run's sampling entry fail the test.

The range rule (``gibbsjax._checks.safe_range``): a positive hyperparameter v must
have v, 1/v, v² and 1/v² normal finite numbers of the run's dtype (float32:
[2**-63, 2**63]); a location |v| <= 2**63 (v² finite).  Values refused in both
float32 and float64 (1e-300, 1e200) are used where the dtype does not matter;
float32-only cases (1e39, 1e-30) are skipped in x64 mode.
"""

from __future__ import annotations

import contextlib
import re

import jax
import numpy as np
import pytest

import gibbsjax
import gibbsjax.topics.estimators
import gibbsjax.topics.fit
import gibbsjax.models.lda.inference
import gibbsjax.run.driver
from gibbsjax import testing
from gibbsjax._checks import check_seed, check_values, safe_range, working_dtype
from gibbsjax.agreement import chain_agreement
from gibbsjax.cli import main
from gibbsjax.models.one_label import binary_data
from gibbsjax.corpus import Corpus
from gibbsjax.datasets import abc_corpus
from gibbsjax.models import bayes_net as bn
from gibbsjax.models import gaussian_mixture as gm
from gibbsjax.models import hmm, lda, mixtures, normal
from gibbsjax.models import naive_bayes as nb
from gibbsjax.run import Settings

X64 = jax.config.jax_enable_x64
f32_only = pytest.mark.skipif(X64, reason="float64 holds this value")


class Reached(AssertionError):
    """Sampling (or compilation) was reached: the check came too late."""


@pytest.fixture
def guard(monkeypatch):
    """A context in which reaching a run's allocation or compiled chunks, an LDA fit job or
    θ inference raises :class:`Reached` (not a ValueError, so ``pytest.raises`` fails)."""

    @contextlib.contextmanager
    def ctx():
        def fail(*args, **kwargs):
            raise Reached("sampling or compilation was reached before the value was refused")

        with monkeypatch.context() as m:
            m.setattr(gibbsjax.run.driver, "check_layout_memory", fail)  # after the init checks, before allocating
            m.setattr(gibbsjax.topics.fit, "job", fail)
            m.setattr(gibbsjax.topics.estimators, "infer_doc_topics", fail)
            m.setattr(gibbsjax.models.lda.inference, "_infer", fail)
            m.setattr(gibbsjax.run.driver, "compiled", fail)
            yield

    return ctx


def refused(guard, call, *fragments):
    with guard(), pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    for f in fragments:
        assert re.search(f, message), message
    assert "\n" not in message
    return message


# ----------------------------------------------------------------------------- hyperparameters of every factory
BIG, TINY = 1e200, 1e-300  # outside the float32 and the float64 ranges
NET = [("Rain", 2, []), ("Wet", 2, ["Rain"])]

HYPER_CASES = [
    # (id, factory call, the parameter's name in the message)
    ("normal mu0 big", lambda: normal.semiconjugate(mu0=BIG), "mu0"),
    ("normal sigma0 tiny", lambda: normal.semiconjugate(sigma0=TINY), "sigma0"),
    ("normal sigma0 big", lambda: normal.semiconjugate(sigma0=BIG), "sigma0"),
    ("normal a0 tiny", lambda: normal.semiconjugate(a0=TINY), "a0"),
    ("normal b0 big", lambda: normal.semiconjugate(b0=BIG), "b0"),
    ("normal b0 nan", lambda: normal.semiconjugate(b0=float("nan")), "b0"),
    ("normal mu0 string", lambda: normal.semiconjugate(mu0="98.6"), "mu0"),
    ("normal sigma0 bool", lambda: normal.semiconjugate(sigma0=True), "sigma0"),
    ("bivariate rho string", lambda: normal.bivariate("0.5"), "rho"),
    ("gm alpha tiny", lambda: gm.normal_gamma(2, alpha=TINY), "alpha"),
    ("gm alpha vector bool", lambda: gm.normal_gamma(2, alpha=[1.0, True]), r"alpha must be .*True"),
    ("gm alpha vector element", lambda: gm.normal_gamma(2, alpha=[1.0, BIG]), r"alpha\[1\]"),
    ("gm mu0 big", lambda: gm.normal_gamma(2, mu0=BIG), "mu0"),
    ("gm lam string", lambda: gm.normal_gamma(2, lam="1"), "lam"),
    ("gm a tiny", lambda: gm.normal_gamma(2, a=TINY), r"\ba\b"),
    ("gm b big", lambda: gm.normal_gamma(2, b=BIG), r"\bb\b"),
    ("hmm alpha_init tiny", lambda: hmm.categorical(2, alpha_init=TINY), "alpha_init"),
    ("hmm alpha_trans big", lambda: hmm.categorical(2, alpha_trans=[[1.0, 1.0], [BIG, 1.0]]), r"alpha_trans\[1, 0\]"),
    ("hmm beta string", lambda: hmm.categorical(2, beta="1"), "beta"),
    ("hmm beta tiny", lambda: hmm.categorical(2, beta=[1.0, TINY, 1.0]), "beta"),
    ("hmm gaussian mu0", lambda: hmm.gaussian(2, mu0=-BIG), "mu0"),
    ("hmm gaussian lam", lambda: hmm.gaussian(2, lam=TINY), "lam"),
    ("hmm gaussian b", lambda: hmm.gaussian(2, b="2"), r"\bb\b"),
    ("unigrams alpha", lambda: mixtures.unigrams(2, alpha=TINY), "alpha"),
    ("unigrams lam", lambda: mixtures.unigrams(2, lam=BIG), "lam"),
    ("unigrams_collapsed lam", lambda: mixtures.unigrams_collapsed(2, lam="1"), "lam"),
    ("bernoulli a", lambda: mixtures.bernoulli(2, a=TINY), r"\ba\b"),
    ("bernoulli b", lambda: mixtures.bernoulli(2, b=BIG), r"\bb\b"),
    ("naive bayes gamma_pi", lambda: nb.dirichlet_multinomial(gamma_pi=TINY), "gamma_pi"),
    ("naive bayes gamma_theta", lambda: nb.dirichlet_multinomial(gamma_theta=BIG), "gamma_theta"),
    ("naive bayes uncollapsed gamma_theta", lambda: nb.uncollapsed(gamma_theta="1"), "gamma_theta"),
    ("bayes net concentration", lambda: bn.network(NET, concentration=TINY), "concentration"),
    ("bayes net concentration string", lambda: bn.network(NET, concentration="1"), "concentration"),
    ("bayes net concentration entry", lambda: bn.network(NET, concentration={"Wet": [1.0, BIG]}), "concentration of 'Wet'"),
    ("lda alpha tiny", lambda: lda.partially_collapsed(3, alpha=TINY), "alpha"),
    ("lda eta big", lambda: lda.uncollapsed(3, eta=BIG), "eta"),
    ("lda collapsed eta string", lambda: lda.collapsed(3, eta="0.5"), "eta"),
    ("lda alpha_prior", lambda: lda.partially_collapsed(3, learn_alpha="sample", alpha_prior=(BIG, 1.0)), "alpha_prior"),
    ("lda eta_prior", lambda: lda.partially_collapsed(3, learn_eta=True, eta_prior=(1.0, TINY)), "eta_prior"),
    ("LDA alpha tiny", lambda: gibbsjax.LDA(3, alpha=1e-300), "alpha"),
    ("LDA eta string", lambda: gibbsjax.LDA(3, eta="0.5"), "eta"),
    ("LDA alpha bool", lambda: gibbsjax.LDA(3, alpha=True), "alpha"),
    ("LDA alpha_prior rate", lambda: gibbsjax.LDA(3, learn_alpha="minka", alpha_prior=(1.0, TINY)), "alpha_prior"),
    ("infer_doc_topics alpha", lambda: lda.infer_doc_topics(np.full((2, 3), 1 / 3), abc_corpus(), alpha=TINY),
     "alpha"),
]


@pytest.mark.parametrize("call, name", [c[1:] for c in HYPER_CASES], ids=[c[0] for c in HYPER_CASES])
def test_hyperparameter_refused_before_compilation(guard, call, name):
    refused(guard, call, name)


F32_CASES = [
    # the audit's findings: values that are inf, 0 or subnormal in float32, or whose square is
    ("LDA alpha 1e39", lambda: gibbsjax.LDA(3, alpha=1e39), "alpha"),
    ("LDA eta 1e-40", lambda: gibbsjax.LDA(3, eta=1e-40), "eta"),
    ("normal mu0 1e39", lambda: normal.semiconjugate(mu0=1e39), "mu0"),
    ("normal sigma0 1e-30", lambda: normal.semiconjugate(sigma0=1e-30), "sigma0"),  # 1/sigma0**2 is inf
    ("normal sigma0 1e20", lambda: normal.semiconjugate(sigma0=1e20), "sigma0"),  # sigma0**2 is inf
    ("gm b 1e-30", lambda: gm.normal_gamma(2, b=1e-30), r"\bb\b"),
    ("hmm beta 1e39", lambda: hmm.categorical(2, beta=1e39), "beta"),
    ("naive bayes gamma_theta 1e-40", lambda: nb.dirichlet_multinomial(gamma_theta=1e-40), "gamma_theta"),
]


@f32_only
@pytest.mark.parametrize("call, name", [c[1:] for c in F32_CASES], ids=[c[0] for c in F32_CASES])
def test_float32_range_named_in_the_message(guard, call, name):
    refused(guard, call, name, "float32", r"JAX_ENABLE_X64=1")


def test_range_follows_the_dtype():
    lo, hi = safe_range(np.float32)
    assert (lo, hi) == (2.0**-63, 2.0**63)
    check_values("alpha", [lo, hi], dtype=np.float32)  # the edges are accepted
    check_values("mu0", [-hi, 0.0, hi], "real", dtype=np.float32)
    check_values("alpha", 1e39, dtype=np.float64)  # float64 holds it
    for v in (1e39, 1e-30, np.nextafter(hi, np.inf), np.nextafter(lo, 0)):
        with pytest.raises(ValueError, match="float32"):
            check_values("alpha", v, dtype=np.float32)
    with pytest.raises(ValueError, match="must be positive"):
        check_values("alpha", 0.0, dtype=np.float32)
    check_values("lam", 0.0, "nonnegative", dtype=np.float32)  # an improper limit, where allowed
    assert working_dtype() == (np.float64 if X64 else np.float32)


def test_values_inside_the_range_are_accepted():
    lo, hi = safe_range()
    normal.semiconjugate(mu0=-hi, sigma0=lo * 1.01, a0=hi * 0.99, b0=lo * 1.01)
    gm.normal_gamma(2, alpha=[lo * 1.01, hi * 0.99], lam=0.0, allow_improper=True)
    gibbsjax.LDA(3, alpha=hi * 0.99, eta=lo * 1.01)
    bn.network(NET, concentration={"Wet": [[1.0, 2.0], [lo * 1.01, hi * 0.99]]})


# ----------------------------------------------------------------------------- data: strings are not numbers
DATA_CASES = [
    ("normal.data", lambda: normal.data(["98.6", 99]), r"y must be .*'98\.6'"),
    ("gm.data", lambda: gm.data([1.0, "2", 3.0]), r"x must be .*'2'"),
    ("hmm.gaussian_data", lambda: hmm.gaussian_data([[1.0, "2.0"]]), r"sequence 0 must be"),
    ("hmm.categorical_data", lambda: hmm.categorical_data([["0", 1]]), r"sequence 0 must be"),
    ("normal.data bool", lambda: normal.data([98.6, True]), r"y must be .*True \(at index 1\)"),
    ("gm.data bool", lambda: gm.data([[1.0, 2.0], [False, 3.0]]), r"x must be .*False \(at index 1, 0\)"),
]


@pytest.mark.parametrize("call, fragment", [c[1:] for c in DATA_CASES], ids=[c[0] for c in DATA_CASES])
def test_data_given_as_strings_is_refused(guard, call, fragment):
    refused(guard, call, fragment)


# ----------------------------------------------------------------------------- vocabulary
def test_repeated_vocabulary_words_are_refused_at_fit(guard):
    X = np.array([[1, 2, 0], [0, 3, 1]])
    model = gibbsjax.LDA(2, num_chains=1, num_warmup=1, num_draws=1, seed=0, progress=False)
    refused(guard, lambda: model.fit(X, vocab=["a", "b", "a"]), r"vocab has the word 'a' more than once")
    corpus = Corpus.from_dtm(X, vocab=["a", "b", "a"])
    refused(guard, lambda: model.fit(corpus), r"X's vocabulary has the word 'a'")
    refused(guard, lambda: model.fit(X, vocab="abc"), r"vocab must be a sequence of words")


# ----------------------------------------------------------------------------- documents of the wrong rank, bad counts
RANK_CASES = [
    ("3-D array", np.zeros((2, 3, 4), int), "(2, 3, 4)"),
    ("3-D array of counts", np.ones((2, 3, 4), int), "(2, 3, 4)"),
    ("1-D array", np.array([1, 2, 3]), "(3,)"),
    ("1-D list", [1, 2, 3], "(3,)"),
    ("3-D list", [[[1, 2, 3], [4, 5, 6]]], "(1, 2, 3)"),
    ("0-D array", np.array(3), "()"),
]


@pytest.mark.parametrize("X, shape", [c[1:] for c in RANK_CASES], ids=[c[0] for c in RANK_CASES])
def test_documents_of_the_wrong_rank_are_refused_with_their_shape(guard, X, shape):
    model = gibbsjax.LDA(2, num_chains=1, num_warmup=1, num_draws=1, seed=0, progress=False)
    refused(guard, lambda: model.fit(X), r"^X must be a 2-D document-term matrix \(documents x words\), got an "
            rf"array of shape {re.escape(shape)}")


COUNT_CASES = [
    ("inf in float32", np.array([[1, 0, 2], [0, np.inf, 1]], np.float32), "inf", "document 1, word 1"),
    ("nan", np.array([[1, 0, 2], [0, 1, np.nan]]), "nan", "document 1, word 2"),
    ("negative", np.array([[1, 0, -3], [0, 1, -1]]), "-3", "document 0, word 2"),
    ("fraction", np.array([[1, 0, 2], [0.25, 1, 1]]), "0.25", "document 1, word 0"),
    ("fraction in float32", np.array([[1, 2.5, 2]], np.float32), "2.5", "document 0, word 1"),
    ("huge", np.array([[1, 0, 0], [0, 0, 1e30]]), "1e+30", "document 1, word 2"),
]


@pytest.mark.parametrize("X, value, where", [c[1:] for c in COUNT_CASES], ids=[c[0] for c in COUNT_CASES])
def test_bad_counts_name_the_value_and_its_position(guard, X, value, where):
    import scipy.sparse as sp

    model = gibbsjax.LDA(2, num_chains=1, num_warmup=1, num_draws=1, seed=0, progress=False)
    for given in (X, sp.csr_matrix(X), sp.coo_matrix(X).tocsc()):
        message = refused(guard, lambda: model.fit(given), rf"^X .*{re.escape(value)} at \({where}\)")
        assert "repeats" not in message
    named = refused(guard, lambda: model.fit(X, vocab=["apple", "bond", "cat"]), rf"\({where} '")
    assert ["apple", "bond", "cat"][int(where[-1])] in named
    refused(guard, lambda: Corpus.from_dtm(X), rf"^X .*{re.escape(value)} at \({where}\)")


def _bad_estimates(value, where):
    est = np.full((2, 2, 3), 1 / 3)
    est[where] = value
    return est


POSITION_CASES = [
    ("doc_offsets end", lambda: Corpus(np.array([0, 1, 0]), np.array([0, 2]), ("a", "b")),
     r"end at len\(tokens\) = 3, got doc_offsets\[0\] = 0 and doc_offsets\[-1\] = 2"),
    ("doc_offsets order", lambda: Corpus(np.array([0, 1, 0]), np.array([0, 2, 1, 3]), ("a", "b")),
     r"non-decreasing, got doc_offsets\[1\] = 2 > doc_offsets\[2\] = 1"),
    ("label out of range", lambda: Corpus(np.array([0, 1]), np.array([0, 1, 2]), ("a", "b"), (), [0, 2], ("x", "y")),
     r"labels\[1\] = 2 is out of range for the 2 label_names"),
    ("label below -1", lambda: Corpus(np.array([0, 1]), np.array([0, 1, 2]), ("a", "b"), (), [-3, 0]),
     r"got labels\[0\] = -3"),
    ("repeated vocab", lambda: Corpus.from_token_lists([["a"]], vocab=["a", "b", "a"]),
     r"vocab has the word 'a' twice \(vocab\[0\] and vocab\[2\]\)"),
    ("negative topic_word", lambda: lda.infer_doc_topics(np.array([[0.5, 0.5], [1.5, -0.5]]), abc_corpus()),
     r"got -0.5 at \(topic 1, word 1\)"),
    ("nan estimates", lambda: gibbsjax.stable_topics(_bad_estimates(np.nan, (1, 0, 2))),
     r"NaN or infinite values, got nan at \(chain 1, topic 0, word 2\)"),
    ("negative estimates", lambda: gibbsjax.stable_topics(_bad_estimates(-0.1, (0, 1, 1))),
     r"non-negative\), got -0.1 at \(chain 0, topic 1, word 1\)"),
    ("zero topic", lambda: gibbsjax.stable_topics(_bad_estimates(0.0, (0, 1))),
     r"positive total, got 0.0 for \(chain 0, topic 1\)"),
    ("agreement inf", lambda: chain_agreement(_bad_estimates(np.inf, (1, 1, 0))),
     r"got inf at estimates\[1, 1, 0\]"),
    ("agreement negative", lambda: chain_agreement(_bad_estimates(-2.0, (0, 0, 1))),
     r"non-negative\) for distance='hellinger', got -2.0 at estimates\[0, 0, 1\]"),
    ("bernoulli", lambda: chain_agreement(_bad_estimates(1.5, (1, 0, 0)), distance="bernoulli"),
     r"in \[0, 1\] for distance='bernoulli', got 1.5 at estimates\[1, 0, 0\]"),
    ("features", lambda: binary_data(np.array([[0, 1], [2, 0]])),
     r"every entry 0 or 1 \(True/False\), got 2 at \(document 1, feature 0\)"),
]


@pytest.mark.parametrize("call, message", [c[1:] for c in POSITION_CASES], ids=[c[0] for c in POSITION_CASES])
def test_bad_values_name_the_value_and_where_it_is(guard, call, message):
    refused(guard, call, message)


# ----------------------------------------------------------------------------- initial values
def _lda_data():
    return lda.data(Corpus.from_token_lists([["a", "b", "a"], ["c", "b"]]))


def _z_shape(kernel, d):
    return jax.eval_shape(kernel.init, jax.random.key(0), d).z.shape


@pytest.mark.parametrize("sampler", ["partially_collapsed", "uncollapsed", "collapsed"])
def test_lda_init_topics_outside_0_to_k_are_refused(guard, sampler):
    k = lda.SAMPLERS[sampler](3)
    d = _lda_data()
    z = np.full((2, *_z_shape(k, d)), 7)
    refused(guard, lambda: gibbsjax.sample(k, d, num_chains=2, init={"z": z}, progress=False, seed=0),
            r"init\['z'\] must hold values in 0\.\.2, got 7")
    refused(guard, lambda: gibbsjax.sample(k, d, num_chains=2, init={"z": -z}, progress=False, seed=0),
            r"init\['z'\]")


@pytest.mark.parametrize("value, match", [(1.5, "non-integer"), ("1", "must hold numbers"), (True, "must hold numbers")])
def test_lda_init_topics_must_be_integers(guard, value, match):
    """A label given as 1.5 (or a string, or a bool) is refused, not rounded or cast."""
    k = lda.partially_collapsed(3)
    d = _lda_data()
    z = np.full((2, *_z_shape(k, d)), value, dtype=object if isinstance(value, str) else None)
    refused(guard, lambda: gibbsjax.sample(k, d, num_chains=2, init={"z": z}, progress=False, seed=0),
            rf"init\['z'\].*{match}")


def test_init_of_learned_lda_mixtures_and_naive_bayes(guard):
    d = _lda_data()
    k = lda.partially_collapsed(3, learn_alpha="sample")
    refused(guard, lambda: gibbsjax.sample(k, d, num_chains=2, init={"log_alpha": [1000.0, 0.0]}, progress=False,
                                           seed=0), r"init\['log_alpha'\]")
    docs = mixtures.unigram_data(abc_corpus())
    refused(guard, lambda: gibbsjax.sample(mixtures.unigrams(2), docs, num_chains=2,
                                           init={"z": np.full((2, docs.num_docs), 2)}, progress=False, seed=0),
            r"init\['z'\] must hold values in 0\.\.1")
    refused(guard, lambda: gibbsjax.sample(mixtures.unigrams_collapsed(2), docs, num_chains=2,
                                           init={"log_beta": np.zeros((2, 2, docs.vocab_size))}, progress=False,
                                           seed=0), r"init\['log_beta'\] holds log-probabilities")
    binary = mixtures.bernoulli_data(np.array([[0, 1], [1, 1], [0, 0]]))
    refused(guard, lambda: gibbsjax.sample(mixtures.bernoulli(2), binary, num_chains=1,
                                           init={"log_p": np.full((1, 2, 2), 0.5)}, progress=False, seed=0),
            r"init\['log_p'\] holds log-probabilities, each <= 0")
    labelled = Corpus.from_token_lists([["a", "b"], ["b"], ["a"]], labels=[0, 1, -1], label_names=["x", "y"])
    nd = nb.data(labelled)
    refused(guard, lambda: gibbsjax.sample(nb.dirichlet_multinomial(), nd, num_chains=1,
                                           init={"log_theta": np.zeros((1, 2, 2))}, progress=False, seed=0),
            r"init\['log_theta'\]")


# ----------------------------------------------------------------------------- seeds: one rule everywhere
BAD_SEEDS = [2**40, 2**32, -1, 1.5, True, "3"]


@pytest.fixture(scope="module")
def fitted():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gibbsjax.LDA(2, num_chains=2, num_warmup=5, num_draws=5, seed=0, progress=False).fit(abc_corpus())


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_seed_rule_everywhere(guard, fitted, seed):
    with pytest.raises(ValueError, match="seed") as info:
        check_seed("seed", seed)
    rule = str(info.value)
    refused(guard, lambda: fitted.transform(abc_corpus(), seed=seed), re.escape(rule))
    refused(guard, lambda: fitted.perplexity(abc_corpus(), seed=seed), re.escape(rule))
    refused(guard, lambda: fitted.perplexity(abc_corpus(), shuffle_seed=seed), "shuffle_seed")
    refused(guard, lambda: gibbsjax.LDA(2, seed=seed), re.escape(rule))
    refused(guard, lambda: gibbsjax.LDA(2, random_state=seed), "random_state")
    refused(guard, lambda: Settings(seed=seed), re.escape(rule))
    d = normal.data([98.0, 98.5, 99.0])
    refused(guard, lambda: gibbsjax.sample(normal.semiconjugate(), d, seed=seed, progress=False), "seed")
    refused(guard, lambda: testing.sbc(normal.semiconjugate(), d, seed=seed, num_replications=2), "seed")
    refused(guard, lambda: testing.geweke_test(normal.semiconjugate(), d, seed=seed, num_chains=2), "seed")


def test_sample_and_check_seed_agree_on_the_bounds():
    d = normal.data([98.0, 98.5, 99.0])
    for seed in (0, 2**32 - 1):
        assert check_seed("seed", seed) == seed
        assert gibbsjax.sample(normal.semiconjugate(), d, seed=seed, num_chains=1, num_warmup=0, num_draws=1,
                               progress=False).attrs["seed"] == seed


# ----------------------------------------------------------------------------- the command line
LDA_CONFIG = """
[model]
name = "lda.partially_collapsed"
K = 2
alpha = {alpha}
eta = 0.01

[data]
corpus = "abc"

[sampler]
seed = 1
num_chains = 1
num_warmup = 1
num_draws = 1
"""


@pytest.mark.parametrize("alpha", [pytest.param("1e39", marks=f32_only), "1e-300"])
def test_cli_config_alpha_out_of_range_exits_2_with_one_line(tmp_path, monkeypatch, capsys, guard, alpha):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "job.toml"
    path.write_text(LDA_CONFIG.format(alpha=alpha), encoding="utf-8")
    with guard():
        assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gibbsjax: error: ") and err.count("\n") == 1, err
    assert "alpha" in err and "outside" in err, err
    assert not list(tmp_path.glob("*.nc"))


# ----------------------------------------------------------------------------- the edge of the range samples
def test_minka_alpha_at_the_edge_of_the_range_stays_finite():
    """α near 2**63: ψ(n_d + Σα) − ψ(Σα) rounds to 0, and Minka's update was 0/0 = NaN."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gibbsjax.LDA(2, alpha=2.0**62, learn_alpha="minka", num_chains=1, num_warmup=3, num_draws=2,
                             seed=0, progress=False).fit(abc_corpus())
    assert np.all(np.isfinite(model.alpha_)) and np.all(np.isfinite(model.doc_topic_))
    assert np.all(np.isfinite(model.idata_.sample_stats["lp"].values))
