"""Coherence measures mean what gensim and tomotopy mean by their names (issue 24).

The references are computed here with plain Python loops over the definitions
(documents and sliding windows as sets of words), not with our vectorised code;
the tests at the end compare with gensim itself (in the ``test`` extra), on texts longer than
the windows that repeat words within them, and with tomotopy 0.14 where it is importable (not
in CI): its numbers are ours under its own window rule, target set and eps placement.
"""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pytest

import gibbsjax
from gibbsjax import evaluate
from gibbsjax.corpus import Corpus

EPS = 1e-12  # gensim's and tomotopy's epsilon


def _documents():
    """Documents longer than 10 tokens (so sliding windows of 10 differ from whole
    documents), a short one, words repeated within a document, and a word ("zzz")
    in the vocabulary that never occurs."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(12)]
    docs = [[words[j] for j in rng.integers(0, 12, size=size)] for size in (25, 14, 8, 31, 12, 3, 19, 40)]
    return docs, words + ["zzz"]


def _matrix(topics, vocab):
    """Topics as a K × V matrix whose top words, in order, are ``topics``."""
    index = {w: i for i, w in enumerate(vocab)}
    tw = np.zeros((len(topics), len(vocab)))
    for k, words in enumerate(topics):
        for r, w in enumerate(words):
            tw[k, index[w]] = 1.0 - 0.1 * r
    return tw


TOPICS = [["w0", "w1", "w2", "w3"], ["w4", "w9", "w5", "w11"], ["w6", "w7", "w8", "w10"]]


def _fraction_holding(sets, *words):
    return sum(all(w in s for w in words) for s in sets) / len(sets)


def umass_by_hand(docs, top):
    """gensim's u_mass: the mean over pairs l < m of log((D(w_m, w_l)/D + ε) / (D(w_l)/D)),
    a pair whose w_l occurs in no document counting 0."""
    sets = [set(d) for d in docs]
    terms = []
    for m in range(1, len(top)):
        for l in range(m):
            p_l = _fraction_holding(sets, top[l])
            terms.append(0.0 if p_l == 0 else math.log((_fraction_holding(sets, top[m], top[l]) + EPS) / p_l))
    return sum(terms) / len(terms)


def umass_sum_by_hand(docs, top):
    """Mimno et al. (2011): the sum over pairs l < m of log((D(w_m, w_l) + 1) / D(w_l))."""
    sets = [set(d) for d in docs]
    count = lambda *ws: sum(all(w in s for w in ws) for s in sets)  # noqa: E731
    return sum(math.log((count(top[m], top[l]) + 1) / max(count(top[l]), 1))
               for m in range(1, len(top)) for l in range(m))


def window_sets(docs, window, rule="gensim"):
    """The words counted present in each sliding window of ``window`` tokens (a shorter
    document is one window).  ``"boolean"``: the set of the window's words.  ``"gensim"``:
    gensim 4.4's rule, simulated step by step: the first window's words; then, sliding by
    one token, discard the word of the token that left, then add the word that entered."""
    sets = []
    for d in docs:
        if len(d) <= window:
            sets.append(set(d))
            continue
        present = set(d[:window])
        sets.append(set(present))
        for j in range(1, len(d) - window + 1):
            if rule == "boolean":
                present = set(d[j:j + window])
            else:
                present.discard(d[j - 1])
                present.add(d[j + window - 1])
            sets.append(set(present))
    return sets


def npmi_by_hand(docs, top, window, rule="gensim"):
    """gensim's c_npmi: the mean over ordered pairs i != j of NPMI, probabilities as
    fractions of the sliding windows of ``window`` tokens holding the words (:func:`window_sets`)."""
    sets = window_sets(docs, window, rule)
    values = []
    for a in top:
        for b in top:
            if a != b:
                p_ab = _fraction_holding(sets, a, b)
                pmi = math.log((p_ab + EPS) / (_fraction_holding(sets, a) * _fraction_holding(sets, b)))
                values.append(pmi / -math.log(p_ab + EPS))
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def data():
    docs, vocab = _documents()
    corpus = Corpus.from_token_lists(docs, vocab=vocab, empty="keep")
    return docs, corpus, _matrix(TOPICS, vocab)


def test_default_is_gensim_u_mass(data):
    docs, corpus, tw = data
    expected = [umass_by_hand(docs, t) for t in TOPICS]
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, n=4), expected, rtol=1e-12)
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="u_mass", n=4), expected, rtol=1e-12)
    assert inspect.signature(gibbsjax.LDA.coherence).parameters["kind"].default == "u_mass"
    # a mean, not Mimno's sum: the two differ on these topics
    sums = [umass_sum_by_hand(docs, t) for t in TOPICS]
    assert not np.allclose(expected, sums, rtol=0.1)


def test_umass_sum_is_mimno(data):
    docs, corpus, tw = data
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="umass_sum", n=4),
                               [umass_sum_by_hand(docs, t) for t in TOPICS], rtol=1e-12)


def test_window_rules_differ_on_repeated_words():
    """``a b a c``, windows of 3: gensim counts ``a`` in 1 window, a boolean count in 2."""
    assert [("a" in s) for s in window_sets([list("abac")], 3)] == [True, False]
    assert [("a" in s) for s in window_sets([list("abac")], 3, "boolean")] == [True, True]


def test_c_npmi_sliding_windows_of_10(data):
    docs, corpus, tw = data
    expected = [npmi_by_hand(docs, t, 10) for t in TOPICS]
    boolean = [npmi_by_hand(docs, t, 10, "boolean") for t in TOPICS]
    whole = [npmi_by_hand(docs, t, math.inf) for t in TOPICS]
    assert not np.allclose(expected, whole, atol=0.01)  # the window matters on these documents
    assert not np.allclose(expected, boolean, atol=0.01)  # so does the counting rule
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="c_npmi", n=4), expected, rtol=1e-10)
    np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="c_npmi", n=4, window_count="boolean"),
                               boolean, rtol=1e-10)
    for window in (1, 2, 5, 13):
        for rule in ("gensim", "boolean"):
            np.testing.assert_allclose(
                evaluate.coherence(tw, corpus, kind="c_npmi", n=4, window_size=window, window_count=rule),
                [npmi_by_hand(docs, t, window, rule) for t in TOPICS], rtol=1e-10, err_msg=f"{window} {rule}")
    # whole documents, also from a count matrix (no reading order needed)
    for X in (corpus, corpus.to_dtm()):
        np.testing.assert_allclose(evaluate.coherence(tw, X, kind="c_npmi", n=4, window_size="document"),
                                   whole, rtol=1e-10)
    # c_v's default window is gensim's 110 tokens
    np.testing.assert_array_equal(evaluate.coherence(tw, corpus, kind="c_v", n=4),
                                  evaluate.coherence(tw, corpus, kind="c_v", n=4, window_size=110))


@pytest.mark.parametrize("cells", [1, 37])
def test_windows_counted_in_small_blocks(data, monkeypatch, cells):
    """The counts are taken a block of windows at a time: blocks of 1 and 3 windows (and
    intervals crossing their borders) give the by-hand numbers too."""
    import functools

    docs, corpus, tw = data
    monkeypatch.setattr(evaluate, "_window_counts", functools.partial(evaluate._window_counts, cells=cells))
    for rule in ("gensim", "boolean"):
        np.testing.assert_allclose(evaluate.coherence(tw, corpus, kind="c_npmi", n=4, window_size=6, window_count=rule),
                                   [npmi_by_hand(docs, t, 6, rule) for t in TOPICS], rtol=1e-10)


def test_a_word_that_never_occurs(data):
    """u_mass: a pair conditioned on a word in no document counts 0 (as gensim); c_npmi: NaN."""
    docs, corpus, _ = data
    topic = ["w0", "zzz", "w1"]
    tw = _matrix([topic], corpus.vocab)
    assert evaluate.coherence(tw, corpus, n=3)[0] == pytest.approx(umass_by_hand(docs, topic), rel=1e-12)
    assert np.isfinite(evaluate.coherence(tw, corpus, n=3, kind="umass_sum")[0])
    assert np.isnan(evaluate.coherence(tw, corpus, n=3, kind="c_npmi")[0])


def test_old_names(data):
    _, corpus, tw = data
    np.testing.assert_array_equal(evaluate.coherence(tw, corpus, kind="umass_gensim", n=4),
                                  evaluate.coherence(tw, corpus, kind="u_mass", n=4))
    with pytest.raises(ValueError, match="'u_mass' is gensim's mean.*'umass_sum' is Mimno"):
        evaluate.coherence(tw, corpus, kind="umass", n=4)
    with pytest.raises(ValueError, match="'c_npmi'.*window_size='document'"):
        evaluate.coherence(tw, corpus, kind="npmi", n=4)


def test_bad_window_size(data):
    _, corpus, tw = data
    with pytest.raises(ValueError, match="window_size applies to the sliding-window kinds"):
        evaluate.coherence(tw, corpus, kind="u_mass", n=4, window_size=10)
    for bad in (0, 2.5, "doc", True):
        with pytest.raises(ValueError, match="window_size must be"):
            evaluate.coherence(tw, corpus, kind="c_npmi", n=4, window_size=bad)
    with pytest.raises(ValueError, match="c_npmi .* must be a Corpus.*window_size='document'"):
        evaluate.coherence(tw, corpus.to_dtm(), kind="c_npmi", n=4)
    with pytest.raises(ValueError, match="window_count must be one of .*'boolean'.*got 'bool'"):
        evaluate.coherence(tw, corpus, kind="c_v", n=4, window_count="bool")
    with pytest.raises(ValueError, match="window_count applies to the sliding-window kinds"):
        evaluate.coherence(tw, corpus, kind="u_mass", n=4, window_count="boolean")


def test_report_names_the_measure():
    """The report (``gibbsjax run``/``summary``, ``LDA.summary``) says which coherence its
    column is: u_mass (gensim's mean) now, Mimno's sum for files written before."""
    import xarray as xr

    from gibbsjax.diagnostics import to_inference_data
    from gibbsjax.specs.lda import report
    from gibbsjax.spec import replace_group

    idata = to_inference_data({"topic_share": np.full((1, 5, 2), 0.5)}, dims={"topic_share": ["topic"]})
    words = json.dumps([["a", "b"], ["c", "d"]])
    for attrs, name, values in (({"u_mass": "[-1.25, -3.5]"}, "coherence u_mass, gensim's mean", "-1.25"),
                                ({"umass": "[-81.5, -90.0]"}, "coherence umass_sum, Mimno et al.'s sum", "-81.50")):
        text = report(replace_group(idata, "topics", xr.Dataset({"topic_word": (("topic", "word"), np.full((2, 4), 0.25))},
                                                               attrs={"top_words": words, **attrs})))
        header = text.splitlines()[0]
        assert header.startswith("top words per topic") and name in header, header
        assert "UMass coherence" not in text
        assert values in text.splitlines()[1]


@pytest.fixture(scope="module")
def long_texts():
    """Texts from 0 to 180 tokens over 25 words, so most are longer than both windows (10 and
    110 tokens) and repeat top words within them; topics of 6 words, some shared."""
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(25)]
    docs = [[str(w) for w in rng.choice(vocab, size=int(rng.integers(0, 180)))] for _ in range(50)]
    topics = [[str(w) for w in rng.choice(vocab, 6, replace=False)] for _ in range(4)]
    return docs, vocab, topics


@pytest.mark.parametrize(("kind", "window_size"), [("u_mass", None), ("c_npmi", None), ("c_npmi", 7),
                                                    ("c_v", None), ("c_v", 7)])  # u_mass counts documents
def test_equals_gensim(kind, window_size, long_texts):
    """gensim's own numbers for the same top words and texts, default window (10 for c_npmi,
    110 for c_v) and another; the boolean count differs from them on these texts."""
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    docs, vocab, topics = long_texts
    corpus = Corpus.from_token_lists(docs, vocab=vocab, empty="keep")
    dictionary = Dictionary(docs)
    extra = {} if window_size is None else {"window_size": window_size}
    model = CoherenceModel(topics=topics, texts=docs, corpus=[dictionary.doc2bow(d) for d in docs],
                           dictionary=dictionary, coherence=kind, topn=6, processes=1, **extra)
    expected = model.get_coherence_per_topic()
    tw = _matrix(topics, vocab)
    ours = evaluate.coherence(tw, corpus, kind=kind, n=6, **extra)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12)
    if kind != "u_mass":
        boolean = evaluate.coherence(tw, corpus, kind=kind, n=6, window_count="boolean", **extra)
        assert np.max(np.abs(boolean - expected)) > 1e-3


# tomotopy 0.14 (in the ``bench`` extra, not installed in CI): its ``Coherence`` is the same
# measure computed under three rules of its own (its source, ProbEstimator.hpp and
# ConfirmMeasurer.hpp, and benchmarks/coherence_peers.py): the helpers below apply them to
# our inputs, so what is compared is exact and each rule is needed (the asserts check that).

def _tomotopy_scores(docs, topics, kind, window_size=None, targets=None):
    """tomotopy's score per topic; ``targets`` None: one Coherence per topic, its own words."""
    tp = pytest.importorskip("tomotopy")
    corpus = tp.utils.Corpus()
    for d in docs:
        corpus.add_doc(words=d)
    extra = {} if window_size is None else {"window_size": window_size}
    scores = []
    for t in topics:
        coh = tp.coherence.Coherence(corpus, coherence=kind, targets=list(targets or t), top_n=len(t), **extra)
        scores.append(coh.get_score(words=t))
    return np.array(scores)


