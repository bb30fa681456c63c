"""Validation of values, not only shapes (issue 11, points 4 and 6)."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import gibbsjax
from gibbsjax.diagnostics import summary, to_inference_data
from gibbsjax.models import gaussian_mixture as gm
from gibbsjax.models import hmm, lda, normal


# ----------------------------------------------------------------------------- data overflowing the working dtype
def test_normal_data_overflowing_float32_is_refused():
    if jax.config.jax_enable_x64:
        pytest.skip("float64 holds 1e39")
    with pytest.raises(ValueError, match=r"y has a value of magnitude 1e\+39, beyond the float32 range"):
        normal.data([1e39, 1.0])
    with pytest.raises(ValueError, match="sum of squared deviations"):  # values fit, their spread does not
        normal.data([1e20, -1e20])
    with pytest.raises(ValueError, match="beyond the float32 range"):
        gm.data([1e39, 1.0, 2.0])
    with pytest.raises(ValueError, match="beyond the float32 range"):
        hmm.gaussian_data([[1e39, 1.0]])
    assert np.isfinite(float(normal.data([3e38, 3e38]).ybar))  # the edge of the range is fine


# ----------------------------------------------------------------------------- initial values outside the support
def test_init_outside_the_support_is_refused():
    d = normal.data([98.0, 98.5, 99.0])
    with pytest.raises(ValueError, match=re.escape("init['sigma2'] must be > 0")):
        gibbsjax.sample(normal.semiconjugate(), d, num_chains=2, init={"sigma2": [-0.1, -0.1]}, progress=False)
    with pytest.raises(ValueError, match=re.escape("init['sigma2'] must be > 0")):
        gibbsjax.sample(normal.semiconjugate(), d, num_chains=2, init={"sigma2": [1.0, 0.0]}, progress=False)
    idata = gibbsjax.sample(normal.semiconjugate(), d, num_chains=2, init={"sigma2": [0.1, 4.0]},
                            num_warmup=0, num_draws=5, progress=False, seed=0)
    assert np.all(np.isfinite(idata.posterior["sigma2"].values))


def test_mixture_init_checks_weights_precisions_and_labels():
    x = gm.data(np.r_[np.zeros(5), np.full(5, 5.0)])
    k = gm.normal_gamma(2)
    with pytest.raises(ValueError, match=re.escape("init['log_weights'] holds log-probabilities")):
        gibbsjax.sample(k, x, num_chains=4, init={"log_weights": np.log([[0.5, 0.6]] * 4)}, progress=False)
    with pytest.raises(ValueError, match=re.escape("init['tau'] must be > 0")):
        gibbsjax.sample(k, x, num_chains=4, init={"tau": [[1.0, -1.0]] * 4}, progress=False)
    with pytest.raises(ValueError, match=re.escape("init['z'] must hold values in 0..1")):
        gibbsjax.sample(k, x, num_chains=4, init={"z": np.full((4, 10), 2)}, progress=False)


# ----------------------------------------------------------------------------- the data type sample expects
def test_sample_names_the_data_type_it_expects():
    with pytest.raises(ValueError, match="data must be a NormalData .*normal.semiconjugate.*got list"):
        gibbsjax.sample(normal.semiconjugate(), [1.0, 2.0], progress=False)
    with pytest.raises(ValueError, match="data does not fit kernel lda.partially_collapsed"):
        gibbsjax.sample(lda.partially_collapsed(2), [1.0, 2.0], progress=False)


# ----------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("seed", [2**32, 2**32 + 1, 2**63, 2**64 + 5])
def test_seeds_beyond_the_key_are_refused(seed):
    with pytest.raises(ValueError, match=re.escape("seed must be an integer in [0, 2**32)")):
        gibbsjax.sample(normal.bivariate(0.5), seed=seed, num_draws=2, num_warmup=0, progress=False)


def test_largest_seed_runs_and_differs_from_its_low_bits():
    kw = dict(num_chains=1, num_draws=3, num_warmup=0, progress=False)
    a = gibbsjax.sample(normal.bivariate(0.5), seed=2**32 - 1, **kw).posterior["x1"].values
    b = gibbsjax.sample(normal.bivariate(0.5), seed=1, **kw).posterior["x1"].values
    assert not np.array_equal(a, b)


# ----------------------------------------------------------------------------- R-hat with many chains
def test_summary_rhat_is_finite_for_16384_chains():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(16384, 50)).astype(np.float32)
    table = summary(to_inference_data({"mu": x}))
    assert np.isfinite(table.at["mu", "r_hat"]) and abs(table.at["mu", "r_hat"] - 1.0) <= 0.01


def test_summary_says_why_rhat_is_undefined():
    x = np.repeat(np.arange(4.0)[:, None], 20, axis=1)  # constant within every chain
    y = np.random.default_rng(0).normal(size=(4, 20))
    with pytest.warns(RuntimeWarning, match="R-hat of c is undefined: its draws are constant within every chain"):
        table = summary(to_inference_data({"c": x, "y": y}))
    assert np.isfinite(table.at["y", "r_hat"])
