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


def _install_plugin(site, entry_value: str = "toy_coin") -> None:
    """The coin as a separately installed package: its module and a dist-info folder whose
    entry_points.txt publishes it in the group gibbsjax.models (what ``pip install`` of a package
    with ``[project.entry-points."gibbsjax.models"]`` leaves in site-packages)."""
    site.mkdir(exist_ok=True)
    (site / "toy_coin.py").write_text(COIN_MODULE, encoding="utf-8")
    info = site / "toy_coin_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-coin-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[gibbsjax.models]\ncoin = {entry_value}\n", encoding="utf-8")


def test_a_model_from_a_separately_installed_package_runs_with_the_cli(tmp_path):
    """Nothing in gibbsjax edited or registered: a new process finds the package's entry point;
    ``gibbsjax models`` lists it, ``run`` and ``summary`` use its spec."""
    import os
    import subprocess

    site = tmp_path / "site"
    _install_plugin(site)
    config = tmp_path / "coin.toml"
    config.write_text(COIN_CONFIG, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
               JAX_PLATFORMS="cpu")

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "gibbsjax", *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=600)

    listed = cli("models")
    assert listed.returncode == 0, listed.stderr[-2000:]
    line = next(x for x in listed.stdout.splitlines() if x.startswith("toy.coin"))
    assert "a coin" in line and "[plugin]" in line
    assert "parameters: a=2.0, b=3.0" in listed.stdout
    ran = cli("run", str(config), "--out", str(tmp_path / "coin.nc"), "--no-progress")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "COIN heads=6" in ran.stdout
    summary = cli("summary", str(tmp_path / "coin.nc"))
    assert summary.returncode == 0 and "COIN heads=6" in summary.stdout
    without = subprocess.run([sys.executable, "-m", "gibbsjax", "models"], capture_output=True, text=True,
                             env=dict(env, PYTHONPATH=""), cwd=tmp_path, timeout=600)
    assert "toy.coin" not in without.stdout  # the listing comes from the installed package


def test_a_broken_plugin_is_named_and_left_out(tmp_path, monkeypatch):
    from gibbsjax.config import plugin_specs

    site = tmp_path / "site"
    _install_plugin(site, entry_value="toy_coin_missing")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(MODELS, "_plugins", None)  # look the entry points up again
    with pytest.warns(RuntimeWarning, match="entry point 'coin' = 'toy_coin_missing'.*cannot be loaded"):
        names = known_models()
    assert "toy.coin" not in names and "normal.bivariate" in names
    monkeypatch.setattr(MODELS, "_plugins", None)
    from importlib.metadata import EntryPoint

    with pytest.raises(ValueError, match="SPECS tuple"):
        plugin_specs(EntryPoint("bad", "json", "gibbsjax.models"))