def _tomotopy_window_docs(docs, topic, window_size):
    """Texts on which our boolean windows of ``window_size - 1`` tokens are tomotopy's of
    ``window_size``: it counts no window of a document without a target word, and its window j
    of a document of L >= window_size tokens holds tokens j+1 .. j+window_size-1 (not token j)."""
    return [d[1:] if len(d) >= window_size else d for d in docs if set(topic) & set(d)]


@pytest.mark.parametrize(("kind", "window_size"), [("u_mass", None), ("c_npmi", None), ("c_npmi", 7),
                                                    ("c_v", None), ("c_v", 7)])
def test_equals_tomotopy_under_its_window_rule(kind, window_size, long_texts):
    """tomotopy 0.14 with ``targets`` = the topic's words: u_mass equals ours as is (every pair
    co-occurs here); c_npmi and c_v equal our boolean count with windows one token shorter on
    its documents (see _tomotopy_window_docs), to rounding (c_v: tomotopy's context vectors
    are float32).  Neither our gensim count nor our boolean count on the texts as they are
    gives its numbers."""
    docs, vocab, topics = long_texts
    theirs = _tomotopy_scores(docs, topics, kind, window_size)
    corpus = Corpus.from_token_lists(docs, vocab=vocab, empty="keep")
    if kind == "u_mass":
        np.testing.assert_allclose(evaluate.coherence(_matrix(topics, vocab), corpus, n=6), theirs,
                                   rtol=1e-9, atol=1e-12)
        return
    w = window_size or {"c_npmi": 10, "c_v": 110}[kind]
    ours = [evaluate.coherence(_matrix([t], vocab),
                               Corpus.from_token_lists(_tomotopy_window_docs(docs, t, w), vocab=vocab),
                               kind=kind, n=6, window_size=w - 1, window_count="boolean")[0]
            for t in topics]
    np.testing.assert_allclose(ours, theirs, rtol=1e-6 if kind == "c_v" else 1e-9, atol=1e-12)
    extra = {} if window_size is None else {"window_size": window_size}
    for rule in ("gensim", "boolean"):
        as_is = evaluate.coherence(_matrix(topics, vocab), corpus, kind=kind, n=6, window_count=rule, **extra)
        assert np.max(np.abs(as_is - theirs)) > 1e-3, rule


