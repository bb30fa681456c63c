"""The model registry: a model added from outside the package runs with `gibbsjax run`.

The toy model below (a Beta-Bernoulli coin) is written here, in a test file, as a user
would: a kernel, a spec with make_data / postprocess / report, one register_model call.
No package file knows about it.  Its posterior is Beta(a + heads, b + tails), so the
test also checks the draws against the exact posterior mean in units of Monte Carlo SE.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gibbsjax import Kernel, sweep
from gibbsjax import random as gr
from gibbsjax.cli import main
from gibbsjax.config import MODELS, known_models, register_model
from gibbsjax.spec import ConfigError, ModelSpec


class CoinState(NamedTuple):
    p: jax.Array


def coin(a: float = 2.0, b: float = 3.0) -> Kernel:
    """p ~ Beta(a, b), flips ~ Bernoulli(p): p | flips ~ Beta(a + heads, b + tails)."""
    if a <= 0 or b <= 0:
        raise ValueError("a and b must be positive")

    def sample_p(key, state, flips):
        heads = jnp.sum(flips)
        return gr.beta(key, a + heads, b + flips.shape[0] - heads)

    return Kernel(init=lambda key, flips: CoinState(jnp.float32(0.5)), step=sweep(("p", sample_p)),
                  record=lambda s, flips: {"p": s.p}, name="toy.coin")


def make_data(section, base_dir):
    flips = section.get("flips")
    if not isinstance(flips, list) or not flips or any(f not in (0, 1) for f in flips):
        raise ConfigError("[data] flips must be a non-empty list of 0s and 1s")
    return jnp.asarray(flips, jnp.float32)


def postprocess(idata, kernel, data, extras):
    idata.attrs["heads"] = int(np.asarray(data).sum())
    return idata


def report(idata) -> str:
    return f"COIN heads={idata.attrs['heads']} mean p={float(idata.posterior['p'].mean()):.3f}"


def test_toy_model_registered_from_a_test_file_runs_with_gibbsjax_run(tmp_path, capsys):
    register_model(ModelSpec("toy.coin", coin, make_data, postprocess, report, description="a coin"))
    try:
        assert "toy.coin" in known_models()
        config = tmp_path / "coin.toml"
        config.write_text('[model]\nname = "toy.coin"\na = 2.0\nb = 3.0\n'
                          '[data]\nflips = [1, 1, 0, 1, 0, 1, 1, 1]\n'
                          '[sampler]\nseed = 5\nnum_chains = 4\nnum_warmup = 10\nnum_draws = 2000\n')
        out = tmp_path / "coin.nc"
        assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
        text = capsys.readouterr().out
        assert "COIN heads=6" in text
        import arviz as az

        p = az.from_netcdf(out).posterior["p"].values
        exact = (2.0 + 6) / (2.0 + 3.0 + 8)  # Beta(8, 5) mean
        se = float(az.mcse(az.convert_to_dataset(p), method="mean")["x"])  # draws are iid here
        assert abs(p.mean() - exact) < 4 * se
        bad = tmp_path / "bad.toml"
        bad.write_text('[model]\nname = "toy.coin"\n[data]\nflips = [2]\n[sampler]\nseed = 1\n')
        assert main(["run", str(bad), "--out", str(tmp_path / "bad.nc")]) == 2
        assert "flips" in capsys.readouterr().err
    finally:
        MODELS.remove("toy.coin")
    with pytest.raises(ConfigError, match="unknown model"):
        from gibbsjax.config import get_spec

        get_spec("toy.coin")
