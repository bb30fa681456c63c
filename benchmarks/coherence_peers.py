"""Coherence against tomotopy 0.14 (and gensim, checked in tests/test_coherence.py).

For the same top words and texts, prints gibbsjax's ``evaluate.coherence`` next to
tomotopy's ``tomotopy.coherence.Coherence`` for u_mass, c_npmi and c_v (default windows
and windows of 7 tokens), on (a) small hand-made texts with repeated words, documents
longer than the window and documents without any top word, and (b) the stdlib_docs
corpus with each label's ten most frequent words as a topic.  Two comparisons:

* ``as used``: tomotopy as its docs show it -- one ``Coherence`` whose ``targets`` are
  the words of all topics -- against ours with gensim's (default) and the boolean
  window count;
* ``matched``: one ``Coherence`` per topic with ``targets`` = that topic's words, against
  ours with ``window_count="boolean"`` on the documents holding at least one of the
  topic's words (sliding windows; u_mass on all documents).

Run (tomotopy is not a dependency; install its wheel apart from the venv)::

    python -m pip install --no-deps --target /tmp/tomo_site tomotopy-0.14.0-*.whl
    JAX_PLATFORMS=cpu PYTHONPATH=src:/tmp/tomo_site python benchmarks/coherence_peers.py
"""
from __future__ import annotations

import numpy as np

CASES = [("u_mass", None), ("c_npmi", None), ("c_npmi", 7), ("c_v", None), ("c_v", 7)]


def hand_texts():
    """Small texts: repeated words, documents longer than 7 and 10 tokens, one empty,
    two without any top word; two topics with a pair (a, e) that never co-occurs in a
    document."""
    docs = [
        "a b a c d a b x x y a b".split(),
        "c d c d a x y z z y x c d b".split(),
        "a a a b b x y z x y z x y z x y z b a c".split(),
        "e f e f g h e x y f g".split(),
        "x y z x y z".split(),
        [],
        "b c b c b c d d".split(),
        "e g h h g f x x x x x x x x x x x e".split(),
        "z z z z".split(),
        "a b c d " .split() * 8,
    ]
    topics = [["a", "b", "c", "d"], ["e", "f", "g", "h"], ["a", "e", "b", "f"]]
    return docs, topics


def stdlib_texts(n=10):
    """stdlib_docs as token lists; topic l = the n most frequent words of label l's documents."""
    from gibbsjax.datasets import stdlib_docs

    c = stdlib_docs()
    docs = c.to_token_lists()
    labels = np.asarray(c.labels)
    topics = []
    for lab in range(len(c.label_names)):
        counts = {}
        for d in np.flatnonzero(labels == lab):
            for w in docs[d]:
                counts[w] = counts.get(w, 0) + 1
        topics.append([w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]])
    return docs, topics


def matrix(topics, vocab):
    """A K x V matrix whose top words, in order, are ``topics``."""
    index = {w: i for i, w in enumerate(vocab)}
    tw = np.zeros((len(topics), len(vocab)))
    for k, words in enumerate(topics):
        for r, w in enumerate(words):
            tw[k, index[w]] = 1.0 - 0.01 * r
    return tw


def tomotopy_scores(docs, topics, kind, window_size, targets=None):
    """tomotopy's score of each topic; ``targets`` None: each topic's own words."""
    import tomotopy as tp

    tc = tp.utils.Corpus()
    for d in docs:
        tc.add_doc(words=d) if d else tc.add_doc(words=[])
    extra = {} if window_size is None else {"window_size": window_size}
    if targets is not None:
        coh = tp.coherence.Coherence(tc, coherence=kind, targets=targets, top_n=len(topics[0]), **extra)
        return np.array([coh.get_score(words=t) for t in topics])
    out = []
    for t in topics:
        coh = tp.coherence.Coherence(tc, coherence=kind, targets=list(t), top_n=len(t), **extra)
        out.append(coh.get_score(words=t))
    return np.array(out)


def tomotopy_windows(docs, topic, window_size):
    """The documents on which our boolean windows of ``window_size - 1`` tokens are
    tomotopy 0.14's windows of ``window_size``: documents holding none of the topic's
    words dropped (tomotopy counts no window of them), and the first token dropped from
    documents of ``window_size`` tokens or more (tomotopy's window j holds tokens
    j + 1, ..., j + window_size - 1 of such a document; a shorter one is one window)."""
    words = set(topic)
    return [d[1:] if len(d) >= window_size else d for d in docs if words & set(d)]


