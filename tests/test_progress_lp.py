"""The log joint while training (issue 24): the progress bar shows ``lp`` of the last
finished chunk, ``sample(..., callback=fn)`` is told once per chunk, and
``LDA(save_warmup=True)`` keeps the warm-up draws and their ``lp``."""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax import LDA
from gibbsjax.topics import fit as lda_fit
from gibbsjax.datasets import abc_corpus
from gibbsjax.kernel import Kernel
from gibbsjax.run import sample
from gibbsjax.run.driver import format_lp


class AR(NamedTuple):
    x: jax.Array


def _ar_kernel(with_log_joint: bool = True) -> Kernel:
    """x_t = 0.5 x_{t-1} + noise; its log joint depends on the state, so it moves."""
    return Kernel(
        init=lambda key, d: AR(jax.random.normal(key, (2,)) * 5.0),
        step=lambda key, s, d: AR(0.5 * s.x + jax.random.normal(key, s.x.shape)),
        record=lambda s, d: {"x": s.x},
        dims={"x": ("coord",)},
        log_joint=(lambda s, d: -0.5 * jnp.sum(s.x**2)) if with_log_joint else None,
        name="ar_lp" if with_log_joint else "ar_no_lp",
    )


KERNEL = _ar_kernel()
RUN = dict(seed=3, num_chains=3, num_warmup=8, num_draws=12, chunk_size=4)


# ----------------------------------------------------------------------------- the text
def test_format_lp_one_value_or_the_range_across_chains():
    assert format_lp([-1523.4, -1498.02]) == "lp=-1523..-1498"  # whole numbers from 1000 on
    assert format_lp([-12.3456]) == "lp=-12.35"  # four significant digits below
    assert format_lp(np.array([-7.0, -7.0, -7.0])) == "lp=-7"  # chains that agree: one value
    assert format_lp([-3.0, np.nan, -2.0]) == "lp=nan"  # a NaN is shown, not hidden by min/max
    assert format_lp([-3.0, -np.inf]) == "lp=-inf"


# ----------------------------------------------------------------------------- the bar
def test_bar_shows_lp_of_the_last_draw(capsys):
    idata = sample(KERNEL, progress=True, **RUN)
    err = capsys.readouterr().err
    assert format_lp(idata.sample_stats["lp"].values[:, -1]) in err
    assert "sweep" in err


def test_bar_without_log_joint_has_no_lp(capsys):
    idata = sample(_ar_kernel(with_log_joint=False), progress=True, **RUN)
    assert "sample_stats" not in idata.groups()  # no log joint, no lp
    err = capsys.readouterr().err
    assert "sweep" in err and "lp=" not in err


def test_lda_fit_bar_shows_lp(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LDA(2, num_chains=2, num_warmup=4, num_draws=4, chunk_size=2, seed=0, progress=True).fit(abc_corpus())
    err = capsys.readouterr().err
    assert format_lp(model.idata_.sample_stats["lp"].values[:, -1]) in err


# ----------------------------------------------------------------------------- the callback
def test_callback_once_per_chunk_with_the_recorded_lp():
    calls = []
    idata = sample(KERNEL, progress=False, callback=calls.append, **RUN)
    assert [c["phase"] for c in calls] == ["warm-up"] * 2 + ["sampling"] * 3
    assert [c["sweeps_done"] for c in calls] == [4, 8, 12, 16, 20]
    assert {c["sweeps_total"] for c in calls} == {20}
    assert [c["draws"] for c in calls] == [0, 0, 4, 8, 12]
    lp = idata.sample_stats["lp"].values
    for call, last in zip(calls[2:], (3, 7, 11)):
        np.testing.assert_array_equal(call["lp"], lp[:, last])

    # warm-up without save_warmup: lp evaluated on the chunk's final state, the value a
    # run keeping the warm-up records (same seed, same draws) has at that sweep
    kept = sample(KERNEL, progress=False, save_warmup=True, **RUN)
    np.testing.assert_array_equal(kept.posterior["x"].values, idata.posterior["x"].values)
    warm_lp = kept.warmup_sample_stats["lp"].values  # draw 0 is the starting state
    for call, sweep in zip(calls[:2], (4, 8)):
        assert call["lp"].shape == (3,)
        np.testing.assert_allclose(call["lp"], warm_lp[:, sweep], rtol=1e-6)


def test_callback_counts_thinned_sweeps_and_has_no_lp_without_log_joint():
    calls = []
    sample(_ar_kernel(with_log_joint=False), progress=False, callback=calls.append,
           **{**RUN, "num_warmup": 0, "thin": 2})
    assert [c["sweeps_done"] for c in calls] == [8, 16, 24]
    assert [c["draws"] for c in calls] == [4, 8, 12]
    assert all(c["lp"] is None for c in calls)


def test_callback_must_be_callable():
    with pytest.raises(ValueError, match="callback must be a function"):
        sample(KERNEL, progress=False, callback="print", **RUN)


def test_callback_exception_ends_the_run():
    def stop(info):
        raise RuntimeError(f"stop at {info['sweeps_done']}")

    with pytest.raises(RuntimeError, match="stop at 4"):
        sample(KERNEL, progress=False, callback=stop, **RUN)


# ----------------------------------------------------------------------------- LDA(save_warmup=...)
FIT = dict(num_chains=2, num_warmup=6, num_draws=4, chunk_size=3, seed=0, progress=False, warn=False)


@pytest.fixture(scope="module")
def warm_fit():
    return LDA(2, save_warmup=True, **FIT).fit(abc_corpus())


def test_lda_save_warmup_keeps_warmup_draws_and_lp(warm_fit):
    idata = warm_fit.idata_
    assert idata.warmup_posterior.sizes["draw"] == FIT["num_warmup"] + 1  # draw 0: the starting state
    assert idata.warmup_sample_stats["lp"].shape == (FIT["num_chains"], FIT["num_warmup"] + 1)
    assert np.all(np.isfinite(idata.warmup_sample_stats["lp"].values))
    plain = LDA(2, **FIT).fit(abc_corpus())
    assert "warmup_posterior" not in plain.idata_.groups()
    # keeping the warm-up changes no draw
    np.testing.assert_array_equal(plain.idata_.sample_stats["lp"].values, idata.sample_stats["lp"].values)


def test_lda_save_warmup_is_a_parameter(warm_fit, tmp_path):
    from sklearn.base import clone

    assert LDA().get_params()["save_warmup"] is False
    model = LDA(2, save_warmup=True)
    assert model.save_warmup is True and model.settings.save_warmup is True
    assert clone(model).get_params() == model.get_params()
    assert model.set_params(save_warmup=False).settings.save_warmup is False
    with pytest.raises(ValueError, match="save_warmup must be true or false"):
        LDA(save_warmup="yes")
    path = tmp_path / "lda.nc"
    warm_fit.save(path)
    loaded = LDA.load(path)
    assert loaded.save_warmup is True
    assert loaded.idata_.warmup_posterior.sizes["draw"] == FIT["num_warmup"] + 1
    assert lda_fit.params_from_run(warm_fit.idata_)["save_warmup"] is True  # a `gibbsjax run` result's
