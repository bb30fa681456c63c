"""The README's main job, run as written: a demo that is honest and useful.

``gibbsjax run configs/lda-demo.toml`` runs once (sixteen chains; about 30 s of CPU) and

* its report leads with the answer: the stable topics (each once, with its share of chains
  and top words) and held-out perplexity, then the diagnostics in three lines; the
  per-chain and per-topic tables come with ``--details`` (and in ``gibbsjax summary``);

* every line the README quotes from its report (the block after the comment
  ``<!-- demo output: gibbsjax run configs/lda-demo.toml; numerics FINGERPRINT -->``, ``...``
  marking lines left out) is printed, as quoted, on a machine that rounds floats as the one
  that printed it (FINGERPRINT equal to :func:`_numerics.fingerprint`): the README's example
  output is what the command prints today.  Elsewhere its chains take other paths (a
  last-bit difference sends a Gibbs chain another way), so there every quoted line must
  have a printed line of the same form, numbers and top words aside;
* each stable topic is the vocabulary of one of the corpus's labelled packages: its
  Hellinger distance to that package's word distribution (counts of its documents,
  smoothed by the model's η) is below 0.45 and above 0.6 to every other package, and
  no two stable topics name the same package.  The package word distributions are an
  independent reference: computed from the corpus, not from any sampler.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from _numerics import fingerprint

ROOT = Path(__file__).resolve().parents[1]
MARK = "<!-- demo output: gibbsjax run configs/lda-demo.toml; numerics "


def _quoted() -> tuple[str, list[str]]:
    """The numerics fingerprint the README's demo excerpt was printed with, and its lines."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert MARK in text, "the README no longer quotes the demo's output (with the numerics it was printed with)"
    block = re.search(re.escape(MARK) + r"(\S+) -->\s*```text\n(.*?)```", text, re.S)
    assert block, "the demo output block must follow its marker as a ```text block"
    return block.group(1), [line for line in block.group(2).splitlines() if line.strip() and line.strip() != "..."]


def form(line: str) -> str:
    """A report line with its numbers (and a table row's top words) left out, spaces collapsed.

    >>> form("     1      12    75%   0.23  0.31   5.050  header string message")
    '# # #% # # # <top words>'
    >>> form("held-out perplexity (document completion, 74 documents): 395.5")
    'held-out perplexity (document completion, # documents): #'
    """
    line = " ".join(re.sub(r"\d+(?:\.\d+)?", "#", line).split())
    return re.sub(r"^(#(?: #%?)+) [a-z].*$", r"\1 <top words>", line)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    import contextlib
    import io

    from gibbsjax.cli import main

    out = tmp_path_factory.mktemp("demo") / "lda-demo.nc"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["run", str(ROOT / "configs" / "lda-demo.toml"), "--out", str(out), "--no-progress"])
    assert code in (0, None)
    return buffer.getvalue(), out


def test_readme_quotes_what_the_demo_prints(demo):
    printed, _ = demo
    numerics, quoted = _quoted()
    assert form(quoted[0]) == form(printed.splitlines()[0]), "the README quotes the report from its first line"
    if numerics == fingerprint():
        missing = [line for line in quoted if line.rstrip() not in printed]
        assert not missing, f"README lines the demo does not print today: {missing}"
    else:  # another CPU's rounding: other chains, the same report
        forms = {form(line) for line in printed.splitlines()}
        missing = [line for line in quoted if form(line) not in forms]
        assert not missing, (f"README lines of which the demo prints no line of the same form (printed with numerics "
                             f"{numerics}, this machine {fingerprint()}): {missing}")


def test_the_report_forms_tell_lines_apart():
    """The check used on other CPUs sees a changed report: another label, a missing number."""
    assert form("R-hat of the log joint lp: 2.799") == form("R-hat of the log joint lp: 12.5")
    assert form("R-hat of the log joint lp: 2.799") != form("R-hat of lp: 2.799")
    assert form("stable topics: 3 of 8 (held by >= 50% of 16 chains)") != form("stable topics: 3 (held by >= 50%)")
    row = "     0      16   100%  result zero operation"
    assert form(row) == form("     4       8    50%  handler logging log")
    assert form(row) != form("     0      16  result zero operation")  # the share column lost
    assert form(row) != form("     0      16   100%   0.17  0.22   2.754  result zero operation")  # the full table


