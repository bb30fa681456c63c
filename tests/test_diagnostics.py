"""diagnostics: the ArviZ conversion, summary guard, all_sweeps."""

from __future__ import annotations

import numpy as np
import pytest

from gibbsjax.diagnostics import summary, to_inference_data


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
