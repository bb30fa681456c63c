"""diagnostics: the ArviZ conversion, summary guard, all_sweeps, the R-hat and ESS helpers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gibbsjax.diagnostics import ess, rhat, rhat_lp, rhat_unguarded, summary, to_inference_data


def test_summary_needs_two_chains_and_adds_lp():
    rng = np.random.default_rng(0)
    one = to_inference_data({"mu": rng.normal(size=(1, 50))})
    with pytest.raises(ValueError, match="at least 2 chains"):
        summary(one)
    four = to_inference_data({"mu": rng.normal(size=(4, 50))}, sample_stats={"lp": rng.normal(size=(4, 50))})
    assert list(summary(four).index) == ["mu", "lp"]


def test_attrs_are_netcdf_safe(tmp_path):
    idata = to_inference_data({"mu": np.zeros((2, 3))}, attrs={"flag": True, "none": None, "obj": [1, 2]})
    path = tmp_path / "x.nc"
    idata.to_netcdf(str(path))
    import arviz as az

    back = az.from_netcdf(str(path))
    assert back.attrs["flag"] == 1
    assert back.attrs["none"] == ""


def _rank_split_rhat_by_hand(x):
    """Rank-normalised split R-hat of one quantity (chain, draw), written from Vehtari et al. (2021),
    eqs. 3-4 and 14 (split chains, normal scores of the pooled ranks (r - 3/8) / (S + 1/4), bulk and
    folded-tail R-hat, the larger of the two)."""
    from scipy.stats import norm, rankdata

    half = x.shape[1] // 2
    split = np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)

    def basic(a):
        n = a.shape[1]
        w = a.var(axis=1, ddof=1).mean()
        b = n * a.mean(axis=1).var(ddof=1)
        return np.sqrt(((n - 1) / n * w + b / n) / w)

    def z(a):
        return norm.ppf((rankdata(a, axis=None).reshape(a.shape) - 0.375) / (a.size + 0.25))

    return max(basic(z(split)), basic(z(np.abs(split - np.median(split)))))


def test_rhat_matches_the_definition_and_arviz():
    import arviz as az

    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 101, 3)) + np.array([0.0, 0.3, 1.0]) * rng.normal(size=(4, 1, 3))
    r = rhat(x)
    assert r.shape == (3,)
    for j in range(3):
        assert r[j] == pytest.approx(_rank_split_rhat_by_hand(x[:, :, j]), rel=1e-10)
        assert r[j] == pytest.approx(float(az.rhat(x[:, :, j])), rel=1e-12)
    assert rhat(x[:, :, 0]).shape == ()
    assert rhat(x.reshape(4, 101, 3, 1)).shape == (3, 1)


def test_rhat_is_nan_where_undefined_and_unguarded_is_arviz_as_is(monkeypatch):
    import arviz as az

    # ArviZ's numpy definitions, as in tests/test_many_chains.py (numba's variance differs at inf)
    monkeypatch.setattr(az.utils.Numba, "numba_flag", False)

    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 50, 4))
    x[:, :, 0] = np.arange(4)[:, None]      # constant within every chain, different across chains
    x[0, 3, 1] = np.inf                     # one infinite draw
    x[1, 2, 2] = np.nan                     # one NaN draw
    assert np.isnan(rhat(x)[:3]).all() and np.isfinite(rhat(x)[3])
    with np.errstate(all="ignore"):
        expected = [float(az.rhat(x[:, :, j])) for j in range(4)]
    np.testing.assert_allclose(rhat_unguarded(x), expected, rtol=1e-12)
    assert np.isinf(rhat_unguarded(x)[0]) and np.isfinite(rhat_unguarded(x)[1])
    assert rhat_unguarded(x)[3] == rhat(x)[3]
    assert np.isnan(rhat(x[:1])).all() and np.isnan(rhat_unguarded(x[:, :3])).all()   # one chain; 3 draws


def test_ess_matches_arviz():
    import arviz as az

    rng = np.random.default_rng(5)
    x = np.cumsum(rng.normal(size=(4, 200, 2)), axis=1) * 0.1 + rng.normal(size=(4, 200, 2))
    for method in ("bulk", "tail"):
        got = ess(x, method=method)
        assert got.shape == (2,)
        for j in range(2):
            assert got[j] == pytest.approx(float(az.ess(x[:, :, j], method=method)), rel=1e-12)
    with pytest.raises(ValueError, match="bulk"):
        ess(x, method="mean")


def test_rhat_lp_is_the_rhat_of_sample_stats_lp():
    rng = np.random.default_rng(6)
    lp = rng.normal(size=(4, 80)) + np.arange(4)[:, None] * 0.2
    idata = to_inference_data({"m": np.zeros((4, 80))}, sample_stats={"lp": lp})
    assert rhat_lp(idata) == pytest.approx(_rank_split_rhat_by_hand(lp), rel=1e-10)
    assert np.isnan(rhat_lp(to_inference_data({"m": np.zeros((4, 80))})))


def test_a_result_with_the_former_document_dimension_reads_reports_and_resumes(tmp_path, capsys):
    """Results of earlier versions name the one-label models' document dimension "doc": they
    still print a summary and resume (the draws joined under today's name, "document")."""
    import arviz as az

    from gibbsjax.cli import main
    from gibbsjax.diagnostics import with_current_names

    root = Path(__file__).resolve().parents[1]
    new = tmp_path / "new.nc"
    assert main(["run", str(root / "configs" / "mixture-unigrams-stdlib.toml"), "--out", str(new), "--chains", "2",
                 "--warmup", "5", "--draws", "5", "--no-progress"]) == 0
    idata = az.from_netcdf(new)
    assert "document" in idata.posterior.dims and "doc" not in idata.posterior.dims
    old = idata.copy()
    for g in old.groups():
        if "document" in old[g].dims or "document" in old[g].variables:
            setattr(old, g, old[g].rename({"document": "doc"}))
    old_path = tmp_path / "old.nc"
    old.to_netcdf(str(old_path))
    assert "doc" in az.from_netcdf(old_path).posterior.dims
    assert dict(with_current_names(az.from_netcdf(old_path)).posterior.sizes) == dict(idata.posterior.sizes)
    capsys.readouterr()
    assert main(["summary", str(old_path)]) == 0
    assert "agreement" in capsys.readouterr().out
    more = tmp_path / "more.nc"
    assert main(["resume", str(old_path), "--draws", "3", "--out", str(more), "--no-progress"]) == 0
    resumed = az.from_netcdf(more)
    assert resumed.posterior.sizes["draw"] == 8 and "doc" not in resumed.posterior.dims