def test_tomotopy_differences_by_hand():
    """Where tomotopy 0.14's numbers differ from ours (gensim's) beyond the window rule."""
    pytest.importorskip("tomotopy")
    # u_mass, a pair that never co-occurs: tomotopy log(P(d, a)/(P(a) + eps) + eps) = log(eps),
    # gensim and ours log((P(d, a) + eps)/P(a)) = log(eps / (2/3))
    docs = [["a", "b"], ["a", "c"], ["c", "d"]]
    vocab = ["a", "b", "c", "d"]
    theirs = _tomotopy_scores(docs, [["a", "d"]], "u_mass")[0]
    ours = evaluate.coherence(_matrix([["a", "d"]], vocab), Corpus.from_token_lists(docs, vocab=vocab), n=2)[0]
    assert theirs == pytest.approx(math.log(EPS), rel=1e-12)
    assert ours == pytest.approx(math.log(EPS * 3 / 2), rel=1e-12)
    # the windows: in "a x x x x b", windows of 3, tomotopy counts a in none (its window j holds
    # tokens j+1, j+2), b in 1 of 4: NPMI(a, b) = log(eps/(0 + eps)) / -log(eps) = 0; the boolean
    # rule (and gensim's) counts a in 1 of 4 too: NPMI(a, b) = log(eps/(1/16)) / -log(eps)
    docs = [["a", "x", "x", "x", "x", "b"]]
    vocab = ["a", "b", "x"]
    theirs = _tomotopy_scores(docs, [["a", "b"]], "c_npmi", 3)[0]
    ours = evaluate.coherence(_matrix([["a", "b"]], vocab), Corpus.from_token_lists(docs, vocab=vocab),
                              kind="c_npmi", n=2, window_size=3, window_count="boolean")[0]
    assert theirs == pytest.approx(0.0, abs=1e-12)
    assert ours == pytest.approx(math.log(16 * EPS) / -math.log(EPS), rel=1e-9)  # -0.90
    # c_v: tomotopy's context vector of w_i is (NPMI(w_i, t))_t over *all* ``targets``, not only
    # the topic's words (ours, gensim's, Röder et al.'s): one Coherence for all topics differs
    docs, vocab, topics = _long_texts_small()
    union = sorted({w for t in topics for w in t})
    own = _tomotopy_scores(docs, topics, "c_v", 7)
    shared = _tomotopy_scores(docs, topics, "c_v", 7, targets=union)
    assert np.max(np.abs(own - shared)) > 1e-2
    # a word in every window: tomotopy's NPMI(w, w) is 1 by definition, ours log(1 + eps)/-log(1 + eps)
    # = -1 (as gensim's); four words in every window: tomotopy's c_v 1/2, ours 1
    docs = [["e", "f", "g", "h"], ["h", "g", "f", "e"]]
    vocab = ["e", "f", "g", "h"]
    theirs = _tomotopy_scores(docs, [vocab], "c_v")[0]
    ours = evaluate.coherence(_matrix([vocab], vocab), Corpus.from_token_lists(docs, vocab=vocab), kind="c_v", n=4)[0]
    assert theirs == pytest.approx(0.5, rel=1e-6)
    assert ours == pytest.approx(1.0, rel=1e-9)


def _long_texts_small():
    """Texts of 0 to 60 tokens over 12 words; three topics of 4 words, some shared."""
    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(12)]
    docs = [[str(w) for w in rng.choice(vocab, size=int(rng.integers(0, 60)))] for _ in range(30)]
    topics = [[str(w) for w in rng.choice(vocab, 4, replace=False)] for _ in range(3)]
    return docs, vocab, topics
