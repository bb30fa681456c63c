"""Semi-supervised naive Bayes (gibbsjax Gibbs) vs scikit-learn's MultinomialNB, one run.

Corpus: docstrings of eight standard-library packages (`gibbsjax.datasets.stdlib_docs`),
half of the labels hidden with a fixed seed (configs/naive-bayes-stdlib.toml).

* gibbsjax: the Dirichlet-multinomial naive Bayes of seed 000 (π collapsed, θ sampled),
  sampling the hidden labels with the visible ones held fixed — it also learns from the
  words of the unlabelled half.  Prediction: the label of highest posterior probability
  (Rao-Blackwellised, averaged over draws and chains).
* scikit-learn: MultinomialNB(alpha=1.0) trained on the visible half only (supervised),
  the same smoothing as gibbsjax's Dirichlet(1) prior.
Both are scored on the hidden half.  Also a few other seeds for the hidden half.

Run:  python benchmarks/naive_bayes.py [--seeds 0 1 2]
Needs: pip install -e ".[bench]"  (scikit-learn)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

from gibbsjax.config import load_config, run_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = p.parse_args()
    from sklearn.naive_bayes import MultinomialNB

    from gibbsjax.corpus import Corpus
    from gibbsjax.datasets import stdlib_docs

    base = load_config(ROOT / "configs" / "naive-bayes-stdlib.toml")
    corpus: Corpus = stdlib_docs()
    X = corpus.to_dtm()
    print(f"stdlib_docs: {corpus.num_docs} documents, {corpus.num_tokens} tokens, V = {corpus.vocab_size}, "
          f"{len(corpus.label_names)} classes; half the labels hidden")
    print(f"{'split seed':>10s} {'hidden':>7s} {'gibbsjax NB (semi-sup.)':>24s} {'sklearn MultinomialNB':>22s} {'time s':>7s}")
    diffs = []
    for seed in args.seeds:
        text = base.text.replace("split_seed = 0", f"split_seed = {seed}")
        config = load_config_text(text, base) if seed != 0 else base
        t = time.perf_counter()
        idata = run_config(config, progress=False)
        elapsed = time.perf_counter() - t
        est = idata.estimates
        hidden = est["label_hidden"].values.astype(bool)
        truth = est["true_label"].values
        ours = float(est.attrs["hidden_accuracy"])
        visible = ~hidden
        clf = MultinomialNB(alpha=1.0).fit(X[visible], truth[visible])
        theirs = float(np.mean(clf.predict(X[hidden]) == truth[hidden]))
        diffs.append(ours - theirs)
        print(f"{seed:>10d} {hidden.sum():>7d} {ours:>24.3f} {theirs:>22.3f} {elapsed:>7.1f}")
    print(f"\nmean accuracy difference gibbsjax - sklearn: {np.mean(diffs):+.3f} "
          f"({'at least as accurate' if min(diffs) >= 0 else 'less accurate on some split'})")


def load_config_text(text: str, base):
    import tomllib

    from gibbsjax.config import parse_config

    return parse_config(tomllib.loads(text), base_dir=base.path.parent, path=base.path, text=text)


if __name__ == "__main__":
    main()