def _stable_words(idata, n_words: int = 8) -> list[str]:
    from gibbsjax.topics.stable import stable_topics_of

    return [" ".join(e["top_words"][:n_words]) for e in stable_topics_of(idata).table()]


def test_the_default_report_leads_with_the_stable_topics_each_once(demo):
    """First the stable topics and held-out perplexity, then agreement, R-hat of lp and one
    verdict line; no summary table, no per-chain top words, no rare topics' rows."""
    import arviz as az

    printed, out = demo
    idata = az.from_netcdf(str(out))
    lines = printed.splitlines()
    assert lines[0].startswith("stable topics: "), lines[:3]
    order = [next(i for i, line in enumerate(lines) if line.startswith(start))
             for start in ("stable topics: ", "held-out perplexity", "diagnostics:", "agreement: ",
                           "R-hat of the log joint lp: ", "-> chains ")]
    assert order == sorted(order), order
    assert sum(line.startswith("-> chains") for line in lines) == 1  # one verdict line
    words = _stable_words(idata)
    assert words
    for w in words:
        assert printed.count(w) == 1, (w, printed)  # each stable topic once
    # nothing else names a topic's words: the tables behind the report are left out
    assert "top words per topic" not in printed and "topic_share[" not in printed
    assert "reproduced by chains" not in printed and "the 5 most recurrent" not in printed
    topic_rows = [line for line in lines if re.match(r"^\s+\d+\s+\d+\s+\d+%\s+[a-z]", line)]
    assert len(topic_rows) == len(words)


def test_details_and_summary_show_the_tables_and_strict_keeps_its_status(demo, tmp_path, capsys):
    """``--details`` adds the summary table, the top words of the estimates, the rare topics and
    the agreement per topic; ``--strict`` still exits 1 exactly when the chains disagree."""
    import shutil

    import arviz as az

    from gibbsjax.cli import main
    from gibbsjax.reports import chains_disagree

    printed, out = demo
    copy = tmp_path / "copy.nc"
    shutil.copyfile(out, copy)
    again = tmp_path / "again.nc"
    code = main(["resume", str(copy), "--draws", "0", "--out", str(again), "--no-progress", "--details",
                 "--strict"])
    text = capsys.readouterr().out
    idata = az.from_netcdf(str(again))
    assert code == (1 if chains_disagree(idata) else 0)
    report_part, _, tables = text.partition("\ndetails:\n")
    assert tables, text
    assert report_part.strip() in printed  # the same report, then the tables
    for needle in ("topic_share[", "top words per topic", "reproduced by chains", "spread  max   R-hat"):
        assert needle in tables, needle
    for w in _stable_words(idata):
        assert text.count(w) >= 2  # in the report, and in the stable topics' full table
    assert main(["summary", str(again)]) == 0
    assert "\ndetails:\n" in capsys.readouterr().out


