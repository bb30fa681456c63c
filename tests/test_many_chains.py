"""R-hat, ESS and MCSE at any chain count (issue 23, point 5): every statistic in float64.

SciPy 1.18's ``rankdata`` returns float32 ranks for float32 input; ArviZ's normal
scores ``(r - 3/8) / (S + 1/4)`` then round to 1 for the top ranks once a quantity
has more than 2**23 draws, and R-hat and bulk ESS come back NaN.  Here SciPy's
``rankdata`` is patched to behave so (whatever SciPy is installed), and
:mod:`gibbsjax.chain_stats`, which computes everything in float64 without it, is
checked against ArviZ given float64 draws.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gibbsjax import chain_stats
from gibbsjax.diagnostics import ess, rhat, rhat_unguarded, summary, to_inference_data

CHAINS, DRAWS = 16_384, 600   # 9.8 M draws: above 2**23, where float32 normal scores reach infinity


@pytest.fixture
def float32_ranks(monkeypatch):
    """``scipy.stats.rankdata`` (as ArviZ calls it) returning float32 ranks for float32 input."""
    from arviz.stats import diagnostics as az_diagnostics

    real = az_diagnostics.stats.rankdata

    def rankdata(a, *args, **kwargs):
        ranks = real(a, *args, **kwargs)
        return ranks.astype(np.float32) if np.asarray(a).dtype == np.float32 else ranks

    monkeypatch.setattr(az_diagnostics.stats, "rankdata", rankdata)


def _float32_draws(seed=0):
    rng = np.random.default_rng(seed)
    return (98.25 + 0.06 * rng.standard_normal((CHAINS, DRAWS), dtype=np.float32)).astype(np.float32)


def test_float32_ranks_break_arviz_at_many_chains(float32_ranks):
    """The failure the float64 computation avoids: without it, the same input gives NaN."""
    import arviz as az

    x = _float32_draws()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(float(az.rhat(x)))
    assert np.isfinite(float(az.rhat(x[:4096])))   # 4,096 chains: below 2**23 draws


def test_summary_is_finite_at_16384_chains_with_float32_ranks(float32_ranks):
    x = _float32_draws(1)
    lp = -0.5 * ((x.astype(np.float64) - 98.25) / 0.06) ** 2
    idata = to_inference_data({"mu": x}, sample_stats={"lp": lp.astype(np.float32)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # no "R-hat is undefined" either
        table = summary(idata)
    assert list(table.index) == ["mu", "lp"]
    assert np.isfinite(table.to_numpy()).all()
    assert (abs(table["r_hat"] - 1) <= 0.01).all()
    assert (table["ess_bulk"] > 0.8 * x.size).all() and (table["ess_tail"] > 0.8 * x.size).all()
    r, e = rhat(x), ess(x)
    assert np.isfinite(r) and abs(r - 1) <= 0.01 and e > 0.8 * x.size
    assert rhat_unguarded(x) == r


def _cases():
    rng = np.random.default_rng(11)
    walk = np.cumsum(rng.normal(size=(4, 1500)), axis=1)
    return {
        "iid": rng.normal(size=(4, 200)),
        "two chains, odd draws": rng.normal(size=(2, 101)) + np.array([[0.0], [0.4]]),
        "autocorrelated": np.cumsum(rng.normal(size=(4, 300)), axis=1) * 0.1 + rng.normal(size=(4, 300)),
        "random walk (many lags)": walk,
        "ties": rng.integers(0, 5, size=(3, 80)).astype(float),
        "binary": rng.integers(0, 2, size=(4, 60)).astype(float),
        "four draws": rng.normal(size=(8, 4)),
        "five draws": rng.normal(size=(8, 5)),
        "one draw": rng.normal(size=(8, 1)),
        "one chain": rng.normal(size=(1, 300)),
        "constant": np.ones((4, 50)),
        "constant within chains": np.repeat(np.arange(4.0)[:, None], 50, axis=1),
        "infinite draws": np.where(rng.random((4, 100)) < 0.02, np.inf, rng.normal(size=(4, 100))),
        "NaN draw": np.where(np.arange(400).reshape(4, 100) == 7, np.nan, rng.normal(size=(4, 100))),
        # over 2**15 draws: the packed-key sort, lossy (float64) and lossless (float32 values)
        "many float64": rng.normal(size=(64, 1000)) * np.exp(rng.normal(size=(64, 1))),
        "many float32, odd": (5 + rng.normal(size=(64, 1001))).astype(np.float32).astype(float),
        "many float32, both signs": rng.normal(size=(40, 1000)).astype(np.float32).astype(float),
        "many ties": rng.integers(-3, 3, size=(50, 1000)).astype(float),
        # float32 numbers within a narrow key range: ranked by counting their keys, not sorting
        "many float32, counted": (98.25 + 0.06 * rng.normal(size=(40, 1000))).astype(np.float32).astype(float),
        "many float32, counted, odd": (-24.8 + 0.2 * rng.normal(size=(33, 1001))).astype(np.float32).astype(float),
        "many float32, counted ties": np.round(98.25 + 0.06 * rng.normal(size=(40, 1000)), 2).astype(np.float32)
        .astype(float),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_column_summary_matches_arviz_given_float64(name, monkeypatch):
    import arviz as az
    import xarray as xr

    # ArviZ's own numpy definitions (with numba installed, its variance gives R-hat NaN, not inf,
    # for chains constant within themselves); without numba, as CI has it, this changes nothing
    monkeypatch.setattr(az.utils.Numba, "numba_flag", False)

    x = _cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = az.summary(xr.Dataset({"a": (("chain", "draw"), x)}), round_to="none").loc["a"]
        ref_rhat = float(az.rhat(x)) if x.shape[1] >= 4 else np.nan
        ref_bulk, ref_tail = float(az.ess(x, method="bulk")), float(az.ess(x, method="tail"))
        got = chain_stats.column_summary(x)
        got_rhat, got_bulk, got_tail = chain_stats.rank_rhat(x), chain_stats.ess_bulk(x), chain_stats.ess_tail(x)
    expected = {"mean": ref["mean"], "sd": ref["sd"], "hdi_lower": ref["hdi_3%"], "hdi_upper": ref["hdi_97%"],
                **{c: ref[c] for c in chain_stats.SUMMARY_DIAGNOSTICS}}
    if "NaN" in name:   # ArviZ's mean, sd and HDI of NaN draws are NaN or meaningless; ours are NaN
        expected.update(mean=np.nan, sd=np.nan, hdi_lower=np.nan, hdi_upper=np.nan)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-9, nan_ok=True), key
    assert got_rhat == pytest.approx(ref_rhat, rel=1e-9, nan_ok=True)
    assert got_bulk == pytest.approx(ref_bulk, rel=1e-9, nan_ok=True)
    assert got_tail == pytest.approx(ref_tail, rel=1e-9, nan_ok=True)


@pytest.mark.parametrize("name", [name for name in _cases() if "float32" in name])
def test_column_summary_of_float32_draws_equals_that_of_their_float64_copy(name):
    """float32 draws are ranked from their own bits (no float64 copy to compare); same numbers."""
    x = _cases()[name]
    assert chain_stats.column_summary(x.astype(np.float32)) == chain_stats.column_summary(x)
    assert chain_stats.rank_rhat(x.astype(np.float32)) == chain_stats.rank_rhat(x)
    assert chain_stats.ess_bulk(x.astype(np.float32)) == chain_stats.ess_bulk(x)


def test_summary_table_matches_arviz_summary_layout_and_values():
    import arviz as az
    import pandas as pd
    import xarray as xr

    rng = np.random.default_rng(12)
    idata = to_inference_data(
        {"mu": rng.normal(size=(4, 101)), "th": rng.normal(size=(4, 101, 2, 3)).astype(np.float32),
         "w": rng.normal(size=(4, 101, 3))},
        sample_stats={"lp": rng.normal(size=(4, 101))},
        dims={"th": ["a", "b"], "w": ["word"]}, coords={"a": ["x", "y"], "b": [10, 20, 30], "word": ["p", "q", "r"]})
    for kwargs in ({}, {"var_names": ["th"], "hdi_prob": 0.9, "round_to": "none"}, {"round_to": 4}):
        got = summary(idata, **kwargs)
        post = az.summary(idata.posterior.astype(np.float64), **kwargs)
        lp = az.summary(xr.Dataset({"lp": idata.sample_stats["lp"]}), **{k: v for k, v in kwargs.items()
                                                                          if k != "var_names"})
        expected = pd.concat([post, lp])
        assert list(got.index) == list(expected.index) and list(got.columns) == list(expected.columns)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-9)
    other = summary(idata, var_names=["~th"], kind="diagnostics")       # handed to ArviZ as float64
    assert list(other.columns) == list(chain_stats.SUMMARY_DIAGNOSTICS) and "th[x, 10]" not in other.index


def test_summary_table_of_one_chain_has_no_rhat_and_arviz_values_otherwise():
    import arviz as az

    from gibbsjax.diagnostics import summary_table

    rng = np.random.default_rng(13)
    idata = to_inference_data({"mu": rng.normal(size=(1, 300)).astype(np.float32)},
                              sample_stats={"lp": rng.normal(size=(1, 300))})
    table = summary_table(idata)
    assert list(table.index) == ["mu", "lp"] and np.isnan(table["r_hat"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = az.summary(idata.posterior.astype(np.float64))
    np.testing.assert_allclose(table.loc[["mu"]].drop(columns="r_hat").to_numpy(),
                               expected.drop(columns="r_hat").to_numpy(), rtol=1e-9)


def test_column_summaries_on_threads_equal_one_after_the_other(monkeypatch):
    import os

    rng = np.random.default_rng(14)
    columns = [rng.normal(size=(1000, 1000)).astype(np.float32), np.cumsum(rng.normal(size=(500, 2000)), axis=1),
               rng.normal(size=(4, 50))]
    alone = [chain_stats.column_summary(c) for c in columns]
    monkeypatch.setattr(os, "cpu_count", lambda: 8)      # 4 threads for the two large quantities
    assert chain_stats.column_summaries(columns) == alone