def umass_eps_shift(docs, topic):
    """tomotopy's u_mass minus ours (gensim's): per pair l < m, tomotopy takes
    log(P(w_m, w_l) / (P(w_l) + eps) + eps), gensim log((P(w_m, w_l) + eps) / P(w_l));
    equal where the pair co-occurs, log(eps) vs log(eps / P(w_l)) where it does not
    (log(eps) vs 0 where w_l is in no document)."""
    sets = [set(d) for d in docs]
    D = len(sets)
    shift, pairs = 0.0, 0
    for m in range(len(topic)):
        for l in range(m):
            pairs += 1
            dl = sum(topic[l] in s for s in sets)
            if dl == 0:
                shift += np.log(EPS)
            elif not any(topic[l] in s and topic[m] in s for s in sets):
                shift += np.log(dl / D)
    return shift / pairs


EPS = 1e-12


def ours(docs, topics, kind, window_size, window_count="gensim", matched=False):
    """gibbsjax's score of each topic; ``matched``: corrected for tomotopy's rules
    (:func:`tomotopy_windows`, :func:`umass_eps_shift`)."""
    from gibbsjax import evaluate
    from gibbsjax.corpus import Corpus

    vocab = sorted({w for d in docs for w in d} | {w for t in topics for w in t})
    n = len(topics[0])
    if not matched:
        extra = {} if window_size is None else {"window_size": window_size}
        if kind != "u_mass":
            extra["window_count"] = window_count
        corpus = Corpus.from_token_lists(docs, vocab=vocab, empty="keep")
        return evaluate.coherence(matrix(topics, vocab), corpus, kind=kind, n=n, **extra)
    out = []
    for t in topics:
        if kind == "u_mass":
            corpus = Corpus.from_token_lists(docs, vocab=vocab, empty="keep")
            out.append(evaluate.coherence(matrix([t], vocab), corpus, kind=kind, n=n)[0] + umass_eps_shift(docs, t))
            continue
        w = window_size or {"c_npmi": 10, "c_v": 110}[kind]
        corpus = Corpus.from_token_lists(tomotopy_windows(docs, t, w), vocab=vocab, empty="keep")
        out.append(evaluate.coherence(matrix([t], vocab), corpus, kind=kind, n=n, window_size=w - 1,
                                      window_count="boolean")[0])
    return np.array(out)


def compare(name, docs, topics):
    """Print the side-by-side table and the max abs differences for one corpus."""
    union = sorted({w for t in topics for w in t})
    print(f"\n## {name}: {len(docs)} documents, {sum(map(len, docs))} tokens, {len(topics)} topics of {len(topics[0])} words")
    print(f"{'kind':7} {'window':>6} | {'max|ours(gensim) - tomotopy(all targets)|':>42} "
          f"{'max|ours(boolean) - tomotopy(all targets)|':>43} | {'max|ours(gensim) - tomotopy(own)|':>34} {'matched max|diff|':>17}")
    rows = {}
    for kind, ws in CASES:
        tt_all = tomotopy_scores(docs, topics, kind, ws, targets=union)
        g = ours(docs, topics, kind, ws)
        b = g if kind == "u_mass" else ours(docs, topics, kind, ws, "boolean")
        tt_own = tomotopy_scores(docs, topics, kind, ws)
        m = ours(docs, topics, kind, ws, matched=True)
        d = (np.max(np.abs(g - tt_all)), np.max(np.abs(b - tt_all)), np.max(np.abs(g - tt_own)),
             np.max(np.abs(m - tt_own)))
        rows[(kind, ws)] = d
        print(f"{kind:7} {str(ws or 'dflt'):>6} | {d[0]:42.3g} {d[1]:43.3g} | {d[2]:34.3g} {d[3]:17.3g}")
        print(f"{'':16}tomotopy(all)  {np.round(tt_all, 4).tolist()}\n{'':16}tomotopy(own)  {np.round(tt_own, 4).tolist()}"
              f"\n{'':16}ours gensim    {np.round(g, 4).tolist()}\n{'':16}ours matched   {np.round(m, 4).tolist()}")
    return rows


def main():
    """Run both comparisons."""
    import tomotopy

    print(f"tomotopy {tomotopy.__version__}")
    compare("hand-made texts", *hand_texts())
    compare("stdlib_docs, each label's 10 most frequent words", *stdlib_texts())


if __name__ == "__main__":
    main()
