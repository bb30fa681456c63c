"""Quiet by default (issue 23, point 4): when chains disagree, a fit says so in ONE line,
with its own warning class (:class:`gibbsjax.ChainDisagreementWarning`) that can be
filtered, ``LDA(warn=False)`` silences it, the long explanation stays in the report
(and the warning's ``details``), and ``gibbsjax run/resume --strict`` exit with status
1 when the chains disagree (0 when they agree), after saving the result.
"""

from __future__ import annotations

import contextlib
import gc
import warnings
from pathlib import Path

import numpy as np
import pytest

import gibbsjax
from gibbsjax import LDA, reports
from gibbsjax.cli import main
from gibbsjax.datasets import abc_corpus

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
# five draws from no warm-up: the four chains' lp have not met (R-hat of lp far above 1.01)
JAX_PALLAS_TRITON_DEPRECATION = r"The Pallas Triton backend is deprecated"
SHORT = dict(num_chains=4, num_warmup=0, num_draws=5, chunk_size=5, seed=0, progress=False)


@contextlib.contextmanager
def recording():
    """Every warning given inside the block, as ``warnings.catch_warnings(record=True)`` with
    "always", and only those: the garbage of earlier tests in this process (a notebook kernel's
    unclosed sockets, whose ResourceWarning comes when the collector finds them) is collected
    first, and the collector waits until the block ends."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # jax 0.11's own notice at every lowering of a Pallas Triton kernel (the fused z-update a
            # GPU run uses: gibbsjax/models/lda/pallas.py); never given on a CPU, and not gibbsjax's
            warnings.filterwarnings("ignore", message=JAX_PALLAS_TRITON_DEPRECATION, category=DeprecationWarning)
            yield caught
    finally:
        if enabled:
            gc.enable()


def _fit(model, X):
    """Fit, recording every warning (of any kind) that the fit gives."""
    with recording() as caught:
        model.fit(X)
    return caught


@pytest.fixture(scope="module")
def short_fit():
    model = LDA(2, **SHORT)
    return model, _fit(model, abc_corpus())


# ----------------------------------------------------------------------------- the warning
def test_a_disagreeing_fit_warns_once_in_one_line(short_fit):
    model, caught = short_fit
    assert reports.chains_disagree(model.idata_) is not None  # the chains do disagree
    assert len(caught) == 1, [str(w.message) for w in caught]  # no other warning either
    w = caught[0]
    assert w.category is gibbsjax.ChainDisagreementWarning and issubclass(w.category, UserWarning)
    message = str(w.message)
    assert "\n" not in message and message.startswith("chains disagree: ")
    assert "R-hat of lp" in message and "model.agreement_" in message and "warn=False" in message
    assert message == reports.disagreement_line(model.idata_)
    # the long explanation is not in the line, but kept in the warning and the report
    long = reports.chains_disagree(model.idata_)
    assert w.message.details == long and len(message) < len(long)
    assert w.filename == __file__  # points at the caller of fit, not into gibbsjax


def test_the_warning_can_be_filtered_by_its_class():
    with recording() as caught:
        warnings.filterwarnings("ignore", category=gibbsjax.ChainDisagreementWarning)
        LDA(2, **SHORT).fit(abc_corpus())
    assert caught == []


def test_warn_false_gives_no_warning_and_the_same_draws(short_fit):
    loud, _ = short_fit
    model = LDA(2, warn=False, **SHORT)
    assert _fit(model, abc_corpus()) == []
    np.testing.assert_array_equal(model.topic_word_, loud.topic_word_)
    assert reports.chains_disagree(model.idata_) == reports.chains_disagree(loud.idata_)
    assert _extend_warnings(model) == []


def _extend_warnings(model):
    with recording() as caught:
        model.extend(5)
    return caught


def test_warn_is_a_parameter(tmp_path):
    from sklearn.base import clone

    assert LDA().get_params()["warn"] == "auto"  # on, except inside scikit-learn's model selection
    model = LDA(2, warn=False)
    assert model.get_params()["warn"] is False
    assert clone(model).warn is False and clone(model).get_params() == model.get_params()
    assert model.set_params(warn=True).warn is True
    for bad in ("no", 0, None):
        with pytest.raises(ValueError, match="warn must be True, False or 'auto'"):
            LDA(warn=bad)
    with pytest.raises(ValueError, match="warn"):
        model.set_params(warn="no")
    assert model.warn is True  # a refused set_params leaves it as it was


def test_warn_false_is_saved_and_loaded(tmp_path):
    model = LDA(2, warn=False, **SHORT)
    assert _fit(model, abc_corpus()) == []
    path = tmp_path / "lda.nc"
    model.save(path)
    loaded = LDA.load(path)
    assert loaded.warn is False
    assert _extend_warnings(loaded) == []


def test_grid_search_gives_at_most_one_line_per_fit():
    """What the GridSearchCV example (docs/guide/lda.md) printed ten long warnings for: every fit
    gives at most one warning, of one line, when warnings are asked for (``warn=True``; by
    default none inside model selection: test_sklearn.py)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    texts = abc_corpus().to_texts()
    pipe = Pipeline([("vectorizer", CountVectorizer(token_pattern=r"\w+")), ("lda", LDA(**SHORT, warn=True))])
    every = np.arange(len(texts))  # one split, train = test, so the refit reuses the compiled sweep
    search = GridSearchCV(pipe, {"lda__num_topics": [2, 3]}, cv=[(every, every)], refit=True)
    with recording() as caught:
        search.fit(texts)
    fits = 2 + 1  # two K values, one split, and the refit
    ours = [w for w in caught if w.category is gibbsjax.ChainDisagreementWarning]
    assert 1 <= len(ours) <= fits
    assert all("\n" not in str(w.message) for w in ours)
    assert len(caught) == len(ours), [str(w.message) for w in caught if w not in ours]