def test_stable_topics_are_the_packages_vocabularies(demo):
    import arviz as az

    from gibbsjax.datasets import stdlib_docs
    from gibbsjax.topics.stable import stable_topics_of

    _, out = demo
    idata = az.from_netcdf(str(out))
    stable = stable_topics_of(idata)
    assert stable.num_stable >= 2, stable.verdict
    corpus = stdlib_docs()
    counts = corpus.to_dtm()
    counts = np.asarray(counts.todense() if hasattr(counts, "todense") else counts, dtype=np.float64)
    labels = np.asarray(corpus.labels)
    column = {w: i for i, w in enumerate(corpus.vocab)}
    words = [column[w] for w in idata.posterior_mean["word"].values.tolist()]
    eta = float(idata.attrs.get("model_eta", 0.01))
    packages = np.stack([counts[labels == j][:, words].sum(axis=0) for j in range(len(corpus.label_names))]) + eta
    packages /= packages.sum(axis=1, keepdims=True)
    topics = np.asarray(stable.topic_word, dtype=np.float64)[: stable.num_stable]
    hellinger = np.sqrt(np.clip(1.0 - np.sqrt(topics) @ np.sqrt(packages).T, 0.0, 1.0))
    nearest = hellinger.argmin(axis=1)
    report = {corpus.label_names[int(j)]: round(float(h), 3) for j, h in zip(nearest, hellinger.min(axis=1))}
    print("stable topic -> nearest package (Hellinger):", report)
    assert len(set(nearest.tolist())) == len(nearest), report
    assert np.all(hellinger.min(axis=1) < 0.45), report
    others = np.sort(hellinger, axis=1)[:, 1]
    assert np.all(others > 0.6), others


def test_the_demo_result_reports_and_loads_as_an_estimator(demo, capsys):
    """The demo's result file (the config run through ``gibbsjax run``): its report, the agreement
    rule for the estimates, ``gibbsjax summary``, and ``LDA.load`` giving the same fitted model."""
    import json

    import arviz as az

    import gibbsjax
    from gibbsjax.cli import main
    from gibbsjax.config import load_config

    config = load_config(ROOT / "configs" / "lda-demo.toml")
    _, out = demo
    idata = az.from_netcdf(str(out))
    assert "topics" in idata.groups()
    assert float(idata.topics.attrs["heldout_perplexity"]) > 1
    assert idata.posterior_mean["topic_word"].sizes["word"] == config.extras["corpus"].vocab_size
    from gibbsjax.config import spec_for

    text = spec_for(idata).report(idata)
    assert "stable topics" in text and "held-out perplexity" in text and "R-hat" in text
    assert "top words per topic" in spec_for(idata).details(idata)
    # the topic agreement: a verdict line, and the estimates come from one chain by the rule
    assert f"agreement: {idata.agreement.attrs['verdict']}" in text
    assert f"reproduced by all {config.sampler.num_chains} chains" in idata.agreement.attrs["verdict"]
    ref = int(idata.agreement.attrs["reference_chain"])
    assert ref == int(np.argmax(idata.sample_stats["lp"].mean("draw").values))
    assert idata.topics.attrs["estimate_chains"] == f"[{ref}]"
    np.testing.assert_allclose(idata.topics["topic_word"].values,
                               idata.posterior_mean["topic_word"].isel(chain=ref).values)
    assert main(["summary", str(out)]) == 0
    out_text = capsys.readouterr().out  # the CLI names the coherence column
    assert "top words per topic" in out_text and "coherence u_mass, gensim's mean over word pairs" in out_text
    # the result file is a fitted estimator: the same topics, top words and held-out perplexity
    model = gibbsjax.LDA.load(out)
    assert (model.num_topics, model.alpha, model.sampler, model.num_chains) == (8, 0.1, "partially_collapsed", config.sampler.num_chains)
    np.testing.assert_array_equal(model.topic_word_, idata.topics["topic_word"].values)
    assert model.top_words(10) == json.loads(idata.topics.attrs["top_words"])
    assert model.perplexity(config.extras["heldout"]) == float(idata.topics.attrs["heldout_perplexity"])
    assert model.corpus_ is None
    with pytest.raises(ValueError, match="training corpus"):
        model.coherence()
    train = config.extras["corpus"]
    model = gibbsjax.LDA.load(out, corpus=train)  # checked against the file's data_sha256
    assert model.coherence("u_mass").round(3).tolist() == json.loads(idata.topics.attrs["u_mass"])
    assert model.doc_topic_.shape == (train.num_docs, 8)
    with pytest.raises(ValueError, match="data_sha256"):
        gibbsjax.LDA.load(out, corpus=config.extras["heldout"].subset(np.arange(train.num_docs) % 5))
