"""The model registry: adding a model touches its module, one registry line, its config and its
test file, and nothing else.

The toy model below (a Beta-Bernoulli coin) is a complete model module, written to a temporary
folder as a new module of the package would be: a kernel (with ``sample_prior`` and
``simulate_data``), a spec with make_data / postprocess / report and its SBC example, and
``SPECS``.  Two routes are shown: a user registers it from outside the package
(``register_model``), and a developer adds it as a built-in model (one line in the registry
``gibbsjax.config._BUILTIN``).  Either way ``gibbsjax run`` runs its config, and the test lists
that must name every model (the SBC cases of ``tests/test_sbc.py``) take it up unedited.  Its
posterior is Beta(a + heads, b + tails), so the draws are checked against the exact posterior
mean in units of Monte Carlo SE.
"""

from __future__ import annotations

import importlib
import sys

import arviz as az
import pytest

from gibbsjax.cli import main
from gibbsjax.config import MODELS, _BUILTIN, get_spec, known_models, register_model
from gibbsjax.spec import ConfigError
from gibbsjax.testing import sbc

#: the whole model module, as a new file of the package would hold it
COIN_MODULE = '''
"""A coin: p ~ Beta(a, b), flips ~ Bernoulli(p); p | flips ~ Beta(a + heads, b + tails)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gibbsjax import Kernel, sweep
from gibbsjax import random as gr
from gibbsjax.spec import ConfigError, ModelSpec


class CoinState(NamedTuple):
    p: jax.Array


def coin(a: float = 2.0, b: float = 3.0) -> Kernel:
    if a <= 0 or b <= 0:
        raise ValueError("a and b must be positive")

    def sample_p(key, state, flips):
        heads = jnp.sum(flips)
        return gr.beta(key, a + heads, b + flips.shape[0] - heads)

    def simulate_data(key, state, flips):
        return (gr.uniform(key, flips.shape) < state.p).astype(flips.dtype)

    return Kernel(init=lambda key, flips: CoinState(jnp.float32(0.5)), step=sweep(("p", sample_p)),
                  record=lambda s, flips: {"p": s.p}, name="toy.coin",
                  sample_prior=lambda key, flips: CoinState(gr.beta(key, a, b)), simulate_data=simulate_data)


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


def sbc_case():
    return coin(2.0, 3.0), jnp.asarray([1, 0, 1, 1, 0, 1], jnp.float32), None


SPECS = (ModelSpec("toy.coin", coin, make_data, postprocess, report, description="a coin", sbc_case=sbc_case),)
'''

#: its config
COIN_CONFIG = ('[model]\nname = "toy.coin"\na = 2.0\nb = 3.0\n'
               '[data]\nflips = [1, 1, 0, 1, 0, 1, 1, 1]\n'
               '[sampler]\nseed = 5\nnum_chains = 4\nnum_warmup = 10\nnum_draws = 2000\n')


@pytest.fixture
def coin_module(tmp_path, monkeypatch):
    """The toy model module written to a folder on sys.path (as a new file of the package)."""
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / "toy_coin.py").write_text(COIN_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "toy_coin", raising=False)
    monkeypatch.setattr(MODELS, "_specs", dict(MODELS._specs))  # forget it again after the test
    return importlib.import_module("toy_coin")


def _run_config(tmp_path, capsys):
    config = tmp_path / "coin.toml"
    config.write_text(COIN_CONFIG, encoding="utf-8")
    out = tmp_path / "coin.nc"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    assert "COIN heads=6" in capsys.readouterr().out
    p = az.from_netcdf(out).posterior["p"].values
    exact = (2.0 + 6) / (2.0 + 3.0 + 8)  # Beta(8, 5) mean
    se = float(az.mcse(az.convert_to_dataset(p), method="mean")["x"])  # draws are iid here
    assert abs(p.mean() - exact) < 4 * se
    assert main(["summary", str(out)]) == 0
    assert "COIN heads=6" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[model]\nname = "toy.coin"\n[data]\nflips = [2]\n[sampler]\nseed = 1\n', encoding="utf-8")
    assert main(["run", str(bad), "--out", str(tmp_path / "bad.nc")]) == 2
    assert "flips" in capsys.readouterr().err


def test_toy_model_registered_from_outside_the_package_runs_with_gibbsjax_run(coin_module, tmp_path, capsys):
    register_model(coin_module.SPECS[0])
    try:
        assert "toy.coin" in known_models()
        _run_config(tmp_path, capsys)
    finally:
        MODELS.remove("toy.coin")
    with pytest.raises(ConfigError, match="unknown model"):
        get_spec("toy.coin")


def test_adding_a_built_in_model_takes_one_registry_line_and_nothing_else(coin_module, tmp_path, capsys,
                                                                          monkeypatch):
    """Its module (written above), one registry line, its config, its test: the registry, ``run``,
    ``summary`` and the registry-built SBC case list of tests/test_sbc.py take it up unedited."""
    assert "toy.coin" not in known_models()
    monkeypatch.setitem(_BUILTIN, "toy.coin", "toy_coin")  # the one registry line
    assert "toy.coin" in known_models()
    assert get_spec("toy.coin") is coin_module.SPECS[0]
    _run_config(tmp_path, capsys)

    from test_sbc import sbc_cases  # the SBC case list: built from the registry, not edited

    cases = sbc_cases()
    assert cases["toy.coin"] is coin_module.sbc_case
    kernel, data, fns = cases["toy.coin"]()
    sbc(kernel, data, fns, num_replications=200, num_draws=19, num_warmup=5, seed=3).assert_passes()