# ----------------------------------------------------------------------------- gibbsjax run/resume --strict
def test_strict_is_in_the_help(capsys):
    for command in ("run", "resume"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--strict exit with status 1" in text and "chains disagree" in text


def test_strict_exits_1_when_chains_disagree(tmp_path, monkeypatch, capsys):
    """An LDA config with 5 draws and no warm-up, the chains disagree: saved, then status 1 and one line.

    The model, corpus and sampler settings are those of ``SHORT`` (whose fit disagrees, see
    :func:`test_a_disagreeing_fit_warns_once_in_one_line`), so that the run reuses that fit's
    compiled sweep; --strict only looks at the saved result's verdict, whatever its size."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "lda.toml"
    config.write_text('[model]\nname = "lda.partially_collapsed"\nK = 2\nalpha = 0.1\neta = 0.01\n'
                      '[data]\ncorpus = "abc"\n[sampler]\nseed = 0\n', encoding="utf-8")
    out = tmp_path / "lda.nc"
    argv = ["run", str(config), "--out", str(out), "--warmup", "0", "--draws", "5", "--chains", "4",
            "--chunk-size", "5", "--no-progress", "--strict"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "chains disagree" in captured.out and f"saved {out}" in captured.out  # the report, as without it
    assert "details:" not in captured.out and "topic_share[" not in captured.out  # the tables: --details
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("gibbsjax: --strict: chains disagree: ") and str(out) in err
    import arviz as az

    idata = az.from_netcdf(out)
    assert "agreement" in idata.groups() and idata.posterior.sizes["draw"] == 5  # saved, post-processed
    assert reports.chains_disagree(idata) is not None
    # resume --draws 0 post-processes again: 0 without --strict, 1 with it
    assert main(["resume", str(out), "--draws", "0", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["resume", str(out), "--draws", "0", "--no-progress", "--strict"]) == 1
    assert capsys.readouterr().err.strip().startswith("gibbsjax: --strict: chains disagree")
    # --details adds the tables and changes no exit status
    assert main(["resume", str(out), "--draws", "0", "--no-progress", "--strict", "--details"]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip().startswith("gibbsjax: --strict: chains disagree")
    assert "\ndetails:\n" in captured.out and "topic_share[" in captured.out and "reproduced by chains" in captured.out


def test_strict_exits_0_when_chains_agree(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "body.nc"
    assert main(["run", str(CONFIGS / "body-temperature.toml"), "--out", str(out), "--no-progress",
                 "--strict"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and f"saved {out}" in captured.out
    import arviz as az

    assert reports.chains_disagree(az.from_netcdf(out)) is None
